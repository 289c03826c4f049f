//! `scryer serve`: MCP over stdio. By default a thin client of the database's daemon
//! (started on demand); `--no-daemon` or `SCRYER_DAEMON=off` serves in this process.
//!
//! The client relays MCP lines between stdin/stdout and the daemon's socket. It keeps
//! the client's `initialize` request and `initialized` notification: if the daemon dies,
//! the next message starts a new daemon, replays both (swallowing the second initialize
//! response), and goes on, so the agent's session survives. Requests that were in
//! flight when the daemon died are answered with an error saying to call again.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use scryer_server::daemon::{self, Connected, Hello, Op, RunPaths, WireOptions};
use scryer_server::wire;
use scryer_server::{Server, SessionOptions};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;

/// How long a client waits for a daemon it started to accept connections.
const START_WAIT: Duration = Duration::from_secs(120);
/// How long a client waits for the handshake reply (the daemon loads its routers first).
const REPLY_WAIT: Duration = Duration::from_secs(300);
/// A daemon log larger than this is moved aside before a new daemon appends to it.
const LOG_ROTATE_BYTES: u64 = 1 << 20;

/// Whether `serve` runs in this process: `SCRYER_DAEMON=off` (or `0`, `false`, `no`).
pub fn daemon_disabled_by_env() -> bool {
    std::env::var("SCRYER_DAEMON").is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    })
}

/// Standard input, line by line, each line checked (`scryer_server::wire`): a line
/// that is not valid JSON-RPC comes as `Err(answer)`, the error to send back at once.
fn stdin_lines() -> mpsc::Receiver<Result<Vec<u8>, Vec<u8>>> {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        loop {
            let item = match wire::read_message(&mut stdin).await {
                Ok(None) | Err(_) => break,
                Ok(Some(wire::Line::TooLong)) => Err(wire::too_long()),
                Ok(Some(wire::Line::Message(mut line))) => match wire::check(&line) {
                    wire::Verdict::Skip => continue,
                    wire::Verdict::Answer(a) => Err(a),
                    wire::Verdict::Forward => {
                        if !line.ends_with(b"\n") {
                            line.push(b'\n');
                        }
                        Ok(line)
                    }
                },
            };
            if tx.send(item).await.is_err() {
                break;
            }
        }
    });
    rx
}

/// In-process serving: this process opens the database (the pre-daemon behaviour).
pub async fn serve_in_process(server: Server, options: SessionOptions) -> Result<()> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let session = server.open_session(cwd, options).await?;
    let handler = server.mcp_session(session);
    // Malformed lines are answered before rmcp sees them; the rest keep their order.
    let (reader, writer) = wire::guarded(tokio::io::stdin(), tokio::io::stdout());
    let reader = handler.ordered(reader);
    let running = handler
        .serve((reader, writer))
        .await
        .context("starting the MCP session")?;
    let _ = running.waiting().await;
    server.close_session(session);
    server.seal_at_exit().await;
    Ok(())
}

/// `scryer serve`: through the daemon unless told otherwise (or given extra plugins,
/// which a daemon shared with other sessions does not load).
pub async fn run(
    cli: &crate::Cli,
    options: SessionOptions,
    wire: WireOptions,
    plugins: &[PathBuf],
    no_daemon: bool,
) -> Result<()> {
    if no_daemon || daemon_disabled_by_env() || !plugins.is_empty() {
        let server = crate::build_server(cli, plugins, true).await?;
        return serve_in_process(server, options).await;
    }
    let db = cli.db.clone().unwrap_or_else(crate::default_db);
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let paths = RunPaths::for_db(&db)?;
    // The daemon runs from `/`, so every path it is given is absolute.
    let mut daemon_args: Vec<OsString> = vec!["--db".into(), paths.db.clone().into()];
    if cli.no_compile_cache {
        daemon_args.push("--no-compile-cache".into());
    } else if let Some(cache) = &cli.compile_cache {
        daemon_args.push("--compile-cache".into());
        daemon_args.push(std::path::absolute(cache)?.into());
    }
    // The daemon outlives this client and runs from `/`: it gets the plugin home as an
    // absolute flag, not only through an inherited environment variable.
    if let Some(dir) = &cli.config_dir {
        daemon_args.push("--config-dir".into());
        daemon_args.push(std::path::absolute(dir)?.into());
    }
    serve_via_daemon(DaemonClient {
        paths,
        daemon_args,
        options: wire,
    })
    .await
}

