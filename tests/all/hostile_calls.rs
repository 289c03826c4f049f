//! A battery of hostile and wrong tool calls through `scryer serve`, generated from
//! every published schema (issue 19, ADR 0025): wrong types, every enum wrong, numeric
//! extremes, 1 MB strings, control characters, path escapes in every path argument
//! (`..`, absolute paths outside every root, a link out of the root, `/proc`, a device),
//! missing required arguments, and projects that are not registered or were deleted.
//! Each must be an error naming the argument (or the path or project) and what is
//! accepted; the server must answer the next call; nothing may be written anywhere
//! (the project and a directory beside it are compared file by file afterwards).
//! A second test deletes a project from one session while another reads it.

use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::support::{Scryer, copy_dir, repo_root};

/// One generated call: the tool, its arguments, and what the error must name.
struct Case {
    tool: String,
    args: Value,
    /// The error text must contain one of these (the argument, the path or project).
    names: Vec<String>,
    what: String,
}

/// Words of an error that says what is accepted or what to do instead.
const ACCEPTED_WORDS: &[&str] = &[
    "accepted",
    "expected",
    "must",
    "pass ",
    "one of",
    "at most",
    "is required",
    "outside",
    "not registered",
    "registered projects",
    "no project",
    "not found",
    "not a directory",
    "does not exist",
    "refused",
    "use ",
    "try ",
    "remove it",
];

/// Cases answered on purpose without an error, each with the reason: `search_symbols`
/// takes free text, cut to its first 4096 bytes with a note saying so
/// (tests/search_tools.rs), and reads control characters as word separators.
const ANSWERED_ON_PURPOSE: &[(&str, &str)] = &[
    ("search_symbols", "a 1 MB string"),
    ("search_symbols", "control characters"),
];

/// `<tmp>/demo` (the fixture crate with an ADR and a link leading out) and
/// `<tmp>/outside` (a file no call may read, change or delete).
fn layout() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::Builder::new()
        .prefix("scryer-hostile-")
        .tempdir()
        .unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let root = base.join("demo");
    copy_dir(&repo_root().join("tests/fixtures/workspace"), &root);
    std::fs::create_dir_all(root.join("docs/adr")).unwrap();
    std::fs::write(
        root.join("docs/adr/0001-keep-shapes.md"),
        "---\nnumber: 1\ntitle: Keep shapes\nstatus: accepted\ndate: 2026-12-01\n---\n\n# Keep shapes\n\n## Decision\n\nShapes stay.\n",
    )
    .unwrap();
    let outside = base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.rs"), "pub fn leak_secret() {}\n").unwrap();
    std::fs::write(outside.join("0002-outside.md"), "# not an ADR of demo\n").unwrap();
    symlink(outside.join("secret.rs"), root.join("src/out_link.rs")).unwrap();
    symlink(&outside, root.join("docs/adr/out_dir")).unwrap();
    (tmp, root, outside)
}

/// Every file under `dir` (links not followed) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_symlink() {
                let target = std::fs::read_link(e.path()).unwrap();
                out.insert(e.path(), target.into_os_string().into_encoded_bytes());
            } else {
                out.insert(e.path(), std::fs::read(e.path()).unwrap());
            }
        }
    }
    out
}

/// A valid value for a required argument, so a case changes one argument only.
fn valid_value(name: &str, root: &Path) -> Value {
    match name {
        "symbol" | "qualified_name" | "name" => json!("total_area"),
        "query" => json!("area"),
        "file_path" => json!("src/lib.rs"),
        "path" | "root" => json!(root.to_str().unwrap()),
        "project" => json!("demo"),
        "title" => json!("A title"),
        "decision" => json!("A decision."),
        "adr_number" | "number" => json!(1),
        "line" => json!(9),
        "crate_name" | "crate" => json!("serde"),
        _ => json!("x"),
    }
}

/// The required arguments, and `symbol` where a schema requires "one of `symbol` or
/// `symbols`" in words (inspect_symbol), so that a case's error is about its argument.
fn base_args(schema: &Value, root: &Path) -> Map<String, Value> {
    let mut args = Map::new();
    for r in schema["required"].as_array().into_iter().flatten() {
        let name = r.as_str().unwrap();
        args.insert(name.to_string(), valid_value(name, root));
    }
    if args.is_empty() && schema["properties"].get("symbols").is_some() {
        args.insert("symbol".into(), valid_value("symbol", root));
    }
    args
}

