//! Helpers shared by the extractors: parsing, positions, signatures.

use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::{Node, Parser, Tree};

use crate::model::{Definition, Reference, ReferenceKind, SymbolKind};

thread_local! {
    /// One parser per language and thread: the indexer extracts on several threads.
    static PARSERS: RefCell<HashMap<&'static str, Parser>> = RefCell::new(HashMap::new());
}

/// Parse `text` with this thread's parser for `key` (one parser per grammar).
pub(crate) fn parse(
    key: &'static str,
    language: impl FnOnce() -> tree_sitter::Language,
    text: &str,
) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut map = cell.borrow_mut();
        if !map.contains_key(key) {
            let mut parser = Parser::new();
            parser.set_language(&language()).ok()?;
            map.insert(key, parser);
        }
        let parser = map.get_mut(key)?;
        let tree = parser.parse(text, None);
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// Signatures are capped at this many characters.
const SIGNATURE_CAP: usize = 300;

/// Collapse whitespace runs to one space, trim, and cap the length.
pub(crate) fn collapse(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(SIGNATURE_CAP + 8));
    let mut pending_space = false;
    for (chars, c) in raw.chars().enumerate() {
        if chars > SIGNATURE_CAP * 4 {
            break;
        }
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    if let Some((idx, _)) = out.char_indices().nth(SIGNATURE_CAP) {
        out.truncate(idx);
    }
    out
}

pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}::{name}")
    }
}

pub(crate) fn named_kids<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

/// The source of one file, its line index, and what has been extracted so far.
pub(crate) struct Out<'s> {
    pub(crate) src: &'s str,
    line_starts: Vec<usize>,
    pub(crate) defs: Vec<Definition>,
    pub(crate) refs: Vec<Reference>,
}

impl<'s> Out<'s> {
    pub(crate) fn new(src: &'s str) -> Self {
        let mut line_starts = Vec::with_capacity(src.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Out {
            src,
            line_starts,
            defs: Vec::new(),
            refs: Vec::new(),
        }
    }

    pub(crate) fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.start_byte()..n.end_byte()).unwrap_or("")
    }

    /// 1-based (line, column) of a byte offset; the column counts chars.
    pub(crate) fn pos(&self, byte: usize) -> (u32, u32) {
        let idx = self.line_starts.partition_point(|&s| s <= byte).max(1) - 1;
        let line_start = self.line_starts[idx];
        let prefix = self.src.get(line_start..byte).unwrap_or("");
        let col = if prefix.is_ascii() {
            prefix.len()
        } else {
            prefix.chars().count()
        };
        (idx as u32 + 1, col as u32 + 1)
    }

    pub(crate) fn end_line(&self, n: Node<'_>) -> u32 {
        let (s, e) = (n.start_byte(), n.end_byte());
        self.pos(if e > s { e - 1 } else { s }).0
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn def(
        &mut self,
        item: Node<'_>,
        name_node: Node<'_>,
        name: &str,
        kind: SymbolKind,
        qualified_name: String,
        owner: Option<String>,
        signature: String,
        docstring: Option<String>,
    ) {
        let (name_line, name_column) = self.pos(name_node.start_byte());
        self.defs.push(Definition {
            name: name.to_string(),
            kind,
            qualified_name,
            owner,
            signature,
            docstring,
            start_line: self.pos(item.start_byte()).0,
            end_line: self.end_line(item),
            name_line,
            name_column,
        });
    }

    pub(crate) fn reference(
        &mut self,
        n: Node<'_>,
        name: &str,
        kind: ReferenceKind,
        qualifier: Option<String>,
        enclosing: &str,
    ) {
        let (line, column) = self.pos(n.start_byte());
        self.refs.push(Reference {
            name: name.to_string(),
            kind,
            line,
            column,
            qualifier,
            enclosing_symbol: enclosing.to_string(),
        });
    }

    pub(crate) fn finish(mut self) -> (Vec<Definition>, Vec<Reference>) {
        self.refs.sort_by_key(|r| (r.line, r.column));
        (self.defs, self.refs)
    }
}
