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

use scryer_search::{SearchDoc, SymbolIndex, SymbolIndexBuilder};

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

    // The tokenizer's share of a build.
    let start = Instant::now();
    let tokens: usize = docs
        .iter()
        .map(|d| {
            scryer_search::tokens::tokenize(&d.name).len()
                + scryer_search::tokens::tokenize(&d.qualified_name).len()
                + scryer_search::tokens::tokenize(&d.signature).len()
                + d.docstring
                    .as_deref()
                    .map_or(0, |t| scryer_search::tokens::tokenize(t).len())
        })
        .sum();
    let tokenize = start.elapsed();

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
    println!(
        "of which tokenizing ({tokens} tokens): {} ms",
        tokenize.as_millis()
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
        "Mutex",
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

/// Resident memory of this process, from /proc (Linux), in KiB.
fn rss_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Every dependency crate index of the database's first project, built the way the
/// server builds them on a first dependency search: rows streamed from the database into
/// the builder, only the indexes kept. Needs the project's locked crates indexed (see
/// `dependency_search_timings` in host/server, which indexes them).
#[test]
#[ignore = "needs a database with indexed dependency crates: see the module docs"]
fn dependency_corpus() {
    let path = std::env::var("SCRYER_SEARCH_BENCH_DB").unwrap_or("/tmp/search-bench.db".into());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = rt
        .block_on(scryer_db::Db::open(std::path::Path::new(&path)))
        .unwrap();
    let project = rt.block_on(db.projects()).unwrap().remove(0);
    let crates = rt.block_on(db.dependency_indexes(project.id)).unwrap();
    let rss_before = rss_kib().unwrap_or(0);
    let started = Instant::now();
    let (mut memory, mut symbols) = (0, 0);
    let mut per_crate = Vec::new();
    let mut kept = Vec::new();
    for c in crates.iter().filter(|c| c.index_project_id.is_some()) {
        let start = Instant::now();
        let mut builder = SymbolIndexBuilder::new().unwrap();
        rt.block_on(db.each_search_row(c.index_project_id.unwrap(), |r| {
            builder.add(SearchDoc {
                key: r.id as u64,
                name: r.name,
                qualified_name: r.qualified_name,
                signature: r.signature,
                docstring: r.docstring,
                kind: r.kind,
                crate_name: None,
                crate_version: None,
            })?;
            Ok(())
        }))
        .unwrap();
        let index = builder.finish().unwrap();
        memory += index.memory_bytes().unwrap();
        symbols += index.len();
        per_crate.push((start.elapsed(), c.crate_name.clone(), index.len()));
        kept.push(index);
    }
    let took = started.elapsed();
    per_crate.sort_by_key(|c| std::cmp::Reverse(c.0));
    println!(
        "{} crates, {symbols} symbols: read and indexed in {} ms (one thread)",
        kept.len(),
        took.as_millis()
    );
    println!(
        "index memory {} MiB; process RSS grew {} MiB",
        memory >> 20,
        (rss_kib().unwrap_or(0).saturating_sub(rss_before)) >> 10
    );
    for (t, name, n) in per_crate.iter().take(5) {
        println!("  {name}: {n} symbols, {} ms", t.as_millis());
    }
}