fn is_path_arg(name: &str) -> bool {
    name.contains("path") || name == "root" || name == "dir"
}

/// The values of a path argument that lead out of every root or to special files.
fn path_escapes(root: &Path, outside: &Path) -> Vec<(String, String)> {
    let rel_out = "../outside/secret.rs".to_string();
    vec![
        (rel_out, "a relative path climbing out".into()),
        (
            "src/../../outside/secret.rs".into(),
            "`..` in the middle".into(),
        ),
        (
            outside.join("secret.rs").to_str().unwrap().into(),
            "an absolute path outside every root".into(),
        ),
        ("src/out_link.rs".into(), "a link leading out".into()),
        (
            root.join("docs/adr/out_dir/0002-outside.md")
                .to_str()
                .unwrap()
                .into(),
            "a file under a directory link leading out".into(),
        ),
        ("/proc/self/environ".into(), "/proc".into()),
        ("/dev/zero".into(), "a device".into()),
        ("/etc/passwd".into(), "a system file".into()),
        ("file:///etc/passwd".into(), "a file URL".into()),
        ("src/lib.rs\u{0}.md".into(), "a NUL byte".into()),
    ]
}

/// Wrong values for one property of a published schema, each with a description.
fn wrong_values(
    name: &str,
    spec: &Value,
    required: bool,
    root: &Path,
    outside: &Path,
) -> Vec<(Value, String)> {
    let mut out = Vec::new();
    match spec["type"].as_str().unwrap_or("") {
        "string" => {
            out.push((json!({"a": 1}), "an object for a string".into()));
            out.push((json!([1, 2]), "a list of numbers for a string".into()));
            out.push((json!("x".repeat(1 << 20)), "a 1 MB string".into()));
            if is_path_arg(name) {
                for (p, what) in path_escapes(root, outside) {
                    out.push((json!(p), what));
                }
            } else if name != "project" {
                out.push((json!("a\u{0}b\u{202e}"), "control characters".into()));
            }
        }
        "integer" | "number" => {
            out.push((json!("twelve"), "a word for a number".into()));
            out.push((json!(1e300), "1e300".into()));
            out.push((json!(i64::MIN), "i64::MIN".into()));
            out.push((json!(u64::MAX), "u64::MAX".into()));
            out.push((json!(-1), "-1".into()));
            out.push((json!(0.5), "a fraction".into()));
            out.push((json!({"n": 1}), "an object for a number".into()));
        }
        "boolean" => {
            out.push((json!("maybe"), "a word for a boolean".into()));
            out.push((json!(7), "7 for a boolean".into()));
            out.push((json!([true]), "a list for a boolean".into()));
        }
        "array" => {
            out.push((json!({"a": 1}), "an object for a list".into()));
            out.push((json!([{"a": 1}, 5]), "a list of objects".into()));
            out.push((json!(42), "a number for a list".into()));
        }
        _ => {}
    }
    if spec.get("enum").is_some() {
        out.push((
            json!("definitely-not-a-choice"),
            "an enum value not offered".into(),
        ));
        // An empty string is an absent argument for every router (the SDK's `Args`), so
        // `""` for an optional enum is a valid call: `record_adr` with `status: ""`
        // records a `proposed` ADR. Only a required one must be refused.
        if required {
            out.push((json!(""), "an empty enum value".into()));
        }
    }
    if name == "project" {
        out.push((
            json!("/root/elsewhere"),
            "a project nobody registered".into(),
        ));
        out.push((json!("deleted-project"), "a deleted project".into()));
        out.push((json!(999_999), "a project id that does not exist".into()));
        out.push((
            json!("../demo"),
            "a project named by a relative path".into(),
        ));
    }
    out
}

