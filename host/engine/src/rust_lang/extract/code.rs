//! Code inside items: paths, types, patterns, expressions, attributes.

use crate::grammar::NodeExt;
use tree_sitter::Node;

use super::receivers::{Rule, Ty};
use super::{Ctx, Extractor, MAX_NEST, MacroPos, is_item_kind, join_opt, named_kids};
use crate::model::{EdgeKind, ReferenceKind as RK};
use crate::rust_lang::text::{is_builtin_attribute, signature, strip_raw};

impl<'s> Extractor<'s> {
    // ----- paths ------------------------------------------------------------------------------

    /// Emit every segment of a path: the last one as `kind`, the others as `Path` (or `Use`).
    /// Returns the path as text without generics (`a::b::C`), for use as a qualifier.
    pub(super) fn path(
        &mut self,
        n: Node<'_>,
        kind: RK,
        base: Option<String>,
        ctx: &Ctx,
    ) -> String {
        let prefix_kind = if kind == RK::Use { RK::Use } else { RK::Path };
        match n.kind_str() {
            "scoped_identifier" | "scoped_type_identifier" => {
                let q = match n.field("path") {
                    Some(p) => Some(self.path(p, prefix_kind, base, ctx)),
                    None => base,
                };
                let Some(name_node) = n.field("name") else {
                    return q.unwrap_or_default();
                };
                let name = strip_raw(self.text(name_node));
                if matches!(name_node.kind_str(), "identifier" | "type_identifier") {
                    self.seg(name_node, kind, q.clone(), ctx);
                }
                join_opt(q, name)
            }
            "identifier" | "type_identifier" => {
                let name = strip_raw(self.text(n));
                self.seg(n, kind, base.clone(), ctx);
                join_opt(base, name)
            }
            "self" | "crate" | "super" | "metavariable" | "primitive_type" => {
                let t = self.text(n);
                join_opt(base, if t == "$crate" { "crate" } else { t })
            }
            "generic_type" | "generic_type_with_turbofish" => {
                let s = match n.field("type") {
                    Some(t) => self.path(t, kind, base, ctx),
                    None => String::new(),
                };
                if let Some(ta) = n.field("type_arguments") {
                    self.type_args(ta, Some(&s), ctx);
                }
                s
            }
            "bracketed_type" => {
                let Some(inner) = n.named_child(0) else {
                    return String::new();
                };
                if inner.kind_str() == "qualified_type" {
                    if let Some(t) = inner.field("type") {
                        self.visit_type(t, ctx);
                    }
                    match inner.field("alias") {
                        Some(alias) => self.path(alias, RK::Type, None, ctx),
                        None => String::new(),
                    }
                } else {
                    self.visit_type(inner, ctx);
                    self.type_name(inner)
                }
            }
            _ => {
                self.visit_type(n, ctx);
                signature(self.text(n))
            }
        }
    }

    pub(super) fn type_args(&mut self, n: Node<'_>, base: Option<&str>, ctx: &Ctx) {
        let mut c = n.walk();
        for k in n.named_children(&mut c) {
            match k.kind_str() {
                "type_binding" => {
                    if let Some(name) = k.field("name") {
                        let q = base.filter(|b| !b.is_empty()).map(str::to_string);
                        self.seg(name, RK::Type, q, ctx);
                    }
                    if let Some(ta) = k.field("type_arguments") {
                        self.type_args(ta, None, ctx);
                    }
                    if let Some(t) = k.field("type") {
                        self.visit_type(t, ctx);
                    }
                }
                "lifetime" => {}
                "block" => self.visit(k, ctx),
                _ => self.visit_type(k, ctx),
            }
        }
    }

    // ----- types ------------------------------------------------------------------------------

