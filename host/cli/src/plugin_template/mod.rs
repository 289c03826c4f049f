//! `scryer plugin new <name>`: writes a router plugin that builds for `wasm32-wasip2`
//! and loads with `scryer plugin add` (docs/plugins.md, "Writing a plugin").

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

const CARGO_TOML: &str = include_str!("Cargo.toml.tmpl");
const LIB_RS: &str = include_str!("lib.rs.tmpl");
const README: &str = include_str!("README.md.tmpl");
const MANIFEST: &str = include_str!("manifest.toml.tmpl");
const GITIGNORE: &str = include_str!("gitignore.tmpl");

/// The names one plugin name gives the template.
#[derive(Debug, PartialEq, Eq)]
struct Names {
    /// The plugin (and package) name: `word-stats`.
    name: String,
    /// The crate's identifier and the built file's stem: `word_stats`.
    krate: String,
    /// The router type: `WordStats`.
    type_name: String,
    /// The tool: `word_stats_words`, prefixed so it clashes with no other plugin's.
    tool: String,
}

impl Names {
    /// Checks `name` and derives the rest. Accepted: lowercase ASCII letters, digits,
    /// `-` and `_`, starting with a letter, at most 40 characters (it becomes a file
    /// name, a crate name, a Rust type and a tool-name prefix).
    fn new(name: &str) -> Result<Names> {
        let ok_chars = name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        let starts_with_letter = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        let ends_well = !name.ends_with(['-', '_']);
        if !ok_chars || !starts_with_letter || !ends_well || name.len() > 40 {
            bail!(
                "plugin name {name:?} cannot be used; accepted: lowercase letters, digits, `-` and `_`, \
                 starting with a letter and not ending with `-` or `_`, at most 40 characters (e.g. `word-stats`)"
            );
        }
        let krate = name.replace('-', "_");
        let type_name: String = krate
            .split('_')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let mut c = p.chars();
                let first = c.next().map(|f| f.to_ascii_uppercase());
                first.into_iter().chain(c).collect::<String>()
            })
            .collect();
        Ok(Names {
            tool: format!("{krate}_words"),
            name: name.to_string(),
            krate,
            type_name,
        })
    }

    fn fill(&self, template: &str, sdk: &Path) -> String {
        template
            .replace("{{name}}", &self.name)
            .replace("{{crate}}", &self.krate)
            .replace("{{Type}}", &self.type_name)
            .replace("{{tool}}", &self.tool)
            .replace("{{sdk_version}}", SDK_VERSION)
            .replace("{{sdk_patch}}", &sdk_patch(sdk))
            .replace("{{sdk_path}}", &toml_path(sdk))
    }
}

/// The SDK version a new plugin depends on: the one this binary was built with.
const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The path override that builds the plugin against an SDK on this machine (a scryer
/// tree's `plugins/sdk`, or an unpacked `cargo package` of it) instead of a registry.
fn sdk_patch(sdk: &Path) -> String {
    format!(
        "\n# Where the SDK comes from: this path (a scryer tree's plugins/sdk) instead of a\n\
         # registry. Delete these two lines to use the published crate.\n\
         [patch.crates-io]\n\
         scryer-plugin-sdk = {{ path = \"{}\" }}\n",
        toml_path(sdk)
    )
}

/// A path as it goes inside a TOML basic string.
fn toml_path(p: &Path) -> String {
    p.display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

/// The SDK this binary was built with: `plugins/sdk` of its source tree, found from
/// where it was compiled, else above the running executable (a target dir inside the
/// tree).
fn find_sdk() -> Option<PathBuf> {
    let from_source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/sdk");
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .map(|a| a.join("plugins/sdk"))
            .find(|p| is_sdk(p))
    });
    std::iter::once(from_source)
        .chain(from_exe)
        .find(|p| is_sdk(p))
        .and_then(|p| p.canonicalize().ok())
}

fn is_sdk(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .is_ok_and(|t| t.contains("name = \"scryer-plugin-sdk\""))
}

/// What `plugin new` wrote, for its report.
pub struct Created {
    pub dir: PathBuf,
    pub sdk: PathBuf,
    pub tool: String,
    pub wasm: String,
    pub files: Vec<PathBuf>,
}

