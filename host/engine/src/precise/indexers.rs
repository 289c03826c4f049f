//! Which SCIP indexer serves which language, how it is found and how it is invoked.
//!
//! An indexer is looked up, in order: the language's override variable
//! (`SCRYER_PRECISE_RUST_CMD`, `…_PYTHON_CMD`, `…_TYPESCRIPT_CMD`, `…_GO_CMD`: a program path
//! or name, optionally followed by arguments put before the indexer's own), then `PATH`,
//! then (Rust only) `rustup which rust-analyzer`. A found program is asked for its
//! version; one that cannot answer is reported missing with the reason.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A language a SCIP indexer serves, with the file languages (as the index stores
/// them) it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PreciseLanguage {
    Rust,
    Python,
    TypeScript,
    Go,
}

impl PreciseLanguage {
    pub const ALL: [PreciseLanguage; 4] = [
        PreciseLanguage::Rust,
        PreciseLanguage::Python,
        PreciseLanguage::TypeScript,
        PreciseLanguage::Go,
    ];

    /// `rust`, `python`, `typescript`, `go`.
    pub fn name(self) -> &'static str {
        match self {
            PreciseLanguage::Rust => "rust",
            PreciseLanguage::Python => "python",
            PreciseLanguage::TypeScript => "typescript",
            PreciseLanguage::Go => "go",
        }
    }

    pub fn named(name: &str) -> Option<PreciseLanguage> {
        Self::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The stored file languages (`source_file.language`) this indexer covers.
    pub fn file_languages(self) -> &'static [&'static str] {
        match self {
            PreciseLanguage::Rust => &["rust"],
            PreciseLanguage::Python => &["python"],
            PreciseLanguage::TypeScript => &["typescript", "javascript"],
            PreciseLanguage::Go => &["go"],
        }
    }

    /// The indexer covering files stored with language `file_language`.
    pub fn for_file_language(file_language: &str) -> Option<PreciseLanguage> {
        Self::ALL
            .into_iter()
            .find(|l| l.file_languages().contains(&file_language))
    }

    /// The indexer's program name.
    pub fn program(self) -> &'static str {
        match self {
            PreciseLanguage::Rust => "rust-analyzer",
            PreciseLanguage::Python => "scip-python",
            PreciseLanguage::TypeScript => "scip-typescript",
            PreciseLanguage::Go => "scip-go",
        }
    }

    /// The variable that overrides the command.
    pub fn override_var(self) -> String {
        format!("SCRYER_PRECISE_{}_CMD", self.name().to_ascii_uppercase())
    }

    /// How to install the indexer, for `scryer doctor` and the status.
    pub fn install_hint(self) -> &'static str {
        match self {
            PreciseLanguage::Rust => "rustup component add rust-analyzer",
            PreciseLanguage::Python => {
                "npm install -g @sourcegraph/scip-python@0.6.6 (needs node on PATH)"
            }
            PreciseLanguage::TypeScript => {
                "npm install -g @sourcegraph/scip-typescript@0.4.0 (needs node on PATH)"
            }
            PreciseLanguage::Go => "go install github.com/sourcegraph/scip-go/cmd/scip-go@latest",
        }
    }
}

impl PreciseLanguage {
    /// Files at a project's root the indexer reads besides the sources: manifests, lock
    /// files, toolchain and compiler settings. Part of a run's inputs (`inputs_digest`).
    pub fn root_inputs(self) -> &'static [&'static str] {
        match self {
            PreciseLanguage::Rust => &[
                "Cargo.toml",
                "Cargo.lock",
                "rust-toolchain.toml",
                "rust-toolchain",
                ".cargo/config.toml",
            ],
            PreciseLanguage::Python => &[
                "pyproject.toml",
                "setup.py",
                "setup.cfg",
                "requirements.txt",
            ],
            PreciseLanguage::TypeScript => &[
                "package.json",
                "package-lock.json",
                "tsconfig.json",
                "jsconfig.json",
            ],
            PreciseLanguage::Go => &["go.mod", "go.sum", "go.work"],
        }
    }

    /// What to do about a failure the indexer is known to report (`said`, the lines it
    /// printed), for the status: `None` for any other failure.
    pub fn failure_advice(self, said: &str) -> Option<&'static str> {
        match self {
            PreciseLanguage::Rust if said.contains("more than one project") => Some(
                "rust-analyzer indexes one Cargo workspace or package: give the directory a \
                 workspace Cargo.toml listing its crates, or index each crate as a project of its own",
            ),
            _ => None,
        }
    }
}

/// A found, working indexer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Indexer {
    pub language: PreciseLanguage,
    /// The program and any arguments given in the override, before the indexer's own.
    pub command: Vec<String>,
    /// What `--version` printed (first line).
    pub version: String,
}

