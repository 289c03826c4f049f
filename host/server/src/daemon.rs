//! The daemon: one process per database file owns the turso database and the index
//! engine, and serves many MCP sessions over a Unix socket (ADR 0005).
//!
//! A connection starts with one handshake line of JSON ([`Hello`]) and gets one line
//! back ([`Reply`]); after a session handshake the connection carries MCP bytes both
//! ways. The other ops answer in that one line: `status`, `stop`, and the one-shot
//! commands that need the database the daemon holds (`usage` for `scryer report`,
//! `index` for `scryer index`). `scryer serve --http` runs this same loop in the
//! foreground with MCP over HTTP beside it (ADR 0009). The daemon reads the handshake through the same buffer the MCP session then
//! reads from, so MCP bytes sent in the same write as the handshake are kept.

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::ServiceExt;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{Notify, watch};

use crate::call::contract::{AlwaysLoad, Profile};
use crate::{Format, Server, SessionOptions};

/// Version of the handshake; a daemon refuses any other.
pub const PROTOCOL: u32 = 1;
/// Longest handshake line accepted.
const MAX_HELLO: u64 = 64 * 1024;
/// How long a connection may take to send its handshake.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How often an idle daemon checks that its database file still exists.
const DB_CHECK: Duration = Duration::from_secs(2);

/// Where a database's daemon keeps its socket, lock and log.
#[derive(Clone, Debug)]
pub struct RunPaths {
    /// The database file, absolute (its directory canonicalized).
    pub db: PathBuf,
    pub dir: PathBuf,
    pub socket: PathBuf,
    /// Held (flock) by the running daemon: the one-daemon-per-database guard.
    pub lock: PathBuf,
    /// The daemon's stderr when a client started it.
    pub log: PathBuf,
}

/// Longest socket path a Unix socket address holds (`sun_path` is 108 bytes with its NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Where a database's daemon is found. Computed from the database path and the user
/// only, never from optional variables a client may or may not pass (ADR 0016), so every
/// client of one database finds the same daemon: `<db file>-run/` beside the database,
/// or `/tmp/scryer-<uid>/` when that would make the socket path too long.
/// `$SCRYER_RUN_DIR` overrides it (tests and unusual setups pass it to every process).
enum Rendezvous {
    /// A directory of this database alone: `daemon.sock`, `daemon.lock`, `daemon.log`.
    Beside(PathBuf),
    /// A directory shared by databases: `<key>.sock` and so on.
    Shared(PathBuf),
}

fn rendezvous(db: &Path) -> Rendezvous {
    rendezvous_with(
        db,
        std::env::var_os("SCRYER_RUN_DIR").filter(|d| !d.is_empty()),
    )
}

/// [`rendezvous`] with the override given (`$SCRYER_RUN_DIR`).
fn rendezvous_with(db: &Path, run_dir: Option<std::ffi::OsString>) -> Rendezvous {
    if let Some(d) = run_dir {
        return Rendezvous::Shared(PathBuf::from(d));
    }
    let mut beside = db.as_os_str().to_owned();
    beside.push("-run");
    let beside = PathBuf::from(beside);
    if beside.join("daemon.sock").as_os_str().len() <= MAX_SOCKET_PATH {
        Rendezvous::Beside(beside)
    } else {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        Rendezvous::Shared(PathBuf::from(format!("/tmp/scryer-{uid}")))
    }
}

/// Creates `dir` (0700) if needed and checks it is a directory of this user's, private.
/// Refused when it is a symbolic link or belongs to another user: a run directory in a
/// shared place such as `/tmp` must not be one someone else prepared.
pub fn private_dir(dir: &Path) -> Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?
        }
    }
    let meta = std::fs::symlink_metadata(dir)?;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() {
        bail!(
            "{} is not a directory (a symbolic link or a file); remove it, or set SCRYER_RUN_DIR to a directory of your own",
            dir.display()
        );
    }
    if meta.uid() != uid {
        bail!(
            "{} belongs to another user (uid {}); set SCRYER_RUN_DIR to a directory of your own",
            dir.display(),
            meta.uid()
        );
    }
    if meta.permissions().mode() & 0o777 != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("making {} private (0700)", dir.display()))?;
    }
    Ok(())
}

