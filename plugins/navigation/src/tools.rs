//! The navigation router's tool definitions: names, descriptions, schemas, annotations.

use scryer_plugin_sdk::ToolSpec;
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec::query(
            "find_references",
            "Every usage of a symbol in the project, each with the function or type it sits in. \
                `symbol` is a name, `Type::method` or a qualified path. view: callers (one entry per \
                enclosing function, default), files (counts per file) or sites (every usage with its line). \
                Same-named definitions come back grouped as `ambiguous`; an unknown name is said to be \
                unknown. `complete: true` only when the list is exhaustive over the indexed files.",
            json!({
                "type": "object",
                "properties": {
                    "symbol": {"type": "string", "description": "name, Type::method or crate::path::name"},
                    "file_path": {"type": "string", "description": "narrow to the definition in this file"},
                    "view": {"type": "string", "enum": ["callers", "files", "sites"], "description": "default callers"},
                    "offset": {"type": "integer", "description": "first item of the page (0-based)"},
                    "limit": {"type": "integer", "description": "items per page (default 100)"},
                    "max_tokens": {"type": "integer", "description": "answer budget (default 1500)"},
                    "no_truncate": {"type": "boolean", "description": "return everything, ignoring the budget"}
                },
                "required": ["symbol"]
            }),
            1500,
        ),
        ToolSpec::query(
            "get_file_outline",
            "The definitions in one file as a tree (modules, types with their fields, variants \
                and methods, functions), each with kind, line range, signature and first doc line. Large \
                outlines shed docs, then signatures, then page with `next_offset`.",
            json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "relative to the project root, or absolute"},
                    "offset": {"type": "integer", "description": "first top-level item (0-based)"},
                    "max_tokens": {"type": "integer", "description": "answer budget (default 2000)"},
                    "no_truncate": {"type": "boolean", "description": "return everything, ignoring the budget"}
                },
                "required": ["file_path"]
            }),
            2000,
        ),
    ]
}
