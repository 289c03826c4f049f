//! Tool profiles: named sets of plugins. `core` and `full` are built in; the operator
//! defines others in `<config dir>/profiles.toml` (ADR 0030). A session's profile
//! decides which plugins the serving process loads for it and which of their tools it
//! lists; a plugin no live profile names is neither compiled nor instantiated.
//!
//! ```toml
//! [profiles.review]
//! plugins = ["navigation", "search", "word-stats"]
//! # tier = "core"   # list only the plugins' core-tier tools (default: "all")
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::policy::check_plugin_name;

/// The file under the configuration directory that defines profiles.
pub const FILE: &str = "profiles.toml";

/// The built-in routers the built-in `core` profile loads (it lists their core-tier
/// tools; their other tools are still answered).
pub const CORE_PLUGINS: &[&str] = &["navigation", "search", "inspect", "graph"];

/// Names a profile file may not define.
const BUILT_IN: &[&str] = &["core", "full", "all"];

/// Which of a profile's plugins' tools it lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TierFilter {
    /// Every tool of the profile's plugins.
    #[default]
    All,
    /// Only the tools whose tier is `core`.
    Core,
}

/// One profile as the file defines it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileDef {
    /// Plugin names: built-in routers or installed plugins.
    pub plugins: Vec<String>,
    #[serde(default)]
    pub tier: TierFilter,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    #[serde(default)]
    profiles: BTreeMap<String, ProfileDef>,
}

/// The profiles an operator defined, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profiles {
    pub defined: BTreeMap<String, ProfileDef>,
}

impl Profiles {
    /// Reads `<config dir>/profiles.toml`; no file defines no profile. Errors name the
    /// file, what is wrong and what is accepted.
    pub fn read(config_dir: &Path) -> Result<Profiles, String> {
        let path = config_dir.join(FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Profiles::default()),
            Err(e) => return Err(format!("reading profiles {}: {e}", path.display())),
        };
        Profiles::parse(&text).map_err(|e| format!("profiles {}: {e}", path.display()))
    }

    /// Parses a profile file: `[profiles.<name>]` tables with `plugins` (a list of
    /// plugin names) and an optional `tier` (`all` or `core`).
    pub fn parse(text: &str) -> Result<Profiles, String> {
        let file: ProfileFile = toml::from_str(text).map_err(|e| {
            format!(
                "{}; accepted: `[profiles.<name>]` tables with `plugins = [\"<plugin>\", ...]` and optionally `tier = \"all\" | \"core\"`",
                e.to_string().trim_end()
            )
        })?;
        for (name, def) in &file.profiles {
            if BUILT_IN.contains(&name.as_str()) {
                return Err(format!(
                    "profile `{name}` is built in and cannot be redefined; name yours otherwise"
                ));
            }
            check_plugin_name(name).map_err(|e| format!("profile name: {e}"))?;
            if def.plugins.is_empty() {
                return Err(format!(
                    "profiles.{name}.plugins is empty; accepted: one or more plugin names"
                ));
            }
            for plugin in &def.plugins {
                check_plugin_name(plugin).map_err(|e| format!("profiles.{name}.plugins: {e}"))?;
            }
        }
        Ok(Profiles {
            defined: file.profiles,
        })
    }

    /// Every profile name a session may ask for, built-in first.
    pub fn names(&self) -> Vec<String> {
        ["core", "full"]
            .iter()
            .map(|s| s.to_string())
            .chain(self.defined.keys().cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_file_defines_plugin_sets() {
        let p = Profiles::parse(
            "[profiles.review]\nplugins = [\"navigation\", \"search\"]\n\n[profiles.lean]\nplugins = [\"graph\"]\ntier = \"core\"\n",
        )
        .unwrap();
        assert_eq!(p.defined["review"].plugins, ["navigation", "search"]);
        assert_eq!(p.defined["review"].tier, TierFilter::All);
        assert_eq!(p.defined["lean"].tier, TierFilter::Core);
        assert_eq!(p.names(), ["core", "full", "lean", "review"]);
    }

    #[test]
    fn mistakes_in_the_file_are_named_with_what_is_accepted() {
        let e = Profiles::parse("[profiles.core]\nplugins = [\"graph\"]\n").unwrap_err();
        assert!(e.contains("`core` is built in"), "{e}");
        let e = Profiles::parse("[profiles.x]\nplugins = []\n").unwrap_err();
        assert!(e.contains("profiles.x.plugins is empty"), "{e}");
        let e = Profiles::parse("[profiles.x]\nplugin = [\"graph\"]\n").unwrap_err();
        assert!(
            e.contains("plugin") && e.contains("accepted: `[profiles.<name>]`"),
            "{e}"
        );
        let e =
            Profiles::parse("[profiles.x]\nplugins = [\"graph\"]\ntier = \"gold\"\n").unwrap_err();
        assert!(
            e.contains("gold") && e.contains("tier = \"all\" | \"core\""),
            "{e}"
        );
        let e = Profiles::parse("[profiles.x]\nplugins = [\"Nav!\"]\n").unwrap_err();
        assert!(e.contains("profiles.x.plugins"), "{e}");
    }
}
