//! The operator's policy: which capabilities each installed plugin is granted, which
//! built-in router it may replace, and the receipt of the bytes that were approved.
//!
//! One TOML file (`<config dir>/policy.toml`), written only by replacing it whole
//! (temporary file, fsync, rename), so a reader never sees half of an update and a
//! failed update leaves the previous policy in place.
//!
//! ```toml
//! [plugins.hostile]
//! grants = ["tokens"]
//! # replaces = "navigation"    # may take over that built-in router's tools
//!
//! [plugins.hostile.receipt]
//! sha256 = "9f2c…"
//! version = "0.0.0"
//! wit = "0.1.0"
//! needs = ["tokens"]
//! tools = ["ok", "spin"]
//! approved_at = 1764500000
//! ```
//!
//! `pending` (same shape as `receipt`) is an upgrade held back because it needs more than
//! is granted; granting what it needs promotes it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::capabilities::Grants;
use crate::receipt::Receipt;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginPolicy>,
    /// Candidates shadow-running beside a serving router (ADR 0030), by their name:
    /// `plugins/<name>.shadow.wasm`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shadows: BTreeMap<String, ShadowPolicy>,
}

/// A candidate installed with `scryer plugin add --shadow`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShadowPolicy {
    /// The serving plugin (built in or installed) whose tools it shadows.
    pub of: String,
    #[serde(default)]
    pub grants: Vec<String>,
    /// The approved bytes of the candidate.
    pub receipt: Receipt,
}

impl ShadowPolicy {
    pub fn granted(&self) -> Grants {
        Grants::parse_list(&self.grants.join(",")).unwrap_or_default()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginPolicy {
    /// Capability names granted to this plugin.
    #[serde(default)]
    pub grants: Vec<String>,
    /// A built-in router whose tools this plugin may take over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// The approved bytes of the installed plugin (`plugins/<name>.wasm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
    /// An upgrade held back until what it needs is granted (`plugins/<name>.pending.wasm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Receipt>,
}

impl PluginPolicy {
    /// The granted capabilities (names were checked when the policy was read).
    pub fn granted(&self) -> Grants {
        Grants::parse_list(&self.grants.join(",")).unwrap_or_default()
    }

    pub fn set_granted(&mut self, grants: &Grants) {
        self.grants = grants.names().into_iter().map(String::from).collect();
    }
}

/// Whether `name` can name an installed plugin (it becomes a file name).
pub fn check_plugin_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "plugin name {name:?} cannot be installed: accepted are 1-64 characters of [a-z0-9_-], starting with a letter or digit"
        ))
    }
}

impl Policy {
    /// Reads the policy; a missing file is an empty policy. Errors name the file and
    /// what is wrong in it.
    pub fn read(path: &Path) -> Result<Policy, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Policy::default()),
            Err(e) => return Err(format!("reading policy {}: {e}", path.display())),
        };
        Policy::parse(&text).map_err(|e| format!("policy {}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Policy, String> {
        let policy: Policy = toml::from_str(text).map_err(|e| e.to_string())?;
        for (name, entry) in &policy.plugins {
            check_plugin_name(name)?;
            Grants::parse_list(&entry.grants.join(","))
                .map_err(|e| format!("plugins.{name}.grants: {e}"))?;
        }
        for (name, entry) in &policy.shadows {
            check_plugin_name(name)?;
            Grants::parse_list(&entry.grants.join(","))
                .map_err(|e| format!("shadows.{name}.grants: {e}"))?;
        }
        Ok(policy)
    }

    pub fn to_toml(&self) -> String {
        let body = toml::to_string_pretty(self).expect("the policy always serializes");
        format!(
            "# scryer plugin policy: what each installed plugin may import, and the receipt\n\
             # (sha256) of the bytes that were approved. Written by `scryer plugin add | grant |\n\
             # remove`; hand edits are read as they are.\n\n{body}"
        )
    }

    /// Replaces the policy file whole: temporary file beside it, fsync, rename.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        write_atomically(path, self.to_toml().as_bytes())
    }
}

