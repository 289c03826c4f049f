use std::time::{Duration, Instant};

use super::*;

fn doc(key: u64, qualified_name: &str, signature: &str, docstring: Option<&str>) -> SearchDoc {
    let name = qualified_name
        .rsplit("::")
        .next()
        .unwrap_or(qualified_name)
        .to_string();
    SearchDoc {
        key,
        name,
        qualified_name: qualified_name.into(),
        signature: signature.into(),
        docstring: docstring.map(str::to_string),
        kind: "function".into(),
        crate_name: None,
        crate_version: None,
    }
}

fn keys(page: &Page) -> Vec<u64> {
    page.hits.iter().map(|h| h.key).collect()
}

#[test]
fn an_exact_name_ranks_first_however_it_is_spelled() {
    let idx = SymbolIndex::build([
        doc(
            1,
            "demo::map::entry_for_ref",
            "fn entry_for_ref(map: &HashMap) -> HashMapRef",
            Some("Finds the hash map ref of a hash map entry. Hash map ref."),
        ),
        doc(2, "demo::HashMapRef", "pub struct HashMapRef", None),
        doc(
            3,
            "demo::MapRef",
            "pub struct MapRef",
            Some("A ref into a map."),
        ),
    ])
    .unwrap();
    for q in ["HashMapRef", "hash map ref", "hash_map_ref", "hashmapref"] {
        let page = idx.search(q, None, 0, 10).unwrap();
        assert_eq!(page.hits[0].key, 2, "query {q:?}: {page:?}");
    }
}

#[test]
fn the_exact_bonus_beats_any_pile_of_word_matches() {
    // Without the bonus doc 2 wins: it holds `map` in every field, several times.
    let mut heavy = doc(
        2,
        "map::map::map_map_map",
        "fn map_map_map(map: Map) -> Map",
        Some("map map map map map"),
    );
    heavy.kind = "map".into();
    let idx = SymbolIndex::build([
        heavy,
        doc(1, "demo::Map", "struct Map", None),
        doc(3, "demo::other", "fn other()", None),
    ])
    .unwrap();
    let page = idx.search("map", None, 0, 10).unwrap();
    assert_eq!(keys(&page), [1, 2]);
    assert!(page.hits[0].score > page.hits[1].score);
}

#[test]
fn the_case_typed_decides_between_equal_names() {
    let mut method = doc(
        1,
        "sync::MutexGuard::mutex",
        "fn mutex(this: &Self) -> &Mutex",
        Some("The mutex this guard locks; the mutex."),
    );
    method.kind = "method".into();
    let mut ty = doc(2, "sync::Mutex", "struct Mutex", None);
    ty.kind = "struct".into();
    let other = doc(
        3,
        "sync::MutexGuard",
        "struct MutexGuard",
        Some("mutex mutex"),
    );
    let idx = SymbolIndex::build([method, ty, other]).unwrap();
    assert_eq!(keys(&idx.search("Mutex", None, 0, 10).unwrap()), [2, 1, 3]);
    assert_eq!(keys(&idx.search("mutex", None, 0, 10).unwrap()), [1, 2, 3]);
    // Spelled another way, both names are exact and the words decide.
    assert_eq!(keys(&idx.search("MUTEX", None, 0, 10).unwrap())[2], 3);
}

#[test]
fn a_name_match_outranks_a_docstring_match() {
    let idx = SymbolIndex::build([
        doc(
            1,
            "demo::run_later",
            "fn run_later()",
            Some("Spawn local tasks later."),
        ),
        doc(
            2,
            "demo::spawn_local",
            "fn spawn_local()",
            Some("Runs a future."),
        ),
    ])
    .unwrap();
    // Word order differs from the name, so no exact-name bonus is involved.
    let page = idx.search("local spawn", None, 0, 10).unwrap();
    assert_eq!(keys(&page), [2, 1]);
}

#[test]
fn module_path_segments_count() {
    let idx = SymbolIndex::build([
        doc(1, "parking::Mutex", "pub struct Mutex", None),
        doc(2, "tokio::sync::Mutex", "pub struct Mutex", None),
    ])
    .unwrap();
    let page = idx.search("sync mutex", None, 0, 10).unwrap();
    assert_eq!(keys(&page), [2, 1]);
    assert_eq!(page.hits[0].matched_terms, ["sync", "mutex"]);
    assert_eq!(page.hits[1].matched_terms, ["mutex"]);
}

