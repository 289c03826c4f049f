//! Rust extraction: definitions and references from one source file, via tree-sitter.
//!
//! [`extract`] parses a file with tree-sitter-rust and walks the tree once, emitting
//! [`Definition`](crate::model::Definition)s for items and
//! [`Reference`](crate::model::Reference)s for every identifier use that is not a
//! definition name or a local variable. Macro invocations whose bodies look like
//! items, call arguments or statements are re-parsed so that what they contain is
//! indexed like ordinary code; other macro bodies yield token-level references.
//! `MethodCall` and `Field` references `x.name` carry the type of `x` as their qualifier
//! where the enclosing function makes it evident (`Self` for `self`; see
//! `extract/receivers.rs` for the rules).
//!
//! [`module_path_for`] maps a file path inside a crate to its module path.

mod extract;
#[cfg(test)]
mod receiver_tests;
#[cfg(test)]
mod tests;
mod text;

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

use crate::model::FileSymbols;

thread_local! {
    /// One parser per thread: the indexer calls [`extract`] from several threads.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parse `text` as Rust with this thread's parser.
pub(crate) fn parse(text: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_rust::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        let tree = parser.parse(text, None);
        if tree.is_none() {
            // A failed parse can leave the parser mid-way; start clean next time.
            parser.reset();
        }
        tree
    })
}

/// Extract definitions and references from one Rust file.
///
/// `module_path` is the qualified module of the file, e.g. `["regex_automata", "util", "iter"]`
/// (the first element is the crate name).
pub fn extract(source: &str, module_path: &[String]) -> FileSymbols {
    let Some(tree) = parse(source) else {
        return FileSymbols {
            has_parse_errors: true,
            ..FileSymbols::default()
        };
    };
    let root = tree.root_node();
    let module = module_path.join("::");
    let mut extractor = extract::Extractor::new(source);
    extractor.file(root, module);
    let (definitions, references, edges) = extractor.finish();
    FileSymbols {
        definitions,
        references,
        has_parse_errors: root.has_error(),
        edges,
    }
}

/// The module path of a file inside a crate, from its path relative to the crate root
/// (the folder holding `Cargo.toml`).
///
/// `src/lib.rs`, `src/main.rs` → `[crate]`; `src/util/iter.rs` → `[crate, util, iter]`;
/// `src/util/mod.rs` → `[crate, util]`; `src/bin/foo.rs` → `[crate, bin, foo]`;
/// `tests/foo.rs` → `[crate, tests, foo]` (likewise `benches/`, `examples/`);
/// `tests/foo/main.rs` → `[crate, tests, foo]`. `crate_name` must already have `-`
/// replaced by `_`; `-` in file and folder names is replaced by `_` here.
pub fn module_path_for(crate_name: &str, relative_path: &str) -> Vec<String> {
    let normalized = relative_path.replace('\\', "/");
    let mut parts: Vec<&str> = normalized
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.strip_suffix(".rs").unwrap_or(last);
    }
    let under_src = parts.first() == Some(&"src");
    let mut rest: &[&str] = if under_src { &parts[1..] } else { &parts };
    if let [only] = rest
        && under_src
        && (*only == "lib" || *only == "main")
    {
        rest = &[];
    }
    if let [.., last] = rest
        && *last == "mod"
    {
        rest = &rest[..rest.len() - 1];
    }
    // `src/bin/x/main.rs`, `tests/x/main.rs`, ...: the target's own root file.
    let target_dirs: &[&str] = if under_src {
        &["bin"]
    } else {
        &["tests", "benches", "examples"]
    };
    if let [dir, _, last] = rest
        && *last == "main"
        && target_dirs.contains(dir)
    {
        rest = &rest[..2];
    }
    std::iter::once(crate_name.to_string())
        .chain(rest.iter().map(|p| p.replace('-', "_")))
        .collect()
}
