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
        let mut sets: Vec<PreciseUsageSet> = Vec::new();
        let mut empty: std::collections::HashMap<(String, Option<String>), u32> =
            Default::default();
        let mut answer_of = Vec::with_capacity(definitions.len());
        let heuristic = |note: Option<String>| PreciseUsageSet {
            precision: "heuristic".into(),
            sites: Vec::new(),
            fallback_files: Vec::new(),
            note,
        };
        // Off: every definition gets the one answer `precise-usages` gives when off.
        if self.core.projects.precise().mode() == scryer_engine::precise::PreciseMode::Off {
            return Ok(PreciseUsageSets {
                sets: vec![heuristic(None)],
                answer_of: vec![0; definitions.len()],
            });
        }
        // A language without precise data answers each of its definitions alike: worked
        // out once per language here, not per definition (`new` on the monorepo: 7,139).
        let project = self.precise_project(scope)?;
        let mut unindexed: std::collections::HashMap<_, Option<u32>> = Default::default();
        for d in definitions {
            let language = lexical_relative(std::path::Path::new(&project.root), &d.file_path)
                .and_then(|rel| answers::precise_language_of(&rel));
            if let Some(language) = language {
                let shared = match unindexed.get(&language) {
                    Some(k) => *k,
                    None => {
                        let why = self
                            .block(answers::unindexed(&self.core.projects, &project, language))
                            .unwrap_or_else(|e| {
                                Some(format!("precise data could not be read: {e:#}"))
                            });
                        let k = why.map(|why| {
                            sets.push(heuristic(answers::PreciseUsages::heuristic(why).note));
                            sets.len() as u32 - 1
                        });
                        unindexed.insert(language, k);
                        k
                    }
                };
                if let Some(k) = shared {
                    answer_of.push(k);
                    continue;
                }
            }
            let set = self
                .precise_usages_of(scope, &d.file_path, d.start_line, &d.name)
                .unwrap_or_else(|e| PreciseUsageSet {
                    precision: "heuristic".into(),
                    sites: Vec::new(),
                    fallback_files: Vec::new(),
                    note: Some(format!(
                        "precise data could not be read: {}",
                        error_text(&e)
                    )),
                });
            if set.sites.is_empty() && set.fallback_files.is_empty() {
                let key = (set.precision, set.note);
                let next = sets.len() as u32;
                let k = *empty.entry(key.clone()).or_insert(next);
                if k == next {
                    sets.push(PreciseUsageSet {
                        precision: key.0,
                        sites: Vec::new(),
                        fallback_files: Vec::new(),
                        note: key.1,
                    });
                }
                answer_of.push(k);
            } else {
                answer_of.push(sets.len() as u32);
                sets.push(set);
            }
        }
        Ok(PreciseUsageSets { sets, answer_of })
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

/// A call error's message, without its kind.
fn error_text(e: &CallError) -> &str {
    match e {
        CallError::InvalidArgument(m)
        | CallError::NotFound(m)
        | CallError::Denied(m)
        | CallError::Internal(m) => m,
    }
}
