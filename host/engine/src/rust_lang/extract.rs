//! The tree walk behind [`super::extract`].
//!
//! One [`Extractor`] per file. It walks the tree recursively, carrying a [`Ctx`] that says
//! how new items are qualified and which symbol encloses a reference. Macro bodies are
//! re-parsed as separate trees; `delta` maps byte offsets of whichever tree is being
//! walked back to the original source, so positions and text always come from there.

use crate::grammar::NodeExt;
use tree_sitter::Node;

mod code;
mod items;
mod macros;
pub(crate) mod receivers;

use std::collections::HashMap;

use receivers::{StructFields, Ty};

use super::text::{block_doc, doc_attr_value, is_primitive, line_doc, signature, strip_raw};
use crate::model::{Definition, Edge, EdgeKind, Reference, ReferenceKind as RK, SymbolKind as SK};

/// Recursion limit for expression/type/pattern nesting (guards the thread stack against
/// pathological generated code; deeper subtrees are skipped).
pub(super) const MAX_NEST: u32 = 300;
/// How deep macro bodies are re-parsed inside re-parsed macro bodies.
pub(super) const MAX_MACRO_DEPTH: u32 = 6;

pub(super) const ARGS_PREFIX: &str = "fn __f(){__m(";
pub(super) const ARGS_SUFFIX: &str = "\n);}";
pub(super) const BLOCK_PREFIX: &str = "fn __f(){";
pub(super) const BLOCK_SUFFIX: &str = "\n}";

/// Where new items go and what encloses references.
#[derive(Clone, Debug)]
pub(super) struct Ctx {
    /// Qualified prefix for items defined here (module path, or the enclosing function).
    pub(super) prefix: String,
    /// The type or trait owning associated items at this level (impl/trait bodies only).
    pub(super) owner: Option<String>,
    /// `enclosing_symbol` for references made here.
    pub(super) enclosing: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MacroPos {
    /// The invocation stands where items stand (file, module, impl or trait body).
    Item,
    /// Anywhere else: statements, expressions, types, patterns.
    Expr,
}

/// What [`Extractor::enter_scope`] saved.
pub(super) struct Scope<'s> {
    locals: Vec<&'s str>,
    local_types: HashMap<&'s str, Ty>,
    self_owner: Option<String>,
}

pub(super) struct Extractor<'s> {
    src: &'s str,
    line_starts: Vec<usize>,
    /// original byte offset = node byte offset + delta (non-zero inside re-parsed macro bodies).
    delta: isize,
    defs: Vec<Definition>,
    refs: Vec<Reference>,
    /// Implementations, constructions and re-exports seen (calls come from `refs`).
    edges: Vec<Edge>,
    /// Value names bound in the current function (parameters, lets, closure params, patterns).
    locals: Vec<&'s str>,
    /// The evident types of some of `locals`: the latest binding of each name wins.
    local_types: HashMap<&'s str, Ty>,
    /// Inside a method (or other function of an impl or trait body): the owner's name.
    self_owner: Option<String>,
    /// Declared field types of the structs defined in this file, for [`Ty::Field`].
    struct_fields: StructFields,
    /// `MethodCall` and `Field` references (indexes into `refs`) whose receiver type is
    /// evident; the qualifier is set in [`Self::finish`], once every struct is known.
    receivers: Vec<(usize, Ty)>,
    /// Generic parameter names in scope (type and const parameters).
    tparams: Vec<&'s str>,
    /// Inside `impl Trait for Type`: the trait, whose items the impl's items implement.
    impl_trait: Option<String>,
    /// Inside an impl of a named type: that type's name. A `Self` written there is a use
    /// of it (rust-analyzer counts it among the type's references), so it is recorded
    /// under the type's name. Not set in trait bodies, where `Self` is any implementor.
    impl_self: Option<String>,
    nest: u32,
    macro_depth: u32,
}

pub(super) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        let mut s = String::with_capacity(prefix.len() + 2 + name.len());
        s.push_str(prefix);
        s.push_str("::");
        s.push_str(name);
        s
    }
}

pub(super) fn join_opt(base: Option<String>, name: &str) -> String {
    match base {
        Some(b) => join(&b, name),
        None => name.to_string(),
    }
}

pub(super) fn named_kids<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).collect()
}

pub(super) fn is_item_kind(kind: &str) -> bool {
    matches!(
        kind,
        "function_item"
            | "function_signature_item"
            | "struct_item"
            | "union_item"
            | "enum_item"
            | "trait_item"
            | "impl_item"
            | "const_item"
            | "static_item"
            | "type_item"
            | "associated_type"
            | "mod_item"
            | "macro_definition"
            | "use_declaration"
            | "extern_crate_declaration"
            | "foreign_mod_item"
    )
}

