//! `scryer doctor`: checks the database, the compile cache, the plugins, the daemon and
//! the MCP clients' entries, one line each, and says what to do about every problem.
//! Exits non-zero when something is broken; warnings alone do not fail it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};
use std::sync::Arc;

use scryer_runtime::installed::PluginHome;
use scryer_runtime::{CacheOutcome, CompileCache, Grants, Limits, OfflineHost, Plugin, Runtime};
use scryer_server::daemon::{self, Op, RunPaths};
use scryer_server::{Origin, PluginStatus, Registry, ServingReport, Status};

use crate::init::{CLIENTS, Client, ENTRY, Json, home_dir, parse_json_config, parse_toml_config};
use crate::report::{held_message, lock_holder, open_existing};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Ok,
    Warn,
    Fail,
}

/// One finding: what was checked and what was found (with what to do, for a problem).
#[derive(Debug)]
struct Finding {
    level: Level,
    area: String,
    text: String,
}

#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn push(&mut self, level: Level, area: impl Into<String>, text: impl Into<String>) {
        self.0.push(Finding {
            level,
            area: area.into(),
            text: text.into(),
        });
    }
    fn ok(&mut self, area: impl Into<String>, text: impl Into<String>) {
        self.push(Level::Ok, area, text);
    }
    fn warn(&mut self, area: impl Into<String>, text: impl Into<String>) {
        self.push(Level::Warn, area, text);
    }
    fn fail(&mut self, area: impl Into<String>, text: impl Into<String>) {
        self.push(Level::Fail, area, text);
    }
    fn count(&self, level: Level) -> usize {
        self.0.iter().filter(|f| f.level == level).count()
    }
}

pub(crate) struct DoctorArgs {
    pub db: PathBuf,
    /// `None` when the compile cache is off (`--no-compile-cache`).
    pub compile_cache: Option<PathBuf>,
    /// Where installed plugins and their policy live.
    pub plugin_home: PluginHome,
}

pub(crate) async fn run(args: DoctorArgs) -> Result<()> {
    let mut f = Findings::default();
    let daemon_pid = check_daemon(&args.db, &mut f).await;
    check_database(&args.db, daemon_pid, &mut f).await;
    check_kept_aside(&args.db, &mut f);
    check_compile_cache(args.compile_cache.as_deref(), &mut f);
    check_plugins(args.compile_cache.clone(), &args.plugin_home, &mut f).await;
    check_clients(&mut f);
    check_precise(&mut f);
    let width = f.0.iter().map(|x| x.area.len()).max().unwrap_or(0);
    for x in &f.0 {
        let tag = match x.level {
            Level::Ok => "ok  ",
            Level::Warn => "warn",
            Level::Fail => "FAIL",
        };
        println!("{tag}  {:<width$}  {}", x.area, x.text);
    }
    let (fails, warns) = (f.count(Level::Fail), f.count(Level::Warn));
    if fails > 0 {
        bail!(
            "doctor found {fails} problem(s) and {warns} warning(s); each FAIL line says what to do"
        );
    }
    println!("healthy ({warns} warning(s))");
    Ok(())
}

/// Which SCIP indexers precise mode finds (ADR 0018), and how to install the missing
/// ones. A missing indexer is a warning: answers for that language stay heuristic.
fn check_precise(f: &mut Findings) {
    use scryer_engine::precise::{Detection, PreciseLanguage, PreciseMode, detect};
    if PreciseMode::from_env() == PreciseMode::Off {
        f.ok(
            "precise",
            "off (SCRYER_PRECISE=off): answers come from the tree-sitter index only",
        );
        return;
    }
    for language in PreciseLanguage::ALL {
        let area = format!("precise {}", language.name());
        match detect(language) {
            Detection::Found(i) => f.ok(area, format!("{} ({})", i.command.join(" "), i.version)),
            Detection::Missing { reason, .. } => f.warn(
                area,
                format!(
                    "{reason}; {} answers stay heuristic until it is installed",
                    language.name()
                ),
            ),
        }
    }
}

