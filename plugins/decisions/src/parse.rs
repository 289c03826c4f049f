//! One Markdown document into its parts: YAML frontmatter (found by gray_matter, read by
//! `frontmatter`) and the document's sections (pulldown-cmark).
//!
//! Title: frontmatter `title`, else the first level-1 heading, else the file name.
//! Sections are found by heading text: "Decision", "Context" (or "Background",
//! "Problem"), "Consequences" (or "Implications"), "Status"; a section runs until the next
//! heading of the same or a higher level. Everything else is the body.

use gray_matter::engine::Engine;
use gray_matter::{Matter, Pod};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::globs::PathGlob;

/// What one document says, before it is placed in a corpus.
#[derive(Clone, Debug, Default)]
pub struct Parsed {
    pub title: Option<String>,
    pub number: Option<u32>,
    pub status: Option<String>,
    pub date: Option<String>,
    pub affected_paths: Vec<PathGlob>,
    pub decision: String,
    pub context: String,
    pub consequences: String,
    pub body: String,
    /// What could not be read (bad YAML, a bad glob), for notes.
    pub warnings: Vec<String>,
}

/// gray_matter only finds the frontmatter; [`crate::frontmatter`] reads it, with alias
/// expansion bounded (gray_matter's YAML engine copies every alias and never finishes
/// on an alias bomb).
struct SplitOnly;

impl Engine for SplitOnly {
    fn parse(_content: &str) -> gray_matter::Result<Pod> {
        Ok(Pod::Null)
    }
}

fn pod_text(p: &Pod) -> Option<String> {
    match p {
        Pod::String(s) => Some(s.clone()),
        Pod::Integer(i) => Some(i.to_string()),
        Pod::Float(f) => Some(f.to_string()),
        Pod::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Whitespace runs (newlines included) as one space, trimmed.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A status as compared and shown: lower-case; `Superseded by 0007` is `superseded`.
pub fn normalize_status(raw: &str) -> Option<String> {
    let lower = one_line(raw).to_lowercase();
    if lower.is_empty() {
        return None;
    }
    let first: String = lower.chars().take_while(|c| c.is_alphabetic()).collect();
    if crate::STATUSES.contains(&first.as_str()) {
        Some(first)
    } else {
        Some(lower.chars().take(40).collect())
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Body,
    Decision,
    Context,
    Consequences,
    Status,
}

fn section_of(heading: &str) -> Option<Target> {
    let h = heading.trim().trim_end_matches(':').to_lowercase();
    let h = h.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
    let starts = |words: &[&str]| {
        words
            .iter()
            .any(|w| h == *w || h.starts_with(&format!("{w} ")))
    };
    if starts(&["decision", "decisions", "decision outcome", "the decision"]) {
        Some(Target::Decision)
    } else if starts(&[
        "context",
        "background",
        "problem",
        "problem statement",
        "motivation",
    ]) {
        Some(Target::Context)
    } else if starts(&["consequences", "consequence", "implications", "outcome"]) {
        Some(Target::Consequences)
    } else if h == "status" {
        Some(Target::Status)
    } else {
        None
    }
}

fn level_num(l: HeadingLevel) -> u8 {
    match l {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// Parses `text` (a whole `.md` file).
pub fn parse_document(text: &str) -> Parsed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Parsed::default();
    let matter = Matter::<SplitOnly>::new();
    let (content, data) = match matter.parse::<Pod>(text) {
        Ok(entity) if entity.matter.is_empty() => (entity.content, None),
        Ok(entity) => {
            let (data, warning) = crate::frontmatter::read(&entity.matter);
            out.warnings.extend(warning);
            (entity.content, data)
        }
        // Only the engine can fail, and ours does not; keep the text whole regardless.
        Err(e) => {
            out.warnings
                .push(format!("frontmatter could not be read ({e})"));
            (text.to_string(), None)
        }
    };
    if let Some(Pod::Hash(map)) = &data {
        read_frontmatter(map, &mut out);
    }
    read_markdown(&content, &mut out);
    out
}

fn read_frontmatter(map: &std::collections::HashMap<String, Pod>, out: &mut Parsed) {
    let get = |k: &str| {
        map.get(k).or_else(|| {
            map.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(k))
                .map(|(_, v)| v)
        })
    };
    out.title = get("title")
        .and_then(pod_text)
        .map(|t| one_line(&t))
        .filter(|t| !t.is_empty());
    out.number = get("number")
        .or_else(|| get("adr"))
        .and_then(pod_text)
        .and_then(|n| n.trim().parse::<u32>().ok())
        .filter(|n| *n > 0);
    out.status = get("status")
        .and_then(pod_text)
        .and_then(|s| normalize_status(&s));
    out.date = get("date").and_then(pod_text).map(|d| d.trim().to_string());
    let entries: Vec<String> = match get("affected_paths").or_else(|| get("paths")) {
        Some(Pod::Array(items)) => items.iter().filter_map(pod_text).collect(),
        Some(Pod::String(s)) => s.split(',').map(str::to_string).collect(),
        _ => Vec::new(),
    };
    for e in entries.iter().filter(|e| !e.trim().is_empty()) {
        match PathGlob::new(e) {
            Ok(g) => out.affected_paths.push(g),
            Err(why) => out.warnings.push(why),
        }
    }
}

fn read_markdown(content: &str, out: &mut Parsed) {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut target = Target::Body;
    // The level of the heading that opened the current section.
    let mut section_level = 0u8;
    let mut heading: Option<(u8, String)> = None;
    let mut status_text = String::new();
    let mut h1_title: Option<String> = None;
    let mut in_html = false;
    for event in Parser::new_ext(content, options) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                heading = Some((level_num(level), String::new()))
            }
            Event::End(TagEnd::Heading(_)) => {
                let Some((level, text)) = heading.take() else {
                    continue;
                };
                let text = one_line(&text);
                if target != Target::Body && level <= section_level {
                    target = Target::Body;
                }
                if level == 1 && h1_title.is_none() {
                    h1_title = Some(text);
                    continue;
                }
                if let Some(t) = section_of(&text) {
                    target = t;
                    section_level = level;
                } else {
                    push_line(buffer(out, &mut status_text, target), &text);
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push_str(&t);
                } else if !in_html {
                    buffer(out, &mut status_text, target).push_str(&t);
                }
            }
            Event::SoftBreak => {
                if let Some((_, h)) = heading.as_mut() {
                    h.push(' ');
                } else {
                    buffer(out, &mut status_text, target).push(' ');
                }
            }
            Event::HardBreak => buffer(out, &mut status_text, target).push('\n'),
            Event::Start(Tag::HtmlBlock) => in_html = true,
            Event::End(TagEnd::HtmlBlock) => in_html = false,
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Item
                | TagEnd::CodeBlock
                | TagEnd::TableRow
                | TagEnd::BlockQuote(_),
            ) => end_line(buffer(out, &mut status_text, target)),
            Event::End(TagEnd::TableCell) => buffer(out, &mut status_text, target).push(' '),
            _ => {}
        }
    }
    if out.title.is_none() {
        out.title = h1_title.filter(|t| !t.is_empty());
    }
    if out.status.is_none() {
        out.status = normalize_status(status_text.split_whitespace().next().unwrap_or(""));
    }
    for s in [
        &mut out.decision,
        &mut out.context,
        &mut out.consequences,
        &mut out.body,
    ] {
        *s = s.trim().to_string();
    }
}

