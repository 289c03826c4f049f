//! The loaded plugins, which one answers each tool, and why any plugin is not serving.
//!
//! Plugins the host is started with (the built-in routers, `--plugin` files) must all
//! load: a failure or a tool declared twice stops the start. Plugins the operator
//! installed (`scryer plugin add`) are loaded one by one; one that is refused, or whose
//! tools clash, is left out with the reason and the rest are served. An installed plugin
//! may take over the tools of a host plugin only when its policy says
//! `replaces = "<that plugin>"`.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Context as _;
use scryer_runtime::installed::{LoadReport, PluginHome};
use scryer_runtime::wit::ToolDefinition;
use scryer_runtime::{Grants, Plugin, Runtime};

use crate::PluginSource;

/// Where a plugin came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Given to the host at start (built-in routers, `--plugin`).
    Host,
    /// Installed by the operator in the plugins directory.
    Installed,
}

/// Whether a plugin serves, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Loaded,
    /// Not serving; the reason names what to do.
    Refused(String),
    /// Every tool it declared was taken over by this installed plugin.
    Replaced {
        by: String,
    },
}

/// One plugin as `scryer plugin list` shows it.
#[derive(Clone)]
pub struct PluginStatus {
    pub name: String,
    pub origin: Origin,
    pub version: Option<String>,
    pub grants: Grants,
    pub status: Status,
    /// An installed plugin's upgrade waiting for grants.
    pub held_back: Option<String>,
    /// The loaded plugin (also for a replaced one, which loaded but serves nothing).
    pub plugin: Option<Arc<Plugin>>,
    /// The host plugin whose tools it may take over.
    pub replaces: Option<String>,
    /// Something the operator should know while it serves (a refused replacement).
    pub note: Option<String>,
}

impl PluginStatus {
    /// Whether it answers tools now (a replaced host plugin serves nothing).
    pub fn is_serving(&self) -> bool {
        self.status == Status::Loaded && self.plugin.is_some()
    }
}

/// An installed plugin as the registry is built from it: what loading it gave, and for
/// a reload the version serving until now.
struct Candidate {
    name: String,
    version: Option<String>,
    grants: Grants,
    held_back: Option<String>,
    replaces: Option<String>,
    outcome: Result<Arc<Plugin>, String>,
    fallback: Option<Arc<Plugin>>,
}

pub struct Registry {
    plugins: Vec<Arc<Plugin>>,
    by_tool: HashMap<String, (usize, ToolDefinition)>,
    /// Each tool's input schema, parsed once at load (arguments are coerced by it on
    /// every call).
    schemas: HashMap<String, serde_json::Value>,
    /// Tool names in load order, for tools/list.
    order: Vec<String>,
    /// Index into `plugins` of each plugin given at start, by name.
    host_plugins: HashMap<String, usize>,
    statuses: Vec<PluginStatus>,
    /// Candidates shadow-running beside the plugins they would replace (ADR 0030).
    shadows: Vec<ShadowStatus>,
}

/// A shadow-run candidate: loaded, or why not.
#[derive(Clone)]
pub struct ShadowStatus {
    pub name: String,
    /// The serving plugin whose tools it shadows.
    pub of: String,
    pub version: String,
    pub outcome: Result<Arc<Plugin>, String>,
}

fn shadow_statuses(loads: Vec<scryer_runtime::installed::ShadowLoad>) -> Vec<ShadowStatus> {
    loads
        .into_iter()
        .map(|l| {
            if let Err(why) = &l.outcome {
                tracing::warn!(candidate = %l.name, "shadow candidate not loaded: {why}");
            }
            ShadowStatus {
                name: l.name,
                of: l.of,
                version: l.version,
                outcome: l.outcome.map(Arc::new),
            }
        })
        .collect()
}

impl Registry {
    /// Fails when two plugins declare the same tool, naming both.
    pub fn new(plugins: Vec<Plugin>) -> Result<Registry, String> {
        Registry::with_installed(plugins, LoadReport::default())
    }

