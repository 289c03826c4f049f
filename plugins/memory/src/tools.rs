//! The memory router's tool definitions.

use scryer_decisions::STATUSES;
use scryer_plugin_sdk::{HostParam, Tier, ToolSpec};
use serde_json::json;

pub fn tools() -> Vec<ToolSpec> {
    vec![
        // The memory tools read documents, not the code index.
        ToolSpec {
            reads_index: false,
            ..ToolSpec::query(
                "query_adrs",
                "Search the project's decision records, learnings and plans (docs/adr, docs/learnings, \
                docs/plans). Ranked by words (the title weighs most) and by affected_paths covering a \
                path in the query or `path`; no query: all, newest first.",
                json!({
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "words and/or paths"},
                        "path": {"type": "string", "description": "file or directory to rank by coverage"},
                        "status": {"type": "string", "enum": STATUSES},
                        "limit": {"type": "integer", "description": "default 10, max 50"},
                        "offset": {"type": "integer", "description": "0-based"}
                    }
                }),
                1000,
            ).guide("decisions", "query_adrs(query or path): ADRs, learnings, plans")
        },
        ToolSpec {
            name: "record_adr",
            description: "Record an architecture decision as docs/adr/NNNN-slug.md (the next number) with \
                YAML frontmatter, and store it. affected_paths: globs of the code it governs \
                (`src/net/**`; a bare `src/net` covers its subtree); query_adrs and inspect_symbol \
                surface it for those files.",
            schema: json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string", "description": "one line"},
                    "decision": {"type": "string", "description": "Markdown"},
                    "context": {"type": "string", "description": "Markdown"},
                    "consequences": {"type": "string", "description": "Markdown"},
                    "status": {"type": "string", "enum": STATUSES, "description": "default proposed"},
                    "affected_paths": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["title", "decision"]
            }),
            read_only: false,
            destructive: false,
            idempotent: false,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[HostParam::Project],
            guide: Some(("decisions", "record_adr")),
        },
        ToolSpec {
            name: "delete_adr",
            description: "Delete one decision record (its docs/adr file and stored row), named by exactly \
                one of adr_number, file_path (a .md in docs/adr) or title.",
            schema: json!({
                "type": "object",
                "properties": {
                    "adr_number": {"type": "integer"},
                    "file_path": {"type": "string", "description": "e.g. docs/adr/0003-x.md"},
                    "title": {"type": "string", "description": "exact, case-insensitive"}
                }
            }),
            read_only: false,
            destructive: true,
            idempotent: true,
            default_budget: 1000,
            budget_per_item: None,
            reads_index: false,
            tier: Tier::Extended,
            host_params: &[HostParam::Project],
            guide: Some(("decisions", "delete_adr")),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_portable_and_descriptions_short() {
        let problems = scryer_plugin_sdk::host::definition_problems(&tools(), 1000);
        assert!(problems.is_empty(), "{problems:#?}");
        let total: usize = tools()
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.schema.to_string().len())
            .sum();
        assert!(
            total < 2600,
            "the three definitions take {total} characters"
        );
    }
}
