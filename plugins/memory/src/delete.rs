//! `delete_adr`: one decision record, named by number, file or title, removed from disk
//! and from the database. Only `.md` files directly inside the project's `docs/adr` are
//! ever named to the host (which checks again, symlinks included).

use scryer_decisions::parse::one_line;
use scryer_decisions::{ADR_DIR, Decision, Kind, Origin};
use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::{Ctx, ErrorKind, Host, ToolError, ToolResult, to_compact_json};
use serde_json::json;

use crate::corpus::{Loaded, load};

fn denied(message: String) -> ToolError {
    ToolError {
        kind: ErrorKind::Denied,
        message,
    }
}

/// The file name inside `docs/adr` that `raw` names: `docs/adr/NAME.md`, `NAME.md`, or
/// an absolute path to the former inside the project root. Anything with `..`, any
/// other directory and any other extension is refused.
pub fn adr_file_name(raw: &str, root: Option<&str>) -> ToolResult<String> {
    check_text("file_path", raw, 4096)?;
    let shape =
        || format!("accepted: a .md file directly inside {ADR_DIR}, e.g. {ADR_DIR}/0003-title.md");
    if raw.contains('\\') {
        return Err(denied(format!(
            "file_path {raw:?} contains a backslash; {}",
            shape()
        )));
    }
    let mut rel = raw.trim();
    if rel.starts_with('/') {
        let root = root.map(|r| r.trim_end_matches('/'));
        rel = match root
            .and_then(|r| rel.strip_prefix(r))
            .and_then(|r| r.strip_prefix('/'))
        {
            Some(inside) => inside,
            None => {
                return Err(denied(format!(
                    "file_path {raw:?} is outside the project's {ADR_DIR}; {}",
                    shape()
                )));
            }
        };
    }
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(denied(format!(
            "file_path {raw:?} contains `..`; {}",
            shape()
        )));
    }
    let name = match parts.as_slice() {
        [name] => *name,
        ["docs", "adr", name] => *name,
        _ => {
            return Err(denied(format!(
                "file_path {raw:?} is not directly inside {ADR_DIR}; {}",
                shape()
            )));
        }
    };
    if !name.ends_with(".md") || name.len() <= 3 {
        return Err(ToolError::invalid(format!(
            "file_path {raw:?} is not a .md file; {}",
            shape()
        )));
    }
    Ok(name.to_string())
}

/// What one delete removes.
struct Target {
    number: Option<u32>,
    title: String,
    path: String,
    /// The file to delete, when the record has one on disk.
    file: Option<String>,
}

fn describe(d: &Decision) -> String {
    match d.number {
        Some(n) => format!("{n} \"{}\" ({})", d.title, d.path),
        None => format!("\"{}\" ({})", d.title, d.path),
    }
}

fn adrs(loaded: &Loaded) -> impl Iterator<Item = &Decision> {
    loaded.corpus.decisions.iter().filter(|d| {
        d.kind == Kind::Adr && (d.origin == Origin::DatabaseOnly || d.adr_file_name().is_some())
    })
}

fn target_of(d: &Decision) -> Target {
    Target {
        number: d.number,
        title: d.title.clone(),
        path: d.path.clone(),
        file: (d.origin == Origin::File)
            .then(|| d.adr_file_name().map(str::to_string))
            .flatten(),
    }
}