/// Writes `bytes` to `path` so that `path` holds either its old or its new content,
/// never a mix: a temporary file in the same directory is synced, then renamed over it.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Where an added plugin goes, given what is installed under its name and what is
/// granted after the add.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Installed as the plugin (a first install, or an upgrade within its grants).
    Current,
    /// A first install that needs capabilities not granted: installed, but refused at
    /// load until they are granted.
    CurrentUngranted(Grants),
    /// An upgrade that needs more than is granted: kept beside the old version, which
    /// keeps serving, until what it needs is granted.
    HeldBack(Grants),
}

/// Decides where an added plugin goes.
pub fn placement(existing: Option<&PluginPolicy>, granted: &Grants, needs: &Grants) -> Placement {
    let missing = granted.missing(needs);
    if missing.is_empty() {
        return Placement::Current;
    }
    match existing.and_then(|e| e.receipt.as_ref()) {
        Some(_) => Placement::HeldBack(missing),
        None => Placement::CurrentUngranted(missing),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::Capability;

    fn receipt() -> Receipt {
        Receipt {
            sha256: "ab".repeat(32),
            version: "1.0.0".into(),
            wit: Some("0.1.0".into()),
            needs: vec!["tokens".into()],
            tools: vec!["ok".into()],
            approved_at: 42,
        }
    }

    #[test]
    fn the_policy_round_trips_through_its_file_format() {
        let mut p = Policy::default();
        p.plugins.insert(
            "hostile".into(),
            PluginPolicy {
                grants: vec!["tokens".into()],
                replaces: Some("navigation".into()),
                receipt: Some(receipt()),
                pending: None,
            },
        );
        let text = p.to_toml();
        assert!(text.contains("[plugins.hostile.receipt]"), "{text}");
        assert_eq!(Policy::parse(&text).unwrap(), p);
    }

    #[test]
    fn bad_policies_are_refused_naming_the_problem() {
        let e = Policy::parse("[plugins.x]\ngrants = [\"net\"]\n").unwrap_err();
        assert!(
            e.contains("plugins.x.grants") && e.contains("\"net\""),
            "{e}"
        );
        let e = Policy::parse("[plugins.\"../evil\"]\ngrants = []\n").unwrap_err();
        assert!(e.contains("../evil"), "{e}");
        assert!(Policy::parse("[plugins.x]\ngrant = []\n").is_err());
        assert_eq!(Policy::parse("").unwrap(), Policy::default());
    }

    #[test]
    fn atomic_writes_replace_the_file_and_leave_no_temporary_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        let mut p = Policy::default();
        p.plugins.insert("a".into(), PluginPolicy::default());
        p.write(&path).unwrap();
        assert_eq!(Policy::read(&path).unwrap(), p);
        p.plugins.clear();
        p.write(&path).unwrap();
        assert_eq!(Policy::read(&path).unwrap(), p);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert_eq!(
            Policy::read(&dir.path().join("missing.toml")).unwrap(),
            Policy::default()
        );
    }

    #[test]
    fn an_upgrade_needing_more_is_held_back_and_a_first_install_is_not() {
        let tokens = Grants::new([Capability::Tokens]);
        let more = Grants::new([Capability::Tokens, Capability::IndexRead]);
        let installed = PluginPolicy {
            grants: vec!["tokens".into()],
            receipt: Some(receipt()),
            ..Default::default()
        };
        assert_eq!(
            placement(Some(&installed), &tokens, &tokens),
            Placement::Current
        );
        assert_eq!(
            placement(Some(&installed), &tokens, &more),
            Placement::HeldBack(Grants::new([Capability::IndexRead]))
        );
        assert_eq!(
            placement(None, &tokens, &more),
            Placement::CurrentUngranted(Grants::new([Capability::IndexRead]))
        );
        let pre_granted = PluginPolicy {
            grants: vec!["tokens".into()],
            ..Default::default()
        };
        assert_eq!(
            placement(Some(&pre_granted), &tokens, &more),
            Placement::CurrentUngranted(Grants::new([Capability::IndexRead]))
        );
    }

    #[test]
    fn plugin_names_must_be_safe_file_names() {
        assert!(check_plugin_name("my-plugin_2").is_ok());
        for bad in ["", "../x", "a/b", "Upper", ".hidden", &"x".repeat(65)] {
            assert!(check_plugin_name(bad).is_err(), "{bad:?}");
        }
    }
}
