//! Shadow runs (ADR 0030): a candidate installed with `scryer plugin add --shadow` is
//! called, off the answer path, with every live call of a tool it shadows; the live
//! answer is the serving router's, sent before the candidate runs. The host keeps, per
//! candidate and tool, how often the two answers differ (summarised by the JSON keys
//! whose values differ, never their content), their latencies and errors, and writes
//! it to `<plugins dir>/.shadow-<pid>.json` for `scryer plugin shadow-report`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use scryer_runtime::installed::PluginHome;
use scryer_runtime::wit::{AnswerContext, CallError, ToolAnswer};
use scryer_runtime::{CallFailure, CallScope, Plugin, Runtime};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Core;

/// Latencies kept per tool for the medians.
const KEPT_LATENCIES: usize = 512;
/// Differing keys named in one summary.
const MAX_KEYS: usize = 5;

#[derive(Default)]
struct Tally {
    of: String,
    compared: u64,
    same: u64,
    different: u64,
    candidate_errors: u64,
    serving_errors: u64,
    skipped: u64,
    /// Latencies in microseconds, the last [`KEPT_LATENCIES`].
    serving_us: VecDeque<u32>,
    candidate_us: VecDeque<u32>,
    differences: BTreeMap<String, u64>,
}

/// What the host learns from shadow runs, per (candidate, tool).
#[derive(Default)]
pub(crate) struct Book {
    tallies: Mutex<BTreeMap<(String, String), Tally>>,
}

/// One candidate's record for one tool, as the report shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowTool {
    pub candidate: String,
    pub of: String,
    pub tool: String,
    /// Calls both answered without error, compared.
    pub compared: u64,
    pub same: u64,
    pub different: u64,
    pub candidate_errors: u64,
    pub serving_errors: u64,
    /// Live calls not shadowed: every shadow permit was taken.
    pub skipped: u64,
    /// Latencies in microseconds (router time, as each call's caller waited for it).
    pub serving_median_us: Option<u32>,
    pub candidate_median_us: Option<u32>,
    pub serving_max_us: Option<u32>,
    pub candidate_max_us: Option<u32>,
    /// How the answers differed (JSON keys whose values differ, or an error's kind), and
    /// how often.
    pub differences: BTreeMap<String, u64>,
}

/// What one running server's shadow runs found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShadowReport {
    pub pid: u32,
    pub database: String,
    pub tools: Vec<ShadowTool>,
}

fn median(v: &VecDeque<u32>) -> Option<u32> {
    let mut s: Vec<u32> = v.iter().copied().collect();
    s.sort_unstable();
    s.get(s.len() / 2).copied()
}

fn keep(v: &mut VecDeque<u32>, ms: u32) {
    if v.len() == KEPT_LATENCIES {
        v.pop_front();
    }
    v.push_back(ms);
}

impl Book {
    fn record(&self, candidate: &str, of: &str, tool: &str, change: impl FnOnce(&mut Tally)) {
        let mut t = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        let tally = t
            .entry((candidate.to_string(), tool.to_string()))
            .or_insert_with(|| Tally {
                of: of.to_string(),
                ..Tally::default()
            });
        change(tally);
    }

    pub(crate) fn report(&self, database: &str) -> ShadowReport {
        let t = self.tallies.lock().unwrap_or_else(|p| p.into_inner());
        ShadowReport {
            pid: std::process::id(),
            database: database.to_string(),
            tools: t
                .iter()
                .map(|((candidate, tool), x)| ShadowTool {
                    candidate: candidate.clone(),
                    of: x.of.clone(),
                    tool: tool.clone(),
                    compared: x.compared,
                    same: x.same,
                    different: x.different,
                    candidate_errors: x.candidate_errors,
                    serving_errors: x.serving_errors,
                    skipped: x.skipped,
                    serving_median_us: median(&x.serving_us),
                    candidate_median_us: median(&x.candidate_us),
                    serving_max_us: x.serving_us.iter().max().copied(),
                    candidate_max_us: x.candidate_us.iter().max().copied(),
                    differences: x.differences.clone(),
                })
                .collect(),
        }
    }
}

