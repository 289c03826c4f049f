//! TypeScript and JavaScript extraction (tree-sitter-typescript).
//!
//! `.ts/.mts/.cts` parse with the TypeScript grammar, `.tsx` and all JavaScript
//! (`.js/.jsx/.mjs/.cjs`) with the TSX grammar (a superset of JavaScript with JSX); the
//! stored language is `typescript` or `javascript`.
//!
//! Definitions: classes (`class`; abstract too), interfaces (`interface`), type aliases
//! (`type_alias`), enums (`enum`) and their members (`variant`, owner = the enum),
//! function declarations (`function`), module-level `const/let/var f = () => ..` or
//! `= function ..` (`function`), methods and constructors (`method`, owner = the class),
//! class fields (`field`, owner = the class), exported module-level consts that are not
//! functions (`const`). Functions and classes declared inside functions are qualified
//! under them. Signature = the header up to the body; docstring = a `/** .. */` comment
//! right before the declaration (or its `export`).
//!
//! References: `f()` → `call`; `x.m()` → `method_call` (qualifier `Self` for `this.m()`,
//! the `::`-joined dotted name when `x` is a non-local name or a chain of them, else
//! none); `new X()` → `call` of `X`; `x.f` → `field`; imports and re-exports → `use` with
//! the module as qualifier: a relative specifier resolved against the file's directory,
//! `::`-joined from the project root without extension or `index` (`import { a as b }
//! from "./m"` in `src/x.ts` → `a`, `src::m`), a package specifier as written. A use of
//! `b` (renamed import) is a reference of `a`; members of a namespace import
//! (`import * as ns`) are `path`s and `call`s qualified by its module; type
//! names, `extends` and `implements` → `type`; `<Comp />` JSX elements with a capitalised
//! name → `call`; other names read that are not local bindings → `path`.
//!
//! Not covered: interface members are not definitions; namespaces are not modules (their
//! contents are qualified as if at the enclosing level); `require()` is an ordinary call;
//! block scoping is approximated by function scoping.

use crate::grammar::NodeExt;
use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::Language;
use super::common::{Out, collapse, join, named_kids, parse};
use crate::model::{FileSymbols, ReferenceKind as RK, SymbolKind as SK};

pub struct TypeScript;
pub struct JavaScript;

impl Language for TypeScript {
    fn name(&self) -> &'static str {
        "typescript"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["ts", "tsx", "mts", "cts"]
    }

    fn project_markers(&self) -> &'static [&'static str] {
        &["package.json", "tsconfig.json"]
    }

    fn skipped_dirs(&self) -> &'static [&'static str] {
        &["node_modules"]
    }

    fn module_path(&self, package: &str, relative_path: &str) -> Vec<String> {
        module_path(package, relative_path)
    }

    fn extract(&self, source: &str, module_path: &[String], path: &str) -> FileSymbols {
        let tsx = path.ends_with(".tsx");
        extract(source, module_path, path, tsx)
    }
}

impl Language for JavaScript {
    fn name(&self) -> &'static str {
        "javascript"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["js", "jsx", "mjs", "cjs"]
    }

    fn project_markers(&self) -> &'static [&'static str] {
        &["package.json"]
    }

    fn skipped_dirs(&self) -> &'static [&'static str] {
        &["node_modules"]
    }

    fn module_path(&self, package: &str, relative_path: &str) -> Vec<String> {
        module_path(package, relative_path)
    }

    fn extract(&self, source: &str, module_path: &[String], path: &str) -> FileSymbols {
        extract(source, module_path, path, true)
    }
}

/// `src/a/b.ts` → `[package, src, a, b]`; `src/a/index.ts` → `[package, src, a]`;
/// `x.d.ts` → `[package, x]`.
fn module_path(package: &str, relative_path: &str) -> Vec<String> {
    let normalized = relative_path.replace('\\', "/");
    let mut parts: Vec<&str> = normalized
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if let Some(last) = parts.last_mut() {
        let stem = last.rsplit_once('.').map(|(s, _)| s).unwrap_or(last);
        *last = stem.strip_suffix(".d").unwrap_or(stem);
    }
    if parts.last() == Some(&"index") {
        parts.pop();
    }
    std::iter::once(package.to_string())
        .chain(parts.iter().map(|p| p.to_string()))
        .collect()
}

