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

use tokio::sync::watch;

use crate::call::contract::publish_schema;
use crate::call::instructions::{ARRIVING, server_instructions};
use crate::{Registry, Server, SessionOptions};

/// One MCP session's handler.
#[derive(Clone)]
pub struct McpSession {
    server: Server,
    session: u64,
    /// The client's roots must be (re)read before the next call: set at start and by
    /// `notifications/roots/list_changed`.
    roots_stale: Arc<AtomicBool>,
    /// Dropped with the last clone of the handler (when the session ends), which ends
    /// the task telling the client about tool list changes.
    alive: Arc<watch::Sender<()>>,
    /// Closes the session with the last clone of the handler (HTTP sessions, which end
    /// when rmcp drops their handler).
    _lease: Option<Arc<crate::transport::http::SessionLease>>,
    /// The receipt order of this session's calls (filled by [`McpSession::ordered`]).
    order: Arc<crate::transport::order::SessionOrder>,
}

/// How long a call waits for the client to answer `roots/list`.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

/// What every request answers when the routers did not load at start.
fn routers_failed(why: &str) -> String {
    format!(
        "scryer's routers did not load, so it serves no tools: {why}; `scryer doctor` checks them, and rebuilding or reinstalling scryer fixes a broken build"
    )
}

/// The tools a session with `options` lists from `registry`.
fn session_tools(registry: &Registry, options: &SessionOptions) -> Vec<Tool> {
    registry
        .tools()
        .filter_map(|(plugin, t)| Some((plugin, t, plugin.traits_of(&t.name)?)))
        .filter(|(plugin, _, traits)| options.tools.lists(plugin.name(), traits))
        .map(|(_, t, traits)| {
            let schema: serde_json::Value =
                serde_json::from_str(&t.input_schema).unwrap_or_default();
            let published = match publish_schema(traits, &schema) {
                serde_json::Value::Object(o) => o,
                _ => JsonObject::new(),
            };
            let mut tool = Tool::new(t.name.clone(), t.description.clone(), Arc::new(published));
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
            if options.always_load.marks(traits) {
                let mut meta = JsonObject::new();
                meta.insert("anthropic/alwaysLoad".into(), serde_json::Value::Bool(true));
                tool.meta = Some(MetaObject(meta));
            }
            tool
        })
        .collect()
}

/// Sends `notifications/tools/list_changed` each time a swapped-in registry changes
/// what this session lists, until the session ends.
async fn announce_tool_changes(
    server: Server,
    session: u64,
    peer: Peer<RoleServer>,
    mut ended: watch::Receiver<()>,
) {
    let options = server.core.session(session).options;
    let mut generation = server.live.subscribe();
    let mut listed = session_tools(&server.live.load(), &options);
    loop {
        tokio::select! {
            changed = generation.changed() => if changed.is_err() { return },
            _ = ended.changed() => return,
        }
        let now = session_tools(&server.live.load(), &options);
        if now == listed {
            continue;
        }
        listed = now;
        if let Err(e) = peer.notify_tool_list_changed().await {
            tracing::debug!(session, error = %e, "tools/list_changed not delivered");
            return;
        }
        tracing::info!(session, "sent notifications/tools/list_changed");
    }
}

impl McpSession {
    pub(crate) fn new(server: Server, session: u64) -> McpSession {
        McpSession {
            server,
            session,
            roots_stale: Arc::new(AtomicBool::new(true)),
            alive: Arc::new(watch::channel(()).0),
            _lease: None,
            order: Arc::default(),
        }
    }

    /// `reader` (the session's incoming bytes), numbering its calls on the way so a
    /// call waits for project changes received before it (`order.rs`).
    pub fn ordered<R>(&self, reader: R) -> crate::transport::order::Tap<R> {
        let server = self.server.clone();
        crate::transport::order::Tap::new(
            reader,
            self.order.clone(),
            Box::new(move |tool| {
                server
                    .current_registry()
                    .tool(tool)
                    .is_some_and(|(plugin, _)| {
                        plugin
                            .grants
                            .contains(scryer_runtime::Capability::ProjectAdmin)
                    })
            }),
        )
    }

    /// This handler, closing its session when its last clone is dropped.
    pub(crate) fn with_lease(
        mut self,
        lease: Arc<crate::transport::http::SessionLease>,
    ) -> McpSession {
        self._lease = Some(lease);
        self
    }

    /// The tools this session lists now.
    fn tools(&self) -> Vec<Tool> {
        let options = self.server.core.session(self.session).options;
        session_tools(&self.server.live.load(), &options)
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
                    .filter_map(|r| crate::call::session::root_uri_path(&r.uri))
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
        let tools = self.tools();
        let registry = self.server.live.load();
        let traits: Vec<&scryer_runtime::wit::ToolTraits> = tools
            .iter()
            .filter_map(|t| {
                registry
                    .tool(&t.name)
                    .and_then(|(p, _)| p.traits_of(&t.name))
            })
            .collect();
        // While the routers are compiled for this engine (ADR 0015) no traits are known.
        let instructions = if self.server.live.is_ready() {
            server_instructions(&traits)
        } else {
            ARRIVING.to_string()
        };
        // Installed plugins are swapped while the server runs (plugin_watch.rs).
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("scryer", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // Only when the routers are compiled at start (their built-in code did not fit
        // this engine) is there anything to wait for.
        self.server
            .live
            .ready()
            .await
            .map_err(|why| McpError::internal_error(routers_failed(&why), None))?;
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Project changes received before this call are seen by it.
        let _ticket = self
            .order
            .begin(
                &crate::transport::order::request_id_key(&context.id),
                self.server.core.first_query_wait,
            )
            .await;
        self.refresh_roots(&context.peer).await;
        if let Err(why) = self.server.live.ready().await {
            return Ok(
                CallToolResult::error(vec![ContentBlock::text(routers_failed(&why))]).into(),
            );
        }
        // A tool not served yet may be an installed plugin's, still loading.
        if self.server.current_registry().tool(&request.name).is_none() {
            self.server.live.installed_loaded().await;
        }
        // The call runs on the registry serving now, to the end, even if another is
        // swapped in meanwhile.
        let outcome = self
            .server
            .current()
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

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(announce_tool_changes(
            self.server.clone(),
            self.session,
            context.peer,
            self.alive.subscribe(),
        ));
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.roots_stale.store(true, Ordering::Release);
    }
}
