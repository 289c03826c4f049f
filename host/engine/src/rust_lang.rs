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
        Some((_, old_text, mut old_tree)) => {
            for edit in edits_between(&old_text, source) {
                old_tree.edit(&edit);
            }
            parse_reusing(source, Some(&old_tree))
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

/// The edits that turn `old` into `new`, one per changed run of lines, in the order
/// `Tree::edit` takes them (each in the coordinates left by the ones before). One span
/// from the first difference to the last would make tree-sitter re-parse everything in
/// between: a line added at the top and one at the end re-parsed the whole file, slower
/// than from scratch.
fn edits_between(old: &str, new: &str) -> Vec<InputEdit> {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    let (old_lines, new_lines) = (line_starts(old), line_starts(new));
    let offset =
        |starts: &[usize], text: &str, line: usize| starts.get(line).copied().unwrap_or(text.len());
    let mut edits = Vec::new();
    for op in diff.ops() {
        if let similar::DiffOp::Equal { .. } = op {
            continue;
        }
        let (old_range, new_range) = (op.old_range(), op.new_range());
        let old_start = offset(&old_lines, old, old_range.start);
        let old_end = offset(&old_lines, old, old_range.end);
        let new_start = offset(&new_lines, new, new_range.start);
        let new_end = offset(&new_lines, new, new_range.end);
        // Everything before this edit already reads as `new` (earlier edits applied).
        let start_position = point_at(&new_lines, new_start);
        let (old_start_point, old_end_point) = (
            point_at(&old_lines, old_start),
            point_at(&old_lines, old_end),
        );
        let old_end_position = if old_end_point.row == old_start_point.row {
            Point::new(
                start_position.row,
                start_position.column + old_end_point.column - old_start_point.column,
            )
        } else {
            Point::new(
                start_position.row + old_end_point.row - old_start_point.row,
                old_end_point.column,
            )
        };
        edits.push(InputEdit {
            start_byte: new_start,
            old_end_byte: new_start + (old_end - old_start),
            new_end_byte: new_end,
            start_position,
            old_end_position,
            new_end_position: point_at(&new_lines, new_end),
        });
    }
    edits
}

/// Byte offsets where each line of `text` starts.
fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// The row and column (in bytes) of byte `at`, given where lines start.
fn point_at(starts: &[usize], at: usize) -> Point {
    let row = starts.partition_point(|&s| s <= at).saturating_sub(1);
    Point::new(row, at - starts.get(row).copied().unwrap_or(0))
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
