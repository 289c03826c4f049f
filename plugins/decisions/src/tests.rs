use super::*;

fn doc(path: &str, text: &str) -> SourceDoc {
    SourceDoc {
        path: path.into(),
        text: text.into(),
        modified_ms: 1_000,
    }
}

fn adr(
    number: u32,
    title: &str,
    status: &str,
    date: &str,
    paths: &[&str],
    decision: &str,
    body: &str,
) -> String {
    let mut s = format!(
        "---\nnumber: {number}\ntitle: {title}\nstatus: {status}\ndate: {date}\naffected_paths:\n"
    );
    for p in paths {
        s.push_str(&format!("  - {p}\n"));
    }
    s.push_str(&format!(
        "---\n\n# {title}\n\n## Context\n\n{body}\n\n## Decision\n\n{decision}\n"
    ));
    s
}

fn corpus() -> Corpus {
    Corpus::build(
        vec![
            doc(
                "docs/adr/0001-sandbox.md",
                &adr(
                    1,
                    "Routers run in a sandbox",
                    "accepted",
                    "2026-01-01",
                    &["host/runtime/**", "plugins"],
                    "Deny every import by default.",
                    "Plugins are untrusted.",
                ),
            ),
            doc(
                "docs/adr/0002-storage.md",
                &adr(
                    2,
                    "One database file per server",
                    "accepted",
                    "2026-02-01",
                    &["host/db/**"],
                    "Keep the index in turso; the sandbox never sees it.",
                    "Storage must survive restarts.",
                ),
            ),
            doc(
                "docs/adr/0003-schema.md",
                &adr(
                    3,
                    "Schema changes are additive",
                    "proposed",
                    "2026-03-01",
                    &["host/db/src/schema.rs"],
                    "Only add columns.",
                    "Old databases must open.",
                ),
            ),
            doc(
                "docs/adr/0004-net.md",
                &adr(
                    4,
                    "Network clients retry",
                    "superseded",
                    "2026-04-01",
                    &["src/net/client/**"],
                    "Retry three times.",
                    "Networks fail.",
                ),
            ),
            doc(
                "docs/learnings/indexing.md",
                "# Indexing speed\n\nThe sandbox costs 2 ms per call; the database dominates.\n",
            ),
        ],
        vec![],
    )
}

fn titles(c: &Corpus, r: &Ranking) -> Vec<String> {
    r.hits
        .iter()
        .map(|h| c.decisions[h.doc].title.clone())
        .collect()
}

#[test]
fn without_a_query_everything_is_listed_newest_first() {
    let c = corpus();
    let r = c.search(&Query::default());
    assert_eq!(
        titles(&c, &r),
        [
            "Network clients retry",
            "Schema changes are additive",
            "One database file per server",
            "Routers run in a sandbox",
            "Indexing speed"
        ]
    );
}

#[test]
fn a_title_match_outranks_a_decision_match_which_outranks_the_body() {
    let c = corpus();
    let r = c.search(&Query {
        text: Some("sandbox"),
        ..Default::default()
    });
    assert_eq!(
        titles(&c, &r),
        [
            "Routers run in a sandbox",
            "One database file per server",
            "Indexing speed"
        ]
    );
    assert_eq!(r.hits[0].reasons, ["title: sandbox"]);
    assert_eq!(r.hits[1].reasons, ["decision: sandbox"]);
    assert_eq!(r.hits[2].reasons, ["body: sandbox"]);
}

#[test]
fn a_path_like_query_word_adds_coverage() {
    let c = corpus();
    // `host/db/src/lib.rs` is covered by 0002's `host/db/**` only.
    let r = c.search(&Query {
        text: Some("where is host/db/src/lib.rs"),
        ..Default::default()
    });
    assert_eq!(titles(&c, &r)[0], "One database file per server");
    assert!(
        r.hits[0]
            .reasons
            .iter()
            .any(|x| x == "affected_path 'host/db/**' covers host/db/src/lib.rs"),
        "{:?}",
        r.hits[0].reasons
    );
    // A directory that holds a glob counts too: src/net holds src/net/client/**.
    let r = c.search(&Query {
        text: Some("src/net"),
        ..Default::default()
    });
    assert_eq!(titles(&c, &r)[0], "Network clients retry");
    assert!(r.hits[0].score >= 3.0);
    assert_eq!(r.path_words, ["src/net"]);
}

#[test]
fn an_explicit_path_ranks_the_most_specific_coverage_first() {
    let c = corpus();
    let r = c.search(&Query {
        path: Some("./host/db/src/schema.rs"),
        ..Default::default()
    });
    assert_eq!(
        titles(&c, &r),
        [
            "Schema changes are additive",
            "One database file per server"
        ]
    );
    // 5 + 0.8 (four literal segments) against 5 + 0.4 (host, db).
    assert_eq!(r.hits[0].score, 5.8);
    assert_eq!(r.hits[1].score, 5.4);
    // A bare directory entry covers what is under it.
    let r = c.search(&Query {
        path: Some("plugins/memory/src/lib.rs"),
        ..Default::default()
    });
    assert_eq!(titles(&c, &r), ["Routers run in a sandbox"]);
}

