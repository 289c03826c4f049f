//! A session's profile is a set of plugins (ADR 0030): resolved at session open against
//! the built-in profiles and `<config dir>/profiles.toml`, and the plugins it needs
//! loaded then. A serving process starts with none of the built-in routers loaded; each
//! is loaded (its built-in native code deserialized and linked, milliseconds) when the
//! first session whose profile names it opens, and an installed plugin is compiled only
//! once a live profile names it. Loaded plugins stay loaded for the life of the process.

use std::collections::BTreeSet;
use std::sync::Arc;

use anyhow::Context as _;
use scryer_runtime::installed::PluginHome;
use scryer_runtime::policy::Policy;
use scryer_runtime::profiles::{CORE_PLUGINS, Profiles, TierFilter};
use scryer_runtime::{Plugin, Runtime};

use crate::PluginSource;
use crate::call::contract::Profile;
use crate::plugins::plugin_watch::Live;
use crate::plugins::registry::Registry;

/// Which plugins the live profiles need: every one, or these names (an installed
/// plugin replacing one of them counts as named).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) all: bool,
    pub(crate) names: BTreeSet<String>,
}

impl Wanted {
    pub(crate) fn all() -> Wanted {
        Wanted {
            all: true,
            names: BTreeSet::new(),
        }
    }

    /// Whether the plugin `name` (replacing `replaces`) is needed.
    pub(crate) fn wants(&self, name: &str, replaces: Option<&str>) -> bool {
        self.all || self.names.contains(name) || replaces.is_some_and(|r| self.names.contains(r))
    }

    /// Adds `other`'s needs; whether anything was added.
    pub(crate) fn extend(&mut self, other: &Wanted) -> bool {
        let before = self.clone();
        self.all |= other.all;
        self.names.extend(other.names.iter().cloned());
        *self != before
    }
}

/// A built-in router not loaded yet, or loaded on demand.
struct Slot {
    name: String,
    source: Option<PluginSource>,
    plugin: Option<Arc<Plugin>>,
}

/// The host's plugins a serving process loads on demand, and where the operator's
/// profiles are defined.
pub(crate) struct Pool {
    /// Locked while a profile's plugins load, so two sessions never load one twice.
    slots: tokio::sync::Mutex<Vec<Slot>>,
    /// The names of the routers in `slots`, for checking profiles without the lock.
    names: Vec<String>,
    home: Option<PluginHome>,
}

impl Pool {
    /// `on_demand`: the built-in routers, loaded when a profile needs them.
    pub(crate) fn new(on_demand: Vec<PluginSource>, home: Option<PluginHome>) -> Pool {
        let names = on_demand.iter().map(|s| s.label.clone()).collect();
        let slots = on_demand
            .into_iter()
            .map(|s| Slot {
                name: s.label.clone(),
                source: Some(s),
                plugin: None,
            })
            .collect();
        Pool {
            slots: tokio::sync::Mutex::new(slots),
            names,
            home,
        }
    }
}

impl Pool {
    pub(crate) fn home(&self) -> Option<&PluginHome> {
        self.home.as_ref()
    }
}

/// What installed plugins the policy approves: (name, replaces, tools of its receipt).
fn installed_plugins(policy: &Policy) -> Vec<(String, Option<String>, Vec<String>)> {
    policy
        .plugins
        .iter()
        .filter_map(|(name, e)| {
            let receipt = e.receipt.as_ref()?;
            Some((name.clone(), e.replaces.clone(), receipt.tools.clone()))
        })
        .collect()
}

/// Loading the routers a profile needs (`Server::prepare_profile`), over the parts of
/// the server it uses: the built-in routers not loaded yet, the registry new calls
/// start on, and the runtime that loads them.
pub(crate) struct ProfileLoading<'s> {
    pub(crate) pool: &'s Pool,
    pub(crate) live: &'s Arc<Live>,
    pub(crate) runtime: &'s Runtime,
}

