//! Python extraction (tree-sitter-python).
//!
//! Definitions: classes (`class`), module-level functions (`function`), functions in a
//! class body (`method`, owner = the class), functions nested in functions (`function`,
//! qualified under the outer function), nested classes (owner = the outer class),
//! module-level assignments to UPPER_CASE names (`const`) and `type X = ..` aliases
//! (`type_alias`). Names are joined with `::`: `pkg::module::Class::method`. The signature
//! is the `def ..` / `class ..` header without the colon (decorators excluded); the
//! docstring is the first string statement of the body, indentation cleaned like
//! `inspect.cleandoc`.
//!
//! References: `f()` → `call`; `obj.m()` → `method_call`, qualifier `Self` when `obj` is the
//! method's first parameter (`self`/`cls`), the dotted name (`::`-joined) when `obj` is a
//! global name or a chain of them (`ClassName.m()` → `ClassName`), none when `obj` is a
//! local or any other expression; `obj.x` → `field` (same qualifier rules). A chain that
//! starts from a name an import binds (at module level or in the enclosing function) is
//! what that module holds: `click.BOOL` → `path`, `types.IntRange(..)` → `call`, qualified
//! by the imported path (`from . import types` → `<package>::types`, `import a.b as c` →
//! `a::b`). Imports → `use` (`from a.b import c` gives `c` with qualifier `a::b`;
//! relative imports are resolved against the file's package, without the project name);
//! names a function-local import binds are references where they are read, not locals;
//! annotations and base classes → `type`; decorators → `call` (qualifier as above); other
//! names read that are not local bindings of an enclosing function → `path`.
//!
//! Not covered: attributes assigned on `self` are not definitions; class-level constants
//! are not definitions; string annotations (`"Foo"`) are not parsed; `match` case
//! patterns are skipped (no references, no bindings); receiver types of locals are not inferred.

use crate::grammar::NodeExt;
use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::Language;
use super::common::{Out, collapse, join, named_kids, parse};
use crate::model::{FileSymbols, ReferenceKind as RK, SymbolKind as SK};

pub struct Python;

impl Language for Python {
    fn name(&self) -> &'static str {
        "python"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["py", "pyi"]
    }

    fn project_markers(&self) -> &'static [&'static str] {
        &["pyproject.toml", "setup.py"]
    }

    /// Bytecode caches and the conventional virtual environment.
    fn skipped_dirs(&self) -> &'static [&'static str] {
        &["__pycache__", ".venv"]
    }

    /// `a/b/c.py` → `[package, a, b, c]`; `a/b/__init__.py` → `[package, a, b]`.
    fn module_path(&self, package: &str, relative_path: &str) -> Vec<String> {
        let normalized = relative_path.replace('\\', "/");
        let mut parts: Vec<&str> = normalized
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if let Some(last) = parts.last_mut() {
            *last = last
                .strip_suffix(".py")
                .or_else(|| last.strip_suffix(".pyi"))
                .unwrap_or(last);
        }
        if parts.last() == Some(&"__init__") {
            parts.pop();
        }
        std::iter::once(package.to_string())
            .chain(parts.iter().map(|p| p.to_string()))
            .collect()
    }

    fn extract(&self, source: &str, module_path: &[String], path: &str) -> FileSymbols {
        let Some(tree) = parse("python", || tree_sitter_python::LANGUAGE.into(), source) else {
            return FileSymbols {
                has_parse_errors: true,
                ..FileSymbols::default()
            };
        };
        let root = tree.root_node();
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let is_init = file == "__init__.py" || file == "__init__.pyi";
        // The package the file is in, without the project name: what `.` means in imports.
        let mut package: Vec<String> = module_path.iter().skip(1).cloned().collect();
        if !is_init {
            package.pop();
        }
        let module = module_path.join("::");
        let mut ex = Extractor {
            out: Out::new(source),
            package,
            scopes: Vec::new(),
            aliases: Vec::new(),
            module_vars: HashSet::new(),
            nest: 0,
        };
        ex.module_vars = ex.assigned_at_module_level(root);
        let mut module_aliases = HashMap::new();
        ex.import_aliases(root, &mut module_aliases);
        ex.aliases.push(module_aliases);
        let ctx = Ctx {
            prefix: module.clone(),
            owner: None,
            enclosing: module,
            self_name: None,
            module_level: true,
        };
        ex.block(root, &ctx);
        let (definitions, references) = ex.out.finish();
        FileSymbols {
            definitions,
            references,
            has_parse_errors: root.has_error(),
            edges: Vec::new(),
        }
    }
}