/// The database path as the daemon is keyed by it: absolute, its directory canonical
/// (the file itself may not exist yet).
pub fn canonical_db(db: &Path) -> PathBuf {
    let joined = if db.is_absolute() {
        db.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(db)
    };
    let abs = crate::call::paths::normalize(&joined).unwrap_or(joined);
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(abs),
        _ => abs,
    }
}

/// FNV-1a: stable across builds and platforms, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

impl RunPaths {
    /// The paths for the daemon of `db` (see [`Rendezvous`]); creates their directory.
    pub fn for_db(db: &Path) -> Result<RunPaths> {
        let db = canonical_db(db);
        let paths = match rendezvous(&db) {
            Rendezvous::Beside(dir) => Self::beside(dir, db),
            Rendezvous::Shared(dir) => Self::in_dir(dir, &db),
        };
        private_dir(&paths.dir)?;
        Ok(paths)
    }

    fn beside(dir: PathBuf, db: PathBuf) -> RunPaths {
        RunPaths {
            socket: dir.join("daemon.sock"),
            lock: dir.join("daemon.lock"),
            log: dir.join("daemon.log"),
            dir,
            db,
        }
    }

    fn in_dir(dir: PathBuf, db: &Path) -> RunPaths {
        let db = canonical_db(db);
        let key = format!("{:016x}", fnv1a(db.as_os_str().as_encoded_bytes()));
        RunPaths {
            socket: dir.join(format!("{key}.sock")),
            lock: dir.join(format!("{key}.lock")),
            log: dir.join(format!("{key}.log")),
            dir,
            db,
        }
    }

    /// Whether the run directory holds this database's files alone.
    fn dir_is_own(&self) -> bool {
        self.socket.file_name().is_some_and(|n| n == "daemon.sock")
    }
}

/// Identifies the binary: a daemon started by an older build refuses sessions from a
/// newer one (and the reverse), so a rebuilt scryer does not talk to a stale daemon.
pub fn build_id() -> String {
    let stamp = std::env::current_exe()
        .and_then(std::fs::metadata)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{}+{stamp}", env!("CARGO_PKG_VERSION"))
}

/// What a connection asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// An MCP session follows the handshake.
    #[default]
    Session,
    Status,
    Stop,
    /// Measured usage per tool (`scryer report` while the daemon holds the database).
    Usage,
    /// Index a directory now and answer when the run ends (`scryer index`).
    Index,
    /// Store a SCIP index built elsewhere (`scryer precise import`; ADR 0018): `path` is
    /// the index file, `project` or `cwd` the project.
    PreciseImport,
}

/// Session options as `scryer serve` flags spell them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_load: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
}

impl WireOptions {
    pub fn to_session_options(&self) -> Result<SessionOptions, String> {
        Ok(SessionOptions {
            tools: match &self.tools {
                Some(t) => Profile::parse(t)?,
                None => Profile::default(),
            },
            always_load: match &self.always_load {
                Some(a) => AlwaysLoad::parse(a)?,
                None => AlwaysLoad::default(),
            },
            max_tokens: self.max_tokens,
            format: match self.format.as_deref() {
                None | Some("json") => Format::Json,
                Some("text") => Format::Text,
                Some(other) => return Err(format!("format {other:?}; accepted: json, text")),
            },
            project: self.project.clone(),
        })
    }
}

/// The handshake line a client sends first.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Hello {
    /// Handshake version ([`PROTOCOL`]).
    pub scryer: u32,
    #[serde(default)]
    pub op: Op,
    /// The client's build ([`build_id`]); sessions need the daemon's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The client's working directory (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub options: WireOptions,
    /// `usage`: only this project (slug, id or root path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// `usage`: only calls of the last this many milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since_ms: Option<i64>,
    /// `index`: the directory to index (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
}

/// The answer to `usage`: the project the window was narrowed to, and its rows.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct UsageReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default)]
    pub tools: Vec<scryer_db::ToolUsageRow>,
}

/// The answer to `index`: the project after its run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IndexReply {
    pub slug: String,
    pub root: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_index_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// What the daemon says about itself.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Status {
    pub pid: u32,
    pub db: PathBuf,
    pub socket: PathBuf,
    pub build: String,
    pub uptime_s: u64,
    /// Sessions connected now.
    pub sessions: u64,
    /// Sessions served since start.
    pub sessions_total: u64,
    /// Seconds without sessions before the daemon exits (0: never, while serving HTTP).
    pub idle_exit_s: u64,
    /// The MCP-over-HTTP URL this daemon also serves (`scryer serve --http`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    /// HTTP sessions open now (not counted in `sessions`).
    #[serde(default)]
    pub http_sessions: u64,
}