#[test]
fn the_status_filter_applies_last_and_the_ranking_says_what_it_removed() {
    let c = corpus();
    let r = c.search(&Query {
        text: Some("sandbox"),
        status: Some("proposed"),
        ..Default::default()
    });
    assert!(r.hits.is_empty());
    assert_eq!(r.matched, 3);
    assert_eq!(
        r.matched_statuses,
        [("accepted".to_string(), 2), ("none".to_string(), 1)]
    );
    let r = c.search(&Query {
        status: Some("superseded"),
        ..Default::default()
    });
    assert_eq!(titles(&c, &r), ["Network clients retry"]);
}

#[test]
fn nothing_matches_an_unrelated_query() {
    let c = corpus();
    let r = c.search(&Query {
        text: Some("kubernetes"),
        ..Default::default()
    });
    assert!(r.hits.is_empty());
    assert_eq!(r.words, ["kubernetes"]);
    let r = c.search(&Query {
        text: Some("the of and"),
        ..Default::default()
    });
    assert!(r.words.is_empty() && r.hits.is_empty());
}

#[test]
fn rows_add_database_only_records_and_numbers_but_files_win() {
    let rows = vec![
        StoredRow {
            number: 2,
            title: "stale row title".into(),
            status: "accepted".into(),
            file_path: "docs/adr/0002-storage.md".into(),
            text: "# stale row title\n".into(),
            recorded_at: "2026-02-01T00:00:00Z".into(),
        },
        StoredRow {
            number: 9,
            title: "Only in the database".into(),
            status: "proposed".into(),
            file_path: "docs/adr/0009-only-in-the-database.md".into(),
            text: "---\ntitle: Only in the database\n---\n\n## Decision\n\nKeep rows.\n".into(),
            recorded_at: "2026-05-01T00:00:00Z".into(),
        },
    ];
    let mut docs = vec![doc(
        "docs/adr/0002-storage.md",
        &adr(
            2,
            "One database file per server",
            "accepted",
            "2026-02-01",
            &[],
            "x",
            "y",
        ),
    )];
    docs.push(doc("docs/adr/0011-unnumbered.md", "# No frontmatter\n"));
    let c = Corpus::build(docs, rows);
    assert_eq!(c.decisions.len(), 3);
    assert_eq!(c.max_number, 11, "file-name numbers count");
    let db_only = c
        .decisions
        .iter()
        .find(|d| d.origin == Origin::DatabaseOnly)
        .unwrap();
    assert_eq!(db_only.number, Some(9));
    assert_eq!(db_only.status.as_deref(), Some("proposed"));
    assert_eq!(db_only.decision, "Keep rows.");
    assert_eq!(c.decisions[0].title, "One database file per server");
    assert_eq!(c.decisions[1].number, Some(11));
    assert_eq!(c.decisions[1].title, "No frontmatter");
}

#[test]
fn excerpts_are_one_line_and_cut_at_a_word() {
    let c = corpus();
    let d = &c.decisions[1];
    assert_eq!(
        d.excerpt(200),
        "Keep the index in turso; the sandbox never sees it."
    );
    assert_eq!(d.excerpt(20), "Keep the index in…");
    assert_eq!(
        c.decisions[4].excerpt(200),
        "The sandbox costs 2 ms per call; the database dominates."
    );
}

#[test]
fn path_like_words_need_a_slash_or_an_extension() {
    assert!(path_like("src/net"));
    assert!(path_like("lib.rs"));
    assert!(path_like("router.wit"));
    assert!(!path_like("1.5"));
    assert!(!path_like("sandbox"));
    assert!(!path_like(".hidden"));
}

fn sym<'a>(name: &'a str, qualified: &'a str, file: &'a str) -> SymbolInfo<'a> {
    SymbolInfo {
        name,
        qualified_name: qualified,
        file_path: file,
        docstring: None,
    }
}

