//! Receiver types of method calls and field accesses, where they are locally evident.
//!
//! A `MethodCall` or `Field` reference `x.foo` gets the type of `x` as its qualifier when
//! the function that contains it says what that type is:
//!
//! 1. `self` inside an `impl` or `trait` → `Self`;
//! 2. a parameter or `let` binding with a declared type (`cfg: &Config`) → `Config`;
//! 3. `let x = Type::assoc(..)` / `let x = Type { .. }` → `Type` (associated functions
//!    mostly return `Self`; `Enum::Variant(..)` and `Enum::Variant { .. }` give `Enum`);
//! 4. `self.field` (or `x.field` for a typed `x`) where the owner struct is defined in the
//!    same file with a declared field type → that type; resolved when the walk ends, so
//!    the struct may stand anywhere in the file (also inside re-parsed macro bodies);
//! 5. a receiver written as `Type::assoc(..)` or `Type { .. }` → `Type`.
//!
//! Beyond these: `let a = b`, `let a = &b` and `(*b).f()` carry `b`'s type;
//! `Type::assoc(..)?` and `Type::assoc(..).await` are taken to give `Type`; and
//! `Box::new(x)`, `Arc::new(x)`, `Rc::new(x)`, `Arc::clone(&x)` give `x`'s type (unknown
//! unless `x`'s is evident), other associated functions of those three nothing.
//!
//! Type names are the last path segment as written, with `&`, `&mut`, `*const`, `*mut` and
//! generic arguments removed and `Box<T>`, `Arc<T>`, `Rc<T>` unwrapped to `T`. `Option<T>`,
//! `Vec<T>`, `Result<..>` stay what they are (`Option`, ...); `dyn Trait` and `impl Trait`
//! give `Trait`; generic parameters, tuples, slices, arrays and function types give nothing.
//!
//! Bindings are tracked per function in source order: the latest binding of a name wins,
//! and bindings without an evident type (closure parameters without a type, names bound
//! by `match`/`if let`/`for`/destructuring patterns) forget what was known.

use crate::grammar::NodeExt;
use std::collections::HashMap;

use tree_sitter::Node;

use super::Extractor;
use crate::rust_lang::text::strip_raw;

/// How far [`Extractor::expr_type`] and [`Extractor::type_of`] descend.
const MAX_TYPE_DEPTH: u32 = 24;

/// Which rule found a receiver type (statistics only; see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Rule {
    /// 1: `self`.
    SelfValue,
    /// 2: a binding with a declared type.
    Declared,
    /// 3: a `let` bound to `Type::assoc(..)` or `Type { .. }`.
    Constructor,
    /// 4: a field of a struct defined in the same file.
    Field,
    /// 5: the receiver expression is `Type::assoc(..)` or `Type { .. }` itself.
    Expression,
}

impl Rule {
    #[cfg(test)]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Rule::SelfValue => "1 self",
            Rule::Declared => "2 declared",
            Rule::Constructor => "3 let constructor",
            Rule::Field => "4 field",
            Rule::Expression => "5 receiver expression",
        }
    }
}

/// The type of a value, as far as it is locally evident.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    /// A type name (`Self` included), and the rule that found it.
    Name(String, Rule),
    /// The type of the named field (or tuple index) of a value of the inner type; resolved
    /// in [`Extractor::finish`] against the structs of the file.
    Field(Box<Ty>, String),
}

/// Field types of the structs of one file: struct name → field name (or tuple index) →
/// type name, `None` where the type is not a usable name or definitions disagree.
pub(super) type StructFields = HashMap<String, HashMap<String, Option<String>>>;

impl Ty {
    /// The type name this stands for, once the file's structs are known.
    pub(super) fn resolve(&self, structs: &StructFields) -> Option<(String, Rule)> {
        match self {
            Ty::Name(name, rule) => Some((name.clone(), *rule)),
            Ty::Field(base, field) => {
                let (owner, _) = base.resolve(structs)?;
                let ty = structs.get(&owner)?.get(field)?.clone()?;
                Some((ty, Rule::Field))
            }
        }
    }
}

