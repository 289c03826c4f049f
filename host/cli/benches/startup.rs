//! `scryer serve` start-up until it answers `tools/list`: cold (empty compile cache, so
//! both routers are compiled) against warm (cache filled), interleaved in one run.
//!
//!   cargo bench -p scryer --bench startup -- [PATH_TO_SCRYER] [RUNS]
//!
//! Defaults: the release binary next to this bench's target dir, 10 runs of each.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HANDSHAKE: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
];

/// Spawn, handshake, wait for the tools/list answer; returns the elapsed time.
fn start_once(bin: &Path, db: &Path, cache: &Path) -> Duration {
    let t = Instant::now();
    let mut child = Command::new(bin)
        .arg("--db")
        .arg(db)
        .arg("--compile-cache")
        .arg(cache)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn scryer");
    let mut stdin = child.stdin.take().unwrap();
    for line in HANDSHAKE {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("scryer exited before answering tools/list");
        }
        if line.contains(r#""id":2"#) {
            break;
        }
    }
    let elapsed = t.elapsed();
    drop(stdin);
    let _ = child.wait();
    elapsed
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let bin = args.first().map(PathBuf::from).unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.ancestors().nth(3).unwrap().join("release/scryer")
    });
    let runs: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    assert!(
        bin.is_file(),
        "{} not found: build it with cargo build --release -p scryer",
        bin.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let warm_cache = dir.path().join("warm");
    start_once(&bin, &dir.path().join("prime.db"), &warm_cache);
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let cold_cache = dir.path().join(format!("cold{i}"));
        cold.push(start_once(
            &bin,
            &dir.path().join(format!("c{i}.db")),
            &cold_cache,
        ));
        warm.push(start_once(
            &bin,
            &dir.path().join(format!("w{i}.db")),
            &warm_cache,
        ));
    }
    let (c, w) = (median(cold.clone()), median(warm.clone()));
    println!(
        "{} : start-up to tools/list answer, {runs} runs each (fresh database every run)",
        bin.display()
    );
    println!(
        "cold compile cache: median {c:?} (min {:?}, max {:?})",
        cold.iter().min().unwrap(),
        cold.iter().max().unwrap()
    );
    println!(
        "warm compile cache: median {w:?} (min {:?}, max {:?})",
        warm.iter().min().unwrap(),
        warm.iter().max().unwrap()
    );
    println!("cold/warm: {:.1}x", c.as_secs_f64() / w.as_secs_f64());
}
