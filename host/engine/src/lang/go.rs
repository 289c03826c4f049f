//! Go extraction (tree-sitter-go).
//!
//! The module path is the package directory: `[module, dirs..]` (the file name is not
//! part of it). Definitions: package-level functions (`function`), methods (`method`,
//! owner = the receiver type without `*` or type arguments, qualified `pkg::Recv::M`),
//! struct types (`struct`) and their fields (`field`, owner = the struct), interfaces
//! (`interface`) and their methods (`method`, owner = the interface), other type
//! definitions and aliases (`type_alias`), constants (`const`) and package-level
//! variables (`static`). Signature = the header up to the body (`func (p *Point) Move(dx
//! int)`, `type Point struct`, `const Max = 10`); docstring = the `//` comment lines right
//! above the declaration.
//!
//! References: `f()` → `call`; `pkg.F()` → `call` with qualifier `pkg` (an imported
//! package name); `x.M()` → `method_call`, qualifier = the receiver type when `x` is the
//! method's receiver variable, the name when `x` is a package-level name, else none;
//! `x.f` → `field` (same rules; `pkg.Name` → `path` qualified `pkg`); imports → `use` of
//! the last path segment, qualified by the rest of the path joined with `::`
//! (`"net/http"` → `http`, `net`); type names → `type` (`pkg.T` qualified `pkg`; type
//! parameters excluded), including composite literal types; keys of struct literals →
//! `field` qualified by the literal's type; other names read that are not local bindings
//! → `path`. Predeclared types (`int`, `string`, `error`, ..) are not references.
//!
//! The package name (first element) is given by the indexer: the last segment of the
//! nearest `go.mod`'s module path, else the project directory's name.
//!
//! Not covered: receiver types of other variables are not inferred; embedded fields are not
//! definitions.

use crate::grammar::NodeExt;
use std::collections::HashSet;

use tree_sitter::Node;

use super::Language;
use super::common::{Out, collapse, join, named_kids, parse};
use crate::model::{FileSymbols, ReferenceKind as RK, SymbolKind as SK};

pub struct Go;

impl Language for Go {
    fn name(&self) -> &'static str {
        "go"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["go"]
    }

    fn manifest(&self) -> Option<super::Manifest> {
        Some(super::Manifest {
            file_name: "go.mod",
            package_name: crate::indexer::go_module_name_of,
        })
    }

    fn project_markers(&self) -> &'static [&'static str] {
        &["go.mod"]
    }

    /// An upper-case name is exported, not constructed: `NewServer()` is a call.
    fn upper_case_call_constructs(&self) -> bool {
        false
    }

    /// `pkg/util/strings.go` → `[package, pkg, util]`; `main.go` → `[package]`.
    fn module_path(&self, package: &str, relative_path: &str) -> Vec<String> {
        let normalized = relative_path.replace('\\', "/");
        let mut parts: Vec<&str> = normalized
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        parts.pop();
        std::iter::once(package.to_string())
            .chain(parts.iter().map(|p| p.to_string()))
            .collect()
    }

    fn extract(&self, source: &str, module_path: &[String], _path: &str) -> FileSymbols {
        let Some(tree) = parse("go", || tree_sitter_go::LANGUAGE.into(), source) else {
            return FileSymbols {
                has_parse_errors: true,
                ..FileSymbols::default()
            };
        };
        let root = tree.root_node();
        let module = module_path.join("::");
        let mut ex = Extractor {
            out: Out::new(source),
            module: module.clone(),
            packages: HashSet::new(),
            scopes: Vec::new(),
            receiver: None,
            nest: 0,
        };
        ex.collect_imports(root);
        ex.walk(root, &module);
        let (definitions, references) = ex.out.finish();
        FileSymbols {
            definitions,
            references,
            has_parse_errors: root.has_error(),
            edges: Vec::new(),
        }
    }
}

const MAX_NEST: u32 = 250;

struct Extractor<'s> {
    out: Out<'s>,
    module: String,
    /// Names of the imported packages (alias or last path segment).
    packages: HashSet<&'s str>,
    scopes: Vec<HashSet<&'s str>>,
    /// Inside a method: (receiver variable, receiver type).
    receiver: Option<(&'s str, String)>,
    nest: u32,
}