/// Associated functions whose name says they return `Self` (possibly in a `Result` or
/// a future, which `?` and `.await` unwrap), and tuple variants.
fn looks_like_constructor(name: &str) -> bool {
    matches!(
        name,
        "new"
            | "default"
            | "empty"
            | "open"
            | "create"
            | "bind"
            | "connect"
            | "from"
            | "try_from"
            | "try_new"
    ) || ["new_", "with_", "from_", "try_new_"]
        .iter()
        .any(|p| name.starts_with(p))
        // `Enum::Variant(..)` builds the enum
        || starts_uppercase(name)
}

fn starts_uppercase(name: &str) -> bool {
    name.starts_with(|c: char| c.is_uppercase())
}

/// `let` patterns that bind exactly one name to the whole value: `x`, `mut x`, `ref x`.
pub(super) fn simple_binding(p: Node<'_>) -> Option<Node<'_>> {
    match p.kind_str() {
        "identifier" => Some(p),
        "mut_pattern" | "ref_pattern" => {
            let mut c = p.walk();
            let inner = p
                .named_children(&mut c)
                .find(|k| k.kind_str() != "mutable_specifier")?;
            simple_binding(inner)
        }
        _ => None,
    }
}

impl<'s> Extractor<'s> {
    /// The type name of a type as written, stripped (see the module docs).
    pub(super) fn type_of(&self, t: Node<'_>) -> Option<String> {
        self.type_of_at(t, 0)
    }

    fn type_of_at(&self, t: Node<'_>, depth: u32) -> Option<String> {
        if depth >= MAX_TYPE_DEPTH {
            return None;
        }
        let depth = depth + 1;
        match t.kind_str() {
            "type_identifier" | "identifier" => {
                let name = strip_raw(self.text(t));
                (!self.tparams.contains(&name)).then(|| name.to_string())
            }
            "primitive_type" => Some(self.text(t).to_string()),
            "reference_type" | "pointer_type" => self.type_of_at(t.field("type")?, depth),
            "generic_type" => {
                let name = self.type_of_at(t.field("type")?, depth)?;
                if matches!(name.as_str(), "Box" | "Arc" | "Rc" | "Pin") {
                    let args = t.field("type_arguments")?;
                    let mut c = args.walk();
                    let inner = args.named_children(&mut c).find(|k| {
                        !matches!(k.kind_str(), "lifetime" | "line_comment" | "block_comment")
                    })?;
                    self.type_of_at(inner, depth)
                } else {
                    Some(name)
                }
            }
            "scoped_type_identifier" | "scoped_identifier" => {
                // `T::Assoc`, `Self::Assoc`, `<T as Tr>::Assoc`: an associated type, unknown.
                if let Some(p) = t.field("path") {
                    match p.kind_str() {
                        "bracketed_type" | "generic_type" => return None,
                        "identifier" | "type_identifier" => {
                            let first = strip_raw(self.text(p));
                            if first == "Self" || self.tparams.contains(&first) {
                                return None;
                            }
                        }
                        _ => {}
                    }
                }
                let name = t.field("name")?;
                Some(strip_raw(self.text(name)).to_string())
            }
            "dynamic_type" | "abstract_type" => self.type_of_at(t.field("trait")?, depth),
            "higher_ranked_trait_bound" => self.type_of_at(t.field("type")?, depth),
            "bounded_type" => {
                let mut c = t.walk();
                let first = t
                    .named_children(&mut c)
                    .find(|k| !matches!(k.kind_str(), "lifetime" | "use_bounds"))?;
                self.type_of_at(first, depth)
            }
            _ => None,
        }
    }

    /// The type an associated-function path stands for: `Type` in `a::Type::new`,
    /// `Vec::<u8>::new`, `<Type>::new`, `Enum::Variant`; only when it starts with an
    /// upper-case letter and is not a generic parameter.
    fn path_type(&self, p: Node<'_>) -> Option<String> {
        let name = match p.kind_str() {
            "identifier" | "type_identifier" => strip_raw(self.text(p)),
            "scoped_identifier" | "scoped_type_identifier" => {
                strip_raw(self.text(p.field("name")?))
            }
            "generic_type" | "generic_type_with_turbofish" => {
                return self.path_type(p.field("type")?);
            }
            "bracketed_type" => {
                let inner = p.named_child(0)?;
                if inner.kind_str() == "qualified_type" {
                    return None;
                }
                return self.type_of(inner);
            }
            _ => return None,
        };
        (starts_uppercase(name) && !self.tparams.contains(&name)).then(|| name.to_string())
    }

    /// The type a struct expression builds: `Type` for `Type { .. }` and `a::Type { .. }`,
    /// `Enum` for `Enum::Variant { .. }`.
    fn struct_expression_type(&self, name: Node<'_>) -> Option<String> {
        match name.kind_str() {
            "type_identifier" | "identifier" => {
                let n = strip_raw(self.text(name));
                (!self.tparams.contains(&n)).then(|| n.to_string())
            }
            "scoped_type_identifier" | "scoped_identifier" => {
                if let Some(owner) = name.field("path").and_then(|p| self.path_type(p)) {
                    return Some(owner);
                }
                let last = name.field("name")?;
                Some(strip_raw(self.text(last)).to_string())
            }
            "generic_type_with_turbofish" | "generic_type" => {
                self.struct_expression_type(name.field("type")?)
            }
            _ => None,
        }
    }

    /// The type of an expression used as a receiver (or bound by `let`), if evident.
    pub(super) fn expr_type(&self, n: Node<'_>) -> Option<Ty> {
        self.expr_type_at(n, 0)
    }

    fn expr_type_at(&self, n: Node<'_>, depth: u32) -> Option<Ty> {
        if depth >= MAX_TYPE_DEPTH {
            return None;
        }
        let depth = depth + 1;
        match n.kind_str() {
            "self" => self
                .self_owner
                .is_some()
                .then(|| Ty::Name("Self".to_string(), Rule::SelfValue)),
            "identifier" => self.local_types.get(strip_raw(self.text(n))).cloned(),
            "field_expression" => {
                let base = self.expr_type_at(n.field("value")?, depth)?;
                let field = n.field("field")?;
                let field = strip_raw(self.text(field)).to_string();
                // fields of `Self` are the fields of the impl's own type
                let base = match base {
                    Ty::Name(name, rule) if name == "Self" => match &self.self_owner {
                        Some(owner) => Ty::Name(owner.clone(), rule),
                        None => return None,
                    },
                    other => other,
                };
                Some(Ty::Field(Box::new(base), field))
            }
            "call_expression" => {
                let mut f = n.field("function")?;
                if f.kind_str() == "generic_function" {
                    f = f.field("function")?;
                }
                if f.kind_str() != "scoped_identifier" {
                    return None;
                }
                let ty = self.path_type(f.field("path")?)?;
                if matches!(ty.as_str(), "Box" | "Arc" | "Rc" | "Pin") {
                    // smart pointers are looked through, as in declared types:
                    // `Arc::new(x)` and `Arc::clone(&x)` are `x`'s type, other
                    // functions (`into_raw`, `downgrade`, `pin`, ..) unknown
                    let name = strip_raw(self.text(f.field("name")?));
                    if !matches!(name, "new" | "clone" | "new_unchecked") {
                        return None;
                    }
                    let args = n.field("arguments")?;
                    let mut c = args.walk();
                    let arg = args.named_children(&mut c).find(|k| {
                        !matches!(
                            k.kind_str(),
                            "line_comment" | "block_comment" | "attribute_item"
                        )
                    })?;
                    return self.expr_type_at(arg, depth);
                }
                // Only functions named like constructors return their type:
                // `NFA::config()` is a `Config`, `Foo::builder()` a builder.
                let name = strip_raw(self.text(f.field("name")?));
                if !looks_like_constructor(name) {
                    return None;
                }
                Some(Ty::Name(ty, Rule::Expression))
            }
            "struct_expression" => {
                let ty = self.struct_expression_type(n.field("name")?)?;
                Some(Ty::Name(ty, Rule::Expression))
            }
            "parenthesized_expression" => self.expr_type_at(n.named_child(0)?, depth),
            "reference_expression" => self.expr_type_at(n.field("value")?, depth),
            // `*x` for `x: &T` or `x: Box<T>` (already unwrapped) is still `T`
            "unary_expression" if n.child(0).is_some_and(|op| op.kind_str() == "*") => {
                self.expr_type_at(n.named_child(0)?, depth)
            }
            // `Type::open(..)?`, `Type::connect(..).await`: constructors returning
            // `Result<Self, _>` or futures of `Self`
            "try_expression" | "await_expression" => {
                let inner = n.named_child(0)?;
                if !matches!(
                    inner.kind_str(),
                    "call_expression" | "try_expression" | "await_expression"
                ) {
                    return None;
                }
                self.expr_type_at(inner, depth)
            }
            _ => None,
        }
    }

    /// Record what `pattern` (just walked) binds when the value bound has type `ty`:
    /// only a pattern binding one name to the whole value keeps the type.
    pub(super) fn bind_type(&mut self, pattern: Node<'_>, ty: Option<Ty>) {
        let (Some(ty), Some(id)) = (ty, simple_binding(pattern)) else {
            return;
        };
        let name = strip_raw(self.text(id));
        if starts_uppercase(name) {
            return;
        }
        self.local_types.insert(name, ty);
    }

    /// Remember the declared field types of a struct or union defined in this file; the
    /// struct's generic parameters must be in scope.
    pub(super) fn record_fields(&mut self, owner: &str, body: Node<'_>) {
        let mut fields: Vec<(String, Option<String>)> = Vec::new();
        let kind_of = |this: &Self, t: Node<'_>| {
            this.type_of(t).map(|name| {
                if name == "Self" {
                    owner.to_string()
                } else {
                    name
                }
            })
        };
        let mut c = body.walk();
        match body.kind_str() {
            "field_declaration_list" => {
                for k in body.named_children(&mut c) {
                    if k.kind_str() != "field_declaration" {
                        continue;
                    }
                    let (Some(name), Some(t)) = (k.field("name"), k.field("type")) else {
                        continue;
                    };
                    fields.push((strip_raw(self.text(name)).to_string(), kind_of(self, t)));
                }
            }
            "ordered_field_declaration_list" => {
                let mut index = 0usize;
                for k in body.named_children(&mut c) {
                    if matches!(
                        k.kind_str(),
                        "attribute_item" | "visibility_modifier" | "line_comment" | "block_comment"
                    ) {
                        continue;
                    }
                    fields.push((index.to_string(), kind_of(self, k)));
                    index += 1;
                }
            }
            _ => return,
        }
        let entry = self.struct_fields.entry(owner.to_string()).or_default();
        for (name, ty) in fields {
            match entry.get_mut(&name) {
                // `#[cfg]`-alternative definitions that disagree: unknown
                Some(existing) if *existing != ty => *existing = None,
                Some(_) => {}
                None => {
                    entry.insert(name, ty);
                }
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// (reference kind, rule) → how many references got a qualifier that way.
    static STATS: std::cell::RefCell<std::collections::BTreeMap<(&'static str, Rule), usize>> =
        const { std::cell::RefCell::new(std::collections::BTreeMap::new()) };
}

#[cfg(test)]
pub(super) fn count(kind: crate::model::ReferenceKind, rule: Rule) {
    STATS.with(|s| *s.borrow_mut().entry((kind.as_str(), rule)).or_default() += 1);
}

/// Receiver qualifiers set on this thread since the last call, by reference kind and rule.
#[cfg(test)]
pub(crate) fn take_stats() -> std::collections::BTreeMap<(&'static str, Rule), usize> {
    STATS.with(|s| std::mem::take(&mut *s.borrow_mut()))
}
