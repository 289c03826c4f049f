//! The administration router: `list_projects`, `switch_active_project`, `delete_project`,
//! `index_workspace`, `get_indexing_status`, `get_token_savings_metrics`.
//!
//! Project state lives in the host; this router validates arguments, asks the host
//! through the `projects` interface (a capability only this router is granted) and
//! shapes the answers.

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::host::{ProjectStatus as Status, unknown_tool};
use scryer_plugin_sdk::{
    Ctx, Host, HostParam, Router, Tier, ToolResult, ToolSpec, to_compact_json,
};
use serde_json::{Value, json};

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "index_workspace",
            description: "Register a directory as a project and index it. Re-running \
                re-indexes only changed files. Waits up to `wait_seconds`, then answers \
                `ready`, or `building` with progress (poll get_indexing_status).",
            schema: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "absolute path of the project root directory"},
                    "wait_seconds": {"type": "integer", "description": "how long to wait for the run (0-25, default 20)"}
                },
                "required": ["path"]
            }),
            read_only: false,
            destructive: false,
            idempotent: true,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[],
            guide: Some(("projects", "index_workspace(path) first")),
        },
        ToolSpec {
            name: "get_indexing_status",
            description: "The index state of a project (ready / building with files done of total / stale / \
                unindexed) with file, symbol and reference counts and parse failures. Without `project`: \
                the session's project, or every project.",
            schema: json!({
                "type": "object",
                "properties": {
                    "project": {"type": "string", "description": "slug, id or root path"}
                }
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[HostParam::ProjectSubject],
            guide: Some(("projects", "get_indexing_status")),
        },
        ToolSpec {
            name: "list_projects",
            description: "Every registered project with its slug, root, index state and counts; the session's \
                active project is marked.",
            schema: json!({"type": "object", "properties": {}}),
            read_only: true,
            destructive: false,
            idempotent: true,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[],
            guide: Some(("projects", "list_projects")),
        },
        ToolSpec {
            name: "switch_active_project",
            description: "Make a registered project the session's active project: calls that name no \
                project and no absolute file_path answer about it.",
            schema: json!({
                "type": "object",
                "properties": {
                    "project": {"type": "string", "description": "slug, id or root path"}
                },
                "required": ["project"]
            }),
            read_only: false,
            destructive: false,
            idempotent: true,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[HostParam::ProjectSubject],
            guide: Some(("projects", "switch_active_project")),
        },
        ToolSpec {
            name: "delete_project",
            description: "Unregister a project and delete its index (never its files). Refused while \
                the project is being indexed.",
            schema: json!({
                "type": "object",
                "properties": {
                    "project": {"type": "string", "description": "slug, id or root path"}
                },
                "required": ["project"]
            }),
            read_only: false,
            destructive: true,
            idempotent: false,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[HostParam::ProjectSubject],
            guide: Some(("projects", "delete_project")),
        },
        ToolSpec {
            name: "get_token_savings_metrics",
            description: "Measured usage per tool (never content): calls, errors, answer tokens (mean, p95), \
                truncation rate, latency p50/p95, and how often a call was followed by another. \
                `project` and `since_hours` narrow the window.",
            schema: json!({
                "type": "object",
                "properties": {
                    "project": {"type": "string", "description": "slug, id or root path"},
                    "since_hours": {"type": "integer", "description": "only calls of the last N hours"}
                }
            }),
            read_only: true,
            destructive: false,
            idempotent: true,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[HostParam::ProjectSubject],
            guide: Some(("projects", "get_token_savings_metrics: measured usage")),
        },
    ]
}

fn usage_json(u: &scryer_plugin_sdk::host::ToolUsage) -> Value {
    let pct = |n: u32| (f64::from(n) * 1000.0 / f64::from(u.calls.max(1))).round() / 10.0;
    json!({
        "tool": u.tool,
        "calls": u.calls,
        "errors": u.errors,
        "tokens_mean": u.tokens_mean,
        "tokens_p95": u.tokens_p95,
        "truncated_pct": pct(u.truncated),
        "latency_p50_ms": u.latency_p50_ms,
        "latency_p95_ms": u.latency_p95_ms,
        "follow_up_pct": pct(u.followed_up),
    })
}