/// `scryer serve --http` flags.
pub struct HttpArgs {
    pub addr: std::net::SocketAddr,
    pub token: Option<String>,
    pub allow_remote: bool,
}

/// Shortest `--token` accepted: a guessable token would defeat the point of one.
const MIN_TOKEN_LEN: usize = 16;

/// `scryer serve --http ADDR`: MCP over streamable HTTP. This process becomes the
/// database's daemon in the foreground (ADR 0008): it owns the database, serves HTTP
/// sessions and the stdio sessions of `scryer serve` alike, and never exits for want
/// of sessions.
pub async fn run_http(
    cli: &crate::Cli,
    options: SessionOptions,
    http: HttpArgs,
    plugins: &[PathBuf],
) -> Result<()> {
    scryer_server::http::check_bind(&http.addr, http.allow_remote).map_err(anyhow::Error::msg)?;
    let (token, generated) = match http.token {
        Some(t) if t.trim().len() >= MIN_TOKEN_LEN && !t.trim().contains(char::is_whitespace) => {
            (t.trim().to_string(), false)
        }
        Some(_) => bail!(
            "--token / SCRYER_HTTP_TOKEN: accepted is a secret of at least {MIN_TOKEN_LEN} characters \
             without spaces (or leave it out to have one generated)"
        ),
        None => (scryer_server::http::generate_token()?, true),
    };
    let db = cli.db.clone().unwrap_or_else(crate::default_db);
    if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let paths = RunPaths::for_db(&db)?;
    if let Some(pid) = daemon::lock_holder_alive(&paths) {
        bail!(
            "a scryer daemon (pid {pid}) already owns {}; `scryer serve --http` owns the database \
             itself and serves the stdio sessions too: stop that daemon with `scryer daemon stop`, \
             then start this again",
            paths.db.display()
        );
    }
    let listener = tokio::net::TcpListener::bind(http.addr)
        .await
        .with_context(|| format!("--http {}: binding", http.addr))?;
    let url = format!(
        "http://{}{}",
        listener.local_addr()?,
        scryer_server::http::MCP_PATH
    );
    eprintln!("scryer: MCP over streamable HTTP at {url}");
    if generated {
        eprintln!(
            "scryer: send `Authorization: Bearer {token}` (a new token each start; fix one with --token or SCRYER_HTTP_TOKEN)"
        );
    } else {
        eprintln!("scryer: send `Authorization: Bearer <the token given>`");
    }
    let config = scryer_server::http::HttpConfig {
        token,
        allow_remote: http.allow_remote,
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
        options,
    };
    let exit = daemon::run_with_http(
        paths,
        None,
        Some((listener, config)),
        crate::build_server(cli, plugins, true),
    )
    .await?;
    eprintln!("scryer: HTTP server exiting ({exit:?})");
    // As `scryer daemon run`: index runs and the watcher may still hold blocking threads.
    std::process::exit(0);
}

/// How to reach (or start) the daemon of one database.
pub struct DaemonClient {
    pub paths: RunPaths,
    /// Global flags for `scryer … daemon run` (database, compile cache).
    pub daemon_args: Vec<OsString>,
    pub options: WireOptions,
}

