//! What one `tools/call` means: which router, which project, which budget; then the
//! router call and the host's last word on size.
//!
//! Arguments the host interprets (`project`, `max_tokens`, `no_truncate`, `format`) are
//! read here for every tool, published or not; everything else is the router's.

use std::path::Path;

use scryer_db::ProjectRow;
use scryer_runtime::wit::{CallContext, OutputFormat, Project};
use scryer_runtime::{CallFailure, CallScope};
use serde_json::{Map, Value};

use crate::projects::IndexState;
use crate::{Format, Server, budget};

/// What telemetry learns while a call is answered.
#[derive(Default)]
struct Measured {
    project_id: Option<i64>,
    truncated: bool,
    /// The answer's tokens, when the budget check counted them.
    response_tokens: Option<u32>,
}

/// A tool's answer: the text to send and whether it is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallOutcome {
    pub text: String,
    pub is_error: bool,
}

impl CallOutcome {
    fn error(text: impl Into<String>) -> CallOutcome {
        CallOutcome {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Largest `max_tokens` accepted.
const MAX_BUDGET: i64 = 1_000_000;
/// Most files of one answer checked for changes after the call.
const MAX_REFRESH_FILES: usize = 64;

pub(crate) fn host_int(
    args: &Map<String, Value>,
    name: &str,
    min: i64,
    max: i64,
) -> Result<Option<i64>, String> {
    let n = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(_) => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "`{name}` must be a whole number from {min} to {max}, got {}",
            args.get(name).map(|v| v.to_string()).unwrap_or_default()
        )),
    }
}

fn host_bool(args: &Map<String, Value>, name: &str) -> Result<bool, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" | "" => Ok(false),
            _ => Err(format!("`{name}` must be true or false, got {s:?}")),
        },
        Some(other) => Err(format!("`{name}` must be true or false, got {other}")),
    }
}

fn host_str<'a>(args: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim())),
        Some(other) => Err(format!("`{name}` must be a string, got {other}")),
    }
}