/// Writes the template for `name` into `dir` (default `./<name>`), which must not exist
/// or be empty. `sdk` overrides where the SDK is found.
pub fn create(name: &str, dir: Option<&Path>, sdk: Option<&Path>) -> Result<Created> {
    let names = Names::new(name)?;
    let sdk = match sdk {
        Some(p) => {
            if !is_sdk(p) {
                bail!(
                    "--sdk-path {}: no scryer-plugin-sdk there (expected its Cargo.toml; it is `plugins/sdk` of a scryer source tree)",
                    p.display()
                );
            }
            p.canonicalize()
                .with_context(|| format!("resolving {}", p.display()))?
        }
        None => find_sdk().context(
            "the scryer plugin SDK was not found (this binary's source tree is not on this machine); \
             pass --sdk-path <scryer tree>/plugins/sdk",
        )?,
    };
    let dir = std::path::absolute(dir.map(Path::to_path_buf).unwrap_or_else(|| name.into()))?;
    if dir.exists() {
        let occupied = std::fs::read_dir(&dir)
            .with_context(|| format!("{} exists and cannot be read", dir.display()))?
            .next()
            .is_some();
        if occupied {
            bail!(
                "{} already exists and is not empty; choose another --dir or remove it",
                dir.display()
            );
        }
    }
    let mut files: Vec<(PathBuf, String)> = vec![
        (dir.join("Cargo.toml"), names.fill(CARGO_TOML, &sdk)),
        (dir.join("src/lib.rs"), names.fill(LIB_RS, &sdk)),
        (dir.join("README.md"), names.fill(README, &sdk)),
        (
            dir.join(format!("{}.toml", names.name)),
            names.fill(MANIFEST, &sdk),
        ),
        (dir.join(".gitignore"), names.fill(GITIGNORE, &sdk)),
    ];
    // The SDK's tree (or its package) pins the versions it is tested with; starting
    // from its lock lets the plugin build offline from cargo's cache (cargo drops what
    // it does not use).
    if let Some(lock) = std::iter::once(sdk.join("Cargo.lock"))
        .chain(sdk.ancestors().nth(2).map(|tree| tree.join("Cargo.lock")))
        .find_map(|p| std::fs::read_to_string(p).ok())
    {
        files.push((dir.join("Cargo.lock"), lock));
    }
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("creating {}", dir.display()))?;
    for (path, text) in &files {
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(Created {
        wasm: format!("{}.wasm", names.krate),
        tool: names.tool,
        dir,
        sdk,
        files: files.into_iter().map(|(p, _)| p).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_gives_the_crate_type_and_tool_names() {
        assert_eq!(
            Names::new("word-stats").unwrap(),
            Names {
                name: "word-stats".into(),
                krate: "word_stats".into(),
                type_name: "WordStats".into(),
                tool: "word_stats_words".into(),
            }
        );
        assert_eq!(Names::new("greeter2").unwrap().type_name, "Greeter2");
    }

    #[test]
    fn unusable_names_are_refused_with_what_is_accepted() {
        for bad in ["", "Word", "2words", "a b", "x-", "a/b", &"a".repeat(41)] {
            let e = Names::new(bad).unwrap_err().to_string();
            assert!(e.contains("accepted: lowercase letters"), "{bad}: {e}");
        }
    }

    #[test]
    fn every_placeholder_is_filled() {
        let names = Names::new("word-stats").unwrap();
        for t in [CARGO_TOML, LIB_RS, README, MANIFEST, GITIGNORE] {
            let out = names.fill(t, Path::new("/src/scryer/plugins/sdk"));
            assert!(!out.contains("{{"), "{out}");
        }
        let cargo = names.fill(CARGO_TOML, Path::new("/a \"b\"/sdk"));
        assert!(cargo.contains(r#"path = "/a \"b\"/sdk""#), "{cargo}");
    }

    #[test]
    fn the_sdk_of_this_tree_is_found_and_written_into_the_template() {
        let dir = tempfile::tempdir().unwrap();
        let created = create("word-stats", Some(&dir.path().join("p")), None).unwrap();
        assert!(is_sdk(&created.sdk), "{}", created.sdk.display());
        let cargo = std::fs::read_to_string(created.dir.join("Cargo.toml")).unwrap();
        assert!(cargo.contains(&toml_path(&created.sdk)), "{cargo}");
        assert!(created.dir.join("word-stats.toml").is_file());
        assert!(created.dir.join("Cargo.lock").is_file());
        assert_eq!(created.wasm, "word_stats.wasm");
        // Not over a folder with something in it.
        let e = create("word-stats", Some(&created.dir), None)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("is not empty"), "{e}");
        let e = create("x", Some(&dir.path().join("q")), Some(dir.path()))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no scryer-plugin-sdk there"), "{e}");
    }
}
