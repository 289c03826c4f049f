//! MCP over streamable HTTP (`scryer serve --http ADDR`), served by the process that
//! owns the database (ADR 0008): every HTTP MCP session is a session of its own, with
//! its own context, like a daemon session.
//!
//! In front of rmcp's streamable HTTP service sit two checks, in this order:
//! 1. the `Host` header must name the bound address (a DNS-rebinding defence: a web
//!    page whose name resolves to 127.0.0.1 still sends its own name), else 403;
//! 2. `Authorization: Bearer <token>` must carry the server's token, else 401;
//!
//! then a POSTed message that is not valid JSON-RPC is answered with its JSON-RPC error
//! (HTTP 400, `crate::transport::wire::check`) before rmcp sees it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode, header};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_service::Service as _;

use crate::{McpSession, Server, SessionOptions};

/// The path MCP is served on.
pub const MCP_PATH: &str = "/mcp";

type Body = BoxBody<Bytes, Infallible>;

/// How the HTTP transport serves.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// The bearer token every request must carry.
    pub token: String,
    /// The listener may be reached from other machines (`--allow-remote`).
    pub allow_remote: bool,
    /// The working directory of every HTTP session (the relative-path and cwd tiers of
    /// project resolution), absolute.
    pub cwd: PathBuf,
    /// Options of every HTTP session (`scryer serve` flags).
    pub options: SessionOptions,
}

/// A fresh token: 32 random bytes from the kernel, as hex.
pub fn generate_token() -> Result<String> {
    use std::io::Read as _;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("reading /dev/urandom for the HTTP token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Refuses a listen address that other machines could reach unless `allow_remote`.
pub fn check_bind(addr: &SocketAddr, allow_remote: bool) -> Result<(), String> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(format!(
            "--http {addr}: not a loopback address; other machines could reach it. \
             Use 127.0.0.1:PORT (or [::1]:PORT), or pass --allow-remote to serve on {} deliberately",
            addr.ip()
        ))
    }
}

/// The `Host` values a request may carry: the bound address, and `localhost` with its
/// port when bound to loopback. `None` accepts any host on the bound port (a remote
/// listener on every interface, whose names the server cannot know).
fn allowed_hosts(bound: &SocketAddr, allow_remote: bool) -> Option<Vec<String>> {
    let port = bound.port();
    if bound.ip().is_unspecified() && allow_remote {
        return None;
    }
    let mut hosts = vec![bound.to_string()];
    if bound.ip().is_loopback() {
        hosts.push(format!("localhost:{port}"));
    }
    Some(hosts)
}

/// Whether a `Host` header value is acceptable. Compared case-insensitively; the port
/// must be written (browsers always send it for a non-default port).
fn host_allowed(host: &str, bound: &SocketAddr, allowed: Option<&[String]>) -> bool {
    let host = host.trim().to_ascii_lowercase();
    match allowed {
        Some(list) => list.iter().any(|a| a.eq_ignore_ascii_case(&host)),
        None => host
            .rsplit_once(':')
            .is_some_and(|(_, p)| p == bound.port().to_string()),
    }
}

/// Compares in time independent of where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether the request carries `Authorization: Bearer <token>`.
fn authorized(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| {
            let (scheme, rest) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
        .any(|given| same_secret(given.as_bytes(), token.as_bytes()))
}

/// A POST's body read whole (at most `wire::MAX_MESSAGE_BYTES`) and checked: the request
/// to hand on, or the JSON-RPC error to answer with.
async fn checked_body(req: Request<Incoming>) -> Result<Request<Full<Bytes>>, Response<Body>> {
    let (parts, body) = req.into_parts();
    let limit = crate::transport::wire::MAX_MESSAGE_BYTES as usize;
    let bytes = match http_body_util::Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => return Err(json_error(crate::transport::wire::too_long())),
    };
    match crate::transport::wire::check(&bytes) {
        crate::transport::wire::Verdict::Answer(line) => Err(json_error(line)),
        _ => Ok(Request::from_parts(parts, Full::new(bytes))),
    }
}

/// A JSON-RPC error as an HTTP 400 answer.
fn json_error(line: Vec<u8>) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(line)).boxed());
    *r.status_mut() = StatusCode::BAD_REQUEST;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(text + "\n")).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// The checks before MCP: `Some(response)` refuses the request.
fn refuse(
    req: &Request<Incoming>,
    bound: &SocketAddr,
    allowed: Option<&[String]>,
    token: &str,
) -> Option<Response<Body>> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    let expected = match allowed {
        Some(list) => list.join(" or "),
        None => format!("any host on port {}", bound.port()),
    };
    match host {
        Some(h) if host_allowed(&h, bound, allowed) => {}
        Some(h) => {
            let shown: String = h.chars().take(100).collect();
            return Some(plain(
                StatusCode::FORBIDDEN,
                format!(
                    "Host {shown:?} is not this server's address ({expected}); requests naming \
                     another host are refused as a DNS-rebinding defence"
                ),
            ));
        }
        None => {
            return Some(plain(
                StatusCode::BAD_REQUEST,
                format!("the request has no Host header; expected {expected}"),
            ));
        }
    }
    if !authorized(req.headers(), token) {
        let mut r = plain(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send `Authorization: Bearer <token>` with the token \
             `scryer serve --http` printed at start (or was given with --token / SCRYER_HTTP_TOKEN)"
                .into(),
        );
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static("Bearer realm=\"scryer\""),
        );
        return Some(r);
    }
    if req.uri().path() != MCP_PATH {
        return Some(plain(
            StatusCode::NOT_FOUND,
            format!(
                "nothing at {}: MCP is served at {MCP_PATH}",
                req.uri().path()
            ),
        ));
    }
    None
}

