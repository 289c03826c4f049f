//! The MCP face of a session (rmcp `ServerHandler`): tools/list from the loaded routers,
//! tools/call through `dispatch`. The only module that knows MCP protocol types.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};

use crate::Server;
use crate::contract::publish_schema;
use crate::instructions::server_instructions;

/// One MCP session's handler.
#[derive(Clone)]
pub struct McpSession {
    server: Server,
    session: u64,
    tools: Arc<Vec<Tool>>,
}

impl McpSession {
    pub(crate) fn new(server: Server, session: u64) -> McpSession {
        let options = server.core.session(session).options;
        let tools = server
            .registry
            .tools()
            .filter(|(plugin, t)| options.tools.lists(plugin.name(), &t.name))
            .map(|(_, t)| {
                let schema: serde_json::Value =
                    serde_json::from_str(&t.input_schema).unwrap_or_default();
                let published = match publish_schema(&t.name, &schema) {
                    serde_json::Value::Object(o) => o,
                    _ => JsonObject::new(),
                };
                let mut tool =
                    Tool::new(t.name.clone(), t.description.clone(), Arc::new(published));
                // MCP reads destructive and idempotent only when a tool is not read-only;
                // leaving them out of read-only tools keeps the definitions small.
                let writes = !t.annotations.read_only;
                tool.annotations = Some(ToolAnnotations::from_raw(
                    t.annotations.title.clone(),
                    Some(t.annotations.read_only),
                    writes.then_some(t.annotations.destructive),
                    writes.then_some(t.annotations.idempotent),
                    Some(t.annotations.open_world),
                ));
                if options.always_load.marks(&t.name) {
                    let mut meta = JsonObject::new();
                    meta.insert("anthropic/alwaysLoad".into(), serde_json::Value::Bool(true));
                    tool.meta = Some(MetaObject(meta));
                }
                tool
            })
            .collect();
        McpSession {
            server,
            session,
            tools: Arc::new(tools),
        }
    }

    pub fn session_id(&self) -> u64 {
        self.session
    }
}

impl ServerHandler for McpSession {
    fn get_info(&self) -> ServerConfig {
        let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("scryer", env!("CARGO_PKG_VERSION")))
            .with_instructions(server_instructions(&names))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let outcome = self
            .server
            .call_tool(self.session, &request.name, request.arguments)
            .await;
        let content = vec![ContentBlock::text(outcome.text)];
        Ok(if outcome.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}
