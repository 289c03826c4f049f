//! Build time, memory and query latency of the search index over a real corpus.
//!
//! Ignored by default: it needs a database holding an indexed project. To run it over
//! tokio (numbers in docs/learnings/search.md):
//!
//! ```text
//! $CARGO_TARGET_DIR/debug/scryer --db /tmp/search-bench.db index ~/.cache/scryer-eval/corpus/tokio
//! SCRYER_SEARCH_BENCH_DB=/tmp/search-bench.db \
//!     cargo test -p scryer-search --test tokio_bench -- --ignored --nocapture
//! ```

use std::time::{Duration, Instant};

use scryer_search::{SearchDoc, SymbolIndex};

const QUERIES: &[&str] = &[
    "spawn blocking",
    "mutex",
    "read to string",
    "tcp listener accept",
    "JoinHandle",
    "timeout",
    "broadcast channel",
    "semaphore acquire permit",
    "runtime builder worker threads",
    "AsyncReadExt",
    "interval tick",
    "notify waiters",
    "oneshot sender",
    "select",
    "unix stream",
    "file open",
    "sleep until deadline",
    "task local",
    "watch receiver changed",
    "copy bidirectional",
];
const ROUNDS: usize = 50;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

#[test]
#[ignore = "needs an indexed database: see the module docs"]
fn tokio_corpus() {
    let path = std::env::var("SCRYER_SEARCH_BENCH_DB").unwrap_or("/tmp/search-bench.db".into());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (slug, symbols) = rt.block_on(async {
        let db = scryer_db::Db::open(std::path::Path::new(&path))
            .await
            .unwrap();
        let project = db
            .projects()
            .await
            .unwrap()
            .into_iter()
            .next()
            .expect("the database holds no project: index one first");
        let symbols = db.all_symbols(project.id).await.unwrap();
        (project.slug, symbols)
    });
    assert!(!symbols.is_empty(), "project {slug} has no symbols");
    let docs: Vec<SearchDoc> = symbols
        .iter()
        .enumerate()
        .map(|(i, s)| SearchDoc {
            key: i as u64,
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            signature: s.signature.clone(),
            docstring: s.docstring.clone(),
            kind: s.kind.clone(),
            crate_name: None,
            crate_version: None,
        })
        .collect();

    let mut builds = Vec::new();
    let mut index = None;
    for _ in 0..3 {
        let docs = docs.clone();
        let start = Instant::now();
        index = Some(SymbolIndex::build(docs).unwrap());
        builds.push(start.elapsed());
    }
    let index = index.unwrap();
    builds.sort();
    let memory = index.memory_bytes().unwrap();
    let text_bytes: usize = symbols
        .iter()
        .map(|s| {
            s.name.len()
                + s.qualified_name.len()
                + s.signature.len()
                + s.docstring.as_ref().map_or(0, String::len)
                + s.kind.len()
        })
        .sum();

    let mut times = Vec::new();
    for _ in 0..ROUNDS {
        for q in QUERIES {
            let start = Instant::now();
            let page = index.search(q, None, 0, 20).unwrap();
            times.push(start.elapsed());
            assert!(page.total > 0, "no hit for {q:?}");
        }
    }
    times.sort();
    println!(
        "corpus: {slug}, {} symbols, {} KiB of text",
        symbols.len(),
        text_bytes / 1024
    );
    println!(
        "build: median {} ms (of 3: {:?})",
        builds[1].as_millis(),
        builds.iter().map(|d| d.as_millis()).collect::<Vec<_>>()
    );
    println!("index memory: {} KiB", memory / 1024);
    println!(
        "query (top 20, {} queries x {ROUNDS}): p50 {} us, p95 {} us, max {} us",
        QUERIES.len(),
        percentile(&times, 0.5).as_micros(),
        percentile(&times, 0.95).as_micros(),
        times.last().unwrap().as_micros()
    );
    for q in [
        "spawn blocking",
        "mutex",
        "JoinHandle",
        "sleep until deadline",
    ] {
        let page = index.search(q, None, 0, 3).unwrap();
        let top: Vec<String> = page
            .hits
            .iter()
            .map(|h| {
                let s = &symbols[h.key as usize];
                format!("{} ({}, {:.2})", s.qualified_name, s.kind, h.score)
            })
            .collect();
        println!("{q:?} ({} hits): {}", page.total, top.join("; "));
    }
}