fn by_number(loaded: &Loaded, n: u32) -> ToolResult<Target> {
    let found: Vec<&Decision> = adrs(loaded).filter(|d| d.number == Some(n)).collect();
    match found.as_slice() {
        [one] => Ok(target_of(one)),
        [] => {
            if let Some(r) = loaded.rows.iter().find(|r| r.number == n) {
                // A row shadowed by a file that no longer carries its number.
                return Ok(Target {
                    number: Some(n),
                    title: r.title.clone(),
                    path: r.file_path.clone(),
                    file: None,
                });
            }
            let mut numbers: Vec<u32> = adrs(loaded).filter_map(|d| d.number).collect();
            numbers.sort_unstable();
            numbers.dedup();
            let known = if numbers.is_empty() {
                "there are none".to_string()
            } else {
                format!(
                    "numbers present: {}",
                    numbers
                        .iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            Err(ToolError::not_found(format!(
                "no decision record numbered {n}; {known}"
            )))
        }
        many => Err(ToolError::invalid(format!(
            "number {n} is carried by {} records: {}; pass file_path to pick one",
            many.len(),
            many.iter()
                .map(|d| describe(d))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn by_file(loaded: &Loaded, name: &str) -> ToolResult<Target> {
    let path = format!("{ADR_DIR}/{name}");
    if let Some(d) = adrs(loaded).find(|d| d.path == path) {
        return Ok(target_of(d));
    }
    let files: Vec<&str> = adrs(loaded).filter_map(|d| d.adr_file_name()).collect();
    Err(ToolError::not_found(format!(
        "{path} is not a decision record of this project ({})",
        if files.is_empty() {
            format!("{ADR_DIR} holds no .md file")
        } else {
            format!("{ADR_DIR} holds: {}", files.join(", "))
        }
    )))
}

fn by_title(loaded: &Loaded, raw: &str) -> ToolResult<Target> {
    let wanted = one_line(raw).to_lowercase();
    let found: Vec<&Decision> = adrs(loaded)
        .filter(|d| d.title.to_lowercase() == wanted)
        .collect();
    // One record may be a file and its row; records without a number are told apart
    // by their file.
    let mut records: Vec<String> = found
        .iter()
        .map(|d| d.number.map_or_else(|| d.path.clone(), |n| n.to_string()))
        .collect();
    records.sort_unstable();
    records.dedup();
    if found.is_empty() {
        let near: Vec<String> = adrs(loaded)
            .filter(|d| {
                let t = d.title.to_lowercase();
                t.contains(&wanted) || wanted.contains(&t)
            })
            .take(5)
            .map(describe)
            .collect();
        return Err(ToolError::not_found(format!(
            "no decision record is titled {raw:?}{}",
            if near.is_empty() {
                "; query_adrs lists them".to_string()
            } else {
                format!("; similar: {}", near.join(", "))
            }
        )));
    }
    if records.len() > 1 {
        return Err(ToolError::invalid(format!(
            "the title {raw:?} matches {} records with different numbers: {}; pass adr_number",
            records.len(),
            found
                .iter()
                .map(|d| describe(d))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let on_disk = found
        .iter()
        .find(|d| d.origin == Origin::File)
        .unwrap_or(&found[0]);
    Ok(target_of(on_disk))
}

pub fn delete_adr<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let number = args
        .opt_int("adr_number", 1, i64::from(u32::MAX))?
        .map(|n| n as u32);
    let file_path = args.opt_str("file_path")?;
    let title = args.opt_str("title")?;
    let given: Vec<&str> = [
        number.map(|_| "adr_number"),
        file_path.as_ref().map(|_| "file_path"),
        title.as_ref().map(|_| "title"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() != 1 {
        return Err(ToolError::invalid(format!(
            "delete_adr takes exactly one of adr_number, file_path or title; got {}",
            if given.is_empty() {
                "none".to_string()
            } else {
                given.join(" and ")
            }
        )));
    }
    // Refuse a bad path before reading anything.
    let file_name = file_path
        .as_deref()
        .map(|p| adr_file_name(p, ctx.project_root.as_deref()))
        .transpose()?;

    let loaded = load(host)?;
    let target = match (number, &file_name, &title) {
        (Some(n), _, _) => by_number(&loaded, n)?,
        (_, Some(name), _) => by_file(&loaded, name)?,
        (_, _, Some(t)) => by_title(&loaded, t)?,
        _ => unreachable!("exactly one selector was checked above"),
    };

    if let Some(name) = &target.file {
        host.delete_decision_file(name)?;
    }
    // Only this record's rows: by its number, or (a numberless file) rows naming the file.
    let mut rows_deleted = 0;
    let numbers: Vec<u32> = match target.number {
        Some(n) => vec![n],
        None => loaded
            .rows
            .iter()
            .filter(|r| r.file_path == target.path)
            .map(|r| r.number)
            .collect(),
    };
    for n in numbers {
        rows_deleted += host.delete_decision_rows(n)?;
    }
    let body = json!({
        "deleted": {
            "number": target.number,
            "title": target.title,
            "path": target.path,
            "file_deleted": target.file.is_some(),
            "rows_deleted": rows_deleted,
        },
        "notes": loaded.notes,
    });
    Ok(to_compact_json(&body))
}