#[test]
fn matched_terms_are_the_query_terms_a_hit_holds() {
    let idx = SymbolIndex::build([doc(
        7,
        "rt::spawn_blocking",
        "fn spawn_blocking<F>(f: F) -> JoinHandle",
        Some("Runs the closure on a thread."),
    )])
    .unwrap();
    let page = idx.search("spawn xyzzy Thread", None, 0, 10).unwrap();
    assert_eq!(page.total, 1);
    assert_eq!(page.hits[0].key, 7);
    assert_eq!(page.hits[0].matched_terms, ["spawn", "thread"]);
    assert!(idx.search("xyzzy", None, 0, 10).unwrap().hits.is_empty());
}

#[test]
fn pages_cover_the_ranking_without_gaps_or_repeats() {
    let docs: Vec<SearchDoc> = (0..30)
        .map(|i| {
            // Different docstring lengths give different scores.
            let filler = "word ".repeat(i as usize);
            doc(
                i,
                &format!("demo::item{i}"),
                "fn item()",
                Some(&format!("reader {filler}")),
            )
        })
        .collect();
    let idx = SymbolIndex::build(docs).unwrap();
    let all = idx.search("reader", None, 0, 100).unwrap();
    assert_eq!(all.total, 30);
    assert_eq!(all.hits.len(), 30);
    assert!(all.hits.windows(2).all(|w| w[0].score >= w[1].score));
    let mut paged = Vec::new();
    for offset in (0..30).step_by(7) {
        let p = idx.search("reader", None, offset, 7).unwrap();
        assert_eq!(p.total, 30);
        paged.extend(keys(&p));
    }
    assert_eq!(paged, keys(&all));

    let beyond = idx.search("reader", None, 40, 10).unwrap();
    assert!(beyond.hits.is_empty());
    assert_eq!(beyond.total, 30);
    let counted = idx.search("reader", None, 0, 0).unwrap();
    assert!(counted.hits.is_empty());
    assert_eq!(counted.total, 30);
    // A huge window is cut to the corpus, not allocated.
    assert_eq!(
        idx.search("reader", None, usize::MAX - 1, usize::MAX)
            .unwrap()
            .hits
            .len(),
        0
    );
}

#[test]
fn a_crate_filter_is_case_and_dash_insensitive() {
    let mut a = doc(1, "tokio_util::codec::Decoder", "pub trait Decoder", None);
    a.crate_name = Some("tokio-util".into());
    a.crate_version = Some("0.7.11".into());
    let mut b = doc(2, "tokio::codec::Decoder", "pub trait Decoder", None);
    b.crate_name = Some("tokio".into());
    b.crate_version = Some("1.40.0".into());
    let idx = SymbolIndex::build([a, b]).unwrap();
    assert_eq!(idx.search("decoder", None, 0, 10).unwrap().total, 2);
    for filter in ["Tokio_Util", "tokio-util", " tokio_util@0.7.11"] {
        let p = idx.search("decoder", Some(filter), 0, 10).unwrap();
        assert_eq!(keys(&p), [1], "filter {filter:?}");
        // The filter adds nothing to the score.
        let unfiltered = idx.search("decoder", None, 0, 10).unwrap();
        let same = unfiltered.hits.iter().find(|h| h.key == 1).unwrap();
        assert_eq!(p.hits[0].score, same.score);
    }
    assert_eq!(
        idx.search("decoder", Some("serde"), 0, 10).unwrap().total,
        0
    );
    assert!(matches!(
        idx.search("decoder", Some("  "), 0, 10),
        Err(SearchError::InvalidArgument(_))
    ));
}

#[test]
fn a_query_without_a_searchable_term_is_refused_with_the_reason() {
    let idx = SymbolIndex::build([doc(1, "demo::a", "fn a()", None)]).unwrap();
    for q in [
        "",
        "   ",
        "::<>()",
        "\0\u{1}\u{7}",
        "\u{0301}\u{0302}",
        "\u{FFFE}\u{FFFF}",
    ] {
        match idx.search(q, None, 0, 10) {
            Err(SearchError::InvalidArgument(m)) => {
                assert!(m.contains("no searchable term"), "{m}")
            }
            other => panic!("query {q:?}: {other:?}"),
        }
    }
    // Bad characters inside a word are dropped, the word survives.
    let idx = SymbolIndex::build([doc(1, "demo::HashMap", "struct HashMap", None)]).unwrap();
    assert_eq!(keys(&idx.search("Hash\0Map", None, 0, 5).unwrap()), [1]);
}

