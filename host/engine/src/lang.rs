//! Languages behind one trait: adding a language is adding a module here and a line in
//! [`LANGUAGES`]. Everything language-specific the rest of the host needs (extensions,
//! the manifest that roots a package, the files that mark a project, the directories a
//! walk skips, how a call reads as an edge) is a method of [`Language`]; no other module
//! names a language.
//!
//! Every extractor produces the same [`FileSymbols`] as the Rust one: qualified names are
//! joined with `::` whatever the language (`pkg::module::Class::method`), lines and columns
//! are 1-based, and `enclosing_symbol` is the innermost enclosing function or type (or the
//! module at top level).

mod common;
pub mod go;
pub mod python;
mod rust;
#[cfg(test)]
mod test_rows;
pub mod typescript;

use crate::model::FileSymbols;

/// One source language the index understands.
pub trait Language: Sync {
    /// `"rust"`, `"python"`, ...: what the index stores as the file's language.
    fn name(&self) -> &'static str;
    /// File extensions (without the dot) handled by this language.
    fn extensions(&self) -> &'static [&'static str];
    /// The module path of a file, from its path relative to the package root; the first
    /// element is the package (crate, project) name.
    fn module_path(&self, package: &str, relative_path: &str) -> Vec<String>;
    /// Definitions and references of one file. `path` is the file's path (relative to the
    /// project root); some languages need its name (`__init__.py`, `.tsx`).
    fn extract(&self, source: &str, module_path: &[String], path: &str) -> FileSymbols;
    /// [`extract`](Self::extract) for a file edited since it was indexed (a refresh),
    /// where a language may reuse what it kept from the last edit. Same result.
    fn extract_edited(&self, source: &str, module_path: &[String], path: &str) -> FileSymbols {
        self.extract(source, module_path, path)
    }
    /// The manifest that roots a package of this language (`Cargo.toml`, `go.mod`) and
    /// names it; files of a language without one belong to the project's own package.
    fn manifest(&self) -> Option<Manifest> {
        None
    }
    /// Files whose presence makes a directory a project root of this language
    /// (`pyproject.toml`, `package.json`), so a session started there indexes it unasked.
    fn project_markers(&self) -> &'static [&'static str] {
        &[]
    }
    /// Directory names a walk never enters, whatever the ignore files say, because this
    /// language's tools put dependencies or caches there (`node_modules`, `__pycache__`).
    fn skipped_dirs(&self) -> &'static [&'static str] {
        &[]
    }
    /// Whether a plain call of an upper-case name constructs something (a tuple struct, a
    /// variant, a class: `Some(x)`, `Parser()`); in Go an upper-case name is merely
    /// exported, so there it is a call like any other.
    fn upper_case_call_constructs(&self) -> bool {
        true
    }
}

/// A package manifest: its file name and how to read the package's name from its text.
#[derive(Clone, Copy)]
pub struct Manifest {
    pub file_name: &'static str,
    pub package_name: fn(&str) -> Option<String>,
}

impl std::fmt::Debug for dyn Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every supported language.
pub static LANGUAGES: &[&dyn Language] = &[
    &rust::Rust,
    &python::Python,
    &typescript::TypeScript,
    &typescript::JavaScript,
    &go::Go,
];

/// The rows of one file in `lang`, the only way indexing extracts a file: a source
/// nested deeper than [`crate::file_limits::MAX_NESTING`] is not walked (the extractors
/// recurse over the syntax tree, and a hostile file 20,000 brackets deep overflowed a
/// worker's stack), and is stored with no rows and a parse error, whatever its language.
/// `edited`: the file changed since it was indexed (see [`Language::extract_edited`]).
pub fn extract_file(
    lang: &dyn Language,
    source: &str,
    module_path: &[String],
    path: &str,
    edited: bool,
) -> FileSymbols {
    if crate::file_limits::too_deeply_nested(source) {
        return FileSymbols {
            has_parse_errors: true,
            ..FileSymbols::default()
        };
    }
    if edited {
        lang.extract_edited(source, module_path, path)
    } else {
        lang.extract(source, module_path, path)
    }
}

/// The language of a file, by its extension.
pub fn language_for(path: &str) -> Option<&'static dyn Language> {
    let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (_, ext) = file.rsplit_once('.')?;
    LANGUAGES
        .iter()
        .copied()
        .find(|l| l.extensions().contains(&ext))
}

