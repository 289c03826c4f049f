//! Measured usage: one row per tool call (never arguments or answers), and the per-tool
//! aggregates `get_token_savings_metrics` and `scryer report` show.

use anyhow::{Context, Result};

use crate::{Db, col, int, text};

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS tool_call (
        id INTEGER PRIMARY KEY,
        at_ms INTEGER NOT NULL,
        session TEXT NOT NULL,
        project_id INTEGER,
        tool TEXT NOT NULL,
        response_tokens INTEGER NOT NULL,
        truncated INTEGER NOT NULL,
        latency_ms INTEGER NOT NULL,
        is_error INTEGER NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS tool_call_by_time ON tool_call (at_ms)",
];

/// One tool call as measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallRow {
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// An opaque session id (process + session number), for follow-up rates.
    pub session: String,
    pub project_id: Option<i64>,
    pub tool: String,
    pub response_tokens: u32,
    /// Cut at the budget, or a page of something larger.
    pub truncated: bool,
    pub latency_ms: u32,
    pub is_error: bool,
}

/// Rows written in one statement at most (8 parameters each).
pub const MAX_TOOL_CALLS_PER_WRITE: usize = 256;

/// Writes tool-call rows on its own connection; see [`Db::telemetry_writer`].
pub struct TelemetryWriter {
    conn: turso::Connection,
}

/// Why a write of tool-call rows did not happen.
#[derive(Debug)]
pub enum TelemetryWriteError {
    /// Another connection holds the write lock: try again later.
    Busy,
    Failed(anyhow::Error),
}

impl TelemetryWriter {
    /// Writes `rows` (at most [`MAX_TOOL_CALLS_PER_WRITE`]) in one statement, or none.
    pub async fn write(&self, rows: &[ToolCallRow]) -> Result<(), TelemetryWriteError> {
        insert_tool_calls(&self.conn, rows)
            .await
            .map_err(|e| match e {
                turso::Error::Busy(_) | turso::Error::BusySnapshot(_) => TelemetryWriteError::Busy,
                other => TelemetryWriteError::Failed(other.into()),
            })
    }
}

/// One multi-row INSERT: atomic without an explicit transaction.
async fn insert_tool_calls(conn: &turso::Connection, rows: &[ToolCallRow]) -> turso::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let placeholders: Vec<String> = (0..rows.len())
        .map(|i| {
            let p: Vec<String> = (1..=8).map(|k| format!("?{}", i * 8 + k)).collect();
            format!("({})", p.join(", "))
        })
        .collect();
    let sql = format!(
        "INSERT INTO tool_call (at_ms, session, project_id, tool, response_tokens, truncated, latency_ms, is_error) VALUES {}",
        placeholders.join(", ")
    );
    let mut params = Vec::with_capacity(rows.len() * 8);
    for c in rows {
        params.extend([
            turso::Value::Integer(c.at_ms),
            turso::Value::Text(c.session.clone()),
            c.project_id
                .map_or(turso::Value::Null, turso::Value::Integer),
            turso::Value::Text(c.tool.clone()),
            turso::Value::Integer(i64::from(c.response_tokens)),
            turso::Value::Integer(i64::from(c.truncated)),
            turso::Value::Integer(i64::from(c.latency_ms)),
            turso::Value::Integer(i64::from(c.is_error)),
        ]);
    }
    // Kept prepared: at most MAX_TOOL_CALLS_PER_WRITE shapes, on the writer's one
    // connection.
    conn.prepare_cached(&sql).await?.execute(params).await?;
    Ok(())
}

/// Usage of one tool over a window; serialized as is in the daemon's `usage` answer.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ToolUsageRow {
    pub tool: String,
    pub calls: u32,
    pub errors: u32,
    pub tokens_mean: u32,
    pub tokens_p95: u32,
    pub truncated: u32,
    pub latency_p50_ms: u32,
    pub latency_p95_ms: u32,
    /// Calls followed by another call in the same session.
    pub followed_up: u32,
}

impl ToolUsageRow {
    /// `n` of this tool's calls as a percentage with one decimal (what
    /// `get_token_savings_metrics` and `scryer report` show as rates).
    pub fn pct(&self, n: u32) -> f64 {
        (f64::from(n) * 1000.0 / f64::from(self.calls.max(1))).round() / 10.0
    }
}

