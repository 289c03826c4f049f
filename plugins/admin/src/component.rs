//! The component glue for the administration router.

use scryer_plugin_sdk::ToolResult;

use crate::{Ctx, ProjectsHost, Status};

wit_bindgen::generate!({
    path: "../../wit/v0.1",
    world: "admin-router",
});

use exports::scryer::router::plugin::Guest;
use scryer::router::projects;
use scryer::router::types::{
    CallContext, CallError, CallResult, PluginDescription, ToolAnnotations, ToolDefinition,
};

struct Admin;

scryer_plugin_sdk::call_error_conversions!(CallError);

fn status(s: projects::ProjectStatus) -> Status {
    Status {
        slug: s.slug,
        root: s.root,
        state: s.state,
        files_done: s.files_done,
        files_total: s.files_total,
        files: s.files,
        parse_failures: s.parse_failures,
        symbols: s.symbols,
        references: s.references,
        indexed_at: s.indexed_at,
        last_index_ms: s.last_index_ms,
        last_error: s.last_error,
        active: s.active,
    }
}

struct WitHost;

impl ProjectsHost for WitHost {
    fn list(&self) -> ToolResult<Vec<Status>> {
        Ok(projects::list_all()
            .map_err(from_wit)?
            .into_iter()
            .map(status)
            .collect())
    }

    fn index_workspace(&self, path: &str, wait_ms: u32) -> ToolResult<Status> {
        projects::index_workspace(path, wait_ms)
            .map(status)
            .map_err(from_wit)
    }

    fn status(&self, project: &str) -> ToolResult<Status> {
        projects::status(project).map(status).map_err(from_wit)
    }
}

impl Guest for Admin {
    fn describe() -> PluginDescription {
        PluginDescription {
            name: crate::PLUGIN_NAME.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            tools: crate::tools()
                .into_iter()
                .map(|t| ToolDefinition {
                    name: t.name.into(),
                    description: t.description.into(),
                    input_schema: t.schema.to_string(),
                    annotations: ToolAnnotations {
                        title: None,
                        read_only: t.read_only,
                        destructive: false,
                        idempotent: t.idempotent,
                        open_world: false,
                    },
                    default_budget_tokens: 1000,
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
            project: context.project.map(|p| p.slug),
        };
        let body = crate::call(&WitHost, &tool, &arguments, &ctx).map_err(to_wit)?;
        Ok(CallResult {
            body,
            truncated: false,
        })
    }
}

export!(Admin);
