//! The MCP face of a session (rmcp `ServerHandler`): tools/list from the loaded routers,
//! tools/call through `dispatch`. The only module that knows MCP protocol types.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, MetaObject, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleServer};

use crate::Server;
use crate::contract::publish_schema;
use crate::instructions::server_instructions;

/// One MCP session's handler.
#[derive(Clone)]
pub struct McpSession {
    server: Server,
    session: u64,
    tools: Arc<Vec<Tool>>,
    /// The client's roots must be (re)read before the next call: set at start and by
    /// `notifications/roots/list_changed`.
    roots_stale: Arc<AtomicBool>,
    /// Closes the session with the last clone of the handler (HTTP sessions, which end
    /// when rmcp drops their handler).
    _lease: Option<Arc<crate::http::SessionLease>>,
}

/// How long a call waits for the client to answer `roots/list`.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

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
            roots_stale: Arc::new(AtomicBool::new(true)),
            _lease: None,
        }
    }

    /// This handler, closing its session when its last clone is dropped.
    pub(crate) fn with_lease(mut self, lease: Arc<crate::http::SessionLease>) -> McpSession {
        self._lease = Some(lease);
        self
    }

    /// Reads the client's roots into the session when they are stale and the client
    /// offers them. Done on the call path, so the call that follows already sees them.
    /// (rmcp marks roots deprecated by SEP-2577; clients in use still send them.)
    #[allow(deprecated)]
    async fn refresh_roots(&self, peer: &Peer<RoleServer>) {
        let offers_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if !offers_roots || !self.roots_stale.swap(false, Ordering::AcqRel) {
            return;
        }
        match tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await {
            Ok(Ok(listed)) => {
                let roots: Vec<_> = listed
                    .roots
                    .iter()
                    .filter_map(|r| crate::session::root_uri_path(&r.uri))
                    .collect();
                tracing::debug!(session = self.session, roots = ?roots, "client roots");
                self.server
                    .core
                    .update_session(self.session, |s| s.roots = roots);
            }
            // A client that offers roots but cannot list them keeps the cwd tier; it is
            // asked again after its next list_changed notification.
            Ok(Err(e)) => {
                tracing::info!(session = self.session, error = %e, "roots/list failed")
            }
            Err(_) => tracing::info!(
                session = self.session,
                "roots/list unanswered after {} s",
                ROOTS_WAIT.as_secs()
            ),
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
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.refresh_roots(&context.peer).await;
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

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_stale.store(true, Ordering::Release);
    }
}
