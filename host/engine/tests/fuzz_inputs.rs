//! Property tests of what a checked-out repository feeds the engine (issue 19, ADR
//! 0025): source text of every language that is arbitrary, binary turned lossy, deeply
//! nested or enormous; `Cargo.toml`, `go.mod` and `Cargo.lock` text; `.gitignore`
//! files. Nothing may panic or overflow the stack. `PROPTEST_CASES` sets the number of
//! cases (64 by default here; the long run is `PROPTEST_CASES=5000`).

use proptest::prelude::*;
use scryer_engine::lang::LANGUAGES;

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text that looks like code: keywords, brackets, quotes, comments, newlines and
/// arbitrary characters mixed.
fn codeish() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("fn ".to_string()),
        Just("def ".to_string()),
        Just("func ".to_string()),
        Just("class ".to_string()),
        Just("impl ".to_string()),
        Just("pub ".to_string()),
        Just("mod ".to_string()),
        Just("use ".to_string()),
        Just("import ".to_string()),
        Just("export ".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("<".to_string()),
        Just(">".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("r#\"".to_string()),
        Just("/*".to_string()),
        Just("*/".to_string()),
        Just("//".to_string()),
        Just("#".to_string()),
        Just("\n".to_string()),
        Just("    ".to_string()),
        Just("::".to_string()),
        Just(".".to_string()),
        "[a-zA-Z_][a-zA-Z0-9_]{0,8}",
        any::<String>(),
    ];
    prop::collection::vec(token, 0..200).prop_map(|v| v.concat())
}

/// Every language's extraction as indexing runs it (`lang::extract_file`, where the
/// nesting guard is), for a whole run and for an edited file.
fn extract_everywhere(source: &str) {
    for lang in LANGUAGES {
        let ext = lang.extensions()[0];
        let path = format!("src/fuzz.{ext}");
        let module = lang.module_path("fuzz", &path);
        for edited in [false, true] {
            let _ = scryer_engine::lang::extract_file(*lang, source, &module, &path, edited);
        }
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_code_like_text_never_panics_an_extractor(source in codeish()) {
        extract_everywhere(&source);
    }

    #[test]
    fn binary_files_read_lossily_never_panic_an_extractor(
        bytes in prop::collection::vec(any::<u8>(), 0..4096)
    ) {
        extract_everywhere(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn manifests_and_lockfiles_of_any_text_never_panic(text in codeish()) {
        let _ = scryer_engine::indexer::crate_name_of(&text);
        let _ = scryer_engine::indexer::go_module_name_of(&text);
        let _ = scryer_engine::deps::parse_lockfile(&text);
        let lock = format!("version = 3\n\n[[package]]\n{text}\n");
        let _ = scryer_engine::deps::parse_lockfile(&lock);
    }

    #[test]
    fn any_gitignore_is_read_and_the_walk_finishes(
        lines in prop::collection::vec(
            prop_oneof![
                "[!*?/\\\\\\[\\]a-z.#-]{0,12}",
                any::<String>(),
                Just("**/".to_string()),
                Just("!src".to_string()),
            ],
            0..12,
        )
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "pub fn a() {}\n").unwrap();
        std::fs::write(root.join(".gitignore"), lines.join("\n")).unwrap();
        std::fs::write(root.join("src/.gitignore"), lines.join("\r\n")).unwrap();
        let n = scryer_engine::walk::walker(&root, |_| false).count();
        prop_assert!(n >= 1);
    }
}

/// Nesting this deep (brackets, blocks, calls) in a 2 MiB-stack thread: the extractors
/// must not recurse once per level.
#[test]
fn deeply_nested_sources_do_not_overflow_the_stack() {
    let depth = 20_000;
    let shapes = [
        format!(
            "fn f() {{ {} 1 {} }}\n",
            "{ ".repeat(depth),
            "} ".repeat(depth)
        ),
        format!("fn g() {{ {}1{} }}\n", "(".repeat(depth), ")".repeat(depth)),
        format!("x = {}1{}\n", "[".repeat(depth), "]".repeat(depth)),
        format!(
            "fn h() {{ {}0 }}\n",
            "a(".repeat(depth) + &")".repeat(depth)
        ),
        format!(
            "mod m {{ {} }}\n",
            "mod n { ".repeat(depth / 4) + &"}".repeat(depth / 4)
        ),
    ];
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            for s in &shapes {
                extract_everywhere(s);
            }
        })
        .unwrap()
        .join()
        .expect("an extractor overflowed its stack or panicked on deep nesting");
}

/// A 4 MiB file of one line and one of 200,000 short lines: extracted without panic.
#[test]
fn enormous_sources_are_extracted() {
    let one_line = format!("fn f() {{ let x = \"{}\"; }}", "a".repeat(4 << 20));
    let many = "pub fn f() {}\n".repeat(200_000);
    for s in [one_line, many] {
        extract_everywhere(&s);
    }
}
