//! Usage telemetry: every tool call writes one row (tool, session, project, answer
//! tokens, truncated, latency; never arguments or answers), off with
//! `SCRYER_TELEMETRY=off`. Rows are written off the call path.

use std::sync::Arc;

use scryer_db::ToolCallRow;

use crate::Core;

/// Whether telemetry is on (`SCRYER_TELEMETRY` unset, or anything but `off`/`0`/`false`).
/// Read once per process: it is asked on every call.
pub fn enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(read_enabled)
}

fn read_enabled() -> bool {
    !matches!(
        std::env::var("SCRYER_TELEMETRY")
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
            .as_str(),
        "off" | "0" | "false" | "no"
    )
}

pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Sessions are numbered per process; the process id keeps them apart across restarts.
pub fn session_key(session: u64) -> String {
    format!("{}-{session}", std::process::id())
}

/// Writes the row in the background; a failed write is logged, never the call's problem.
pub fn record(core: &Arc<Core>, row: ToolCallRow) {
    let projects = core.projects.clone();
    core.handle.spawn(async move {
        if let Err(e) = projects.db().record_tool_call(&row).await {
            tracing::debug!(error = %format!("{e:#}"), "telemetry row not written");
        }
    });
}