/// The running daemon of this database, if any; returns its pid.
async fn check_daemon(db: &Path, f: &mut Findings) -> Option<u32> {
    let paths = match RunPaths::for_db(db) {
        Ok(p) => p,
        Err(e) => {
            f.fail(
                "daemon",
                format!("no usable run directory ({e:#}); set SCRYER_RUN_DIR to a private directory of yours"),
            );
            return None;
        }
    };
    let reply =
        tokio::time::timeout(Duration::from_secs(5), daemon::request(&paths, Op::Status)).await;
    match reply {
        Ok(Ok(None)) => {
            f.ok(
                "daemon",
                format!(
                    "not running (socket {}); the first `scryer serve` starts it",
                    paths.socket.display()
                ),
            );
            None
        }
        Ok(Ok(Some(reply))) => match reply.status {
            Some(s) if reply.ok => {
                let text = format!(
                    "running: pid {}, {} session(s) now, {} since start, up {} s, exits after {} s idle; log {}",
                    s.pid,
                    s.sessions,
                    s.sessions_total,
                    s.uptime_s,
                    s.idle_exit_s,
                    paths.log.display()
                );
                if s.build != daemon::build_id() {
                    f.warn(
                        "daemon",
                        format!(
                            "{text}; started by another build ({}): `scryer daemon stop` so the next session starts this one",
                            s.build
                        ),
                    );
                } else {
                    f.ok("daemon", text);
                }
                Some(s.pid)
            }
            _ => {
                f.fail(
                    "daemon",
                    format!(
                        "the daemon at {} refused a status request ({}); `scryer daemon stop`, then start a session again",
                        paths.socket.display(),
                        reply.error.unwrap_or_else(|| "no reason given".into())
                    ),
                );
                daemon::lock_holder(&paths)
            }
        },
        Ok(Err(e)) => {
            f.fail(
                "daemon",
                format!(
                    "the socket {} does not answer ({e:#}); `scryer daemon stop`, or remove the socket if no daemon runs",
                    paths.socket.display()
                ),
            );
            daemon::lock_holder(&paths)
        }
        Err(_) => {
            f.fail(
                "daemon",
                format!(
                    "the daemon at {} did not answer within 5 s; it may be stuck: `scryer daemon stop` (or kill pid {})",
                    paths.socket.display(),
                    daemon::lock_holder(&paths).map_or("?".to_string(), |p| p.to_string())
                ),
            );
            daemon::lock_holder(&paths)
        }
    }
}

async fn check_database(db: &Path, daemon_pid: Option<u32>, f: &mut Findings) {
    const AREA: &str = "database";
    if let Some(holder) = lock_holder(db) {
        if Some(holder.pid) == daemon_pid {
            f.ok(
                AREA,
                format!(
                    "{} is open in the scryer daemon (pid {}); its contents were not read",
                    db.display(),
                    holder.pid
                ),
            );
        } else {
            f.warn(AREA, held_message(db, &holder));
        }
        return;
    }
    let opened = match open_existing(db).await {
        Ok(Some(opened)) => opened,
        Ok(None) => {
            f.ok(
                AREA,
                format!(
                    "no database yet at {}; `scryer serve` creates it",
                    db.display()
                ),
            );
            return;
        }
        Err(e) => {
            f.fail(
                AREA,
                format!(
                    "{} does not open ({e:#}); move it away and index again (the index is rebuilt from the sources)",
                    db.display()
                ),
            );
            return;
        }
    };
    let projects = match opened.projects().await {
        Ok(p) => p,
        Err(e) => {
            f.fail(
                AREA,
                format!(
                    "{} opens but its projects do not read ({e:#}); move it away and index again",
                    db.display()
                ),
            );
            return;
        }
    };
    f.ok(
        AREA,
        format!(
            "{}: schema version {}, {} project(s)",
            db.display(),
            scryer_db::SCHEMA_VERSION,
            projects.len()
        ),
    );
    for p in &projects {
        let area = format!("project {}", p.slug);
        if !Path::new(&p.root).is_dir() {
            f.warn(
                area,
                format!(
                    "its root {} is gone; delete_project(\"{}\") drops the index",
                    p.root, p.slug
                ),
            );
        } else if let Some(e) = &p.last_error {
            f.warn(
                area,
                format!(
                    "the last index run failed ({e}); index_workspace(\"{}\") retries",
                    p.root
                ),
            );
        } else if !p.index_complete {
            f.warn(
                area,
                "its index run did not finish; the next server start finishes it".to_string(),
            );
        }
    }
}

