//! Precise mode end to end (ADR 0018): the real binary runs the real SCIP indexers
//! (rust-analyzer, scip-python, scip-typescript; `.ci/run` installs the npm ones and puts
//! them on PATH) on the fixture projects in `tests/fixtures/precise`, and the answers say
//! which they are. Every expected line was read off the fixture files.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::{Scryer, copy_dir, repo_root};

/// A fresh copy of `tests/fixtures/precise/<name>`.
fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix(&format!("scryer-precise-{name}-"))
        .tempdir()
        .unwrap();
    copy_dir(
        &repo_root().join("tests/fixtures/precise").join(name),
        dir.path(),
    );
    dir
}

const PRECISE_ON: [(&str, &str); 2] = [
    ("SCRYER_PRECISE", "auto"),
    ("SCRYER_PRECISE_SETTLE_MS", "1000"),
];

/// Polls `get_indexing_status` until the precise stage is `want` (or panics after `limit`).
async fn wait_precise(s: &Scryer, root: &Path, want: &str, limit: Duration) -> Value {
    let started = Instant::now();
    loop {
        let v = s
            .call_json(
                "get_indexing_status",
                json!({"project": root.to_str().unwrap()}),
            )
            .await;
        if v["precise"]["state"] == want {
            return v;
        }
        assert!(
            started.elapsed() < limit,
            "precise state is not {want} after {limit:?}: {v}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The (file, line) of every site of a `view: sites` answer.
fn sites(v: &Value) -> Vec<(String, u64)> {
    v["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {v}"))
        .iter()
        .map(|i| {
            (
                i["file_path"].as_str().unwrap().to_string(),
                i["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The sorted `qualified_name`s of a list of nodes.
fn names(list: &Value) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|n| n["qualified_name"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

/// `find_references` of a bare name that names several definitions, in the sites view:
/// an ambiguous answer, of `precision`.
async fn ambiguous_sites(s: &Scryer, name: &str, precision: &str) -> Value {
    let v = s
        .call_json("find_references", json!({"symbol": name, "view": "sites"}))
        .await;
    assert_eq!(v["ambiguous"], true, "{v}");
    assert_eq!(v["precision"], precision, "{v}");
    v
}

/// Appends `twice`, a new caller of `Circle::area`, to the fixture's `src/lib.rs` (line 19).
fn add_twice(root: &Path) {
    let lib = root.join("src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push_str("\npub fn twice(c: &Circle) -> f64 {\n    c.area() * 2.0\n}\n");
    std::fs::write(&lib, text).unwrap();
}

fn owned(list: &[(&str, u64)]) -> Vec<(String, u64)> {
    list.iter().map(|(f, l)| (f.to_string(), *l)).collect()
}

#[tokio::test]
async fn rust_answers_are_precise_then_mixed_after_an_edit_then_precise_after_the_rerun() {
    let ws = fixture("rust");
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    let status = wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;
    let rust = &status["precise_languages"][0];
    assert_eq!(rust["language"], "rust", "{status}");
    assert_eq!(rust["state"], "ready", "{status}");
    assert_eq!(rust["files"], 2, "{status}");
    assert!(rust["duration_ms"].as_u64().is_some(), "{status}");

    // A method whose receivers the syntax tree cannot type (closure parameters): the
    // indexer tells the two `area` methods apart.
    let v = s.reference_sites("Circle::area").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(
        sites(&v),
        owned(&[("src/lib.rs", 7), ("src/lib.rs", 11)]),
        "{v}"
    );
    let v = s.reference_sites("Square::area").await;
    assert_eq!(
        sites(&v),
        owned(&[("src/lib.rs", 7), ("src/lib.rs", 15)]),
        "{v}"
    );
    assert_eq!(v["precision"], "precise", "{v}");

    // The bare name names both: each definition's group holds its precise usages, all
    // asked of the host in one call (WIT 0.5 `precise-usages-of`).
    let v = ambiguous_sites(&s, "area", "precise").await;
    let groups: Vec<(String, Vec<(String, u64)>)> = v["definitions"]
        .as_array()
        .unwrap_or_else(|| panic!("no definitions: {v}"))
        .iter()
        .map(|g| {
            (
                g["definition"]["qualified_name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                sites(g),
            )
        })
        .collect();
    for (name, want) in [
        (
            "precise_demo::shapes::Circle::area",
            owned(&[("src/lib.rs", 7), ("src/lib.rs", 11)]),
        ),
        (
            "precise_demo::shapes::Square::area",
            owned(&[("src/lib.rs", 7), ("src/lib.rs", 15)]),
        ),
    ] {
        let got = groups.iter().find(|(n, _)| n == name);
        assert_eq!(got.map(|(_, g)| g), Some(&want), "{name}: {v}");
    }

    // resolve_definition: by name, confirmed by the index; by a written site, answered by it.
    let v = s
        .call_json("resolve_definition", json!({"symbol": "Circle::area"}))
        .await;
    assert_eq!(v["precision"], "precise", "{v}");
    let v = s
        .call_json(
            "resolve_definition",
            json!({"symbol": "area", "file_path": "src/lib.rs", "line": 15}),
        )
        .await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        v["definition"]["qualified_name"], "precise_demo::shapes::Square::area",
        "{v}"
    );

    // The call graph, the impact and inspect_symbol's callers: the indexer decides which
    // `area` each closure calls, which the syntax tree cannot.
    let v = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "Circle::area", "direction": "incoming", "depth": 1}),
        )
        .await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(
        names(&v["callers"]),
        ["precise_demo::sum_circles", "precise_demo::total"],
        "{v}"
    );
    let v = s
        .call_json(
            "calculate_blast_radius",
            json!({"symbol": "Square::area", "depth": 1}),
        )
        .await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(
        names(&v["affected"]),
        ["precise_demo::biggest", "precise_demo::total"],
        "{v}"
    );
    let v = s
        .call_json("inspect_symbol", json!({"symbol": "Circle::area"}))
        .await;
    assert_eq!(v["callers_precision"], "precise", "{v}");
    assert_eq!(v["caller_count"], 2, "{v}");
    assert_eq!(v["references_precision"], "precise", "{v}");
    assert_eq!(v["reference_count"], 2, "{v}");
    let v = s
        .call_json(
            "get_enclosing_scope",
            json!({"file_path": "src/lib.rs", "line": 11}),
        )
        .await;
    assert_eq!(
        v["scope"]["qualified_name"], "precise_demo::sum_circles",
        "{v}"
    );
    assert_eq!(v["precision"], "precise", "{v}");

    // An edit: lib.rs falls back to the heuristic, for that file only.
    add_twice(ws.path());
    let started = Instant::now();
    let v = loop {
        let v = s.reference_sites("Circle::area").await;
        if v["precision"] == "mixed" || started.elapsed() > Duration::from_secs(30) {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(v["precision"], "mixed", "{v}");
    assert_eq!(v["complete"], false, "{v}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains(
            "1 file(s) fell back to the heuristic (1 edited since the precise run): src/lib.rs"
        ),
        "{v}"
    );
    assert!(sites(&v).contains(&("src/lib.rs".to_string(), 19)), "{v}");
    let v = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "Circle::area", "direction": "incoming", "depth": 1}),
        )
        .await;
    assert_eq!(v["precision"], "mixed", "{v}");
    assert_eq!(v["complete"], false, "{v}");
    assert!(
        names(&v["callers"]).contains(&"precise_demo::twice".to_string()),
        "{v}"
    );

    // Once edits settle the indexer runs again, and the answer is precise with the new site.
    let started = Instant::now();
    let v = loop {
        let v = s.reference_sites("Circle::area").await;
        if v["precision"] == "precise" || started.elapsed() > Duration::from_secs(240) {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        sites(&v),
        owned(&[("src/lib.rs", 7), ("src/lib.rs", 11), ("src/lib.rs", 19)]),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn code_the_indexer_did_not_build_is_named_not_answered() {
    // Inactive `cfg` code: rust-analyzer reads every line the compiler builds with the
    // run's features and cfgs, and records nothing here. The closure's `c.area()` is no
    // usage in that build: it is left out, the answer names where it is and does not
    // claim to be complete (another configuration may build it).
    let ws = fixture("rust");
    let shapes = ws.path().join("src/shapes.rs");
    let mut text = std::fs::read_to_string(&shapes).unwrap();
    text.push_str(
        "\n#[cfg(feature = \"never\")]\npub fn sum_all(all: &[Circle]) -> f64 {\n    all.iter().map(|c| c.area()).sum()\n}\n",
    );
    std::fs::write(&shapes, text).unwrap();
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;
    let v = s.reference_sites("Circle::area").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        sites(&v),
        owned(&[("src/lib.rs", 7), ("src/lib.rs", 11)]),
        "{v}"
    );
    assert_eq!(v["complete"], false, "{v}");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("1 site(s) named `area` sit in code rust-analyzer did not build")
            && n.as_str().unwrap().contains("src/shapes.rs")),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_trait_items_implementations_are_its_uses() {
    // rust-analyzer writes `fn sides` in `impl Shape for Square` as the impl's own
    // definition; the syntax says it implements `Shape::sides`, as the truth counts it.
    let ws = fixture("rust");
    let shapes = ws.path().join("src/shapes.rs");
    let mut text = std::fs::read_to_string(&shapes).unwrap();
    text.push_str(concat!(
        "\npub trait Shape {\n    type Unit;\n    fn sides(&self) -> u32;\n}\n",
        "\nimpl Shape for Square {\n    type Unit = f64;\n    fn sides(&self) -> u32 {\n        4\n    }\n}\n",
        "\npub fn count(s: &dyn Shape<Unit = f64>) -> u32 {\n    s.sides()\n}\n",
        "\npub fn square_sides(q: &Square) -> <Square as Shape>::Unit {\n    q.sides() as f64\n}\n",
        "\nimpl Square {\n    pub fn unit() -> Self {\n        Self { side: 1.0 }\n    }\n}\n",
    ));
    std::fs::write(&shapes, text).unwrap();
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;
    // The trait item's family: the impl's item (its definition), the call through `dyn`
    // (the trait item's occurrence) and the call on `Square` (the impl item's).
    let v = s.reference_sites("Shape::sides").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        sites(&v),
        owned(&[
            ("src/shapes.rs", 34),
            ("src/shapes.rs", 40),
            ("src/shapes.rs", 44)
        ]),
        "{v}"
    );
    assert_eq!(v["complete"], true, "{v}");
    // The impl's method keeps its own: the call on `Square`.
    let v = s
        .reference_sites("precise_demo::shapes::Square::sides")
        .await;
    assert_eq!(sites(&v), owned(&[("src/shapes.rs", 44)]), "{v}");
    // `Self` in a type's impl blocks is counted, not listed: the answer says so and does
    // not claim to be complete.
    let v = s.reference_sites("precise_demo::shapes::Square").await;
    assert!(
        !sites(&v)
            .iter()
            .any(|(f, l)| f == "src/shapes.rs" && *l >= 48),
        "{v}"
    );
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("2 `Self` use(s) inside the type's own impl blocks")),
        "{v}"
    );
    assert_eq!(v["complete"], false, "{v}");
    // An impl's associated type answers for the trait's: paths to it name the trait item.
    let v = s
        .reference_sites("precise_demo::shapes::Square::Unit")
        .await;
    assert_eq!(
        sites(&v),
        owned(&[
            ("src/shapes.rs", 28),
            ("src/shapes.rs", 39),
            ("src/shapes.rs", 43)
        ]),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn a_python_method_another_class_shares_is_not_claimed_complete() {
    // scip-python resolves a receiver typed as a union to one member: with a second
    // class defining `total`, `x.total()` on `Cart | Voucher` may be either's.
    let ws = fixture("python");
    let pricing = ws.path().join("shop/pricing.py");
    let mut text = std::fs::read_to_string(&pricing).unwrap();
    text.push_str(
        "\n\nclass Voucher:\n    def total(self):\n        return 0\n\n\ndef either(x: \"Voucher | Cart\"):\n    return x.total()\n",
    );
    std::fs::write(&pricing, text).unwrap();
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;
    let v = s.reference_sites("Cart::total").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(v["complete"], false, "{v}");
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("`Voucher` has a method of this name too")),
        "{v}"
    );
    // A method no other class has keeps its claim.
    let v = s.reference_sites("with_tax").await;
    assert_eq!(v["complete"], true, "{v}");
    s.stop().await;
}

#[tokio::test]
async fn python_module_access_is_precise() {
    let ws = fixture("python");
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    let status = wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;
    assert_eq!(
        status["precise_languages"][0]["language"], "python",
        "{status}"
    );

    let v = s.reference_sites("with_tax").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(
        sites(&v),
        owned(&[
            ("shop/checkout.py", 8),
            ("shop/checkout.py", 12),
            ("shop/pricing.py", 15)
        ]),
        "{v}"
    );
    let v = s.reference_sites("TAX_RATE").await;
    assert_eq!(
        sites(&v),
        owned(&[("shop/checkout.py", 8), ("shop/pricing.py", 7)]),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn python_sites_the_indexer_did_not_bind_are_the_heuristics_and_make_the_answer_partial() {
    let ws = fixture("python");
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;

    // `shop.DISCOUNT` goes through the package's re-export: scip-python names a symbol
    // there that its index defines nowhere, so the site is not a resolved one.
    let v = s.reference_sites("DISCOUNT").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        sites(&v),
        owned(&[("shop/__init__.py", 2), ("shop/refunds.py", 9)]),
        "{v}"
    );
    assert_eq!(v["complete"], false, "{v}");
    assert!(v["notes"].to_string().contains("could not resolve"), "{v}");

    // Under `if os.name == "nt" and ..:` with `pythonPlatform: Linux` (pyrightconfig.json)
    // scip-python holds the code unreachable and writes bare locals there: the call is
    // the heuristic's, and the answer is partial.
    let v = s.reference_sites("round_price").await;
    assert_eq!(
        sites(&v),
        owned(&[
            ("shop/refunds.py", 5),
            ("shop/refunds.py", 9),
            ("shop/refunds.py", 14)
        ]),
        "{v}"
    );
    assert_eq!(v["complete"], false, "{v}");
    s.stop().await;
}

#[tokio::test]
async fn typescript_imports_and_re_exports_are_precise_and_the_inferred_tsconfig_goes() {
    let ws = fixture("typescript");
    let s = Scryer::start(&[], &PRECISE_ON).await;
    s.index(ws.path()).await;
    let status = wait_precise(&s, ws.path(), "ready", Duration::from_secs(240)).await;
    assert_eq!(
        status["precise_languages"][0]["language"], "typescript",
        "{status}"
    );
    assert!(
        !ws.path().join("tsconfig.json").exists(),
        "the tsconfig.json scip-typescript inferred is removed again"
    );

    let v = s.reference_sites("greet").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        sites(&v),
        owned(&[("src/app.ts", 1), ("src/app.ts", 4), ("src/index.ts", 1)]),
        "{v}"
    );
    // `new Ledger(..)` is an occurrence of the constructor: it is a use of the class.
    let v = s.reference_sites("Ledger").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(
        sites(&v),
        owned(&[("src/ledger.ts", 6), ("src/ledger.ts", 7)]),
        "{v}"
    );
    assert_eq!(v["complete"], true, "{v}");
    s.stop().await;
}

#[tokio::test]
async fn a_missing_indexer_is_unavailable_and_answers_stay_heuristic() {
    let ws = fixture("rust");
    let s = Scryer::start(
        &[],
        &[
            ("SCRYER_PRECISE", "auto"),
            ("SCRYER_PRECISE_RUST_CMD", "/nonexistent/rust-analyzer"),
        ],
    )
    .await;
    s.index(ws.path()).await;
    let status = wait_precise(&s, ws.path(), "unavailable", Duration::from_secs(60)).await;
    let error = status["precise_languages"][0]["error"].to_string();
    assert!(error.contains("/nonexistent/rust-analyzer"), "{status}");

    let v = s.reference_sites("Circle::area").await;
    assert_eq!(v["precision"], "heuristic", "{v}");
    assert!(v["notes"].to_string().contains("unavailable"), "{v}");
    // The bare name's two definitions: both heuristic, answered for the language at once.
    let v = ambiguous_sites(&s, "area", "heuristic").await;
    assert_eq!(v["candidate_count"], 2, "{v}");
    // Precise mode is on, so the graph tools say why their answer is heuristic.
    let v = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "Circle::area", "direction": "incoming", "depth": 1}),
        )
        .await;
    assert_eq!(v["precision"], "heuristic", "{v}");
    assert!(v["notes"].to_string().contains("unavailable"), "{v}");
    s.stop().await;
}

