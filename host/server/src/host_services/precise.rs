//! WIT 0.4's precise imports: `index.precise-usages` (and 0.5's `index.precise-usages-of`,
//! many definitions in one call), `index.precise-link`,
//! `index.precise-definitions-at`, `index.precise-unresolved` and `projects.precise-status`, over
//! [`crate::indexing::precise`]. A missing or failing indexer never fails a call: the answer is
//! `heuristic` and says why.

use scryer_db::ProjectRow;
use scryer_runtime::CallScope;
use scryer_runtime::wit::{
    CallError, DefinitionRef, FallbackFile, PreciseLanguage, PreciseLinkState, PreciseStage,
    PreciseTarget, PreciseUsageSet, PreciseUsageSets, ReferenceSite,
};

use super::{HostImpl, internal, symbol};
use crate::call::paths::lexical_relative;
use crate::indexing::precise::{LangState, answers};

impl HostImpl {
    /// The call's project row and `raw` as a path relative to its root, by spelling.
    fn precise_scope(
        &self,
        scope: &CallScope,
        raw: &str,
    ) -> Result<(std::sync::Arc<ProjectRow>, String), CallError> {
        let p = self.project(scope)?;
        // A key into the precise rows, never a file opened: taken by its spelling, with no
        // file system call (a router asks about each of a common name's definitions).
        let rel = lexical_relative(std::path::Path::new(&p.root), raw).ok_or_else(|| {
            CallError::InvalidArgument(format!(
                "file_path {raw:?}: not a path inside the project root {} (a path relative to it, or absolute under it)",
                p.root
            ))
        })?;
        Ok((self.precise_project(scope)?, rel))
    }

    /// The call's project row, read once a call: a router asks about each of a common
    /// name's definitions.
    fn precise_project(&self, scope: &CallScope) -> Result<std::sync::Arc<ProjectRow>, CallError> {
        let p = self.project(scope)?;
        scope.memo.get_or_try(format!("project-row\0{}", p.id), || {
            self.block(self.core.projects.db().project(p.id))
                .map_err(internal)?
                .ok_or_else(|| CallError::NotFound(format!("project {} is not registered", p.slug)))
        })
    }

    /// `index.precise-usages-of`: each definition's answer as `precise-usages` gives it,
    /// a definition whose data cannot be read answered `heuristic` with why; answers with
    /// no site that say the same (every definition of a language without precise data)
    /// share one entry, so it crosses into the component once.
    pub(super) fn precise_usages_many(
        &self,
        scope: &CallScope,
        definitions: &[DefinitionRef],
    ) -> Result<PreciseUsageSets, CallError> {
        self.project(scope)?;
        let mut out = SharedSets::default();
        // Off: every definition gets the one answer `precise-usages` gives when off.
        if self.core.projects.precise().mode() == scryer_engine::precise::PreciseMode::Off {
            let off = out.add(heuristic(None));
            out.answer_of = vec![off; definitions.len()];
            return Ok(out.into_sets());
        }
        // A language without precise data answers each of its definitions alike: worked
        // out once per language here, not per definition (`new` on the monorepo: 7,139).
        let project = self.precise_project(scope)?;
        let mut by_language: std::collections::HashMap<_, Option<u32>> = Default::default();
        for d in definitions {
            let language = lexical_relative(std::path::Path::new(&project.root), &d.file_path)
                .and_then(|rel| answers::precise_language_of(&rel));
            let shared = language.and_then(|language| {
                *by_language.entry(language).or_insert_with(|| {
                    let why = self
                        .block(answers::unindexed(&self.core.projects, &project, language))
                        .unwrap_or_else(|e| Some(format!("precise data could not be read: {e:#}")));
                    why.map(|why| out.add(heuristic(answers::PreciseUsages::heuristic(why).note)))
                })
            });
            let k = match shared {
                Some(k) => k,
                None => out.add(
                    self.precise_usages_of(scope, &d.file_path, d.start_line, &d.name)
                        .unwrap_or_else(|e| {
                            heuristic(Some(format!(
                                "precise data could not be read: {}",
                                super::message(&e)
                            )))
                        }),
                ),
            };
            out.answer_of.push(k);
        }
        Ok(out.into_sets())
    }