/// Databases set aside as damaged (ADR 0025): what happened, where the file is kept.
fn check_kept_aside(db: &Path, f: &mut Findings) {
    for (kept, why) in scryer_db::kept_aside(db) {
        f.warn(
            "database",
            format!(
                "an earlier database {why}: it was kept at {} and a fresh index was built; \
                 delete it (and its .why note) once you no longer need it",
                kept.display()
            ),
        );
    }
}

fn check_compile_cache(dir: Option<&Path>, f: &mut Findings) {
    const AREA: &str = "compile cache";
    let Some(dir) = dir else {
        f.ok(
            AREA,
            "off (--no-compile-cache): routers compile on every start",
        );
        return;
    };
    if !dir.exists() {
        f.ok(
            AREA,
            format!(
                "{} does not exist yet; the first start creates it",
                dir.display()
            ),
        );
        return;
    }
    if !dir.is_dir() {
        f.fail(
            AREA,
            format!(
                "{} is not a directory; remove it or pass --compile-cache DIR",
                dir.display()
            ),
        );
        return;
    }
    let probe = dir.join(format!(".doctor-{}", std::process::id()));
    if let Err(e) = std::fs::write(&probe, b"") {
        f.fail(
            AREA,
            format!(
                "{} is not writable ({e}); `chmod 700 {}`, or pass --compile-cache DIR",
                dir.display(),
                dir.display()
            ),
        );
        return;
    }
    let _ = std::fs::remove_file(&probe);
    let (mut entries, mut bytes) = (0u64, 0u64);
    if let Ok(list) = std::fs::read_dir(dir) {
        for e in list.flatten() {
            if e.path().extension().is_some_and(|x| x == "cwasm") {
                entries += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    let summary = format!(
        "{}: writable, {entries} compiled router(s), {:.1} MiB",
        dir.display(),
        bytes as f64 / (1 << 20) as f64
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dir)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0o700);
    if mode & 0o022 != 0 {
        f.warn(
            AREA,
            format!(
                "{summary}; others may write it (mode {mode:o}): `chmod 700 {}` (the server does so at start)",
                dir.display()
            ),
        );
    } else {
        f.ok(AREA, summary);
    }
}

/// Loads every built-in router and every installed plugin as `serve` would (same
/// compile cache, limits and policy), under the offline host: no database needed, so a
/// daemon holding it does not matter.
async fn check_plugins(compile_cache: Option<PathBuf>, home: &PluginHome, f: &mut Findings) {
    const AREA: &str = "plugins";
    let limits = match Limits::from_env() {
        Ok(l) => l,
        Err(e) => {
            f.fail(AREA, format!("the plugin limits do not parse: {e}"));
            return;
        }
    };
    let cache = match compile_cache.map(CompileCache::open).transpose() {
        Ok(c) => c,
        Err(e) => {
            f.fail(
                AREA,
                format!("the compile cache does not open ({e:#}); pass --compile-cache DIR or --no-compile-cache"),
            );
            return;
        }
    };
    let runtime = match Runtime::new(limits, cache, Arc::new(OfflineHost)) {
        Ok(r) => r,
        Err(e) => {
            f.fail(
                AREA,
                format!(
                    "the plugin runtime does not start ({e:#}); check the SCRYER_PLUGIN_* variables"
                ),
            );
            return;
        }
    };
    let mut loaded = Vec::new();
    let mut lines = Vec::new();
    for (label, grant_set, wasm) in scryer_builtin_plugins::routers() {
        let area = format!("plugin {label}");
        let Some(grants) = Grants::for_set(grant_set) else {
            lines.push((
                Level::Fail,
                area,
                format!(
                    "names an unknown grant set `{grant_set}`; this build is broken, rebuild scryer"
                ),
            ));
            continue;
        };
        let precompiled = crate::builtin_precompiled(label);
        match runtime
            .load_with(label, &wasm, precompiled.as_ref(), grants)
            .await
        {
            Ok(p) => {
                lines.push((Level::Ok, area, loaded_line(&p)));
                loaded.push(p);
            }
            Err(e) => lines.push((
                Level::Fail,
                area,
                format!("does not load: {e}; rebuild scryer (a corrupt cache entry is recompiled by itself)"),
            )),
        }
    }
    let builtin = scryer_builtin_plugins::names().count();
    if loaded.len() < builtin {
        f.fail(
            AREA,
            format!(
                "{} of {builtin} built-in routers do not load, so `scryer serve` cannot start; rebuild scryer",
                builtin - loaded.len()
            ),
        );
        for (level, area, text) in lines {
            f.push(level, area, text);
        }
        return;
    }
    let installed = home.load_all(&runtime).await;
    for problem in &installed.problems {
        lines.push((
            Level::Fail,
            "installed plugins".to_string(),
            format!("{problem}; fix it, or `scryer plugin remove` the plugin it names"),
        ));
    }
    let registry = match Registry::with_installed(loaded, installed) {
        Ok(r) => r,
        Err(e) => {
            f.fail(
                AREA,
                format!("the routers do not fit together: {e}; rebuild scryer"),
            );
            return;
        }
    };
    for s in registry
        .statuses()
        .iter()
        .filter(|s| s.origin == Origin::Installed)
    {
        lines.extend(installed_lines(s));
    }
    lines.extend(running_lines(&ServingReport::running(home)));
    f.ok(
        AREA,
        format!(
            "{} plugin(s) loaded ({builtin} built in), {} tool(s) served",
            registry.plugins().len(),
            registry.tool_names().len()
        ),
    );
    for (level, area, text) in lines {
        f.push(level, area, text);
    }
}

/// The lines of one installed plugin: how it loaded, then what the operator should know
/// (an upgrade waiting for grants, a refused replacement next to the version kept).
fn installed_lines(s: &PluginStatus) -> Vec<(Level, String, String)> {
    let area = format!("plugin {} (installed)", s.name);
    let mut lines = vec![match (&s.status, &s.plugin) {
        (Status::Refused(why), _) => (Level::Fail, area.clone(), format!("not loaded: {why}")),
        (Status::Replaced { by }, _) => (
            Level::Ok,
            area.clone(),
            format!("loaded, but `{by}` took over all its tools"),
        ),
        (_, Some(p)) => (Level::Ok, area.clone(), loaded_line(p)),
        (_, None) => (Level::Fail, area.clone(), "not loaded".to_string()),
    }];
    for note in [&s.note, &s.held_back].into_iter().flatten() {
        lines.push((Level::Warn, area.clone(), note.clone()));
    }
    lines
}

/// Notes of running servers (their serving reports): a server keeps a loaded version
/// when its replacement is refused, which a check from the files alone cannot see.
fn running_lines(reports: &[ServingReport]) -> Vec<(Level, String, String)> {
    let mut lines = Vec::new();
    for report in reports {
        for p in &report.plugins {
            let Some(note) = &p.note else { continue };
            let serving = match &p.serving {
                Some(v) => format!("serves {v}"),
                None => "serves nothing".to_string(),
            };
            lines.push((
                Level::Warn,
                format!("plugin {} (installed)", p.name),
                format!(
                    "the running server (pid {}, database {}) {serving}: {note}",
                    report.pid, report.database
                ),
            ));
        }
    }
    lines
}

fn loaded_line(p: &Plugin) -> String {
    let how = match p.cache_outcome {
        CacheOutcome::Embedded => "code built into the binary",
        CacheOutcome::Hit => "from the compile cache",
        CacheOutcome::Miss => "compiled and cached",
        CacheOutcome::Rejected => "cache entry was corrupt; recompiled",
        CacheOutcome::Disabled => "compiled, no cache",
    };
    let unused = p
        .precompiled_unused
        .as_ref()
        .map(|why| format!(" (its built-in code was not used: {why})"))
        .unwrap_or_default();
    format!(
        "{} {}: {} tool(s), {how}{unused}, {} ms",
        p.name(),
        p.description.version,
        p.description.tools.len(),
        p.load_time.as_millis()
    )
}

/// What a client's configuration says about scryer.
#[derive(Debug, PartialEq, Eq)]
enum EntryState {
    NoFile,
    NoEntry,
    Malformed(String),
    Entry {
        command: Option<String>,
        args: Vec<String>,
    },
}

fn read_entry(client: Client, path: &Path) -> EntryState {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return EntryState::NoFile,
        Err(e) => return EntryState::Malformed(format!("{} does not read: {e}", path.display())),
    };
    if client == Client::Codex {
        let doc = match parse_toml_config(path, &text) {
            Ok(d) => d,
            Err(e) => return EntryState::Malformed(format!("{e:#}")),
        };
        let Some(entry) = doc.get("mcp_servers").and_then(|s| s.get(ENTRY)) else {
            return EntryState::NoEntry;
        };
        let args = entry
            .get("args")
            .and_then(|a| a.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        EntryState::Entry {
            command: entry
                .get("command")
                .and_then(|c| c.as_str())
                .map(str::to_string),
            args,
        }
    } else {
        let root = match parse_json_config(path, &text) {
            Ok(r) => r,
            Err(e) => return EntryState::Malformed(format!("{e:#}")),
        };
        let Some(entry) = root.get("mcpServers").and_then(|s| s.get(ENTRY)) else {
            return EntryState::NoEntry;
        };
        let args = match entry.get("args") {
            Some(Json::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        EntryState::Entry {
            command: entry
                .get("command")
                .and_then(Json::as_str)
                .map(str::to_string),
            args,
        }
    }
}

/// Whether `path` names an existing executable file.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn check_clients(f: &mut Findings) {
    let home = match home_dir() {
        Ok(h) => h,
        Err(e) => {
            f.warn("clients", format!("{e:#}; client entries not checked"));
            return;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let this = std::env::current_exe()
        .ok()
        .map(|p| p.canonicalize().unwrap_or(p));
    let mut configured = 0;
    for client in CLIENTS {
        for project in [false, true] {
            let path = client.config_path(project, &home, &cwd);
            let scope = if project { " (project)" } else { "" };
            let area = format!("{}{scope}", client.name());
            let init = format!(
                "scryer init --client {}{}",
                client.name(),
                if project { " --project" } else { "" }
            );
            match read_entry(client, &path) {
                // Project files are optional; a missing user file is worth a hint.
                EntryState::NoFile if project => {}
                EntryState::NoFile => f.ok(
                    area,
                    format!("{} does not exist; `{init}` adds scryer", path.display()),
                ),
                EntryState::NoEntry => f.ok(
                    area,
                    format!(
                        "{} has no {} entry; `{init}` adds it",
                        path.display(),
                        client.entry_location()
                    ),
                ),
                EntryState::Malformed(why) => {
                    f.fail(area, format!("{why} (the client cannot read it either)"))
                }
                EntryState::Entry { command, args } => {
                    configured += 1;
                    let at = format!("{} {}", path.display(), client.entry_location());
                    match command {
                        None => f.fail(area, format!("{at} has no command; run `{init}`")),
                        Some(cmd) if !executable(Path::new(&cmd)) => f.fail(
                            area,
                            format!(
                                "{at} runs {cmd}, which {}; run `{init}` to point it at this binary",
                                if Path::new(&cmd).exists() { "is not executable" } else { "does not exist" }
                            ),
                        ),
                        Some(_) if args.first().map(String::as_str) != Some("serve") => f.fail(
                            area,
                            format!("{at} runs with args {args:?}, not [\"serve\"]; run `{init}`"),
                        ),
                        Some(cmd) => {
                            let same = this.as_deref().is_some_and(|t| {
                                Path::new(&cmd).canonicalize().is_ok_and(|c| c == t)
                            });
                            if same {
                                f.ok(area, format!("{at} runs this binary ({cmd})"));
                            } else {
                                f.warn(
                                    area,
                                    format!(
                                        "{at} runs {cmd}, not this binary ({}); `{init}` switches it",
                                        this.as_deref().map_or("?".into(), |t| t.display().to_string())
                                    ),
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    if configured == 0 {
        f.warn(
            "clients",
            "no client runs scryer yet: `scryer init --client claude-code|cursor|codex`",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_read_from_json_and_toml() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("mcp.json");
        std::fs::write(
            &json,
            r#"{"mcpServers": {"scryer": {"command": "/bin/sh", "args": ["serve"]}}}"#,
        )
        .unwrap();
        assert_eq!(
            read_entry(Client::Cursor, &json),
            EntryState::Entry {
                command: Some("/bin/sh".into()),
                args: vec!["serve".into()]
            }
        );
        let toml = dir.path().join("config.toml");
        std::fs::write(&toml, "[mcp_servers.other]\ncommand = \"x\"\n").unwrap();
        assert_eq!(read_entry(Client::Codex, &toml), EntryState::NoEntry);
        std::fs::write(
            &toml,
            "[mcp_servers.scryer]\ncommand = \"/x\"\nargs = [\"serve\"]\n",
        )
        .unwrap();
        assert!(
            matches!(read_entry(Client::Codex, &toml), EntryState::Entry { command: Some(c), .. } if c == "/x")
        );
        std::fs::write(&toml, "[mcp_servers.scryer\n").unwrap();
        assert!(
            matches!(read_entry(Client::Codex, &toml), EntryState::Malformed(m) if m.contains("line 1"))
        );
        assert_eq!(
            read_entry(Client::Codex, &dir.path().join("none")),
            EntryState::NoFile
        );
    }

    #[test]
    fn the_compile_cache_check_counts_entries_and_refuses_a_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.cwasm"), vec![0u8; 1024]).unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        let mut f = Findings::default();
        check_compile_cache(Some(dir.path()), &mut f);
        assert_eq!(f.0[0].level, Level::Ok, "{:?}", f.0);
        assert!(f.0[0].text.contains("1 compiled router(s)"), "{:?}", f.0);
        let file = dir.path().join("notes.txt");
        let mut f = Findings::default();
        check_compile_cache(Some(&file), &mut f);
        assert_eq!(f.0[0].level, Level::Fail);
        assert!(f.0[0].text.contains("--compile-cache"), "{:?}", f.0);
    }

    fn installed(status: Status, note: Option<&str>, held_back: Option<&str>) -> PluginStatus {
        PluginStatus {
            name: "greeter".into(),
            origin: Origin::Installed,
            version: Some("0.2.0".into()),
            grants: Grants::new([]),
            status,
            held_back: held_back.map(String::from),
            plugin: None,
            replaces: None,
            note: note.map(String::from),
        }
    }

    #[test]
    fn an_installed_plugin_shows_why_a_version_was_kept_and_what_waits() {
        let kept = installed_lines(&installed(
            Status::Loaded,
            Some("its replacement was refused, so the loaded 0.2.0 keeps serving: bad bytes"),
            None,
        ));
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert_eq!(kept[1].0, Level::Warn);
        assert_eq!(kept[1].1, "plugin greeter (installed)");
        assert!(kept[1].2.contains("keeps serving: bad bytes"), "{kept:?}");

        let both = installed_lines(&installed(
            Status::Loaded,
            Some("kept"),
            Some("0.3.0 waits for grants"),
        ));
        let texts: Vec<&str> = both[1..].iter().map(|l| l.2.as_str()).collect();
        assert_eq!(texts, ["kept", "0.3.0 waits for grants"]);

        let refused = installed_lines(&installed(Status::Refused("clash".into()), None, None));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].0, Level::Fail);
        assert_eq!(refused[0].2, "not loaded: clash");
    }

    #[test]
    fn running_servers_notes_are_shown_and_plain_serving_is_not() {
        let report = ServingReport {
            pid: 42,
            database: "/tmp/index.db".into(),
            plugins: vec![
                scryer_server::ServingPlugin {
                    name: "greeter".into(),
                    serving: Some("0.2.0".into()),
                    note: Some("its replacement was refused".into()),
                },
                scryer_server::ServingPlugin {
                    name: "quiet".into(),
                    serving: Some("1.0.0".into()),
                    note: None,
                },
                scryer_server::ServingPlugin {
                    name: "broken".into(),
                    serving: None,
                    note: Some("not a component".into()),
                },
            ],
            loaded: Vec::new(),
        };
        let lines = running_lines(&[report]);
        let texts: Vec<(&str, &str)> = lines.iter().map(|l| (l.1.as_str(), l.2.as_str())).collect();
        assert_eq!(
            texts,
            [
                (
                    "plugin greeter (installed)",
                    "the running server (pid 42, database /tmp/index.db) serves 0.2.0: its replacement was refused"
                ),
                (
                    "plugin broken (installed)",
                    "the running server (pid 42, database /tmp/index.db) serves nothing: not a component"
                ),
            ]
        );
        assert!(lines.iter().all(|l| l.0 == Level::Warn));
    }

    #[test]
    fn executables_are_files_with_an_execute_bit() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"").unwrap();
        assert!(!executable(&plain));
        assert!(!executable(dir.path()));
        assert!(!executable(&dir.path().join("missing")));
        assert!(executable(Path::new("/bin/sh")));
    }
}
