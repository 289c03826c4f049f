//! The `dependencies` interface: crates the call's project locks, indexed once into the
//! shared dependency index ([`crate::indexing::deps`] keeps it current).

use std::path::Path;

use scryer_db::{DependencyIndex, SymbolRow};
use scryer_engine::deps::compare_versions;
use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, DependencySymbol, LockedCrate};

use super::{HostImpl, internal, symbol};

/// Crate names offered in a "no such crate" error, at most.
const CLOSEST: usize = 5;

/// Crate names compare case-insensitively, with `-` and `_` the same (cargo treats them
/// alike, and code names `serde_json` what the lockfile calls `serde-json`).
fn normalize(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

/// Levenshtein distance over bytes (crate names are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The locked crate names that come closest to `wanted`: containing it (or contained in
/// it), or a few edits away; nearest first.
fn closest(wanted: &str, locked: &[DependencyIndex]) -> Vec<String> {
    let norm = normalize(wanted);
    let mut names: Vec<(usize, &str)> = locked
        .iter()
        .map(|d| d.crate_name.as_str())
        .filter_map(|name| {
            let n = normalize(name);
            let d = distance(&norm, &n);
            let near = n.contains(&norm) || norm.contains(&n) || d <= (norm.len() / 3).max(1);
            near.then_some((d, name))
        })
        .collect();
    names.sort();
    names.dedup_by(|a, b| a.1 == b.1);
    names
        .into_iter()
        .take(CLOSEST)
        .map(|(_, n)| n.to_string())
        .collect()
}

fn unknown_crate(wanted: &str, locked: &[DependencyIndex]) -> CallError {
    let shown: String = wanted.chars().take(80).collect();
    if locked.is_empty() {
        return CallError::NotFound(format!(
            "no crate `{shown}`: this project locks no registry crates (no Cargo.lock found for it, \
             or it has only path and git dependencies), and no other project's crates are cached under that name"
        ));
    }
    let near = closest(wanted, locked);
    let hint = if near.is_empty() {
        format!(
            "none of the {} locked crates has a similar name",
            locked.len()
        )
    } else {
        format!("closest locked crates: {}", near.join(", "))
    };
    CallError::NotFound(format!(
        "no crate `{shown}` among the crates this project locks or the cached ones; {hint}"
    ))
}

fn not_indexed(d: &DependencyIndex, locked: bool) -> CallError {
    let how = if locked {
        "is locked"
    } else {
        "is cached from another project"
    };
    let why = d
        .note
        .as_deref()
        .unwrap_or(scryer_engine::deps::QUEUED_NOTE);
    CallError::NotFound(format!(
        "{} {} {how} but not indexed: {why}",
        d.crate_name, d.version
    ))
}

/// The crate version `crate-symbols` answers for: the version asked for (locked or
/// cached), else the version the project locks (the newest, when it locks several),
/// else the newest cached version, indexed ones first.
fn choose_crate<'a>(
    locked: &'a [DependencyIndex],
    all: &'a [DependencyIndex],
    crate_name: &str,
    version: Option<&str>,
) -> Result<&'a DependencyIndex, CallError> {
    let norm = normalize(crate_name);
    if norm.is_empty() {
        return Err(CallError::InvalidArgument(
            "crate name is empty: pass a crate the project locks, e.g. `serde`".into(),
        ));
    }
    let same = |d: &&DependencyIndex| normalize(&d.crate_name) == norm;
    let same_locked: Vec<&DependencyIndex> = locked.iter().filter(same).collect();
    let same_all: Vec<&DependencyIndex> = all.iter().filter(same).collect();
    let version = version
        .map(|v| v.trim().trim_start_matches(['=', 'v']))
        .filter(|v| !v.is_empty());
    if let Some(v) = version {
        if let Some(d) = same_locked.iter().chain(&same_all).find(|d| d.version == v) {
            return Ok(d);
        }
        if same_all.is_empty() && same_locked.is_empty() {
            return Err(unknown_crate(crate_name, locked));
        }
        let mut known: Vec<String> = same_all
            .iter()
            .map(|d| {
                let is_locked = same_locked.iter().any(|l| l.version == d.version);
                if is_locked {
                    format!("{} (locked)", d.version)
                } else {
                    d.version.clone()
                }
            })
            .collect();
        known.dedup();
        return Err(CallError::NotFound(format!(
            "{crate_name} has no version {v} in the dependency index; known versions: {}",
            known.join(", ")
        )));
    }
    if let Some(d) = same_locked
        .into_iter()
        .max_by(|a, b| compare_versions(&a.version, &b.version))
    {
        return Ok(d);
    }
    same_all
        .into_iter()
        .max_by(|a, b| {
            a.index_project_id
                .is_some()
                .cmp(&b.index_project_id.is_some())
                .then_with(|| compare_versions(&a.version, &b.version))
        })
        .ok_or_else(|| unknown_crate(crate_name, locked))
}