/// The kind of a failed call, without its message (which may quote code).
fn failure_kind(f: &CallFailure) -> &'static str {
    match f {
        CallFailure::Router(CallError::InvalidArgument(_)) => "invalid-argument",
        CallFailure::Router(CallError::NotFound(_)) => "not-found",
        CallFailure::Router(CallError::Denied(_)) => "denied",
        CallFailure::Router(CallError::Internal(_)) => "internal",
        CallFailure::CpuDeadline { .. } => "cpu deadline",
        CallFailure::Timeout { .. } => "timeout",
        CallFailure::Memory { .. } => "memory",
        CallFailure::AnswerTooLarge { .. } => "answer too large",
        CallFailure::Trap { .. } => "trap",
        CallFailure::Busy(_) => "busy",
    }
}

/// How two answers differ, named by structure only: the top-level JSON keys whose values
/// differ (or that one answer lacks), the truncated flag, the number of files; for a
/// text answer, its line counts. `None` when they are the same.
pub(crate) fn difference(serving: &ToolAnswer, candidate: &ToolAnswer) -> Option<String> {
    let mut parts = Vec::new();
    if serving.body != candidate.body {
        let parsed = (
            serde_json::from_str::<Value>(&serving.body),
            serde_json::from_str::<Value>(&candidate.body),
        );
        match parsed {
            (Ok(Value::Object(a)), Ok(Value::Object(b))) => {
                let mut keys: Vec<String> = a
                    .iter()
                    .filter(|(k, v)| b.get(*k) != Some(*v))
                    .map(|(k, _)| {
                        if b.contains_key(k) {
                            k.clone()
                        } else {
                            format!("-{k}")
                        }
                    })
                    .chain(
                        b.keys()
                            .filter(|k| !a.contains_key(*k))
                            .map(|k| format!("+{k}")),
                    )
                    .collect();
                keys.sort();
                let more = keys.len().saturating_sub(MAX_KEYS);
                keys.truncate(MAX_KEYS);
                let extra = if more > 0 {
                    format!(" (+{more} more)")
                } else {
                    String::new()
                };
                parts.push(format!("keys {}{extra}", keys.join(", ")));
            }
            _ => parts.push(format!(
                "text, {} vs {} lines",
                serving.body.lines().count(),
                candidate.body.lines().count()
            )),
        }
    }
    if serving.truncated != candidate.truncated {
        parts.push("truncated".into());
    }
    if serving.files != candidate.files {
        parts.push(format!(
            "files, {} vs {}",
            serving.files.len(),
            candidate.files.len()
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The live call a candidate is run beside: what it was asked and what it answered.
pub(crate) struct LiveCall {
    pub(crate) tool: String,
    pub(crate) arguments: String,
    pub(crate) context: AnswerContext,
    pub(crate) scope: CallScope,
    pub(crate) serving: Result<ToolAnswer, &'static str>,
    pub(crate) serving_us: u32,
}

/// Runs `candidate` beside a live call that was already answered (or is being sent):
/// a task of its own under the shadow limits, so it never delays or changes the live
/// answer. What it finds goes to `core`'s book and the report under `home`.
pub(crate) fn spawn(
    runtime: Runtime,
    core: Arc<Core>,
    home: Option<PluginHome>,
    candidate: Arc<Plugin>,
    of: String,
    live: LiveCall,
) {
    tokio::spawn(async move {
        let mut scope = live.scope;
        scope.plugin = candidate.name().into();
        scope.memo = Default::default();
        scope.window = Arc::new(
            crate::call::windowed::for_call(
                &serde_json::from_str(&live.arguments).unwrap_or_default(),
            )
            .unwrap_or_default(),
        );
        let started = Instant::now();
        let answer = runtime
            .call_shadow(
                &candidate,
                scope,
                &live.tool,
                &live.arguments,
                &live.context,
            )
            .await;
        let us = started.elapsed().as_micros().min(u128::from(u32::MAX)) as u32;
        core.shadows.record(candidate.name(), &of, &live.tool, |t| {
            tally(t, live.serving.as_ref(), live.serving_us, answer, us)
        });
        if let Some(home) = &home {
            write_report(&core.shadows, &core.db_label, home);
        }
    });
}

/// Writes `<plugins dir>/.shadow-<pid>.json` from `book`.
fn write_report(book: &Book, db_label: &str, home: &PluginHome) {
    let report = book.report(db_label);
    let path = shadow_report_path(home, report.pid);
    let text = serde_json::to_string_pretty(&report).unwrap_or_default();
    if let Err(e) = scryer_runtime::policy::write_atomically(&path, text.as_bytes()) {
        tracing::info!(path = %path.display(), error = %e, "cannot write the shadow report");
    }
}

/// Counts one shadow run into `t`.
fn tally(
    t: &mut Tally,
    serving: Result<&ToolAnswer, &&'static str>,
    serving_us: u32,
    candidate: Result<ToolAnswer, CallFailure>,
    candidate_us: u32,
) {
    if let Err(CallFailure::Busy(_)) = candidate {
        t.skipped += 1;
        return;
    }
    keep(&mut t.serving_us, serving_us);
    keep(&mut t.candidate_us, candidate_us);
    let summary = match (serving, &candidate) {
        (Ok(a), Ok(b)) => {
            t.compared += 1;
            difference(a, b)
        }
        // Both refused the call: nothing to compare unless they refused it differently.
        (Err(kind), Err(f)) => {
            t.serving_errors += 1;
            t.candidate_errors += 1;
            if *kind == failure_kind(f) {
                return;
            }
            Some(format!("errors, {kind} vs {}", failure_kind(f)))
        }
        (Ok(_), Err(f)) => {
            t.candidate_errors += 1;
            Some(format!("candidate failed: {}", failure_kind(f)))
        }
        (Err(kind), Ok(_)) => {
            t.serving_errors += 1;
            Some(format!("serving failed: {kind}"))
        }
    };
    match summary {
        None => t.same += 1,
        Some(s) => {
            t.different += 1;
            *t.differences.entry(s).or_default() += 1;
        }
    }
}

/// The serving router's outcome as a shadow run compares it.
pub(crate) fn served(
    outcome: &Result<ToolAnswer, CallFailure>,
) -> Result<ToolAnswer, &'static str> {
    outcome.as_ref().map_err(failure_kind).cloned()
}

pub(crate) fn shadow_report_path(
    home: &scryer_runtime::installed::PluginHome,
    pid: u32,
) -> std::path::PathBuf {
    home.plugins_dir().join(format!(".shadow-{pid}.json"))
}

impl ShadowReport {
    /// The reports of running servers (a dead process's report is skipped).
    pub fn running(home: &scryer_runtime::installed::PluginHome) -> Vec<ShadowReport> {
        let Ok(dir) = std::fs::read_dir(home.plugins_dir()) else {
            return Vec::new();
        };
        let mut out: Vec<ShadowReport> = dir
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let pid: u32 = name
                    .strip_prefix(".shadow-")?
                    .strip_suffix(".json")?
                    .parse()
                    .ok()?;
                crate::plugins::plugin_watch::alive(pid).then_some(e.path())
            })
            .filter_map(|p| serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok())
            .collect();
        out.sort_by_key(|r| r.pid);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(body: &str) -> ToolAnswer {
        ToolAnswer {
            body: body.into(),
            truncated: false,
            files: Vec::new(),
        }
    }

    #[test]
    fn differences_name_keys_never_values() {
        let a = answer(r#"{"total":3,"items":["secret_fn"],"complete":true}"#);
        let b = answer(r#"{"total":4,"items":["secret_fn"],"next":1}"#);
        let d = difference(&a, &b).unwrap();
        assert_eq!(d, "keys +next, -complete, total");
        assert!(!d.contains("secret"));
        assert_eq!(difference(&a, &a), None);
        let d = difference(&answer("a\nb"), &answer("a\nc\nd")).unwrap();
        assert_eq!(d, "text, 2 vs 3 lines");
    }

    #[test]
    fn a_busy_candidate_is_skipped_and_errors_are_counted_by_kind() {
        let mut t = Tally::default();
        let a = answer("{}");
        tally(&mut t, Ok(&a), 1, Err(CallFailure::Busy(2)), 0);
        assert_eq!((t.skipped, t.compared), (1, 0));
        let timeout = CallFailure::Timeout {
            plugin: "c".into(),
            timeout: std::time::Duration::from_secs(1),
        };
        tally(&mut t, Ok(&a), 1, Err(timeout), 9);
        assert_eq!(t.candidate_errors, 1);
        assert_eq!(t.differences["candidate failed: timeout"], 1);
        tally(&mut t, Ok(&a), 1, Ok(answer("{}")), 2);
        assert_eq!((t.same, t.compared, t.different), (1, 1, 1));
    }
}