/// Go's predeclared types: not references to anything in a project.
fn is_predeclared_type(name: &str) -> bool {
    matches!(
        name,
        "bool"
            | "byte"
            | "complex64"
            | "complex128"
            | "error"
            | "float32"
            | "float64"
            | "int"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "rune"
            | "string"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "uintptr"
            | "any"
            | "comparable"
    )
}

fn import_path_parts(lit: &str) -> Vec<&str> {
    lit.trim_matches(|c| c == '"' || c == '`')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

impl<'s> Extractor<'s> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.out.text(n)
    }

    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    fn reference(&mut self, n: Node<'_>, kind: RK, qualifier: Option<String>, enclosing: &str) {
        let name = self.text(n);
        self.out.reference(n, name, kind, qualifier, enclosing);
    }

    fn collect_imports(&mut self, root: Node<'_>) {
        for decl in named_kids(root) {
            if decl.kind_str() != "import_declaration" {
                continue;
            }
            let mut specs = Vec::new();
            for c in named_kids(decl) {
                match c.kind_str() {
                    "import_spec" => specs.push(c),
                    "import_spec_list" => specs.extend(
                        named_kids(c)
                            .into_iter()
                            .filter(|s| s.kind_str() == "import_spec"),
                    ),
                    _ => {}
                }
            }
            for spec in specs {
                let alias = spec
                    .field("name")
                    .filter(|n| n.kind_str() == "package_identifier")
                    .map(|n| self.text(n));
                let last = spec
                    .field("path")
                    .and_then(|p| import_path_parts(self.text(p)).last().copied());
                if let Some(name) = alias.or(last) {
                    self.packages.insert(name);
                }
            }
        }
    }

    /// The declaration a definition spans: a lone spec's whole declaration, else the spec.
    fn item(&self, spec: Node<'s>) -> Node<'s> {
        match spec.parent() {
            Some(p) if p.named_child_count() == 1 && p.kind_str().ends_with("_declaration") => p,
            _ => spec,
        }
    }

    /// The `//` comment lines right above `item`.
    fn doc(&self, item: Node<'_>) -> Option<String> {
        let mut lines = Vec::new();
        let mut row = item.start_position().row;
        let mut cur = item.prev_named_sibling();
        while let Some(c) = cur {
            if c.kind_str() != "comment" || c.end_position().row + 1 != row {
                break;
            }
            let t = self.text(c);
            let Some(line) = t.strip_prefix("//") else {
                break;
            };
            lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end());
            row = c.start_position().row;
            cur = c.prev_named_sibling();
        }
        if lines.is_empty() {
            return None;
        }
        lines.reverse();
        Some(lines.join("\n"))
    }

    fn header(&self, item: Node<'_>, end: usize) -> String {
        let raw = self.out.src.get(item.start_byte()..end).unwrap_or("");
        let s = collapse(raw);
        s.trim_end_matches('{').trim_end().to_string()
    }

    fn first_line(&self, item: Node<'_>) -> String {
        collapse(self.text(item).lines().next().unwrap_or(""))
            .trim_end_matches(['(', '{'])
            .trim_end()
            .to_string()
    }

    fn walk(&mut self, n: Node<'s>, enclosing: &str) {
        if self.nest > MAX_NEST {
            return;
        }
        self.nest += 1;
        self.walk_inner(n, enclosing);
        self.nest -= 1;
    }

    fn kids(&mut self, n: Node<'s>, enclosing: &str) {
        for c in named_kids(n) {
            self.walk(c, enclosing);
        }
    }

    /// Dispatch on the node kind. The larger arms live in `arm_*` methods, not inlined,
    /// so that this frame stays small: an unoptimised build otherwise spends ~9 KB of stack
    /// per nesting level.
    fn walk_inner(&mut self, n: Node<'s>, enc: &str) {
        match n.kind_str() {
            "source_file" => self.kids(n, enc),
            "package_clause" | "comment" => {}
            "import_declaration" | "import_spec_list" => self.kids(n, enc),
            "import_spec" => self.arm_import_spec(n, enc),
            "function_declaration" => self.arm_function_declaration(n, enc),
            "method_declaration" => self.arm_method_declaration(n, enc),
            "type_declaration" => self.arm_type_declaration(n, enc),
            "const_declaration" | "var_declaration" | "var_spec_list" => {
                self.arm_const_declaration(n, enc)
            }
            "func_literal" => self.function(n, enc, self.receiver.clone()),
            "identifier" => {
                if !self.is_local(self.text(n)) {
                    self.reference(n, RK::Path, None, enc);
                }
            }
            "type_identifier" => self.arm_type_identifier(n, enc),
            "qualified_type" => self.arm_qualified_type(n, enc),
            "call_expression" => self.arm_call_expression(n, enc),
            "selector_expression" => self.selector(n, false, enc),
            "composite_literal" => self.arm_composite_literal(n, enc),
            "short_var_declaration" | "range_clause" | "assignment_statement" => {
                self.arm_short_var_declaration(n, enc)
            }
            "labeled_statement" | "break_statement" | "continue_statement" | "goto_statement" => {
                self.arm_labeled_statement(n, enc)
            }
            "field_identifier"
            | "package_identifier"
            | "blank_identifier"
            | "interpreted_string_literal"
            | "raw_string_literal"
            | "int_literal"
            | "float_literal"
            | "rune_literal"
            | "true"
            | "false"
            | "nil"
            | "iota"
            | "label_name" => {}
            "parameter_declaration" | "variadic_parameter_declaration" => {
                if let Some(t) = n.field("type") {
                    self.walk(t, enc);
                }
            }
            _ => self.kids(n, enc),
        }
    }

    #[inline(never)]
    fn arm_import_spec(&mut self, n: Node<'s>, enc: &str) {
        if let Some(p) = n.field("path") {
            let raw = self.text(p);
            let parts = import_path_parts(raw);
            if let Some((last, rest)) = parts.split_last() {
                let offset = raw.len() - 1 - last.len();
                let byte = p.start_byte() + offset;
                let (line, column) = self.out.pos(byte);
                self.out.refs.push(crate::model::Reference {
                    name: last.to_string(),
                    kind: RK::Use,
                    line,
                    column,
                    qualifier: (!rest.is_empty()).then(|| rest.join("::")),
                    enclosing_symbol: enc.to_string(),
                });
            }
        }
    }

    #[inline(never)]
    fn arm_function_declaration(&mut self, n: Node<'s>, _enc: &str) {
        let Some(name) = n.field("name") else {
            return;
        };
        let q = join(&self.module, self.text(name));
        let body = n.field("body");
        let sig = self.header(n, body.map(|b| b.start_byte()).unwrap_or(n.end_byte()));
        let doc = self.doc(n);
        self.out.def(
            n,
            name,
            self.text(name),
            SK::Function,
            q.clone(),
            None,
            sig,
            doc,
        );
        self.function(n, &q, None);
    }

    #[inline(never)]
    fn arm_method_declaration(&mut self, n: Node<'s>, _enc: &str) {
        let Some(name) = n.field("name") else {
            return;
        };
        let recv = n.field("receiver");
        let (recv_var, recv_type) = recv
            .and_then(|r| {
                named_kids(r)
                    .into_iter()
                    .find(|p| p.kind_str() == "parameter_declaration")
            })
            .map(|p| {
                let var = p.field("name").map(|v| self.text(v));
                let ty = p.field("type").map(|t| self.base_type(t));
                (var, ty)
            })
            .unwrap_or((None, None));
        let owner = recv_type.clone().filter(|t| !t.is_empty());
        let q = join(
            &owner
                .as_ref()
                .map(|o| join(&self.module, o))
                .unwrap_or(self.module.clone()),
            self.text(name),
        );
        let body = n.field("body");
        let sig = self.header(n, body.map(|b| b.start_byte()).unwrap_or(n.end_byte()));
        let doc = self.doc(n);
        self.out.def(
            n,
            name,
            self.text(name),
            SK::Method,
            q.clone(),
            owner.clone(),
            sig,
            doc,
        );
        let receiver = match (recv_var, owner) {
            (Some(v), Some(o)) => Some((v, o)),
            _ => None,
        };
        self.function(n, &q, receiver);
    }

    #[inline(never)]
    fn arm_type_declaration(&mut self, n: Node<'s>, enc: &str) {
        for spec in named_kids(n) {
            match spec.kind_str() {
                "type_spec" | "type_alias" => self.type_spec(spec),
                _ => self.walk(spec, enc),
            }
        }
    }

    #[inline(never)]
    fn arm_const_declaration(&mut self, n: Node<'s>, enc: &str) {
        for spec in named_kids(n) {
            match spec.kind_str() {
                "const_spec" | "var_spec" => self.value_spec(spec, enc),
                _ => self.walk(spec, enc),
            }
        }
    }

    #[inline(never)]
    fn arm_type_identifier(&mut self, n: Node<'s>, enc: &str) {
        let name = self.text(n);
        if !self.is_local(name) && !is_predeclared_type(name) {
            self.reference(n, RK::Type, None, enc);
        }
    }

    #[inline(never)]
    fn arm_qualified_type(&mut self, n: Node<'s>, enc: &str) {
        if let (Some(p), Some(name)) = (n.field("package"), n.field("name")) {
            let q = self.text(p).to_string();
            self.reference(name, RK::Type, Some(q), enc);
        }
    }

    #[inline(never)]
    fn arm_call_expression(&mut self, n: Node<'s>, enc: &str) {
        let f = n.field("function");
        match f {
            Some(f) if f.kind_str() == "identifier" && !self.is_local(self.text(f)) => {
                self.reference(f, RK::Call, None, enc);
            }
            Some(f) if f.kind_str() == "selector_expression" => self.selector(f, true, enc),
            Some(f) => self.walk(f, enc),
            None => {}
        }
        for c in named_kids(n) {
            if Some(c) != f {
                self.walk(c, enc);
            }
        }
    }

    #[inline(never)]
    fn arm_composite_literal(&mut self, n: Node<'s>, enc: &str) {
        let ty = n.field("type");
        if let Some(t) = ty {
            self.walk(t, enc);
        }
        let type_name = ty.map(|t| self.base_type(t)).filter(|t| !t.is_empty());
        if let Some(body) = n.field("body") {
            self.literal_value(body, type_name.as_deref(), enc);
        }
    }

    #[inline(never)]
    fn arm_short_var_declaration(&mut self, n: Node<'s>, enc: &str) {
        let binds = n.kind_str() != "assignment_statement";
        for c in named_kids(n) {
            if binds && Some(c) == n.field("left") {
                // Bound names are locals; the left side of `:=` reads nothing.
                continue;
            }
            self.walk(c, enc);
        }
    }

    #[inline(never)]
    fn arm_labeled_statement(&mut self, n: Node<'s>, enc: &str) {
        for c in named_kids(n) {
            if c.kind_str() != "label_name" {
                self.walk(c, enc);
            }
        }
    }

    /// The named type of a receiver or literal type: `*Point` → `Point`, `List[T]` → `List`.
    fn base_type(&self, t: Node<'_>) -> String {
        match t.kind_str() {
            "type_identifier" => self.text(t).to_string(),
            "pointer_type" | "parenthesized_type" => t
                .named_child(0)
                .map(|c| self.base_type(c))
                .unwrap_or_default(),
            "generic_type" => t
                .field("type")
                .map(|c| self.base_type(c))
                .unwrap_or_default(),
            "qualified_type" => t
                .field("name")
                .map(|c| self.text(c).to_string())
                .unwrap_or_default(),
            _ => String::new(),
        }
    }

    fn literal_value(&mut self, body: Node<'s>, type_name: Option<&str>, enc: &str) {
        for el in named_kids(body) {
            if el.kind_str() == "keyed_element" {
                let key = el.field("key");
                let value = el.field("value");
                if let Some(k) = key {
                    let id = k.named_child(0).filter(|c| c.kind_str() == "identifier");
                    match (id, type_name) {
                        (Some(id), Some(t)) if k.named_child_count() == 1 => {
                            self.reference(id, RK::Field, Some(t.to_string()), enc)
                        }
                        _ => self.walk(k, enc),
                    }
                }
                if let Some(v) = value {
                    self.element(v, enc);
                }
            } else {
                self.element(el, enc);
            }
        }
    }

    /// A literal element: a nested `{..}` literal has no type of its own here.
    fn element(&mut self, el: Node<'s>, enc: &str) {
        match el.named_child(0) {
            Some(lv) if el.kind_str() == "literal_element" && lv.kind_str() == "literal_value" => {
                self.literal_value(lv, None, enc)
            }
            _ => self.walk(el, enc),
        }
    }

    fn selector(&mut self, n: Node<'s>, call: bool, enc: &str) {
        let (Some(op), Some(field)) = (n.field("operand"), n.field("field")) else {
            return self.kids(n, enc);
        };
        if op.kind_str() == "identifier" {
            let name = self.text(op);
            if let Some((var, ty)) = &self.receiver
                && *var == name
            {
                let q = Some(ty.clone());
                let kind = if call { RK::MethodCall } else { RK::Field };
                return self.reference(field, kind, q, enc);
            }
            if !self.is_local(name) && self.packages.contains(name) {
                let kind = if call { RK::Call } else { RK::Path };
                return self.reference(field, kind, Some(name.to_string()), enc);
            }
            let q = (!self.is_local(name)).then(|| name.to_string());
            self.walk(op, enc);
            let kind = if call { RK::MethodCall } else { RK::Field };
            return self.reference(field, kind, q, enc);
        }
        self.walk(op, enc);
        let kind = if call { RK::MethodCall } else { RK::Field };
        self.reference(field, kind, None, enc);
    }

    fn type_spec(&mut self, spec: Node<'s>) {
        let Some(name) = spec.field("name") else {
            return;
        };
        let ty = spec.field("type");
        let item = self.item(spec);
        let type_name = self.text(name);
        let q = join(&self.module, type_name);
        let kind = match ty.map(|t| t.kind_str()) {
            _ if spec.kind_str() == "type_alias" => SK::TypeAlias,
            Some("struct_type") => SK::Struct,
            Some("interface_type") => SK::Interface,
            _ => SK::TypeAlias,
        };
        let sig = match ty {
            Some(t) if matches!(kind, SK::Struct | SK::Interface) => {
                let body = named_kids(t).into_iter().next();
                let end = body
                    .filter(|b| b.kind_str() == "field_declaration_list")
                    .map(|b| b.start_byte())
                    .unwrap_or_else(|| {
                        self.out.src[t.start_byte()..t.end_byte()]
                            .find('{')
                            .map(|i| t.start_byte() + i)
                            .unwrap_or(t.end_byte())
                    });
                self.header(item, end)
            }
            _ => self.first_line(item),
        };
        let doc = self.doc(item);
        self.out
            .def(item, name, type_name, kind, q.clone(), None, sig, doc);
        let mut tparams = HashSet::new();
        if let Some(tp) = spec.field("type_parameters") {
            for d in named_kids(tp) {
                if let Some(n) = d.field("name") {
                    tparams.insert(self.text(n));
                }
                for c in named_kids(d) {
                    if c.kind_str() == "identifier" {
                        tparams.insert(self.text(c));
                    }
                }
            }
        }
        self.scopes.push(tparams);
        if let Some(tp) = spec.field("type_parameters") {
            for d in named_kids(tp) {
                if let Some(t) = d.field("type") {
                    self.walk(t, &q);
                }
            }
        }
        match (kind, ty) {
            (SK::Struct, Some(t)) => {
                for list in named_kids(t) {
                    for f in named_kids(list) {
                        if f.kind_str() != "field_declaration" {
                            continue;
                        }
                        let mut c = f.walk();
                        let names: Vec<Node<'_>> =
                            f.children_by_field_name("name", &mut c).collect();
                        for nn in names {
                            let fname = self.text(nn);
                            let sig = collapse(self.text(f));
                            let doc = self.doc(f);
                            self.out.def(
                                f,
                                nn,
                                fname,
                                SK::Field,
                                join(&q, fname),
                                Some(type_name.to_string()),
                                sig,
                                doc,
                            );
                        }
                        if let Some(ft) = f.field("type") {
                            self.walk(ft, &q);
                        }
                    }
                }
            }
            (SK::Interface, Some(t)) => {
                for m in named_kids(t) {
                    if m.kind_str() == "method_elem"
                        && let Some(nn) = m.field("name")
                    {
                        let mname = self.text(nn);
                        let sig = collapse(self.text(m));
                        let doc = self.doc(m);
                        self.out.def(
                            m,
                            nn,
                            mname,
                            SK::Method,
                            join(&q, mname),
                            Some(type_name.to_string()),
                            sig,
                            doc,
                        );
                        for c in named_kids(m) {
                            if c != nn {
                                self.walk(c, &q);
                            }
                        }
                    } else {
                        self.walk(m, &q);
                    }
                }
            }
            (_, Some(t)) => self.walk(t, &q),
            _ => {}
        }
        self.scopes.pop();
    }

    fn value_spec(&mut self, spec: Node<'s>, enc: &str) {
        let in_function = !self.scopes.is_empty();
        if !in_function {
            let item = self.item(spec);
            let kind = if spec.kind_str() == "const_spec" {
                SK::Const
            } else {
                SK::Static
            };
            let mut c = spec.walk();
            let names: Vec<Node<'_>> = spec
                .children_by_field_name("name", &mut c)
                .filter(|n| n.kind_str() == "identifier")
                .collect();
            let sig = self.first_line(item);
            let doc = self.doc(item);
            for nn in names {
                let name = self.text(nn);
                if name == "_" {
                    continue;
                }
                self.out.def(
                    item,
                    nn,
                    name,
                    kind,
                    join(&self.module, name),
                    None,
                    sig.clone(),
                    doc.clone(),
                );
            }
        }
        for f in ["type", "value"] {
            if let Some(c) = spec.field(f) {
                self.walk(c, enc);
            }
        }
    }

    /// A function, method or func literal: parameters, results and body in a new scope.
    fn function(&mut self, n: Node<'s>, enc: &str, receiver: Option<(&'s str, String)>) {
        let mut locals = HashSet::new();
        for f in ["receiver", "parameters", "result", "type_parameters"] {
            if let Some(p) = n.field(f)
                && p.kind_str().ends_with("_list")
            {
                for d in named_kids(p) {
                    let mut c = d.walk();
                    for name in d.children_by_field_name("name", &mut c) {
                        locals.insert(self.text(name));
                    }
                }
            }
        }
        let body = n.field("body");
        if let Some(b) = body {
            self.bindings(b, &mut locals);
        }
        let saved = std::mem::replace(&mut self.receiver, receiver);
        self.scopes.push(locals);
        for f in ["receiver", "type_parameters", "parameters", "result"] {
            if let Some(p) = n.field(f) {
                if p.kind_str().ends_with("_list") {
                    for d in named_kids(p) {
                        match d.kind_str() {
                            "type_parameter_declaration" => {
                                if let Some(t) = d.field("type") {
                                    self.walk(t, enc);
                                }
                            }
                            _ => self.walk(d, enc),
                        }
                    }
                } else {
                    self.walk(p, enc);
                }
            }
        }
        if let Some(b) = body {
            self.walk(b, enc);
        }
        self.scopes.pop();
        self.receiver = saved;
    }

    /// Names bound in a function body (not descending into func literals).
    fn bindings(&self, n: Node<'_>, into: &mut HashSet<&'s str>) {
        for c in named_kids(n) {
            match c.kind_str() {
                "func_literal" => {}
                "short_var_declaration" | "range_clause" => {
                    if let Some(left) = c.field("left") {
                        for id in named_kids(left) {
                            if id.kind_str() == "identifier" {
                                into.insert(self.text(id));
                            }
                        }
                    }
                    self.bindings(c, into);
                }
                "var_spec" | "const_spec" => {
                    let mut w = c.walk();
                    for name in c.children_by_field_name("name", &mut w) {
                        into.insert(self.text(name));
                    }
                    self.bindings(c, into);
                }
                "type_switch_statement" => {
                    if let Some(alias) = c.field("alias") {
                        for id in named_kids(alias) {
                            into.insert(self.text(id));
                        }
                        if alias.kind_str() == "identifier" {
                            into.insert(self.text(alias));
                        }
                    }
                    self.bindings(c, into);
                }
                "receive_statement" => {
                    if let Some(left) = c.field("left") {
                        for id in named_kids(left) {
                            if id.kind_str() == "identifier" {
                                into.insert(self.text(id));
                            }
                        }
                    }
                    self.bindings(c, into);
                }
                _ => self.bindings(c, into),
            }
        }
    }
}

#[cfg(test)]
mod tests;
