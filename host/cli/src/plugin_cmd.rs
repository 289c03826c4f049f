//! `scryer plugin list | add | remove | grant | verify` (and, in `shadow_cmd.rs`, `add
//! --shadow | promote | drop | shadow-report`): the operator's side of the
//! plugin platform (ADR 0007, docs/plugins.md); `scryer plugin new`: the author's start.
//!
//! These commands never open the database: plugins are compiled and described under
//! [`OfflineHost`], so they work while a server holds the database.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use scryer_runtime::installed::{PluginHome, missing_grants_message, ungrantable_message};
use scryer_runtime::manifest::Manifest;
use scryer_runtime::policy::{self, Placement, PluginPolicy};
use scryer_runtime::receipt::{Receipt, now_unix, sha256_hex};
use scryer_runtime::{
    CacheOutcome, CompileCache, Grants, Limits, OfflineHost, Plugin, Requirements, Runtime,
};
use scryer_server::{Origin, PluginStatus, Registry, ServingReport, Status};

#[path = "plugin_template/mod.rs"]
mod plugin_template;

#[derive(Subcommand)]
pub enum PluginCommand {
    /// List built-in and installed plugins: tools, grants, and whether each is loaded
    /// (and if not, why).
    List {
        /// An extra router component to load, as `serve --plugin` would.
        #[arg(long = "plugin", value_name = "FILE.wasm")]
        plugins: Vec<PathBuf>,
    },
    /// Install a plugin: check its bytes, imports and tools against the policy, then
    /// publish it with a receipt of its sha256.
    Add {
        file: PathBuf,
        /// Capabilities to grant it (comma-separated: index-read,tokens).
        #[arg(long, value_delimiter = ',', value_name = "CAP,...")]
        grant: Vec<String>,
        /// A built-in router whose tools this plugin takes over.
        #[arg(long, value_name = "ROUTER", conflicts_with = "shadow")]
        replaces: Option<String>,
        /// Install it as a candidate shadow-running beside the plugin serving its tools
        /// (its answers are compared, never sent), to `promote` or `drop` later.
        #[arg(long)]
        shadow: bool,
    },
    /// Swap a shadow candidate in for the plugin it shadows.
    Promote { name: String },
    /// Remove a shadow candidate; the plugin it shadows keeps serving.
    Drop { name: String },
    /// How shadow candidates compare with the plugins they shadow, per tool, in running
    /// servers (differences summarised, never their content).
    ShadowReport,
    /// Uninstall a plugin: delete its file and its policy entry.
    Remove { name: String },
    /// Grant capabilities to an installed plugin (and approve a held-back upgrade once
    /// it has everything it needs).
    Grant {
        name: String,
        /// Capability names (index-read, file-read, tokens, log, ...).
        #[arg(required = true, value_delimiter = ',')]
        capabilities: Vec<String>,
    },
    /// Report what a plugin file needs and whether the policy allows it; changes nothing.
    Verify { file: PathBuf },
    /// Create a router plugin project that builds for wasm32-wasip2 (one example tool).
    New {
        /// The plugin's name: lowercase letters, digits, `-`, `_` (e.g. word-stats).
        name: String,
        /// Where to create it (default: ./<name>); must not exist or be empty.
        #[arg(long, value_name = "PATH")]
        dir: Option<PathBuf>,
        /// The scryer plugin SDK (`plugins/sdk` of a scryer source tree), when it is
        /// not found beside this binary's sources.
        #[arg(long, value_name = "PATH")]
        sdk_path: Option<PathBuf>,
    },
}

/// What the plugin commands need from the global flags.
pub struct Globals {
    pub compile_cache: Option<PathBuf>,
    pub config_dir: Option<PathBuf>,
}

/// The configuration directory: `--config-dir`, `SCRYER_CONFIG_DIR`, else
/// `$XDG_CONFIG_HOME/scryer`.
pub fn config_dir(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf).unwrap_or_else(|| {
        dirs::config_dir()
            .unwrap_or_else(std::env::temp_dir)
            .join("scryer")
    })
}

/// Where installed plugins and their policy live.
pub fn home(flag: Option<&Path>) -> PluginHome {
    PluginHome::new(config_dir(flag))
}