    pub(super) fn precise_usages_of(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
    ) -> Result<PreciseUsageSet, CallError> {
        // Off: no project row or path to look at (a router asks about each of a common
        // name's thousands of definitions), the answer `answers::usages` gives when off.
        if self.core.projects.precise().mode() == scryer_engine::precise::PreciseMode::Off {
            return Ok(PreciseUsageSet {
                precision: "heuristic".into(),
                sites: Vec::new(),
                fallback_files: Vec::new(),
                note: None,
            });
        }
        let (project, rel) = self.precise_scope(scope, file_path)?;
        let pm = &self.core.projects;
        // Whether the file's language has precise data at all is read once a call: a
        // router asks about each of a common name's definitions, and without it each
        // costs the same answer worked out again (`new` on the monorepo: 7,139 asked,
        // 134 ms; docs/learnings/scale.md, stop 40).
        let unindexed = match answers::precise_language_of(&rel) {
            Some(language) => {
                let key = format!("precise-unindexed\0{}\0{}", project.id, language.name());
                scope.memo.get_or_try(key, || {
                    self.block(answers::unindexed(pm, &project, language))
                        .map_err(internal)
                })?
            }
            None => std::sync::Arc::new(None),
        };
        let mut u = match unindexed.as_ref() {
            Some(why) => answers::PreciseUsages::heuristic(why.clone()),
            None => {
                let kept = self
                    .block(answers::usages_cached(pm, &project, &rel, start_line, name))
                    .map_err(internal)?;
                answers::PreciseUsages::clone(&kept)
            }
        };
        if u.precision != "heuristic" {
            let inactive = self
                .unresolved_of(&project, &rel, start_line, name)?
                .inactive_note(name);
            u.note = match (u.note.take(), inactive) {
                (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                (a, b) => a.or(b),
            };
        }
        Ok(PreciseUsageSet {
            precision: u.precision.to_string(),
            sites: u.sites.into_iter().map(reference_site).collect(),
            fallback_files: u
                .fallback
                .into_iter()
                .map(|(file_path, reason)| FallbackFile { file_path, reason })
                .collect(),
            note: u.note,
        })
    }

    /// The sites the indexer left unresolved; `unread_only`: those on lines it recorded
    /// nothing at.
    pub(super) fn precise_unresolved_of(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
        unread_only: bool,
    ) -> Result<Vec<ReferenceSite>, CallError> {
        let (project, rel) = self.precise_scope(scope, file_path)?;
        let found = self.unresolved_of(&project, &rel, start_line, name)?;
        Ok(found
            .sites
            .iter()
            .filter(|(_, unread)| *unread || !unread_only)
            .map(|(s, _)| reference_site(s.clone()))
            .collect())
    }

    /// [`answers::unresolved_cached`]: once per name and package until the index or the
    /// precise data moves (routers ask for the usages, the whole unresolved list and its
    /// unread part, of each of a name's definitions).
    fn unresolved_of(
        &self,
        project: &ProjectRow,
        rel: &str,
        start_line: u32,
        name: &str,
    ) -> Result<std::sync::Arc<answers::Unresolved>, CallError> {
        let pm = &self.core.projects;
        let Some(at) = self
            .block(answers::unresolved_scope(
                pm, project, rel, start_line, name,
            ))
            .map_err(internal)?
        else {
            return Ok(Default::default());
        };
        // One answer per name and package, whichever of its definitions asks, kept until
        // the index or the precise data moves.
        self.block(answers::unresolved_cached(pm, project, &at, name))
            .map_err(internal)
    }

    pub(super) fn precise_link_of(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
    ) -> Result<PreciseLinkState, CallError> {
        let (project, rel) = self.precise_scope(scope, file_path)?;
        let (precision, note) = self
            .block(answers::linked(
                &self.core.projects,
                &project,
                &rel,
                start_line,
                name,
            ))
            .map_err(internal)?;
        Ok(PreciseLinkState {
            precision: precision.into(),
            note,
        })
    }

    pub(super) fn precise_targets(
        &self,
        scope: &CallScope,
        file_path: &str,
        line: u32,
        name: &str,
    ) -> Result<PreciseTarget, CallError> {
        let (project, rel) = self.precise_scope(scope, file_path)?;
        let found = self
            .block(answers::definitions_at(
                &self.core.projects,
                &project,
                &rel,
                line,
                name,
            ))
            .map_err(internal)?;
        Ok(match found {
            Ok(defs) => PreciseTarget {
                precision: "precise".into(),
                definitions: defs.into_iter().map(symbol).collect(),
                note: None,
            },
            Err(why) => PreciseTarget {
                precision: "heuristic".into(),
                definitions: Vec::new(),
                note: Some(why),
            },
        })
    }

    pub(super) fn precise_status_of(
        &self,
        _scope: &CallScope,
        selector: &str,
    ) -> Result<PreciseStage, CallError> {
        let pm = &self.core.projects;
        let project = self
            .block(pm.db().project_by_selector(selector))
            .map_err(internal)?
            .ok_or_else(|| CallError::NotFound(format!("no registered project {selector:?}")))?;
        pm.precise().ensure(&project);
        let s = self.block(pm.precise().status(project.id, pm.generation(project.id)));
        Ok(PreciseStage {
            state: s.state,
            languages: s
                .languages
                .into_iter()
                .map(|l| {
                    let run = l.run.as_ref();
                    PreciseLanguage {
                        language: l.language.name().into(),
                        state: l.state.name().into(),
                        indexer: l.indexer.clone().or_else(|| run.map(|r| r.tool.clone())),
                        indexer_version: l
                            .indexer_version
                            .clone()
                            .or_else(|| run.map(|r| r.version.clone())),
                        source: run.map(|r| r.source.clone()),
                        files: run.map_or(0, |r| r.files as u32),
                        occurrences: run.map_or(0, |r| r.occurrences as u32),
                        duration_ms: run.and_then(|r| r.duration_ms).map(|v| v as u64),
                        peak_rss_kb: run.and_then(|r| r.peak_rss_kb).map(|v| v as u64),
                        finished_at: run.and_then(|r| r.finished_at.clone()),
                        error: match l.state {
                            LangState::Unavailable(why) | LangState::Failed(why) => Some(why),
                            _ => None,
                        },
                    }
                })
                .collect(),
            stale_files: s.stale_files,
            note: s.note,
        })
    }
}

fn reference_site(s: answers::PreciseSite) -> ReferenceSite {
    ReferenceSite {
        file_path: s.file_path,
        line: s.line,
        column: s.column,
        kind: s.kind,
        qualifier: s.qualifier,
        enclosing_symbol: s.enclosing_symbol,
        line_text: None,
    }
}

/// A `heuristic` answer with no site, saying `note`.
fn heuristic(note: Option<String>) -> PreciseUsageSet {
    PreciseUsageSet {
        precision: "heuristic".into(),
        sites: Vec::new(),
        fallback_files: Vec::new(),
        note,
    }
}

/// The answers of `precise-usages-of` as they are gathered: an answer with no site is
/// added once however many definitions get it (the same precision and note).
#[derive(Default)]
struct SharedSets {
    sets: Vec<PreciseUsageSet>,
    answer_of: Vec<u32>,
    without_sites: std::collections::HashMap<(String, Option<String>), u32>,
}

impl SharedSets {
    /// Adds `set`, or finds the same answer added before: its index in the sets.
    fn add(&mut self, set: PreciseUsageSet) -> u32 {
        let next = self.sets.len() as u32;
        if !(set.sites.is_empty() && set.fallback_files.is_empty()) {
            self.sets.push(set);
            return next;
        }
        let key = (set.precision.clone(), set.note.clone());
        let k = *self.without_sites.entry(key).or_insert(next);
        if k == next {
            self.sets.push(set);
        }
        k
    }

