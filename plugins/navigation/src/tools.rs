//! The navigation router's tool definitions: names, descriptions, schemas, annotations.

use scryer_plugin_sdk::{HostParam, ToolSpec};
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::query(
            "resolve_definition",
            "Where a symbol is defined: qualified name, kind, file, lines, signature, first doc \
                line. Same-named definitions come back `ambiguous`, likeliest first. Falls back to locked \
                dependencies; an unknown name is explained in `notice`.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "name, Type::method, crate::path::name or a.b.name"},
                    "file_path": {"type": "string", "description": "only this file's definitions; with line, the file the symbol is written in"},
                    "line": {"type": "integer", "description": "with file_path: resolve the symbol written on this line (precise data when it covers it)"},
                    "offset": {"type": "integer", "description": "paging: first candidate"}
                },
                "required": ["symbol"]
            }),
            1000,
        ).guide("what is X", "resolve_definition(symbol): where it is defined"),
        ToolSpec::query(
            "find_references",
            "Every usage of a symbol, each with the function or type it sits in. view: callers \
                (one per enclosing function, default), files (counts) or sites (every usage; one tied by its name alone carries `tie`). Same-named \
                definitions are grouped as `ambiguous`. `complete: true` only when exhaustive.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "name, Type::method or path"},
                    "file_path": {"type": "string", "description": "the definition in this file"},
                    "view": {"type": "string", "enum": ["callers", "files", "sites"], "description": "default callers"},
                    "offset": {"type": "integer", "description": "paging: first item"},
                    "limit": {"type": "integer", "description": "items per page (default 100)"}
                },
                "required": ["symbol"]
            }),
            1500,
        ).core()
        .publishing(&[HostParam::Budget, HostParam::Project])
        .guide("who uses X", "find_references(symbol): callers, files or sites"),
        ToolSpec::query(
            "get_file_outline",
            "The definitions in one file as a tree (modules, types with their fields, variants \
                and methods, functions), each with kind, line range, signature and first doc line. Large \
                outlines shed docs, then signatures, then page with `next_offset`.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "relative or absolute"},
                    "offset": {"type": "integer", "description": "paging: first top-level item"}
                },
                "required": ["file_path"]
            }),
            2000,
        ).core()
        .publishing(&[HostParam::Budget, HostParam::Project])
        .guide("read a file", "get_file_outline(file_path): definitions with lines and signatures"),
        ToolSpec::query(
            "get_enclosing_scope",
            "The innermost definition around a line (function, method, type, module): kind, range, \
                signature, parents and its source, cut to the budget with `snippet_remaining`. A line \
                outside every definition gets its module and the definitions around it.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "relative or absolute"},
                    "line": {"type": "integer", "description": "1-based"}
                },
                "required": ["file_path", "line"]
            }),
            600,
        ).core()
        .guide("read a file", "get_enclosing_scope(file_path, line): the scope around a line"),
        ToolSpec::query(
            "get_type_contract",
            "A type's fields or variants, methods (inherent and from trait impls) and implemented \
                traits; for a trait or interface, its required and provided methods and implementors. \
                `symbol` as in resolve_definition. Long lists are cut evenly, with `next_offset`.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "type or trait: name or path"},
                    "file_path": {"type": "string", "description": "only the type in this file"},
                    "offset": {"type": "integer", "description": "paging: skip this many per list"}
                },
                "required": ["symbol"]
            }),
            1000,
        ).guide("what is X", "get_type_contract(symbol): a type's fields, methods, traits"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Descriptions stay short, and schemas stay in the portable subset every client takes.
    #[test]
    fn definitions_are_small_and_portable() {
        let problems = scryer_plugin_sdk::host::definition_problems(&tools(), 1000);
        assert!(problems.is_empty(), "{problems:#?}");
    }
}
