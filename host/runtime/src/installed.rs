//! Plugins installed by the operator: `<config dir>/plugins/<name>.wasm`, approved in
//! `<config dir>/policy.toml`.
//!
//! Loading never fails as a whole: each plugin is loaded or refused on its own, with the
//! reason and the command that fixes it, and the server serves the rest. Publishing
//! (`scryer plugin add`) is transactional: the wasm is staged in the plugins directory,
//! the policy replaced whole, then the wasm renamed into place; if that last step fails
//! the old policy is put back, so a failed add leaves neither half behind.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::capabilities::Grants;
use crate::policy::{self, PluginPolicy, Policy};
use crate::{LoadError, Plugin, Runtime};

/// The policy file and plugins directory under one configuration directory.
#[derive(Clone, Debug)]
pub struct PluginHome {
    config_dir: PathBuf,
}

/// One installed plugin as loading left it.
pub struct Installed {
    pub name: String,
    pub grants: Grants,
    pub replaces: Option<String>,
    /// The approved version (from the receipt), when there is one.
    pub version: Option<String>,
    /// The loaded plugin, or why it was refused.
    pub outcome: Result<Plugin, String>,
    /// An upgrade waiting for grants, and what it needs.
    pub held_back: Option<String>,
}

/// A shadow-run candidate as loading left it (ADR 0030).
pub struct ShadowLoad {
    pub name: String,
    /// The serving plugin whose tools it shadows.
    pub of: String,
    pub version: String,
    pub outcome: Result<Plugin, String>,
}

/// What loading the installed plugins found.
#[derive(Default)]
pub struct LoadReport {
    pub plugins: Vec<Installed>,
    /// Candidates shadow-running beside the plugins they would replace.
    pub shadows: Vec<ShadowLoad>,
    /// Problems not tied to one plugin (an unreadable policy file).
    pub problems: Vec<String>,
}

