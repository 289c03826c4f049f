//! Items: functions, types, traits, impls, consts, modules, macro definitions, `use`.

use crate::grammar::NodeExt;
use tree_sitter::Node;

use super::receivers::{Rule, Ty};
use super::{Ctx, Extractor, MacroPos, join, named_kids};
use crate::model::{EdgeKind, ReferenceKind as RK, SymbolKind as SK};
use crate::rust_lang::text::{signature, strip_raw};

impl<'s> Extractor<'s> {
    // ----- item lists -----------------------------------------------------------------------

    /// Children of a file, module/impl/trait body, block or error node. Items get the doc
    /// comments and attributes that precede them.
    pub(super) fn list(&mut self, n: Node<'_>, ctx: &Ctx, item_level: bool) {
        let kids = named_kids(n);
        for (i, &k) in kids.iter().enumerate() {
            // `name!(..);` at item level parses as an expression statement.
            let k = match k.kind_str() {
                "expression_statement" if item_level => match k.named_child(0) {
                    Some(m) if m.kind_str() == "macro_invocation" && k.named_child_count() == 1 => {
                        m
                    }
                    _ => k,
                },
                _ => k,
            };
            if k.kind_str() == "macro_invocation" {
                let pos = if item_level {
                    MacroPos::Item
                } else {
                    MacroPos::Expr
                };
                self.macro_invocation(k, ctx, pos);
            } else if !self.item(k, ctx, &kids[..i]) {
                self.visit(k, ctx);
            }
        }
    }

    /// Handle `n` if it is an item; false if it is not one.
    pub(super) fn item(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) -> bool {
        match n.kind_str() {
            "function_item" | "function_signature_item" => self.function(n, ctx, prev),
            "struct_item" => self.struct_like(n, ctx, prev, SK::Struct),
            "union_item" => self.struct_like(n, ctx, prev, SK::Union),
            "enum_item" => self.enum_item(n, ctx, prev),
            "trait_item" => self.trait_item(n, ctx, prev),
            "impl_item" => self.impl_item(n, ctx),
            "const_item" => self.const_static(n, ctx, prev, SK::Const),
            "static_item" => self.const_static(n, ctx, prev, SK::Static),
            "type_item" | "associated_type" => self.type_alias(n, ctx, prev),
            "mod_item" => self.module(n, ctx, prev),
            "macro_definition" => self.macro_definition(n, ctx, prev),
            "use_declaration" => {
                let start = self.refs.len();
                if let Some(arg) = n.field("argument") {
                    self.use_tree(arg, None, ctx);
                }
                let public = n.named_children(&mut n.walk()).any(|c| {
                    c.kind_str() == "visibility_modifier" && self.text(c).starts_with("pub")
                });
                if public {
                    self.reexports_since(start, &ctx.enclosing);
                }
            }
            "extern_crate_declaration" => {
                if let Some(name) = n.field("name")
                    && name.kind_str() == "identifier"
                {
                    self.seg(name, RK::Use, None, ctx);
                }
            }
            "foreign_mod_item" => {
                if let Some(body) = n.field("body") {
                    self.list(body, ctx, true);
                }
            }
            _ => return false,
        }
        true
    }

    pub(super) fn function(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) {
        let body = n.field("body");
        let name_node = n.field("name").filter(|nm| nm.kind_str() == "identifier");
        let qn = match name_node {
            Some(name_node) => {
                let name = strip_raw(self.text(name_node));
                let qn = self.qualify(ctx, name);
                let kind = if ctx.owner.is_some() {
                    SK::Method
                } else {
                    SK::Function
                };
                let sig = self.sig_until(n, body);
                self.define(n, name_node, kind, qn.clone(), ctx.owner.clone(), sig, prev);
                self.implements(name_node, ctx, &qn);
                qn
            }
            None => ctx.enclosing.clone(),
        };
        let fctx = Ctx {
            prefix: qn.clone(),
            owner: None,
            enclosing: qn,
        };
        // `self` is the owner's in functions of impl and trait bodies, nowhere else
        let saved_scope = self.enter_scope(ctx.owner.clone());
        let saved_tparams = self.tparams.len();
        if let Some(tp) = n.field("type_parameters") {
            self.type_parameters(tp, &fctx);
        }
        if let Some(params) = n.field("parameters") {
            self.parameters(params, &fctx);
        }
        if let Some(ret) = n.field("return_type") {
            self.visit_type(ret, &fctx);
        }
        self.where_clauses(n, &fctx);
        if let Some(body) = body {
            self.visit(body, &fctx);
        }
        self.tparams.truncate(saved_tparams);
        self.leave_scope(saved_scope);
    }

