//! What an answer carries besides the router's own content: the host's notes, added the
//! one way every answer shows notes (also the routers' own notes that once were the
//! host's, e.g. a project's index gaps), and the project files the answer is about (for
//! the host's freshness check). `export_router!` applies both to every answer of a WIT
//! 0.4 component; the host applies the same functions to a 0.1–0.3 component's answer
//! (its compatibility path), so both say the same bytes.

use serde_json::Value;

/// Most files an answer reports as what it is about.
pub const MAX_ANSWER_FILES: usize = 64;

/// A note the host asks an answer to carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostNote {
    pub text: String,
    /// The note makes the answer incomplete (`complete: false`).
    pub incomplete: bool,
}

/// `body` with the notes in it: first the incomplete ones, then the others, each group
/// in order (as two passes of [`add_notes`]).
pub fn with_notes(body: String, notes: &[HostNote]) -> String {
    let group = |incomplete: bool| -> Vec<String> {
        notes
            .iter()
            .filter(|n| n.incomplete == incomplete)
            .map(|n| n.text.clone())
            .collect()
    };
    let (incomplete, remarks) = (group(true), group(false));
    let mut body = body;
    if !incomplete.is_empty() {
        body = add_notes(body, &incomplete, true);
    }
    if !remarks.is_empty() {
        body = add_notes(body, &remarks, false);
    }
    body
}