pub async fn run(ctx: &Globals, command: &PluginCommand) -> Result<()> {
    let home = home(ctx.config_dir.as_deref());
    match command {
        PluginCommand::List { plugins } => list(ctx, &home, plugins).await,
        PluginCommand::Add {
            file,
            grant,
            shadow: true,
            ..
        } => crate::shadow_cmd::add(ctx, &home, file, grant).await,
        PluginCommand::Add {
            file,
            grant,
            replaces,
            ..
        } => add(ctx, &home, file, grant, replaces.as_deref()).await,
        PluginCommand::Promote { name } => crate::shadow_cmd::promote(&home, name),
        PluginCommand::Drop { name } => crate::shadow_cmd::drop(&home, name),
        PluginCommand::ShadowReport => crate::shadow_cmd::report(&home),
        PluginCommand::Remove { name } => remove(&home, name),
        PluginCommand::Grant { name, capabilities } => grant(&home, name, capabilities),
        PluginCommand::Verify { file } => verify(ctx, &home, file).await,
        PluginCommand::New {
            name,
            dir,
            sdk_path,
        } => new(name, dir.as_deref(), sdk_path.as_deref()),
    }
}

/// A runtime that describes plugins without a server, and every plugin loaded as
/// `scryer serve` would load them.
pub(crate) async fn offline(
    ctx: &Globals,
    home: &PluginHome,
    extra: &[PathBuf],
) -> Result<(Runtime, Registry)> {
    let limits = Limits::from_env().map_err(anyhow::Error::msg)?;
    let cache = match &ctx.compile_cache {
        Some(dir) => Some(CompileCache::open(dir)?),
        None => None,
    };
    let runtime = Runtime::new(limits, cache, Arc::new(OfflineHost))?;
    let sources = crate::plugin_sources(extra)?;
    let registry = Registry::load(&runtime, sources, Some(home)).await?;
    Ok((runtime, registry))
}

fn how(outcome: CacheOutcome) -> &'static str {
    match outcome {
        CacheOutcome::Embedded => "built into the binary",
        CacheOutcome::Hit => "cache hit",
        CacheOutcome::Miss => "compiled",
        CacheOutcome::Rejected => "corrupt cache entry, recompiled",
        CacheOutcome::Disabled => "compiled, no cache",
    }
}

pub(crate) fn names(g: &Grants) -> String {
    g.names().join(", ")
}

/// One line per plugin (the format `tests/all/compile_cache.rs` reads for host plugins),
/// then an indented line for a held-back upgrade.
fn status_line(s: &PluginStatus) -> String {
    let version = s.version.as_deref().unwrap_or("?");
    let origin = match s.origin {
        Origin::Host => "",
        Origin::Installed => "installed, ",
    };
    let mut line = match (&s.status, &s.plugin) {
        (Status::Refused(why), _) => format!(
            "{} {version}: not loaded [{}] ({origin}refused): {why}",
            s.name,
            names(&s.grants)
        ),
        (_, Some(p)) => {
            let tools: Vec<&str> = p
                .description
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            format!(
                "{} {version}: {} [{}] ({origin}{}, {} ms)",
                s.name,
                tools.join(", "),
                names(&s.grants),
                how(p.cache_outcome),
                p.load_time.as_millis()
            )
        }
        (_, None) => format!("{} {version}: not loaded", s.name),
    };
    if let Status::Replaced { by } = &s.status {
        line.push_str(&format!(
            " — replaced by installed plugin `{by}`, serves nothing"
        ));
    }
    if let Some(r) = &s.replaces
        && s.status == Status::Loaded
    {
        line.push_str(&format!(" — replaces `{r}`"));
    }
    if let Some(note) = &s.held_back {
        line.push_str(&format!("\n  {note}"));
    }
    line
}

async fn list(ctx: &Globals, home: &PluginHome, extra: &[PathBuf]) -> Result<()> {
    let policy_problem = home.read_policy().err();
    let (_, registry) = offline(ctx, home, extra).await?;
    for s in registry.statuses() {
        println!("{}", status_line(s));
    }
    for s in registry.shadows() {
        println!("{}", crate::shadow_cmd::status_line(s));
    }
    if let Some(p) = policy_problem {
        println!("policy: {p}; no installed plugin was loaded");
    }
    for line in running_lines(&registry, &ServingReport::running(home)) {
        println!("{line}");
    }
    Ok(())
}