impl PluginHome {
    pub fn new(config_dir: impl Into<PathBuf>) -> PluginHome {
        PluginHome {
            config_dir: config_dir.into(),
        }
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    pub fn policy_path(&self) -> PathBuf {
        self.config_dir.join("policy.toml")
    }

    pub fn plugins_dir(&self) -> PathBuf {
        self.config_dir.join("plugins")
    }

    pub fn wasm_path(&self, name: &str) -> PathBuf {
        self.plugins_dir().join(format!("{name}.wasm"))
    }

    /// Where a shadow-run candidate's bytes live (ADR 0030).
    pub fn shadow_path(&self, name: &str) -> PathBuf {
        self.plugins_dir().join(format!("{name}.shadow.wasm"))
    }

    pub fn pending_path(&self, name: &str) -> PathBuf {
        self.plugins_dir().join(format!("{name}.pending.wasm"))
    }

    pub fn read_policy(&self) -> Result<Policy, String> {
        Policy::read(&self.policy_path())
    }

    /// Takes the lock every change to the policy or the plugins directory holds, so two
    /// `scryer plugin` commands never interleave their read-modify-write.
    pub fn lock(&self) -> Result<File, String> {
        let dir = self.plugins_dir();
        create_private_dir(&dir)?;
        let path = dir.join(".lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("opening {}: {e}", path.display()))?;
        file.lock()
            .map_err(|e| format!("locking {}: {e}", path.display()))?;
        Ok(file)
    }

    /// Loads every installed plugin the policy approves; refuses, with the reason, any
    /// that is not approved, changed, or needs an ungranted capability.
    pub async fn load_all(&self, runtime: &Runtime) -> LoadReport {
        self.load_wanted(runtime, &|_, _| true).await
    }

    /// [`load_all`](Self::load_all), but only the plugins `wanted(name, replaces)`
    /// accepts are compiled and loaded: the others (no live profile names them, ADR
    /// 0030) are left out of the report, as if not installed. Stray files are reported
    /// whatever `wanted` says.
    pub async fn load_wanted(
        &self,
        runtime: &Runtime,
        wanted: &(dyn Fn(&str, Option<&str>) -> bool + Sync),
    ) -> LoadReport {
        let mut report = LoadReport::default();
        let policy = match self.read_policy() {
            Ok(p) => p,
            Err(e) => {
                report
                    .problems
                    .push(format!("{e}; no installed plugin was loaded"));
                return report;
            }
        };
        for (name, entry) in &policy.plugins {
            if entry.receipt.is_none() && entry.pending.is_none() {
                // Grants written ahead of an add: nothing is installed yet.
                continue;
            }
            if !wanted(name, entry.replaces.as_deref()) {
                continue;
            }
            report
                .plugins
                .push(self.load_one(runtime, name, entry).await);
        }
        for (name, entry) in &policy.shadows {
            if wanted(&entry.of, None) {
                report
                    .shadows
                    .push(self.load_shadow(runtime, name, entry).await);
            }
        }
        for stray in self.unapproved_files(&policy) {
            report.plugins.push(Installed {
                grants: Grants::default(),
                replaces: None,
                version: None,
                outcome: Err(format!(
                    "{} is not approved: it has no receipt in {}; approve it with `scryer plugin add {}`",
                    self.wasm_path(&stray).display(),
                    self.policy_path().display(),
                    self.wasm_path(&stray).display()
                )),
                held_back: None,
                name: stray,
            });
        }
        report
    }

    /// Loads one installed plugin under its policy entry.
    pub async fn load_one(&self, runtime: &Runtime, name: &str, entry: &PluginPolicy) -> Installed {
        let grants = entry.granted();
        let held_back = entry.pending.as_ref().map(|p| {
            let missing = grants.missing(&Grants::parse_list(&p.needs.join(",")).unwrap_or_default());
            format!(
                "upgrade to {} held back: it needs {} (not granted); approve it with `scryer plugin grant {name} {}`",
                p.version,
                missing.names().join(", "),
                missing.names().join(" ")
            )
        });
        let outcome = self.try_load(runtime, name, entry, &grants).await;
        Installed {
            name: name.to_string(),
            grants,
            replaces: entry.replaces.clone(),
            version: entry.receipt.as_ref().map(|r| r.version.clone()),
            outcome,
            held_back,
        }
    }

    /// Loads one shadow-run candidate under its policy entry: its receipt, its grants.
    pub async fn load_shadow(
        &self,
        runtime: &Runtime,
        name: &str,
        entry: &policy::ShadowPolicy,
    ) -> ShadowLoad {
        let path = self.shadow_path(name);
        let outcome = self
            .load_file(runtime, name, &path, &entry.receipt, &entry.granted())
            .await;
        ShadowLoad {
            name: name.to_string(),
            of: entry.of.clone(),
            version: entry.receipt.version.clone(),
            outcome,
        }
    }

    async fn try_load(
        &self,
        runtime: &Runtime,
        name: &str,
        entry: &PluginPolicy,
        grants: &Grants,
    ) -> Result<Plugin, String> {
        let Some(receipt) = &entry.receipt else {
            return Err(format!(
                "plugin `{name}` has only a held-back upgrade and no approved version to serve"
            ));
        };
        self.load_file(runtime, name, &self.wasm_path(name), receipt, grants)
            .await
    }

    /// Reads, checks against `receipt`, compiles and links the plugin file at `path`.
    async fn load_file(
        &self,
        runtime: &Runtime,
        name: &str,
        path: &Path,
        receipt: &crate::receipt::Receipt,
        grants: &Grants,
    ) -> Result<Plugin, String> {
        let wasm = std::fs::read(path).map_err(|e| {
            format!(
                "{} cannot be read ({e}); re-add it with `scryer plugin add <file>` or remove it with `scryer plugin remove {name}`",
                path.display()
            )
        })?;
        receipt.check(name, &wasm)?;
        let compiled = runtime.compile(name, &wasm).map_err(|e| e.to_string())?;
        let req = compiled.requirements();
        if !req.ungrantable.is_empty() {
            return Err(ungrantable_message(name, &req.ungrantable));
        }
        let missing = grants.missing(&req.needs);
        if !missing.is_empty() {
            return Err(missing_grants_message(name, &missing, compiled.imports()));
        }
        let plugin = runtime
            .link(name, compiled, grants.clone())
            .await
            .map_err(|e| match e {
                LoadError::UngrantedImport { .. } | LoadError::Invalid { .. } => e.to_string(),
            })?;
        if plugin.name() != name {
            return Err(format!(
                "{} describes itself as `{}`, not `{name}`; re-add it with `scryer plugin add <file>`",
                path.display(),
                plugin.name()
            ));
        }
        Ok(plugin)
    }

    /// `.wasm` files in the plugins directory that no policy entry approves.
    fn unapproved_files(&self, policy: &Policy) -> Vec<String> {
        let Ok(dir) = std::fs::read_dir(self.plugins_dir()) else {
            return Vec::new();
        };
        let mut stray: Vec<String> = dir
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|f| {
                !f.starts_with('.') && !f.ends_with(".pending.wasm") && !f.ends_with(".shadow.wasm")
            })
            .filter_map(|f| f.strip_suffix(".wasm").map(str::to_string))
            .filter(|n| policy.plugins.get(n).is_none_or(|e| e.receipt.is_none()))
            .collect();
        stray.sort();
        stray
    }

    /// Publishes `wasm` as `name` with the new policy: the bytes are staged beside their
    /// destination, the policy replaced, then the bytes renamed into place. If the rename
    /// fails, the previous policy is restored and the staged bytes deleted.
    pub fn publish(
        &self,
        name: &str,
        wasm: &[u8],
        held_back: bool,
        new_policy: &Policy,
    ) -> Result<PathBuf, String> {
        let dest = if held_back {
            self.pending_path(name)
        } else {
            self.wasm_path(name)
        };
        self.publish_at(name, &dest, wasm, new_policy)?;
        if !held_back {
            // A direct install supersedes any upgrade that was waiting.
            let _ = std::fs::remove_file(self.pending_path(name));
        }
        Ok(dest)
    }

    /// Publishes a shadow-run candidate (ADR 0030) as [`publish`](Self::publish) does a
    /// plugin: staged, the policy replaced, then renamed to `<name>.shadow.wasm`.
    pub fn publish_shadow(
        &self,
        name: &str,
        wasm: &[u8],
        new_policy: &Policy,
    ) -> Result<PathBuf, String> {
        let dest = self.shadow_path(name);
        self.publish_at(name, &dest, wasm, new_policy)?;
        Ok(dest)
    }

    fn publish_at(
        &self,
        name: &str,
        dest: &Path,
        wasm: &[u8],
        new_policy: &Policy,
    ) -> Result<(), String> {
        policy::check_plugin_name(name)?;
        let dir = self.plugins_dir();
        create_private_dir(&dir)?;
        let staged = dir.join(format!(".{name}.wasm.tmp-{}", std::process::id()));
        stage(&staged, wasm).map_err(|e| {
            let _ = std::fs::remove_file(&staged);
            format!("staging {}: {e}", staged.display())
        })?;
        let policy_path = self.policy_path();
        let previous = match std::fs::read(&policy_path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                let _ = std::fs::remove_file(&staged);
                return Err(format!("reading {}: {e}", policy_path.display()));
            }
        };
        if let Err(e) = new_policy.write(&policy_path) {
            let _ = std::fs::remove_file(&staged);
            return Err(format!("writing {}: {e}", policy_path.display()));
        }
        if let Err(e) = std::fs::rename(&staged, dest) {
            let _ = std::fs::remove_file(&staged);
            let restored = match &previous {
                Some(bytes) => policy::write_atomically(&policy_path, bytes),
                None => std::fs::remove_file(&policy_path),
            };
            return Err(match restored {
                Ok(()) => format!(
                    "moving the plugin into {}: {e}; nothing was changed",
                    dest.display()
                ),
                Err(r) => format!(
                    "moving the plugin into {}: {e}; restoring {} also failed ({r}): check it by hand",
                    dest.display(),
                    policy_path.display()
                ),
            });
        }
        Ok(())
    }