impl DaemonClient {
    fn hello(&self) -> Hello {
        Hello {
            scryer: daemon::PROTOCOL,
            op: Op::Session,
            build: Some(daemon::build_id()),
            cwd: Some(std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))),
            options: self.options.clone(),
            ..Hello::default()
        }
    }

    /// A session on the running daemon, starting one if none runs (or if the running
    /// one is another build).
    pub async fn connect(&self) -> Result<Connected> {
        let mut replaced_stale = false;
        let mut spawned: Option<tokio::process::Child> = None;
        let deadline = Instant::now() + START_WAIT;
        loop {
            match UnixStream::connect(&self.paths.socket).await {
                Ok(stream) => {
                    let connected =
                        tokio::time::timeout(REPLY_WAIT, daemon::handshake(stream, &self.hello()))
                            .await
                            .with_context(|| {
                                format!(
                                    "the daemon did not answer within {} s",
                                    REPLY_WAIT.as_secs()
                                )
                            })?
                            .with_context(|| self.log_hint())?;
                    if connected.reply.ok {
                        return Ok(connected);
                    }
                    if connected.reply.build_mismatch && !replaced_stale {
                        // A daemon of another build holds the database: ask it to go,
                        // then start ours.
                        replaced_stale = true;
                        drop(connected);
                        self.stop_and_wait().await?;
                        continue;
                    }
                    bail!(
                        "{}",
                        connected
                            .reply
                            .error
                            .unwrap_or_else(|| "the daemon refused the session".into())
                    );
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                    ) =>
                {
                    if spawned.is_none() {
                        spawned = Some(self.spawn()?);
                    } else if let Some(child) = spawned.as_mut()
                        && let Ok(Some(status)) = child.try_wait()
                        && daemon::lock_holder_alive(&self.paths).is_none()
                    {
                        // Ours exited and nobody else holds the database's daemon lock.
                        bail!(
                            "the scryer daemon exited ({status}) before accepting connections; {}",
                            self.log_hint()
                        );
                    }
                    if Instant::now() > deadline {
                        bail!(
                            "no scryer daemon accepted connections on {} within {} s; {}",
                            self.paths.socket.display(),
                            START_WAIT.as_secs(),
                            self.log_hint()
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("connecting to {}", self.paths.socket.display()));
                }
            }
        }
    }

    fn log_hint(&self) -> String {
        let tail = std::fs::read_to_string(&self.paths.log)
            .ok()
            .map(|t| {
                let lines: Vec<&str> = t.lines().rev().take(5).collect();
                lines.into_iter().rev().collect::<Vec<_>>().join("\n")
            })
            .filter(|t| !t.is_empty());
        match tail {
            Some(t) => format!("daemon log {}:\n{t}", self.paths.log.display()),
            None => format!("see the daemon log {}", self.paths.log.display()),
        }
    }

    /// Starts `scryer daemon run` detached: its own process group, stdin and stdout
    /// closed, stderr appended to the log in the run directory.
    fn spawn(&self) -> Result<tokio::process::Child> {
        if std::fs::metadata(&self.paths.log).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
            let _ = std::fs::rename(&self.paths.log, self.paths.log.with_extension("log.1"));
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.paths.log)
            .with_context(|| format!("opening {}", self.paths.log.display()))?;
        let exe = std::env::current_exe().context("locating the scryer binary")?;
        let mut cmd = tokio::process::Command::new(exe);
        cmd.args(&self.daemon_args)
            .args(["daemon", "run"])
            // Not the client's cwd: the daemon must not keep a directory busy that the
            // session that started it may remove.
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            // Signals aimed at the agent's process group (Ctrl-C) must not reach the
            // daemon other sessions share.
            .process_group(0)
            .kill_on_drop(false);
        cmd.spawn().context("starting `scryer daemon run`")
    }

    /// Asks the running daemon to stop and waits until its lock is free.
    async fn stop_and_wait(&self) -> Result<()> {
        let _ = daemon::request(&self.paths, Op::Stop).await?;
        let until = Instant::now() + Duration::from_secs(30);
        while daemon::lock_holder_alive(&self.paths).is_some() {
            if Instant::now() > until {
                bail!(
                    "the daemon of another scryer build did not stop within 30 s; `scryer daemon stop`"
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }
}

/// What one MCP line is, as far as relaying needs to know.
#[derive(Debug, PartialEq, Eq)]
enum Kind {
    /// `initialize` request (its id, as JSON text).
    Initialize(String),
    Initialized,
    /// Any other request: a response is owed.
    Request(String),
    /// A response (or error) for this id.
    Response(String),
    Other,
}

/// The two members of a JSON-RPC line the relay looks at; the rest (an answer's
/// `result`, a call's `params`) is skipped, not built into a tree. Building every daemon
/// line as a `Value` was most of the relay's CPU under load (docs/learnings/scale.md,
/// stop 45).
#[derive(serde::Deserialize)]
struct Head {
    method: Option<String>,
    id: Option<Value>,
}

fn classify(line: &[u8]) -> Kind {
    // An object only: serde would also read an array positionally into `Head`.
    if line.trim_ascii_start().first() != Some(&b'{') {
        return Kind::Other;
    }
    let Ok(head) = serde_json::from_slice::<Head>(line) else {
        return Kind::Other;
    };
    // `"id": null` reads as no id.
    let id = head.id.map(|i| i.to_string());
    match (head.method.as_deref(), id) {
        (Some("initialize"), Some(id)) => Kind::Initialize(id),
        (Some("notifications/initialized"), None) => Kind::Initialized,
        (Some(_), Some(id)) => Kind::Request(id),
        (None, Some(id)) => Kind::Response(id),
        _ => Kind::Other,
    }
}

/// The relay's memory of the client's session.
#[derive(Default)]
struct Relay {
    initialize: Option<Vec<u8>>,
    initialized: Option<Vec<u8>>,
    /// Ids of client requests the daemon has not answered yet.
    pending: HashSet<String>,
    /// The id of a replayed initialize whose response the client must not see.
    swallow: Option<String>,
}

impl Relay {
    /// Notes a client line the daemon received.
    fn sent(&mut self, line: &[u8], kind: &Kind) {
        match kind {
            Kind::Initialize(id) => {
                self.initialize = Some(line.to_vec());
                self.pending.insert(id.clone());
            }
            Kind::Initialized => self.initialized = Some(line.to_vec()),
            Kind::Request(id) => {
                self.pending.insert(id.clone());
            }
            _ => {}
        }
    }

    /// Whether a daemon line goes on to the client.
    fn pass_to_client(&mut self, line: &[u8]) -> bool {
        if let Kind::Response(id) = classify(line) {
            if self.swallow.as_ref() == Some(&id) {
                self.swallow = None;
                return false;
            }
            self.pending.remove(&id);
        }
        true
    }

    /// Error responses for every request the dead daemon left unanswered.
    fn fail_pending(&mut self) -> Vec<Vec<u8>> {
        self.swallow = None;
        let mut ids: Vec<String> = self.pending.drain().collect();
        ids.sort();
        ids.into_iter()
            .map(|id| {
                let mut line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"the scryer daemon stopped while answering this request; call again (a new daemon starts on the next message)"}}}}"#
                )
                .into_bytes();
                line.push(b'\n');
                line
            })
            .collect()
    }

    /// The lines that bring a new daemon session to where the client's session is,
    /// before `current` (which is not replayed if it is the initialize itself).
    fn replay(&mut self, current: &Kind) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if matches!(current, Kind::Initialize(_)) {
            return out;
        }
        if let Some(init) = &self.initialize {
            if let Kind::Initialize(id) = classify(init) {
                self.swallow = Some(id);
            }
            out.push(init.clone());
            if let Some(done) = &self.initialized
                && !matches!(current, Kind::Initialized)
            {
                out.push(done.clone());
            }
        }
        out
    }
}