    pub(super) fn visit_type(&mut self, n: Node<'_>, ctx: &Ctx) {
        if self.nest >= MAX_NEST {
            return;
        }
        self.nest += 1;
        match n.kind_str() {
            "type_identifier" | "identifier" => self.seg(n, RK::Type, None, ctx),
            "scoped_type_identifier" | "scoped_identifier" | "generic_type" => {
                self.path(n, RK::Type, None, ctx);
            }
            "primitive_type" | "lifetime" | "never_type" | "unit_type" | "metavariable"
            | "mutable_specifier" | "line_comment" | "block_comment" | "for_lifetimes"
            | "type_parameters" | "self" | "crate" | "super" => {}
            "type_arguments" => self.type_args(n, None, ctx),
            "macro_invocation" => self.macro_invocation(n, ctx, MacroPos::Expr),
            "array_type" => {
                if let Some(e) = n.field("element") {
                    self.visit_type(e, ctx);
                }
                if let Some(l) = n.field("length") {
                    self.visit(l, ctx);
                }
            }
            "function_type" => {
                if let Some(t) = n.field("trait") {
                    self.path(t, RK::Type, None, ctx);
                }
                if let Some(p) = n.field("parameters") {
                    let mut c = p.walk();
                    for k in p.named_children(&mut c) {
                        match k.kind_str() {
                            "parameter" => {
                                if let Some(t) = k.field("type") {
                                    self.visit_type(t, ctx);
                                }
                            }
                            _ => self.visit_type(k, ctx),
                        }
                    }
                }
                if let Some(r) = n.field("return_type") {
                    self.visit_type(r, ctx);
                }
            }
            "higher_ranked_trait_bound" => {
                if let Some(t) = n.field("type") {
                    self.visit_type(t, ctx);
                }
            }
            "attribute_item" => self.attribute(n, ctx),
            "block" => self.visit(n, ctx),
            _ => {
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    self.visit_type(k, ctx);
                }
            }
        }
        self.nest -= 1;
    }

    // ----- patterns -----------------------------------------------------------------------

    /// Walk a pattern: bind lower-case identifiers as locals, emit the paths it names.
    pub(super) fn pattern(&mut self, n: Node<'_>, ctx: &Ctx) {
        if self.nest >= MAX_NEST {
            return;
        }
        self.nest += 1;
        match n.kind_str() {
            "identifier" => {
                let name = self.text(n);
                if strip_raw(name).starts_with(|c: char| c.is_uppercase()) {
                    self.seg(n, RK::Path, None, ctx);
                } else {
                    self.add_local(name);
                }
            }
            "scoped_identifier" => {
                self.path(n, RK::Path, None, ctx);
            }
            "tuple_struct_pattern" => {
                let ty = n.field("type");
                if let Some(t) = ty {
                    self.path(t, RK::Path, None, ctx);
                }
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    if Some(k) != ty {
                        self.pattern(k, ctx);
                    }
                }
            }
            "struct_pattern" => {
                let ty = n.field("type");
                let q = ty.map(|t| self.path(t, RK::Path, None, ctx));
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    if k.kind_str() != "field_pattern" {
                        continue;
                    }
                    if let Some(name) = k.field("name") {
                        self.push_field(name, q.clone(), ctx);
                        if name.kind_str() == "shorthand_field_identifier" {
                            let t = self.text(name);
                            self.add_local(t);
                        }
                    }
                    if let Some(p) = k.field("pattern") {
                        self.pattern(p, ctx);
                    }
                }
            }
            "range_pattern" => {
                for field in ["left", "right"] {
                    if let Some(side) = n.field(field)
                        && matches!(side.kind_str(), "identifier" | "scoped_identifier")
                    {
                        self.path(side, RK::Path, None, ctx);
                    }
                }
            }
            "generic_pattern" => {
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    match k.kind_str() {
                        "type_arguments" => self.type_args(k, None, ctx),
                        _ => {
                            self.path(k, RK::Path, None, ctx);
                        }
                    }
                }
            }
            "macro_invocation" => self.macro_invocation(n, ctx, MacroPos::Expr),
            "const_block" | "closure_expression" => self.visit(n, ctx),
            "self"
            | "mutable_specifier"
            | "remaining_field_pattern"
            | "line_comment"
            | "block_comment" => {}
            _ => {
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    self.pattern(k, ctx);
                }
            }
        }
        self.nest -= 1;
    }

    pub(super) fn push_field(&mut self, name: Node<'_>, qualifier: Option<String>, ctx: &Ctx) {
        if matches!(
            name.kind_str(),
            "field_identifier" | "shorthand_field_identifier" | "identifier"
        ) {
            let t = strip_raw(self.text(name));
            self.push_ref(name, t, RK::Field, qualifier.filter(|q| !q.is_empty()), ctx);
        }
    }

    // ----- expressions and statements ---------------------------------------------------------

    pub(super) fn visit(&mut self, n: Node<'_>, ctx: &Ctx) {
        if self.nest >= MAX_NEST {
            return;
        }
        self.nest += 1;
        self.visit_inner(n, ctx);
        self.nest -= 1;
    }

    pub(super) fn visit_inner(&mut self, n: Node<'_>, ctx: &Ctx) {
        let kind = n.kind_str();
        match kind {
            "identifier" => self.seg(n, RK::Path, None, ctx),
            "scoped_identifier" => {
                self.path(n, RK::Path, None, ctx);
            }
            "call_expression" => {
                if let Some(f) = n.field("function") {
                    self.callee(f, ctx);
                }
                if let Some(a) = n.field("arguments") {
                    self.visit(a, ctx);
                }
            }
            "generic_function" => {
                if let Some(f) = n.field("function") {
                    self.visit(f, ctx);
                }
                if let Some(ta) = n.field("type_arguments") {
                    self.type_args(ta, None, ctx);
                }
            }
            "field_expression" => {
                let value = n.field("value");
                let receiver = value.and_then(|v| self.expr_type(v));
                if let Some(v) = value {
                    self.visit(v, ctx);
                }
                if let Some(f) = n.field("field")
                    && f.kind_str() == "field_identifier"
                {
                    self.push_member(f, RK::Field, receiver, ctx);
                }
            }
            "struct_expression" => self.struct_expression(n, ctx),
            "macro_invocation" => self.macro_invocation(n, ctx, MacroPos::Expr),
            "let_declaration" => {
                let declared = n.field("type");
                let value = n.field("value");
                let ty = match declared {
                    Some(t) => self.type_of(t).map(|t| Ty::Name(t, Rule::Declared)),
                    None => value.and_then(|v| self.expr_type(v)).map(|ty| match ty {
                        Ty::Name(t, Rule::Expression) => Ty::Name(t, Rule::Constructor),
                        other => other,
                    }),
                };
                if let Some(t) = declared {
                    self.visit_type(t, ctx);
                }
                if let Some(v) = value {
                    self.visit(v, ctx);
                }
                if let Some(p) = n.field("pattern") {
                    self.pattern(p, ctx);
                    self.bind_type(p, ty);
                }
                if let Some(a) = n.field("alternative") {
                    self.visit(a, ctx);
                }
            }
            "let_condition" => {
                if let Some(v) = n.field("value") {
                    self.visit(v, ctx);
                }
                if let Some(p) = n.field("pattern") {
                    self.pattern(p, ctx);
                }
            }
            "for_expression" => {
                if let Some(v) = n.field("value") {
                    self.visit(v, ctx);
                }
                if let Some(p) = n.field("pattern") {
                    self.pattern(p, ctx);
                }
                if let Some(b) = n.field("body") {
                    self.visit(b, ctx);
                }
            }
            "closure_expression" => {
                if let Some(params) = n.field("parameters") {
                    let mut c = params.walk();
                    for p in params.named_children(&mut c) {
                        if p.kind_str() == "parameter" {
                            if let Some(t) = p.field("type") {
                                self.visit_type(t, ctx);
                            }
                            if let Some(pat) = p.field("pattern") {
                                self.pattern(pat, ctx);
                                let ty = p.field("type").and_then(|t| self.type_of(t));
                                self.bind_type(pat, ty.map(|t| Ty::Name(t, Rule::Declared)));
                            }
                        } else {
                            self.pattern(p, ctx);
                        }
                    }
                }
                if let Some(r) = n.field("return_type") {
                    self.visit_type(r, ctx);
                }
                if let Some(b) = n.field("body") {
                    self.visit(b, ctx);
                }
            }
            "match_arm" => {
                if let Some(p) = n.field("pattern") {
                    let cond = p.field("condition");
                    let mut c = p.walk();
                    for k in p.named_children(&mut c) {
                        if Some(k) != cond {
                            self.pattern(k, ctx);
                        }
                    }
                    if let Some(cond) = cond {
                        self.visit(cond, ctx);
                    }
                }
                if let Some(v) = n.field("value") {
                    self.visit(v, ctx);
                }
            }
            "type_cast_expression" => {
                if let Some(v) = n.field("value") {
                    self.visit(v, ctx);
                }
                if let Some(t) = n.field("type") {
                    self.visit_type(t, ctx);
                }
            }
            "block" | "ERROR" | "source_file" | "declaration_list" => self.list(n, ctx, false),
            "type_arguments" => self.type_args(n, None, ctx),
            "where_clause" => self.where_clause(n, ctx),
            "attribute_item" | "inner_attribute_item" => self.attribute(n, ctx),
            "token_tree" => self.tokens(n, ctx, RK::MacroToken),
            "type_identifier"
            | "scoped_type_identifier"
            | "generic_type"
            | "reference_type"
            | "pointer_type"
            | "tuple_type"
            | "array_type"
            | "function_type"
            | "dynamic_type"
            | "abstract_type"
            | "bounded_type"
            | "trait_bounds"
            | "qualified_type" => self.visit_type(n, ctx),
            "self"
            | "crate"
            | "super"
            | "label"
            | "lifetime"
            | "line_comment"
            | "block_comment"
            | "visibility_modifier"
            | "mutable_specifier"
            | "field_identifier"
            | "shorthand_field_identifier"
            | "self_parameter"
            | "primitive_type"
            | "metavariable"
            | "string_literal"
            | "raw_string_literal"
            | "char_literal"
            | "integer_literal"
            | "float_literal"
            | "boolean_literal"
            | "empty_statement"
            | "shebang" => {}
            _ => {
                if is_item_kind(kind) {
                    self.item(n, ctx, &[]);
                    return;
                }
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    self.visit(k, ctx);
                }
            }
        }
    }

    /// The function part of a call expression.
    pub(super) fn callee(&mut self, f: Node<'_>, ctx: &Ctx) {
        match f.kind_str() {
            "identifier" => self.seg(f, RK::Call, None, ctx),
            "scoped_identifier" => {
                self.path(f, RK::Call, None, ctx);
            }
            "field_expression" => {
                let value = f.field("value");
                let receiver = value.and_then(|v| self.expr_type(v));
                if let Some(v) = value {
                    self.visit(v, ctx);
                }
                if let Some(name) = f.field("field")
                    && name.kind_str() == "field_identifier"
                {
                    self.push_member(name, RK::MethodCall, receiver, ctx);
                }
            }
            "generic_function" => {
                if let Some(inner) = f.field("function") {
                    self.callee(inner, ctx);
                }
                if let Some(ta) = f.field("type_arguments") {
                    self.type_args(ta, None, ctx);
                }
            }
            _ => self.visit(f, ctx),
        }
    }

    pub(super) fn struct_expression(&mut self, n: Node<'_>, ctx: &Ctx) {
        let start = self.refs.len();
        let q = n
            .field("name")
            .map(|name| self.path(name, RK::Path, None, ctx));
        if let Some(written) = &q {
            // `a::Foo::<T>` constructs `Foo`
            let last = written.rsplit("::").next().unwrap_or(written);
            let target = last.split('<').next().unwrap_or(last).to_string();
            self.edge_to_named(start, EdgeKind::Instantiates, &ctx.enclosing, &target);
        }
        let Some(body) = n.field("body") else {
            return;
        };
        let mut c = body.walk();
        for k in body.named_children(&mut c) {
            match k.kind_str() {
                "field_initializer" => {
                    if let Some(f) = k.field("field") {
                        self.push_field(f, q.clone(), ctx);
                    }
                    if let Some(v) = k.field("value") {
                        self.visit(v, ctx);
                    }
                }
                "shorthand_field_initializer" => {
                    let mut c2 = k.walk();
                    for id in k.named_children(&mut c2) {
                        if id.kind_str() == "identifier" {
                            self.push_field(id, q.clone(), ctx);
                            // the same name is also a value use (a local, or e.g. a const)
                            self.seg(id, RK::Path, None, ctx);
                        }
                    }
                }
                _ => self.visit(k, ctx),
            }
        }
    }

    // ----- attributes -------------------------------------------------------------------------

    /// `#[derive(A, B)]` → `Macro` references to A and B; `#[some::attr]` → `Macro` reference
    /// to the attribute macro; built-in and tool attributes → nothing.
    pub(super) fn attribute(&mut self, n: Node<'_>, ctx: &Ctx) {
        let Some(attr) = n.named_child(0).filter(|a| a.kind_str() == "attribute") else {
            return;
        };
        let Some(path) = attr.named_child(0) else {
            return;
        };
        let args = attr.field("arguments");
        let first_segment = {
            let mut p = path;
            while let Some(inner) = p.field("path") {
                p = inner;
            }
            self.text(p)
        };
        match self.text(path) {
            "derive" => {
                if let Some(a) = args {
                    self.tokens(a, ctx, RK::Macro);
                }
            }
            "cfg_attr" => {
                if let Some(a) = args {
                    let kids = named_kids(a);
                    for w in kids.windows(2) {
                        if w[0].kind_str() == "identifier"
                            && self.text(w[0]) == "derive"
                            && w[1].kind_str() == "token_tree"
                        {
                            self.tokens(w[1], ctx, RK::Macro);
                        }
                    }
                }
            }
            _ if is_builtin_attribute(first_segment) => {}
            _ => {
                self.path(path, RK::Macro, None, ctx);
            }
        }
    }
}
