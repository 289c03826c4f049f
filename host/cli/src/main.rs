//! `scryer`: the command line. Parses flags, builds the server, picks the transport.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use scryer_runtime::{Grants, Limits};
use scryer_server::contract::{AlwaysLoad, Profile};
use scryer_server::{ComponentBytes, Format, PluginSource, Server, ServerConfig, SessionOptions};

/// mimalloc instead of glibc's allocator: the daemon builds large transient structures
/// (a dependency crate's parse, a search index writer's arenas) and glibc kept the freed
/// memory in per-thread arenas, so the process never shrank back (see
/// docs/learnings/memory.md for the side-by-side numbers).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: the same index in mimalloc 2 and 3, which
/// libmimalloc-sys names no constant for (the test below checks its default).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// In a process that serves, memory freed goes back to the system at once, not after
/// mimalloc's delay (1 s, and 10 s for whole arena chunks). Indexing a project's locked
/// crates frees large parses one after another on different threads, and the delayed
/// memory piled up: the daemon's peak while tokio's 160 crates are indexed was 242–250 MB
/// with the delay and 202 MB without (docs/learnings/memory.md, 2026-12-01 evening).
/// `scryer index` keeps the delay: purging cost its cold run 0.1–0.2 s of system time.
/// An explicit `MIMALLOC_PURGE_DELAY` wins.
fn purge_freed_memory_at_once() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option; mimalloc reads options atomically.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
    }
}

/// tree-sitter's C core allocates through glibc's `malloc` unless it is told otherwise,
/// and a parse allocates and frees a node at a time: in a cold monorepo index glibc's
/// `malloc`/`free` were ~8 % of the parse thread's samples. Pointed at mimalloc, the
/// process's allocator, they cost what the Rust side's allocations cost. (A grammar's
/// external scanner keeps its own `malloc`/`free` pairs; it never frees the core's
/// memory, nor the core its.)
fn tree_sitter_on_mimalloc() {
    // SAFETY: called first in `main`, before any thread starts and before any
    // tree-sitter object exists (the function's contract); the four functions are
    // mimalloc's C API with the signatures tree-sitter asks for.
    unsafe {
        tree_sitter::set_allocator(Some(tree_sitter::Allocator {
            malloc: libmimalloc_sys::mi_malloc,
            calloc: libmimalloc_sys::mi_calloc,
            realloc: libmimalloc_sys::mi_realloc,
            free: libmimalloc_sys::mi_free,
        }))
    }
}

mod daemon;
mod doctor;
mod init;
mod plugin_cmd;
mod precise_cmd;
mod progress;
mod report;
mod serve;
mod shadow_cmd;

#[derive(Parser)]
#[command(
    name = "scryer",
    version,
    about = "Code intelligence for coding agents, over MCP."
)]
struct Cli {
    /// The database file (default: $XDG_DATA_HOME/scryer/index.db).
    #[arg(long, global = true, env = "SCRYER_DB")]
    db: Option<PathBuf>,
    /// Where compiled router code is cached (default: $XDG_CACHE_HOME/scryer/compiled).
    #[arg(long, global = true, env = "SCRYER_COMPILE_CACHE")]
    compile_cache: Option<PathBuf>,
    /// Compile routers on every start instead of using the cache.
    #[arg(long, global = true)]
    no_compile_cache: bool,
    /// Where the plugin policy and installed plugins live (default: $XDG_CONFIG_HOME/scryer).
    #[arg(long, global = true, env = "SCRYER_CONFIG_DIR")]
    config_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    Json,
    Text,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP over stdio (what an agent runs).
    Serve {
        /// Which tools to list: `core`, `full`, or plugin / tool names separated by commas.
        #[arg(long, default_value = "full")]
        tools: String,
        /// Which tools carry the always-load mark for clients that defer tool loading.
        #[arg(long, default_value = "core", value_parser = ["core", "none"])]
        always_load: String,
        /// Default answer budget in tokens (a call's max_tokens still wins).
        #[arg(long)]
        max_tokens: Option<u32>,
        /// Project to make active for the session (slug, id or root path).
        #[arg(long)]
        project: Option<String>,
        /// Answer format unless a call asks otherwise.
        #[arg(long, value_enum, default_value = "json")]
        format: FormatArg,
        /// An extra router component to load (granted the read-only router interfaces).
        /// Serves in this process, as `--no-daemon` does.
        #[arg(long = "plugin", value_name = "FILE.wasm")]
        plugins: Vec<PathBuf>,
        /// Serve in this process instead of through the database's shared daemon
        /// (also: SCRYER_DAEMON=off).
        #[arg(long)]
        no_daemon: bool,
        /// Serve MCP over streamable HTTP on ADDR (e.g. 127.0.0.1:7311) instead of stdio;
        /// this process becomes the database's daemon until stopped.
        #[arg(long, value_name = "ADDR", conflicts_with = "no_daemon")]
        http: Option<std::net::SocketAddr>,
        /// The bearer token HTTP clients send (default: a generated one, printed).
        #[arg(long, env = "SCRYER_HTTP_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// Allow --http on an address other machines can reach.
        #[arg(long, requires = "http")]
        allow_remote: bool,
    },
    /// The daemon that owns a database and serves every session on it.
    Daemon {
        #[command(subcommand)]
        command: daemon::DaemonCommand,
    },
    /// Index a directory now and print what was found.
    Index {
        /// The project root.
        path: PathBuf,
    },
    /// Precise mode (SCIP indexes): import one built elsewhere.
    Precise {
        #[command(subcommand)]
        command: precise_cmd::PreciseCommand,
    },
    /// Measured usage per tool: calls, errors, tokens, truncation, latency, follow-ups.
    Report {
        /// Only calls of the last while: 90s, 30m, 24h, 7d, 2w.
        #[arg(long)]
        since: Option<String>,
        /// Only calls for one project (slug, id or root path).
        #[arg(long)]
        project: Option<String>,
        /// Print JSON (the fields of get_token_savings_metrics, plus errors).
        #[arg(long)]
        json: bool,
    },
    /// Write or merge scryer's MCP server entry into a client's configuration.
    Init {
        #[arg(long, value_enum)]
        client: init::Client,
        /// The project's configuration (in the current directory), not the user's.
        #[arg(long)]
        project: bool,
        /// Print what would change; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check the database, compile cache, plugins, daemon and client entries.
    Doctor,
    /// Inspect plugins.
    Plugin {
        #[command(subcommand)]
        command: plugin_cmd::PluginCommand,
    },
}

fn default_db() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("scryer")
        .join("index.db")
}

