//! `scryer report`: measured usage per tool, from the same aggregation
//! `get_token_savings_metrics` answers with (`Db::tool_usage`), as a table or JSON.
//!
//! turso lets one process open a database file. When the database's daemon runs, the
//! report asks it over its socket; otherwise it opens the file briefly, first looking
//! for a process holding the file's lock to name it instead of failing with turso's
//! bare locking error (an in-process `scryer serve --no-daemon`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use scryer_db::{Db, ToolUsageRow};
use scryer_server::daemon::{self, Hello, Op, RunPaths};
use serde_json::{Value, json};

/// A process holding the lock on a database file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Holder {
    pub pid: u32,
    /// Its command line, space-joined (empty when unreadable).
    pub command: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.command.is_empty() {
            write!(f, "process {}", self.pid)
        } else {
            write!(f, "process {} (`{}`)", self.pid, self.command)
        }
    }
}

/// The process holding a POSIX lock on `path` (turso's per-process lock), from
/// /proc/locks. `None` when the file is not locked or the platform has no /proc.
pub(crate) fn lock_holder(path: &Path) -> Option<Holder> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    let pid = holder_in_proc_locks(&locks, meta.dev(), meta.ino())?;
    if pid == std::process::id() {
        return None;
    }
    let command = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|part| !part.is_empty())
                .map(|part| String::from_utf8_lossy(part).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    Some(Holder { pid, command })
}

/// The pid of a lock on device `dev`, inode `ino` in the text of /proc/locks, whose lines
/// read `1: POSIX  ADVISORY  WRITE 4242 fd:01:123456 0 EOF` (device as hex major:minor).
fn holder_in_proc_locks(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    // glibc's gnu_dev_major / gnu_dev_minor.
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // A blocked waiter is listed as `1: -> POSIX ...`; only holders count.
        if fields.get(1) == Some(&"->") {
            return None;
        }
        let (pid, id) = (fields.get(4)?, fields.get(5)?);
        let mut parts = id.split(':');
        let maj = u64::from_str_radix(parts.next()?, 16).ok()?;
        let min = u64::from_str_radix(parts.next()?, 16).ok()?;
        let inode: u64 = parts.next()?.parse().ok()?;
        (maj == major && min == minor && inode == ino)
            .then(|| pid.parse().ok())
            .flatten()
    })
}

/// What to tell the user when `holder` has the database open.
pub(crate) fn held_message(db: &Path, holder: &Holder) -> String {
    let daemon = holder.command.contains(" daemon");
    let server = holder.command.contains(" serve");
    let what = if daemon {
        "the scryer daemon"
    } else if server {
        "a scryer server"
    } else {
        "another process"
    };
    let todo = if daemon {
        "stop it with `scryer daemon stop`, or ask a running session for get_token_savings_metrics"
    } else if server {
        "end that agent session, or ask it for get_token_savings_metrics"
    } else {
        "stop that process, or pass --db PATH for another database"
    };
    format!(
        "the database {} is held by {what}, {holder}: turso lets one process open a database file; {todo}",
        db.display()
    )
}

/// Opens an existing database, naming whoever holds it instead of a raw locking error.
/// `Ok(None)` when there is no database file yet.
pub(crate) async fn open_existing(db: &Path) -> Result<Option<Db>> {
    if !db.exists() {
        return Ok(None);
    }
    if let Some(holder) = lock_holder(db) {
        bail!(held_message(db, &holder));
    }
    match Db::open(db).await {
        Ok(db) => Ok(Some(db)),
        // The holder may have started between the look and the open.
        Err(e) => match lock_holder(db) {
            Some(holder) => bail!(held_message(db, &holder)),
            None => Err(e),
        },
    }
}

/// Parses `7d`, `24h`, `30m`, `90s` or `2w` into milliseconds.
pub(crate) fn parse_since(text: &str) -> Result<i64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit_ms: i64 = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => 0,
    };
    match digits.parse::<i64>() {
        Ok(n) if n > 0 && unit_ms > 0 && n <= 100 * 365 => Ok(n * unit_ms),
        _ => bail!(
            "--since {text:?}: accepted is a whole number (1 to 36500) and a unit, s, m, h, d or w: 90s, 30m, 24h, 7d, 2w"
        ),
    }
}

