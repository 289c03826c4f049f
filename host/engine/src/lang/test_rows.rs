//! Test helpers shared by the language modules: extraction results as plain rows, with
//! qualified names shown relative to the fixture's module, so expectations stay short.

use crate::model::{FileSymbols, ReferenceKind, SymbolKind};

/// (name, kind, qualified name after the module, owner, (start, end, name line, name column))
pub(crate) type DefRow<'a> = (
    &'a str,
    SymbolKind,
    &'a str,
    Option<&'a str>,
    (u32, u32, u32, u32),
);
/// (name, kind, line, column, qualifier, enclosing symbol after the module)
pub(crate) type RefRow<'a> = (&'a str, ReferenceKind, u32, u32, Option<&'a str>, &'a str);

pub(crate) fn def_rows<'a>(f: &'a FileSymbols, module: &str) -> Vec<DefRow<'a>> {
    f.definitions
        .iter()
        .map(|d| {
            (
                d.name.as_str(),
                d.kind,
                d.qualified_name
                    .strip_prefix(module)
                    .unwrap_or(&d.qualified_name),
                d.owner.as_deref(),
                (d.start_line, d.end_line, d.name_line, d.name_column),
            )
        })
        .collect()
}

pub(crate) fn ref_rows<'a>(f: &'a FileSymbols, module: &str) -> Vec<RefRow<'a>> {
    f.references
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.kind,
                r.line,
                r.column,
                r.qualifier.as_deref(),
                r.enclosing_symbol
                    .strip_prefix(module)
                    .unwrap_or(&r.enclosing_symbol),
            )
        })
        .collect()
}