#[test]
fn an_empty_index_matches_nothing() {
    let idx = SymbolIndex::build(Vec::new()).unwrap();
    assert!(idx.is_empty());
    let p = idx.search("anything", None, 0, 10).unwrap();
    assert_eq!((p.total, p.hits.len()), (0, 0));
}

#[test]
fn a_megabyte_query_answers_quickly() {
    let docs: Vec<SearchDoc> = (0..2000)
        .map(|i| {
            doc(
                i,
                &format!("demo::m{}::item_{i}", i % 17),
                "fn item()",
                Some("does things"),
            )
        })
        .collect();
    let idx = SymbolIndex::build(docs).unwrap();
    let words: String = (0..200_000).map(|i| format!("item_{i} ")).collect();
    assert!(words.len() > 1_000_000);
    let start = Instant::now();
    let p = idx.search(&words, None, 0, 20).unwrap();
    let took = start.elapsed();
    assert_eq!(p.hits.len(), 20);
    // Only the first 64 distinct terms are searched.
    assert!(
        p.hits
            .iter()
            .all(|h| h.matched_terms.len() <= tokens::MAX_QUERY_TERMS)
    );
    assert!(took < Duration::from_secs(2), "took {took:?}");

    let one_word = "x".repeat(1 << 20);
    let start = Instant::now();
    let p = idx.search(&one_word, None, 0, 20).unwrap();
    assert_eq!(p.total, 0);
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[test]
fn several_indexes_merge_by_score_and_an_exact_name_wins_across_them() {
    // Index 0: many symbols mention `spawn`, none is named exactly `spawn`.
    let a = SymbolIndex::build((0..50).map(|i| {
        doc(
            i,
            &format!("big::spawn_task_{i}"),
            "fn spawn_task(spawn: Spawn)",
            Some("spawn spawn"),
        )
    }))
    .unwrap();
    // Index 1: one tiny crate with an exact `spawn`.
    let b = SymbolIndex::build([doc(9, "small::spawn", "fn spawn()", None)]).unwrap();
    let page = SymbolIndex::search_many(&[&a, &b], "spawn", None, 0, 5).unwrap();
    assert_eq!(page.total, 51);
    assert_eq!((page.hits[0].source, page.hits[0].hit.key), (1, 9));
    assert!(page.hits[1..].iter().all(|h| h.source == 0));
    assert!(
        page.hits
            .windows(2)
            .all(|w| w[0].hit.score >= w[1].hit.score)
    );
    // Paging the merge gives the same order.
    let second = SymbolIndex::search_many(&[&a, &b], "spawn", None, 1, 2).unwrap();
    assert_eq!(second.hits, page.hits[1..3]);
}

#[test]
fn an_index_in_a_directory_cut_into_segments_answers_as_one_in_memory() {
    let words = [
        "read", "write", "spawn", "buffer", "socket", "timer", "lock", "task",
    ];
    let docs: Vec<SearchDoc> = (0..200u64)
        .map(|i| {
            let (a, b) = (words[i as usize % 8], words[(i as usize / 8) % 8]);
            let doc_words = format!("{a} {b} ").repeat(1 + i as usize % 5);
            doc(
                i,
                &format!("demo::m{}::{a}_{b}_{i}", i % 7),
                &format!("fn {a}_{b}(x: {b})"),
                (i % 3 != 0).then_some(doc_words.as_str()),
            )
        })
        .collect();
    let in_memory = SymbolIndex::build(docs.clone()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = SymbolIndexBuilder::in_directory(tmp.path()).unwrap();
    builder.segment_docs = Some(37);
    for d in docs {
        builder.add(d).unwrap();
    }
    let on_disk = builder.finish().unwrap();
    assert_eq!(
        on_disk.parts[0].searcher.segment_readers().len(),
        6,
        "200 docs in 37s"
    );
    assert_eq!(on_disk.len(), 200);
    let reopened = SymbolIndex::open(tmp.path()).unwrap();

    for query in [
        "read",
        "spawn buffer",
        "SocketTimer",
        "lock_task_42",
        "m3 write",
    ] {
        let want = in_memory.search(query, None, 0, 200).unwrap();
        assert!(want.total > 0, "{query}");
        for got in [&on_disk, &reopened] {
            let got = got.search(query, None, 0, 200).unwrap();
            assert_eq!(got.total, want.total, "{query}");
            // BM25 statistics are the whole index's, whatever the segments: same scores,
            // and the same terms matched (ties may list in another order).
            let by_key = |p: &Page| {
                let mut v: Vec<(u64, i64, Vec<String>)> = p
                    .hits
                    .iter()
                    .map(|h| {
                        (
                            h.key,
                            (h.score * 1e4).round() as i64,
                            h.matched_terms.clone(),
                        )
                    })
                    .collect();
                v.sort();
                v
            };
            assert_eq!(by_key(&got), by_key(&want), "{query}");
            let scores = |p: &Page| {
                p.hits
                    .iter()
                    .map(|h| (h.score * 1e4).round() as i64)
                    .collect::<Vec<_>>()
            };
            assert_eq!(scores(&got), scores(&want), "{query}");
        }
    }
}

/// Documents with many equal scores: 8 words, each doc holding two of them.
fn tied_docs(n: u64) -> Vec<SearchDoc> {
    let words = [
        "read", "write", "spawn", "buffer", "socket", "timer", "lock", "task",
    ];
    (0..n)
        .map(|i| {
            let (a, b) = (words[i as usize % 8], words[(i as usize / 8) % 8]);
            doc(
                i,
                &format!("demo::m{}::{a}_{b}", i % 3),
                &format!("fn {a}_{b}(x: {b})"),
                (i % 4 == 0).then_some("read the buffer"),
            )
        })
        .collect()
}

#[test]
fn an_index_built_by_worker_threads_answers_exactly_as_one_built_in_order() {
    let docs = tied_docs(500);
    let in_memory = SymbolIndex::build(docs.clone()).unwrap();
    // (threads, chunk, the last chunk's smallest piece, segments): a last chunk of 500
    // (or of 110 after three of 130) is split between the workers in pieces of at least
    // the smallest piece, at most one per worker.
    for (threads, chunk, piece, segments) in [
        (2, 13, usize::MAX, 39),
        (3, 50, usize::MAX, 10),
        (2, 500, usize::MAX, 1),
        (2, 1000, usize::MAX, 1),
        (2, 1000, 100, 2),
        (3, 1000, 100, 3),
        (3, 1000, 200, 2),
        (2, 130, 100, 4),
        (2, 130, 50, 5),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let mut builder = SymbolIndexBuilder::threaded_in(tmp.path(), threads, chunk, piece);
        for d in docs.clone() {
            builder.add(d).unwrap();
        }
        builder.close().unwrap();
        let on_disk = SymbolIndex::open(tmp.path()).unwrap();
        assert_eq!(
            on_disk.parts[0].searcher.segment_readers().len(),
            segments,
            "{threads} threads, chunks of {chunk}, pieces of {piece}: one segment per piece"
        );
        // Only the index's own files are left: no chunk directory.
        assert!(
            std::fs::read_dir(tmp.path()).unwrap().all(|e| e
                .unwrap()
                .file_type()
                .unwrap()
                .is_file())
        );
        for query in ["read", "spawn buffer", "SocketTimer", "m2 write", "task"] {
            let want = in_memory.search(query, None, 0, 500).unwrap();
            let got = on_disk.search(query, None, 0, 500).unwrap();
            assert!(want.hits.len() > 20, "{query}: ties to order");
            // The same hits in the same order, ties included, with the same scores.
            assert_eq!(got, want, "{query}, {threads} threads, chunks of {chunk}");
            let page = on_disk.search(query, None, 7, 5).unwrap();
            assert_eq!(page.hits, want.hits[7..12], "{query}: a later page");
        }
    }
}

#[test]
fn a_threaded_build_of_nothing_matches_nothing_and_a_dropped_one_stops_its_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let builder = SymbolIndexBuilder::threaded_in(tmp.path(), 2, 10, 2);
    builder.close().unwrap();
    let empty = SymbolIndex::open(tmp.path()).unwrap();
    assert_eq!(empty.search("read", None, 0, 5).unwrap().total, 0);

    let tmp = tempfile::tempdir().unwrap();
    let mut builder = SymbolIndexBuilder::threaded_in(tmp.path(), 2, 10, 2);
    for d in tied_docs(45) {
        builder.add(d).unwrap();
    }
    // Given up mid-way (a failed fill): the workers have finished when drop returns, so
    // removing the directory races nothing.
    drop(builder);
    std::fs::remove_dir_all(tmp.path()).unwrap();
    assert!(!tmp.path().exists());
}

#[test]
fn an_index_written_with_another_schema_is_not_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let mut other = tantivy::schema::Schema::builder();
    other.add_text_field("name", tantivy::schema::TEXT);
    tantivy::Index::create_in_dir(tmp.path(), other.build()).unwrap();
    let err = SymbolIndex::open(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("another schema"), "{err}");
    let missing = SymbolIndex::open(&tmp.path().join("absent")).unwrap_err();
    assert!(matches!(missing, SearchError::Index(_)), "{missing}");
}