    /// Loads the host's plugins (each must load) and the installed ones (each may be
    /// refused; refusals are logged and kept for `statuses`).
    pub async fn load(
        runtime: &Runtime,
        sources: Vec<PluginSource>,
        home: Option<&PluginHome>,
    ) -> anyhow::Result<Registry> {
        // Each on its own blocking thread: deserializing or compiling is CPU work.
        let loads: Vec<_> = sources
            .into_iter()
            .map(|source| tokio::spawn(load_one(runtime.clone(), source)))
            .collect();
        let mut plugins = Vec::new();
        for load in loads {
            let plugin = load.await.context("loading a plugin")??;
            tracing::info!(
                plugin = plugin.name(),
                tools = plugin.description.tools.len(),
                cache = ?plugin.cache_outcome,
                ms = plugin.load_time.as_millis() as u64,
                "plugin loaded"
            );
            plugins.push(plugin);
        }
        let installed = match home {
            Some(home) => home.load_all(runtime).await,
            None => LoadReport::default(),
        };
        for problem in &installed.problems {
            tracing::warn!("installed plugins: {problem}");
        }
        let registry = Registry::with_installed(plugins, installed).map_err(anyhow::Error::msg)?;
        registry.log_installed();
        Ok(registry)
    }

    /// Logs each installed plugin's outcome: loaded at info, refusals and notes at warn.
    pub(crate) fn log_installed(&self) {
        for s in self
            .statuses
            .iter()
            .filter(|s| s.origin == Origin::Installed)
        {
            match &s.status {
                Status::Loaded => tracing::info!(
                    plugin = %s.name,
                    version = s.version.as_deref().unwrap_or("?"),
                    "installed plugin loaded"
                ),
                Status::Refused(why) => {
                    tracing::warn!(plugin = %s.name, "installed plugin not loaded: {why}")
                }
                Status::Replaced { .. } => {}
            }
            if let Some(note) = &s.note {
                tracing::warn!(plugin = %s.name, "{note}");
            }
            if let Some(note) = &s.held_back {
                tracing::warn!(plugin = %s.name, "{note}");
            }
        }
    }

    /// Builds the registry from the host's plugins (a clash among them is an error) and
    /// the installed ones (a clash or refusal leaves that one out, with the reason).
    pub fn with_installed(plugins: Vec<Plugin>, installed: LoadReport) -> Result<Registry, String> {
        let host = plugins.into_iter().map(Arc::new).collect();
        let shadows = shadow_statuses(installed.shadows);
        let installed = installed
            .plugins
            .into_iter()
            .map(|item| Candidate {
                outcome: item.outcome.map(Arc::new),
                fallback: None,
                name: item.name,
                version: item.version,
                grants: item.grants,
                held_back: item.held_back,
                replaces: item.replaces,
            })
            .collect();
        let mut r = Registry::build(host, installed)?;
        r.shadows = shadows;
        Ok(r)
    }

    /// The registry after the installed plugins were loaded again (hot swap): the host's
    /// plugins stay as they are; each installed plugin takes its new outcome, except that
    /// one refused now while its previous version serves keeps that version serving, with
    /// the refusal recorded, as long as the policy still approves it (its entry has a
    /// receipt and still grants everything the serving version was linked with). A
    /// plugin whose entry is gone (removed) or whose grants were withdrawn stops serving.
    pub fn reloaded(&self, installed: LoadReport) -> Registry {
        let shadows = shadow_statuses(installed.shadows);
        let host: Vec<Arc<Plugin>> = self
            .statuses
            .iter()
            .filter(|s| s.origin == Origin::Host)
            .filter_map(|s| s.plugin.clone())
            .collect();
        let installed = installed
            .plugins
            .into_iter()
            .map(|item| {
                let serving = self.statuses.iter().find(|s| {
                    s.origin == Origin::Installed && s.name == item.name && s.is_serving()
                });
                Candidate {
                    fallback: serving.and_then(|s| s.plugin.clone()).filter(|old| {
                        still_approves(item.version.as_deref(), &item.grants, &old.grants)
                    }),
                    outcome: item.outcome.map(Arc::new),
                    name: item.name,
                    version: item.version,
                    grants: item.grants,
                    held_back: item.held_back,
                    replaces: item.replaces,
                }
            })
            .collect();
        let mut r = Registry::build(host, installed)
            .expect("the host plugins loaded together before, so they still do");
        r.shadows = shadows;
        r
    }

    /// The registry with `host` as the host's plugins (a profile needed more of them,
    /// ADR 0030) and the installed plugins as they are: each keeps its outcome, under
    /// the start rules again (a host plugin loaded now may take back a tool).
    pub(crate) fn with_host(&self, host: Vec<Arc<Plugin>>) -> Result<Registry, String> {
        let installed = self
            .statuses
            .iter()
            .filter(|s| s.origin == Origin::Installed)
            .map(|s| Candidate {
                name: s.name.clone(),
                version: s.version.clone(),
                grants: s.grants.clone(),
                held_back: s.held_back.clone(),
                replaces: s.replaces.clone(),
                outcome: match (&s.status, &s.plugin) {
                    (Status::Refused(why), _) => Err(why.clone()),
                    (_, Some(p)) => Ok(p.clone()),
                    (_, None) => Err("not loaded".into()),
                },
                fallback: None,
            })
            .collect();
        let mut r = Registry::build(host, installed)?;
        r.shadows = self.shadows.clone();
        Ok(r)
    }

