//! Macro invocations: re-parsing bodies as items, arguments or statements, else tokens.

use crate::grammar::NodeExt;
use tree_sitter::Node;

use super::{
    ARGS_PREFIX, ARGS_SUFFIX, BLOCK_PREFIX, BLOCK_SUFFIX, Ctx, Extractor, MAX_MACRO_DEPTH,
    MacroPos, is_item_kind,
};
use crate::model::ReferenceKind as RK;
use crate::rust_lang::text::{is_builtin_attribute, is_keyword, is_opaque_macro, strip_raw};

impl<'s> Extractor<'s> {
    pub(super) fn macro_invocation(&mut self, n: Node<'_>, ctx: &Ctx, pos: MacroPos) {
        let mut name = "";
        if let Some(m) = n.field("macro") {
            self.path(m, RK::Macro, None, ctx);
            let last = m.field("name").unwrap_or(m);
            name = self.text(last);
        }
        let mut c = n.walk();
        let Some(tt) = n
            .named_children(&mut c)
            .find(|k| k.kind_str() == "token_tree")
        else {
            return;
        };
        if is_opaque_macro(name) {
            return;
        }
        if !self.reparse_macro(tt, ctx, pos) {
            let braced_items = pos == MacroPos::Item && self.macro_depth < MAX_MACRO_DEPTH;
            self.macro_depth += 1;
            self.tokens_with(tt, ctx, RK::MacroToken, braced_items);
            self.macro_depth -= 1;
        }
    }

    /// The inside of a delimited token tree: (original byte offset, text, opening delimiter).
    pub(super) fn tt_inner(&self, tt: Node<'_>) -> Option<(usize, &'s str, u8)> {
        let (a, b) = (self.start(tt), self.end(tt));
        let bytes = self.src.as_bytes();
        if b < a + 2 || b > bytes.len() {
            return None;
        }
        let (open, close) = (bytes[a], bytes[b - 1]);
        if !matches!((open, close), (b'(', b')') | (b'[', b']') | (b'{', b'}')) {
            return None;
        }
        Some((a + 1, self.src.get(a + 1..b - 1)?, open))
    }

    /// Try to index a macro body as real code; false if it does not parse as such.
    pub(super) fn reparse_macro(&mut self, tt: Node<'_>, ctx: &Ctx, pos: MacroPos) -> bool {
        if self.macro_depth >= MAX_MACRO_DEPTH || tt.has_error() {
            return false;
        }
        let Some((start, inner, open)) = self.tt_inner(tt) else {
            return false;
        };
        if inner.trim().is_empty() {
            return true;
        }
        self.macro_depth += 1;
        let ok = match pos {
            MacroPos::Item => self.reparse_items(inner, start, ctx),
            MacroPos::Expr if open == b'{' => self.reparse_block(inner, start, ctx),
            MacroPos::Expr => self.reparse_args(inner, start, ctx),
        };
        self.macro_depth -= 1;
        ok
    }

    pub(super) fn reparse_items(&mut self, inner: &str, start: usize, ctx: &Ctx) -> bool {
        let Some(tree) = crate::rust_lang::parse(inner) else {
            return false;
        };
        let root = tree.root_node();
        if root.has_error() {
            return false;
        }
        let mut c = root.walk();
        let all_items = root.named_children(&mut c).all(|k| {
            is_item_kind(k.kind_str())
                || matches!(
                    k.kind_str(),
                    "macro_invocation"
                        | "attribute_item"
                        | "inner_attribute_item"
                        | "line_comment"
                        | "block_comment"
                        | "empty_statement"
                )
        });
        if !all_items {
            return false;
        }
        let saved = self.delta;
        self.delta = start as isize;
        self.list(root, ctx, true);
        self.delta = saved;
        true
    }

    /// `name!(a, b)` / `name![a, b]` whose arguments are expressions.
    pub(super) fn reparse_args(&mut self, inner: &str, start: usize, ctx: &Ctx) -> bool {
        let wrapped = [ARGS_PREFIX, inner, ARGS_SUFFIX].concat();
        let Some(tree) = crate::rust_lang::parse(&wrapped) else {
            return false;
        };
        let root = tree.root_node();
        if root.has_error() {
            return false;
        }
        let Some(args) = root
            .named_child(0)
            .and_then(|f| f.field("body"))
            .and_then(|b| b.named_child(0))
            .and_then(|s| {
                if s.kind_str() == "expression_statement" {
                    s.named_child(0)
                } else {
                    Some(s)
                }
            })
            .filter(|call| call.kind_str() == "call_expression")
            .and_then(|call| call.field("arguments"))
        else {
            return false;
        };
        let saved = self.delta;
        self.delta = start as isize - ARGS_PREFIX.len() as isize;
        let mut c = args.walk();
        for arg in args.named_children(&mut c) {
            // `format!("{x}", x = 1)`: a named argument, not an assignment.
            if arg.kind_str() == "assignment_expression"
                && arg
                    .field("left")
                    .is_some_and(|l| l.kind_str() == "identifier")
            {
                if let Some(r) = arg.field("right") {
                    self.visit(r, ctx);
                }
            } else {
                self.visit(arg, ctx);
            }
        }
        self.delta = saved;
        true
    }

    /// `name! { stmts }` in statement or expression position.
    pub(super) fn reparse_block(&mut self, inner: &str, start: usize, ctx: &Ctx) -> bool {
        let wrapped = [BLOCK_PREFIX, inner, BLOCK_SUFFIX].concat();
        let Some(tree) = crate::rust_lang::parse(&wrapped) else {
            return false;
        };
        let root = tree.root_node();
        if root.has_error() {
            return false;
        }
        let Some(body) = root.named_child(0).and_then(|f| f.field("body")) else {
            return false;
        };
        let saved = self.delta;
        self.delta = start as isize - BLOCK_PREFIX.len() as isize;
        self.list(body, ctx, false);
        self.delta = saved;
        true
    }