fn buffer<'a>(out: &'a mut Parsed, status: &'a mut String, target: Target) -> &'a mut String {
    match target {
        Target::Body => &mut out.body,
        Target::Decision => &mut out.decision,
        Target::Context => &mut out.context,
        Target::Consequences => &mut out.consequences,
        Target::Status => status,
    }
}

fn end_line(s: &mut String) {
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
}

fn push_line(s: &mut String, line: &str) {
    end_line(s);
    s.push_str(line);
    s.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADR: &str = "---\nnumber: 7\ntitle: Use   BM25F\nstatus: Superseded by 0009\ndate: 2026-11-29\naffected_paths:\n  - plugins/memory/**\n  - src/net\n---\n\n# Heading title\n\n## Context\n\nWe need ranking.\nMore context.\n\n### Detail\n\nStill context.\n\n## Decision\n\n- Use **BM25F** with `title` ×3.\n- Second point.\n\n## Consequences\n\nFaster answers.\n\n## Notes\n\nTrailing body text.\n";

    #[test]
    fn frontmatter_and_sections_are_read() {
        let p = parse_document(ADR);
        assert_eq!(p.title.as_deref(), Some("Use BM25F"));
        assert_eq!(p.number, Some(7));
        assert_eq!(p.status.as_deref(), Some("superseded"));
        assert_eq!(p.date.as_deref(), Some("2026-11-29"));
        let raws: Vec<&str> = p.affected_paths.iter().map(|g| g.raw.as_str()).collect();
        assert_eq!(raws, ["plugins/memory/**", "src/net"]);
        assert_eq!(
            p.context,
            "We need ranking. More context.\nDetail\nStill context."
        );
        assert_eq!(p.decision, "Use BM25F with title ×3.\nSecond point.");
        assert_eq!(p.consequences, "Faster answers.");
        assert_eq!(p.body, "Notes\nTrailing body text.");
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn without_frontmatter_the_first_h1_is_the_title_and_a_status_section_counts() {
        let p = parse_document(
            "# Keep one writer\n\n## Status\n\nAccepted\n\n## Decision\n\nOne writer per project.\n",
        );
        assert_eq!(p.title.as_deref(), Some("Keep one writer"));
        assert_eq!(p.status.as_deref(), Some("accepted"));
        assert_eq!(p.decision, "One writer per project.");
        assert_eq!(p.number, None);
    }

    #[test]
    fn broken_yaml_is_a_warning_and_the_markdown_still_reads() {
        let p = parse_document("---\ntitle: [unclosed\n---\n# Real title\n\nBody.\n");
        assert_eq!(p.title.as_deref(), Some("Real title"));
        assert_eq!(p.body, "Body.");
        assert!(p.warnings[0].contains("not valid YAML"), "{:?}", p.warnings);
    }

    #[test]
    fn bad_globs_are_warnings_and_good_ones_stay() {
        let p = parse_document("---\naffected_paths: [\"../x\", \"src/**\"]\n---\nText\n");
        assert_eq!(p.affected_paths.len(), 1);
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(p.body, "Text");
    }
}