    pub(super) fn where_clauses(&mut self, n: Node<'_>, ctx: &Ctx) {
        let mut c = n.walk();
        for k in n.named_children(&mut c) {
            if k.kind_str() == "where_clause" {
                self.where_clause(k, ctx);
            }
        }
    }

    pub(super) fn where_clause(&mut self, n: Node<'_>, ctx: &Ctx) {
        let mut c = n.walk();
        for pred in n.named_children(&mut c) {
            if let Some(left) = pred.field("left") {
                self.visit_type(left, ctx);
            }
            if let Some(bounds) = pred.field("bounds") {
                self.visit_type(bounds, ctx);
            }
        }
    }

    /// Bind generic parameter names, then walk their bounds and defaults.
    pub(super) fn type_parameters(&mut self, n: Node<'_>, ctx: &Ctx) {
        let kids = named_kids(n);
        for &k in &kids {
            if matches!(k.kind_str(), "type_parameter" | "const_parameter")
                && let Some(name) = k.field("name")
            {
                let name = strip_raw(self.text(name));
                self.tparams.push(name);
            }
        }
        for &k in &kids {
            match k.kind_str() {
                "type_parameter" => {
                    if let Some(b) = k.field("bounds") {
                        self.visit_type(b, ctx);
                    }
                    if let Some(d) = k.field("default_type") {
                        self.visit_type(d, ctx);
                    }
                }
                "const_parameter" => {
                    if let Some(t) = k.field("type") {
                        self.visit_type(t, ctx);
                    }
                    if let Some(v) = k.field("value") {
                        self.visit(v, ctx);
                    }
                }
                "attribute_item" => self.attribute(k, ctx),
                _ => {}
            }
        }
    }

    pub(super) fn parameters(&mut self, n: Node<'_>, ctx: &Ctx) {
        let mut c = n.walk();
        for p in n.named_children(&mut c) {
            match p.kind_str() {
                "parameter" | "variadic_parameter" => {
                    if let Some(t) = p.field("type") {
                        self.visit_type(t, ctx);
                    }
                    if let Some(pat) = p.field("pattern") {
                        self.pattern(pat, ctx);
                        let ty = p.field("type").and_then(|t| self.type_of(t));
                        self.bind_type(pat, ty.map(|t| Ty::Name(t, Rule::Declared)));
                    }
                }
                "self_parameter" | "line_comment" | "block_comment" => {}
                "attribute_item" => self.attribute(p, ctx),
                _ => self.visit_type(p, ctx),
            }
        }
    }