fn usage_json(u: &ToolUsageRow) -> Value {
    // The fields and rounding of get_token_savings_metrics, plus the error count.
    json!({
        "tool": u.tool,
        "calls": u.calls,
        "errors": u.errors,
        "tokens_mean": u.tokens_mean,
        "tokens_p95": u.tokens_p95,
        "truncated_pct": u.pct(u.truncated),
        "latency_p50_ms": u.latency_p50_ms,
        "latency_p95_ms": u.latency_p95_ms,
        "follow_up_pct": u.pct(u.followed_up),
    })
}

fn table(usage: &[ToolUsageRow]) -> String {
    let header = [
        "tool",
        "calls",
        "errors",
        "tokens mean",
        "tokens p95",
        "truncated",
        "latency p50",
        "latency p95",
        "follow-up",
    ];
    let rows: Vec<[String; 9]> = usage
        .iter()
        .map(|u| {
            [
                u.tool.clone(),
                u.calls.to_string(),
                u.errors.to_string(),
                u.tokens_mean.to_string(),
                u.tokens_p95.to_string(),
                format!("{:.1}%", u.pct(u.truncated)),
                format!("{} ms", u.latency_p50_ms),
                format!("{} ms", u.latency_p95_ms),
                format!("{:.1}%", u.pct(u.followed_up)),
            ]
        })
        .collect();
    let mut width = header.map(str::len);
    for row in &rows {
        for (w, cell) in width.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: Vec<&str>| -> String {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(width).enumerate() {
            if i == 0 {
                out.push_str(&format!("{cell:<w$}"));
            } else {
                out.push_str(&format!("  {cell:>w$}"));
            }
        }
        out.trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

pub(crate) struct ReportArgs {
    pub db: PathBuf,
    pub since: Option<String>,
    pub project: Option<String>,
    pub json: bool,
}

pub(crate) async fn run(args: ReportArgs) -> Result<()> {
    let since_ms = args.since.as_deref().map(parse_since).transpose()?;
    let window = match &args.since {
        Some(s) => format!("the last {s}"),
        None => "all recorded time".to_string(),
    };
    let (project, usage) = match from_daemon(&args, since_ms).await? {
        Some(found) => found,
        None => from_file(&args, since_ms).await?,
    };
    let calls: u32 = usage.iter().map(|u| u.calls).sum();
    let scope = match &project {
        Some(p) => format!("project {p}"),
        None => "all projects".to_string(),
    };
    let empty_note = if usage.is_empty() {
        Some(match (&project, &args.since) {
            (Some(p), _) => format!("no calls recorded for project `{p}` in {window}"),
            (None, Some(_)) => format!("no calls recorded in {window}"),
            (None, None) => {
                "no calls recorded yet (or telemetry is off: SCRYER_TELEMETRY=off)".to_string()
            }
        })
    } else {
        None
    };
    if args.json {
        let mut body = json!({
            "calls": calls,
            "tools": usage.iter().map(usage_json).collect::<Vec<_>>(),
            "notes": ["measured usage only: no savings estimate; rows hold no arguments or answers"],
        });
        if let Some(project) = &project {
            body["project"] = json!(project);
        }
        if let Some(ms) = since_ms {
            body["since_ms"] = json!(ms);
        }
        if let Some(note) = empty_note {
            body["notes"] = json!([note]);
        }
        println!("{body}");
        return Ok(());
    }
    println!(
        "usage {scope}, {window}: {calls} calls, {} tools",
        usage.len()
    );
    match empty_note {
        Some(note) => println!("{note}"),
        None => {
            print!("{}", table(&usage));
            println!(
                "truncated: answers cut at the budget or paged; follow-up: calls followed by another call in the same session"
            );
        }
    }
    Ok(())
}

/// The usage rows from the daemon holding the database (turso lets one process open
/// it); `None` when no daemon runs for it.
async fn from_daemon(
    args: &ReportArgs,
    since_ms: Option<i64>,
) -> Result<Option<(Option<String>, Vec<ToolUsageRow>)>> {
    if !args.db.exists() {
        return Ok(None);
    }
    let paths = RunPaths::for_db(&args.db)?;
    let hello = Hello {
        scryer: daemon::PROTOCOL,
        op: Op::Usage,
        project: args.project.clone(),
        since_ms,
        ..Hello::default()
    };
    let Some(reply) = daemon::ask(&paths, &hello, Duration::from_secs(60)).await? else {
        return Ok(None);
    };
    match (reply.ok, reply.usage) {
        (true, Some(u)) => Ok(Some((u.project, u.tools))),
        _ => {
            let why = reply.error.unwrap_or_default();
            match &args.project {
                Some(sel) if why.starts_with("unknown project") => {
                    bail!("--project {sel:?}: {why}")
                }
                _ => bail!(
                    "the scryer daemon holding {} did not answer the report: {why}",
                    args.db.display()
                ),
            }
        }
    }
}

/// The usage rows read from the database file itself (no daemon holds it).
async fn from_file(
    args: &ReportArgs,
    since_ms: Option<i64>,
) -> Result<(Option<String>, Vec<ToolUsageRow>)> {
    let Some(db) = open_existing(&args.db).await? else {
        bail!(
            "no database at {}: nothing is recorded yet; `scryer serve` creates it (or pass --db PATH)",
            args.db.display()
        );
    };
    let project = match &args.project {
        None => None,
        Some(sel) => match db.project_by_selector(sel).await? {
            Some(p) => Some(p),
            None => {
                let known: Vec<String> = db.projects().await?.into_iter().map(|p| p.slug).collect();
                if known.is_empty() {
                    bail!(
                        "--project {sel:?}: no project is registered in {}",
                        args.db.display()
                    );
                }
                bail!(
                    "--project {sel:?}: accepted are a registered slug, id or root path; registered: {}",
                    known.join(", ")
                );
            }
        },
    };
    let since_at = since_ms.map(|ms| scryer_server::telemetry::now_ms() - ms);
    let usage = db
        .tool_usage(project.as_ref().map(|p| p.id), since_at)
        .await
        .context("reading usage rows")?;
    Ok((project.map(|p| p.slug), usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_number_and_a_unit() {
        assert_eq!(parse_since("7d").unwrap(), 7 * 86_400_000);
        assert_eq!(parse_since("24h").unwrap(), 86_400_000);
        assert_eq!(parse_since("30m").unwrap(), 1_800_000);
        assert_eq!(parse_since(" 90s ").unwrap(), 90_000);
        assert_eq!(parse_since("2w").unwrap(), 14 * 86_400_000);
        for bad in ["", "7", "d", "0h", "-1d", "1.5h", "7 days", "7D"] {
            let e = parse_since(bad).unwrap_err().to_string();
            assert!(
                e.contains("24h") && e.contains(&format!("{bad:?}")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_lock_is_found_by_device_and_inode() {
        let locks = "1: POSIX  ADVISORY  WRITE 4242 fd:01:123456 0 EOF\n\
                     1: -> POSIX  ADVISORY  WRITE 5151 fd:01:123456 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 77 08:02:99 0 EOF\n";
        // Device fd:01 is major 0xfd, minor 1.
        let dev = (0xfd << 8) | 1;
        assert_eq!(holder_in_proc_locks(locks, dev, 123456), Some(4242));
        assert_eq!(holder_in_proc_locks(locks, (8 << 8) | 2, 99), Some(77));
        assert_eq!(holder_in_proc_locks(locks, dev, 99), None);
        assert_eq!(holder_in_proc_locks("", dev, 123456), None);
    }

    #[test]
    fn the_message_names_the_holder_and_what_to_do() {
        let holder = Holder {
            pid: 42,
            command: "/usr/bin/scryer daemon run".into(),
        };
        let m = held_message(Path::new("/d/index.db"), &holder);
        assert!(m.contains("/d/index.db") && m.contains("process 42"), "{m}");
        assert!(m.contains("scryer daemon stop"), "{m}");
        let serve = Holder {
            pid: 7,
            command: "scryer --db x serve".into(),
        };
        assert!(held_message(Path::new("x"), &serve).contains("a scryer server"));
    }

    #[test]
    fn the_table_aligns_every_column() {
        let usage = vec![
            ToolUsageRow {
                tool: "find_references".into(),
                calls: 3,
                errors: 1,
                tokens_mean: 433,
                tokens_p95: 1000,
                truncated: 1,
                latency_p50_ms: 9,
                latency_p95_ms: 20,
                followed_up: 2,
            },
            ToolUsageRow {
                tool: "list_projects".into(),
                calls: 1,
                ..Default::default()
            },
        ];
        let t = table(&usage);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("tool") && lines[0].ends_with("follow-up"));
        assert!(lines[1].starts_with("find_references"), "{t}");
        assert!(
            lines[1].contains("33.3%") && lines[1].ends_with("66.7%"),
            "{t}"
        );
        // Right-aligned numbers end in the same column.
        assert_eq!(lines[1].len(), lines[2].len(), "{t}");
    }
}