/// The daemon's answer line.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The refusal is a build mismatch: stop this daemon and start a current one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub build_mismatch: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageReply>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed: Option<IndexReply>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<crate::indexing::precise::ImportReply>,
}

impl Reply {
    fn error(text: impl Into<String>) -> Reply {
        Reply {
            ok: false,
            error: Some(text.into()),
            ..Reply::default()
        }
    }
}

/// Reads one JSON line of at most [`MAX_HELLO`] bytes, leaving everything after its
/// newline in `reader`'s buffer.
pub async fn read_line_json<T, R>(reader: &mut BufReader<R>) -> Result<T>
where
    T: serde::de::DeserializeOwned,
    R: AsyncRead + Unpin,
{
    let mut line = Vec::new();
    let n = (&mut *reader)
        .take(MAX_HELLO)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        bail!("the connection closed before a handshake line");
    }
    if !line.ends_with(b"\n") {
        bail!("the handshake line is longer than {MAX_HELLO} bytes or not terminated by a newline");
    }
    serde_json::from_slice(&line).map_err(|e| {
        anyhow::anyhow!(
            "the handshake line is not valid JSON ({e}); expected e.g. {{\"scryer\":{PROTOCOL},\"op\":\"status\"}}"
        )
    })
}

async fn write_json_line<T: Serialize>(w: &mut OwnedWriteHalf, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line).await?;
    w.flush().await
}

/// A connection to a daemon after its handshake reply.
pub struct Connected {
    pub reader: BufReader<OwnedReadHalf>,
    pub writer: OwnedWriteHalf,
    pub reply: Reply,
}

/// Sends `hello` on `stream` and reads the reply line.
pub async fn handshake(stream: UnixStream, hello: &Hello) -> Result<Connected> {
    let (r, mut writer) = stream.into_split();
    write_json_line(&mut writer, hello)
        .await
        .context("sending the handshake")?;
    let mut reader = BufReader::new(r);
    let reply: Reply = read_line_json(&mut reader)
        .await
        .context("reading the daemon's handshake reply")?;
    Ok(Connected {
        reader,
        writer,
        reply,
    })
}

/// Asks the running daemon for `op` (status or stop); `None` when none is running.
pub async fn request(paths: &RunPaths, op: Op) -> Result<Option<Reply>> {
    let hello = Hello {
        scryer: PROTOCOL,
        op,
        ..Hello::default()
    };
    ask(paths, &hello, Duration::from_secs(30)).await
}

/// Sends `hello` to the running daemon and waits up to `wait` for its reply; `None`
/// when no daemon is running.
pub async fn ask(paths: &RunPaths, hello: &Hello, wait: Duration) -> Result<Option<Reply>> {
    let stream = match UnixStream::connect(&paths.socket).await {
        Ok(s) => s,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None);
        }
        Err(e) => {
            return Err(e).with_context(|| format!("connecting to {}", paths.socket.display()));
        }
    };
    let connected = tokio::time::timeout(wait, handshake(stream, hello))
        .await
        .with_context(|| format!("the daemon did not answer within {} s", wait.as_secs()))??;
    Ok(Some(connected.reply))
}

/// The lock that makes a process the daemon of a database.
pub struct DaemonLock {
    _file: std::fs::File,
}

impl DaemonLock {
    /// Takes the lock without waiting; `None` when another process holds it.
    pub fn try_acquire(paths: &RunPaths) -> Result<Option<DaemonLock>> {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&paths.lock)
            .with_context(|| format!("opening {}", paths.lock.display()))?;
        match file.try_lock() {
            Ok(()) => {
                // The holder's pid, for messages; the lock itself is what counts.
                file.set_len(0)?;
                let _ = writeln!(file, "{}", std::process::id());
                Ok(Some(DaemonLock { _file: file }))
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("locking {}", paths.lock.display()))
            }
        }
    }
}