/// How long an HTTP session whose event streams (`GET /mcp`) have all closed may go
/// without opening another before it is taken as gone and closed. Clients reopen a
/// dropped stream within the SSE retry (3 s); a client that exited never does.
const GONE_AFTER: Duration = Duration::from_secs(10);
/// How often sessions are checked for having gone.
const GONE_CHECK: Duration = Duration::from_secs(2);

/// The open event streams of each HTTP session that has opened one, and since when it
/// has none. A session that never opened a stream is not here: rmcp closes it after its
/// keep-alive time without requests.
#[derive(Default)]
struct Streams(std::sync::Mutex<std::collections::HashMap<String, (usize, Option<Instant>)>>);

impl Streams {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, (usize, Option<Instant>)>>
    {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn opened(self: &Arc<Self>, session: &str) -> StreamGuard {
        let mut map = self.lock();
        let entry = map.entry(session.to_string()).or_default();
        entry.0 += 1;
        entry.1 = None;
        StreamGuard {
            streams: self.clone(),
            session: session.to_string(),
        }
    }

    /// Sessions whose streams all closed more than [`GONE_AFTER`] ago (forgotten here).
    fn gone(&self) -> Vec<String> {
        let mut map = self.lock();
        let gone: Vec<String> = map
            .iter()
            .filter(|(_, (open, since))| {
                *open == 0 && since.is_some_and(|t| t.elapsed() >= GONE_AFTER)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            map.remove(id);
        }
        gone
    }
}

/// One open event stream; dropped with the response body when its connection ends.
struct StreamGuard {
    streams: Arc<Streams>,
    session: String,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let mut map = self.streams.lock();
        if let Some(entry) = map.get_mut(&self.session) {
            entry.0 = entry.0.saturating_sub(1);
            if entry.0 == 0 {
                entry.1 = Some(Instant::now());
            }
        }
    }
}

/// `response` with its body holding `guard` until the body is dropped.
fn guarded(response: Response<Body>, guard: StreamGuard) -> Response<Body> {
    response.map(|body| {
        body.map_frame(move |frame| {
            let _held = &guard;
            frame
        })
        .boxed()
    })
}

/// Closes the HTTP sessions whose clients went away ([`Streams::gone`]), until `stop`.
async fn close_gone_sessions(
    manager: Arc<LocalSessionManager>,
    streams: Arc<Streams>,
    stop: CancellationToken,
) {
    use rmcp::transport::streamable_http_server::session::SessionManager as _;
    let mut tick = tokio::time::interval(GONE_CHECK);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = stop.cancelled() => return,
        }
        for id in streams.gone() {
            tracing::debug!(session = %id, "HTTP session's client went away: closing it");
            let _ = manager.close_session(&id.as_str().into()).await;
        }
    }
}

/// Closes its session when the last clone of the session's handler is dropped (rmcp
/// drops it when the HTTP session ends: DELETE, idle timeout, or shutdown).
pub(crate) struct SessionLease {
    server: Server,
    id: u64,
    open: Arc<AtomicU64>,
}

impl Drop for SessionLease {
    fn drop(&mut self) {
        self.server.close_session(self.id);
        self.open.fetch_sub(1, Ordering::Relaxed);
        tracing::debug!(session = self.id, "HTTP session closed");
    }
}