impl ProfileLoading<'_> {
    /// Resolves a session's profile and loads the plugins it needs. Errors name what was
    /// wrong (an unknown profile, plugin or tool; a bad profile file) and what is
    /// accepted.
    pub(crate) async fn prepare_profile(&self, profile: &Profile) -> anyhow::Result<Profile> {
        // Only a session naming something reads the profile file: a broken one never
        // stops `core` or `full` sessions.
        let defined = || match &self.pool.home {
            Some(home) => Profiles::read(home.config_dir()).map_err(anyhow::Error::msg),
            None => Ok(Profiles::default()),
        };
        let policy = match &self.pool.home {
            Some(home) => home.read_policy().unwrap_or_default(),
            None => Policy::default(),
        };
        let installed = installed_plugins(&policy);
        let (name, plugins, tier, tools) = match profile {
            Profile::Full => {
                self.ensure_loaded(&Wanted::all()).await?;
                return Ok(Profile::Full);
            }
            Profile::Plugins { .. } => return Ok(profile.clone()),
            Profile::Core => (
                "core".to_string(),
                CORE_PLUGINS.iter().map(|s| s.to_string()).collect(),
                TierFilter::Core,
                Vec::new(),
            ),
            Profile::Named(names) => match (defined()?, names.as_slice()) {
                (defined, [one]) if defined.defined.contains_key(one) => {
                    let def = &defined.defined[one];
                    self.check_plugins(one, &def.plugins, &installed)?;
                    (one.clone(), def.plugins.clone(), def.tier, Vec::new())
                }
                (defined, _) => {
                    let (plugins, tools) = self.split_names(names, &installed, &defined).await?;
                    (names.join(","), plugins, TierFilter::All, tools)
                }
            },
        };
        let plugins = with_replacements(plugins, &installed);
        let mut wanted = Wanted {
            all: false,
            names: plugins.iter().cloned().collect(),
        };
        wanted.names.extend(self.owners(&tools, &installed));
        self.ensure_loaded(&wanted).await?;
        Ok(Profile::Plugins {
            name,
            plugins,
            tier,
            tools,
        })
    }

    /// Every plugin name a profile may use: the host's and the installed ones.
    fn known_plugins(&self, installed: &[(String, Option<String>, Vec<String>)]) -> Vec<String> {
        let mut known: BTreeSet<String> = self.pool.names.iter().cloned().collect();
        for s in self.live.load().statuses() {
            known.insert(s.name.clone());
        }
        known.extend(installed.iter().map(|(n, _, _)| n.clone()));
        known.into_iter().collect()
    }

    /// Fails when the profile `profile` names a plugin that is neither the host's nor
    /// installed.
    fn check_plugins(
        &self,
        profile: &str,
        plugins: &[String],
        installed: &[(String, Option<String>, Vec<String>)],
    ) -> anyhow::Result<()> {
        let known = self.known_plugins(installed);
        if let Some(unknown) = plugins.iter().find(|p| !known.contains(p)) {
            anyhow::bail!(
                "profile `{profile}` names plugin `{unknown}`, which is neither built in nor installed; accepted plugins: {}",
                known.join(", ")
            );
        }
        Ok(())
    }

    /// A `--tools` list split into plugin names and tool names. A tool name makes every
    /// host plugin load (only then are their tools known); a name that is neither is an
    /// error naming what is accepted.
    async fn split_names(
        &self,
        names: &[String],
        installed: &[(String, Option<String>, Vec<String>)],
        defined: &Profiles,
    ) -> anyhow::Result<(Vec<String>, Vec<String>)> {
        let known = self.known_plugins(installed);
        let (plugins, tools): (Vec<String>, Vec<String>) =
            names.iter().cloned().partition(|n| known.contains(n));
        if tools.is_empty() {
            return Ok((plugins, tools));
        }
        self.ensure_loaded(&Wanted {
            all: false,
            names: self.pool.names.iter().cloned().collect(),
        })
        .await?;
        let registry = self.live.load();
        let is_tool = |t: &String| {
            registry.tool(t).is_some() || installed.iter().any(|(_, _, ts)| ts.contains(t))
        };
        if let Some(unknown) = tools.iter().find(|t| !is_tool(t)) {
            anyhow::bail!(
                "--tools names `{unknown}`, which is no profile, plugin or tool; accepted: the profiles {}, the plugins {}, or tool names such as {}",
                defined.names().join(", "),
                known.join(", "),
                registry
                    .tool_names()
                    .into_iter()
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        Ok((plugins, tools))
    }

    /// The plugins declaring `tools`, which must load for the session to call them.
    fn owners(
        &self,
        tools: &[String],
        installed: &[(String, Option<String>, Vec<String>)],
    ) -> Vec<String> {
        let registry = self.live.load();
        tools
            .iter()
            .filter_map(|t| match registry.tool(t) {
                Some((p, _)) => Some(p.name().to_string()),
                None => installed
                    .iter()
                    .find(|(_, _, ts)| ts.contains(t))
                    .map(|(n, _, _)| n.clone()),
            })
            .collect()
    }

    /// Loads the host plugins `wanted` names that are not loaded yet and swaps in the
    /// registry with them; asks for the installed ones it newly names to be loaded
    /// (after the session is accepted, as at start: their tools arrive with
    /// `tools/list_changed`).
    pub(crate) async fn ensure_loaded(&self, wanted: &Wanted) -> anyhow::Result<()> {
        let mut slots = self.pool.slots.lock().await;
        let missing: Vec<usize> = (0..slots.len())
            .filter(|&i| slots[i].plugin.is_none() && wanted.wants(&slots[i].name, None))
            .collect();
        if !missing.is_empty() {
            let loads: Vec<_> = missing
                .iter()
                .filter_map(|&i| slots[i].source.take())
                .map(|source| {
                    tokio::spawn(crate::plugins::registry::load_one(
                        self.runtime.clone(),
                        source,
                    ))
                })
                .collect();
            for (&i, load) in missing.iter().zip(loads) {
                let plugin = load.await.context("loading a plugin")??;
                tracing::info!(
                    plugin = plugin.name(),
                    ms = plugin.load_time.as_millis() as u64,
                    "plugin loaded for a session's profile"
                );
                slots[i].plugin = Some(Arc::new(plugin));
            }
            let on_demand: Vec<Arc<Plugin>> =
                slots.iter().filter_map(|s| s.plugin.clone()).collect();
            self.live.update(|old| {
                // The routers loaded at start (`--plugin` files) keep their place after
                // the built-in ones, as at start.
                let mut host = on_demand.clone();
                host.extend(
                    old.host_loaded()
                        .into_iter()
                        .filter(|p| !self.pool.names.iter().any(|n| n == p.name())),
                );
                old.with_host(host)
            })?;
        }
        drop(slots);
        // Newly wanted installed plugins load, and the serving report says what is
        // loaded now.
        if self.live.want(wanted) || !missing.is_empty() {
            crate::plugins::plugin_watch::load_newly_wanted(
                self.live,
                self.runtime,
                self.pool.home(),
            );
        }
        Ok(())
    }
}

/// `plugins` with the installed plugins that replace any of them, and the built-in
/// router any of them replaces (it loads so the replacement can take its place).
fn with_replacements(
    mut plugins: Vec<String>,
    installed: &[(String, Option<String>, Vec<String>)],
) -> Vec<String> {
    for (name, replaces, _) in installed {
        let Some(r) = replaces else { continue };
        if plugins.contains(r) && !plugins.contains(name) {
            plugins.push(name.clone());
        }
        if plugins.contains(name) && !plugins.contains(r) {
            plugins.push(r.clone());
        }
    }
    plugins
}

impl Registry {
    /// Names of the plugins loaded (instantiable) now, host and installed.
    pub(crate) fn loaded_names(&self) -> Vec<String> {
        self.statuses()
            .iter()
            .filter(|s| s.plugin.is_some())
            .map(|s| s.name.clone())
            .collect()
    }
}