    /// Makes the held-back upgrade of `name` the installed version: the policy (already
    /// holding the upgrade's receipt) is written, then the file renamed; a failed rename
    /// restores the previous policy.
    pub fn promote(&self, name: &str, new_policy: &Policy) -> Result<(), String> {
        let pending = self.pending_path(name);
        let policy_path = self.policy_path();
        let previous = std::fs::read(&policy_path)
            .map_err(|e| format!("reading {}: {e}", policy_path.display()))?;
        new_policy
            .write(&policy_path)
            .map_err(|e| format!("writing {}: {e}", policy_path.display()))?;
        if let Err(e) = std::fs::rename(&pending, self.wasm_path(name)) {
            let _ = policy::write_atomically(&policy_path, &previous);
            return Err(format!(
                "moving {} into place: {e}; the policy was left as it was",
                pending.display()
            ));
        }
        Ok(())
    }

    /// Removes `name`'s policy entry, then its files. A file left behind after the policy
    /// changed has no receipt, so it can never load.
    pub fn remove(&self, name: &str, new_policy: &Policy) -> Result<Vec<PathBuf>, String> {
        new_policy
            .write(&self.policy_path())
            .map_err(|e| format!("writing {}: {e}", self.policy_path().display()))?;
        let mut removed = Vec::new();
        for path in [self.wasm_path(name), self.pending_path(name)] {
            match std::fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(format!(
                        "the policy no longer approves `{name}`, but deleting {} failed: {e}",
                        path.display()
                    ));
                }
            }
        }
        Ok(removed)
    }
}

fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Plugins are code the host runs: only the user may write where they live.
fn create_private_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("making {} private: {e}", dir.display()))?;
    }
    Ok(())
}

