//! `record_adr`: a new numbered decision record, written as a database row and then as
//! its file, created exclusively; a failed file write takes the row back out.

use scryer_decisions::globs::{PathGlob, normalize_path};
use scryer_decisions::parse::one_line;
use scryer_decisions::write::{NewAdr, file_name, render};
use scryer_decisions::{ADR_DIR, STATUSES, date};
use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::host::DecisionRow;
use scryer_plugin_sdk::{Ctx, Host, ToolError, ToolResult, to_compact_json};
use serde_json::json;

use crate::corpus::load;

const MAX_TITLE_CHARS: usize = 200;
/// Per text section. The host lists files up to 256 KiB; a record must stay readable whole.
const MAX_SECTION_CHARS: usize = 32_000;
const MAX_PATHS: usize = 50;
/// Numbers tried when another record takes ours between reading and inserting.
const ATTEMPTS: u32 = 5;

/// A Markdown argument: any text but control characters other than line breaks and tabs.
fn markdown_arg(args: &Args, name: &str) -> ToolResult<Option<String>> {
    let Some(v) = args.opt_str(name)? else {
        return Ok(None);
    };
    let n = v.chars().count();
    if n > MAX_SECTION_CHARS {
        return Err(ToolError::invalid(format!(
            "`{name}` is {n} characters long; accepted: at most {MAX_SECTION_CHARS}"
        )));
    }
    if let Some(c) = v
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(ToolError::invalid(format!(
            "`{name}` contains the control character U+{:04X}; remove it",
            c as u32
        )));
    }
    Ok(Some(v))
}

pub fn record_adr<H: Host + ?Sized>(
    host: &H,
    args: &Args,
    _ctx: &Ctx,
    now_ms: i64,
) -> ToolResult<String> {
    let raw_title = args.required_str("title", "a one-line title of the decision")?;
    // Line breaks are folded, so a title can never spill into the frontmatter.
    let title = one_line(&raw_title);
    check_text("title", &title, MAX_TITLE_CHARS)?;
    let decision = markdown_arg(args, "decision")?
        .ok_or_else(|| ToolError::invalid("`decision` is required: what was decided (Markdown)"))?;
    let context = markdown_arg(args, "context")?;
    let consequences = markdown_arg(args, "consequences")?;
    let status = args
        .opt_choice("status", &STATUSES, &[])?
        .unwrap_or("proposed");
    let mut affected_paths = Vec::new();
    for raw in args.opt_str_list("affected_paths")?.unwrap_or_default() {
        if raw.is_empty() {
            continue;
        }
        check_text("affected_paths", &raw, 512)?;
        PathGlob::new(&raw).map_err(|why| {
            ToolError::invalid(format!(
                "{why}; accepted: project-relative paths or globs such as `src/net/**` or `host/db`"
            ))
        })?;
        let norm = normalize_path(&raw).unwrap_or(raw);
        if !affected_paths.contains(&norm) {
            affected_paths.push(norm);
        }
    }
    if affected_paths.len() > MAX_PATHS {
        return Err(ToolError::invalid(format!(
            "`affected_paths` has {} entries; accepted: at most {MAX_PATHS}",
            affected_paths.len()
        )));
    }

    let loaded = load(host)?;
    let mut notes = loaded.notes.clone();
    let same_title: Vec<String> = loaded
        .corpus
        .decisions
        .iter()
        .filter(|d| d.title.eq_ignore_ascii_case(&title))
        .map(|d| {
            d.number
                .map_or(d.path.clone(), |n| format!("{n} ({})", d.path))
        })
        .collect();
    if !same_title.is_empty() {
        notes.push(format!(
            "a record with this title already exists: {}; if this one replaces it, mark the old one superseded",
            same_title.join(", ")
        ));
    }

    let day = date::format_date(now_ms);
    let mut number = loaded.corpus.max_number + 1;
    let mut attempt = 0;
    let (row, name) = loop {
        let name = file_name(number, &title);
        let text = render(&NewAdr {
            number,
            title: &title,
            status,
            date: &day,
            context: context.as_deref(),
            decision: &decision,
            consequences: consequences.as_deref(),
            affected_paths: &affected_paths,
        });
        let row = DecisionRow {
            number,
            title: title.clone(),
            status: status.to_string(),
            file_path: format!("{ADR_DIR}/{name}"),
            text,
            recorded_at: date::format_rfc3339(now_ms),
        };
        match host.insert_decision_row(&row) {
            Ok(()) => break (row, name),
            Err(e) => {
                attempt += 1;
                // Another record took the number since we read: take the next one.
                let taken = host.decision_rows()?.iter().any(|r| r.number == number);
                if !taken || attempt >= ATTEMPTS {
                    return Err(e);
                }
                number += 1;
            }
        }
    };
    if let Err(e) = host.create_decision_file(&name, &row.text) {
        let rollback = match host.delete_decision_rows(number) {
            Ok(_) => "the stored row was removed again".to_string(),
            Err(r) => format!(
                "removing the stored row failed too ({}); query_adrs will purge it",
                r.message
            ),
        };
        return Err(ToolError {
            kind: e.kind,
            message: format!(
                "decision {number} was not recorded: writing {ADR_DIR}/{name} failed ({}); {rollback}",
                e.message
            ),
        });
    }
    // A query_adrs that read the directory between our two writes took the row for an
    // orphan and purged it: the file is there now, so store the row again.
    // The host runs writing calls one at a time per project, so the number is still
    // free; should storing fail anyway, the file goes too: row and file stay one-to-one
    // and the answer never reports a clash for a file left behind.
    if !host.decision_rows()?.iter().any(|r| r.number == number)
        && let Err(e) = host.insert_decision_row(&row)
    {
        let _ = host.delete_decision_file(&name);
        return Err(ToolError {
            kind: e.kind,
            message: format!(
                "decision {number} was not recorded: storing its row failed after {ADR_DIR}/{name} was written ({}); the file was removed again",
                e.message
            ),
        });
    }
    let body = json!({
        "recorded": {
            "number": number,
            "title": title,
            "status": status,
            "date": day,
            "path": row.file_path,
            "affected_paths": affected_paths,
        },
        "notes": notes,
        "see_also": format!("query_adrs(query: {title:?}) to see it ranked; delete_adr(adr_number: {number}) to remove it"),
    });
    Ok(to_compact_json(&body))
}