/// The pid written in the lock file by the daemon holding it, or by the last one that
/// did (the pid stays after exit: [`lock_holder_alive`] tells whether it still runs,
/// and until its process is gone it may still hold the database).
pub fn lock_holder(paths: &RunPaths) -> Option<u32> {
    std::fs::read_to_string(&paths.lock)
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The pid of the daemon holding the lock, if that process is alive. Reads the pid
/// instead of probing the lock, since taking it even briefly could turn away a daemon
/// that is starting.
pub fn lock_holder_alive(paths: &RunPaths) -> Option<u32> {
    let pid = lock_holder(paths)?;
    let pid_t = libc::pid_t::try_from(pid).ok().filter(|p| *p > 0)?;
    // SAFETY: signal 0 only checks that the process exists; no signal is sent.
    let rc = unsafe { libc::kill(pid_t, 0) };
    let alive = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    alive.then_some(pid)
}

/// Who holds `db` open, for an "in use" message: the pid, its socket when it is this
/// database's daemon, and the command that stops it. Looks at the daemon lock first,
/// then at the open files of this user's processes (an in-process `serve --no-daemon`
/// or a daemon of an older build holds no lock in this rendezvous).
pub fn holder_of(db: &Path) -> String {
    let paths = RunPaths::for_db(db).ok();
    let stop = format!("scryer --db {} daemon stop", canonical_db(db).display());
    if let Some(paths) = &paths
        && let Some(pid) = lock_holder_alive(paths)
        && pid != std::process::id()
    {
        return format!(
            "held by the scryer daemon pid {pid} (socket {}); stop it with `{stop}`",
            paths.socket.display()
        );
    }
    match process_with_open(&canonical_db(db)) {
        Some((pid, command)) => format!(
            "held by pid {pid} (`{command}`), which serves it without a daemon socket; stop it with `kill {pid}` (for a daemon: `{stop}`)"
        ),
        None => format!(
            "the holder was not found among this user's processes; if it is a scryer daemon, `{stop}` stops it"
        ),
    }
}

/// A process of this user's (not this one) with `file` open, and its command line.
fn process_with_open(file: &Path) -> Option<(u32, String)> {
    let me = std::process::id();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == file))
        {
            let command = std::fs::read(entry.path().join("cmdline"))
                .map(|raw| {
                    raw.split(|b| *b == 0)
                        .filter(|a| !a.is_empty())
                        .map(|a| String::from_utf8_lossy(a).into_owned())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default();
            return Some((pid, command));
        }
    }
    None
}

/// `error` from opening `db`, with who holds the file when it is in use.
pub fn explain_open_error(error: anyhow::Error, db: &Path) -> anyhow::Error {
    if format!("{error:#}").contains(scryer_db::IN_USE) {
        anyhow::anyhow!(
            "the database {} {} (turso lets one process open a database file): {}; or pass --db PATH to use another database",
            canonical_db(db).display(),
            scryer_db::IN_USE,
            holder_of(db)
        )
    } else {
        error
    }
}

struct Shared {
    server: Server,
    paths: RunPaths,
    build: String,
    started: Instant,
    idle: Option<Duration>,
    http: Option<String>,
    http_sessions: Arc<AtomicU64>,
    /// Sessions connected now; the accept loop watches it for the idle exit.
    sessions: watch::Sender<u64>,
    sessions_total: AtomicU64,
    stop: Notify,
}

impl Shared {
    fn status(&self) -> Status {
        Status {
            pid: std::process::id(),
            db: self.paths.db.clone(),
            socket: self.paths.socket.clone(),
            build: self.build.clone(),
            uptime_s: self.started.elapsed().as_secs(),
            sessions: *self.sessions.borrow(),
            sessions_total: self.sessions_total.load(Ordering::Relaxed),
            idle_exit_s: self.idle.map_or(0, |d| d.as_secs()),
            http: self.http.clone(),
            http_sessions: self.http_sessions.load(Ordering::Relaxed),
        }
    }
}

/// Counts a session for as long as it lives, even if its task panics.
struct SessionGuard<'a>(&'a watch::Sender<u64>);

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Why the daemon stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    Idle,
    Stopped,
    Signal,
    DatabaseGone,
}

/// Runs the daemon: takes the lock (failing if another daemon holds it), binds the
/// socket, starts the server with `start`, and serves until stopped, signalled, idle
/// for `idle` with no session, or its database file is deleted.
pub async fn run<F>(paths: RunPaths, idle: Duration, start: F) -> Result<Exit>
where
    F: Future<Output = Result<Server>>,
{
    run_with_http(paths, Some(idle), None, start).await
}