/// The `q`-quantile (0..=1) of sorted values, nearest rank.
fn quantile(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Aggregates calls (in time order) per tool, sorted by call count.
pub fn aggregate(calls: &[ToolCallRow]) -> Vec<ToolUsageRow> {
    use std::collections::HashMap;
    // A call is followed up when the same session made another call after it.
    let mut last_in_session: HashMap<&str, usize> = HashMap::new();
    for (i, c) in calls.iter().enumerate() {
        last_in_session.insert(c.session.as_str(), i);
    }
    let mut per_tool: HashMap<&str, Vec<(usize, &ToolCallRow)>> = HashMap::new();
    for (i, c) in calls.iter().enumerate() {
        per_tool.entry(c.tool.as_str()).or_default().push((i, c));
    }
    let mut out: Vec<ToolUsageRow> = per_tool
        .into_iter()
        .map(|(tool, rows)| {
            let mut tokens: Vec<u32> = rows.iter().map(|(_, c)| c.response_tokens).collect();
            let mut latency: Vec<u32> = rows.iter().map(|(_, c)| c.latency_ms).collect();
            tokens.sort_unstable();
            latency.sort_unstable();
            let n = rows.len() as u64;
            ToolUsageRow {
                tool: tool.to_string(),
                calls: rows.len() as u32,
                errors: rows.iter().filter(|(_, c)| c.is_error).count() as u32,
                tokens_mean: (tokens.iter().map(|&t| u64::from(t)).sum::<u64>() / n.max(1)) as u32,
                tokens_p95: quantile(&tokens, 0.95),
                truncated: rows.iter().filter(|(_, c)| c.truncated).count() as u32,
                latency_p50_ms: quantile(&latency, 0.50),
                latency_p95_ms: quantile(&latency, 0.95),
                followed_up: rows
                    .iter()
                    .filter(|(i, c)| last_in_session.get(c.session.as_str()) != Some(i))
                    .count() as u32,
            }
        })
        .collect();
    out.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.tool.cmp(&b.tool)));
    out
}

impl Db {
    /// Usage per tool of the calls since `since_ms` (all when `None`), for one project or
    /// all: the one aggregation `get_token_savings_metrics` and `scryer report` share.
    pub async fn tool_usage(
        &self,
        project_id: Option<i64>,
        since_ms: Option<i64>,
    ) -> Result<Vec<ToolUsageRow>> {
        Ok(aggregate(&self.tool_calls(project_id, since_ms).await?))
    }

    pub async fn record_tool_call(&self, c: &ToolCallRow) -> Result<()> {
        let conn = self.connect().await?;
        insert_tool_calls(&conn, std::slice::from_ref(c)).await?;
        Ok(())
    }