    /// The host's plugins as loaded, in load order.
    pub(crate) fn host_loaded(&self) -> Vec<Arc<Plugin>> {
        self.statuses
            .iter()
            .filter(|s| s.origin == Origin::Host)
            .filter_map(|s| s.plugin.clone())
            .collect()
    }

    fn build(host: Vec<Arc<Plugin>>, installed: Vec<Candidate>) -> Result<Registry, String> {
        let mut r = Registry {
            plugins: Vec::new(),
            by_tool: HashMap::new(),
            schemas: HashMap::new(),
            order: Vec::new(),
            host_plugins: HashMap::new(),
            statuses: Vec::new(),
            shadows: Vec::new(),
        };
        for p in host {
            let schemas = parse_schemas(&p)?;
            if let Some(clash) = p
                .description
                .tools
                .iter()
                .find_map(|t| r.by_tool.get(&t.name).map(|(i, _)| (t, *i)))
            {
                return Err(format!(
                    "tool `{}` is declared by both plugin `{}` and plugin `{}`; remove one of them",
                    clash.0.name,
                    r.plugins[clash.1].name(),
                    p.name()
                ));
            }
            r.host_plugins.insert(p.name().to_string(), r.plugins.len());
            r.statuses.push(PluginStatus {
                name: p.name().to_string(),
                origin: Origin::Host,
                version: Some(p.description.version.clone()),
                grants: p.grants.clone(),
                status: Status::Loaded,
                held_back: None,
                plugin: Some(p.clone()),
                replaces: None,
                note: None,
            });
            r.add_tools(p, schemas);
        }
        for item in installed {
            let mut status = PluginStatus {
                name: item.name,
                origin: Origin::Installed,
                version: item.version,
                grants: item.grants,
                status: Status::Loaded,
                held_back: item.held_back,
                plugin: None,
                replaces: item.replaces,
                note: None,
            };
            let refusal = match item.outcome {
                Err(why) => why,
                Ok(p) => match r.admit(&p, status.replaces.as_deref()) {
                    Ok(schemas) => {
                        status.plugin = Some(p.clone());
                        r.add_tools(p, schemas);
                        r.statuses.push(status);
                        continue;
                    }
                    Err(why) => why,
                },
            };
            // Hot swap: the version already serving goes on serving when its
            // replacement is refused (it was admitted before, and nothing it clashes
            // with can have appeared without being refused itself).
            if let Some(old) = item.fallback
                && let Ok(schemas) = r.admit(&old, status.replaces.as_deref())
            {
                let version = old.description.version.clone();
                status.note = Some(format!(
                    "its replacement was refused, so the loaded {version} keeps serving: {refusal}"
                ));
                status.version = Some(version);
                status.grants = old.grants.clone();
                status.plugin = Some(old.clone());
                r.add_tools(old, schemas);
            } else {
                status.status = Status::Refused(refusal);
            }
            r.statuses.push(status);
        }
        // A host plugin all of whose tools were taken over serves nothing.
        for i in 0..r.statuses.len() {
            let s = &r.statuses[i];
            if s.origin != Origin::Host {
                continue;
            }
            let Some(plugin) = s.plugin.clone() else {
                continue;
            };
            let taken_by: Vec<usize> = plugin
                .description
                .tools
                .iter()
                .filter_map(|t| r.by_tool.get(&t.name).map(|(j, _)| *j))
                .collect();
            let own = r.host_plugins.get(plugin.name()).copied();
            if !taken_by.is_empty() && taken_by.iter().all(|j| Some(*j) != own) {
                r.statuses[i].status = Status::Replaced {
                    by: r.plugins[taken_by[0]].name().to_string(),
                };
            }
        }
        Ok(r)
    }

    /// Whether an installed plugin may join the loaded ones: its tools' schemas, parsed,
    /// or why not (a clash, a schema strict clients reject).
    fn admit(
        &self,
        p: &Arc<Plugin>,
        replaces: Option<&str>,
    ) -> Result<Vec<serde_json::Value>, String> {
        let tools: Vec<String> = p.description.tools.iter().map(|t| t.name.clone()).collect();
        let mut problems = self.clashes(p.name(), &tools, replaces, None);
        let schemas = parse_schemas(p).map_err(|e| problems.push(e));
        match schemas {
            Ok(s) if problems.is_empty() => Ok(s),
            _ => Err(problems.join("; ")),
        }
    }