impl Server {
    /// Answers one tool call for a session. Never fails: every problem becomes an
    /// error answer that names it.
    pub async fn call_tool(
        &self,
        session_id: u64,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> CallOutcome {
        let started = std::time::Instant::now();
        let mut measured = Measured::default();
        let outcome = self
            .answer_tool_call(session_id, name, arguments, &mut measured)
            .await;
        if let Some(recorder) = &self.core.telemetry
            && self.registry.tool(name).is_some()
        {
            let row = scryer_db::ToolCallRow {
                at_ms: crate::telemetry::now_ms(),
                session: crate::telemetry::session_key(session_id),
                project_id: measured.project_id,
                tool: name.to_string(),
                response_tokens: measured.response_tokens.unwrap_or(0),
                truncated: measured.truncated,
                latency_ms: started.elapsed().as_millis().min(u128::from(u32::MAX)) as u32,
                is_error: outcome.is_error,
            };
            // Counting an answer's tokens takes as long as a small call: the writer
            // counts the ones the budget check did not.
            let count_text = measured
                .response_tokens
                .is_none()
                .then(|| outcome.text.clone());
            recorder.record(crate::telemetry::PendingRow { row, count_text });
        }
        outcome
    }

    async fn answer_tool_call(
        &self,
        session_id: u64,
        name: &str,
        arguments: Option<Map<String, Value>>,
        measured: &mut Measured,
    ) -> CallOutcome {
        let Some((plugin, tool)) = self.registry.tool(name) else {
            let shown: String = name.chars().take(80).collect();
            return CallOutcome::error(format!(
                "unknown tool {shown:?}; this server offers: {}",
                self.registry.tool_names().join(", ")
            ));
        };
        let mut args = arguments.unwrap_or_default();
        // Notes that say nothing about completeness (arguments the tool does not know).
        let mut remarks = Vec::new();
        if let Some(schema) = self.registry.schema(name) {
            crate::contract::coerce_arguments(schema, &mut args);
            let published = crate::contract::publish_schema(name, tool.reads_index, schema);
            let unknown = crate::contract::unknown_arguments(&published, &args);
            if !unknown.is_empty() {
                remarks.push(crate::contract::unknown_arguments_note(
                    name, &published, &unknown,
                ));
            }
        }
        let session = self.core.session(session_id);

        let parsed = (|| -> Result<_, String> {
            let max_tokens = host_int(&args, "max_tokens", 1, MAX_BUDGET)?;
            let no_truncate = host_bool(&args, "no_truncate")?;
            let format = match host_str(&args, "format")? {
                None => session.options.format,
                Some(f) if f.eq_ignore_ascii_case("json") => Format::Json,
                Some(f) if f.eq_ignore_ascii_case("text") => Format::Text,
                Some(f) => return Err(format!("`format` is {f:?}; accepted: json, text")),
            };
            let window = crate::windowed::for_call(&args)?;
            Ok((max_tokens, no_truncate, format, window))
        })();
        let (max_tokens, no_truncate, format, window) = match parsed {
            Ok(p) => p,
            Err(e) => {
                return CallOutcome::error(with_remarks(
                    format!("invalid argument: {e}"),
                    &remarks,
                ));
            }
        };

        let writes = crate::contract::needs_named_project(tool).then_some(name);
        let project = match self
            .session_project(session_id, &session, &mut args, writes)
            .await
        {
            Ok(p) => p,
            Err(e) => return CallOutcome::error(with_remarks(e, &remarks)),
        };
        measured.project_id = project.as_ref().map(|p| p.id);
        // Writing calls run one at a time per project, across sessions: `record_adr`
        // reserves a number (its row) and creates the file exclusively with nothing
        // between them, and a `delete_adr` cannot interleave.
        let _one_writer = match (writes, &project) {
            (Some(_), Some(p)) => Some(project_write_lock(&p.root).lock_owned().await),
            _ => None,
        };

        // A call that reads the index waits for a first index that is being built.
        let mut notes = Vec::new();
        if let Some(p) = &project
            && tool.reads_index
        {
            let state = self.core.projects.state(p).await;
            if let IndexState::Building { .. } = state
                && !self
                    .core
                    .projects
                    .wait_idle(p.id, self.core.first_query_wait)
                    .await
                && let IndexState::Building { done, total } = self.core.projects.state(p).await
            {
                let pct = (done * 100).checked_div(total).unwrap_or(0);
                notes.push(format!(
                    "INDEXING {pct}%: project `{}` is still being indexed ({done} of {total} files); results so far are partial; retry in a few seconds",
                    p.slug
                ));
            } else if let IndexState::Stale { done, total } = state {
                // A re-index over an existing index: answers come from a mix of
                // updated and not-yet-updated files, each file consistent in itself.
                notes.push(if total > 0 {
                    format!("STALE: project `{}` is being re-indexed ({done} of {total} files checked); results for files not yet reached may be out of date", p.slug)
                } else {
                    format!("STALE: the last index run of `{}` did not finish; run index_workspace to bring it up to date", p.slug)
                });
            }
        }

        let budget = if no_truncate {
            None
        } else {
            Some(
                max_tokens
                    .map(|n| n as u32)
                    .or(session.options.max_tokens)
                    .unwrap_or_else(|| crate::contract::default_budget(tool, &args)),
            )
        };
        let context = CallContext {
            project: project.as_ref().map(|p| Project {
                id: p.id,
                slug: p.slug.clone(),
                root: p.root.clone(),
            }),
            budget_tokens: budget,
            budget_explicit: max_tokens.is_some(),
            format: match format {
                Format::Json => OutputFormat::Json,
                Format::Text => OutputFormat::Text,
            },
        };
        let mut scope = CallScope {
            plugin: plugin.name().into(),
            project: context.project.clone(),
            session: session_id,
            window: std::sync::Arc::new(window),
        };
        // Freshness: the file the call names is checked before it runs, the files the
        // answer names after; if any changed, the call runs again on the fresh index.
        let reads_index = tool.reads_index;
        // Dependency indexing in the background waits while this runs.
        let _foreground = reads_index.then(scryer_engine::foreground::Call::start);
        let mut refreshed: Vec<String> = Vec::new();
        if let (true, Some(p)) = (reads_index, &project)
            && let Ok(Some(fp)) = host_str(&args, "file_path")
            && let Some(rel) = crate::paths::project_relative(Path::new(&p.root), fp)
                .ok()
                .or_else(|| crate::paths::lexical_relative(Path::new(&p.root), fp))
        {
            refreshed.extend(self.refresh(p, vec![rel]).await);
        }
        let args_json = Value::Object(args).to_string();
        let mut outcome = self
            .runtime
            .call(plugin, scope.clone(), name, &args_json, &context)
            .await;
        if let (true, Some(p), Ok(result)) = (reads_index, &project, &outcome) {
            let named = files_named_in(&result.body, MAX_REFRESH_FILES);
            let changed = self.refresh(p, named).await;
            if !changed.is_empty() {
                refreshed.extend(changed);
                scope.window = std::sync::Arc::new(
                    crate::windowed::for_call(
                        &serde_json::from_str(&args_json).unwrap_or_default(),
                    )
                    .unwrap_or_default(),
                );
                outcome = self
                    .runtime
                    .call(plugin, scope.clone(), name, &args_json, &context)
                    .await;
            }
        }
        if !refreshed.is_empty() {
            refreshed.sort();
            refreshed.dedup();
            notes.push(format!(
                "refreshed {} file(s) changed since indexing: {}",
                refreshed.len(),
                refreshed.join(", ")
            ));
        }
        if let Ok(result) = &outcome
            && crate::contract::STATUS_TOOLS.contains(&name)
        {
            notes.extend(self.skipped_notes(&result.body).await);
        }
        let (mut window_notes, mut next_window) = crate::windowed::notes(&scope.window.cuts());
        // The router fitted its answer to the budget without the window's notes: when they
        // would push it over (and the host's cut would lose them), it answers again in
        // less, leaving them room.
        if let (Some(b), Ok(result)) = (budget, &outcome)
            && !window_notes.is_empty()
            && crate::tokens::count(&crate::windowed::mark(
                add_notes(result.body.clone(), &notes, true),
                &window_notes,
                next_window,
            )) > b
        {
            let all: Vec<&str> = notes
                .iter()
                .chain(&window_notes)
                .map(String::as_str)
                .collect();
            let room = crate::tokens::count(&all.join("\n")) + 40;
            let mut tighter = context.clone();
            tighter.budget_tokens = Some(b.saturating_sub(room).max(1));
            scope.window = std::sync::Arc::new(
                crate::windowed::for_call(&serde_json::from_str(&args_json).unwrap_or_default())
                    .unwrap_or_default(),
            );
            outcome = self
                .runtime
                .call(plugin, scope.clone(), name, &args_json, &tighter)
                .await;
            (window_notes, next_window) = crate::windowed::notes(&scope.window.cuts());
        }
        match outcome {
            Ok(result) => {
                let router_truncated = result.truncated || !window_notes.is_empty();
                let mut body = result.body;
                if !notes.is_empty() {
                    body = add_notes(body, &notes, true);
                }
                if !window_notes.is_empty() {
                    body = crate::windowed::mark(body, &window_notes, next_window);
                }
                if !remarks.is_empty() {
                    body = add_notes(body, &remarks, false);
                }
                let (text, cut, tokens) = budget::enforce(body, budget);
                measured.truncated = cut || router_truncated;
                measured.response_tokens = tokens;
                CallOutcome {
                    text,
                    is_error: false,
                }
            }
            Err(CallFailure::Router(e)) => {
                CallOutcome::error(with_remarks(CallFailure::Router(e).to_string(), &remarks))
            }
            Err(other) => {
                tracing::warn!(tool = name, error = %other, "router call failed");
                CallOutcome::error(with_remarks(other.to_string(), &remarks))
            }
        }
    }

    /// The index facts a status answer lacks: for each project it names (by root), what
    /// its index left out.
    async fn skipped_notes(&self, body: &str) -> Vec<String> {
        let Ok(all) = self.core.projects.db().projects().await else {
            return Vec::new();
        };
        all.iter()
            .filter(|p| body.contains(&p.root))
            .filter_map(|p| skipped_note(&p.slug, &self.core.projects.skipped(p.id)))
            .collect()
    }

    /// Refreshes `paths` of `project`; returns the ones that changed.
    async fn refresh(&self, project: &ProjectRow, paths: Vec<String>) -> Vec<String> {
        match self.core.projects.refresh(project, &paths).await {
            Ok(r) => r.updated.into_iter().chain(r.removed).collect(),
            Err(e) => {
                tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "refreshing files failed");
                Vec::new()
            }
        }
    }
}