#[test]
fn memory_is_reported() {
    let idx =
        SymbolIndex::build((0..100).map(|i| doc(i, &format!("d::f{i}"), "fn f()", None))).unwrap();
    assert!(idx.memory_bytes().unwrap() > 0);
    assert_eq!(idx.len(), 100);
}

/// A small deterministic generator, so the fuzz test needs no dependency and repeats.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn string(&mut self, max_len: usize) -> String {
        // Characters chosen to hit every branch of the tokenizer.
        const POOL: &[char] = &[
            'a',
            'Z',
            'm',
            'Q',
            '_',
            '0',
            '9',
            ':',
            '<',
            '>',
            ' ',
            '\t',
            '\n',
            '\0',
            '\u{1}',
            '\u{7f}',
            '\u{9f}',
            '\u{0301}',
            '\u{20DD}',
            '\u{200D}',
            '\u{FFFE}',
            '\u{FFFF}',
            '\u{FDD0}',
            '\u{1FFFE}',
            'é',
            'ß',
            'İ',
            'ǅ',
            '数',
            '😀',
            '\u{FEFF}',
            '\u{202E}',
            '-',
            '@',
            '\\',
            '"',
        ];
        let len = (self.next() as usize) % (max_len + 1);
        (0..len)
            .map(|_| {
                if self.next().is_multiple_of(4) {
                    // Any scalar value at all.
                    char::from_u32((self.next() % 0x11_0000) as u32).unwrap_or('x')
                } else {
                    POOL[(self.next() as usize) % POOL.len()]
                }
            })
            .collect()
    }
}