    /// Registers `p`'s tools; a tool already present (taken over under `replaces`) keeps
    /// its place in the list and answers from `p` from now on.
    fn add_tools(&mut self, p: Arc<Plugin>, schemas: Vec<serde_json::Value>) {
        let index = self.plugins.len();
        for (t, schema) in p.description.tools.iter().zip(schemas) {
            if self
                .by_tool
                .insert(t.name.clone(), (index, t.clone()))
                .is_none()
            {
                self.order.push(t.name.clone());
            }
            self.schemas.insert(t.name.clone(), schema);
        }
        self.plugins.push(p);
    }

    /// Why a plugin named `name` declaring `tools` could not join the loaded ones (empty:
    /// it can). A loaded plugin of the same name is ignored when `upgrading` names it,
    /// since the newcomer would take its place; a host plugin's tools may be taken over
    /// only by a plugin whose policy `replaces` it.
    pub fn clashes(
        &self,
        name: &str,
        tools: &[String],
        replaces: Option<&str>,
        upgrading: Option<&str>,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(r) = replaces
            && !self.host_plugins.contains_key(r)
        {
            let mut known: Vec<&str> = self.host_plugins.keys().map(String::as_str).collect();
            known.sort_unstable();
            problems.push(format!(
                "`replaces = \"{r}\"` names no built-in router; accepted: {}",
                known.join(", ")
            ));
        }
        if self.host_plugins.contains_key(name) && replaces != Some(name) {
            problems.push(format!(
                "the name `{name}` is taken by a built-in router; add it with `--replaces {name}` to take that router's place"
            ));
        }
        for tool in tools {
            let Some((i, _)) = self.by_tool.get(tool) else {
                continue;
            };
            let owner = self.plugins[*i].name();
            let owner_is_host = self.host_plugins.get(owner) == Some(i);
            if let Some(p) = tool_clash(tool, owner, owner_is_host, name, replaces, upgrading) {
                problems.push(p);
            }
        }
        problems
    }

    /// The candidate shadow-running beside the plugin answering `tool`, when one is
    /// loaded and declares it.
    pub fn shadow_for(&self, tool: &str) -> Option<&Arc<Plugin>> {
        let (owner, _) = self.tool(tool)?;
        self.shadows.iter().find_map(|s| {
            let p = s.outcome.as_ref().ok()?;
            (s.of == owner.name() && p.description.tools.iter().any(|t| t.name == tool))
                .then_some(p)
        })
    }

    /// Every shadow-run candidate, loaded or not.
    pub fn shadows(&self) -> &[ShadowStatus] {
        &self.shadows
    }

    /// The parsed input schema of a loaded tool.
    pub fn schema(&self, name: &str) -> Option<&serde_json::Value> {
        self.schemas.get(name)
    }

    pub fn tool(&self, name: &str) -> Option<(&Arc<Plugin>, &ToolDefinition)> {
        self.by_tool.get(name).map(|(i, t)| (&self.plugins[*i], t))
    }

    /// Every tool, in plugin load order.
    pub fn tools(&self) -> impl Iterator<Item = (&Arc<Plugin>, &ToolDefinition)> {
        self.order.iter().filter_map(|n| self.tool(n))
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.order.iter().map(String::as_str).collect()
    }

    /// Every loaded plugin, including host plugins whose tools were all taken over.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// Every plugin the host was given or found installed, loaded or not, with why not.
    pub fn statuses(&self) -> &[PluginStatus] {
        &self.statuses
    }
}

/// Compiles (or deserializes) one plugin the host was given, then links and describes it.
pub(crate) async fn load_one(runtime: Runtime, source: PluginSource) -> anyhow::Result<Plugin> {
    let PluginSource {
        label,
        wasm,
        grants,
        precompiled,
    } = source;
    let compiler = runtime.clone();
    let compile_label = label.clone();
    let compiled = tokio::task::spawn_blocking(move || {
        // Code built into the binary that fits this engine needs no component bytes;
        // should it not load after all, the component is compiled as any other.
        if let Some(p) = precompiled
            .as_ref()
            .filter(|p| compiler.precompiled_usable(p))
            && let Ok(compiled) = compiler.compile_precompiled(&compile_label, p)
        {
            return Ok(compiled);
        }
        let wasm = wasm.get(&compile_label);
        compiler.compile_with(&compile_label, &wasm, precompiled.as_ref())
    })
    .await
    .context("compiling a plugin")?
    .with_context(|| format!("loading plugin {label}"))?;
    runtime
        .link(&label, compiled, grants)
        .await
        .with_context(|| format!("loading plugin {label}"))
}