    pub(super) fn struct_like(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>], kind: SK) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = strip_raw(self.text(name_node));
        let qn = self.qualify(ctx, name);
        let body = n.field("body");
        let sig = match body {
            Some(b) if b.kind_str() == "field_declaration_list" => self.sig_until(n, Some(b)),
            _ => signature(self.text(n)),
        };
        self.define(n, name_node, kind, qn.clone(), None, sig, prev);
        let sctx = Ctx {
            prefix: qn.clone(),
            owner: None,
            enclosing: qn.clone(),
        };
        let saved_tparams = self.tparams.len();
        if let Some(tp) = n.field("type_parameters") {
            self.type_parameters(tp, &sctx);
        }
        self.where_clauses(n, &sctx);
        if let Some(body) = body {
            self.fields(body, &sctx, name, &qn);
            self.record_fields(name, body);
        }
        self.tparams.truncate(saved_tparams);
    }

    /// A `{ named: fields }` or `(tuple, fields)` list; named fields become definitions
    /// qualified under `qn` with `owner`.
    pub(super) fn fields(&mut self, body: Node<'_>, ctx: &Ctx, owner: &str, qn: &str) {
        let kids = named_kids(body);
        for (i, &k) in kids.iter().enumerate() {
            match k.kind_str() {
                "field_declaration" => {
                    if let Some(name_node) = k.field("name") {
                        let fname = strip_raw(self.text(name_node));
                        let sig = signature(self.text(k));
                        self.define(
                            k,
                            name_node,
                            SK::Field,
                            join(qn, fname),
                            Some(owner.to_string()),
                            sig,
                            &kids[..i],
                        );
                    }
                    if let Some(t) = k.field("type") {
                        self.visit_type(t, ctx);
                    }
                }
                "attribute_item" => self.attribute(k, ctx),
                "visibility_modifier" | "line_comment" | "block_comment" => {}
                _ => self.visit_type(k, ctx),
            }
        }
    }

    pub(super) fn enum_item(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = strip_raw(self.text(name_node));
        let qn = self.qualify(ctx, name);
        let body = n.field("body");
        let sig = self.sig_until(n, body);
        self.define(n, name_node, SK::Enum, qn.clone(), None, sig, prev);
        let ectx = Ctx {
            prefix: qn.clone(),
            owner: None,
            enclosing: qn.clone(),
        };
        let saved_tparams = self.tparams.len();
        if let Some(tp) = n.field("type_parameters") {
            self.type_parameters(tp, &ectx);
        }
        self.where_clauses(n, &ectx);
        if let Some(body) = body {
            let kids = named_kids(body);
            for (i, &v) in kids.iter().enumerate() {
                match v.kind_str() {
                    "enum_variant" => {
                        let Some(vname_node) = v.field("name") else {
                            continue;
                        };
                        let vname = strip_raw(self.text(vname_node));
                        let vqn = join(&qn, vname);
                        let sig = signature(self.text(v));
                        let owner = Some(name.to_string());
                        self.define(
                            v,
                            vname_node,
                            SK::Variant,
                            vqn.clone(),
                            owner,
                            sig,
                            &kids[..i],
                        );
                        if let Some(vbody) = v.field("body") {
                            self.fields(vbody, &ectx, name, &vqn);
                        }
                        if let Some(value) = v.field("value") {
                            self.visit(value, &ectx);
                        }
                    }
                    "attribute_item" => self.attribute(v, &ectx),
                    _ => {}
                }
            }
        }
        self.tparams.truncate(saved_tparams);
    }

    pub(super) fn trait_item(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = strip_raw(self.text(name_node));
        let qn = self.qualify(ctx, name);
        let body = n.field("body");
        let sig = self.sig_until(n, body);
        self.define(n, name_node, SK::Trait, qn.clone(), None, sig, prev);
        let tctx = Ctx {
            prefix: ctx.prefix.clone(),
            owner: Some(name.to_string()),
            enclosing: qn,
        };
        let saved_tparams = self.tparams.len();
        if let Some(tp) = n.field("type_parameters") {
            self.type_parameters(tp, &tctx);
        }
        if let Some(bounds) = n.field("bounds") {
            self.visit_type(bounds, &tctx);
        }
        self.where_clauses(n, &tctx);
        let saved_self = self.impl_self.take();
        if let Some(body) = body {
            self.list(body, &tctx, true);
        }
        self.impl_self = saved_self;
        self.tparams.truncate(saved_tparams);
    }

    pub(super) fn impl_item(&mut self, n: Node<'_>, ctx: &Ctx) {
        let self_type = n.field("type");
        let owner = self_type.map(|t| self.type_name(t)).unwrap_or_default();
        let ictx = Ctx {
            prefix: ctx.prefix.clone(),
            enclosing: join(&ctx.prefix, &owner),
            owner: Some(owner),
        };
        let saved_tparams = self.tparams.len();
        if let Some(tp) = n.field("type_parameters") {
            self.type_parameters(tp, &ictx);
        }
        let trait_name = n.field("trait").map(|t| self.type_name(t));
        if let Some(tr) = n.field("trait") {
            let start = self.refs.len();
            self.visit_type(tr, &ictx);
            if let Some(name) = &trait_name {
                self.edge_to_named(start, EdgeKind::Implements, &ictx.enclosing, name);
            }
        }
        if let Some(t) = self_type {
            self.visit_type(t, &ictx);
        }
        self.where_clauses(n, &ictx);
        // `impl<T> Trait for T` has no named self type to stand for.
        let named_self = ictx
            .owner
            .clone()
            .filter(|o| !o.is_empty() && !self.tparams.contains(&o.as_str()));
        let saved_self = std::mem::replace(&mut self.impl_self, named_self);
        let saved_trait = std::mem::replace(&mut self.impl_trait, trait_name);
        if let Some(body) = n.field("body") {
            self.list(body, &ictx, true);
        }
        self.impl_trait = saved_trait;
        self.impl_self = saved_self;
        self.tparams.truncate(saved_tparams);
    }

    /// The name an impl's self type is known by: `Foo` for `Foo<T>`, `a::Foo`, `&Foo`.
    pub(super) fn type_name(&self, t: Node<'_>) -> String {
        match t.kind_str() {
            "type_identifier" | "identifier" | "primitive_type" => {
                strip_raw(self.text(t)).to_string()
            }
            "generic_type" | "reference_type" | "pointer_type" => t
                .field("type")
                .map(|i| self.type_name(i))
                .unwrap_or_default(),
            "scoped_type_identifier" | "scoped_identifier" => t
                .field("name")
                .map(|i| self.type_name(i))
                .unwrap_or_default(),
            "bounded_type" | "tuple_type" | "array_type" => t
                .named_child(0)
                .map(|i| self.type_name(i))
                .unwrap_or_default(),
            "dynamic_type" | "abstract_type" => t
                .field("trait")
                .map(|i| self.type_name(i))
                .unwrap_or_default(),
            _ => signature(self.text(t)),
        }
    }

    pub(super) fn const_static(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>], kind: SK) {
        let value = n.field("value");
        let qn = match n.field("name") {
            Some(name_node) => {
                let name = strip_raw(self.text(name_node));
                let qn = self.qualify(ctx, name);
                let sig = self.sig_until(n, value);
                self.define(n, name_node, kind, qn.clone(), ctx.owner.clone(), sig, prev);
                self.implements(name_node, ctx, &qn);
                qn
            }
            None => ctx.enclosing.clone(),
        };
        let cctx = Ctx {
            prefix: qn.clone(),
            owner: None,
            enclosing: qn,
        };
        if let Some(t) = n.field("type") {
            self.visit_type(t, &cctx);
        }
        if let Some(v) = value {
            let saved_scope = self.enter_scope(None);
            self.visit(v, &cctx);
            self.leave_scope(saved_scope);
        }
    }

    pub(super) fn type_alias(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = strip_raw(self.text(name_node));
        let qn = self.qualify(ctx, name);
        let sig = signature(self.text(n));
        self.define(
            n,
            name_node,
            SK::TypeAlias,
            qn.clone(),
            ctx.owner.clone(),
            sig,
            prev,
        );
        self.implements(name_node, ctx, &qn);
        let actx = Ctx {
            prefix: qn.clone(),
            owner: None,
            enclosing: qn,
        };
        let saved_tparams = self.tparams.len();
        if let Some(tp) = n.field("type_parameters") {
            self.type_parameters(tp, &actx);
        }
        if let Some(b) = n.field("bounds") {
            self.visit_type(b, &actx);
        }
        if let Some(t) = n.field("type") {
            self.visit_type(t, &actx);
        }
        self.where_clauses(n, &actx);
        self.tparams.truncate(saved_tparams);
    }

    pub(super) fn module(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = strip_raw(self.text(name_node));
        let qn = join(&ctx.prefix, name);
        let body = n.field("body");
        let sig = self.sig_until(n, body);
        self.define(n, name_node, SK::Module, qn.clone(), None, sig, prev);
        if let Some(body) = body {
            let mctx = Ctx {
                prefix: qn.clone(),
                owner: None,
                enclosing: qn,
            };
            let saved_scope = self.enter_scope(None);
            let saved_tparams = std::mem::take(&mut self.tparams);
            self.list(body, &mctx, true);
            self.leave_scope(saved_scope);
            self.tparams = saved_tparams;
        }
    }

    pub(super) fn macro_definition(&mut self, n: Node<'_>, ctx: &Ctx, prev: &[Node<'_>]) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = strip_raw(self.text(name_node));
        let qn = join(&ctx.prefix, name);
        let sig = format!("macro_rules! {name}");
        self.define(n, name_node, SK::Macro, qn.clone(), None, sig, prev);
        let mctx = Ctx {
            prefix: qn.clone(),
            owner: None,
            enclosing: qn,
        };
        let saved_scope = self.enter_scope(None);
        let mut c = n.walk();
        for rule in n.named_children(&mut c) {
            if rule.kind_str() == "macro_rule"
                && let Some(right) = rule.field("right")
            {
                self.tokens(right, &mctx, RK::MacroToken);
            }
        }
        self.leave_scope(saved_scope);
    }

    // ----- use trees ------------------------------------------------------------------------

    pub(super) fn use_tree(&mut self, n: Node<'_>, base: Option<String>, ctx: &Ctx) {
        match n.kind_str() {
            "identifier" | "scoped_identifier" => {
                self.path(n, RK::Use, base, ctx);
            }
            "use_as_clause" => {
                if let Some(p) = n.field("path") {
                    self.path(p, RK::Use, base, ctx);
                }
            }
            "scoped_use_list" => {
                let base = match n.field("path") {
                    Some(p) => Some(self.path(p, RK::Use, base, ctx)),
                    None => base,
                };
                if let Some(list) = n.field("list") {
                    self.use_tree(list, base, ctx);
                }
            }
            "use_list" => {
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    self.use_tree(k, base.clone(), ctx);
                }
            }
            "use_wildcard" => {
                if let Some(p) = n.named_child(0) {
                    self.path(p, RK::Use, base, ctx);
                }
            }
            _ => {}
        }
    }
}