    /// Identifier tokens of an unparsed token tree, with `a::b` qualifiers reconstructed.
    pub(super) fn tokens(&mut self, tt: Node<'_>, ctx: &Ctx, kind: RK) {
        self.tokens_with(tt, ctx, kind, false);
    }

    /// Like [`Self::tokens`]; with `braced_items`, `{ .. }` groups directly inside `tt` that
    /// parse as items are indexed as items (`cfg_if! { if #[cfg(x)] { items } else { items } }`,
    /// `cfg_variant! { stable: { items }, unstable: { items } }`), and `#[..]` groups are skipped.
    pub(super) fn tokens_with(&mut self, tt: Node<'_>, ctx: &Ctx, kind: RK, braced_items: bool) {
        let mut path: Vec<&'s str> = Vec::new();
        let mut after_colons = false;
        let mut after_dot = false;
        let mut after_quote = false;
        let mut after_hash = false;
        // `#` or `#!` just before: a `[..]` group there is an attribute.
        let mut attribute_next = false;
        let mut c = tt.walk();
        if !c.goto_first_child() {
            return;
        }
        loop {
            let k = c.node();
            let was_hash = std::mem::replace(&mut after_hash, k.kind_str() == "#");
            let in_attribute = std::mem::replace(
                &mut attribute_next,
                k.kind_str() == "#" || (was_hash && k.kind_str() == "!"),
            );
            match k.kind_str() {
                "identifier" => {
                    let name = strip_raw(self.text(k));
                    if !after_colons {
                        path.clear();
                    }
                    let qualifier = (after_colons && !path.is_empty()).then(|| path.join("::"));
                    let skip = after_quote
                        || is_keyword(name)
                        || (qualifier.is_none() && !after_dot && self.is_local(name));
                    if !skip {
                        self.push_ref(k, name, kind, qualifier, ctx);
                    }
                    path.push(name);
                    (after_colons, after_dot, after_quote) = (false, false, false);
                }
                "self" | "super" | "crate" | "primitive_type" | "metavariable" => {
                    let t = self.text(k);
                    if !after_colons {
                        path.clear();
                    }
                    if k.kind_str() == "metavariable" && t != "$crate" {
                        path.clear();
                    } else {
                        path.push(if t == "$crate" { "crate" } else { t });
                    }
                    (after_colons, after_dot, after_quote) = (false, false, false);
                }
                "::" => after_colons = true,
                "." => {
                    path.clear();
                    (after_colons, after_dot, after_quote) = (false, true, false);
                }
                "'" => {
                    path.clear();
                    (after_colons, after_dot, after_quote) = (false, false, true);
                }
                "token_tree" if braced_items && was_hash => {}
                "token_tree" if in_attribute && self.text(k).starts_with('[') => {
                    self.attribute_tokens(k, ctx);
                    path.clear();
                    (after_colons, after_dot, after_quote) = (false, false, false);
                }
                "token_tree"
                    if braced_items
                        && self.tt_inner(k).is_some_and(|(start, inner, open)| {
                            open == b'{' && self.reparse_items(inner, start, ctx)
                        }) => {}
                "token_tree" | "token_repetition" => {
                    self.tokens(k, ctx, kind);
                    path.clear();
                    (after_colons, after_dot, after_quote) = (false, false, false);
                }
                "line_comment" | "block_comment" => {}
                _ => {
                    path.clear();
                    (after_colons, after_dot, after_quote) = (false, false, false);
                }
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }

    /// A `#[..]` group inside a token tree, read as a parsed attribute is
    /// ([`Self::attribute`]): `derive(A, B)` names derive macros, `cfg_attr(.., derive(..))`
    /// too, a built-in or tool attribute names nothing (`cfg(feature = "x")` holds
    /// configuration keys, not references), any other path is an attribute macro.
    pub(super) fn attribute_tokens(&mut self, group: Node<'_>, ctx: &Ctx) {
        let kids: Vec<Node<'_>> = {
            let mut c = group.walk();
            group.children(&mut c).collect()
        };
        let mut segments: Vec<Node<'_>> = Vec::new();
        let mut rest = kids.iter().skip(1).peekable();
        while let Some(k) = rest.peek() {
            match k.kind_str() {
                "identifier" => segments.push(**k),
                "::" => {}
                _ => break,
            }
            rest.next();
        }
        let Some(&last) = segments.last() else {
            return;
        };
        let args = rest.find(|k| k.kind_str() == "token_tree").copied();
        let written: Vec<&str> = segments.iter().map(|s| self.text(*s)).collect();
        match written.as_slice() {
            ["derive"] => {
                if let Some(a) = args {
                    self.tokens(a, ctx, RK::Macro);
                }
            }
            ["cfg_attr"] => {
                let Some(a) = args else { return };
                let inner: Vec<Node<'_>> = {
                    let mut c = a.walk();
                    a.children(&mut c).collect()
                };
                for w in inner.windows(2) {
                    if w[0].kind_str() == "identifier"
                        && self.text(w[0]) == "derive"
                        && w[1].kind_str() == "token_tree"
                    {
                        self.tokens(w[1], ctx, RK::Macro);
                    }
                }
            }
            [first, ..] if is_builtin_attribute(first) => {}
            _ => {
                let qualifier =
                    (written.len() > 1).then(|| written[..written.len() - 1].join("::"));
                let name = strip_raw(self.text(last));
                self.push_ref(last, name, RK::Macro, qualifier, ctx);
            }
        }
    }
}