#[test]
fn fuzzed_symbols_and_queries_never_panic() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let docs: Vec<SearchDoc> = (0..300)
        .map(|key| SearchDoc {
            key,
            name: rng.string(20),
            qualified_name: rng.string(40),
            signature: rng.string(60),
            docstring: (key % 3 == 0).then(|| rng.string(200)),
            kind: rng.string(8),
            crate_name: (key % 2 == 0).then(|| rng.string(10)),
            crate_version: (key % 4 == 0).then(|| rng.string(6)),
        })
        .collect();
    let names: Vec<String> = docs.iter().map(|d| d.name.clone()).collect();
    let idx = SymbolIndex::build(docs).unwrap();
    for i in 0..500 {
        let q = if i % 5 == 0 {
            names[i % names.len()].clone()
        } else {
            rng.string(40)
        };
        let filter = (i % 7 == 0).then(|| rng.string(6));
        let offset = (rng.next() % 400) as usize;
        let limit = (rng.next() % 60) as usize;
        match idx.search(&q, filter.as_deref(), offset, limit) {
            Ok(p) => {
                assert!(p.hits.len() <= limit);
                assert!(p.hits.windows(2).all(|w| w[0].score >= w[1].score));
                assert!(p.hits.iter().all(|h| h.key < 300));
            }
            Err(SearchError::InvalidArgument(_)) => {}
            Err(e) => panic!("query {q:?}: {e}"),
        }
    }
}