impl<'s> Extractor<'s> {
    pub(super) fn new(src: &'s str) -> Self {
        let mut line_starts = Vec::with_capacity(src.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(
            src.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Extractor {
            src,
            line_starts,
            delta: 0,
            defs: Vec::new(),
            refs: Vec::new(),
            edges: Vec::new(),
            locals: Vec::new(),
            local_types: HashMap::new(),
            self_owner: None,
            struct_fields: StructFields::new(),
            receivers: Vec::new(),
            tparams: Vec::new(),
            impl_trait: None,
            impl_self: None,
            nest: 0,
            macro_depth: 0,
        }
    }

    /// Walk a whole file whose module qualified name is `module`.
    pub(super) fn file(&mut self, root: Node<'_>, module: String) {
        let ctx = Ctx {
            prefix: module.clone(),
            owner: None,
            enclosing: module,
        };
        self.list(root, &ctx, true);
    }

    pub(super) fn finish(mut self) -> (Vec<Definition>, Vec<Reference>, Vec<Edge>) {
        for (i, ty) in std::mem::take(&mut self.receivers) {
            if let Some((name, _rule)) = ty.resolve(&self.struct_fields) {
                #[cfg(test)]
                receivers::count(self.refs[i].kind, _rule);
                self.refs[i].qualifier = Some(name);
            }
        }
        // The walk visits some parts out of source order (where clauses before bodies,
        // let values before patterns); publish references in source order.
        self.refs.sort_by_key(|r| (r.line, r.column));
        self.edges.sort_by_key(|e| (e.line, e.column));
        (self.defs, self.refs, self.edges)
    }

    /// Records an edge of `kind` from `from` to the first reference pushed since `start`
    /// that is named `target`. Returns whether one was found.
    pub(super) fn edge_to_named(&mut self, start: usize, kind: EdgeKind, from: &str, target: &str) {
        let site = self.refs[start..]
            .iter()
            .rev()
            .find(|r| r.name == target)
            .cloned();
        if let Some(site) = site {
            self.edges.push(Edge::at(kind, from, &site));
        }
    }

    /// `pub use` items: an edge from the module to each leaf of the use tree (the names
    /// pushed since `start` that no other pushed segment continues).
    pub(super) fn reexports_since(&mut self, start: usize, from: &str) {
        let pushed = &self.refs[start..];
        let continued: std::collections::HashSet<String> =
            pushed.iter().filter_map(|r| r.qualifier.clone()).collect();
        let leaves: Vec<Reference> = pushed
            .iter()
            .filter(|r| {
                let full = match &r.qualifier {
                    Some(q) => format!("{q}::{}", r.name),
                    None => r.name.clone(),
                };
                !continued.contains(&full)
            })
            .cloned()
            .collect();
        for site in leaves {
            self.edges.push(Edge::at(EdgeKind::Reexports, from, &site));
        }
    }

    // ----- positions and text -------------------------------------------------------------

    pub(super) fn start(&self, n: Node<'_>) -> usize {
        (n.start_byte() as isize + self.delta).max(0) as usize
    }

    pub(super) fn end(&self, n: Node<'_>) -> usize {
        (n.end_byte() as isize + self.delta).max(0) as usize
    }

    pub(super) fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(self.start(n)..self.end(n)).unwrap_or("")
    }

    pub(super) fn slice(&self, from: usize, to: usize) -> &'s str {
        self.src.get(from..to).unwrap_or("")
    }

    /// 1-based (line, column) of an original byte offset; the column counts chars.
    pub(super) fn pos(&self, byte: usize) -> (u32, u32) {
        let idx = self.line_starts.partition_point(|&s| s <= byte).max(1) - 1;
        let line_start = self.line_starts[idx];
        let prefix = self.slice(line_start, byte);
        let col = if prefix.is_ascii() {
            prefix.len()
        } else {
            prefix.chars().count()
        };
        (idx as u32 + 1, col as u32 + 1)
    }

    pub(super) fn line_of_end(&self, n: Node<'_>) -> u32 {
        let (s, e) = (self.start(n), self.end(n));
        self.pos(if e > s { e - 1 } else { s }).0
    }

    pub(super) fn is_local(&self, name: &str) -> bool {
        self.locals.contains(&name) || self.tparams.contains(&name)
    }

    /// Bind a value name in the current function; its type is not (yet) known.
    pub(super) fn add_local(&mut self, name: &'s str) {
        let name = strip_raw(name);
        self.local_types.remove(name);
        if !self.locals.contains(&name) {
            self.locals.push(name);
        }
    }