/// Every case the published tool list yields.
fn cases(tools: &[rmcp::model::Tool], root: &Path, outside: &Path) -> Vec<Case> {
    let mut out = Vec::new();
    for t in tools {
        let schema = Value::Object((*t.input_schema).clone());
        let base = base_args(&schema, root);
        if !base.is_empty() {
            out.push(Case {
                tool: t.name.to_string(),
                args: json!({}),
                names: base.keys().cloned().collect(),
                what: "no arguments where some are required".into(),
            });
        }
        let Some(props) = schema["properties"].as_object() else {
            continue;
        };
        for (name, spec) in props {
            let required = schema["required"]
                .as_array()
                .is_some_and(|r| r.iter().any(|r| r == name));
            for (value, what) in wrong_values(name, spec, required, root, outside) {
                if t.name == "index_workspace" && name == "path" && !what.contains("1 MB") {
                    // index_workspace takes any directory; its own cases follow below.
                    continue;
                }
                let mut args = base.clone();
                let shown = value
                    .as_str()
                    .map(|s| s.chars().take(60).collect::<String>());
                args.insert(name.clone(), value);
                let mut names = vec![format!("`{name}`"), name.clone()];
                names.extend(shown.filter(|s| s.len() > 3));
                out.push(Case {
                    tool: t.name.to_string(),
                    args: Value::Object(args),
                    names,
                    what,
                });
            }
        }
    }
    for (path, what) in [
        ("/proc", "indexing /proc"),
        ("/dev", "indexing /dev"),
        ("/dev/zero", "indexing a device"),
        (
            "/nonexistent/scryer/dir",
            "indexing a path that does not exist",
        ),
        (
            "relative/dir",
            "indexing a relative path that does not exist",
        ),
    ] {
        out.push(Case {
            tool: "index_workspace".into(),
            args: json!({"path": path}),
            names: vec![path.into(), "`path`".into()],
            what: what.into(),
        });
    }
    out
}

fn judge(case: &Case, text: &str, is_error: bool) -> Result<(), String> {
    let head: String = text.chars().take(300).collect();
    if !is_error {
        return Err(format!("accepted: {head}"));
    }
    let lower = text.to_lowercase();
    if !case.names.iter().any(|n| text.contains(n.as_str())) {
        return Err(format!("does not name {:?}: {head}", case.names[0]));
    }
    if !ACCEPTED_WORDS.iter().any(|w| lower.contains(w)) {
        return Err(format!("does not say what is accepted: {head}"));
    }
    Ok(())
}

#[tokio::test]
async fn every_hostile_call_is_refused_clearly_and_nothing_is_written() {
    let (_tmp, root, outside) = layout();
    let s = Scryer::start(&[], &[]).await;
    s.index(&root).await;
    let (text, is_error) = s
        .call("switch_active_project", json!({"project": "demo"}))
        .await;
    assert!(!is_error, "{text}");
    let before = (snapshot(&root), snapshot(&outside));
    let tools = s.client.list_all_tools().await.unwrap();
    let cases = cases(&tools, &root, &outside);
    let mut failures = Vec::new();
    for case in &cases {
        let (text, is_error) = s.call(&case.tool, case.args.clone()).await;
        assert!(
            !text.contains("leak_secret"),
            "{} with {} returned outside content",
            case.tool,
            case.what
        );
        let on_purpose = ANSWERED_ON_PURPOSE
            .iter()
            .any(|(tool, what)| case.tool == *tool && case.what == *what && !is_error);
        if let Err(why) =
            judge(case, &text, is_error).or_else(|e| if on_purpose { Ok(()) } else { Err(e) })
        {
            failures.push(format!("{} with {}: {why}", case.tool, case.what));
        }
        let (alive, is_error) = s.call("list_projects", json!({})).await;
        assert!(
            !is_error && alive.contains("demo"),
            "after {} with {}: {alive}",
            case.tool,
            case.what
        );
    }
    eprintln!("{} hostile calls over {} tools", cases.len(), tools.len());
    assert!(cases.len() >= 200, "only {} cases", cases.len());
    eprintln!(
        "{} not refused clearly:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} of {} calls were not refused clearly:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    let after = (snapshot(&root), snapshot(&outside));
    let changed: Vec<&PathBuf> = before
        .0
        .keys()
        .chain(before.1.keys())
        .chain(after.0.keys())
        .chain(after.1.keys())
        .filter(|k| before.0.get(*k).or(before.1.get(*k)) != after.0.get(*k).or(after.1.get(*k)))
        .collect();
    assert!(
        changed.is_empty(),
        "a refused call changed files: {changed:?}"
    );
    s.stop().await;
}