/// Whether a policy entry (`receipt_version`: its receipt's version, None without a
/// receipt; `granted`: its grants) still approves a loaded version linked with
/// `linked`: it must be approved at all, and nothing it was linked with withdrawn.
fn still_approves(receipt_version: Option<&str>, granted: &Grants, linked: &Grants) -> bool {
    receipt_version.is_some() && granted.missing(linked).is_empty()
}

/// Why `name` may not declare `tool`, already declared by `owner` (None: it may). A host
/// plugin's tool may be taken over by a plugin that `replaces` it; an installed plugin's
/// tools by its own upgrade.
fn tool_clash(
    tool: &str,
    owner: &str,
    owner_is_host: bool,
    name: &str,
    replaces: Option<&str>,
    upgrading: Option<&str>,
) -> Option<String> {
    if owner_is_host && replaces == Some(owner) {
        return None;
    }
    if !owner_is_host && upgrading == Some(owner) {
        return None;
    }
    let fix = if owner_is_host {
        format!(
            "remove one of them, or let `{name}` take over the built-in router with `replaces = \"{owner}\"` (`scryer plugin add <file> --replaces {owner}`)"
        )
    } else {
        "remove one of them".to_string()
    };
    Some(format!(
        "tool `{tool}` is declared by both plugin `{owner}` and plugin `{name}`; {fix}"
    ))
}

/// Each tool's schema, parsed and checked for portability.
fn parse_schemas(p: &Plugin) -> Result<Vec<serde_json::Value>, String> {
    p.description
        .tools
        .iter()
        .map(|t| {
            let schema: serde_json::Value = serde_json::from_str(&t.input_schema).map_err(|e| {
                format!(
                    "plugin `{}` publishes tool `{}` with a schema that is not JSON: {e}",
                    p.name(),
                    t.name
                )
            })?;
            let problems = crate::call::contract::portability_violations(&schema);
            if !problems.is_empty() {
                return Err(format!(
                    "plugin `{}` publishes tool `{}` with a schema strict clients reject: {}; \
                     use plain `type` strings and inline `enum`s",
                    p.name(),
                    t.name,
                    problems.join("; ")
                ));
            }
            Ok(schema)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{still_approves, tool_clash};
    use scryer_runtime::Grants;

    #[test]
    fn a_loaded_version_keeps_serving_only_while_the_policy_approves_it() {
        let tokens = Grants::parse_list("tokens").unwrap();
        let both = Grants::parse_list("tokens,index-read").unwrap();
        // Replaced by hand or by a version that fails: still approved.
        assert!(still_approves(Some("1.0.0"), &tokens, &tokens));
        assert!(still_approves(Some("2.0.0"), &both, &tokens));
        // A grant it was linked with was withdrawn: it stops.
        assert!(!still_approves(Some("1.0.0"), &tokens, &both));
        // Its entry lost its receipt (a stray file, or only a held-back upgrade).
        assert!(!still_approves(None, &both, &tokens));
    }

    #[test]
    fn a_tool_declared_twice_names_both_plugins_and_the_fix() {
        let e = tool_clash("find_references", "navigation", true, "nav2", None, None).unwrap();
        assert!(
            e.contains(
                "`find_references` is declared by both plugin `navigation` and plugin `nav2`"
            ) && e.contains("--replaces navigation"),
            "{e}"
        );
        let e = tool_clash("t", "other", false, "mine", None, None).unwrap();
        assert!(e.ends_with("remove one of them"), "{e}");
    }

    #[test]
    fn replaces_and_upgrades_may_take_a_tool_over_and_nothing_else_may() {
        assert_eq!(
            tool_clash("t", "navigation", true, "n", Some("navigation"), None),
            None
        );
        assert!(tool_clash("t", "navigation", true, "n", Some("search"), None).is_some());
        assert_eq!(
            tool_clash("t", "mine", false, "mine", None, Some("mine")),
            None
        );
        // `replaces` names built-in routers only; an upgrade never takes a built-in's tool.
        assert!(tool_clash("t", "mine", false, "n", Some("mine"), None).is_some());
        assert!(
            tool_clash(
                "t",
                "navigation",
                true,
                "navigation",
                None,
                Some("navigation")
            )
            .is_some()
        );
    }
}