#[test]
fn invariants_score_file_then_ancestor_then_neighbour_coverage() {
    let c = Corpus::build(
        vec![
            doc(
                "docs/adr/0001-a.md",
                &adr(
                    1,
                    "Exact file rule",
                    "accepted",
                    "2026-01-01",
                    &["host/db/src/schema.rs"],
                    "x",
                    "y",
                ),
            ),
            doc(
                "docs/adr/0002-b.md",
                &adr(
                    2,
                    "Crate rule",
                    "accepted",
                    "2026-01-01",
                    &["host/db/**"],
                    "x",
                    "y",
                ),
            ),
            doc(
                "docs/adr/0003-c.md",
                &adr(
                    3,
                    "Parent dir rule",
                    "accepted",
                    "2026-01-01",
                    &["host/*"],
                    "x",
                    "y",
                ),
            ),
            doc(
                "docs/adr/0004-d.md",
                &adr(
                    4,
                    "Runtime rule",
                    "accepted",
                    "2026-01-01",
                    &["host/runtime/**"],
                    "x",
                    "y",
                ),
            ),
            doc(
                "docs/adr/0005-e.md",
                &adr(
                    5,
                    "Unrelated",
                    "accepted",
                    "2026-01-01",
                    &["web/**"],
                    "x",
                    "y",
                ),
            ),
            doc(
                "docs/learnings/l.md",
                "---\naffected_paths: [host/db/**]\n---\n# Learning\n",
            ),
        ],
        vec![],
    );
    let s = sym("qq", "zz::qq", "host/db/src/schema.rs");
    let got = rank_invariants_for_symbol(&c, &s, &["host/runtime/src/lib.rs".to_string()]);
    let summary: Vec<(Option<u32>, f64)> = got.iter().map(|i| (i.number, i.score)).collect();
    // 5 + 0.8; 5 + 0.4; 3 + 0.4 (host/* covers host/db); 2 + 0.4 (neighbour).
    assert_eq!(
        summary,
        [
            (Some(1), 5.8),
            (Some(2), 5.4),
            (Some(3), 3.4),
            (Some(4), 2.4)
        ]
    );
    assert_eq!(
        got[0].reason,
        "affected_path 'host/db/src/schema.rs' covers host/db/src/schema.rs"
    );
    assert_eq!(
        got[2].reason,
        "affected_path 'host/*' covers host/db, above host/db/src/schema.rs"
    );
    assert_eq!(
        got[3].reason,
        "affected_path 'host/runtime/**' covers neighbour host/runtime/src/lib.rs"
    );
    assert!(
        got.iter().all(|i| i.file_path.starts_with("docs/adr/")),
        "learnings are not invariants"
    );
}

#[test]
fn a_neighbour_counts_only_when_the_file_itself_is_not_covered() {
    let c = Corpus::build(
        vec![doc(
            "docs/adr/0001-a.md",
            &adr(
                1,
                "Db rule",
                "accepted",
                "2026-01-01",
                &["host/db/**"],
                "x",
                "y",
            ),
        )],
        vec![],
    );
    let s = sym("qq", "zz::qq", "host/db/src/lib.rs");
    let got = rank_invariants_for_symbol(&c, &s, &["host/db/src/schema.rs".to_string()]);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].score, 5.4);
}

#[test]
fn invariants_add_a_text_match_normalised_to_three() {
    let c = Corpus::build(
        vec![
            doc(
                "docs/adr/0001-a.md",
                &adr(
                    1,
                    "Decision rows are purged when their file goes",
                    "accepted",
                    "2026-01-01",
                    &[],
                    "Purge decision rows on read.",
                    "Rows can go stale.",
                ),
            ),
            doc(
                "docs/adr/0002-b.md",
                &adr(
                    2,
                    "Something else",
                    "accepted",
                    "2026-01-01",
                    &[],
                    "Unrelated words.",
                    "Nothing.",
                ),
            ),
        ],
        vec![],
    );
    let s = SymbolInfo {
        name: "purge_decision_rows",
        qualified_name: "scryer_db::decisions::purge_decision_rows",
        file_path: "host/db/src/decisions.rs",
        docstring: Some("Deletes stale rows."),
    };
    let got = rank_invariants_for_symbol(&c, &s, &[]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].number, Some(1));
    assert!(got[0].score > 0.5 && got[0].score <= 3.0, "{got:?}");
    assert_eq!(got[0].reason, "text: purge, decision, rows, stale");
}

/// An ADR whose frontmatter is an alias bomb is read (title, number) with a warning, and
/// the ADRs beside it are read as usual.
#[test]
fn an_alias_bomb_adr_is_read_with_a_warning_and_its_neighbours_are_untouched() {
    let mut bomb =
        String::from("---\nnumber: 4\ntitle: Bomb\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = format!("*a{}", i - 1);
        bomb.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    bomb.push_str("---\n\n# Bomb\n\n## Decision\n\nNone.\n");
    let c = Corpus::build(
        vec![
            doc("docs/adr/0004-bomb.md", &bomb),
            doc(
                "docs/adr/0005-next.md",
                &adr(
                    5,
                    "Next one",
                    "accepted",
                    "2026-03-01",
                    &[],
                    "Keep.",
                    "Why.",
                ),
            ),
        ],
        vec![],
    );
    assert_eq!(c.decisions.len(), 2);
    let b = c.decisions.iter().find(|d| d.number == Some(4)).unwrap();
    assert_eq!(b.title, "Bomb");
    assert!(
        b.warnings.iter().any(|w| w.contains("aliases expand past")),
        "{:?}",
        b.warnings
    );
    let n = c.decisions.iter().find(|d| d.number == Some(5)).unwrap();
    assert_eq!(n.title, "Next one");
    assert!(n.warnings.is_empty());
}