/// Most paths one skipped-facts note names.
const MAX_NOTED_PATHS: usize = 10;

/// "skipped: N links leaving the root (…); too large (over 4 MiB), not indexed: …", or
/// `None` when nothing was left out.
fn skipped_note(slug: &str, skipped: &scryer_engine::indexer::Skipped) -> Option<String> {
    let list = |paths: &[String]| {
        let mut shown = paths[..paths.len().min(MAX_NOTED_PATHS)].join(", ");
        if paths.len() > MAX_NOTED_PATHS {
            shown.push_str(&format!(" and {} more", paths.len() - MAX_NOTED_PATHS));
        }
        shown
    };
    let mut parts = Vec::new();
    let links = &skipped.links_leaving_root;
    if !links.is_empty() {
        parts.push(format!(
            "skipped: {} link{} leaving the root ({})",
            links.len(),
            if links.len() == 1 { "" } else { "s" },
            list(links)
        ));
    }
    if !skipped.too_large.is_empty() {
        parts.push(format!(
            "too large (over {} MiB), not indexed: {}",
            scryer_engine::file_limits::MAX_SOURCE_BYTES >> 20,
            list(&skipped.too_large)
        ));
    }
    (!parts.is_empty()).then(|| format!("index facts of `{slug}`: {}", parts.join("; ")))
}

