//! Query text before it reaches the host: capped, cleaned, split into words for
//! messages, and built from a symbol for `like_symbol`.

use scryer_plugin_sdk::host::Sym;

/// Longest query text sent to the host, in bytes. A pasted file or a runaway argument
/// must not make the host tokenise and score megabytes; 4 KiB holds any real question.
pub const MAX_QUERY_BYTES: usize = 4096;

/// Docstring bytes a `like_symbol` query takes from its target: enough for the summary
/// and the paragraph that explains it (siblings often share that wording), not the
/// examples further down.
const LIKE_DOC_BYTES: usize = 600;

/// `text` cut to at most `max` bytes on a character boundary, at a space when one is
/// near the end so the last word is not halved; `true` when something was cut.
pub fn cap(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let at_space = head
        .rfind(char::is_whitespace)
        .filter(|&i| end - i <= 64 && i > 0);
    (head[..at_space.unwrap_or(end)].trim_end(), true)
}

/// Control characters (NUL, escapes, line breaks) are spaces to the search: they
/// separate words and carry nothing themselves.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Whether the text holds anything a word index can match: a letter or a digit.
pub fn searchable(text: &str) -> bool {
    text.chars().any(char::is_alphanumeric)
}

/// The words of a query as names are split in the index: runs of letters and digits,
/// `snake_case` and `camelCase` broken apart, lower-cased, each once, in order.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        let w = w.to_lowercase();
        if !w.is_empty() && !out.contains(&w) {
            out.push(w);
        }
    };
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = run.chars().collect();
        let mut start = 0;
        for i in 1..chars.len() {
            let (prev, cur) = (chars[i - 1], chars[i]);
            let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
            // `parseConfig` → parse|Config; `HTMLParser` → HTML|Parser
            let boundary = (prev.is_lowercase() && cur.is_uppercase())
                || (prev.is_uppercase() && cur.is_uppercase() && next_lower);
            if boundary {
                push(&chars[start..i].iter().collect::<String>());
                start = i;
            }
        }
        push(&chars[start..].iter().collect::<String>());
    }
    out
}

/// Words of signatures that every symbol of a kind shares: they would only add noise
/// to a `like_symbol` query.
const KEYWORDS: &[&str] = &[
    "pub",
    "crate",
    "super",
    "self",
    "fn",
    "mut",
    "const",
    "static",
    "struct",
    "enum",
    "union",
    "trait",
    "impl",
    "where",
    "dyn",
    "ref",
    "let",
    "unsafe",
    "async",
    "await",
    "extern",
    "type",
    "mod",
    "use",
    "in",
    "for",
    "as",
    "return",
    "def",
    "class",
    "function",
    "func",
    "interface",
    "export",
    "public",
    "private",
    "protected",
    "readonly",
    "var",
    "macro",
    "rules",
];

/// Words of prose that say nothing about what a symbol does.
const STOPWORDS: &[&str] = &[
    "the", "an", "and", "or", "of", "to", "in", "on", "for", "with", "by", "as", "at", "is", "are",
    "be", "it", "its", "this", "that", "from", "if", "not", "no", "into", "will", "can",
];

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| w.chars().count() > 1)
}

/// The query `like_symbol` runs for `target`: its name, its module path below the crate
/// (the crate's own name is shared by every symbol in it, so it would only add noise),
/// the identifiers of its signature (keywords and one-letter generics dropped) and the
/// words of the start of its docstring (stopwords dropped).
pub fn like_query(target: &Sym) -> String {
    let mut parts: Vec<&str> = vec![target.name.as_str()];
    let path: Vec<&str> = target.qualified_name.split("::").collect();
    if path.len() > 2 {
        parts.extend(&path[1..path.len() - 1]);
    }
    parts.extend(
        words(&target.signature).filter(|w| !KEYWORDS.contains(&w.to_lowercase().as_str())),
    );
    if let Some(doc) = &target.docstring {
        parts.extend(
            words(cap(doc, LIKE_DOC_BYTES).0)
                .filter(|w| !STOPWORDS.contains(&w.to_lowercase().as_str())),
        );
    }
    let joined = clean(&parts.join(" "));
    cap(&joined, MAX_QUERY_BYTES).0.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_keeps_short_text_and_cuts_long_text_on_a_boundary() {
        assert_eq!(cap("parse config", 100), ("parse config", false));
        let (cut, was_cut) = cap("alpha beta gamma", 12);
        assert!(was_cut);
        assert_eq!(cut, "alpha beta");
        // a multi-byte character straddling the limit is dropped whole
        let text = format!("{}é", "a".repeat(9));
        let (cut, _) = cap(&text, 10);
        assert_eq!(cut, "a".repeat(9));
        let huge = "word ".repeat(300_000);
        let (cut, was_cut) = cap(&huge, MAX_QUERY_BYTES);
        assert!(was_cut && cut.len() <= MAX_QUERY_BYTES && cut.ends_with("word"));
    }

    #[test]
    fn terms_split_identifiers_like_names_are_indexed() {
        assert_eq!(
            terms("parseConfig HTMLParser read_to_string, parse"),
            ["parse", "config", "html", "parser", "read", "to", "string"]
        );
        assert_eq!(terms("Grüße 2024"), ["grüße", "2024"]);
        assert!(terms("\u{301}\u{301} \u{ffff} --").is_empty());
    }

    #[test]
    fn only_letters_and_digits_are_searchable() {
        assert!(searchable("x"));
        assert!(searchable("数"));
        assert!(!searchable("\u{301}\u{302}"));
        assert!(!searchable("\u{ffff}\u{fffe}"));
        assert!(!searchable(":: -> {}"));
        assert_eq!(clean("a\u{0}b\nc"), "a b c");
    }

    #[test]
    fn like_query_draws_on_name_path_signature_and_docs() {
        let target = Sym {
            name: "describe".into(),
            kind: "function".into(),
            qualified_name: "demo::util::describe".into(),
            signature: "pub fn describe<T>(area: f64) -> String".into(),
            docstring: Some("Formats an area for people.".into()),
            ..Sym::default()
        };
        let q = like_query(&target);
        assert_eq!(
            q,
            "describe util describe area f64 String Formats area people"
        );
        // a crate-level item has no module words beyond the crate
        let top = Sym {
            qualified_name: "demo::describe".into(),
            docstring: None,
            ..target.clone()
        };
        assert_eq!(like_query(&top), "describe describe area f64 String");
        let long_doc = Sym {
            docstring: Some("xy ".repeat(10_000)),
            ..target
        };
        assert!(like_query(&long_doc).len() < 700);
    }
}