    fn into_sets(self) -> PreciseUsageSets {
        PreciseUsageSets {
            sets: self.sets,
            answer_of: self.answer_of,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_with_no_site_is_sent_once_and_one_with_sites_each_time() {
        let mut out = SharedSets::default();
        let a = out.add(heuristic(Some("no run yet".into())));
        let b = out.add(heuristic(None));
        assert_eq!(out.add(heuristic(Some("no run yet".into()))), a);
        assert_eq!(out.add(heuristic(None)), b);
        assert_ne!(a, b);
        let site = ReferenceSite {
            file_path: "src/a.rs".into(),
            line: 3,
            column: 5,
            kind: "call".into(),
            qualifier: None,
            enclosing_symbol: "a::f".into(),
            line_text: None,
        };
        let with_site = || PreciseUsageSet {
            precision: "precise".into(),
            sites: vec![site.clone()],
            fallback_files: Vec::new(),
            note: None,
        };
        let c = out.add(with_site());
        let d = out.add(with_site());
        assert_ne!(c, d);
        // The same precision and note, but a precise answer: not the heuristic one.
        let empty_precise = PreciseUsageSet {
            sites: Vec::new(),
            ..with_site()
        };
        let e = out.add(empty_precise.clone());
        assert_ne!(e, b);
        assert_eq!(out.add(empty_precise), e);
        assert_eq!(out.into_sets().sets.len(), 5);
    }
}
