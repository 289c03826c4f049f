//! Loading every plugin — the seven built-in routers and one installed plugin — with an
//! empty compile cache (cranelift compiles each) against a warm one (each is read back
//! and checked), interleaved in one run. Drives `scryer plugin list`, which loads
//! plugins exactly as `scryer serve` does and prints each one's load time.
//!
//!   cargo bench -p scryer --bench plugin_load -- [PATH_TO_SCRYER] [RUNS]
//!
//! Defaults: the release binary next to this bench's target dir, 10 runs of each.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One `scryer plugin list`: wall time and the sum of the per-plugin load times it
/// printed, with how many plugins were compiled and how many came from the cache.
struct Run {
    wall: Duration,
    plugins_ms: u64,
    compiled: usize,
    hits: usize,
}

fn list(bin: &Path, cache: &Path, config: &Path) -> Run {
    let t = Instant::now();
    let out = Command::new(bin)
        .arg("--compile-cache")
        .arg(cache)
        .arg("--config-dir")
        .arg(config)
        .args(["plugin", "list"])
        .env("SCRYER_LOG", "error")
        .output()
        .expect("run scryer plugin list");
    let wall = t.elapsed();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !text.contains("not loaded"),
        "scryer plugin list failed:\n{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut run = Run {
        wall,
        plugins_ms: 0,
        compiled: 0,
        hits: 0,
    };
    for line in text.lines() {
        // `name version: tools [grants] (how, N ms)`
        let Some(tail) = line.rsplit_once(", ").map(|(_, t)| t) else {
            continue;
        };
        if let Some(ms) = tail
            .strip_suffix(" ms)")
            .and_then(|n| n.parse::<u64>().ok())
        {
            run.plugins_ms += ms;
            if line.contains("(compiled") || line.contains("installed, compiled") {
                run.compiled += 1;
            } else if line.contains("cache hit") {
                run.hits += 1;
            }
        }
    }
    run
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn report(label: &str, runs: &[Run]) {
    let walls: Vec<Duration> = runs.iter().map(|r| r.wall).collect();
    let loads: Vec<Duration> = runs
        .iter()
        .map(|r| Duration::from_millis(r.plugins_ms))
        .collect();
    println!(
        "{label}: plugins' own load time median {:?} (min {:?}, max {:?}); whole command median {:?}; {} compiled, {} cache hits per run",
        median(loads.clone()),
        loads.iter().min().unwrap(),
        loads.iter().max().unwrap(),
        median(walls),
        runs[0].compiled,
        runs[0].hits
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let target = std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .to_path_buf();
    let bin = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("release/scryer"));
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    assert!(
        bin.is_file(),
        "{} not found: build it with cargo build --release -p scryer",
        bin.display()
    );
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let hostile = scryer_wasm_build::build_components(
        Path::new(env!("CARGO")),
        &workspace,
        &target.join("scryer-fixtures"),
        &["scryer-fixture-hostile"],
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .remove(0);

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    let add = Command::new(&bin)
        .arg("--compile-cache")
        .arg(dir.path().join("add-cache"))
        .arg("--config-dir")
        .arg(&config)
        .args(["plugin", "add"])
        .arg(&hostile)
        .args(["--grant", "tokens"])
        .output()
        .unwrap();
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let warm_cache = dir.path().join("warm");
    list(&bin, &warm_cache, &config);
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for i in 0..runs {
        cold.push(list(&bin, &dir.path().join(format!("cold{i}")), &config));
        warm.push(list(&bin, &warm_cache, &config));
    }
    println!(
        "{}: loading 7 built-in routers + 1 installed plugin, {runs} runs each, interleaved",
        bin.display()
    );
    report("cold compile cache", &cold);
    report("warm compile cache", &warm);
    let c = median(
        cold.iter()
            .map(|r| Duration::from_millis(r.plugins_ms))
            .collect(),
    );
    let w = median(
        warm.iter()
            .map(|r| Duration::from_millis(r.plugins_ms))
            .collect(),
    );
    println!(
        "cold/warm (plugins' load time): {:.1}x",
        c.as_secs_f64() / w.as_secs_f64().max(0.001)
    );
}