/// What running servers serve that differs from what a start would load now: a
/// version kept because its replacement was refused, or one not yet swapped.
fn running_lines(registry: &Registry, running: &[ServingReport]) -> Vec<String> {
    let mut lines = Vec::new();
    for report in running {
        for p in &report.plugins {
            let on_disk = registry
                .statuses()
                .iter()
                .find(|s| s.origin == Origin::Installed && s.name == p.name)
                .filter(|s| s.is_serving())
                .and_then(|s| s.plugin.as_ref())
                .map(|pl| pl.description.version.clone());
            let differs = p.serving != on_disk;
            let kept = p.serving.is_some() && p.note.is_some();
            if !differs && !kept {
                continue;
            }
            let serving = match &p.serving {
                Some(v) => format!("serves {} {v}", p.name),
                None => format!("does not serve {}", p.name),
            };
            let note = p
                .note
                .as_deref()
                .map(|n| format!(": {n}"))
                .unwrap_or_default();
            lines.push(format!(
                "running server (pid {}, database {}) {serving}{note}",
                report.pid, report.database
            ));
        }
    }
    lines
}

fn new(name: &str, dir: Option<&Path>, sdk: Option<&Path>) -> Result<()> {
    let created = plugin_template::create(name, dir, sdk)?;
    let dir = created.dir.display();
    println!(
        "created plugin `{name}` in {dir} (tool `{}`; SDK {})",
        created.tool,
        created.sdk.display()
    );
    for f in &created.files {
        println!("  {}", f.display());
    }
    println!(
        "next:\n  cd {dir}\n  cargo build --target wasm32-wasip2 --release\n  \
         cp target/wasm32-wasip2/release/{wasm} {name}.wasm\n  \
         scryer plugin verify {name}.wasm\n  scryer plugin add {name}.wasm --grant tokens",
        wasm = created.wasm
    );
    Ok(())
}

/// A plugin file, compiled, described and checked against its manifest.
pub(crate) struct Candidate {
    pub(crate) wasm: Vec<u8>,
    pub(crate) sha256: String,
    pub(crate) requirements: Requirements,
    imports: Vec<String>,
    pub(crate) plugin: Plugin,
    manifest_notes: Vec<String>,
}

impl Candidate {
    pub(crate) fn name(&self) -> &str {
        self.plugin.name()
    }