/// The refusal for a plugin whose imports need capabilities not granted: names each
/// one, the import that needs it, and the one command that grants them all.
pub fn missing_grants_message(name: &str, missing: &Grants, imports: &[String]) -> String {
    let each: Vec<String> = missing
        .iter()
        .map(|cap| {
            let import = imports
                .iter()
                .find(|i| Grants::capability_for(i) == Some(cap))
                .map(String::as_str)
                .unwrap_or(cap.interface());
            format!("`{cap}` (it imports `{import}`)")
        })
        .collect();
    format!(
        "plugin `{name}` needs capability {} not granted, so it was not linked; grant it with `scryer plugin grant {name} {}`",
        each.join(" and "),
        missing.names().join(" ")
    )
}

/// The refusal for a component importing what no capability grants.
pub fn ungrantable_message(name: &str, imports: &[String]) -> String {
    format!(
        "plugin `{name}` imports {}, which no capability grants (routers get only the scryer:router interfaces and the WASI baseline: clocks, random, stdio, io); it can never be linked",
        imports
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::Capability;
    use crate::receipt::Receipt;

    fn entry() -> PluginPolicy {
        PluginPolicy {
            grants: vec!["tokens".into()],
            replaces: None,
            receipt: Some(Receipt {
                sha256: crate::receipt::sha256_hex(b"new"),
                version: "1.0.0".into(),
                wit: None,
                needs: vec!["tokens".into()],
                tools: vec!["ok".into()],
                approved_at: 1,
            }),
            pending: None,
        }
    }

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = walk(dir);
        v.sort();
        v
    }

    fn walk(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.path().display().to_string();
            if e.file_type().unwrap().is_dir() {
                out.extend(walk(&e.path()));
            }
            out.push(name);
        }
        out
    }

    #[test]
    fn publish_writes_both_halves() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        let mut policy = Policy::default();
        policy.plugins.insert("p".into(), entry());
        let dest = home.publish("p", b"new", false, &policy).unwrap();
        assert_eq!(std::fs::read(dest).unwrap(), b"new");
        assert_eq!(home.read_policy().unwrap(), policy);
    }

    #[test]
    fn a_failed_publish_leaves_neither_half() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        let before = Policy::default();
        before.write(&home.policy_path()).unwrap();
        // A directory where the wasm must go: the final rename fails.
        std::fs::create_dir_all(home.wasm_path("p").join("occupied")).unwrap();
        let policy_text = std::fs::read(home.policy_path()).unwrap();
        let files = listing(dir.path());

        let mut policy = Policy::default();
        policy.plugins.insert("p".into(), entry());
        let e = home.publish("p", b"new", false, &policy).unwrap_err();
        assert!(e.contains("nothing was changed"), "{e}");
        assert_eq!(std::fs::read(home.policy_path()).unwrap(), policy_text);
        assert_eq!(listing(dir.path()), files);
    }

    #[test]
    fn a_failed_first_publish_leaves_no_policy_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        std::fs::create_dir_all(home.wasm_path("p").join("occupied")).unwrap();
        let mut policy = Policy::default();
        policy.plugins.insert("p".into(), entry());
        assert!(home.publish("p", b"new", false, &policy).is_err());
        assert!(!home.policy_path().exists());
    }

    #[test]
    fn promote_moves_the_held_back_upgrade_into_place() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        let mut policy = Policy::default();
        policy.plugins.insert("p".into(), entry());
        home.publish("p", b"old", false, &policy).unwrap();
        home.publish("p", b"new", true, &policy).unwrap();
        assert_eq!(std::fs::read(home.wasm_path("p")).unwrap(), b"old");
        home.promote("p", &policy).unwrap();
        assert_eq!(std::fs::read(home.wasm_path("p")).unwrap(), b"new");
        assert!(!home.pending_path("p").exists());
    }

    #[test]
    fn remove_deletes_the_entry_and_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let home = PluginHome::new(dir.path());
        let mut policy = Policy::default();
        policy.plugins.insert("p".into(), entry());
        home.publish("p", b"new", false, &policy).unwrap();
        let removed = home.remove("p", &Policy::default()).unwrap();
        assert_eq!(removed, vec![home.wasm_path("p")]);
        assert_eq!(home.read_policy().unwrap(), Policy::default());
    }

    #[test]
    fn the_missing_grant_message_names_the_import_and_the_command() {
        let m = missing_grants_message(
            "nav",
            &Grants::new([Capability::IndexRead, Capability::Tokens]),
            &[
                "scryer:router/index@0.1.0".into(),
                "scryer:router/tokens@0.1.0".into(),
            ],
        );
        assert!(
            m.contains("`index-read` (it imports `scryer:router/index@0.1.0`)"),
            "{m}"
        );
        assert!(
            m.contains("`scryer plugin grant nav index-read tokens`"),
            "{m}"
        );
    }
}