fn default_compile_cache() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("scryer")
        .join("compiled")
}

fn first_query_wait() -> Result<Duration> {
    match std::env::var("SCRYER_FIRST_QUERY_WAIT") {
        Err(_) => Ok(Duration::from_secs(20)),
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| *s >= 0.0 && s.is_finite())
            .map(Duration::from_secs_f64)
            .with_context(|| {
                format!("SCRYER_FIRST_QUERY_WAIT={v:?}: accepted is a number of seconds, 0 or more")
            }),
    }
}

/// The built-in routers with their grant sets, then the `--plugin` files given (router
/// grants), as `scryer serve` loads them.
fn plugin_sources(extra: &[PathBuf]) -> Result<Vec<PluginSource>> {
    let mut sources: Vec<PluginSource> = scryer_builtin_plugins::names()
        .map(|(name, grant_set)| PluginSource {
            label: name.to_string(),
            // Decompressed only if the built-in native code does not fit this engine.
            wasm: ComponentBytes::Deferred(scryer_builtin_plugins::component),
            grants: Grants::for_set(grant_set).expect("built-in routers name a known grant set"),
            precompiled: builtin_precompiled(name),
        })
        .collect();
    for path in extra {
        sources.push(PluginSource {
            label: path.display().to_string(),
            wasm: ComponentBytes::Bytes(scryer_runtime::read_plugin_file(path)?),
            grants: Grants::router(),
            precompiled: None,
        });
    }
    Ok(sources)
}

/// The native code built into the binary for a built-in router (ADR 0015).
fn builtin_precompiled(name: &str) -> Option<scryer_runtime::Precompiled> {
    scryer_builtin_plugins::precompiled(name)
        .map(|(engine, code)| scryer_runtime::Precompiled { engine, code })
}

async fn build_server(cli: &Cli, extra_plugins: &[PathBuf], watch_files: bool) -> Result<Server> {
    let plugins = plugin_sources(extra_plugins)?;
    let home = plugin_cmd::home(cli.config_dir.as_deref());
    start_server(cli, plugins, Some(home), watch_files).await
}

/// A server that only indexes (`scryer index` without a daemon): no router answers a
/// call in it, so none is loaded. That keeps ~0.1 s of start-up (router loading and the
/// tokenizer) off a cold index.
async fn build_index_server(cli: &Cli) -> Result<Server> {
    start_server(cli, Vec::new(), None, false).await
}

async fn start_server(
    cli: &Cli,
    plugins: Vec<PluginSource>,
    home: Option<scryer_runtime::installed::PluginHome>,
    watch_files: bool,
) -> Result<Server> {
    let limits = Limits::from_env().map_err(anyhow::Error::msg)?;
    let compile_cache = if cli.no_compile_cache {
        None
    } else {
        Some(
            cli.compile_cache
                .clone()
                .unwrap_or_else(default_compile_cache),
        )
    };
    Server::start_with_installed(
        ServerConfig {
            db_path: cli.db.clone().unwrap_or_else(default_db),
            compile_cache,
            limits,
            plugins,
            first_query_wait: first_query_wait()?,
            watch_files,
        },
        home,
    )
    .await
}

