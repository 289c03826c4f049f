//! `scryer daemon run|status|stop`: the process that owns a database and serves the
//! sessions of `scryer serve` over a Unix socket (ADR 0005). Also `scryer index`, which
//! asks that daemon to index when it runs (it holds the database).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use scryer_server::daemon::{self, Hello, IndexReply, Op, RunPaths, Status};

/// Default time a daemon stays up with no session.
const DEFAULT_IDLE: Duration = Duration::from_secs(600);

#[derive(Subcommand)]
pub enum DaemonCommand {
    /// Run the daemon in the foreground (what `scryer serve` starts in the background).
    Run,
    /// Show the running daemon: pid, socket, uptime, sessions.
    Status,
    /// Ask the running daemon to exit, and wait until it has.
    Stop,
}

/// `SCRYER_DAEMON_IDLE`: seconds without sessions before the daemon exits.
fn idle_time() -> Result<Duration> {
    match std::env::var("SCRYER_DAEMON_IDLE") {
        Err(_) => Ok(DEFAULT_IDLE),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| *s > 0.0 && s.is_finite())
            .map(Duration::from_secs_f64)
            .with_context(|| {
                format!("SCRYER_DAEMON_IDLE={v:?}: accepted is a number of seconds above 0")
            }),
    }
}

fn print_status(s: &Status) {
    println!("pid      {}", s.pid);
    println!("socket   {}", s.socket.display());
    println!("database {}", s.db.display());
    println!("build    {}", s.build);
    println!("uptime   {}", human(s.uptime_s));
    println!(
        "sessions {} now, {} since start",
        s.sessions, s.sessions_total
    );
    if s.idle_exit_s == 0 {
        println!("idle     never exits (serving HTTP in the foreground)");
    } else {
        println!(
            "idle     exits after {} without sessions",
            human(s.idle_exit_s)
        );
    }
    if let Some(url) = &s.http {
        println!(
            "http     {url}, {} now",
            plural(s.http_sessions, "session", "sessions")
        );
    }
}

/// `1 session`, `2 sessions`.
fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

pub(crate) fn human(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

pub async fn run(cli: &crate::Cli, db: &Path, command: &DaemonCommand) -> Result<()> {
    let paths = RunPaths::for_db(db)?;
    match command {
        DaemonCommand::Run => {
            let idle = idle_time()?;
            eprintln!(
                "scryer daemon {}: pid {}, database {}, socket {}",
                daemon::build_id(),
                std::process::id(),
                paths.db.display(),
                paths.socket.display()
            );
            let exit = daemon::run(paths, idle, crate::build_server(cli, &[], true)).await?;
            eprintln!("scryer daemon {}: exiting ({exit:?})", std::process::id());
            // Index runs and the watcher may still hold blocking threads; the database
            // is consistent after every transaction, so the process need not wait.
            std::process::exit(0);
        }
        DaemonCommand::Status => match daemon::request(&paths, Op::Status).await? {
            Some(reply) => match (reply.ok, reply.status) {
                (true, Some(status)) => {
                    print_status(&status);
                    Ok(())
                }
                _ => bail!(
                    "the daemon at {} refused: {}",
                    paths.socket.display(),
                    reply.error.unwrap_or_default()
                ),
            },
            None => bail!(
                "no scryer daemon is running for {} (socket {}); `scryer serve` starts one",
                paths.db.display(),
                paths.socket.display()
            ),
        },
        DaemonCommand::Stop => {
            let Some(reply) = daemon::request(&paths, Op::Stop).await? else {
                println!("no scryer daemon is running for {}", paths.db.display());
                return Ok(());
            };
            let pid = reply.status.map(|s| s.pid);
            let until = Instant::now() + Duration::from_secs(30);
            while daemon::lock_holder_alive(&paths).is_some() {
                if Instant::now() > until {
                    bail!(
                        "the daemon (pid {}) did not exit within 30 s",
                        pid.map_or("?".into(), |p| p.to_string())
                    );
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            println!(
                "stopped the scryer daemon (pid {}) for {}",
                pid.map_or("?".into(), |p| p.to_string()),
                paths.db.display()
            );
            Ok(())
        }
    }
}

/// `scryer index <dir>`: through the database's daemon when one runs (turso lets one
/// process open the database), else in this process.
pub async fn index(cli: &crate::Cli, path: &Path) -> Result<()> {
    let root = std::fs::canonicalize(path)
        .with_context(|| format!("{}: accepted is an existing directory", path.display()))?;
    if !root.is_dir() {
        bail!(
            "{} is not a directory; accepted is a project's root directory",
            root.display()
        );
    }
    let db = cli.db.clone().unwrap_or_else(crate::default_db);
    let p = match index_via_daemon(&db, &root).await? {
        Some(p) => p,
        None => {
            let server = crate::build_index_server(cli).await?;
            let mut line = crate::progress::Line::on_stderr();
            let p = server
                .index_path_watching(&root, |done, total| line.tick(done, total))
                .await?;
            line.finish();
            server.seal_at_exit().await;
            IndexReply {
                slug: p.slug,
                root: p.root,
                last_index_ms: p.last_index_ms,
                last_error: p.last_error,
            }
        }
    };
    match &p.last_error {
        Some(e) => bail!("indexing {} failed: {e}", p.root),
        None => {
            println!(
                "{}: indexed {} in {} ms",
                p.slug,
                p.root,
                p.last_index_ms.unwrap_or_default()
            );
            Ok(())
        }
    }
}

/// Asks the running daemon of `db` to index `root` (absolute) and waits for the run;
/// `None` when no daemon runs.
async fn index_via_daemon(db: &Path, root: &Path) -> Result<Option<IndexReply>> {
    if !db.exists() {
        return Ok(None);
    }
    let paths = RunPaths::for_db(db)?;
    let hello = Hello {
        scryer: daemon::PROTOCOL,
        op: Op::Index,
        path: Some(root.to_path_buf()),
        ..Hello::default()
    };
    // An index run of a large tree takes minutes; the daemon answers when it ends.
    let Some(reply) = daemon::ask(&paths, &hello, Duration::from_secs(24 * 3600)).await? else {
        return Ok(None);
    };
    match (reply.ok, reply.indexed) {
        (true, Some(p)) => Ok(Some(p)),
        _ => bail!(
            "the scryer daemon holding {} did not index {}: {}",
            paths.db.display(),
            root.display(),
            reply.error.unwrap_or_default()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(human(42), "42s");
        assert_eq!(human(600), "10m00s");
        assert_eq!(human(7325), "2h02m");
        assert_eq!(plural(1, "session", "sessions"), "1 session");
        assert_eq!(plural(0, "session", "sessions"), "0 sessions");
    }
}