/// A project's precise stage (WIT 0.4): `precise` holds no nested object, so a reader
/// finds its `state` at once; the per-language detail is `precise_languages`.
fn add_precise<H: Host + ?Sized>(host: &H, body: &mut Value, project: &str) {
    let Ok(p) = host.precise_status(project) else {
        return;
    };
    body["precise"] = json!({
        "state": p.state,
        "stale_files": if p.stale_files > 0 { Some(p.stale_files) } else { None },
        "note": p.note,
    });
    if !p.languages.is_empty() {
        body["precise_languages"] = json!(
            p.languages
                .iter()
                .map(|l| json!({
                    "language": l.language,
                    "state": l.state,
                    "indexer": l.indexer,
                    "indexer_version": l.indexer_version,
                    "source": l.source,
                    "files": l.files,
                    "occurrences": l.occurrences,
                    "duration_ms": l.duration_ms,
                    "indexer_peak_rss_kb": l.peak_rss_kb,
                    "finished_at": l.finished_at,
                    "error": l.error,
                }))
                .collect::<Vec<_>>()
        );
    }
}

fn status_json(s: &Status) -> Value {
    let progress = (s.state == "building" && s.files_total > 0).then(|| {
        format!(
            "{} of {} files ({}%)",
            s.files_done,
            s.files_total,
            (u64::from(s.files_done) * 100 / u64::from(s.files_total))
        )
    });
    json!({
        "project": s.slug,
        "root": s.root,
        "state": s.state,
        "progress": progress,
        "files": s.files,
        "symbols": s.symbols,
        "references": s.references,
        "parse_failures": if s.parse_failures > 0 { Some(s.parse_failures) } else { None },
        "indexed_at": s.indexed_at,
        "last_index_ms": s.last_index_ms,
        "last_error": s.last_error,
        "active": if s.active { Some(true) } else { None },
    })
}

pub struct Admin;

impl Router for Admin {
    const NAME: &'static str = "admin";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        let body = call(host, tool, args, ctx)?;
        Ok(match tool {
            "index_workspace" | "get_indexing_status" => with_index_gaps(host, body),
            _ => body,
        })
    }
}

/// A status answer with what the index left out of each project it names (every
/// registered project whose root it contains): one note each, marking the answer
/// incomplete.
fn with_index_gaps<H: Host + ?Sized>(host: &H, body: String) -> String {
    let Ok(all) = host.list_projects() else {
        return body;
    };
    let gaps: Vec<String> = all
        .iter()
        .filter(|p| body.contains(&p.root))
        .filter_map(|p| host.index_gaps(&p.root).ok().flatten())
        .collect();
    if gaps.is_empty() {
        body
    } else {
        scryer_plugin_sdk::answer::add_notes(body, &gaps, true)
    }
}

scryer_plugin_sdk::export_router!(crate::Admin);

fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    match tool {
        "index_workspace" => {
            let path = args.required_str("path", "the absolute path of the directory to index")?;
            check_text("path", &path, 4096)?;
            let wait = args.opt_int("wait_seconds", 0, 25)?.unwrap_or(20) as u32;
            let s = host.index_workspace(&path, wait * 1000)?;
            let mut body = status_json(&s);
            let note = match s.state.as_str() {
                "ready" => format!(
                    "indexed {} files: {} symbols, {} references{}",
                    s.files,
                    s.symbols,
                    s.references,
                    s.last_index_ms.map(|ms| format!(" in {ms} ms")).unwrap_or_default()
                ),
                "building" => "still indexing: call get_indexing_status to follow; queries wait for the first index".into(),
                other => format!("index state: {other}"),
            };
            body["notes"] = json!([note]);
            Ok(to_compact_json(&body))
        }
        "get_indexing_status" => {
            let selector = args.opt_str("project")?.or_else(|| ctx.project.clone());
            match selector {
                Some(p) => {
                    let s = host.project_status(&p)?;
                    let mut body = status_json(&s);
                    add_precise(host, &mut body, &s.slug);
                    Ok(to_compact_json(&body))
                }
                None => {
                    let all = host.list_projects()?;
                    let entries: Vec<Value> = all
                        .iter()
                        .map(|s| {
                            let mut v = status_json(s);
                            add_precise(host, &mut v, &s.slug);
                            v
                        })
                        .collect();
                    let mut body = json!({ "projects": entries });
                    if all.is_empty() {
                        body["notes"] = json!([
                            "no project is registered yet: call index_workspace(path) first"
                        ]);
                    }
                    Ok(to_compact_json(&body))
                }
            }
        }
        "switch_active_project" => {
            let project = args.required_str("project", "a project's slug, id or root path")?;
            check_text("project", &project, 4096)?;
            let s = host.switch_active_project(&project)?;
            let mut body = status_json(&s);
            body["notes"] = json!([format!("`{}` is now the session's active project", s.slug)]);
            Ok(to_compact_json(&body))
        }
        "delete_project" => {
            let project = args.required_str("project", "a project's slug, id or root path")?;
            check_text("project", &project, 4096)?;
            let s = host.delete_project(&project)?;
            let body = json!({
                "deleted": s.slug,
                "root": s.root,
                "notes": [format!(
                    "the index of `{}` ({} files, {} symbols) is deleted; its files are untouched; \
                     index_workspace(path) registers it again",
                    s.slug, s.files, s.symbols
                )],
            });
            Ok(to_compact_json(&body))
        }
        "get_token_savings_metrics" => {
            let project = args.opt_str("project")?;
            let since = args
                .opt_int("since_hours", 1, 24 * 365 * 10)?
                .map(|h| h as u32);
            let usage = host.usage(project.as_deref(), since)?;
            let calls: u32 = usage.iter().map(|u| u.calls).sum();
            let mut body = json!({
                "calls": calls,
                "tools": usage.iter().map(usage_json).collect::<Vec<_>>(),
                "notes": ["measured usage only: no savings estimate; rows hold no arguments or answers"],
            });
            if usage.is_empty() {
                body["notes"] = json!([match (&project, since) {
                    (Some(p), _) => format!("no calls recorded for project `{p}` in this window"),
                    (None, Some(h)) => format!("no calls recorded in the last {h} hours"),
                    (None, None) =>
                        "no calls recorded yet (or telemetry is off: SCRYER_TELEMETRY=off)"
                            .to_string(),
                }]);
            }
            Ok(to_compact_json(&body))
        }
        "list_projects" => {
            let all = host.list_projects()?;
            let mut body = json!({
                "total": all.len(),
                "projects": all.iter().map(status_json).collect::<Vec<_>>(),
            });
            if all.is_empty() {
                body["notes"] =
                    json!(["no project is registered yet: call index_workspace(path) first"]);
            }
            Ok(to_compact_json(&body))
        }
        other => Err(unknown_tool::<Admin>(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scryer_plugin_sdk::host::ToolUsage;

    #[test]
    fn usage_names_errors_next_to_calls_and_rounds_rates_to_one_decimal() {
        let u = ToolUsage {
            tool: "find_symbol".into(),
            calls: 3,
            errors: 2,
            truncated: 1,
            followed_up: 3,
            ..ToolUsage::default()
        };
        let v = usage_json(&u);
        assert_eq!(v["errors"], 2);
        assert_eq!(v["calls"], 3);
        assert_eq!(v["truncated_pct"], 33.3);
        assert_eq!(v["follow_up_pct"], 100.0);
    }
}