/// What looking for one language's indexer found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detection {
    Found(Indexer),
    /// Not found or not working: why, and how to install it.
    Missing {
        language: PreciseLanguage,
        reason: String,
    },
}

impl Detection {
    pub fn language(&self) -> PreciseLanguage {
        match self {
            Detection::Found(i) => i.language,
            Detection::Missing { language, .. } => *language,
        }
    }
}

/// Looks for the indexer of `language`.
pub fn detect(language: PreciseLanguage) -> Detection {
    let missing = |reason: String| Detection::Missing { language, reason };
    let command = match std::env::var(language.override_var()) {
        Ok(cmd) if !cmd.trim().is_empty() => {
            let words: Vec<String> = cmd.split_whitespace().map(str::to_string).collect();
            match resolve_program(&words[0]) {
                Some(p) => std::iter::once(p.to_string_lossy().into_owned())
                    .chain(words[1..].iter().cloned())
                    .collect(),
                None => {
                    return missing(format!(
                        "{} is set to `{cmd}`, which is not an executable file",
                        language.override_var()
                    ));
                }
            }
        }
        _ => match resolve_program(language.program()).or_else(|| rustup_which(language)) {
            Some(p) => vec![p.to_string_lossy().into_owned()],
            None => {
                return missing(format!(
                    "`{}` is not on PATH; install it with `{}`",
                    language.program(),
                    language.install_hint()
                ));
            }
        },
    };
    match version_of(&command) {
        Ok(version) => Detection::Found(Indexer {
            language,
            command,
            version,
        }),
        Err(why) => missing(format!(
            "`{}` does not run ({why}); install it with `{}`",
            command.join(" "),
            language.install_hint()
        )),
    }
}

/// `name` as an executable file: a path as given, else the first match on `PATH`.
fn resolve_program(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `rustup which rust-analyzer`, for Rust only.
fn rustup_which(language: PreciseLanguage) -> Option<PathBuf> {
    if language != PreciseLanguage::Rust {
        return None;
    }
    let rustup = resolve_program("rustup")?;
    let out = Command::new(rustup)
        .args(["which", "rust-analyzer"])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (out.status.success() && is_executable(&p)).then_some(p)
}

/// The first line `--version` prints, or why it failed.
fn version_of(command: &[String]) -> Result<String, String> {
    let out = Command::new(&command[0])
        .args(&command[1..])
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    match (out.status.success(), first) {
        (true, Some(v)) => Ok(v.to_string()),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            Err(err
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .unwrap_or("no version printed")
                .chars()
                .take(200)
                .collect())
        }
    }
}

/// rust-analyzer's configuration for a precise run (`--config-path`, written beside the
/// output) of the crate at `root`: every cargo feature on, so code behind features is
/// read, as the tree-sitter index reads it (tokio enables none by default, which left
/// most of it unread); and the `cfg`s the crate declares for its documentation build
/// (ADR 0031), beside `debug_assertions`: the crate's own test build. rust-analyzer's
/// default list also sets `miri`, which only the Miri interpreter sets: it would leave
/// out every `cfg(not(miri))` test a normal `cargo test` builds.
pub fn rust_analyzer_config(root: &Path) -> String {
    // `cargo.cfgs` is a list of `key` or `key=value` (it replaces the defaults).
    let mut cfgs: Vec<String> = vec!["debug_assertions".into()];
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    for (key, value) in documented_cfgs(&manifest) {
        cfgs.push(match value {
            Some(v) => format!("{key}={v}"),
            None => key,
        });
    }
    serde_json::json!({"cargo": {"features": "all", "cfgs": cfgs}}).to_string()
}

/// The `--cfg` options of `[package.metadata.docs.rs]` (`rustc-args`, `rustdoc-args`):
/// the configuration a crate's author builds to show all of its API (tokio:
/// `tokio_unstable`). `docsrs` itself is left out: it marks documentation-only stand-ins
/// (a platform's API shown on every platform), not code the crate builds.
fn documented_cfgs(manifest: &str) -> Vec<(String, Option<String>)> {
    let Ok(doc) = manifest.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(docs_rs) = doc
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("docs"))
        .and_then(|d| d.get("rs"))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for list in ["rustc-args", "rustdoc-args"] {
        let args: Vec<&str> = docs_rs
            .get(list)
            .and_then(|a| a.as_array())
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let spec = match arg.strip_prefix("--cfg") {
                Some("") => it.next().copied(),
                Some(rest) => rest.strip_prefix('='),
                None => None,
            };
            let Some(spec) = spec else { continue };
            let (key, value) = match spec.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim().trim_matches('"').to_string())),
                None => (spec.trim(), None),
            };
            if key.is_empty() || key == "docsrs" || out.iter().any(|(k, _)| k == key) {
                continue;
            }
            out.push((key.to_string(), value));
        }
    }
    out
}