/// [`run`], also serving MCP over HTTP on `http`'s listener when given (the foreground
/// `scryer serve --http`). `idle: None` never exits for want of sessions.
pub async fn run_with_http<F>(
    paths: RunPaths,
    idle: Option<Duration>,
    http: Option<(tokio::net::TcpListener, crate::transport::http::HttpConfig)>,
    start: F,
) -> Result<Exit>
where
    F: Future<Output = Result<Server>>,
{
    let Some(_lock) = DaemonLock::try_acquire(&paths)? else {
        let holder = lock_holder(&paths)
            .map(|p| format!(" (pid {p}, socket {})", paths.socket.display()))
            .unwrap_or_default();
        bail!(
            "a scryer daemon for {db} is already running{holder}; `scryer --db {db} daemon status` shows it, `scryer --db {db} daemon stop` ends it",
            db = paths.db.display()
        );
    };
    // Holding the lock, any socket file left is a dead daemon's.
    let _ = std::fs::remove_file(&paths.socket);
    let listener = UnixListener::bind(&paths.socket)
        .with_context(|| format!("binding {}", paths.socket.display()))?;
    std::fs::set_permissions(&paths.socket, std::fs::Permissions::from_mode(0o600))?;
    let cleanup = SocketCleanup(paths.socket.clone());
    // Clients may connect while the server starts: the kernel queues them until the
    // accept loop below runs.
    let server = start.await?;
    tracing::info!(socket = %paths.socket.display(), pid = std::process::id(), "daemon listening");
    let (sessions, mut count) = watch::channel(0u64);
    let http_stop = tokio_util::sync::CancellationToken::new();
    let http_sessions = Arc::new(AtomicU64::new(0));
    let mut http_url = None;
    let mut http_task = match http {
        None => None,
        Some((listener, config)) => {
            http_url = Some(format!(
                "http://{}{}",
                listener.local_addr()?,
                crate::transport::http::MCP_PATH
            ));
            Some(tokio::spawn(crate::transport::http::serve(
                server.clone(),
                listener,
                config,
                http_sessions.clone(),
                http_stop.clone(),
            )))
        }
    };
    let _http_stop = http_stop.clone().drop_guard();
    let shared = Arc::new(Shared {
        server,
        paths,
        build: build_id(),
        started: Instant::now(),
        idle,
        http: http_url,
        http_sessions,
        sessions,
        sessions_total: AtomicU64::new(0),
        stop: Notify::new(),
    });
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let mut db_check = tokio::time::interval(DB_CHECK);
    let mut idle_since = Instant::now();
    let exit = loop {
        let idle_now = *count.borrow_and_update() == 0;
        let idle_left = idle.map(|i| i.saturating_sub(idle_since.elapsed()));
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(connection(shared.clone(), stream));
                }
                Err(e) => tracing::warn!(error = %e, "accepting a connection failed"),
            },
            changed = count.changed() => {
                if changed.is_ok() && *count.borrow() == 0 {
                    idle_since = Instant::now();
                }
            }
            _ = tokio::time::sleep(idle_left.unwrap_or_default()), if idle_now && idle_left.is_some() => break Exit::Idle,
            ended = async { http_task.as_mut().expect("guarded").await }, if http_task.is_some() => {
                match ended {
                    Ok(Ok(())) => break Exit::Stopped,
                    Ok(Err(e)) => return Err(e.context("serving MCP over HTTP")),
                    Err(e) => bail!("the HTTP server task failed: {e}"),
                }
            }
            _ = db_check.tick(), if idle_now => {
                if !shared.paths.db.exists() {
                    break Exit::DatabaseGone;
                }
            }
            _ = shared.stop.notified() => break Exit::Stopped,
            _ = term.recv() => break Exit::Signal,
            _ = int.recv() => break Exit::Signal,
        }
    };
    drop(listener);
    drop(cleanup);
    if exit == Exit::DatabaseGone {
        // Nothing will ask for this database again (tests make one per run): leave no
        // lock or log behind in the run directory.
        let _ = std::fs::remove_file(&shared.paths.log);
        let _ = std::fs::remove_file(&shared.paths.lock);
        if shared.paths.dir_is_own() {
            let _ = std::fs::remove_dir(&shared.paths.dir);
        }
    }
    if exit != Exit::DatabaseGone {
        // A clean exit leaves one self-contained file: the WAL folded into it, so a copy,
        // a backup or the start check of the next daemon sees the whole database.
        shared.server.seal_at_exit().await;
    }
    tracing::info!(reason = ?exit, "daemon exiting");
    Ok(exit)
}

