//! `scryer serve` start-up until it answers `initialize` and `tools/list`: cold (empty
//! compile cache, no daemon running) against warm (cache filled), interleaved in one run,
//! optionally for a second binary too (A B A B …), so machine noise hits every column.
//!
//!   cargo bench -p scryer --bench startup -- [PATH_TO_SCRYER] [RUNS] [PATH_TO_OTHER_SCRYER]
//!
//! Defaults: the release binary next to this bench's target dir, 10 runs of each. Every
//! run starts a new daemon on a fresh database (and stops it afterwards), so "no daemon
//! running" holds for each start.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const HANDSHAKE: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
];

/// When `initialize` and `tools/list` were answered, from the spawn.
struct Start {
    initialize: Duration,
    tools_list: Duration,
}

/// Spawn, handshake, wait for the tools/list answer; then stop the daemon it started.
fn start_once(bin: &Path, db: &Path, cache: &Path) -> Start {
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
    let mut initialize = None;
    let tools_list = loop {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("scryer exited before answering tools/list");
        }
        if line.contains(r#""id":1"#) && initialize.is_none() {
            initialize = Some(t.elapsed());
        }
        if line.contains(r#""id":2"#) {
            break t.elapsed();
        }
    };
    drop(stdin);
    let _ = child.wait();
    let _ = Command::new(bin)
        .arg("--db")
        .arg(db)
        .args(["daemon", "stop"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    Start {
        initialize: initialize.expect("initialize answered before tools/list"),
        tools_list,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One binary's runs: cold and warm starts.
struct Column {
    bin: PathBuf,
    warm_cache: PathBuf,
    cold: Vec<Start>,
    warm: Vec<Start>,
}

impl Column {
    fn new(bin: PathBuf, dir: &Path, tag: &str) -> Column {
        let warm_cache = dir.join(format!("{tag}-warm"));
        start_once(&bin, &dir.join(format!("{tag}-prime.db")), &warm_cache);
        Column {
            bin,
            warm_cache,
            cold: Vec::new(),
            warm: Vec::new(),
        }
    }

    fn run(&mut self, dir: &Path, tag: &str, i: usize) {
        let cold_cache = dir.join(format!("{tag}-cold{i}"));
        let cold_db = dir.join(format!("{tag}-c{i}.db"));
        self.cold.push(start_once(&self.bin, &cold_db, &cold_cache));
        let warm_db = dir.join(format!("{tag}-w{i}.db"));
        self.warm
            .push(start_once(&self.bin, &warm_db, &self.warm_cache));
    }

    fn print(&self) {
        println!("{}", self.bin.display());
        for (name, runs) in [("cold", &self.cold), ("warm", &self.warm)] {
            let init: Vec<Duration> = runs.iter().map(|s| s.initialize).collect();
            let list: Vec<Duration> = runs.iter().map(|s| s.tools_list).collect();
            println!(
                "  {name} compile cache: initialize median {:?}; tools/list median {:?} (min {:?}, max {:?})",
                median(init),
                median(list.clone()),
                list.iter().min().unwrap(),
                list.iter().max().unwrap()
            );
        }
    }

    fn tools_list_median(&self, cold: bool) -> Duration {
        let runs = if cold { &self.cold } else { &self.warm };
        median(runs.iter().map(|s| s.tools_list).collect())
    }
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
    let other = args.get(2).map(PathBuf::from);
    for b in std::iter::once(&bin).chain(other.as_ref()) {
        assert!(
            b.is_file(),
            "{} not found: build it with cargo build --release -p scryer",
            b.display()
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let mut a = Column::new(bin, dir.path(), "a");
    let mut b = other.map(|o| Column::new(o, dir.path(), "b"));
    for i in 0..runs {
        a.run(dir.path(), "a", i);
        if let Some(b) = &mut b {
            b.run(dir.path(), "b", i);
        }
    }
    println!(
        "start-up to the tools/list answer, {runs} runs each, alternating (fresh database and daemon every run)"
    );
    a.print();
    if let Some(b) = &b {
        b.print();
        for cold in [true, false] {
            println!(
                "{} cache: first / second = {:.2}",
                if cold { "cold" } else { "warm" },
                a.tools_list_median(cold).as_secs_f64() / b.tools_list_median(cold).as_secs_f64()
            );
        }
    }
}