/// Copies daemon lines into `events`, tagged with the connection's generation; `None`
/// marks the end of that connection.
fn spawn_reader<R: AsyncRead + Unpin + Send + 'static>(
    mut reader: BufReader<R>,
    generation: u64,
    events: mpsc::Sender<(u64, Option<Vec<u8>>)>,
) {
    tokio::spawn(async move {
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if events.send((generation, Some(line))).await.is_err() {
                        return;
                    }
                }
            }
        }
        let _ = events.send((generation, None)).await;
    });
}

async fn to_stdout(stdout: &mut tokio::io::Stdout, line: &[u8]) -> Result<()> {
    stdout.write_all(line).await?;
    stdout.flush().await?;
    Ok(())
}

/// Serves stdio through the daemon until stdin closes and the daemon has answered.
pub async fn serve_via_daemon(client: DaemonClient) -> Result<()> {
    let first = client.connect().await?;
    let (events_tx, mut events) = mpsc::channel(256);
    let mut generation = 0u64;
    spawn_reader(first.reader, generation, events_tx.clone());
    let mut writer: Option<OwnedWriteHalf> = Some(first.writer);
    let mut stdin = stdin_lines();
    let mut stdin_open = true;
    let mut stdout = tokio::io::stdout();
    let mut relay = Relay::default();
    loop {
        tokio::select! {
            line = stdin.recv(), if stdin_open => {
                let Some(line) = line else {
                    // The agent is done: let the daemon finish the session, keep relaying
                    // what it still says until it closes.
                    stdin_open = false;
                    match writer.as_mut() {
                        Some(w) => { let _ = w.shutdown().await; }
                        None => break,
                    }
                    continue;
                };
                // Not valid JSON-RPC: answered here, never sent on.
                let line = match line {
                    Ok(line) => line,
                    Err(answer) => {
                        to_stdout(&mut stdout, &answer).await?;
                        continue;
                    }
                };
                let kind = classify(&line);
                let mut attempts = 0;
                loop {
                    attempts += 1;
                    if writer.is_none() {
                        match client.connect().await {
                            Ok(c) => {
                                generation += 1;
                                spawn_reader(c.reader, generation, events_tx.clone());
                                let mut w = c.writer;
                                let mut replayed = true;
                                for l in relay.replay(&kind) {
                                    if w.write_all(&l).await.is_err() {
                                        replayed = false;
                                        break;
                                    }
                                }
                                if replayed {
                                    writer = Some(w);
                                }
                            }
                            Err(e) => {
                                tracing::warn!(error = %format!("{e:#}"), "reconnecting to the daemon failed");
                            }
                        }
                    }
                    let Some(w) = writer.as_mut() else {
                        if attempts < 2 { continue; }
                        // No daemon now: answer the request with the reason; the next
                        // message tries again.
                        if let Kind::Request(id) | Kind::Initialize(id) = &kind {
                            relay.pending.insert(id.clone());
                            for l in relay.fail_pending() {
                                to_stdout(&mut stdout, &l).await?;
                            }
                        }
                        break;
                    };
                    if w.write_all(&line).await.is_ok() {
                        relay.sent(&line, &kind);
                        break;
                    }
                    // The daemon is gone: answer what it left unanswered, then retry.
                    writer = None;
                    for l in relay.fail_pending() {
                        to_stdout(&mut stdout, &l).await?;
                    }
                    if attempts >= 2 {
                        break;
                    }
                }
            }
            event = events.recv() => {
                let Some((g, line)) = event else { break };
                if g != generation {
                    continue;
                }
                match line {
                    Some(line) => {
                        if relay.pass_to_client(&line) {
                            to_stdout(&mut stdout, &line).await?;
                        }
                    }
                    None => {
                        writer = None;
                        for l in relay.fail_pending() {
                            to_stdout(&mut stdout, &l).await?;
                        }
                        if !stdin_open {
                            break;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
    const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#;

    #[test]
    fn lines_are_classified_by_method_and_id() {
        assert_eq!(classify(INIT), Kind::Initialize("0".into()));
        assert_eq!(classify(INITIALIZED), Kind::Initialized);
        assert_eq!(classify(CALL), Kind::Request("7".into()));
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Kind::Response("\"a\"".into())
        );
        assert_eq!(classify(b"not json"), Kind::Other);
        assert_eq!(classify(br#"["initialize", 5]"#), Kind::Other);
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":null,"method":"tools/call"}"#),
            Kind::Other
        );
        assert_eq!(
            classify(br#"{"jsonrpc":"2.0","id":{"k":[1]},"error":{"code":1}}"#),
            Kind::Response(r#"{"k":[1]}"#.into())
        );
        assert_eq!(
            classify(br#"  {"result":{"content":[{"text":"{\"id\":9}"}]},"id":3}"#),
            Kind::Response("3".into())
        );
    }

    #[test]
    fn a_reconnect_replays_initialize_and_swallows_its_answer() {
        let mut relay = Relay::default();
        relay.sent(INIT, &classify(INIT));
        assert!(relay.pass_to_client(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#));
        relay.sent(INITIALIZED, &classify(INITIALIZED));
        relay.sent(CALL, &classify(CALL));
        // The daemon died with the call in flight: the client gets an error for it.
        let failed = relay.fail_pending();
        assert_eq!(failed.len(), 1);
        let err: Value = serde_json::from_slice(&failed[0]).unwrap();
        assert_eq!(err["id"], 7);
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains("call again")
        );
        // The next call replays the session opening first.
        let next = br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}}"#;
        let replay = relay.replay(&classify(next));
        assert_eq!(replay, vec![INIT.to_vec(), INITIALIZED.to_vec()]);
        relay.sent(next, &classify(next));
        // The second initialize answer is not the client's; the call's answer is.
        assert!(!relay.pass_to_client(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#));
        assert!(relay.pass_to_client(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#));
        assert!(relay.pending.is_empty());
        assert!(relay.fail_pending().is_empty());
    }

    #[test]
    fn nothing_is_replayed_before_an_initialize_or_for_the_initialize_itself() {
        let mut relay = Relay::default();
        assert!(relay.replay(&classify(CALL)).is_empty());
        relay.sent(INIT, &classify(INIT));
        assert!(relay.replay(&classify(INIT)).is_empty());
        assert_eq!(relay.swallow, None);
    }
}