/// A module specifier as the module it names: a relative one (`./a`, `../b/index.js`)
/// resolved against `dir` (the importing file's directory, from the project root) and
/// `::`-joined without extension or trailing `index` (`src::internal::b`); a package
/// specifier (`rxjs`, `@scope/pkg/sub`) as written.
fn resolve_specifier(dir: &[&str], spec: &str) -> String {
    if !(spec == "." || spec == ".." || spec.starts_with("./") || spec.starts_with("../")) {
        return spec.to_string();
    }
    let mut out: Vec<&str> = dir.to_vec();
    for part in spec.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    if let Some(last) = out.last_mut() {
        for ext in [".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"] {
            if let Some(stem) = last.strip_suffix(ext) {
                *last = stem.strip_suffix(".d").unwrap_or(stem);
                break;
            }
        }
    }
    if out.last() == Some(&"index") {
        out.pop();
    }
    out.join("::")
}

fn extract(source: &str, module_path: &[String], path: &str, tsx: bool) -> FileSymbols {
    let tree = if tsx {
        parse(
            "tsx",
            || tree_sitter_typescript::LANGUAGE_TSX.into(),
            source,
        )
    } else {
        parse(
            "typescript",
            || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            source,
        )
    };
    let Some(tree) = tree else {
        return FileSymbols {
            has_parse_errors: true,
            ..FileSymbols::default()
        };
    };
    let root = tree.root_node();
    let module = module_path.join("::");
    let normalized = path.replace('\\', "/");
    let mut dir: Vec<&str> = normalized
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    dir.pop();
    let mut ex = Extractor {
        out: Out::new(source),
        scopes: Vec::new(),
        dir,
        namespaces: HashMap::new(),
        renames: HashMap::new(),
        nest: 0,
    };
    ex.imported_names(root);
    let ctx = Ctx {
        prefix: module.clone(),
        owner: None,
        enclosing: module,
        module_level: true,
    };
    ex.walk(root, &ctx);
    let (definitions, references) = ex.out.finish();
    FileSymbols {
        definitions,
        references,
        has_parse_errors: root.has_error(),
        edges: Vec::new(),
    }
}

const MAX_NEST: u32 = 250;

#[derive(Clone)]
struct Ctx {
    prefix: String,
    /// The class or enum whose body this is.
    owner: Option<String>,
    enclosing: String,
    /// Directly at the top of the module (or an `export` there).
    module_level: bool,
}

struct Extractor<'s> {
    out: Out<'s>,
    scopes: Vec<HashSet<&'s str>>,
    /// The file's directory, from the project root: what relative specifiers start from.
    dir: Vec<&'s str>,
    /// `import * as ns from './m'`: `ns` → the module it names (`src::m`).
    namespaces: HashMap<&'s str, String>,
    /// `import { a as b }`: `b` → `a`. A use of `b` is a reference of what `a` names.
    renames: HashMap<&'s str, &'s str>,
    nest: u32,
}

fn is_function_like(kind: &str) -> bool {
    matches!(
        kind,
        "arrow_function" | "function_expression" | "function" | "generator_function"
    )
}

/// A `/** .. */` comment's text: markers and leading `*` stripped.
fn jsdoc_text(raw: &str) -> Option<String> {
    let inner = raw.strip_prefix("/**")?.strip_suffix("*/")?;
    let lines: Vec<&str> = inner
        .lines()
        .map(|l| {
            let l = l.trim();
            let l = l.strip_prefix('*').unwrap_or(l);
            l.strip_prefix(' ').unwrap_or(l).trim_end()
        })
        .collect();
    let start = lines.iter().position(|l| !l.is_empty())?;
    let end = lines.iter().rposition(|l| !l.is_empty())?;
    Some(lines[start..=end].join("\n"))
}