/// The language called `name` (`"rust"`, `"python"`, ...).
pub fn language_named(name: &str) -> Option<&'static dyn Language> {
    LANGUAGES.iter().copied().find(|l| l.name() == name)
}

/// The manifest called `file_name` of some language, if it is one.
pub fn manifest_named(file_name: &str) -> Option<Manifest> {
    LANGUAGES
        .iter()
        .filter_map(|l| l.manifest())
        .find(|m| m.file_name == file_name)
}

/// Every language's project markers, in [`LANGUAGES`] order.
pub fn project_markers() -> impl Iterator<Item = &'static str> {
    LANGUAGES
        .iter()
        .flat_map(|l| l.project_markers().iter().copied())
}

/// Whether some language's tools keep dependencies or caches in directories called `name`.
pub fn is_skipped_dir_name(name: &str) -> bool {
    LANGUAGES.iter().any(|l| l.skipped_dirs().contains(&name))
}

/// The edge a `call` / `method_call` reference to `name` is in a file of `language`
/// (ADR 0013): `"instantiates"` for a plain call of an upper-case name where the
/// language constructs that way, `"calls"` otherwise. The database reads call references
/// as edges with this rule (`scryer_db::Db::edges_from` takes it).
pub fn call_edge_kind(language: &str, site_kind: &str, name: &str) -> &'static str {
    let upper = name.chars().next().is_some_and(char::is_uppercase);
    let constructs = language_named(language).is_none_or(|l| l.upper_case_call_constructs());
    if site_kind == "call" && upper && constructs {
        "instantiates"
    } else {
        "calls"
    }
}