/// Recursion limit for nested expressions (guards the stack against generated code).
const MAX_NEST: u32 = 250;

#[derive(Clone)]
struct Ctx<'s> {
    /// Qualified prefix for definitions made here.
    prefix: String,
    /// The class whose body this is (for methods and nested classes).
    owner: Option<String>,
    /// `enclosing_symbol` for references made here.
    enclosing: String,
    /// Inside a method: the name of its first parameter (`self`, `cls`).
    self_name: Option<&'s str>,
    /// Statements here are module-level (constants are recorded).
    module_level: bool,
}

struct Extractor<'s> {
    out: Out<'s>,
    package: Vec<String>,
    /// Local bindings of the enclosing functions, lambdas and comprehensions, innermost last.
    scopes: Vec<HashSet<&'s str>>,
    /// Names the imports of the module and of the enclosing functions bind to what they
    /// import (`types` → `src::click::types` for `from . import types`), innermost last.
    aliases: Vec<HashMap<&'s str, String>>,
    /// Names the module binds by assignment (`param: click.Path[str] = click.Path()`):
    /// values, so `name.attr` is an attribute of an unknown value, not of a module.
    module_vars: HashSet<&'s str>,
    nest: u32,
}

fn is_const_name(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `inspect.cleandoc`: first line stripped, common indentation of the rest removed,
/// leading and trailing blank lines dropped.
fn cleandoc(raw: &str) -> String {
    let lines: Vec<&str> = raw.lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            out.push(l.trim().to_string());
        } else {
            out.push(
                l.get(indent..)
                    .unwrap_or(l.trim_start())
                    .trim_end()
                    .to_string(),
            );
        }
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

impl<'s> Extractor<'s> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.out.text(n)
    }

    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    /// The names plain assignments at the top of the module bind (`x = ..`, `x: T = ..`).
    fn assigned_at_module_level(&self, root: Node<'_>) -> HashSet<&'s str> {
        let mut out = HashSet::new();
        for stmt in named_kids(root) {
            if stmt.kind_str() != "expression_statement" {
                continue;
            }
            for a in named_kids(stmt) {
                if a.kind_str() == "assignment"
                    && let Some(left) = a.field("left")
                    && left.kind_str() == "identifier"
                {
                    out.insert(self.text(left));
                }
            }
        }
        out
    }

    fn reference(&mut self, n: Node<'_>, kind: RK, qualifier: Option<String>, ctx: &Ctx<'_>) {
        let name = self.text(n);
        self.out.reference(n, name, kind, qualifier, &ctx.enclosing);
    }

    /// Statements of a module, block or class body.
    fn block(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        for child in named_kids(n) {
            self.statement(child, ctx);
        }
    }

    fn statement(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        match n.kind_str() {
            "function_definition" => self.function(n, &[], ctx),
            "class_definition" => self.class(n, ctx),
            "decorated_definition" => {
                let mut decorators = Vec::new();
                for child in named_kids(n) {
                    if child.kind_str() == "decorator" {
                        self.decorator(child, ctx);
                        decorators.push(child);
                    }
                }
                if let Some(def) = n.field("definition") {
                    match def.kind_str() {
                        "function_definition" => self.function(def, &decorators, ctx),
                        "class_definition" => self.class(def, ctx),
                        _ => self.expr(def, ctx),
                    }
                }
            }
            "import_statement" | "import_from_statement" | "future_import_statement" => {
                self.import(n, ctx)
            }
            "expression_statement" => {
                for child in named_kids(n) {
                    if child.kind_str() == "assignment" {
                        if ctx.module_level {
                            self.maybe_const(n, child, ctx);
                        }
                        self.assignment(child, ctx);
                    } else {
                        self.expr(child, ctx);
                    }
                }
            }
            "type_alias_statement" => self.type_alias(n, ctx),
            "global_statement" | "nonlocal_statement" | "pass_statement" | "comment" => {}
            "for_statement" => {
                if let Some(left) = n.field("left") {
                    self.target(left, ctx);
                }
                if let Some(right) = n.field("right") {
                    self.expr(right, ctx);
                }
                for field in ["body", "alternative"] {
                    if let Some(b) = n.field(field) {
                        self.statement(b, ctx);
                    }
                }
            }
            "block" | "module" | "else_clause" | "finally_clause" | "if_statement"
            | "elif_clause" | "while_statement" | "try_statement" | "with_statement"
            | "with_clause" | "match_statement" | "case_clause" | "except_clause" => {
                self.compound(n, ctx)
            }
            _ => self.expr(n, ctx),
        }
    }

    /// Compound statements: nested statements stay statements, the rest are expressions.
    fn compound(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        match n.kind_str() {
            "with_item" => {
                if let Some(v) = n.field("value") {
                    self.expr(v, ctx);
                }
                return;
            }
            "except_clause" => {
                for child in named_kids(n) {
                    if n.field("alias") == Some(child) {
                        self.target(child, ctx);
                    } else if child.kind_str() == "block" {
                        self.statement(child, ctx);
                    } else {
                        self.expr(child, ctx);
                    }
                }
                return;
            }
            _ => {}
        }
        for child in named_kids(n) {
            match child.kind_str() {
                "with_clause" | "with_item" => self.compound(child, ctx),
                "case_pattern" => {}
                k if k.ends_with("statement")
                    || k.ends_with("clause")
                    || k == "block"
                    || k == "decorated_definition"
                    || k == "function_definition"
                    || k == "class_definition" =>
                {
                    self.statement(child, ctx)
                }
                _ => self.expr(child, ctx),
            }
        }
    }

    fn docstring(&self, body: Option<Node<'_>>) -> Option<String> {
        let first = named_kids(body?)
            .into_iter()
            .find(|c| c.kind_str() != "comment")?;
        if first.kind_str() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0)?;
        if s.kind_str() != "string" {
            return None;
        }
        let content: String = named_kids(s)
            .into_iter()
            .filter(|c| c.kind_str() == "string_content" || c.kind_str() == "escape_sequence")
            .map(|c| self.text(c))
            .collect();
        let doc = cleandoc(&content);
        (!doc.is_empty()).then_some(doc)
    }

    /// The header of a `def`/`class`: from its start to its body, without the colon.
    fn header(&self, n: Node<'_>) -> String {
        let end = n
            .field("body")
            .map(|b| b.start_byte())
            .unwrap_or(n.end_byte());
        let raw = self.out.src.get(n.start_byte()..end).unwrap_or("");
        // Comments between the colon and the body belong to neither.
        let raw = raw.trim_end();
        let raw = match raw.rfind(':') {
            Some(i)
                if raw[i + 1..].trim().is_empty() || raw[i + 1..].trim_start().starts_with('#') =>
            {
                &raw[..i]
            }
            _ => raw,
        };
        collapse(raw)
    }

    fn class(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = self.text(name_node);
        let qname = join(&ctx.prefix, name);
        let body = n.field("body");
        let doc = self.docstring(body);
        self.out.def(
            n,
            name_node,
            name,
            SK::Class,
            qname.clone(),
            ctx.owner.clone(),
            self.header(n),
            doc,
        );
        let inner = Ctx {
            prefix: qname.clone(),
            owner: Some(name.to_string()),
            enclosing: qname,
            self_name: ctx.self_name,
            module_level: false,
        };
        if let Some(sup) = n.field("superclasses") {
            for arg in named_kids(sup) {
                if arg.kind_str() == "keyword_argument" {
                    if let Some(v) = arg.field("value") {
                        self.expr(v, &inner);
                    }
                } else {
                    self.type_expr(arg, &inner);
                }
            }
        }
        if let Some(body) = body {
            self.block(body, &inner);
        }
    }

    fn function(&mut self, n: Node<'_>, decorators: &[Node<'_>], ctx: &Ctx<'s>) {
        let Some(name_node) = n.field("name") else {
            return;
        };
        let name = self.text(name_node);
        let qname = join(&ctx.prefix, name);
        let body = n.field("body");
        let kind = if ctx.owner.is_some() {
            SK::Method
        } else {
            SK::Function
        };
        let doc = self.docstring(body);
        self.out.def(
            n,
            name_node,
            name,
            kind,
            qname.clone(),
            ctx.owner.clone(),
            self.header(n),
            doc,
        );
        let is_static = decorators
            .iter()
            .any(|d| self.text(*d).trim() == "@staticmethod");
        let mut locals = HashSet::new();
        let mut first_param = None;
        let params = n.field("parameters");
        if let Some(params) = params {
            for p in named_kids(params) {
                let before = locals.len();
                self.param_names(p, &mut locals);
                if first_param.is_none()
                    && locals.len() > before
                    && p.kind_str() != "list_splat_pattern"
                {
                    first_param = self.param_name(p);
                }
            }
        }
        let mut globals = HashSet::new();
        let mut aliases = HashMap::new();
        if let Some(body) = body {
            self.bindings(body, &mut locals, &mut globals);
            self.import_aliases(body, &mut aliases);
        }
        for g in globals {
            locals.remove(g);
        }
        let self_name = if ctx.owner.is_some() && !is_static {
            first_param
        } else {
            ctx.self_name
        };
        let inner = Ctx {
            prefix: qname.clone(),
            owner: None,
            enclosing: qname,
            self_name,
            module_level: false,
        };
        // Defaults and annotations are read in the enclosing scope.
        if let Some(params) = params {
            for p in named_kids(params) {
                if let Some(t) = p.field("type") {
                    self.type_expr(t, &inner);
                }
                if let Some(v) = p.field("value") {
                    self.expr(v, &inner);
                }
            }
        }
        if let Some(rt) = n.field("return_type") {
            self.type_expr(rt, &inner);
        }
        self.scopes.push(locals);
        self.aliases.push(aliases);
        if let Some(body) = body {
            self.block(body, &inner);
        }
        self.aliases.pop();
        self.scopes.pop();
    }

    fn param_name(&self, p: Node<'_>) -> Option<&'s str> {
        match p.kind_str() {
            "identifier" => Some(self.text(p)),
            "typed_parameter" => p
                .named_child(0)
                .filter(|c| c.kind_str() == "identifier")
                .map(|c| self.text(c)),
            "default_parameter" | "typed_default_parameter" => p
                .field("name")
                .filter(|c| c.kind_str() == "identifier")
                .map(|c| self.text(c)),
            _ => None,
        }
    }

    fn param_names(&self, p: Node<'_>, into: &mut HashSet<&'s str>) {
        match p.kind_str() {
            "identifier" => {
                into.insert(self.text(p));
            }
            "typed_parameter"
            | "list_splat_pattern"
            | "dictionary_splat_pattern"
            | "tuple_pattern" => {
                for c in named_kids(p) {
                    if p.field("type") != Some(c) {
                        self.param_names(c, into);
                    }
                }
            }
            "default_parameter" | "typed_default_parameter" => {
                if let Some(name) = p.field("name") {
                    self.param_names(name, into);
                }
            }
            "lambda_parameters" | "parameters" => {
                for c in named_kids(p) {
                    self.param_names(c, into);
                }
            }
            _ => {}
        }
    }

    /// Names bound by a target (`a`, `a, b`, `[a, *b]`); attributes and subscripts bind none.
    fn target_names(&self, n: Node<'_>, into: &mut HashSet<&'s str>) {
        match n.kind_str() {
            "identifier" => {
                into.insert(self.text(n));
            }
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "list_splat_pattern"
            | "parenthesized_expression"
            | "tuple"
            | "list"
            | "as_pattern_target"
            | "expression_list" => {
                for c in named_kids(n) {
                    self.target_names(c, into);
                }
            }
            _ => {}
        }
    }

    /// Every name a function body binds (Python scoping is per function), not descending
    /// into nested functions, classes or lambdas (whose own names are bound here).
    fn bindings(&self, n: Node<'_>, locals: &mut HashSet<&'s str>, globals: &mut HashSet<&'s str>) {
        for c in named_kids(n) {
            match c.kind_str() {
                "function_definition" | "class_definition" => {
                    if let Some(name) = c.field("name") {
                        locals.insert(self.text(name));
                    }
                }
                "decorated_definition" => self.bindings(c, locals, globals),
                "lambda" => {}
                "global_statement" | "nonlocal_statement" => {
                    for id in named_kids(c) {
                        if id.kind_str() == "identifier" {
                            globals.insert(self.text(id));
                        }
                    }
                }
                "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
                    if let Some(left) = c.field("left") {
                        self.target_names(left, locals);
                    }
                    self.bindings(c, locals, globals);
                }
                "named_expression" => {
                    if let Some(name) = c.field("name") {
                        locals.insert(self.text(name));
                    }
                    self.bindings(c, locals, globals);
                }
                "as_pattern_target" => self.target_names(c, locals),
                "except_clause" => {
                    if let Some(alias) = c.field("alias") {
                        self.target_names(alias, locals);
                    }
                    self.bindings(c, locals, globals);
                }
                // Imports bind names to what they import, not to locals: uses of them
                // are references (see `import_aliases`).
                "import_statement" | "import_from_statement" => {}
                _ => self.bindings(c, locals, globals),
            }
        }
    }

    fn decorator(&mut self, d: Node<'_>, ctx: &Ctx<'s>) {
        let Some(e) = d.named_child(0) else { return };
        let (callee, args) = if e.kind_str() == "call" {
            (e.field("function"), e.field("arguments"))
        } else {
            (Some(e), None)
        };
        match callee {
            Some(c) if c.kind_str() == "identifier" => self.reference(c, RK::Call, None, ctx),
            Some(c) if c.kind_str() == "attribute" => {
                if let (Some(obj), Some(attr)) = (c.field("object"), c.field("attribute")) {
                    let q = self.qualifier(obj, ctx);
                    self.expr(obj, ctx);
                    self.reference(attr, RK::Call, q, ctx);
                }
            }
            Some(c) => self.expr(c, ctx),
            None => {}
        }
        if let Some(args) = args {
            self.expr(args, ctx);
        }
    }

    fn maybe_const(&mut self, stmt: Node<'_>, a: Node<'_>, ctx: &Ctx<'s>) {
        let Some(left) = a.field("left") else {
            return;
        };
        if left.kind_str() != "identifier" {
            return;
        }
        let name = self.text(left);
        if !is_const_name(name) {
            return;
        }
        let first_line = self.text(stmt).lines().next().unwrap_or("");
        self.out.def(
            stmt,
            left,
            name,
            SK::Const,
            join(&ctx.prefix, name),
            None,
            collapse(first_line),
            None,
        );
    }

    fn type_alias(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        let left = n.field("left");
        let name_node = left.and_then(|l| {
            let mut cur = l;
            while cur.kind_str() != "identifier" {
                cur = cur.named_child(0)?;
            }
            Some(cur)
        });
        if let Some(name_node) = name_node {
            let name = self.text(name_node);
            let sig = self.text(n).split('=').next().unwrap_or("").to_string();
            self.out.def(
                n,
                name_node,
                name,
                SK::TypeAlias,
                join(&ctx.prefix, name),
                ctx.owner.clone(),
                collapse(&sig),
                None,
            );
        }
        if let Some(r) = n.field("right") {
            self.type_expr(r, ctx);
        }
    }

    fn assignment(&mut self, a: Node<'_>, ctx: &Ctx<'s>) {
        if let Some(left) = a.field("left") {
            self.target(left, ctx);
        }
        if let Some(t) = a.field("type") {
            self.type_expr(t, ctx);
        }
        if let Some(right) = a.field("right") {
            if right.kind_str() == "assignment" {
                self.assignment(right, ctx);
            } else {
                self.expr(right, ctx);
            }
        }
    }

    /// An assignment target: bare names are bindings, not references.
    fn target(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        match n.kind_str() {
            "identifier" => {}
            "pattern_list"
            | "tuple_pattern"
            | "list_pattern"
            | "list_splat_pattern"
            | "parenthesized_expression"
            | "tuple"
            | "list"
            | "as_pattern_target"
            | "expression_list" => {
                for c in named_kids(n) {
                    self.target(c, ctx);
                }
            }
            _ => self.expr(n, ctx),
        }
    }

    /// What an import binds `name` to: a function's own import first, then (unless a
    /// local of an enclosing function shadows it) the module's.
    fn alias(&self, name: &str) -> Option<&str> {
        let (module, functions) = self.aliases.split_first()?;
        if let Some(hit) = functions.iter().rev().find_map(|a| a.get(name)) {
            return Some(hit);
        }
        if self.is_local(name) {
            return None;
        }
        module.get(name).map(String::as_str)
    }

    /// Does the chain `a.b.c` start from a name an import binds (a module, or an item
    /// imported from one)? Its members are then what that module or item holds, read as
    /// paths (`click.BOOL`) and calls (`types.IntRange(..)`), not members of a value.
    fn imported_root(&self, obj: Node<'_>, ctx: &Ctx<'s>) -> bool {
        match obj.kind_str() {
            "identifier" => {
                let name = self.text(obj);
                ctx.self_name != Some(name) && self.alias(name).is_some()
            }
            "attribute" => obj
                .field("object")
                .is_some_and(|o| self.imported_root(o, ctx)),
            _ => false,
        }
    }

    /// The module an import statement imports from (`from ..a.b import c` → the package
    /// two levels up, then `a::b`), as path segments; empty for `import a.b`.
    fn import_base(&self, n: Node<'_>) -> Vec<String> {
        let dotted = |d: Node<'_>, mut base: Vec<String>| {
            base.extend(
                named_kids(d)
                    .into_iter()
                    .filter(|id| id.kind_str() == "identifier")
                    .map(|id| self.text(id).to_string()),
            );
            base
        };
        let Some(m) = n.field("module_name") else {
            return Vec::new();
        };
        if m.kind_str() != "relative_import" {
            return dotted(m, Vec::new());
        }
        let dots = named_kids(m)
            .into_iter()
            .find(|c| c.kind_str() == "import_prefix")
            .map(|c| self.text(c).chars().filter(|&c| c == '.').count())
            .unwrap_or(1);
        let mut base = self.package.clone();
        for _ in 1..dots {
            base.pop();
        }
        match named_kids(m)
            .into_iter()
            .find(|c| c.kind_str() == "dotted_name")
        {
            Some(d) => dotted(d, base),
            None => base,
        }
    }

    /// The names the imports among `n`'s statements bind (not descending into functions
    /// or classes), each to the `::`-joined path it imports: `import a.b` binds `a` to
    /// `a`, `import a.b as c` binds `c` to `a::b`, `from .m import x as y` binds `y` to
    /// `<package>::m::x`.
    fn import_aliases(&self, n: Node<'_>, into: &mut HashMap<&'s str, String>) {
        for c in named_kids(n) {
            match c.kind_str() {
                "function_definition" | "class_definition" | "decorated_definition" | "lambda" => {}
                "import_statement" | "import_from_statement" => {
                    let base = self.import_base(c);
                    for name in named_kids(c) {
                        if c.field("module_name") == Some(name) {
                            continue;
                        }
                        let (path, alias) = match name.kind_str() {
                            "dotted_name" => (Some(name), None),
                            "aliased_import" => (name.field("name"), name.field("alias")),
                            _ => (None, None),
                        };
                        let Some(path) = path else { continue };
                        let mut segs = base.clone();
                        let ids: Vec<&'s str> = named_kids(path)
                            .into_iter()
                            .filter(|id| id.kind_str() == "identifier")
                            .map(|id| self.text(id))
                            .collect();
                        let bound = match alias {
                            Some(a) => {
                                segs.extend(ids.iter().map(|s| s.to_string()));
                                self.text(a)
                            }
                            // `import a.b` binds `a`; `from m import x` binds `x`.
                            None => {
                                let Some(first) = ids.first() else { continue };
                                if c.kind_str() == "import_statement" {
                                    segs.push(first.to_string());
                                } else {
                                    segs.extend(ids.iter().map(|s| s.to_string()));
                                }
                                *first
                            }
                        };
                        into.insert(bound, segs.join("::"));
                    }
                }
                k if k.ends_with("statement") || k.ends_with("clause") || k == "block" => {
                    self.import_aliases(c, into)
                }
                _ => {}
            }
        }
    }

    fn import(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        let mut base: Vec<String> = Vec::new();
        if let Some(m) = n.field("module_name") {
            if m.kind_str() == "relative_import" {
                let prefix = named_kids(m)
                    .into_iter()
                    .find(|c| c.kind_str() == "import_prefix")
                    .map(|c| self.text(c).chars().filter(|&c| c == '.').count())
                    .unwrap_or(1);
                base = self.package.clone();
                for _ in 1..prefix {
                    base.pop();
                }
                if let Some(d) = named_kids(m)
                    .into_iter()
                    .find(|c| c.kind_str() == "dotted_name")
                {
                    base = self.dotted(d, base, ctx);
                }
            } else {
                base = self.dotted(m, Vec::new(), ctx);
            }
        } else if n.kind_str() == "future_import_statement" {
            base = vec!["__future__".to_string()];
        }
        for name in named_kids(n) {
            if n.field("module_name") == Some(name) {
                continue;
            }
            let dotted = match name.kind_str() {
                "dotted_name" => Some(name),
                "aliased_import" => name.field("name"),
                _ => None,
            };
            if let Some(d) = dotted {
                self.dotted(d, base.clone(), ctx);
            }
        }
    }

    /// `a.b.c` in an import: `use` references, each qualified by what precedes it.
    fn dotted(&mut self, d: Node<'_>, mut base: Vec<String>, ctx: &Ctx<'s>) -> Vec<String> {
        for id in named_kids(d) {
            if id.kind_str() != "identifier" {
                continue;
            }
            let q = (!base.is_empty()).then(|| base.join("::"));
            self.reference(id, RK::Use, q, ctx);
            base.push(self.text(id).to_string());
        }
        base
    }

    /// The qualifier of `obj.name`: `Self` for the method's receiver, the dotted name for
    /// globals and chains of them, none otherwise.
    fn qualifier(&self, obj: Node<'_>, ctx: &Ctx<'s>) -> Option<String> {
        match obj.kind_str() {
            "identifier" => {
                let name = self.text(obj);
                if ctx.self_name == Some(name) {
                    Some("Self".to_string())
                } else if let Some(module) = self.alias(name) {
                    Some(module.to_string())
                } else if self.is_local(name) || self.module_vars.contains(name) {
                    None
                } else {
                    Some(name.to_string())
                }
            }
            "attribute" => {
                let inner = obj.field("object")?;
                let attr = obj.field("attribute")?;
                let q = self.qualifier(inner, ctx)?;
                if q == "Self" {
                    return None;
                }
                Some(join(&q, self.text(attr)))
            }
            _ => None,
        }
    }

    fn expr(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        if self.nest > MAX_NEST {
            return;
        }
        self.nest += 1;
        self.expr_inner(n, ctx);
        self.nest -= 1;
    }

    /// Dispatch on the node kind. The larger arms live in `arm_*` methods, not inlined,
    /// so that this frame stays small: an unoptimised build otherwise spends ~9 KB of stack
    /// per nesting level.
    fn expr_inner(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        match n.kind_str() {
            "identifier" => self.arm_identifier(n, ctx),
            "call" => self.arm_call(n, ctx),
            "attribute" => self.arm_attribute(n, ctx),
            "keyword_argument" => {
                if let Some(v) = n.field("value") {
                    self.expr(v, ctx);
                }
            }
            "assignment" | "augmented_assignment" => self.assignment(n, ctx),
            "named_expression" => {
                if let Some(v) = n.field("value") {
                    self.expr(v, ctx);
                }
            }
            "type" => self.type_expr(n, ctx),
            "as_pattern_target" => self.target(n, ctx),
            "lambda" => self.arm_lambda(n, ctx),
            "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression" => {
                let mut locals = HashSet::new();
                for c in named_kids(n) {
                    if c.kind_str() == "for_in_clause"
                        && let Some(left) = c.field("left")
                    {
                        self.target_names(left, &mut locals);
                    }
                }
                self.scopes.push(locals);
                for c in named_kids(n) {
                    if c.kind_str() == "for_in_clause" {
                        for part in named_kids(c) {
                            if c.field("left") == Some(part) {
                                self.target(part, ctx);
                            } else {
                                self.expr(part, ctx);
                            }
                        }
                    } else {
                        self.expr(c, ctx);
                    }
                }
                self.scopes.pop();
            }
            "function_definition" | "class_definition" | "decorated_definition" => {
                self.statement(n, ctx)
            }
            "comment" | "string_content" | "escape_sequence" | "string_start" | "string_end"
            | "integer" | "float" | "true" | "false" | "none" => {}
            _ => {
                for c in named_kids(n) {
                    if c.kind_str().ends_with("statement") || c.kind_str() == "block" {
                        self.statement(c, ctx);
                    } else {
                        self.expr(c, ctx);
                    }
                }
            }
        }
    }

    #[inline(never)]
    fn arm_identifier(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        let name = self.text(n);
        if !self.is_local(name) {
            self.reference(n, RK::Path, None, ctx);
        }
    }

    #[inline(never)]
    fn arm_call(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        let f = n.field("function");
        match f {
            Some(f) if f.kind_str() == "identifier" && !self.is_local(self.text(f)) => {
                self.reference(f, RK::Call, None, ctx);
            }
            Some(f) if f.kind_str() == "attribute" => {
                if let (Some(obj), Some(attr)) = (f.field("object"), f.field("attribute")) {
                    let q = self.qualifier(obj, ctx);
                    let kind = if self.imported_root(obj, ctx) {
                        RK::Call
                    } else {
                        RK::MethodCall
                    };
                    self.expr(obj, ctx);
                    self.reference(attr, kind, q, ctx);
                }
            }
            Some(f) => self.expr(f, ctx),
            None => {}
        }
        for c in named_kids(n) {
            if Some(c) != f {
                self.expr(c, ctx);
            }
        }
    }

    #[inline(never)]
    fn arm_attribute(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        if let (Some(obj), Some(attr)) = (n.field("object"), n.field("attribute")) {
            let q = self.qualifier(obj, ctx);
            let kind = if self.imported_root(obj, ctx) {
                RK::Path
            } else {
                RK::Field
            };
            self.expr(obj, ctx);
            self.reference(attr, kind, q, ctx);
        }
    }

    #[inline(never)]
    fn arm_lambda(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        let mut locals = HashSet::new();
        if let Some(p) = n.field("parameters") {
            self.param_names(p, &mut locals);
            for param in named_kids(p) {
                if let Some(v) = param.field("value") {
                    self.expr(v, ctx);
                }
            }
        }
        self.scopes.push(locals);
        if let Some(b) = n.field("body") {
            self.expr(b, ctx);
        }
        self.scopes.pop();
    }

    /// An annotation: names in it are `type` references.
    fn type_expr(&mut self, n: Node<'_>, ctx: &Ctx<'s>) {
        if self.nest > MAX_NEST {
            return;
        }
        self.nest += 1;
        match n.kind_str() {
            "identifier" => self.reference(n, RK::Type, None, ctx),
            "attribute" => {
                if let (Some(obj), Some(attr)) = (n.field("object"), n.field("attribute")) {
                    let q = self.qualifier(obj, ctx);
                    self.reference(attr, RK::Type, q, ctx);
                }
            }
            "string" | "none" | "integer" | "comment" => {}
            "keyword_argument" => {
                if let Some(v) = n.field("value") {
                    self.expr(v, ctx);
                }
            }
            "call" => self.expr(n, ctx),
            _ => {
                for c in named_kids(n) {
                    self.type_expr(c, ctx);
                }
            }
        }
        self.nest -= 1;
    }
}

#[cfg(test)]
mod tests;