/// A definition in a dependency, its path made absolute (inside the registry sources).
fn dependency_symbol(d: &DependencyIndex, mut s: SymbolRow) -> DependencySymbol {
    if let Some(root) = &d.source_root {
        s.file_path = Path::new(root)
            .join(&s.file_path)
            .to_string_lossy()
            .into_owned();
    }
    DependencySymbol {
        crate_name: d.crate_name.clone(),
        crate_version: d.version.clone(),
        symbol: symbol(s),
    }
}

impl HostImpl {
    /// What the call's project locks, after re-reading its `Cargo.lock` if it changed.
    fn locked_dependencies(&self, scope: &CallScope) -> Result<Vec<DependencyIndex>, CallError> {
        let p = self.project(scope)?;
        self.block(
            self.core
                .projects
                .deps()
                .ensure_current(p.id, Path::new(&p.root)),
        )
        .map_err(|e| CallError::Internal(format!("reading the project's Cargo.lock: {e:#}")))?;
        self.block(self.core.projects.db().dependency_indexes(p.id))
            .map_err(internal)
    }

    pub(super) fn deps_locked_crates(
        &self,
        scope: &CallScope,
    ) -> Result<Vec<LockedCrate>, CallError> {
        let locked = self.locked_dependencies(scope)?;
        let ids: Vec<i64> = locked.iter().filter_map(|d| d.index_project_id).collect();
        let counts = self
            .block(self.core.projects.db().symbol_counts(&ids))
            .map_err(internal)?;
        Ok(locked
            .into_iter()
            .map(|d| LockedCrate {
                symbols: d
                    .index_project_id
                    .and_then(|id| counts.get(&id).copied())
                    .unwrap_or(0),
                indexed: d.index_project_id.is_some(),
                name: d.crate_name,
                version: d.version,
                note: d.note,
            })
            .collect())
    }

    pub(super) fn deps_crate_symbols(
        &self,
        scope: &CallScope,
        crate_name: &str,
        version: Option<&str>,
    ) -> Result<Vec<DependencySymbol>, CallError> {
        let locked = self.locked_dependencies(scope)?;
        let all = self
            .block(self.core.projects.db().all_dependency_indexes())
            .map_err(internal)?;
        let chosen = choose_crate(&locked, &all, crate_name, version)?;
        let Some(id) = chosen.index_project_id else {
            let is_locked = locked.contains(chosen);
            return Err(not_indexed(chosen, is_locked));
        };
        let rows = self
            .block(self.core.projects.db().all_symbols(id))
            .map_err(internal)?;
        Ok(rows
            .into_iter()
            .map(|s| dependency_symbol(chosen, s))
            .collect())
    }