/// Removes the socket file when the daemon stops listening.
struct SocketCleanup(PathBuf);

impl Drop for SocketCleanup {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

async fn connection(shared: Arc<Shared>, stream: UnixStream) {
    let (r, mut w) = stream.into_split();
    let mut reader = BufReader::new(r);
    let hello: Hello = match tokio::time::timeout(HELLO_TIMEOUT, read_line_json(&mut reader)).await
    {
        Ok(Ok(h)) => h,
        Ok(Err(e)) => {
            let _ = write_json_line(&mut w, &Reply::error(format!("{e:#}"))).await;
            return;
        }
        Err(_) => {
            let _ = write_json_line(
                &mut w,
                &Reply::error(format!(
                    "no handshake line within {} s",
                    HELLO_TIMEOUT.as_secs()
                )),
            )
            .await;
            return;
        }
    };
    if hello.scryer != PROTOCOL {
        let _ = write_json_line(
            &mut w,
            &Reply::error(format!(
                "handshake version {} is not supported; this daemon speaks {PROTOCOL}",
                hello.scryer
            )),
        )
        .await;
        return;
    }
    match hello.op {
        Op::Status => {
            let reply = Reply {
                ok: true,
                status: Some(shared.status()),
                ..Reply::default()
            };
            let _ = write_json_line(&mut w, &reply).await;
        }
        Op::Stop => {
            let reply = Reply {
                ok: true,
                status: Some(shared.status()),
                ..Reply::default()
            };
            let _ = write_json_line(&mut w, &reply).await;
            shared.stop.notify_one();
        }
        Op::Usage => {
            let reply = match usage(&shared.server, &hello).await {
                Ok(u) => Reply {
                    ok: true,
                    usage: Some(u),
                    ..Reply::default()
                },
                Err(e) => Reply::error(format!("{e:#}")),
            };
            let _ = write_json_line(&mut w, &reply).await;
        }
        Op::Index => {
            // Counted as a session while it runs, so the daemon does not idle out
            // under a long index run.
            shared.sessions.send_modify(|n| *n += 1);
            let _counted = SessionGuard(&shared.sessions);
            let reply = match index(&shared.server, &hello).await {
                Ok(p) => Reply {
                    ok: true,
                    indexed: Some(p),
                    ..Reply::default()
                },
                Err(e) => Reply::error(format!("{e:#}")),
            };
            let _ = write_json_line(&mut w, &reply).await;
        }
        Op::PreciseImport => {
            shared.sessions.send_modify(|n| *n += 1);
            let _counted = SessionGuard(&shared.sessions);
            let reply = match shared.server.precise_import(&hello).await {
                Ok(r) => Reply {
                    ok: true,
                    imported: Some(r),
                    ..Reply::default()
                },
                Err(e) => Reply::error(format!("{e:#}")),
            };
            let _ = write_json_line(&mut w, &reply).await;
        }
        Op::Session => session(shared, hello, reader, w).await,
    }
}

/// `usage`: the aggregation `get_token_savings_metrics` reads, for `scryer report`.
async fn usage(server: &Server, hello: &Hello) -> Result<UsageReply> {
    let db = server.core.projects.db();
    let project = match &hello.project {
        None => None,
        Some(sel) => match db.project_by_selector(sel).await? {
            Some(p) => Some(p),
            None => {
                let known: Vec<String> = db.projects().await?.into_iter().map(|p| p.slug).collect();
                bail!(crate::unknown_project(sel, &known));
            }
        },
    };
    let since_at = hello
        .since_ms
        .map(|ms| crate::call::telemetry::now_ms() - ms.max(0));
    let rows = db
        .tool_usage(project.as_ref().map(|p| p.id), since_at)
        .await?;
    Ok(UsageReply {
        project: project.map(|p| p.slug),
        tools: rows,
    })
}

/// `index`: indexes an absolute directory now and answers when the run ends.
async fn index(server: &Server, hello: &Hello) -> Result<IndexReply> {
    let Some(path) = hello.path.as_deref().filter(|p| p.is_absolute()) else {
        bail!("the handshake of `index` needs `path`, an absolute directory");
    };
    if !path.is_dir() {
        bail!("{} is not a directory", path.display());
    }
    let p = server.index_path(path).await?;
    Ok(IndexReply {
        slug: p.slug,
        root: p.root,
        last_index_ms: p.last_index_ms,
        last_error: p.last_error,
    })
}

async fn session(
    shared: Arc<Shared>,
    hello: Hello,
    reader: BufReader<OwnedReadHalf>,
    mut w: OwnedWriteHalf,
) {
    if let Some(build) = &hello.build
        && *build != shared.build
    {
        let reply = Reply {
            build_mismatch: true,
            ..Reply::error(format!(
                "this daemon runs scryer build {}, the client is build {build}",
                shared.build
            ))
        };
        let _ = write_json_line(&mut w, &reply).await;
        return;
    }
    let options = match hello.options.to_session_options() {
        Ok(o) => o,
        Err(e) => {
            let _ = write_json_line(&mut w, &Reply::error(e)).await;
            return;
        }
    };
    let Some(cwd) = hello.cwd.filter(|c| c.is_absolute()) else {
        let _ = write_json_line(
            &mut w,
            &Reply::error("the handshake needs `cwd`, the client's absolute working directory"),
        )
        .await;
        return;
    };
    let server = &shared.server;
    let id = match server.open_session(cwd, options).await {
        Ok(id) => id,
        Err(e) => {
            let _ = write_json_line(&mut w, &Reply::error(format!("{e:#}"))).await;
            return;
        }
    };
    shared.sessions.send_modify(|n| *n += 1);
    shared.sessions_total.fetch_add(1, Ordering::Relaxed);
    let _counted = SessionGuard(&shared.sessions);
    let reply = Reply {
        ok: true,
        session: Some(id),
        ..Reply::default()
    };
    if write_json_line(&mut w, &reply).await.is_ok() {
        // Malformed lines are answered before rmcp sees them; the rest keep their order.
        let handler = server.mcp_session(id);
        let (reader, w) = crate::transport::wire::guarded(reader, w);
        let reader = handler.ordered(reader);
        match handler.serve((reader, w)).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::info!(session = id, error = %e, "session ended before initialize"),
        }
    }
    server.close_session(id);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_paths_are_keyed_by_the_canonical_database_path() {
        let dir = tempfile::tempdir().unwrap();
        let run = PathBuf::from("/run/scryer-test");
        let a = RunPaths::in_dir(run.clone(), &dir.path().join("index.db"));
        let b = RunPaths::in_dir(run.clone(), &dir.path().join("sub/../index.db"));
        let c = RunPaths::in_dir(run.clone(), &dir.path().join("other.db"));
        assert_eq!(a.socket, b.socket, "the same file through another spelling");
        assert_ne!(a.socket, c.socket);
        assert!(a.socket.starts_with(&run));
        // Short enough for sun_path (108 bytes) under any reasonable run directory.
        assert_eq!(a.socket.file_name().unwrap().len(), 16 + ".sock".len());
    }

