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
use std::sync::Mutex;

use tree_sitter::{InputEdit, Parser, Point, Tree};

use crate::model::FileSymbols;

thread_local! {
    /// One parser per thread: the indexer calls [`extract`] from several threads.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parse `text` as Rust with this thread's parser.
pub(crate) fn parse(text: &str) -> Option<Tree> {
    parse_reusing(text, None)
}

/// [`parse`], reusing the unchanged parts of `previous` (already `edit`ed to match).
fn parse_reusing(text: &str, previous: Option<&Tree>) -> Option<Tree> {
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
        let tree = parser.parse(text, previous);
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
    extract_tree(source, module_path, parse(source))
}

/// Files re-extracted after an edit, most recent first: their text and tree, so the
/// next edit of the same file re-parses only what changed. A few, since an agent edits
/// a handful of files at a time and a large file's tree is megabytes.
static EDITED: Mutex<Vec<(String, String, Tree)>> = Mutex::new(Vec::new());
const EDITED_KEPT: usize = 4;

/// [`extract`] for a file that was edited since it was indexed: the first time it
/// parses from scratch and keeps the tree; the next times tree-sitter re-parses
/// incrementally from the kept tree (the largest regex-automata file: 18–30 ms from
/// scratch). The result is the same as [`extract`]'s.
pub fn extract_edited(source: &str, module_path: &[String], path: &str) -> FileSymbols {
    let previous = {
        let mut kept = EDITED.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter()
            .position(|(p, _, _)| p == path)
            .map(|i| kept.remove(i))
    };
    let tree = match previous {
        // An edit in the first half moves most of the tree: re-parsing from the kept tree
        // then cost more than parsing from scratch (measured: +8 ms on a 5,300-line file).
        Some((_, old_text, mut old_tree)) => {
            let edit = edit_between(&old_text, source);
            if edit.start_byte >= source.len() / 2 {
                old_tree.edit(&edit);
                parse_reusing(source, Some(&old_tree))
            } else {
                parse(source)
            }
        }
        None => parse(source),
    };
    if let Some(tree) = &tree {
        let mut kept = EDITED.lock().unwrap_or_else(|p| p.into_inner());
        kept.insert(0, (path.to_string(), source.to_string(), tree.clone()));
        kept.truncate(EDITED_KEPT);
    }
    extract_tree(source, module_path, tree)
}

/// The edit that turns `old` into `new`, as one replaced span between their common
/// prefix and common suffix.
fn edit_between(old: &str, new: &str) -> InputEdit {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let prefix = o.iter().zip(n).take_while(|(a, b)| a == b).count();
    let max_suffix = o.len().min(n.len()) - prefix;
    let suffix = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    let point = |text: &[u8], at: usize| {
        let before = &text[..at];
        let row = before.iter().filter(|&&b| b == b'\n').count();
        let column = at
            - before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
        Point::new(row, column)
    };
    InputEdit {
        start_byte: prefix,
        old_end_byte: o.len() - suffix,
        new_end_byte: n.len() - suffix,
        start_position: point(o, prefix),
        old_end_position: point(o, o.len() - suffix),
        new_end_position: point(n, n.len() - suffix),
    }
}

fn extract_tree(source: &str, module_path: &[String], tree: Option<Tree>) -> FileSymbols {
    let Some(tree) = tree else {
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
