//! Usage telemetry: every tool call writes one row (tool, session, project, answer
//! tokens, truncated, latency; never arguments or answers), off with
//! `SCRYER_TELEMETRY=off`. Rows are written off the call path.

use std::time::Duration;

use scryer_db::{Db, MAX_TOOL_CALLS_PER_WRITE, TelemetryWriteError, ToolCallRow};
use tokio::sync::mpsc;

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

/// Rows waiting for the writer at most; past it a row is dropped (and logged), never a
/// call delayed.
const MAX_QUEUED_ROWS: usize = 4096;
/// Sleeps between attempts while another connection holds the write lock.
const BUSY_RETRY_FIRST: Duration = Duration::from_millis(5);
const BUSY_RETRY_MAX: Duration = Duration::from_millis(500);

/// A row as the call path hands it over: its answer's token count, or the answer to
/// count (off the call path) when the call did not count it already.
pub struct PendingRow {
    pub row: ToolCallRow,
    pub count_text: Option<String>,
}

/// One writer task per process writes every row, batching what queued up meanwhile.
/// A row written by its own task on a fresh connection per call cost more CPU than the
/// call (tokio, eval latency phase, 2026-11-30): concurrent inserts collided on the
/// write lock and turso waits out a busy lock by re-polling.
pub struct Recorder {
    queue: mpsc::Sender<PendingRow>,
}

impl Recorder {
    /// Starts the writer on the current runtime.
    pub fn start(db: Db) -> Recorder {
        let (queue, rows) = mpsc::channel(MAX_QUEUED_ROWS);
        tokio::spawn(write_rows(db, rows));
        Recorder { queue }
    }

    /// Queues a row; never waits.
    pub fn record(&self, row: PendingRow) {
        if let Err(e) = self.queue.try_send(row) {
            tracing::debug!(error = %e, "telemetry row dropped");
        }
    }
}

async fn write_rows(db: Db, mut rows: mpsc::Receiver<PendingRow>) {
    let mut writer = None;
    let mut batch: Vec<ToolCallRow> = Vec::new();
    let mut pending: Vec<PendingRow> = Vec::new();
    // Ends when the recorder is dropped and every queued row is written.
    while rows.recv_many(&mut pending, MAX_TOOL_CALLS_PER_WRITE).await > 0 {
        batch.extend(pending.drain(..).map(|p| {
            let mut row = p.row;
            if let Some(text) = p.count_text {
                row.response_tokens = crate::call::tokens::count(&text);
            }
            row
        }));
        let mut wait = BUSY_RETRY_FIRST;
        loop {
            if writer.is_none() {
                match db.telemetry_writer().await {
                    Ok(w) => writer = Some(w),
                    Err(e) => {
                        tracing::debug!(error = %format!("{e:#}"), "telemetry rows not written");
                        break;
                    }
                }
            }
            let Some(w) = &writer else { break };
            match w.write(&batch).await {
                Ok(()) => break,
                Err(TelemetryWriteError::Busy) => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(BUSY_RETRY_MAX);
                }
                Err(TelemetryWriteError::Failed(e)) => {
                    tracing::debug!(error = %format!("{e:#}"), "telemetry rows not written");
                    writer = None;
                    break;
                }
            }
        }
        batch.clear();
    }
}