/// No transparent huge pages for this process. mimalloc advises huge pages on its arenas,
/// and a serving process returns freed memory at once ([`purge_freed_memory_at_once`]):
/// every reuse of a purged range then faulted in a 2 MiB page and zeroed it. At start that
/// zeroing was over half of the daemon's CPU (`perf`: `clear_page_erms` 58 %), and the
/// daemon's start took about twice as long (docs/learnings/startup.md, 2026-12-02). The
/// flag holds for every mapping of the process, including those advised before `main`.
fn no_transparent_huge_pages() {
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments and touches no memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    if rc != 0 {
        // Older kernels: huge pages stay allowed, which is slower, not wrong.
        tracing::debug!(
            "PR_SET_THP_DISABLE refused: {}",
            std::io::Error::last_os_error()
        );
    }
}

fn main() -> std::process::ExitCode {
    tree_sitter_on_mimalloc();
    no_transparent_huge_pages();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One readable line per cause; no backtrace for an operator's mistake.
            eprintln!("scryer: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    // Logs go to stderr: stdout is the MCP channel. Colours only on a terminal: a
    // daemon's stderr is its log file.
    use std::io::IsTerminal as _;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SCRYER_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    if matches!(
        cli.command,
        Command::Serve { .. }
            | Command::Daemon {
                command: daemon::DaemonCommand::Run
            }
    ) {
        purge_freed_memory_at_once();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        match &cli.command {
            Command::Serve {
                tools,
                always_load,
                max_tokens,
                project,
                format,
                plugins,
                no_daemon,
                http,
                token,
                allow_remote,
            } => {
                let options = SessionOptions {
                    tools: Profile::parse(tools).map_err(anyhow::Error::msg)?,
                    always_load: AlwaysLoad::parse(always_load).map_err(anyhow::Error::msg)?,
                    max_tokens: *max_tokens,
                    format: match format {
                        FormatArg::Json => Format::Json,
                        FormatArg::Text => Format::Text,
                    },
                    project: project.clone(),
                };
                let wire = scryer_server::daemon::WireOptions {
                    tools: Some(tools.clone()),
                    always_load: Some(always_load.clone()),
                    max_tokens: *max_tokens,
                    project: project.clone(),
                    format: Some(format.to_possible_value().unwrap().get_name().into()),
                };
                if let Some(addr) = http {
                    let http = serve::HttpArgs {
                        addr: *addr,
                        token: token.clone(),
                        allow_remote: *allow_remote,
                    };
                    return serve::run_http(&cli, options, http, plugins).await;
                }
                serve::run(&cli, options, wire, plugins, *no_daemon).await
            }
            Command::Daemon { command } => {
                daemon::run(&cli, &cli.db.clone().unwrap_or_else(default_db), command).await
            }
            Command::Index { path } => daemon::index(&cli, path).await,
            Command::Precise { command } => precise_cmd::run(&cli, command).await,
            Command::Report {
                since,
                project,
                json,
            } => {
                report::run(report::ReportArgs {
                    db: cli.db.clone().unwrap_or_else(default_db),
                    since: since.clone(),
                    project: project.clone(),
                    json: *json,
                })
                .await
            }
            Command::Init {
                client,
                project,
                dry_run,
            } => init::run(init::InitArgs {
                client: *client,
                project: *project,
                dry_run: *dry_run,
            }),
            Command::Doctor => {
                doctor::run(doctor::DoctorArgs {
                    db: cli.db.clone().unwrap_or_else(default_db),
                    compile_cache: (!cli.no_compile_cache).then(|| {
                        cli.compile_cache
                            .clone()
                            .unwrap_or_else(default_compile_cache)
                    }),
                    plugin_home: plugin_cmd::home(cli.config_dir.as_deref()),
                })
                .await
            }
            Command::Plugin { command } => {
                let globals = plugin_cmd::Globals {
                    compile_cache: (!cli.no_compile_cache).then(|| {
                        cli.compile_cache
                            .clone()
                            .unwrap_or_else(default_compile_cache)
                    }),
                    config_dir: cli.config_dir.clone(),
                };
                plugin_cmd::run(&globals, command).await
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        // 1000 ms is mimalloc's own default for `purge_delay` (its options.c), and no
        // neighbouring option defaults to it: if the index moved, this fails.
        // SAFETY: reads one integer option.
        let default = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(default, 1000);
    }
}