#[tokio::test]
async fn precise_off_reports_off_and_heuristic_answers() {
    let ws = fixture("rust");
    let s = Scryer::start(&[], &[("SCRYER_PRECISE", "off")]).await;
    s.index(ws.path()).await;
    let v = s
        .call_json(
            "get_indexing_status",
            json!({"project": ws.path().to_str().unwrap()}),
        )
        .await;
    assert_eq!(v["precise"]["state"], "off", "{v}");
    let v = s.reference_sites("Square::area").await;
    assert_eq!(v["precision"], "heuristic", "{v}");
    // Off: the other tools carry no label, every answer would say the same (ADR 0021).
    let v = s
        .call_json(
            "trace_call_hierarchy",
            json!({"symbol": "Square::area", "direction": "incoming", "depth": 1}),
        )
        .await;
    assert!(v.get("precision").is_none(), "{v}");
    let v = s
        .call_json("inspect_symbol", json!({"symbol": "Square::area"}))
        .await;
    assert!(v.get("callers_precision").is_none(), "{v}");
    assert!(v.get("references_precision").is_none(), "{v}");
    s.stop().await;
}

#[tokio::test]
async fn an_imported_index_does_not_apply_to_a_file_edited_since_it_was_built() {
    // The index is built, then checkout.py gains a line at the top before the import:
    // the index's positions are not that file's any more, so the file is answered by
    // the heuristic (with its sites at their new lines) and the answer says `mixed`.
    let ws = fixture("python");
    let out = tempfile::tempdir().unwrap();
    let index = out.path().join("index.scip");
    let made = std::process::Command::new("scip-python")
        .args(["index", "--project-name", "shop", "--project-version", "0"])
        .arg("--output")
        .arg(&index)
        .current_dir(ws.path())
        .output()
        .expect("scip-python on PATH (.ci/run installs it)");
    assert!(made.status.success(), "{made:?}");
    let checkout = ws.path().join("shop/checkout.py");
    let text = std::fs::read_to_string(&checkout).unwrap();
    std::fs::write(&checkout, format!("import math\n{text}")).unwrap();
    let s = Scryer::start(
        &[],
        &[
            ("SCRYER_PRECISE", "auto"),
            ("SCRYER_PRECISE_PYTHON_CMD", "/nonexistent/scip-python"),
        ],
    )
    .await;
    s.index(ws.path()).await;
    wait_precise(&s, ws.path(), "unavailable", Duration::from_secs(60)).await;
    let imported = std::process::Command::new(support::scryer_bin())
        .arg("--db")
        .arg(s.state.path().join("index.db"))
        .args(["precise", "import"])
        .arg(&index)
        .arg("--project")
        .arg(ws.path())
        .env("SCRYER_LOG", "warn")
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    wait_precise(&s, ws.path(), "ready", Duration::from_secs(30)).await;
    let v = s.reference_sites("with_tax").await;
    assert_eq!(v["precision"], "mixed", "{v}");
    assert!(v["notes"].to_string().contains("shop/checkout.py"), "{v}");
    assert_eq!(
        sites(&v),
        owned(&[
            ("shop/checkout.py", 9),
            ("shop/checkout.py", 13),
            ("shop/pricing.py", 15)
        ]),
        "{v}"
    );
    s.stop().await;
}

