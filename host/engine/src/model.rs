//! What the extractor produces for one source file, before it is stored.
//!
//! Lines and columns are 1-based everywhere (columns count Unicode scalar values),
//! because every consumer (agents, editors, the eval) speaks 1-based positions.

use serde::{Deserialize, Serialize};

/// Kinds of definitions the index knows. The string forms are what tools publish.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Function,
    Method,
    Struct,
    Enum,
    Variant,
    Trait,
    Const,
    Static,
    TypeAlias,
    Module,
    Macro,
    Union,
    Field,
    Impl,
    /// A class (Python, TypeScript/JavaScript).
    Class,
    /// An interface (TypeScript, Go).
    Interface,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Variant => "variant",
            SymbolKind::Trait => "trait",
            SymbolKind::Const => "const",
            SymbolKind::Static => "static",
            SymbolKind::TypeAlias => "type_alias",
            SymbolKind::Module => "module",
            SymbolKind::Macro => "macro",
            SymbolKind::Union => "union",
            SymbolKind::Field => "field",
            SymbolKind::Impl => "impl",
            SymbolKind::Class => "class",
            SymbolKind::Interface => "interface",
        }
    }

    pub fn parse(s: &str) -> Option<SymbolKind> {
        ALL_KINDS.iter().copied().find(|k| k.as_str() == s)
    }
}

pub const ALL_KINDS: [SymbolKind; 16] = [
    SymbolKind::Function,
    SymbolKind::Method,
    SymbolKind::Struct,
    SymbolKind::Enum,
    SymbolKind::Variant,
    SymbolKind::Trait,
    SymbolKind::Const,
    SymbolKind::Static,
    SymbolKind::TypeAlias,
    SymbolKind::Module,
    SymbolKind::Macro,
    SymbolKind::Union,
    SymbolKind::Field,
    SymbolKind::Impl,
    SymbolKind::Class,
    SymbolKind::Interface,
];

/// How an identifier is used at a reference site.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    /// `foo(..)`, `Type::foo(..)`, `path::foo(..)`
    Call,
    /// `x.foo(..)`
    MethodCall,
    /// `x.foo` (field access, not called)
    Field,
    /// a type position: `let x: Foo`, `impl Foo`, `fn f() -> Foo`, generics, ...
    Type,
    /// any other path segment or identifier expression: `Foo::BAR`, `Foo { .. }`, `FOO`
    Path,
    /// inside a `use` item
    Use,
    /// `foo!(..)`: the macro name of an invocation
    Macro,
    /// an identifier inside a macro invocation's token tree (or a macro_rules! body)
    MacroToken,
    /// the name of an item in `impl Trait for Type`: it implements the trait's item
    /// (the qualifier names the trait)
    Implements,
}

impl ReferenceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceKind::Call => "call",
            ReferenceKind::MethodCall => "method_call",
            ReferenceKind::Field => "field",
            ReferenceKind::Type => "type",
            ReferenceKind::Path => "path",
            ReferenceKind::Use => "use",
            ReferenceKind::Macro => "macro",
            ReferenceKind::MacroToken => "macro_token",
            ReferenceKind::Implements => "implements",
        }
    }

    /// Every kind.
    pub const ALL: [ReferenceKind; 9] = [
        ReferenceKind::Call,
        ReferenceKind::MethodCall,
        ReferenceKind::Field,
        ReferenceKind::Type,
        ReferenceKind::Path,
        ReferenceKind::Use,
        ReferenceKind::Macro,
        ReferenceKind::MacroToken,
        ReferenceKind::Implements,
    ];

    pub fn parse(s: &str) -> Option<ReferenceKind> {
        ReferenceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    /// The bare identifier: `method`.
    pub name: String,
    pub kind: SymbolKind,
    /// `my_crate::module::Type::method`; the first segment is the crate name.
    pub qualified_name: String,
    /// For methods, associated consts/types and fields: the owning type or trait name
    /// (`Type` for `impl Type`, `impl Trait for Type`; `Trait` for items in `trait Trait`).
    pub owner: Option<String>,
    /// The declaration header, one line, whitespace collapsed, without the body:
    /// `pub fn method(&self, x: u32) -> u32`, `pub struct Foo<T>`, `const N: usize`.
    pub signature: String,
    /// Outer doc comments (`///`, `/** */`, `#[doc = ".."]`) joined with `\n`, markers stripped.
    pub docstring: Option<String>,
    /// The item's whole extent, attributes and doc comments excluded.
    pub start_line: u32,
    pub end_line: u32,
    /// Where the name token itself stands.
    pub name_line: u32,
    pub name_column: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The identifier as written at the site.
    pub name: String,
    pub kind: ReferenceKind,
    pub line: u32,
    pub column: u32,
    /// The path written before the name, if any: `Type` in `Type::method`, `a::b` in `a::b::c`.
    pub qualifier: Option<String>,
    /// Qualified name of the innermost enclosing function or type definition
    /// (or module, for a site at module level such as a `use` item).
    pub enclosing_symbol: String,
}

/// How one symbol relates to another, as a graph edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// A function or method calls the target.
    Calls,
    /// A type implements the target trait (`impl Trait for Type`).
    Implements,
    /// A function constructs the target type or variant (`Foo { .. }`, `Foo(..)`).
    Instantiates,
    /// A module re-exports the target (`pub use a::Target`).
    Reexports,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Calls => "calls",
            EdgeKind::Implements => "implements",
            EdgeKind::Instantiates => "instantiates",
            EdgeKind::Reexports => "reexports",
        }
    }
}

/// A graph edge as written: the source symbol is exact (the one the site sits in); the
/// target is a written name, tied to a definition at query time like a reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    /// Qualified name of the caller, the implementing type or the re-exporting module.
    pub from_symbol: String,
    pub to_name: String,
    pub to_qualifier: Option<String>,
    /// The usage kind of the site naming the target.
    pub site_kind: ReferenceKind,
    pub line: u32,
    pub column: u32,
}

impl Edge {
    /// The edge of `kind` from `from_symbol` to what `site` names.
    pub fn at(kind: EdgeKind, from_symbol: &str, site: &Reference) -> Edge {
        Edge {
            kind,
            from_symbol: from_symbol.to_string(),
            to_name: site.name.clone(),
            to_qualifier: site.qualifier.clone(),
            site_kind: site.kind,
            line: site.line,
            column: site.column,
        }
    }
}

/// Everything extracted from one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSymbols {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    /// The parser recovered from syntax errors somewhere in the file; results may be partial.
    pub has_parse_errors: bool,
    /// Edges the extractor saw beyond calls (which are derived from `references`, see
    /// `crate::edges`): implementations, constructions, re-exports.
    #[serde(default)]
    pub edges: Vec<Edge>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_kind_is_stored_as_a_code() {
        for kind in ReferenceKind::ALL {
            assert!(scryer_db::ref_kind_has_code(kind.as_str()), "{kind:?}");
            assert_eq!(ReferenceKind::parse(kind.as_str()), Some(kind));
        }
    }
}