    #[test]
    fn the_rendezvous_is_beside_the_database_unless_its_socket_path_is_too_long() {
        let dir = |r: Rendezvous| match r {
            Rendezvous::Beside(d) => ("beside", d),
            Rendezvous::Shared(d) => ("shared", d),
        };
        assert_eq!(
            dir(rendezvous_with(
                Path::new("/home/u/.local/share/scryer/index.db"),
                None
            )),
            (
                "beside",
                PathBuf::from("/home/u/.local/share/scryer/index.db-run")
            )
        );
        let deep = format!("/{}/index.db", "d".repeat(120));
        let (kind, shared) = dir(rendezvous_with(Path::new(&deep), None));
        assert_eq!(kind, "shared");
        assert!(shared.starts_with("/tmp") && shared.to_string_lossy().contains("scryer-"));
        let (kind, over) = dir(rendezvous_with(Path::new(&deep), Some("/r".into())));
        assert_eq!((kind, over), ("shared", PathBuf::from("/r")));
        let paths = RunPaths::in_dir(shared, Path::new(&deep));
        assert!(paths.socket.as_os_str().len() <= MAX_SOCKET_PATH);
    }

    #[test]
    fn wire_options_parse_like_serve_flags() {
        let o = WireOptions {
            tools: Some("core".into()),
            always_load: Some("none".into()),
            max_tokens: Some(300),
            project: Some("demo".into()),
            format: Some("text".into()),
        }
        .to_session_options()
        .unwrap();
        assert_eq!(o.tools, Profile::Core);
        assert_eq!(o.max_tokens, Some(300));
        assert_eq!(o.format, Format::Text);
        assert_eq!(o.project.as_deref(), Some("demo"));
        let bad = WireOptions {
            format: Some("xml".into()),
            ..WireOptions::default()
        }
        .to_session_options()
        .unwrap_err();
        assert!(bad.contains("json, text"), "{bad}");
    }

