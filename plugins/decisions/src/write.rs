//! Writing a new decision record: its file name and its Markdown, with frontmatter whose
//! scalars are escaped so no title, status or path can break out of them.

use crate::parse::one_line;

/// A decision about to be recorded.
#[derive(Clone, Debug)]
pub struct NewAdr<'a> {
    pub number: u32,
    /// Collapsed to one line when written.
    pub title: &'a str,
    pub status: &'a str,
    /// `YYYY-MM-DD`.
    pub date: &'a str,
    pub context: Option<&'a str>,
    pub decision: &'a str,
    pub consequences: Option<&'a str>,
    pub affected_paths: &'a [String],
}

/// A YAML double-quoted scalar holding exactly `s`: backslash, quote, every control
/// character and the Unicode line breaks (which YAML would fold) are escaped, so the
/// result is one line that cannot end the scalar or the frontmatter.
pub fn yaml_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            '\u{feff}' => out.push_str("\\uFEFF"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The file-name part of a title: lower-case ASCII words joined by `-`, at most 60
/// characters, `decision` when nothing is left.
pub fn slug(title: &str) -> String {
    let mut s = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    let mut s = s.trim_end_matches('-').to_string();
    if s.len() > 60 {
        s.truncate(60);
        if let Some(i) = s.rfind('-').filter(|&i| i >= 20) {
            s.truncate(i);
        }
        s = s.trim_end_matches('-').to_string();
    }
    if s.is_empty() { "decision".into() } else { s }
}

/// `NNNN-slug.md`.
pub fn file_name(number: u32, title: &str) -> String {
    format!("{number:04}-{}.md", slug(title))
}

/// The whole Markdown file of a new decision.
pub fn render(adr: &NewAdr<'_>) -> String {
    let title = one_line(adr.title);
    let mut s = String::from("---\n");
    s.push_str(&format!("number: {}\n", adr.number));
    s.push_str(&format!("title: {}\n", yaml_quote(&title)));
    s.push_str(&format!("status: {}\n", yaml_quote(adr.status)));
    s.push_str(&format!("date: {}\n", yaml_quote(adr.date)));
    if adr.affected_paths.is_empty() {
        s.push_str("affected_paths: []\n");
    } else {
        s.push_str("affected_paths:\n");
        for p in adr.affected_paths {
            s.push_str(&format!("  - {}\n", yaml_quote(p)));
        }
    }
    s.push_str("---\n\n");
    s.push_str(&format!("# {title}\n"));
    let mut section = |name: &str, text: &str| {
        let text = text.trim();
        if !text.is_empty() {
            s.push_str(&format!("\n## {name}\n\n{text}\n"));
        }
    };
    if let Some(c) = adr.context {
        section("Context", c);
    }
    section("Decision", adr.decision);
    if let Some(c) = adr.consequences {
        section("Consequences", c);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_document;

    fn adr<'a>(title: &'a str, paths: &'a [String]) -> NewAdr<'a> {
        NewAdr {
            number: 12,
            title,
            status: "proposed",
            date: "2026-11-30",
            context: Some("Why."),
            decision: "What.",
            consequences: None,
            affected_paths: paths,
        }
    }

    #[test]
    fn quoting_escapes_everything_that_could_end_the_scalar() {
        assert_eq!(yaml_quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(yaml_quote("x\ny\r\u{2028}\u{1b}"), r#""x\ny\r\L\u001B""#);
        assert!(!yaml_quote("line\n---\nstatus: accepted").contains('\n'));
    }

    #[test]
    fn hostile_titles_and_paths_cannot_forge_frontmatter() {
        let paths = vec![
            "src/\"quoted\"/**".to_string(),
            "a\n---\nstatus: accepted".to_string(),
        ];
        let title = "Evil\"\n---\nstatus: accepted\nnumber: 99\n# Forged";
        let text = render(&adr(title, &paths));
        // The frontmatter is exactly the lines written: one `---` opens, one closes.
        let fm: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(fm.iter().filter(|l| **l == "---").count(), 2, "{text}");
        assert_eq!(fm.len(), 9, "{text}");
        let p = parse_document(&text);
        assert_eq!(
            p.title.as_deref(),
            Some("Evil\" --- status: accepted number: 99 # Forged")
        );
        assert_eq!(p.status.as_deref(), Some("proposed"));
        assert_eq!(p.number, Some(12));
        let raws: Vec<&str> = p.affected_paths.iter().map(|g| g.raw.as_str()).collect();
        assert_eq!(raws, ["src/\"quoted\"/**", "a\n---\nstatus: accepted"]);
        assert_eq!(p.decision, "What.");
        assert_eq!(p.context, "Why.");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn a_rendered_record_reads_back_whole() {
        let paths = vec!["plugins/memory/**".to_string()];
        let mut a = adr("Rank with BM25F", &paths);
        a.consequences = Some("Good.\n\n---\n\nA rule in the body is fine.");
        let p = parse_document(&render(&a));
        assert_eq!(p.title.as_deref(), Some("Rank with BM25F"));
        assert_eq!(p.date.as_deref(), Some("2026-11-30"));
        assert_eq!(p.consequences, "Good.\nA rule in the body is fine.");
        assert!(p.affected_paths[0].covers("plugins/memory/src/lib.rs"));
    }

    #[test]
    fn slugs_are_short_ascii_and_never_empty() {
        assert_eq!(slug("Use BM25F, not TF-IDF!"), "use-bm25f-not-tf-idf");
        assert_eq!(slug("../../etc/passwd"), "etc-passwd");
        assert_eq!(slug("日本語"), "decision");
        assert!(slug(&"word ".repeat(40)).len() <= 60);
        assert_eq!(file_name(3, "A b"), "0003-a-b.md");
    }
}