    /// Enter a new function-like scope (function, const or static initializer, module,
    /// macro definition): no locals, no `self` unless `self_owner` is given.
    pub(super) fn enter_scope(&mut self, self_owner: Option<String>) -> Scope<'s> {
        Scope {
            locals: std::mem::take(&mut self.locals),
            local_types: std::mem::take(&mut self.local_types),
            self_owner: std::mem::replace(&mut self.self_owner, self_owner),
        }
    }

    pub(super) fn leave_scope(&mut self, saved: Scope<'s>) {
        self.locals = saved.locals;
        self.local_types = saved.local_types;
        self.self_owner = saved.self_owner;
    }

    // ----- emitting -----------------------------------------------------------------------

    pub(super) fn push_ref(
        &mut self,
        n: Node<'_>,
        name: &str,
        kind: RK,
        qualifier: Option<String>,
        ctx: &Ctx,
    ) {
        let (line, column) = self.pos(self.start(n));
        let name = match (&self.impl_self, kind) {
            (Some(ty), RK::Type | RK::Path | RK::Call) if name == "Self" && qualifier.is_none() => {
                ty.as_str()
            }
            _ => name,
        };
        self.refs.push(Reference {
            name: name.to_string(),
            kind,
            line,
            column,
            qualifier,
            enclosing_symbol: ctx.enclosing.clone(),
        });
    }

    /// A `MethodCall` or `Field` reference `x.name`, qualified by the type of `x` if evident.
    fn push_member(&mut self, n: Node<'_>, kind: RK, receiver: Option<Ty>, ctx: &Ctx) {
        let name = strip_raw(self.text(n));
        if let Some(ty) = receiver {
            self.receivers.push((self.refs.len(), ty));
        }
        self.push_ref(n, name, kind, None, ctx);
    }

    /// In `impl Trait for Type`, an associated item's name is also a use of the trait's
    /// item of that name (rust-analyzer lists implementations among a trait item's
    /// references): an `Implements` reference qualified by the trait.
    pub(super) fn implements(&mut self, name_node: Node<'_>, ctx: &Ctx, qn: &str) {
        if ctx.owner.is_none() {
            return;
        }
        if let Some(tr) = self.impl_trait.clone() {
            let ictx = Ctx {
                prefix: qn.to_string(),
                owner: None,
                enclosing: qn.to_string(),
            };
            self.seg(name_node, RK::Implements, Some(tr), &ictx);
        }
    }

    /// One name segment as a reference, unless it is a primitive, a local or a generic parameter.
    pub(super) fn seg(&mut self, n: Node<'_>, kind: RK, qualifier: Option<String>, ctx: &Ctx) {
        let name = strip_raw(self.text(n));
        if name.is_empty() || name == "_" {
            return;
        }
        if qualifier.is_none() && matches!(kind, RK::Path | RK::Type | RK::Call) {
            if is_primitive(name) || self.tparams.contains(&name) {
                return;
            }
            if kind != RK::Type && self.locals.contains(&name) {
                return;
            }
        }
        self.push_ref(n, name, kind, qualifier, ctx);
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn define(
        &mut self,
        node: Node<'_>,
        name_node: Node<'_>,
        kind: SK,
        qualified_name: String,
        owner: Option<String>,
        signature: String,
        prev: &[Node<'_>],
    ) {
        if self.text(name_node) == "_" {
            return;
        }
        let (start_line, _) = self.pos(self.start(node));
        let (name_line, name_column) = self.pos(self.start(name_node));
        let end_line = self.line_of_end(node);
        let docstring = self.docstring(prev);
        self.defs.push(Definition {
            name: strip_raw(self.text(name_node)).to_string(),
            kind,
            qualified_name,
            owner,
            signature,
            docstring,
            start_line,
            end_line,
            name_line,
            name_column,
        });
    }

    /// Outer doc comments and `#[doc]` attributes among the siblings just before an item.
    pub(super) fn docstring(&self, prev: &[Node<'_>]) -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        for &s in prev.iter().rev() {
            match s.kind_str() {
                "line_comment" | "block_comment" => {
                    if s.field("outer").is_some() {
                        let doc = s.field("doc").map(|d| self.text(d));
                        parts.push(match (s.kind_str(), doc) {
                            ("line_comment", Some(d)) => line_doc(d),
                            (_, Some(d)) => block_doc(d),
                            (_, None) => String::new(),
                        });
                    } else if s.field("inner").is_some() {
                        break;
                    }
                    // plain comments are skipped, as rustc does
                }
                "attribute_item" => {
                    if let Some(doc) = self.doc_attribute(s) {
                        parts.push(doc);
                    }
                }
                _ => break,
            }
        }
        if parts.is_empty() {
            return None;
        }
        parts.reverse();
        Some(parts.join("\n"))
    }

    pub(super) fn doc_attribute(&self, item: Node<'_>) -> Option<String> {
        let attr = item.named_child(0)?;
        if self.text(attr.named_child(0)?) != "doc" {
            return None;
        }
        let value = attr.field("value")?;
        if !matches!(value.kind_str(), "string_literal" | "raw_string_literal") {
            return None;
        }
        doc_attr_value(self.text(value))
    }

    pub(super) fn sig_between(&self, from: usize, to: usize) -> String {
        signature(self.slice(from, to))
    }

    pub(super) fn sig_until(&self, node: Node<'_>, body: Option<Node<'_>>) -> String {
        match body {
            Some(b) => self.sig_between(self.start(node), self.start(b)),
            None => signature(self.text(node)),
        }
    }

    pub(super) fn qualify(&self, ctx: &Ctx, name: &str) -> String {
        match &ctx.owner {
            Some(owner) => join(&join(&ctx.prefix, owner), name),
            None => join(&ctx.prefix, name),
        }
    }
}