/// Where the rust-analyzer configuration of a run into `output` is written.
pub fn rust_analyzer_config_path(output: &Path) -> PathBuf {
    output.with_file_name("rust-analyzer.json")
}

/// The indexer's command line to index `root` into `output`, and its working directory.
pub fn invocation(
    indexer: &Indexer,
    root: &Path,
    output: &Path,
    project_name: &str,
) -> (Vec<String>, PathBuf) {
    let out = output.to_string_lossy().into_owned();
    let mut args = indexer.command.clone();
    match indexer.language {
        PreciseLanguage::Rust => {
            args.extend(["scip".into(), root.to_string_lossy().into_owned()]);
            args.extend(["--output".into(), out]);
            args.extend([
                "--config-path".into(),
                rust_analyzer_config_path(output)
                    .to_string_lossy()
                    .into_owned(),
            ]);
        }
        PreciseLanguage::Python => {
            // scip-python 0.6.6 crashes without --project-version.
            args.extend(["index".into(), "--project-name".into(), project_name.into()]);
            args.extend([
                "--project-version".into(),
                "0".into(),
                "--output".into(),
                out,
            ]);
        }
        PreciseLanguage::TypeScript => {
            args.push("index".into());
            if !root.join("tsconfig.json").exists() {
                args.push("--infer-tsconfig".into());
            }
            args.extend(["--no-progress-bar".into(), "--output".into(), out]);
        }
        PreciseLanguage::Go => {
            args.extend(["--output".into(), out]);
        }
    }
    (args, root.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_map_to_their_file_languages() {
        assert_eq!(
            PreciseLanguage::for_file_language("javascript"),
            Some(PreciseLanguage::TypeScript)
        );
        assert_eq!(
            PreciseLanguage::for_file_language("rust"),
            Some(PreciseLanguage::Rust)
        );
        assert_eq!(PreciseLanguage::for_file_language("c"), None);
        assert_eq!(
            PreciseLanguage::Python.override_var(),
            "SCRYER_PRECISE_PYTHON_CMD"
        );
    }

    #[test]
    fn a_rust_invocation_turns_every_feature_on() {
        let ix = Indexer {
            language: PreciseLanguage::Rust,
            command: vec!["rust-analyzer".into()],
            version: "1.95.0".into(),
        };
        let (args, _) = invocation(&ix, Path::new("/p"), Path::new("/t/index.scip"), "demo");
        assert_eq!(
            args,
            [
                "rust-analyzer",
                "scip",
                "/p",
                "--output",
                "/t/index.scip",
                "--config-path",
                "/t/rust-analyzer.json"
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let config: serde_json::Value =
            serde_json::from_str(&rust_analyzer_config(dir.path())).unwrap();
        assert_eq!(
            config,
            serde_json::json!({"cargo": {"features": "all",
                "cfgs": ["debug_assertions"]}})
        );
    }

    #[test]
    fn the_cfgs_a_crate_documents_itself_with_are_turned_on() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            r#"[package]
name = "demo"
version = "1.0.0"

[package.metadata.docs.rs]
all-features = true
rustdoc-args = ["--cfg", "docsrs", "--cfg", "demo_unstable"]
rustc-args = ["--cfg=demo_unstable", "--cfg", 'level="2"', "-Zflag"]
"#,
        )
        .unwrap();
        let config: serde_json::Value =
            serde_json::from_str(&rust_analyzer_config(dir.path())).unwrap();
        assert_eq!(
            config["cargo"]["cfgs"],
            serde_json::json!(["debug_assertions", "demo_unstable", "level=2"])
        );
        // A manifest that does not parse documents nothing.
        assert!(documented_cfgs("[package").is_empty());
    }

    #[test]
    fn a_python_invocation_names_the_project_and_a_version() {
        let ix = Indexer {
            language: PreciseLanguage::Python,
            command: vec!["scip-python".into()],
            version: "0.6.6".into(),
        };
        let (args, cwd) = invocation(&ix, Path::new("/p"), Path::new("/t/i.scip"), "demo");
        assert_eq!(
            args,
            [
                "scip-python",
                "index",
                "--project-name",
                "demo",
                "--project-version",
                "0",
                "--output",
                "/t/i.scip"
            ]
        );
        assert_eq!(cwd, Path::new("/p"));
    }

    #[test]
    fn a_missing_program_in_the_override_is_named() {
        // SAFETY: tests of this module only read this variable here.
        unsafe { std::env::set_var("SCRYER_PRECISE_GO_CMD", "/nonexistent/scip-go") };
        let d = detect(PreciseLanguage::Go);
        unsafe { std::env::remove_var("SCRYER_PRECISE_GO_CMD") };
        match d {
            Detection::Missing { reason, .. } => {
                assert!(reason.contains("/nonexistent/scip-go"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
}
