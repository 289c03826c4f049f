//! A common name's usages, a window at a time (ADR 0024): which name a call is about and
//! where its window starts (`usage_offset`), and what the answer says when the host
//! handed the router only part of a name's usages.

use scryer_runtime::UsageWindow;
use scryer_runtime::window::Cut;
use serde_json::{Map, Value};

/// The host parameter that moves the window over the name a call is about. Accepted by
/// every tool and not published (tool definitions stay small): the answer that needs it
/// names it, with its value.
pub const USAGE_OFFSET: &str = "usage_offset";

/// The window a call runs with: about the bare name its `symbol` ends in, from
/// `usage_offset` (default 0).
pub fn for_call(args: &Map<String, Value>) -> Result<UsageWindow, String> {
    let offset = crate::call::dispatch::host_int(args, USAGE_OFFSET, 0, i64::from(u32::MAX))?;
    let root = match args.get("symbol") {
        Some(Value::String(s)) => bare_name(s),
        _ => None,
    };
    Ok(UsageWindow::new(root, offset.unwrap_or(0) as usize))
}

/// `tokio::runtime::Runtime::spawn` → `spawn`; `Vec::<T>::new()` → `new`.
fn bare_name(symbol: &str) -> Option<String> {
    // Generic arguments dropped (`Vec::<T>::new` → `Vec::::new`, empty segments skipped).
    let mut depth = 0usize;
    let s: String = symbol
        .trim()
        .trim_end_matches("()")
        .chars()
        .filter(|&c| {
            match c {
                '<' => depth += 1,
                '>' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect();
    let last = s.rsplit([':', '.']).find(|p| !p.is_empty())?;
    let name: String = last
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// What the answer says about the cuts, and the `usage_offset` of the next window of the
/// call's own name when there is one.
pub fn notes(cuts: &[Cut]) -> (Vec<String>, Option<usize>) {
    let mut notes = Vec::new();
    let mut next = None;
    for c in cuts {
        let (from, to) = (c.handed.start, c.handed.end);
        if c.root {
            let more = to < c.total;
            if more {
                next = Some(to);
            }
            notes.push(format!(
                "`{}` has {} {}{}, too many to attribute in one call: this answer is over {} {} to {} of them (in file order){}; every count and list here is for that window",
                c.name,
                c.total,
                c.what,
                c.definitions
                    .map(|d| format!(" and {d} definitions (each usage is weighed against every one)"))
                    .unwrap_or_default(),
                c.what,
                from + usize::from(to > from),
                to,
                if more {
                    format!(
                        "; next window: the same call with {USAGE_OFFSET}: {to}, or a qualified name (`Type::{}`) to narrow",
                        c.name
                    )
                } else {
                    "; this is the last window".into()
                }
            ));
        } else if to > from {
            notes.push(format!(
                "`{}` (met on the way) has {} {}: only the first {} were read",
                c.name, c.total, c.what, to
            ));
        } else {
            notes.push(format!(
                "`{}` (met on the way) has {} {}: none were read, this call had read its share of usages",
                c.name, c.total, c.what
            ));
        }
    }
    (notes, next)
}

/// The tokens the window's `notes` take in an answer, with room for the fields `mark`
/// adds.
pub fn room(notes: &[String]) -> u32 {
    crate::call::tokens::count(&notes.join("\n")) + 40
}

/// The room the window's notes about the call's own name will take, foreseen before
/// the router runs from the name's definitions and usage count (both read, and kept,
/// for the router's own host calls anyway), so the router fits its answer in what is
/// left instead of answering twice (ADR 0041). `None` when the name is handed whole
/// or the call is about no name.
pub async fn foreseen_room(
    projects: &std::sync::Arc<crate::indexing::projects::ProjectManager>,
    project_id: i64,
    window: &UsageWindow,
) -> Option<u32> {
    let name = window.root()?;
    // The usage count is read on another thread while the definitions are: a common
    // name's first call reads both cold (`new` on the monorepo: 11-20 ms and 13-20 ms).
    // A blocking thread, not a task: a task spawned here waits in this worker's LIFO
    // slot, which no other worker takes, until the definitions read below gives the
    // worker back, and it does not before it is done (the two ran one after the other:
    // 25-42 ms in all).
    let counting = {
        let (projects, name) = (projects.clone(), name.to_string());
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            handle.block_on(projects.usage_count(project_id, &name))
        })
    };
    let started = std::time::Instant::now();
    let definitions = projects.symbols_by_name(project_id, name).await.ok()?;
    let defined_us = started.elapsed().as_micros() as u64;
    let total = counting.await.ok()?.ok()?;
    tracing::debug!(
        target: "scryer::call_time",
        definitions = definitions.len(),
        defined_us,
        counted_us = started.elapsed().as_micros() as u64,
        "window foreseen from"
    );
    let definitions = crate::host_services::distinct_definitions(&definitions);
    let cut = window.foresee(definitions, total)?;
    Some(room(&notes(&[cut]).0))
}

/// Adds the window's notes to an answer: a JSON object gets them in `notes`,
/// `complete: false` and `next_usage_offset`; a text answer gets `note:` lines after its
/// header.
pub fn mark(body: String, notes: &[String], next: Option<usize>) -> String {
    if let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&body) {
        if let Value::Array(items) = map
            .entry("notes")
            .or_insert_with(|| Value::Array(Vec::new()))
        {
            items.extend(notes.iter().cloned().map(Value::String));
        }
        map.insert("complete".into(), Value::Bool(false));
        if let Some(n) = next {
            map.insert("next_usage_offset".into(), Value::from(n));
        }
        return Value::Object(map).to_string();
    }
    let (header, rest) = body.split_once('\n').unwrap_or((&body, ""));
    let mut out = header.to_string();
    for n in notes {
        out.push_str("\nnote: ");
        out.push_str(n);
    }
    if !rest.is_empty() {
        out.push('\n');
        out.push_str(rest);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_call_is_about_the_last_segment_of_its_symbol() {
        for (s, want) in [
            ("new", Some("new")),
            ("tokio::runtime::Runtime::spawn", Some("spawn")),
            ("Vec::<T>::new()", Some("new")),
            ("self.len", Some("len")),
            ("::", None),
        ] {
            assert_eq!(bare_name(s).as_deref(), want, "{s}");
        }
        let args = json!({"symbol": "Foo::new", "usage_offset": "20000"});
        assert!(for_call(args.as_object().unwrap()).is_ok());
        let bad = json!({"symbol": "new", "usage_offset": -3});
        let e = for_call(bad.as_object().unwrap()).unwrap_err();
        assert!(e.contains("usage_offset"), "{e}");
    }

    #[test]
    fn a_cut_answer_says_what_it_covers_and_where_the_next_window_is() {
        let cuts = [
            Cut {
                name: "new".into(),
                what: "usage sites",
                total: 25_000,
                handed: 0..10_000,
                root: true,
                definitions: None,
            },
            Cut {
                name: "fmt".into(),
                what: "edges",
                total: 40_000,
                handed: 0..0,
                root: false,
                definitions: Some(3_000),
            },
        ];
        let (notes, next) = notes(&cuts);
        assert_eq!(next, Some(10_000));
        assert!(notes[0].contains("usage_offset: 10000"), "{}", notes[0]);
        assert!(notes[1].contains("none were read"), "{}", notes[1]);
        let body = mark(r#"{"total":3,"complete":true}"#.into(), &notes, next);
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["complete"], false);
        assert_eq!(v["next_usage_offset"], 10_000);
        assert_eq!(v["notes"].as_array().unwrap().len(), 2);
        let text = mark("header\nline".into(), &notes[..1], next);
        assert!(text.starts_with("header\nnote: `new` has 25000"), "{text}");
        assert!(text.ends_with("\nline"));
    }
}