/// Every extension handled by some language.
pub fn supported_extensions() -> impl Iterator<Item = &'static str> {
    LANGUAGES
        .iter()
        .flat_map(|l| l.extensions().iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One nesting guard for every language, before any extractor walks the tree.
    #[test]
    fn a_source_nested_past_the_limit_is_not_walked_in_any_language() {
        let depth = crate::file_limits::MAX_NESTING * 20;
        for l in LANGUAGES {
            let path = format!("deep.{}", l.extensions()[0]);
            let module = l.module_path("demo", &path);
            let src = format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth));
            for edited in [false, true] {
                let f = extract_file(*l, &src, &module, &path, edited);
                assert!(f.has_parse_errors, "{}", l.name());
                assert!(
                    f.definitions.is_empty() && f.references.is_empty(),
                    "{}",
                    l.name()
                );
            }
        }
    }

    #[test]
    fn a_call_of_an_upper_case_name_instantiates_except_in_go() {
        assert_eq!(call_edge_kind("rust", "call", "Point"), "instantiates");
        assert_eq!(call_edge_kind("python", "call", "Parser"), "instantiates");
        assert_eq!(call_edge_kind("go", "call", "NewServer"), "calls");
        assert_eq!(call_edge_kind("rust", "method_call", "Run"), "calls");
        assert_eq!(call_edge_kind("rust", "call", "helper"), "calls");
    }

    #[test]
    fn manifests_markers_and_skipped_dirs_come_from_the_languages() {
        assert_eq!(
            manifest_named("Cargo.toml").unwrap().file_name,
            "Cargo.toml"
        );
        assert_eq!(
            (manifest_named("go.mod").unwrap().package_name)("module example.com/x/v2\n"),
            Some("x".into())
        );
        assert!(manifest_named("package.json").is_none());
        assert!(language_named("python").unwrap().manifest().is_none());
        let markers: Vec<_> = project_markers().collect();
        for m in [
            "Cargo.toml",
            "go.mod",
            "pyproject.toml",
            "setup.py",
            "package.json",
            "tsconfig.json",
        ] {
            assert!(markers.contains(&m), "{m}");
        }
        for d in ["node_modules", "__pycache__", ".venv"] {
            assert!(is_skipped_dir_name(d), "{d}");
        }
        assert!(!is_skipped_dir_name("src"));
    }

    #[test]
    fn picks_the_language_by_extension() {
        assert_eq!(language_for("src/lib.rs").map(|l| l.name()), Some("rust"));
        assert_eq!(language_for("a/b/c.py").map(|l| l.name()), Some("python"));
        assert_eq!(language_for("a/b/c.pyi").map(|l| l.name()), Some("python"));
        assert_eq!(language_for("a/b.ts").map(|l| l.name()), Some("typescript"));
        assert_eq!(
            language_for("a/b.tsx").map(|l| l.name()),
            Some("typescript")
        );
        assert_eq!(
            language_for("a/b.jsx").map(|l| l.name()),
            Some("javascript")
        );
        assert_eq!(
            language_for("a/b.cjs").map(|l| l.name()),
            Some("javascript")
        );
        assert_eq!(language_for("cmd/main.go").map(|l| l.name()), Some("go"));
        assert!(language_for("README.md").is_none());
        assert!(language_for("Makefile").is_none());
        assert_eq!(language_named("python").map(|l| l.name()), Some("python"));
    }

    /// Code-like text in each language, `lines` lines long.
    fn generated(lang: &str, lines: usize) -> String {
        let mut out = String::new();
        let mut i = 0;
        while out.lines().count() < lines {
            let block = match lang {
                "python" => format!(
                    "class C{i}(Base):\n    \"\"\"Doc.\"\"\"\n    def m(self, x: int) -> str:\n        y = helper(x)\n        return self.n(y, CONST)\n\n"
                ),
                "typescript" | "javascript" => format!(
                    "export class C{i} extends Base {{\n  m(x: number): string {{\n    const y = helper(x);\n    return this.n(y, CONST);\n  }}\n}}\n"
                ),
                "go" => format!(
                    "type C{i} struct {{\n\tX int\n}}\n\nfunc (c *C{i}) M(x int) string {{\n\ty := helper(x)\n\treturn c.N(y, Const)\n}}\n"
                ),
                _ => format!(
                    "pub struct C{i} {{ x: u32 }}\nimpl C{i} {{\n    pub fn m(&self, x: u32) -> u32 {{\n        let y = helper(x);\n        self.n(y, CONST)\n    }}\n}}\n"
                ),
            };
            out.push_str(&block);
            i += 1;
        }
        out
    }

    fn sample_path(l: &dyn Language) -> String {
        format!("m/sample.{}", l.extensions()[0])
    }

    #[test]
    fn every_language_survives_odd_input() {
        let deep = format!("{}1{}", "(".repeat(5000), ")".repeat(5000));
        let odd = [
            "",
            "\n\n",
            "}}}((( def class func fn := => import from",
            deep.as_str(),
            "\u{feff}é = \"ü\" // ü",
        ];
        for l in LANGUAGES {
            let path = sample_path(*l);
            let module = l.module_path("proj", &path);
            for src in odd {
                let _ = l.extract(src, &module, &path);
            }
        }
    }

    #[test]
    fn every_language_extracts_from_several_threads() {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for l in LANGUAGES {
                        let src = generated(l.name(), 60);
                        let path = sample_path(*l);
                        let module = l.module_path("proj", &path);
                        let f = l.extract(&src, &module, &path);
                        assert!(!f.has_parse_errors, "{}", l.name());
                        assert!(f.definitions.len() >= 10, "{}", l.name());
                        assert!(f.references.iter().any(|r| r.name == "helper"));
                    }
                });
            }
        });
    }

    /// `cargo test -p scryer-engine --release --lib extract_timing -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn extract_timing() {
        for l in LANGUAGES {
            let src = generated(l.name(), 2000);
            let path = sample_path(*l);
            let module = l.module_path("proj", &path);
            let runs = 20;
            let started = std::time::Instant::now();
            let mut refs = 0;
            for _ in 0..runs {
                refs = l.extract(&src, &module, &path).references.len();
            }
            let per = started.elapsed() / runs;
            println!(
                "{:<10} {} lines: {:?} per extract ({refs} references)",
                l.name(),
                src.lines().count(),
                per
            );
        }
    }

    /// Every file under `$SCRYER_CORPUS` in a supported language extracts without panic.
    #[test]
    #[ignore]
    fn corpus() {
        let Ok(dir) = std::env::var("SCRYER_CORPUS") else {
            return;
        };
        let started = std::time::Instant::now();
        let (mut files, mut lines, mut errors) = (0, 0, 0);
        for entry in ignore::WalkBuilder::new(&dir).build().flatten() {
            let path = entry.path().to_string_lossy().to_string();
            let Some(l) = language_for(&path) else {
                continue;
            };
            let Ok(src) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            let module = l.module_path("corpus", &path);
            let f = l.extract(&src, &module, &path);
            files += 1;
            lines += src.lines().count();
            errors += f.has_parse_errors as usize;
        }
        println!(
            "{files} files, {lines} lines, {errors} with parse errors, {:?}",
            started.elapsed()
        );
    }
}