    pub(super) fn deps_symbols_by_name(
        &self,
        scope: &CallScope,
        name: &str,
        crate_name: Option<&str>,
    ) -> Result<Vec<DependencySymbol>, CallError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(CallError::InvalidArgument(
                "name is empty: pass the bare name of a definition, e.g. `Mutex`".into(),
            ));
        }
        let locked = self.locked_dependencies(scope)?;
        let targets: Vec<DependencyIndex> = match crate_name {
            None => locked.clone(),
            Some(c) => {
                let norm = normalize(c);
                if norm.is_empty() {
                    return Err(CallError::InvalidArgument(
                        "crate name is empty: pass a crate the project locks, or leave it out to search them all"
                            .into(),
                    ));
                }
                let same = |d: &&DependencyIndex| normalize(&d.crate_name) == norm;
                let mut t: Vec<DependencyIndex> = locked.iter().filter(same).cloned().collect();
                if t.is_empty() {
                    // Not locked here: any cached version of it.
                    let all = self
                        .block(self.core.projects.db().all_dependency_indexes())
                        .map_err(internal)?;
                    t = all.iter().filter(same).cloned().collect();
                }
                if t.is_empty() {
                    return Err(unknown_crate(c, &locked));
                }
                if t.iter().all(|d| d.index_project_id.is_none()) {
                    let newest = t
                        .iter()
                        .max_by(|a, b| compare_versions(&a.version, &b.version))
                        .expect("not empty");
                    return Err(not_indexed(newest, locked.contains(newest)));
                }
                t
            }
        };
        let ids: Vec<i64> = targets.iter().filter_map(|d| d.index_project_id).collect();
        let rows = self
            .block(self.core.projects.db().symbols_by_name_in(&ids, name))
            .map_err(internal)?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, s)| {
                let d = targets.iter().find(|d| d.index_project_id == Some(id))?;
                Some(dependency_symbol(d, s))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep(name: &str, version: &str, indexed: Option<i64>) -> DependencyIndex {
        DependencyIndex {
            crate_name: name.into(),
            version: version.into(),
            index_project_id: indexed,
            indexed_at: indexed.map(|_| "2026-12-01T00:00:00Z".into()),
            source_root: indexed.map(|_| format!("/reg/{name}-{version}")),
            note: indexed
                .is_none()
                .then(|| scryer_engine::deps::MISSING_NOTE.to_string()),
        }
    }

    fn message(e: CallError) -> String {
        super::super::message(&e).to_string()
    }

    #[test]
    fn the_locked_version_is_the_default_and_names_are_forgiving() {
        let locked = vec![
            dep("serde_json", "1.0.100", Some(1)),
            dep("syn", "1.0.109", Some(2)),
            dep("syn", "2.0.90", Some(3)),
        ];
        let all = [
            locked.clone(),
            vec![
                dep("syn", "2.1.0", Some(4)),
                dep("tokio", "1.40.0", Some(5)),
                dep("tokio", "1.41.0", None),
            ],
        ]
        .concat();
        let pick = |name: &str, v: Option<&str>| {
            choose_crate(&locked, &all, name, v)
                .map(|d| d.version.clone())
                .map_err(message)
        };
        assert_eq!(pick("Serde-JSON", None).unwrap(), "1.0.100");
        // Several locked versions: the newest locked one, not the newer cached one.
        assert_eq!(pick("syn", None).unwrap(), "2.0.90");
        assert_eq!(pick("syn", Some("1.0.109")).unwrap(), "1.0.109");
        assert_eq!(pick("syn", Some("=2.1.0")).unwrap(), "2.1.0");
        // Not locked here: the newest indexed cached version, over a newer unindexed one.
        assert_eq!(pick("tokio", None).unwrap(), "1.40.0");
        let err = pick("syn", Some("3.0.0")).unwrap_err();
        assert!(
            err.contains("no version 3.0.0")
                && err.contains("2.0.90 (locked)")
                && err.contains("2.1.0"),
            "{err}"
        );
        let err = pick("serde-jsn", None).unwrap_err();
        assert!(err.contains("closest locked crates: serde_json"), "{err}");
        let err = pick("zzz", None).unwrap_err();
        assert!(err.contains("none of the 3 locked crates"), "{err}");
        assert!(
            pick("  ", None)
                .unwrap_err()
                .contains("crate name is empty")
        );
        let none: Vec<DependencyIndex> = Vec::new();
        let err = message(choose_crate(&none, &none, "serde", None).unwrap_err());
        assert!(err.contains("locks no registry crates"), "{err}");
    }

    #[test]
    fn closest_names_rank_near_ones_first() {
        let locked = vec![
            dep("regex", "1.0.0", None),
            dep("regex-automata", "0.4.0", None),
            dep("regex-syntax", "0.8.0", None),
            dep("serde", "1.0.0", None),
        ];
        assert_eq!(closest("regx", &locked), vec!["regex".to_string()],);
        assert_eq!(
            closest("regex", &locked),
            vec!["regex", "regex-syntax", "regex-automata"]
        );
        assert!(closest("tokio", &locked).is_empty());
    }

    #[test]
    fn dependency_paths_are_absolute_and_unindexed_crates_say_why() {
        let d = dep("foo", "1.2.3", Some(7));
        let row = SymbolRow {
            name: "add_one".into(),
            kind: "function".into(),
            qualified_name: "foo::add_one".into(),
            owner: None,
            signature: "pub fn add_one(x: u32) -> u32".into(),
            docstring: None,
            start_line: 4,
            end_line: 6,
            name_line: 4,
            name_column: 8,
            file_path: "src/lib.rs".into(),
        };
        let s = dependency_symbol(&d, row);
        assert_eq!(s.symbol.file_path, "/reg/foo-1.2.3/src/lib.rs");
        assert_eq!(
            (s.crate_name.as_str(), s.crate_version.as_str()),
            ("foo", "1.2.3")
        );
        let err = message(not_indexed(&dep("bar", "0.9.0", None), true));
        assert_eq!(
            err,
            "bar 0.9.0 is locked but not indexed: not in the local cargo registry: run `cargo fetch`"
        );
    }
}
