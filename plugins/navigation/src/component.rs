//! The component glue: WIT exports call the logic, the logic's host trait calls the WIT
//! imports.

use scryer_plugin_sdk::ToolResult;

use crate::host::{Ctx, Facts, Format, IndexHost, Site, Sym};

wit_bindgen::generate!({
    path: "../../wit/v0.1",
    world: "router",
});

use exports::scryer::router::plugin::Guest;
use scryer::router::types::{
    CallContext, CallError, CallResult, OutputFormat, PluginDescription, ToolAnnotations,
    ToolDefinition,
};
use scryer::router::{index, tokens};

struct Navigation;

scryer_plugin_sdk::call_error_conversions!(CallError);

fn sym(s: index::Symbol) -> Sym {
    Sym {
        name: s.name,
        kind: s.kind,
        qualified_name: s.qualified_name,
        owner: s.owner,
        file_path: s.file_path,
        start_line: s.start_line,
        end_line: s.end_line,
        signature: s.signature,
        docstring: s.docstring,
    }
}

struct WitHost;

impl IndexHost for WitHost {
    fn symbols_by_name(&self, name: &str) -> ToolResult<Vec<Sym>> {
        Ok(index::symbols_by_name(name)
            .map_err(from_wit)?
            .into_iter()
            .map(sym)
            .collect())
    }

    fn references_to_name(&self, name: &str, with_line_text: bool) -> ToolResult<Vec<Site>> {
        Ok(index::references_to_name(name, with_line_text)
            .map_err(from_wit)?
            .into_iter()
            .map(|r| Site {
                file_path: r.file_path,
                line: r.line,
                column: r.column,
                kind: r.kind,
                qualifier: r.qualifier,
                enclosing_symbol: r.enclosing_symbol,
                line_text: r.line_text,
            })
            .collect())
    }

    fn file_symbols(&self, file_path: &str) -> ToolResult<Vec<Sym>> {
        Ok(index::file_symbols(file_path)
            .map_err(from_wit)?
            .into_iter()
            .map(sym)
            .collect())
    }

    fn file_has_parse_errors(&self, file_path: &str) -> ToolResult<bool> {
        index::file_has_parse_errors(file_path).map_err(from_wit)
    }

    fn index_facts(&self) -> ToolResult<Facts> {
        let f = index::facts().map_err(from_wit)?;
        Ok(Facts {
            files: f.files,
            parse_failures: f.parse_failures,
            symbols: f.symbols,
            references: f.references,
            indexed_at: f.indexed_at,
        })
    }

    fn count_tokens(&self, text: &str) -> u32 {
        tokens::count(text)
    }
}

impl Guest for Navigation {
    fn describe() -> PluginDescription {
        PluginDescription {
            name: crate::PLUGIN_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            tools: crate::tools::tools()
                .into_iter()
                .map(|t| ToolDefinition {
                    name: t.name.into(),
                    description: t.description.into(),
                    input_schema: t.schema.to_string(),
                    annotations: ToolAnnotations {
                        title: None,
                        read_only: true,
                        destructive: false,
                        idempotent: true,
                        open_world: false,
                    },
                    default_budget_tokens: t.default_budget,
                })
                .collect(),
        }
    }

    fn call(
        tool: String,
        arguments: String,
        context: CallContext,
    ) -> Result<CallResult, CallError> {
        let ctx = Ctx {
            budget: context.budget_tokens,
            format: match context.format {
                OutputFormat::Json => Format::Json,
                OutputFormat::Text => Format::Text,
            },
            project: context.project.map(|p| p.slug),
        };
        let body = crate::call(&WitHost, &tool, &arguments, &ctx).map_err(to_wit)?;
        let truncated = body.contains("\"next_offset\"") || body.contains("TRUNCATED");
        Ok(CallResult { body, truncated })
    }
}

export!(Navigation);