    /// A connection for [`TelemetryWriter::write`]: one writer keeps it for its life.
    pub async fn telemetry_writer(&self) -> Result<TelemetryWriter> {
        let conn = self.connect().await?;
        // A turso statement waiting out a busy lock re-polls at once until the timeout
        // (measured: up to 100 ms of a core per row while another write committed).
        // The writer sleeps between attempts instead, so it asks not to wait here.
        conn.busy_timeout(std::time::Duration::ZERO)?;
        // Its commits wait for no fsync (ADR 0053). Under load the writer committed a
        // few rows every few milliseconds, each with an fsync of the log on a tokio
        // worker: 5.8% of the daemon's CPU and a worker stalled each time. A log frame
        // not yet on disk when the machine loses power is dropped whole at recovery
        // (the frames are checksummed), so the database stays consistent; only the last
        // rows of usage telemetry can be lost, never an index or a decision. Every
        // other connection keeps turso's default, FULL.
        conn.pragma_update("synchronous", "NORMAL")
            .await
            .context("setting synchronous for the telemetry writer")?;
        Ok(TelemetryWriter { conn })
    }
    /// Calls since `since_ms` (all when `None`), for one project or all, in time order.
    pub async fn tool_calls(
        &self,
        project_id: Option<i64>,
        since_ms: Option<i64>,
    ) -> Result<Vec<ToolCallRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT at_ms, session, project_id, tool, response_tokens, truncated, latency_ms, is_error \
                 FROM tool_call WHERE at_ms >= ?1 AND (?2 IS NULL OR project_id = ?2) ORDER BY at_ms, id",
                vec![
                    turso::Value::Integer(since_ms.unwrap_or(0)),
                    project_id.map_or(turso::Value::Null, turso::Value::Integer),
                ],
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(ToolCallRow {
                at_ms: int(col(&row, 0)?).unwrap_or(0),
                session: text(col(&row, 1)?).unwrap_or_default(),
                project_id: int(col(&row, 2)?),
                tool: text(col(&row, 3)?).unwrap_or_default(),
                response_tokens: int(col(&row, 4)?).unwrap_or(0) as u32,
                truncated: int(col(&row, 5)?).unwrap_or(0) != 0,
                latency_ms: int(col(&row, 6)?).unwrap_or(0) as u32,
                is_error: int(col(&row, 7)?).unwrap_or(0) != 0,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(at: i64, session: &str, tool: &str, tokens: u32, ms: u32) -> ToolCallRow {
        ToolCallRow {
            at_ms: at,
            session: session.into(),
            project_id: Some(1),
            tool: tool.into(),
            response_tokens: tokens,
            truncated: tokens > 900,
            latency_ms: ms,
            is_error: false,
        }
    }

    #[test]
    fn usage_aggregates_per_tool_with_follow_ups_per_session() {
        let calls = vec![
            call(1, "s1", "find_references", 100, 5),
            call(2, "s2", "find_references", 1000, 20),
            call(3, "s1", "get_file_outline", 300, 7),
            call(4, "s1", "find_references", 200, 9),
        ];
        let usage = aggregate(&calls);
        assert_eq!(usage[0].tool, "find_references");
        assert_eq!(usage[0].calls, 3);
        assert_eq!(usage[0].tokens_mean, 433);
        assert_eq!(usage[0].tokens_p95, 1000);
        assert_eq!(usage[0].truncated, 1);
        assert_eq!(usage[0].latency_p50_ms, 9);
        // s1's first call was followed; s2's only call and s1's last were not.
        assert_eq!(usage[0].followed_up, 1);
        assert_eq!(usage[1].followed_up, 1);
    }

    #[test]
    fn errors_quantiles_and_rates_per_tool() {
        // Twenty calls with latencies 1..=20 ms in one session; every fifth one failed.
        let calls: Vec<ToolCallRow> = (1..=20)
            .map(|i| {
                let mut c = call(i64::from(i), "s", "search_symbols", i * 10, i);
                c.is_error = i % 5 == 0;
                c
            })
            .collect();
        let usage = aggregate(&calls);
        assert_eq!(usage.len(), 1);
        let u = &usage[0];
        assert_eq!(u.errors, 4);
        // Nearest rank: p50 of 1..=20 is the 10th value, p95 the 19th.
        assert_eq!(u.latency_p50_ms, 10);
        assert_eq!(u.latency_p95_ms, 19);
        assert_eq!(u.tokens_p95, 190);
        assert_eq!(u.tokens_mean, 105);
        // Only the session's last call has nothing after it.
        assert_eq!(u.followed_up, 19);
        assert_eq!(u.pct(u.followed_up), 95.0);
        assert_eq!(u.pct(u.errors), 20.0);
        assert!(aggregate(&[]).is_empty());
    }

    #[test]
    fn rates_round_to_one_decimal_and_survive_zero_calls() {
        let u = ToolUsageRow {
            calls: 3,
            ..Default::default()
        };
        assert_eq!(u.pct(1), 33.3);
        assert_eq!(u.pct(2), 66.7);
        assert_eq!(ToolUsageRow::default().pct(0), 0.0);
    }

    /// The telemetry writer commits without waiting for an fsync; every other
    /// connection still waits for one. Its rows are read back like any others.
    #[tokio::test]
    async fn only_the_telemetry_writer_commits_without_an_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let synchronous = async |conn: &turso::Connection| {
            let mut rows = conn.query("PRAGMA synchronous", ()).await.unwrap();
            let row = rows.next().await.unwrap().unwrap();
            int(col(&row, 0).unwrap())
        };
        let writer = db.telemetry_writer().await.unwrap();
        assert_eq!(synchronous(&writer.conn).await, Some(1), "NORMAL");
        assert_eq!(
            synchronous(&db.connect().await.unwrap()).await,
            Some(2),
            "FULL"
        );
        writer
            .write(&[call(10, "s", "a", 1, 1), call(20, "s", "b", 2, 2)])
            .await
            .unwrap();
        assert_eq!(db.tool_calls(None, None).await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn usage_is_the_aggregate_of_the_stored_window() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        for c in [
            call(10, "s", "a", 1, 1),
            call(20, "s", "b", 2, 2),
            call(30, "t", "a", 3, 3),
        ] {
            db.record_tool_call(&c).await.unwrap();
        }
        let all = db.tool_usage(None, None).await.unwrap();
        assert_eq!(all, aggregate(&db.tool_calls(None, None).await.unwrap()));
        assert_eq!((all[0].tool.as_str(), all[0].calls), ("a", 2));
        let late = db.tool_usage(None, Some(15)).await.unwrap();
        assert_eq!(late.len(), 2);
        assert!(late.iter().all(|u| u.calls == 1));
    }

    #[tokio::test]
    async fn calls_round_trip_and_filter_by_time_and_project() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        db.record_tool_call(&call(10, "s", "a", 1, 1))
            .await
            .unwrap();
        let mut other = call(20, "s", "b", 2, 2);
        other.project_id = None;
        db.record_tool_call(&other).await.unwrap();
        assert_eq!(db.tool_calls(None, None).await.unwrap().len(), 2);
        assert_eq!(db.tool_calls(None, Some(15)).await.unwrap()[0].tool, "b");
        assert_eq!(db.tool_calls(Some(1), None).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn the_writer_writes_batches_and_says_busy_instead_of_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let writer = db.telemetry_writer().await.unwrap();
        let batch: Vec<ToolCallRow> = (0..MAX_TOOL_CALLS_PER_WRITE as i64)
            .map(|i| call(i, "s", "a", i as u32, 1))
            .collect();
        writer.write(&batch).await.unwrap();
        assert_eq!(db.tool_calls(None, None).await.unwrap(), batch);

        // Another connection holds the write lock: the writer returns at once.
        let other = db.connect().await.unwrap();
        other.execute("BEGIN IMMEDIATE", ()).await.unwrap();
        let started = std::time::Instant::now();
        let late = [call(1000, "s", "b", 1, 1)];
        assert!(matches!(
            writer.write(&late).await,
            Err(TelemetryWriteError::Busy)
        ));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        other.execute("COMMIT", ()).await.unwrap();
        writer.write(&late).await.unwrap();
        assert_eq!(db.tool_calls(None, Some(1000)).await.unwrap(), late);
    }
}