/// The lock a writing call on the project at `root` holds while it runs.
fn project_write_lock(root: &str) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    static LOCKS: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<tokio::sync::Mutex<()>>>>,
    > = std::sync::OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    locks.entry(root.to_string()).or_default().clone()
}

/// The distinct project files a JSON answer names, in order of appearance, at most
/// `cap`: `file_path` values, and `path:line` locations in `at`, `site` and `location`
/// values. Absolute paths (dependency sources) are not the project's and are skipped.
fn files_named_in(body: &str, cap: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = body;
    const KEYS: [&str; 4] = [
        "\"file_path\":\"",
        "\"at\":\"",
        "\"site\":\"",
        "\"location\":\"",
    ];
    while let Some((i, key)) = KEYS
        .iter()
        .filter_map(|k| rest.find(k).map(|i| (i, *k)))
        .min_by_key(|(i, _)| *i)
    {
        rest = &rest[i + key.len()..];
        let Some(end) = rest.find('"') else { break };
        let mut path = &rest[..end];
        if !key.starts_with("\"file_path") {
            // `path:line`: keep the path when a line number follows the last colon.
            match path.rsplit_once(':') {
                Some((p, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => {
                    path = p
                }
                _ => path = "",
            }
        }
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

/// An error answer with the host's remarks after it, one `note:` line each.
fn with_remarks(mut text: String, remarks: &[String]) -> String {
    for r in remarks {
        text.push_str("\nnote: ");
        text.push_str(r);
    }
    text
}

/// Adds host notes to a router's answer: into `notes` of a JSON object (and, when they
/// make it `incomplete`, `complete: false`), or as `note:` lines after the header of a
/// text answer.
fn add_notes(body: String, notes: &[String], incomplete: bool) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_arguments_are_coerced_and_checked() {
        let args = json!({"max_tokens": "300", "no_truncate": "true", "bad": "abc"});
        let args = args.as_object().unwrap();
        assert_eq!(
            host_int(args, "max_tokens", 1, MAX_BUDGET).unwrap(),
            Some(300)
        );
        assert!(host_bool(args, "no_truncate").unwrap());
        assert!(host_int(args, "bad", 1, 10).unwrap_err().contains("`bad`"));
        assert_eq!(host_int(args, "absent", 1, 10).unwrap(), None);
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
}