    pub(crate) fn tools(&self) -> Vec<String> {
        self.plugin
            .description
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    pub(crate) fn receipt(&self) -> Receipt {
        Receipt {
            sha256: self.sha256.clone(),
            version: self.plugin.description.version.clone(),
            wit: self.requirements.wit_version.clone(),
            needs: self
                .requirements
                .needs
                .names()
                .into_iter()
                .map(String::from)
                .collect(),
            tools: self.tools(),
            approved_at: now_unix(),
        }
    }
}

/// Validates a plugin file: a component that compiles, imports only what capabilities
/// can grant, describes itself under an installable name, and matches its manifest.
pub(crate) async fn inspect(runtime: &Runtime, file: &Path) -> Result<Candidate> {
    let wasm = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let label = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string());
    let compiled = runtime
        .compile(&label, &wasm)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let requirements = compiled.requirements();
    if !requirements.ungrantable.is_empty() {
        bail!(ungrantable_message(&label, &requirements.ungrantable));
    }
    let imports = compiled.imports().to_vec();
    // Described with everything it imports linked to the offline host, which answers
    // no query: describing grants nothing real.
    let plugin = runtime
        .link(&label, compiled, requirements.needs.clone())
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    policy::check_plugin_name(plugin.name()).map_err(anyhow::Error::msg)?;
    let manifest_notes = match Manifest::read_beside(file).map_err(anyhow::Error::msg)? {
        Some(m) => m
            .check(&requirements, &plugin.description)
            .map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    Ok(Candidate {
        sha256: sha256_hex(&wasm),
        wasm,
        requirements,
        imports,
        plugin,
        manifest_notes,
    })
}

pub(crate) fn parse_caps(list: &[String]) -> Result<Grants> {
    Grants::parse_list(&list.join(",")).map_err(anyhow::Error::msg)
}

async fn add(
    ctx: &Globals,
    home: &PluginHome,
    file: &Path,
    grant: &[String],
    replaces: Option<&str>,
) -> Result<()> {
    let extra_grants = parse_caps(grant)?;
    let (runtime, registry) = offline(ctx, home, &[]).await?;
    let cand = inspect(&runtime, file).await?;
    let name = cand.name().to_string();

    let policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let existing = policy.plugins.get(&name);
    let replaces = replaces
        .map(str::to_string)
        .or_else(|| existing.and_then(|e| e.replaces.clone()));
    let upgrading = existing
        .filter(|e| e.receipt.is_some())
        .map(|_| name.as_str());
    let clashes = registry.clashes(&name, &cand.tools(), replaces.as_deref(), upgrading);
    if !clashes.is_empty() {
        bail!(
            "cannot add `{name}` (nothing was changed): {}",
            clashes.join("; ")
        );
    }

    // Validated: nothing was written so far. The entry is computed again under the
    // lock, from the policy as it is now.
    let _lock = home.lock().map_err(anyhow::Error::msg)?;
    let mut policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let existing = policy.plugins.get(&name).cloned();
    let granted = existing
        .as_ref()
        .map(PluginPolicy::granted)
        .unwrap_or_default()
        .union(&extra_grants);
    let placement = policy::placement(existing.as_ref(), &granted, &cand.requirements.needs);
    let mut entry = existing.clone().unwrap_or_default();
    entry.set_granted(&granted);
    entry.replaces = replaces;
    let held_back = matches!(placement, Placement::HeldBack(_));
    if held_back {
        entry.pending = Some(cand.receipt());
    } else {
        entry.receipt = Some(cand.receipt());
        entry.pending = None;
    }
    policy.plugins.insert(name.clone(), entry);
    let dest = home
        .publish(&name, &cand.wasm, held_back, &policy)
        .map_err(|e| anyhow::anyhow!("cannot add `{name}`: {e}"))?;

    for note in &cand.manifest_notes {
        println!("note: {note}");
    }
    let version = &cand.plugin.description.version;
    let tools = cand.tools().join(", ");
    match placement {
        Placement::Current => println!(
            "added {name} {version} (sha256 {}) as {}: tools {tools}; granted [{}]. A running server swaps it in now; it loads at the next start of any other.",
            cand.sha256,
            dest.display(),
            names(&granted)
        ),
        Placement::CurrentUngranted(missing) => println!(
            "added {name} {version} (sha256 {}) as {}, but it will not load: {}",
            cand.sha256,
            dest.display(),
            missing_grants_message(&name, &missing, &cand.imports)
        ),
        Placement::HeldBack(missing) => {
            let old = existing
                .as_ref()
                .and_then(|e| e.receipt.as_ref())
                .map(|r| r.version.clone())
                .unwrap_or_default();
            println!(
                "upgrade of {name} to {version} held back: it needs {} (not granted); {name} {old} keeps serving. \
                 Approve it with `scryer plugin grant {name} {}`",
                names(&missing),
                missing.names().join(" ")
            );
        }
    }
    Ok(())
}

fn installed_names(policy: &policy::Policy) -> String {
    let names: Vec<&str> = policy
        .plugins
        .iter()
        .filter(|(_, e)| e.receipt.is_some() || e.pending.is_some())
        .map(|(n, _)| n.as_str())
        .collect();
    if names.is_empty() {
        "none is installed".into()
    } else {
        format!("installed: {}", names.join(", "))
    }
}

fn not_installed(name: &str, policy: &policy::Policy) -> anyhow::Error {
    let builtin = scryer_builtin_plugins::is_builtin(name);
    if builtin {
        anyhow::anyhow!(
            "`{name}` is a built-in router: its grants are fixed and it cannot be removed; \
             an installed plugin can take over its tools with `scryer plugin add <file> --replaces {name}`"
        )
    } else {
        anyhow::anyhow!(
            "no installed plugin `{name}` ({}); install one with `scryer plugin add <file>`",
            installed_names(policy)
        )
    }
}

fn remove(home: &PluginHome, name: &str) -> Result<()> {
    let _lock = home.lock().map_err(anyhow::Error::msg)?;
    let mut policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let had_entry = policy.plugins.remove(name).is_some();
    let stray = home.wasm_path(name).is_file() || home.pending_path(name).is_file();
    if !had_entry && !stray {
        return Err(not_installed(name, &policy));
    }
    let removed = home.remove(name, &policy).map_err(anyhow::Error::msg)?;
    let files: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
    println!(
        "removed {name}: {}{}",
        if had_entry {
            "its policy entry"
        } else {
            "no policy entry"
        },
        if files.is_empty() {
            String::new()
        } else {
            format!(" and {}", files.join(", "))
        }
    );
    Ok(())
}

fn grant(home: &PluginHome, name: &str, caps: &[String]) -> Result<()> {
    let caps = parse_caps(caps)?;
    let _lock = home.lock().map_err(anyhow::Error::msg)?;
    let mut policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let Some(entry) = policy
        .plugins
        .get_mut(name)
        .filter(|e| e.receipt.is_some() || e.pending.is_some())
    else {
        return Err(not_installed(name, &policy));
    };
    let granted = entry.granted().union(&caps);
    entry.set_granted(&granted);
    let needs = |r: &Option<Receipt>| {
        r.as_ref()
            .map(|r| Grants::parse_list(&r.needs.join(",")).unwrap_or_default())
            .unwrap_or_default()
    };
    let pending_missing = granted.missing(&needs(&entry.pending));
    let promote = entry.pending.is_some() && pending_missing.is_empty();
    if promote {
        let pending = entry.pending.take().expect("checked above");
        let bytes = std::fs::read(home.pending_path(name))
            .with_context(|| format!("reading {}", home.pending_path(name).display()))?;
        pending.check(name, &bytes).map_err(anyhow::Error::msg)?;
        entry.receipt = Some(pending);
    }
    let still_missing = granted.missing(&needs(&entry.receipt));
    let version = entry.receipt.as_ref().map(|r| r.version.clone());
    if promote {
        home.promote(name, &policy).map_err(anyhow::Error::msg)?;
    } else {
        policy
            .write(&home.policy_path())
            .with_context(|| format!("writing {}", home.policy_path().display()))?;
    }
    println!(
        "granted {} to {name}; it now has [{}]",
        names(&caps),
        names(&granted)
    );
    if promote {
        println!(
            "approved the held-back upgrade: {name} {} is now installed",
            version.unwrap_or_default()
        );
    }
    if !still_missing.is_empty() {
        println!(
            "{name} still needs {} to load: `scryer plugin grant {name} {}`",
            names(&still_missing),
            still_missing.names().join(" ")
        );
    } else if !pending_missing.is_empty() {
        println!(
            "its held-back upgrade still needs {}: `scryer plugin grant {name} {}`",
            names(&pending_missing),
            pending_missing.names().join(" ")
        );
    } else {
        println!(
            "{name} has everything it needs; a running server swaps it in now, any other loads it at its next start"
        );
    }
    Ok(())
}

async fn verify(ctx: &Globals, home: &PluginHome, file: &Path) -> Result<()> {
    let (runtime, registry) = offline(ctx, home, &[]).await?;
    let cand = inspect(&runtime, file).await?;
    let name = cand.name();
    let policy = home.read_policy().map_err(anyhow::Error::msg)?;
    let entry = policy.plugins.get(name);
    let granted = entry.map(PluginPolicy::granted).unwrap_or_default();
    let needs = &cand.requirements.needs;
    println!(
        "{name} {} (WIT {}, sha256 {})",
        cand.plugin.description.version,
        cand.requirements
            .wit_version
            .as_deref()
            .unwrap_or("unknown"),
        cand.sha256
    );
    println!("tools: {}", cand.tools().join(", "));
    if needs.is_empty() {
        println!("needs: no capability (only the WASI baseline)");
    } else {
        println!("needs: {}", names(needs));
    }
    println!(
        "granted: {}",
        if granted.is_empty() {
            "nothing".to_string()
        } else {
            names(&granted)
        }
    );
    let installed = entry.and_then(|e| e.receipt.as_ref());
    match installed {
        Some(r) if r.sha256 == cand.sha256 => println!("installed: these exact bytes"),
        Some(r) => println!(
            "installed: version {} with other bytes; adding this file would upgrade it",
            r.version
        ),
        None => println!("installed: no"),
    }
    for note in &cand.manifest_notes {
        println!("note: {note}");
    }
    let replaces = entry.and_then(|e| e.replaces.as_deref());
    let clashes = registry.clashes(name, &cand.tools(), replaces, installed.map(|_| name));
    for c in &clashes {
        println!("clash: {c}");
    }
    let missing = granted.missing(needs);
    if missing.is_empty() && clashes.is_empty() {
        println!("verdict: the policy allows it");
        return Ok(());
    }
    let mut why = Vec::new();
    if !missing.is_empty() {
        why.push(if installed.is_some() {
            missing_grants_message(name, &missing, &cand.imports)
        } else {
            format!(
                "it needs {} not granted; install it with `scryer plugin add {} --grant {}`",
                names(&missing),
                file.display(),
                missing.names().join(",")
            )
        });
    }
    if !clashes.is_empty() {
        why.push(format!("{} tool clash(es)", clashes.len()));
    }
    println!("verdict: the policy does not allow it");
    bail!("`{name}` would not load: {}", why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_dir_flag_wins_over_the_default() {
        assert_eq!(config_dir(Some(Path::new("/x/y"))), PathBuf::from("/x/y"));
        assert!(config_dir(None).ends_with("scryer"));
        assert_eq!(
            home(Some(Path::new("/c"))).policy_path(),
            PathBuf::from("/c/policy.toml")
        );
    }

    fn receipt(bytes: &[u8], needs: &[&str], version: &str) -> Receipt {
        Receipt {
            sha256: sha256_hex(bytes),
            version: version.into(),
            wit: Some("0.1.0".into()),
            needs: needs.iter().map(|s| s.to_string()).collect(),
            tools: vec!["t".into()],
            approved_at: 1,
        }
    }

    /// An installed 1.0 (tokens) with a held-back 2.0 that also needs index-read.
    fn held_back_upgrade() -> (tempfile::TempDir, PluginHome) {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        let mut policy = policy::Policy::default();
        policy.plugins.insert(
            "p".into(),
            PluginPolicy {
                grants: vec!["tokens".into()],
                replaces: None,
                receipt: Some(receipt(b"v1", &["tokens"], "1.0.0")),
                pending: Some(receipt(b"v2", &["tokens", "index-read"], "2.0.0")),
            },
        );
        home.publish("p", b"v1", false, &policy).unwrap();
        home.publish("p", b"v2", true, &policy).unwrap();
        (dir, home)
    }

    #[test]
    fn granting_what_a_held_back_upgrade_needs_installs_it() {
        let (_dir, home) = held_back_upgrade();
        grant(&home, "p", &["log".into()]).unwrap();
        assert_eq!(std::fs::read(home.wasm_path("p")).unwrap(), b"v1");
        assert!(home.read_policy().unwrap().plugins["p"].pending.is_some());

        grant(&home, "p", &["index-read".into()]).unwrap();
        assert_eq!(std::fs::read(home.wasm_path("p")).unwrap(), b"v2");
        assert!(!home.pending_path("p").exists());
        let entry = &home.read_policy().unwrap().plugins["p"];
        assert!(entry.pending.is_none());
        assert_eq!(entry.receipt.as_ref().unwrap().version, "2.0.0");
        assert_eq!(entry.grants, ["index-read", "tokens", "log"]);
    }

    #[test]
    fn a_held_back_upgrade_whose_bytes_changed_is_not_installed() {
        let (_dir, home) = held_back_upgrade();
        std::fs::write(home.pending_path("p"), b"tampered").unwrap();
        let e = grant(&home, "p", &["index-read".into()]).unwrap_err();
        assert!(e.to_string().contains("no longer match its receipt"), "{e}");
        assert_eq!(std::fs::read(home.wasm_path("p")).unwrap(), b"v1");
        let entry = &home.read_policy().unwrap().plugins["p"];
        assert!(entry.pending.is_some() && entry.grants == ["tokens"]);
    }

    #[test]
    fn grant_names_what_is_installed_when_the_plugin_is_not() {
        let (_dir, home) = held_back_upgrade();
        let e = grant(&home, "q", &["tokens".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no installed plugin `q`") && e.contains("installed: p"),
            "{e}"
        );
        let e = grant(&home, "p", &["root".into()]).unwrap_err().to_string();
        assert!(e.contains("\"root\"") && e.contains("index-read"), "{e}");
    }
}