/// Serves MCP over HTTP on `listener` until `stop` is cancelled, counting the HTTP
/// sessions open now in `open`. The session options' `project` must name a registered
/// project (it is resolved once, here).
pub async fn serve(
    server: Server,
    listener: TcpListener,
    config: HttpConfig,
    open: Arc<AtomicU64>,
    stop: CancellationToken,
) -> Result<()> {
    let bound = listener.local_addr()?;
    let active = match &config.options.project {
        None => None,
        Some(sel) => {
            let db = server.core.projects.db();
            match db.project_by_selector(sel).await? {
                Some(p) => Some(p.id),
                None => {
                    let known: Vec<String> =
                        db.projects().await?.into_iter().map(|p| p.slug).collect();
                    anyhow::bail!(crate::unknown_project(sel, &known));
                }
            }
        }
    };
    // Every HTTP session has these options: the profile is resolved, and its plugins
    // loaded, once (ADR 0030).
    let mut config = config;
    config.options.tools = server.prepare_profile(&config.options.tools).await?;
    let allowed = allowed_hosts(&bound, config.allow_remote);
    let mut rmcp_config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_sse_keep_alive(Some(Duration::from_secs(15)));
    rmcp_config = match &allowed {
        Some(list) => rmcp_config.with_allowed_hosts(list.clone()),
        None => rmcp_config.disable_allowed_hosts(),
    };
    rmcp_config.cancellation_token = stop.child_token();
    let factory = {
        let server = server.clone();
        let cwd = config.cwd.clone();
        let options = config.options.clone();
        move || -> std::io::Result<McpSession> {
            let id = server.open_session_resolved(cwd.clone(), options.clone(), active);
            open.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(session = id, "HTTP session opened");
            let lease = Arc::new(SessionLease {
                server: server.clone(),
                id,
                open: open.clone(),
            });
            Ok(server.mcp_session(id).with_lease(lease))
        }
    };
    let manager = Arc::new(LocalSessionManager::default());
    let mcp = StreamableHttpService::new(factory, manager.clone(), rmcp_config);
    let streams = Arc::new(Streams::default());
    tokio::spawn(close_gone_sessions(manager, streams.clone(), stop.clone()));
    let token: Arc<str> = config.token.into();
    let allowed: Arc<Option<Vec<String>>> = Arc::new(allowed);
    tracing::info!(%bound, "MCP over HTTP listening");
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting an HTTP connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => return Ok(()),
        };
        let (mcp, token, allowed, stop, streams) = (
            mcp.clone(),
            token.clone(),
            allowed.clone(),
            stop.clone(),
            streams.clone(),
        );
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let mut mcp = mcp.clone();
                let refused = refuse(&req, &bound, allowed.as_deref(), &token);
                // An event stream of a session: watched so a client that went away is
                // not shown as an open session for minutes.
                let stream_of = (req.method() == http::Method::GET)
                    .then(|| req.headers().get("mcp-session-id"))
                    .flatten()
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let streams = streams.clone();
                async move {
                    if let Some(r) = refused {
                        return Ok::<_, Infallible>(r);
                    }
                    if req.method() == http::Method::POST {
                        return match checked_body(req).await {
                            Ok(req) => mcp.call(req).await,
                            Err(answer) => Ok(answer),
                        };
                    }
                    let response = mcp.call(req).await?;
                    Ok(match stream_of {
                        Some(id) if response.status().is_success() => {
                            guarded(response, streams.opened(&id))
                        }
                        _ => response,
                    })
                }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                r = conn.as_mut() => if let Err(e) = r {
                    tracing::debug!(%peer, error = %e, "HTTP connection ended");
                },
                _ = stop.cancelled() => conn.as_mut().graceful_shutdown(),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_binds_without_allow_remote() {
        assert!(check_bind(&"127.0.0.1:8080".parse().unwrap(), false).is_ok());
        assert!(check_bind(&"[::1]:8080".parse().unwrap(), false).is_ok());
        let e = check_bind(&"0.0.0.0:8080".parse().unwrap(), false).unwrap_err();
        assert!(
            e.contains("--allow-remote") && e.contains("127.0.0.1:PORT"),
            "{e}"
        );
        assert!(check_bind(&"0.0.0.0:8080".parse().unwrap(), true).is_ok());
    }

    #[test]
    fn the_host_must_name_the_bound_address() {
        let bound: SocketAddr = "127.0.0.1:4321".parse().unwrap();
        let allowed = allowed_hosts(&bound, false).unwrap();
        let ok = |h: &str| host_allowed(h, &bound, Some(&allowed));
        assert!(ok("127.0.0.1:4321"));
        assert!(ok("LOCALHOST:4321"));
        assert!(!ok("127.0.0.1:80"), "another port");
        assert!(!ok("127.0.0.1"), "no port");
        assert!(!ok("evil.example:4321"), "a rebinding name");
        // A remote listener on every interface checks the port only.
        let any: SocketAddr = "0.0.0.0:4321".parse().unwrap();
        assert_eq!(allowed_hosts(&any, true), None);
        assert!(host_allowed("build-box.lan:4321", &any, None));
        assert!(!host_allowed("build-box.lan:80", &any, None));
        // A specific remote address is still the only accepted name.
        let lan: SocketAddr = "192.168.1.5:4321".parse().unwrap();
        assert_eq!(
            allowed_hosts(&lan, true),
            Some(vec!["192.168.1.5:4321".to_string()])
        );
    }

    #[test]
    fn the_bearer_token_must_match_exactly() {
        let mut h = HeaderMap::new();
        assert!(!authorized(&h, "s3cret"));
        h.insert(header::AUTHORIZATION, "Bearer s3cret".parse().unwrap());
        assert!(authorized(&h, "s3cret"));
        assert!(!authorized(&h, "s3cre"));
        h.insert(header::AUTHORIZATION, "bearer  s3cret ".parse().unwrap());
        assert!(authorized(&h, "s3cret"), "scheme is case-insensitive");
        h.insert(header::AUTHORIZATION, "Basic s3cret".parse().unwrap());
        assert!(!authorized(&h, "s3cret"));
    }

    #[test]
    fn generated_tokens_are_long_and_differ() {
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