#[tokio::test]
async fn an_imported_index_answers_until_its_files_are_edited() {
    // No indexer runs in the daemon: the index comes from scip-python run by hand, the
    // way CI would build it, and `scryer precise import` hands it to the running daemon.
    let ws = fixture("python");
    let out = tempfile::tempdir().unwrap();
    let index = out.path().join("index.scip");
    let made = std::process::Command::new("scip-python")
        .args(["index", "--project-name", "shop", "--project-version", "0"])
        .arg("--output")
        .arg(&index)
        .current_dir(ws.path())
        .output()
        .expect("scip-python on PATH (.ci/run installs it)");
    assert!(made.status.success(), "{made:?}");
    let s = Scryer::start(
        &[],
        &[
            ("SCRYER_PRECISE", "auto"),
            ("SCRYER_PRECISE_PYTHON_CMD", "/nonexistent/scip-python"),
        ],
    )
    .await;
    s.index(ws.path()).await;
    wait_precise(&s, ws.path(), "unavailable", Duration::from_secs(60)).await;
    let v = s.reference_sites("with_tax").await;
    assert_eq!(v["precision"], "heuristic", "{v}");

    let db = s.state.path().join("index.db");
    let imported = std::process::Command::new(support::scryer_bin())
        .arg("--db")
        .arg(&db)
        .args(["precise", "import"])
        .arg(&index)
        .arg("--project")
        .arg(ws.path())
        .env("SCRYER_LOG", "warn")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&imported.stdout).to_string();
    assert!(imported.status.success(), "{imported:?}");
    assert!(said.contains("python file(s) from scip-python"), "{said}");

    let status = wait_precise(&s, ws.path(), "ready", Duration::from_secs(30)).await;
    let python = &status["precise_languages"][0];
    assert_eq!(python["source"], "import", "{status}");
    assert!(python["files"].as_u64() >= Some(2), "{status}");
    let v = s.reference_sites("with_tax").await;
    assert_eq!(v["precision"], "precise", "{v}");
    assert_eq!(v["complete"], true, "{v}");
    assert_eq!(
        sites(&v),
        owned(&[
            ("shop/checkout.py", 8),
            ("shop/checkout.py", 12),
            ("shop/pricing.py", 15)
        ]),
        "{v}"
    );

    // An edit after the import: that file's precise data no longer applies, and it is
    // answered by the heuristic (with its new site); no indexer can run here to renew it.
    let checkout = ws.path().join("shop/checkout.py");
    let mut text = std::fs::read_to_string(&checkout).unwrap();
    text.push_str("\n\ndef refund(amount):\n    return -pricing.with_tax(amount)\n");
    std::fs::write(&checkout, text).unwrap();
    let started = Instant::now();
    let v = loop {
        let v = s.reference_sites("with_tax").await;
        if v["precision"] == "mixed" || started.elapsed() > Duration::from_secs(30) {
            break v;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(v["precision"], "mixed", "{v}");
    assert_eq!(v["complete"], false, "{v}");
    assert!(
        v["notes"]
            .to_string()
            .contains("1 edited since the precise run): shop/checkout.py"),
        "{v}"
    );
    assert_eq!(
        sites(&v),
        owned(&[
            ("shop/checkout.py", 8),
            ("shop/checkout.py", 12),
            ("shop/checkout.py", 16),
            ("shop/pricing.py", 15)
        ]),
        "{v}"
    );
    s.stop().await;
}

/// A database and a stand-in for rust-analyzer that writes a line to its log for each
/// indexing run (`scip`) it is asked for, then runs the real one, or, with `fail`, fails
/// as rust-analyzer does on a tree of several Cargo projects (`--version`, the
/// detection, is always the real one's). Serving processes are started on the database
/// one after the other, each a new process (no daemon) with nothing in memory.
struct Restarts {
    state: tempfile::TempDir,
    ra: String,
}

impl Restarts {
    fn new(fail: bool) -> Restarts {
        let state = tempfile::tempdir().unwrap();
        let script = state.path().join("rust-analyzer-counting");
        let on_scip = if fail {
            "echo 'Error: more than one project' >&2; exit 1"
        } else {
            "exec \"$RA\" \"$@\""
        };
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nRA=$(command -v rust-analyzer || rustup which rust-analyzer)\n\
                 case \" $* \" in *\" scip \"*) echo run >> '{}'; {on_scip};; esac\n\
                 exec \"$RA\" \"$@\"\n",
                state.path().join("runs.log").display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ra = script.to_str().unwrap().to_string();
        Restarts { state, ra }
    }

    fn db(&self) -> std::path::PathBuf {
        self.state.path().join("p.db")
    }

    /// How many indexing runs the stand-in was asked for so far.
    fn runs(&self) -> usize {
        std::fs::read_to_string(self.state.path().join("runs.log")).map_or(0, |t| t.lines().count())
    }

    /// Starts a serving process, indexes `root` and waits for the precise stage `want`,
    /// twice two seconds apart, so a run the index run queued has been made or skipped.
    async fn serve_until(&self, root: &Path, want: &str) -> (Scryer, Value) {
        let env = [
            PRECISE_ON[0],
            PRECISE_ON[1],
            ("SCRYER_DAEMON", "off"),
            ("SCRYER_PRECISE_RUST_CMD", self.ra.as_str()),
        ];
        let s = Scryer::start_with_db(&self.db(), &[], &env).await;
        s.index(root).await;
        wait_precise(&s, root, want, Duration::from_secs(240)).await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        let status = wait_precise(&s, root, want, Duration::from_secs(240)).await;
        (s, status)
    }

    /// Stops `s` and waits until its process has let go of the database.
    async fn stop(&self, s: Scryer) {
        s.stop().await;
        for _ in 0..100 {
            let out = std::process::Command::new(support::scryer_bin())
                .args(["--db", self.db().to_str().unwrap(), "report", "--json"])
                .env("SCRYER_CONFIG_DIR", self.state.path().join("config"))
                .env("SCRYER_DAEMON", "off")
                .output()
                .unwrap();
            if out.status.success() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("the database stayed locked after the server stopped");
    }
}

#[tokio::test]
async fn a_new_process_does_not_run_the_indexer_again_over_the_same_files() {
    let ws = fixture("rust");
    let r = Restarts::new(false);
    let (s, first) = r.serve_until(ws.path(), "ready").await;
    assert_eq!(r.runs(), 1, "{first}");
    r.stop(s).await;

    // A new process, nothing changed: the stored run answers, rust-analyzer is not run.
    let (s, again) = r.serve_until(ws.path(), "ready").await;
    assert_eq!(r.runs(), 1, "{again}");
    assert_eq!(
        again["precise_languages"][0]["finished_at"], first["precise_languages"][0]["finished_at"],
        "{again}"
    );
    let v = s.reference_sites("Circle::area").await;
    assert_eq!(v["precision"], "precise", "{v}");

    // A source edited: the next run is made.
    add_twice(ws.path());
    let started = Instant::now();
    while r.runs() < 2 {
        // A call naming the file refreshes it at once; the watcher would too.
        s.reference_sites("Circle::area").await;
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no run after an edit"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    s.stop().await;
}

#[tokio::test]
async fn a_run_that_failed_is_not_made_again_over_the_same_files() {
    let ws = fixture("rust");
    let r = Restarts::new(true);
    let (s, first) = r.serve_until(ws.path(), "failed").await;
    assert_eq!(r.runs(), 1, "{first}");
    assert!(
        first["precise_languages"][0]["error"]
            .to_string()
            .contains("more than one project"),
        "{first}"
    );
    r.stop(s).await;

    // A new process: the same failure is reported, and why it is not tried again.
    let (s, again) = r.serve_until(ws.path(), "failed").await;
    assert_eq!(r.runs(), 1, "{again}");
    let error = again["precise_languages"][0]["error"].to_string();
    assert!(
        error.contains("more than one project") && error.contains("not run again"),
        "{again}"
    );
    // A root file the indexer reads changes (a workspace manifest): it is tried again.
    let manifest = ws.path().join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("\n[workspace]\n");
    std::fs::write(&manifest, text).unwrap();
    r.stop(s).await;
    let (s, _) = r.serve_until(ws.path(), "failed").await;
    assert_eq!(r.runs(), 2);
    s.stop().await;
}