/// `docs` without those whose key is in `hidden`, with `current` added, in key order: the
/// corpus an index built again after an edit holds.
fn rebuilt(
    docs: &[SearchDoc],
    hidden: &[std::ops::Range<u64>],
    current: &[SearchDoc],
) -> SymbolIndex {
    let mut all: Vec<SearchDoc> = docs
        .iter()
        .filter(|d| !hidden.iter().any(|r| r.contains(&d.key)))
        .chain(current)
        .cloned()
        .collect();
    all.sort_by_key(|d| d.key);
    SymbolIndex::build(all).unwrap()
}

#[test]
fn an_index_with_changes_answers_as_one_built_again_from_the_changed_corpus() {
    let docs = tied_docs(600);
    let tmp = tempfile::tempdir().unwrap();
    let mut builder = SymbolIndexBuilder::threaded_in(tmp.path(), 2, 64, 16);
    for d in docs.clone() {
        builder.add(d).unwrap();
    }
    builder.close().unwrap();
    let kept = SymbolIndex::open(tmp.path()).unwrap();

    // "Files" 100..140 (edited: some rows renamed, one gone, two added at the range's
    // end) and 300..310 (deleted); a new file at 1000..1002.
    let hidden = vec![100..140, 300..310, 1000..1002];
    let mut current: Vec<SearchDoc> = (100..139)
        .map(|k| {
            let mut d = docs[k as usize].clone();
            if k % 5 == 0 {
                d.qualified_name = format!("demo::edited::spawn_socket{k}");
                d.signature = "fn spawn_socket()".into();
            }
            d
        })
        .collect();
    // Row 137 is gone; rows 139 (new) and 1xx… are added after the file's last row.
    current.retain(|d| d.key != 137);
    current.push(doc(
        139,
        "demo::edited::timer_task",
        "fn timer_task(t: task)",
        Some("read"),
    ));
    let new_file = [
        doc(1000, "demo::fresh::SocketTimer", "struct SocketTimer", None),
        doc(
            1001,
            "demo::fresh::read",
            "fn read()",
            Some("read the buffer"),
        ),
    ];
    current.extend(new_file.iter().cloned());
    let layered = kept
        .with_changes(&hidden, SymbolIndex::build(current.clone()).unwrap())
        .unwrap();
    let want = rebuilt(&docs, &hidden, &current);
    assert_eq!(layered.len(), want.len());
    for query in [
        "read",
        "spawn buffer",
        "SocketTimer",
        "m2 write",
        "task",
        "spawn_socket",
    ] {
        let expect = want.search(query, None, 0, 700).unwrap();
        assert!(expect.hits.len() > 20 || query == "SocketTimer", "{query}");
        let got = layered.search(query, None, 0, 700).unwrap();
        // The same hits in the same order, ties included, with the same scores.
        assert_eq!(got, expect, "{query}");
        let page = layered.search(query, None, 9, 6).unwrap();
        assert_eq!(page.hits, expect.hits[9..15], "{query}: a later page");
        assert_eq!(page.total, expect.total);
    }
    // The deleted file's documents are gone; the kept index itself is unchanged.
    let deleted = kept.search("read", None, 0, 700).unwrap();
    assert!(deleted.hits.iter().any(|h| (300..310).contains(&h.key)));
    let now = layered.search("read", None, 0, 700).unwrap();
    assert!(!now.hits.iter().any(|h| (300..310).contains(&h.key)));

    // A second edit of the same file over the first: its first version is hidden too.
    let again = vec![doc(100, "demo::edited::only_one", "fn only_one()", None)];
    let twice = layered
        .with_changes(&[100..140], SymbolIndex::build(again.clone()).unwrap())
        .unwrap();
    let mut corpus: Vec<SearchDoc> = docs
        .iter()
        .filter(|d| !hidden.iter().any(|r| r.contains(&d.key)))
        .chain(current.iter().filter(|d| !(100..140).contains(&d.key)))
        .chain(&again)
        .cloned()
        .collect();
    corpus.sort_by_key(|d| d.key);
    let after_first = SymbolIndex::build(corpus).unwrap();
    assert_eq!(twice.len(), after_first.len());
    for query in ["read", "only one", "spawn_socket", "task"] {
        assert_eq!(
            twice.search(query, None, 0, 700).unwrap(),
            after_first.search(query, None, 0, 700).unwrap(),
            "{query}, second edit"
        );
    }
}
