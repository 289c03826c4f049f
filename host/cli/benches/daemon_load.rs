//! Load through the daemon: N concurrent `scryer serve` sessions (real processes, rmcp
//! clients) × M tool calls each against one indexed project; errors, latency
//! percentiles, and the daemon's resident memory.
//!
//!   cargo bench -p scryer --bench daemon_load -- [PROJECT_DIR] [SESSIONS] [CALLS]
//!
//! `SCRYER_BENCH_BIN=<path>` loads another build instead of this one's.
//!
//! Defaults: the tokio corpus (~/.cache/scryer-eval/corpus/tokio, else this
//! repository), 32 sessions, 300 calls each. The project is indexed first with
//! `scryer index`; every session's cwd is the project, so the cwd tier of the context
//! cascade picks it. The daemon gets its own database and run directory.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

/// The binary under load: this build's, or `SCRYER_BENCH_BIN` (another build, to run
/// side by side with this one).
fn scryer() -> PathBuf {
    std::env::var_os("SCRYER_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_scryer")))
}

/// The calls a session cycles through: the everyday read tools on real names.
fn workload(project: &Path) -> Vec<(&'static str, Value)> {
    let file = ["src/runtime/mod.rs", "src/lib.rs", "host/server/src/lib.rs"]
        .into_iter()
        .find(|f| project.join(f).is_file())
        .unwrap_or("src/lib.rs");
    let (sym_a, sym_b) = if project.join("src/runtime").is_dir() {
        ("spawn_blocking", "JoinHandle")
    } else {
        ("open_session", "Server")
    };
    vec![
        ("search_symbols", json!({"query": "spawn task"})),
        ("resolve_definition", json!({"symbol": sym_a})),
        ("get_file_outline", json!({"file_path": file})),
        (
            "find_references",
            json!({"symbol": sym_b, "max_tokens": 800}),
        ),
        ("inspect_symbol", json!({"symbol": sym_a})),
        ("get_indexing_status", json!({})),
    ]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn proc_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        l.strip_prefix(key)?
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    })
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let home = std::env::var("HOME").unwrap_or_default();
    let project = args.first().map(PathBuf::from).unwrap_or_else(|| {
        let tokio = PathBuf::from(&home).join(".cache/scryer-eval/corpus/tokio");
        if tokio.is_dir() {
            tokio
        } else {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
        }
    });
    let project = project.canonicalize()?;
    let sessions: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(32);
    let calls: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);

    let state = tempfile::Builder::new().prefix("scryer-load-").tempdir()?;
    let db = state.path().join("index.db");
    let run_dir = state.path().join("run");
    let cache = std::env::var_os("SCRYER_COMPILE_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| state.path().join("compiled"));
    let vars = [
        ("SCRYER_RUN_DIR", run_dir.display().to_string()),
        ("SCRYER_DAEMON_IDLE", "30".to_string()),
        ("SCRYER_LOG", "warn".to_string()),
        ("SCRYER_TELEMETRY", "on".to_string()),
    ];

    let started = Instant::now();
    let out = std::process::Command::new(scryer())
        .arg("--db")
        .arg(&db)
        .arg("--compile-cache")
        .arg(&cache)
        .arg("index")
        .arg(&project)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "indexing failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "indexed {} in {:.1} s: {}",
        project.display(),
        started.elapsed().as_secs_f64(),
        String::from_utf8_lossy(&out.stdout).trim()
    );

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let work = workload(&project);
    let (latencies, errors, daemon_pid, wall) = rt.block_on(async {
        // Sessions connect at once: the first starts the daemon, the rest find it.
        let mut clients = Vec::new();
        for _ in 0..sessions {
            let transport =
                TokioChildProcess::new(tokio::process::Command::new(scryer()).configure(|cmd| {
                    cmd.arg("--db")
                        .arg(&db)
                        .arg("--compile-cache")
                        .arg(&cache)
                        .arg("serve")
                        .current_dir(&project);
                    for (k, v) in &vars {
                        cmd.env(k, v);
                    }
                }))?;
            clients.push(tokio::spawn(async move { ().serve(transport).await }));
        }
        let mut connected = Vec::new();
        for c in clients {
            connected.push(c.await??);
        }
        let pid: Option<u32> = std::fs::read_dir(&run_dir)?
            .filter_map(|e| e.ok())
            .find(|e| e.path().extension().is_some_and(|x| x == "lock"))
            .and_then(|e| std::fs::read_to_string(e.path()).ok())
            .and_then(|t| t.trim().parse().ok());
        let began = Instant::now();
        let mut tasks = Vec::new();
        for (n, client) in connected.into_iter().enumerate() {
            let work = work.clone();
            tasks.push(tokio::spawn(async move {
                let mut lat = Vec::with_capacity(calls);
                let mut errors: Vec<String> = Vec::new();
                for i in 0..calls {
                    let k = (n + i) % work.len();
                    let (tool, args) = &work[k];
                    let args: JsonObject = args.as_object().cloned().unwrap_or_default();
                    let t = Instant::now();
                    let r = client
                        .call_tool(CallToolRequestParams::new(*tool).with_arguments(args))
                        .await;
                    lat.push((k, t.elapsed()));
                    match r {
                        Ok(r) if r.is_error == Some(true) => errors.push(format!(
                            "{tool}: {}",
                            r.content
                                .iter()
                                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                                .collect::<String>()
                        )),
                        Ok(_) => {}
                        Err(e) => errors.push(format!("{tool}: protocol error {e}")),
                    }
                }
                let _ = client.cancel().await;
                (lat, errors)
            }));
        }
        let mut all = Vec::new();
        let mut errors = Vec::new();
        for t in tasks {
            let (lat, errs) = t.await?;
            all.extend(lat);
            errors.extend(errs);
        }
        anyhow::Ok((all, errors, pid, began.elapsed()))
    })?;

    let per_tool = latencies;
    let mut sorted: Vec<Duration> = per_tool.iter().map(|(_, d)| *d).collect();
    sorted.sort();
    let total = sorted.len();
    println!("project   {}", project.display());
    println!(
        "sessions  {sessions} × {calls} calls = {total} calls in {:.1} s ({:.0} calls/s)",
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64()
    );
    println!("errors    {}", errors.len());
    for e in errors.iter().take(5) {
        println!("  {}", e.chars().take(200).collect::<String>());
    }
    println!(
        "latency   p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(&sorted, 0.50).as_secs_f64() * 1e3,
        percentile(&sorted, 0.90).as_secs_f64() * 1e3,
        percentile(&sorted, 0.99).as_secs_f64() * 1e3,
        sorted.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
    );
    for (k, (tool, _)) in work.iter().enumerate() {
        let mut mine: Vec<Duration> = per_tool
            .iter()
            .filter(|(i, _)| *i == k)
            .map(|(_, d)| *d)
            .collect();
        mine.sort();
        println!(
            "  {tool:<20} p50 {:>7.1} ms  p99 {:>7.1} ms",
            percentile(&mine, 0.50).as_secs_f64() * 1e3,
            percentile(&mine, 0.99).as_secs_f64() * 1e3,
        );
    }
    if let Some(pid) = daemon_pid {
        println!(
            "daemon    pid {pid}: RSS {} MiB now, peak {} MiB",
            proc_kib(pid, "VmRSS:").unwrap_or(0) / 1024,
            proc_kib(pid, "VmHWM:").unwrap_or(0) / 1024
        );
        // Leave no daemon behind.
        let _ = std::process::Command::new(scryer())
            .arg("--db")
            .arg(&db)
            .args(["daemon", "stop"])
            .env("SCRYER_RUN_DIR", &run_dir)
            .output();
    }
    Ok(())
}