/// Adds notes to an answer: into `notes` of a JSON object (and, when they make it
/// `incomplete`, `complete: false`), or as `note:` lines after the header of a text
/// answer.
pub fn add_notes(body: String, notes: &[String], incomplete: bool) -> String {
    if let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&body) {
        let list = map
            .entry("notes")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = list {
            for n in notes {
                items.push(Value::String(n.clone()));
            }
        }
        if incomplete && map.contains_key("complete") {
            map.insert("complete".into(), Value::Bool(false));
        }
        return Value::Object(map).to_string();
    }
    let mut lines = body.splitn(2, '\n');
    let header = lines.next().unwrap_or("");
    let rest = lines.next();
    let mut out = header.to_string();
    for n in notes {
        out.push_str("\nnote: ");
        out.push_str(n);
    }
    if let Some(rest) = rest {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

/// `body` with every claim to be whole withdrawn, for an answer known to be cut: each
/// JSON `"complete": true` (any spacing) becomes `"complete": false`, and a text
/// answer's header status `| complete` becomes `| cut`. Works on a body that no longer
/// parses (cut mid-object), which is when it is needed; the rest is left as it is.
pub fn withdraw_complete(body: String) -> String {
    const KEY: &str = "\"complete\"";
    let mut out = String::with_capacity(body.len());
    let mut rest = body.as_str();
    while let Some(at) = rest.find(KEY) {
        let after = &rest[at + KEY.len()..];
        let value = after.trim_start().strip_prefix(':').map(str::trim_start);
        match value.and_then(|v| v.strip_prefix("true")) {
            Some(tail) => {
                // Everything up to the `true` it ends with, then the withdrawal.
                let claim_end = rest.len() - tail.len();
                out.push_str(&rest[..claim_end - "true".len()]);
                out.push_str("false");
                rest = tail;
            }
            None => {
                out.push_str(&rest[..at + KEY.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    let header_end = out.find('\n').unwrap_or(out.len());
    if out[..header_end].ends_with("| complete") {
        out.replace_range(header_end - "complete".len()..header_end, "cut");
    }
    out
}

/// The distinct project files a JSON answer names, in order of appearance, at most
/// `cap`: `file_path` values, and `path:line` locations in `at`, `site` and `location`
/// values, the keys the SDK's answers use. Absolute paths (dependency sources) are not
/// the project's and are skipped.
pub fn files_named_in(body: &str, cap: usize) -> Vec<String> {
    const KEYS: [&str; 4] = [
        "\"file_path\":\"",
        "\"at\":\"",
        "\"site\":\"",
        "\"location\":\"",
    ];
    let mut out: Vec<String> = Vec::new();
    let mut rest = body;
    while let Some((i, key)) = KEYS
        .iter()
        .filter_map(|k| rest.find(k).map(|i| (i, *k)))
        .min_by_key(|(i, _)| *i)
    {
        rest = &rest[i + key.len()..];
        let Some(end) = rest.find('"') else { break };
        let value = &rest[..end];
        let path = if key.starts_with("\"file_path") {
            value
        } else {
            location_path(value)
        };
        if !path.is_empty()
            && !path.starts_with('/')
            && !path.contains('\\')
            && !out.iter().any(|p| p == path)
        {
            out.push(path.to_string());
            if out.len() >= cap {
                break;
            }
        }
        rest = &rest[end..];
    }
    out
}

/// The path of a `path:line` location, or "" when no line number follows the last colon.
fn location_path(value: &str) -> &str {
    match value.rsplit_once(':') {
        Some((p, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => p,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_answer_withdraws_its_complete_claims_even_when_it_no_longer_parses() {
        assert_eq!(
            withdraw_complete("{\"complete\":true,\"items\":[1,".into()),
            "{\"complete\":false,\"items\":[1,"
        );
        assert_eq!(
            withdraw_complete("{\"complete\" :  true, \"x\": {\"complete\": true".into()),
            "{\"complete\" :  false, \"x\": {\"complete\": false"
        );
        let same = "{\"complete\":false,\"note\":\"\\\"complete\\\" said\"}";
        assert_eq!(withdraw_complete(same.into()), same);
        assert_eq!(
            withdraw_complete("find_references x: 3 sites | 1-3 of 3 | complete\na.rs:1".into()),
            "find_references x: 3 sites | 1-3 of 3 | cut\na.rs:1"
        );
        assert_eq!(withdraw_complete("plain text".into()), "plain text");
    }

    #[test]
    fn files_named_in_an_answer_are_found_once_each() {
        let body = r#"{"definition":{"file_path":"src/a.rs"},"items":[{"file_path":"src/b.rs"},{"file_path":"src/a.rs"},{"file_path":"/abs/x.rs"},{"at":"src/c.rs:12","site":"src/d.rs:3"},{"at":"not a location"}]}"#;
        assert_eq!(
            files_named_in(body, 64),
            ["src/a.rs", "src/b.rs", "src/c.rs", "src/d.rs"]
        );
        assert_eq!(files_named_in(body, 1), ["src/a.rs"]);
        assert!(files_named_in("plain text", 64).is_empty());
    }

    #[test]
    fn notes_join_json_and_text_answers() {
        let j = add_notes(
            r#"{"items":[1],"complete":true}"#.into(),
            &["INDEXING 50%".into()],
            true,
        );
        assert_eq!(
            j,
            r#"{"complete":false,"items":[1],"notes":["INDEXING 50%"]}"#
        );
        let j = add_notes(r#"{"complete":true}"#.into(), &["ignored".into()], false);
        assert_eq!(j, r#"{"complete":true,"notes":["ignored"]}"#);
        let t = add_notes("header\nline1".into(), &["n".into()], true);
        assert_eq!(t, "header\nnote: n\nline1");
    }

    #[test]
    fn host_notes_come_incomplete_first_each_group_in_order() {
        let note = |text: &str, incomplete| HostNote {
            text: text.into(),
            incomplete,
        };
        let notes = [
            note("unknown arg", false),
            note("INDEXING", true),
            note("gaps", true),
        ];
        let j = with_notes(r#"{"complete":true,"root":"/w/a"}"#.into(), &notes);
        assert_eq!(
            j,
            r#"{"complete":false,"notes":["INDEXING","gaps","unknown arg"],"root":"/w/a"}"#
        );
        // A text answer shows the last group first, as two passes over the header do.
        let t = with_notes("header\nrow".into(), &notes);
        assert_eq!(
            t,
            "header\nnote: unknown arg\nnote: INDEXING\nnote: gaps\nrow"
        );
        assert_eq!(with_notes("plain".into(), &[]), "plain");
    }
}
