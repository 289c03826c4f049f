//! Module paths in Python and TypeScript/JavaScript, where a written qualifier names a
//! module by its file path rather than a Rust module tree.
//!
//! The extractors write a module qualifier as the importing language resolves it, `::`
//! joined and relative to the project root where the language is relative (`from .types
//! import X` in `src/click/core.py` → `src::click::types`; `import { X } from
//! '../Observable'` in `src/internal/operators/map.ts` → `src::internal::Observable`), or
//! as written where it is absolute (`click.types.X` → `click::types`). A module is the file
//! whose path, without its extension and without a trailing `__init__`/`index`, ends with
//! those segments; a name reached through it is defined there or re-exported there (a
//! `from .x import X` in a package's `__init__.py`, an `export { X } from './x'` in an
//! `index.ts`), followed a few levels.

use std::collections::HashMap;

use super::Scope;
use crate::host::Sym;

/// How many re-export hops a module qualifier is followed (`click` → `click/__init__.py`
/// → `.core` → a module that re-exports again).
const REEXPORT_DEPTH: u8 = 3;

/// Is a file one whose qualifiers name modules by file path?
pub fn is_script_file(file: &str) -> bool {
    let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "py" | "pyi" | "ts" | "tsx" | "mts" | "cts" | "js" | "jsx" | "mjs" | "cjs"
    )
}

/// The module a script file is, as path segments from the project root: `src/click/core.py`
/// → `[src, click, core]`, `src/click/__init__.py` → `[src, click]`, `src/a/index.ts` →
/// `[src, a]`, `x.d.ts` → `[x]`.
pub fn file_module(file: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = file.split('/').filter(|p| !p.is_empty()).collect();
    if let Some(last) = parts.last_mut() {
        let stem = last.rsplit_once('.').map_or(*last, |(s, _)| s);
        *last = stem.strip_suffix(".d").unwrap_or(stem);
    }
    if matches!(parts.last(), Some(&("__init__" | "index"))) {
        parts.pop();
    }
    parts
}

fn ends_with(path: &[&str], suffix: &[&str]) -> bool {
    !suffix.is_empty() && path.ends_with(suffix)
}

/// The definitions among `candidates` that the module written as `module` (segments)
/// holds, directly or through the re-exports of the name in that module's file
/// (`name_imports`: per file, the qualifiers of its `use` sites of the name).
pub fn through_module(
    module: &[&str],
    defs: &[Sym],
    candidates: &[usize],
    name_imports: &HashMap<String, Vec<String>>,
    depth: u8,
) -> Vec<usize> {
    let direct: Vec<usize> = candidates
        .iter()
        .copied()
        .filter(|&i| ends_with(&file_module(&defs[i].file_path), module) && is_top_level(&defs[i]))
        .collect();
    if !direct.is_empty() || depth == 0 {
        return direct;
    }
    let mut found = Vec::new();
    for (file, paths) in name_imports {
        if !ends_with(&file_module(file), module) {
            continue;
        }
        for p in paths {
            let target: Vec<&str> = super::segments(p);
            if target.as_slice() == module {
                continue;
            }
            for i in through_module(&target, defs, candidates, name_imports, depth - 1) {
                if !found.contains(&i) {
                    found.push(i);
                }
            }
        }
    }
    found
}

/// Is a definition at the top of its file's module (not nested in a class or function)?
/// Its qualified name is then the file's module path plus its name.
fn is_top_level(d: &Sym) -> bool {
    let module = file_module(&d.file_path);
    let segs = super::segments(&d.qualified_name);
    // `[project, ..module, name]`
    segs.len() == module.len() + 2
}

/// Does a qualifier's first segment (`click` in `click.BOOL`) name a directory or module
/// on the path of one of `candidates`' files? If not, it is another package's module.
pub fn on_the_way(first: &str, defs: &[Sym], candidates: &[usize]) -> bool {
    candidates
        .iter()
        .any(|&i| file_module(&defs[i].file_path).contains(&first))
}

/// [`through_module`] from the default depth, with the scope's imports of the name.
pub fn module_holds(
    module: &[&str],
    defs: &[Sym],
    candidates: &[usize],
    scope: &Scope,
) -> Vec<usize> {
    through_module(
        module,
        defs,
        candidates,
        &scope.name_imports,
        REEXPORT_DEPTH,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::def;

    #[test]
    fn files_are_modules_by_path() {
        assert_eq!(file_module("src/click/core.py"), ["src", "click", "core"]);
        assert_eq!(file_module("src/click/__init__.py"), ["src", "click"]);
        assert_eq!(file_module("src/a/index.ts"), ["src", "a"]);
        assert_eq!(file_module("types/x.d.ts"), ["types", "x"]);
        assert!(is_script_file("a/b.pyi") && is_script_file("a.mjs"));
        assert!(!is_script_file("src/lib.rs"));
    }

    #[test]
    fn a_module_holds_its_own_and_its_reexported_names() {
        let defs = [
            def(
                "click::src::click::types::BOOL",
                "const",
                None,
                "src/click/types.py",
            ),
            def(
                "click::src::click::other::BOOL",
                "const",
                None,
                "src/click/other.py",
            ),
            def(
                "click::src::click::types::Param::BOOL",
                "const",
                Some("Param"),
                "src/click/types.py",
            ),
        ];
        let mut imports = HashMap::new();
        imports.insert(
            "src/click/__init__.py".to_string(),
            vec!["src::click::types".to_string()],
        );
        let all = [0, 1, 2];
        assert_eq!(through_module(&["types"], &defs, &all, &imports, 3), [0]);
        assert_eq!(
            through_module(&["click", "types"], &defs, &all, &imports, 3),
            [0]
        );
        // `click` is the package: its `__init__.py` re-exports `BOOL` from `.types`.
        assert_eq!(through_module(&["click"], &defs, &all, &imports, 3), [0]);
        assert!(through_module(&["click"], &defs, &all, &imports, 0).is_empty());
        assert!(through_module(&["elsewhere"], &defs, &all, &imports, 3).is_empty());
    }
}