impl<'s> Extractor<'s> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.out.text(n)
    }

    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    fn reference(&mut self, n: Node<'_>, kind: RK, qualifier: Option<String>, ctx: &Ctx) {
        let mut name = self.text(n);
        if qualifier.is_none()
            && kind != RK::Use
            && let Some(original) = self.renames.get(name)
        {
            name = original;
        }
        self.out.reference(n, name, kind, qualifier, &ctx.enclosing);
    }

    /// What the file's imports bind, before anything is read (imports are hoisted):
    /// namespace imports' modules and renamed imports' original names.
    fn imported_names(&mut self, root: Node<'s>) {
        for stmt in named_kids(root) {
            if stmt.kind_str() != "import_statement" {
                continue;
            }
            let source = stmt
                .field("source")
                .map(|s| resolve_specifier(&self.dir, &self.string_value(s)));
            let mut stack = vec![stmt];
            while let Some(cur) = stack.pop() {
                for c in named_kids(cur) {
                    match c.kind_str() {
                        "import_clause" | "named_imports" => stack.push(c),
                        "namespace_import" => {
                            if let (Some(id), Some(src)) = (c.named_child(0), &source)
                                && id.kind_str() == "identifier"
                            {
                                self.namespaces.insert(self.text(id), src.clone());
                            }
                        }
                        "import_specifier" => {
                            if let (Some(name), Some(alias)) = (c.field("name"), c.field("alias"))
                                && name.kind_str() == "identifier"
                            {
                                self.renames.insert(self.text(alias), self.text(name));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// The node a definition spans: the declaration, or the `export` statement around it.
    fn item(&self, decl: Node<'s>) -> Node<'s> {
        match decl.parent() {
            Some(p) if p.kind_str() == "export_statement" => p,
            _ => decl,
        }
    }

    fn jsdoc(&self, item: Node<'_>) -> Option<String> {
        let prev = item.prev_named_sibling()?;
        if prev.kind_str() != "comment" || prev.end_position().row + 1 < item.start_position().row {
            return None;
        }
        jsdoc_text(self.text(prev))
    }

    /// Header text from `item` to `body`, collapsed, without a trailing `{`, `=>` or `;`.
    fn header(&self, item: Node<'_>, body: Option<Node<'_>>) -> String {
        let end = body.map(|b| b.start_byte()).unwrap_or(item.end_byte());
        let raw = self.out.src.get(item.start_byte()..end).unwrap_or("");
        let mut s = collapse(raw);
        loop {
            let t = s.trim_end();
            let t = t
                .strip_suffix('{')
                .or_else(|| t.strip_suffix("=>"))
                .or_else(|| t.strip_suffix(';'))
                .unwrap_or(t)
                .trim_end();
            if t.len() == s.len() {
                break;
            }
            s.truncate(t.len());
        }
        s
    }

    #[allow(clippy::too_many_arguments)]
    fn define(
        &mut self,
        decl: Node<'s>,
        name_node: Node<'_>,
        kind: SK,
        ctx: &Ctx,
        body: Option<Node<'_>>,
        owner: Option<String>,
    ) -> String {
        let item = self.item(decl);
        let name = self.text(name_node);
        let qname = join(&ctx.prefix, name);
        let doc = self.jsdoc(item);
        let sig = self.header(item, body);
        self.out
            .def(item, name_node, name, kind, qname.clone(), owner, sig, doc);
        qname
    }

    fn walk(&mut self, n: Node<'s>, ctx: &Ctx) {
        if self.nest > MAX_NEST {
            return;
        }
        self.nest += 1;
        self.walk_inner(n, ctx);
        self.nest -= 1;
    }

    fn kids(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            self.walk(c, ctx);
        }
    }

    /// Dispatch on the node kind. The larger arms live in `arm_*` methods, not inlined,
    /// so that this frame stays small: an unoptimised build otherwise spends ~9 KB of stack
    /// per nesting level.
    fn walk_inner(&mut self, n: Node<'s>, ctx: &Ctx) {
        match n.kind_str() {
            "program" => self.kids(n, ctx),
            "export_statement" => self.arm_export_statement(n, ctx),
            "import_statement" => self.import(n, ctx),
            "function_declaration" | "generator_function_declaration" => {
                self.arm_function_declaration(n, ctx)
            }
            "class_declaration" | "abstract_class_declaration" | "class" => self.class(n, ctx),
            "interface_declaration" => self.arm_interface_declaration(n, ctx),
            "type_alias_declaration" => self.arm_type_alias_declaration(n, ctx),
            "enum_declaration" => self.arm_enum_declaration(n, ctx),
            "lexical_declaration" | "variable_declaration" => self.declaration(n, ctx),
            "variable_declarator" => self.arm_variable_declarator(n, ctx),
            k if is_function_like(k) => self.function(n, ctx.enclosing.clone(), ctx),
            "identifier" | "shorthand_property_identifier" => {
                if !self.is_local(self.text(n)) {
                    self.reference(n, RK::Path, None, ctx);
                }
            }
            "type_identifier" => {
                if !self.is_local(self.text(n)) {
                    self.reference(n, RK::Type, None, ctx);
                }
            }
            "nested_type_identifier" => self.arm_nested_type_identifier(n, ctx),
            "call_expression" => self.arm_call_expression(n, ctx),
            "new_expression" => self.arm_new_expression(n, ctx),
            "member_expression" => self.member(n, RK::Field, ctx),
            "extends_clause" => self.arm_extends_clause(n, ctx),
            "jsx_opening_element" | "jsx_self_closing_element" => {
                self.arm_jsx_opening_element(n, ctx)
            }
            "jsx_closing_element"
            | "property_identifier"
            | "private_property_identifier"
            | "this"
            | "super"
            | "comment"
            | "string"
            | "number"
            | "regex"
            | "true"
            | "false"
            | "null"
            | "undefined"
            | "predefined_type"
            | "statement_identifier"
            | "hash_bang_line"
            | "jsx_text"
            | "string_fragment"
            | "escape_sequence" => {}
            "pair" => self.arm_pair(n, ctx),
            "labeled_statement" | "break_statement" | "continue_statement" => {
                self.arm_labeled_statement(n, ctx)
            }
            "catch_clause" => self.arm_catch_clause(n, ctx),
            "for_in_statement" => self.arm_for_in_statement(n, ctx),
            _ => self.kids(n, ctx),
        }
    }

    #[inline(never)]
    fn arm_export_statement(&mut self, n: Node<'s>, ctx: &Ctx) {
        let source = n
            .field("source")
            .map(|s| resolve_specifier(&self.dir, &self.string_value(s)));
        for c in named_kids(n) {
            match c.kind_str() {
                "export_clause" => {
                    for spec in named_kids(c) {
                        if let Some(name) = spec.field("name") {
                            match &source {
                                Some(src) => self.reference(name, RK::Use, Some(src.clone()), ctx),
                                None if name.kind_str() == "identifier" => self.walk(name, ctx),
                                None => {}
                            }
                        }
                    }
                }
                // `export * as ns from ..` binds `ns`; it reads nothing.
                "string" | "comment" | "namespace_export" => {}
                _ => self.walk(c, ctx),
            }
        }
    }

    #[inline(never)]
    fn arm_function_declaration(&mut self, n: Node<'s>, ctx: &Ctx) {
        let Some(name) = n.field("name") else {
            return self.function(n, ctx.enclosing.clone(), ctx);
        };
        let body = n.field("body");
        let q = self.define(n, name, SK::Function, ctx, body, None);
        self.function(n, q, ctx);
    }

    #[inline(never)]
    fn arm_interface_declaration(&mut self, n: Node<'s>, ctx: &Ctx) {
        let Some(name) = n.field("name") else {
            return;
        };
        let body = n.field("body");
        let q = self.define(n, name, SK::Interface, ctx, body, None);
        let inner = self.inner(ctx, q, None);
        self.with_type_params(n, |ex| {
            for c in named_kids(n) {
                if Some(c) != n.field("name") {
                    ex.walk(c, &inner);
                }
            }
        });
    }

    #[inline(never)]
    fn arm_type_alias_declaration(&mut self, n: Node<'s>, ctx: &Ctx) {
        let Some(name) = n.field("name") else {
            return;
        };
        let q = self.define(n, name, SK::TypeAlias, ctx, None, None);
        let inner = self.inner(ctx, q, None);
        self.with_type_params(n, |ex| {
            if let Some(v) = n.field("value") {
                ex.walk(v, &inner);
            }
        });
    }

    #[inline(never)]
    fn arm_enum_declaration(&mut self, n: Node<'s>, ctx: &Ctx) {
        let Some(name) = n.field("name") else {
            return;
        };
        let body = n.field("body");
        let q = self.define(n, name, SK::Enum, ctx, body, None);
        let enum_name = self.text(name).to_string();
        let Some(body) = body else { return };
        let inner = self.inner(ctx, q.clone(), None);
        for m in named_kids(body) {
            let (name_node, value) = if m.kind_str() == "enum_assignment" {
                (m.field("name"), m.field("value"))
            } else {
                (Some(m), None)
            };
            if let Some(nn) = name_node.filter(|nn| nn.kind_str() == "property_identifier") {
                let vname = self.text(nn);
                let (line_doc, sig) = (self.jsdoc(m), collapse(self.text(m)));
                self.out.def(
                    m,
                    nn,
                    vname,
                    SK::Variant,
                    join(&q, vname),
                    Some(enum_name.clone()),
                    sig,
                    line_doc,
                );
            }
            if let Some(v) = value {
                self.walk(v, &inner);
            }
        }
    }

    #[inline(never)]
    fn arm_variable_declarator(&mut self, n: Node<'s>, ctx: &Ctx) {
        if let Some(name) = n.field("name") {
            self.pattern(name, ctx);
        }
        for f in ["type", "value"] {
            if let Some(c) = n.field(f) {
                self.walk(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_nested_type_identifier(&mut self, n: Node<'s>, ctx: &Ctx) {
        if let (Some(m), Some(name)) = (n.field("module"), n.field("name")) {
            let written = self.text(m).replace('.', "::");
            let q = match written.split_once("::") {
                Some((first, rest)) => format!("{}::{rest}", self.namespace(first)),
                None => self.namespace(&written),
            };
            self.reference(name, RK::Type, Some(q), ctx);
        }
    }

    #[inline(never)]
    fn arm_call_expression(&mut self, n: Node<'s>, ctx: &Ctx) {
        let f = n.field("function");
        match f {
            Some(f) if f.kind_str() == "identifier" && !self.is_local(self.text(f)) => {
                self.reference(f, RK::Call, None, ctx);
            }
            Some(f) if f.kind_str() == "member_expression" => self.member(f, RK::MethodCall, ctx),
            Some(f) => self.walk(f, ctx),
            None => {}
        }
        for c in named_kids(n) {
            if Some(c) != f {
                self.walk(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_new_expression(&mut self, n: Node<'s>, ctx: &Ctx) {
        let c = n.field("constructor");
        match c {
            Some(c) if c.kind_str() == "identifier" => self.reference(c, RK::Call, None, ctx),
            Some(c) if c.kind_str() == "member_expression" => self.member(c, RK::Call, ctx),
            Some(c) => self.walk(c, ctx),
            None => {}
        }
        for k in named_kids(n) {
            if Some(k) != c {
                self.walk(k, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_extends_clause(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            match c.kind_str() {
                "identifier" => self.reference(c, RK::Type, None, ctx),
                "member_expression" => self.member(c, RK::Type, ctx),
                _ => self.walk(c, ctx),
            }
        }
    }

    #[inline(never)]
    fn arm_jsx_opening_element(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            if Some(c) == n.field("name") {
                let name = self.text(c);
                if c.kind_str() == "identifier"
                    && name.starts_with(|ch: char| ch.is_ascii_uppercase())
                {
                    if !self.is_local(name) {
                        self.reference(c, RK::Call, None, ctx);
                    }
                } else if c.kind_str() == "member_expression" {
                    self.member(c, RK::Call, ctx);
                }
            } else {
                self.walk(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_pair(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            if Some(c) != n.field("key") || c.kind_str() == "computed_property_name" {
                self.walk(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_labeled_statement(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            if c.kind_str() != "statement_identifier" {
                self.walk(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_catch_clause(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            if Some(c) == n.field("parameter") {
                self.pattern(c, ctx);
            } else {
                self.walk(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_for_in_statement(&mut self, n: Node<'s>, ctx: &Ctx) {
        for c in named_kids(n) {
            if Some(c) == n.field("left") {
                self.pattern(c, ctx);
            } else {
                self.walk(c, ctx);
            }
        }
    }

    fn inner(&self, _ctx: &Ctx, qname: String, owner: Option<String>) -> Ctx {
        Ctx {
            prefix: qname.clone(),
            owner,
            enclosing: qname,
            module_level: false,
        }
    }

    /// Runs `f` with the type parameters of `n` bound (they are not references).
    fn with_type_params(&mut self, n: Node<'s>, f: impl FnOnce(&mut Self)) {
        let mut names = HashSet::new();
        if let Some(tp) = n.field("type_parameters") {
            for p in named_kids(tp) {
                if let Some(name) = p.field("name") {
                    names.insert(self.text(name));
                }
            }
        }
        self.scopes.push(names);
        f(self);
        self.scopes.pop();
    }

    fn string_value(&self, s: Node<'_>) -> String {
        let t = self.text(s);
        t.trim_matches(|c| c == '"' || c == '\'' || c == '`')
            .to_string()
    }

    fn import(&mut self, n: Node<'s>, ctx: &Ctx) {
        let source = n
            .field("source")
            .map(|s| resolve_specifier(&self.dir, &self.string_value(s)));
        let mut stack = vec![n];
        while let Some(cur) = stack.pop() {
            for c in named_kids(cur) {
                match c.kind_str() {
                    // Bound before the walk (`imported_names`); `ns` itself names no item.
                    "namespace_import" => {}
                    "import_clause" | "named_imports" => stack.push(c),
                    "import_specifier" => {
                        if let Some(name) = c.field("name") {
                            self.reference(name, RK::Use, source.clone(), ctx);
                        }
                    }
                    "identifier" => self.reference(c, RK::Use, source.clone(), ctx),
                    _ => {}
                }
            }
        }
    }

    /// `x.name` (a field read, a method call, a constructor or a type).
    fn member(&mut self, n: Node<'s>, kind: RK, ctx: &Ctx) {
        let Some((obj, prop)) = member_parts(n) else {
            return self.kids(n, ctx);
        };
        let q = self.qualifier(obj);
        // Members of a namespace import are what its module exports: paths and calls.
        let kind = match kind {
            RK::MethodCall if self.namespace_root(obj) => RK::Call,
            RK::Field if self.namespace_root(obj) => RK::Path,
            k => k,
        };
        self.walk(obj, ctx);
        self.reference(prop, kind, q, ctx);
    }

    /// Does the chain `a.b` start from a namespace import's name?
    fn namespace_root(&self, obj: Node<'_>) -> bool {
        match obj.kind_str() {
            "identifier" => {
                let name = self.text(obj);
                !self.is_local(name) && self.namespaces.contains_key(name)
            }
            "member_expression" => member_parts(obj).is_some_and(|(o, _)| self.namespace_root(o)),
            _ => false,
        }
    }

    /// A name written before `.`: the module a namespace import binds it to, else itself.
    fn namespace(&self, name: &str) -> String {
        self.namespaces
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    fn qualifier(&self, obj: Node<'_>) -> Option<String> {
        match obj.kind_str() {
            "this" => Some("Self".to_string()),
            "identifier" => {
                let name = self.text(obj);
                if self.is_local(name) {
                    None
                } else {
                    Some(self.namespace(name))
                }
            }
            "member_expression" => {
                let (inner, prop) = member_parts(obj)?;
                let q = self.qualifier(inner)?;
                if q == "Self" {
                    return None;
                }
                // `C.prototype` holds what C's instances share: its members are C's.
                if self.text(prop) == "prototype" {
                    return Some(q);
                }
                Some(join(&q, self.text(prop)))
            }
            _ => None,
        }
    }

    fn class(&mut self, n: Node<'s>, ctx: &Ctx) {
        let body = n.field("body");
        let name_node = n.field("name");
        let (qname, class_name) = match name_node {
            Some(nn) => {
                let q = self.define(n, nn, SK::Class, ctx, body, ctx.owner.clone());
                (q, Some(self.text(nn).to_string()))
            }
            None => (ctx.enclosing.clone(), None),
        };
        let inner = self.inner(ctx, qname.clone(), class_name.clone());
        self.with_type_params(n, |ex| {
            for c in named_kids(n) {
                if Some(c) == name_node || Some(c) == body {
                    continue;
                }
                ex.walk(c, &inner);
            }
            let Some(body) = body else { return };
            for m in named_kids(body) {
                match m.kind_str() {
                    "method_definition" | "method_signature" | "abstract_method_signature" => {
                        let Some(nn) = m.field("name") else {
                            continue;
                        };
                        let mbody = m.field("body");
                        let q = if nn.kind_str() == "computed_property_name" {
                            ex.walk(nn, &inner);
                            qname.clone()
                        } else {
                            ex.define(m, nn, SK::Method, &inner, mbody, class_name.clone())
                        };
                        ex.function(m, q, &inner);
                    }
                    "public_field_definition" => {
                        let Some(nn) = m.field("name") else {
                            continue;
                        };
                        if nn.kind_str() != "computed_property_name" {
                            ex.define(m, nn, SK::Field, &inner, None, class_name.clone());
                        }
                        for c in named_kids(m) {
                            if c != nn || c.kind_str() == "computed_property_name" {
                                ex.walk(c, &inner);
                            }
                        }
                    }
                    _ => ex.walk(m, &inner),
                }
            }
        });
    }

    /// A function-like node: its parameters and body in a new scope enclosed by `enclosing`.
    fn function(&mut self, n: Node<'s>, enclosing: String, ctx: &Ctx) {
        let inner = Ctx {
            prefix: enclosing.clone(),
            owner: None,
            enclosing,
            module_level: false,
        };
        let mut locals = HashSet::new();
        if let Some(tp) = n.field("type_parameters") {
            for p in named_kids(tp) {
                if let Some(name) = p.field("name") {
                    locals.insert(self.text(name));
                }
            }
        }
        let params = n.field("parameters").or_else(|| n.field("parameter"));
        if let Some(p) = params {
            self.pattern_names(p, &mut locals);
        }
        let body = n.field("body");
        if let Some(b) = body {
            self.bindings(b, &mut locals);
        }
        // A named function expression sees its own name.
        if is_function_like(n.kind_str())
            && let Some(name) = n.field("name")
        {
            locals.insert(self.text(name));
        }
        self.scopes.push(locals);
        for c in named_kids(n) {
            match c.kind_str() {
                _ if Some(c) == n.field("name") => {}
                _ if Some(c) == params => self.pattern(c, &inner),
                _ => self.walk(c, &inner),
            }
        }
        self.scopes.pop();
        let _ = ctx;
    }

    /// Names a pattern (or parameter list) binds.
    fn pattern_names(&self, n: Node<'_>, into: &mut HashSet<&'s str>) {
        match n.kind_str() {
            "identifier" | "shorthand_property_identifier_pattern" => {
                into.insert(self.text(n));
            }
            "assignment_pattern" | "object_assignment_pattern" => {
                if let Some(l) = n.field("left") {
                    self.pattern_names(l, into);
                }
            }
            "pair_pattern" => {
                if let Some(v) = n.field("value") {
                    self.pattern_names(v, into);
                }
            }
            "required_parameter" | "optional_parameter" => {
                if let Some(p) = n.field("pattern").or_else(|| n.field("name")) {
                    self.pattern_names(p, into);
                }
            }
            "formal_parameters" | "object_pattern" | "array_pattern" | "rest_pattern" => {
                for c in named_kids(n) {
                    self.pattern_names(c, into);
                }
            }
            _ => {}
        }
    }

    /// The reads inside a pattern: default values, annotations, assigned members.
    fn pattern(&mut self, n: Node<'s>, ctx: &Ctx) {
        match n.kind_str() {
            "identifier" | "shorthand_property_identifier_pattern" | "this" => {}
            "assignment_pattern" | "object_assignment_pattern" => {
                if let Some(l) = n.field("left") {
                    self.pattern(l, ctx);
                }
                if let Some(r) = n.field("right") {
                    self.walk(r, ctx);
                }
            }
            "pair_pattern" => {
                if let Some(v) = n.field("value") {
                    self.pattern(v, ctx);
                }
            }
            "required_parameter" | "optional_parameter" => {
                for c in named_kids(n) {
                    if Some(c) == n.field("pattern") || Some(c) == n.field("name") {
                        self.pattern(c, ctx);
                    } else {
                        self.walk(c, ctx);
                    }
                }
            }
            "formal_parameters" | "object_pattern" | "array_pattern" | "rest_pattern" => {
                for c in named_kids(n) {
                    self.pattern(c, ctx);
                }
            }
            _ => self.walk(n, ctx),
        }
    }

    /// Names bound in a function body, not descending into nested functions and classes.
    fn bindings(&self, n: Node<'_>, into: &mut HashSet<&'s str>) {
        for c in named_kids(n) {
            match c.kind_str() {
                "function_declaration"
                | "generator_function_declaration"
                | "class_declaration"
                | "abstract_class_declaration" => {
                    if let Some(name) = c.field("name") {
                        into.insert(self.text(name));
                    }
                }
                k if is_function_like(k) || k == "class" => {}
                "variable_declarator" => {
                    if let Some(name) = c.field("name") {
                        self.pattern_names(name, into);
                    }
                    self.bindings(c, into);
                }
                "catch_clause" => {
                    if let Some(p) = c.field("parameter") {
                        self.pattern_names(p, into);
                    }
                    self.bindings(c, into);
                }
                "for_in_statement" => {
                    if c.field("kind").is_some()
                        && let Some(l) = c.field("left")
                    {
                        self.pattern_names(l, into);
                    }
                    self.bindings(c, into);
                }
                _ => self.bindings(c, into),
            }
        }
    }

    /// `const/let/var` declarations: at module level, functions and exported consts are
    /// definitions.
    fn declaration(&mut self, n: Node<'s>, ctx: &Ctx) {
        let exported = n
            .parent()
            .is_some_and(|p| p.kind_str() == "export_statement");
        let is_const = self.text(n).starts_with("const");
        for d in named_kids(n) {
            if d.kind_str() != "variable_declarator" {
                self.walk(d, ctx);
                continue;
            }
            let name = d.field("name");
            let value = d.field("value");
            let name = name.filter(|nn| nn.kind_str() == "identifier");
            if ctx.module_level
                && let Some(nn) = name
            {
                if let Some(v) = value.filter(|v| is_function_like(v.kind_str())) {
                    let q = self.define_var(n, d, nn, SK::Function, ctx, v.field("body"));
                    if let Some(t) = d.field("type") {
                        self.walk(t, ctx);
                    }
                    self.function(v, q, ctx);
                    continue;
                }
                if exported && is_const {
                    self.define_var(n, d, nn, SK::Const, ctx, None);
                }
            }
            self.walk(d, ctx);
        }
    }

    /// A definition for one declarator of a declaration: it spans the whole declaration
    /// when it is the only declarator, else just itself.
    fn define_var(
        &mut self,
        decl: Node<'s>,
        declarator: Node<'s>,
        name_node: Node<'_>,
        kind: SK,
        ctx: &Ctx,
        body: Option<Node<'_>>,
    ) -> String {
        let single = decl.named_child_count() == 1;
        let item = if single { self.item(decl) } else { declarator };
        let name = self.text(name_node);
        let qname = join(&ctx.prefix, name);
        let doc = self.jsdoc(self.item(decl));
        let sig = if kind == SK::Const {
            let first = self.text(item).lines().next().unwrap_or("");
            let mut s = collapse(first);
            while s.ends_with(';') || s.ends_with('{') || s.ends_with('=') {
                s.pop();
                let l = s.trim_end().len();
                s.truncate(l);
            }
            s
        } else {
            self.header(item, body)
        };
        self.out
            .def(item, name_node, name, kind, qname.clone(), None, sig, doc);
        qname
    }
}

/// A `member_expression`'s object and property: its first and last named children.
/// Not by field name: inside a `typeof` type query tree-sitter-typescript 0.23 answers
/// the outer node's `property` with the inner one's (`typeof A.prototype.m` read `m` as
/// `prototype`).
fn member_parts<'t>(n: Node<'t>) -> Option<(Node<'t>, Node<'t>)> {
    let count = n.named_child_count();
    if count < 2 {
        return None;
    }
    Some((n.named_child(0)?, n.named_child((count - 1) as u32)?))
}

#[cfg(test)]
mod tests;