    #[test]
    fn a_handshake_without_op_is_a_session() {
        let h: Hello = serde_json::from_str(r#"{"scryer":1,"cwd":"/tmp"}"#).unwrap();
        assert_eq!(h.op, Op::Session);
        assert_eq!(h.cwd.as_deref(), Some(Path::new("/tmp")));
    }

    #[test]
    fn one_shot_handshakes_carry_their_arguments() {
        let h: Hello = serde_json::from_str(
            r#"{"scryer":1,"op":"usage","project":"demo","since_ms":3600000}"#,
        )
        .unwrap();
        assert_eq!(h.op, Op::Usage);
        assert_eq!(h.project.as_deref(), Some("demo"));
        assert_eq!(h.since_ms, Some(3_600_000));
        let h: Hello =
            serde_json::from_str(r#"{"scryer":1,"op":"index","path":"/w/demo"}"#).unwrap();
        assert_eq!(h.op, Op::Index);
        assert_eq!(h.path.as_deref(), Some(Path::new("/w/demo")));
        let e = serde_json::from_str::<Hello>(r#"{"scryer":1,"op":"reindex"}"#).unwrap_err();
        assert!(
            e.to_string().contains("usage"),
            "the error lists the ops: {e}"
        );
    }

    #[test]
    fn usage_rows_cross_the_socket_unchanged() {
        let row = scryer_db::ToolUsageRow {
            tool: "find_references".into(),
            calls: 7,
            errors: 2,
            tokens_mean: 310,
            tokens_p95: 900,
            truncated: 1,
            latency_p50_ms: 4,
            latency_p95_ms: 30,
            followed_up: 5,
        };
        let line = serde_json::to_string(&Reply {
            ok: true,
            usage: Some(UsageReply {
                project: Some("demo".into()),
                tools: vec![row.clone()],
            }),
            ..Reply::default()
        })
        .unwrap();
        let back: Reply = serde_json::from_str(&line).unwrap();
        let usage = back.usage.unwrap();
        assert_eq!(usage.project.as_deref(), Some("demo"));
        assert_eq!(usage.tools[0], row);
    }

    #[tokio::test]
    async fn bytes_after_the_handshake_line_stay_in_the_buffer() {
        let (a, mut b) = tokio::io::duplex(1024);
        b.write_all(b"{\"scryer\":1,\"op\":\"status\"}\n{\"jsonrpc\":\"2.0\"}\n")
            .await
            .unwrap();
        drop(b);
        let mut reader = BufReader::new(a);
        let hello: Hello = read_line_json(&mut reader).await.unwrap();
        assert_eq!(hello.op, Op::Status);
        let mut rest = String::new();
        reader.read_to_string(&mut rest).await.unwrap();
        assert_eq!(rest, "{\"jsonrpc\":\"2.0\"}\n");
    }

    #[tokio::test]
    async fn an_overlong_or_unterminated_handshake_is_refused() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        b.write_all(&vec![b'x'; (MAX_HELLO + 10) as usize])
            .await
            .unwrap();
        drop(b);
        let err = read_line_json::<Hello, _>(&mut BufReader::new(a))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("longer than"), "{err}");
    }

    #[test]
    fn one_lock_holder_per_database() {
        let dir = tempfile::tempdir().unwrap();
        let paths = RunPaths::in_dir(dir.path().to_path_buf(), &dir.path().join("index.db"));
        let held = DaemonLock::try_acquire(&paths).unwrap();
        assert!(held.is_some());
        assert_eq!(lock_holder(&paths), Some(std::process::id()));
        // flock locks belong to the open file description: a second open conflicts.
        assert!(DaemonLock::try_acquire(&paths).unwrap().is_none());
        drop(held);
        assert!(DaemonLock::try_acquire(&paths).unwrap().is_some());
    }
}
