//! Answers from precise data: which files it still applies to, a definition's usages, and
//! the definition a written site refers to.
//!
//! A file's precise rows apply while the content hash stored with them (taken when the
//! run started) equals the hash the tree-sitter index holds for the file now (the
//! watcher and the call-time refresh keep that current). Every other file of a covered
//! language is listed as a fallback file, with why: answers take the heuristic's sites
//! there, and only there.
//!
//! A scryer definition is linked to a SCIP symbol by position and name: the SCIP
//! definition occurrence in the same file, on the line of the definition's name, whose
//! symbol's last descriptor is that name (else the first such occurrence inside the
//! definition's lines).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::Result;
use scryer_db::{PRECISE_ROLE_DEFINITION, PreciseHit, ProjectRow, RefRow, SymbolRow};
use scryer_engine::precise::scip_read::{LOCAL, ROLE_IMPORT, ROLE_WRITE, symbol_name};
use scryer_engine::precise::{PreciseLanguage, PreciseMode};

use super::symbols::Symbols;
use super::{LangState, PreciseService};
use crate::indexing::projects::ProjectManager;

/// A file whose precise data does not apply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleFile {
    pub path: String,
    pub language: PreciseLanguage,
    pub reason: &'static str,
}

/// Which files of a project the stored precise data applies to, at one index and
/// precise generation.
#[derive(Debug, Default)]
pub struct Freshness {
    /// Fresh precise files: id → path.
    pub fresh: HashMap<i64, String>,
    /// Fresh precise files: path → id.
    pub fresh_by_path: HashMap<String, i64>,
    pub stale: Vec<StaleFile>,
    /// Languages with a complete stored run.
    pub complete: BTreeSet<PreciseLanguage>,
}

pub const EDITED: &str = "edited since the precise run";
const OFF: &str = "precise mode is off (SCRYER_PRECISE=off)";
pub const ADDED: &str = "added since the precise run";

/// One precise usage site, with what the heuristic knows about the same place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreciseSite {
    pub file_path: String,
    pub line: u32,
    pub column: u32,
    pub kind: String,
    pub qualifier: Option<String>,
    pub enclosing_symbol: String,
}

/// A definition's usages as precise data knows them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreciseUsages {
    /// `precise`, `mixed` or `heuristic` (no precise data for this definition: `note`).
    pub precision: &'static str,
    pub sites: Vec<PreciseSite>,
    /// Files the router answers with the heuristic: (path, reason).
    pub fallback: Vec<(String, String)>,
    pub note: Option<String>,
}

impl PreciseUsages {
    /// No precise data: `note` says why, except when precise mode is off (every answer
    /// would say the same; the status says it once).
    pub fn heuristic(note: String) -> PreciseUsages {
        PreciseUsages {
            precision: "heuristic",
            note: (note != OFF).then_some(note),
            ..Default::default()
        }
    }
}

impl PreciseService {
    /// Where `language`'s precise stage stands in the project, in words (`pending`,
    /// `unavailable: <why>`): as the scheduler holds it, else as [`status`](Self::status)
    /// reads it with the stored runs (a query, which a router asking about each of a
    /// common name's definitions made once per definition).
    pub async fn language_state(
        &self,
        project_id: i64,
        language: PreciseLanguage,
        index_generation: u64,
    ) -> String {
        let held = self
            .entries()
            .get(&project_id)
            .and_then(|e| e.languages.get(&language).map(|l| l.state.clone()));
        let state = match held {
            Some(state) => state,
            None => {
                let status = self.status(project_id, index_generation).await;
                match status
                    .languages
                    .into_iter()
                    .find(|l| l.language == language)
                {
                    Some(l) => l.state,
                    None => return status.state,
                }
            }
        };
        match &state {
            LangState::Unavailable(why) | LangState::Failed(why) => {
                format!("{}: {why}", state.name())
            }
            s => s.name().to_string(),
        }
    }

    /// The project's freshness at `index_generation`, cached until either generation moves.
    pub async fn freshness(
        &self,
        project_id: i64,
        index_generation: u64,
    ) -> Result<Arc<Freshness>> {
        let key = (index_generation, self.precise_generation());
        if let Some((k, f)) = self
            .freshness
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&project_id)
            && *k == key
        {
            return Ok(f.clone());
        }
        let runs = self.db().precise_runs(project_id).await?;
        let complete: BTreeSet<PreciseLanguage> = runs
            .iter()
            .filter(|r| r.complete)
            .filter_map(|r| PreciseLanguage::named(&r.language))
            .collect();
        let mut out = Freshness {
            complete: complete.clone(),
            ..Default::default()
        };
        // No complete run: no file is fresh or stale, and none is read. A project whose
        // first precise run has not finished asks this on each session's first call about
        // a definition (every file of the monorepo: about 20 ms).
        let (precise, files) = match complete.is_empty() {
            true => Default::default(),
            false => (
                self.db().precise_files(project_id).await?,
                self.db().files(project_id).await?,
            ),
        };
        for f in files.values() {
            let Some(lang) = PreciseLanguage::for_file_language(&f.language) else {
                continue;
            };
            if !complete.contains(&lang) {
                continue;
            }
            match precise.get(&f.path) {
                Some(p) if p.content_hash == f.content_hash => {
                    out.fresh.insert(p.id, f.path.clone());
                    out.fresh_by_path.insert(f.path.clone(), p.id);
                }
                Some(_) => out.stale.push(StaleFile {
                    path: f.path.clone(),
                    language: lang,
                    reason: EDITED,
                }),
                None => out.stale.push(StaleFile {
                    path: f.path.clone(),
                    language: lang,
                    reason: ADDED,
                }),
            }
        }
        out.stale.sort_by(|a, b| a.path.cmp(&b.path));
        let out = Arc::new(out);
        self.freshness
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(project_id, (key, out.clone()));
        Ok(out)
    }
}

/// Where precise data stands for a definition in `file` of `project`: the SCIP symbol
/// linked to it, or why none is.
enum Link {
    Linked {
        symbol_id: i64,
        /// The SCIP symbol (its package tells the project's own symbols apart).
        symbol: String,
        language: PreciseLanguage,
        freshness: Arc<Freshness>,
    },
    Not(String),
}

async fn link(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    start_line: u32,
    name: &str,
) -> Result<Link> {
    let service = pm.precise();
    if service.mode() == PreciseMode::Off {
        return Ok(Link::Not(OFF.into()));
    }
    service.ensure(project);
    // The language's precise index first: while there is none (not run yet, running, its
    // indexer missing), every definition of the name gets the same answer, given without
    // finding the definition among its name's (a scan each: `new` has 7,531 on the
    // monorepo, asked about one by one).
    let Some(language) = precise_language_of(file) else {
        return Ok(Link::Not(format!("no SCIP indexer covers {file}")));
    };
    let generation = pm.generation(project.id);
    let freshness = service.freshness(project.id, generation).await?;
    if !freshness.complete.contains(&language) {
        return Ok(Link::Not(
            no_index(service, project.id, language, generation).await,
        ));
    }
    let Some(def) = definition_row(pm, project, file, start_line, name).await? else {
        return Ok(Link::Not(format!(
            "no definition of `{name}` at {file}:{start_line} in the index"
        )));
    };
    let Some(&file_id) = freshness.fresh_by_path.get(file) else {
        return Ok(Link::Not(format!(
            "{file}, where the definition is, was edited since the precise run (or is not in it)"
        )));
    };
    let defs = service
        .in_file(
            project.id,
            file_id,
            def.start_line,
            def.end_line.max(def.name_line),
            true,
        )
        .await?;
    let named: Vec<&PreciseHit> = defs
        .iter()
        .filter(|h| symbol_name(&h.symbol).as_deref() == Some(name))
        .collect();
    let chosen = named
        .iter()
        .filter(|h| h.line == def.name_line)
        .min_by_key(|h| h.column.abs_diff(def.name_column))
        .or_else(|| named.first());
    Ok(match chosen {
        Some(h) => Link::Linked {
            symbol_id: h.symbol_id,
            symbol: h.symbol.clone(),
            language,
            freshness,
        },
        None => Link::Not(format!(
            "the {} indexer reports no definition of `{name}` at {file}:{}",
            language.name(),
            def.name_line
        )),
    })
}

/// The language of `file` whose SCIP indexer scryer runs, if any.
pub fn precise_language_of(file: &str) -> Option<PreciseLanguage> {
    scryer_engine::lang::language_for(file)
        .and_then(|l| PreciseLanguage::for_file_language(l.name()))
}

/// Why the project has no precise data for `language` now (`None`: it has a complete
/// run); asks for a first run when none was queued. Every definition of that language
/// gets this answer, so a caller asking about many may ask this once.
pub async fn unindexed(
    pm: &ProjectManager,
    project: &ProjectRow,
    language: PreciseLanguage,
) -> Result<Option<String>> {
    let service = pm.precise();
    if service.mode() == PreciseMode::Off {
        return Ok(Some(OFF.into()));
    }
    service.ensure(project);
    let generation = pm.generation(project.id);
    // The stored runs say whether there is a complete one; the freshness of every file
    // (a read of all of them: 26 ms on the monorepo) is worked out only when there is.
    let complete = service
        .db()
        .precise_runs(project.id)
        .await?
        .iter()
        .any(|r| r.complete && PreciseLanguage::named(&r.language) == Some(language));
    Ok(match complete {
        true => None,
        false => Some(no_index(service, project.id, language, generation).await),
    })
}

/// What a definition of `language` is answered with while the project has no complete
/// precise run for it.
async fn no_index(
    service: &PreciseService,
    project_id: i64,
    language: PreciseLanguage,
    generation: u64,
) -> String {
    format!(
        "no precise index of the project's {} files yet ({})",
        language.name(),
        service
            .language_state(project_id, language, generation)
            .await
    )
}

/// The scryer definition row starting at `start_line` in `file` named `name` (from the
/// name's definitions, which the index keeps per generation: a router asks about each of
/// a common name's definitions in turn).
async fn definition_row(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    start_line: u32,
    name: &str,
) -> Result<Option<SymbolRow>> {
    let symbols = pm.symbols_by_name(project.id, name).await?;
    Ok(symbols
        .iter()
        .find(|s| s.file_path == file && s.start_line == start_line && s.name == name)
        .cloned())
}

/// Whether the definition is linked to precise data: (`precise` or `heuristic`, why not).
pub async fn linked(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    start_line: u32,
    name: &str,
) -> Result<(&'static str, Option<String>)> {
    Ok(match link(pm, project, file, start_line, name).await? {
        Link::Linked { .. } => ("precise", None),
        Link::Not(why) => ("heuristic", (why != OFF).then_some(why)),
    })
}

/// [`usages`], kept across calls until the index or the precise data changes: every
/// view of `find_references`, `inspect_symbol` and `trace_call_hierarchy` asks about the
/// same definitions, and a common name's are hundreds.
pub async fn usages_cached(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    start_line: u32,
    name: &str,
) -> Result<Arc<PreciseUsages>> {
    let service = pm.precise();
    let at = (pm.generation(project.id), service.precise_generation());
    // As the index's own caches: nothing read while a run writes the rows is kept.
    let writing = pm.writing(project.id).await;
    let key = (project.id, file.to_string(), start_line, name.to_string());
    if !writing && let Some(found) = service.usages.get(&key, at) {
        return Ok(found);
    }
    let found = Arc::new(usages(pm, project, file, start_line, name).await?);
    if !writing {
        let weight = found.sites.len() + found.fallback.len() + 1;
        service.usages.keep(key, at, found.clone(), weight);
    }
    Ok(found)
}

/// The usages of the definition named `name` starting at `start_line` in `file`.
pub async fn usages(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    start_line: u32,
    name: &str,
) -> Result<PreciseUsages> {
    let (symbol_id, symbol, language, freshness) =
        match link(pm, project, file, start_line, name).await? {
            Link::Linked {
                symbol_id,
                symbol,
                language,
                freshness,
            } => (symbol_id, symbol, language, freshness),
            Link::Not(why) => return Ok(PreciseUsages::heuristic(why)),
        };
    // (occurrence, whether it is another member's: its definition is a usage too)
    let service = pm.precise();
    let held = service.held(project.id).await?;
    let symbols = &held.symbols;
    let mut hits: Vec<(PreciseHit, bool)> = service
        .occurrences_of(project.id, symbol_id)
        .await?
        .into_iter()
        .map(|h| (h, false))
        .collect();
    // `new C(..)` is an occurrence of C's constructor (scip-typescript's member
    // `<constructor>` of C): it uses the class.
    if symbol.ends_with('#') {
        let constructor = format!("{symbol}`<constructor>`().");
        for id in symbols.ids_of(&constructor) {
            let more = service.occurrences_of(project.id, id).await?;
            hits.extend(more.into_iter().map(|h| (h, false)));
        }
    }
    // A Rust trait item and the impls' items implementing it; a type's `Self` in its
    // impl blocks (ADR 0031).
    let family = held.family_of(&symbol);
    for &id in &family.members {
        let more = service.occurrences_of(project.id, id).await?;
        hits.extend(more.into_iter().map(|h| (h, true)));
    }
    // `Self` in the type's impl blocks names the type, not by its name: counted and
    // said, not listed (an agent reads uses of the type elsewhere; ADR 0031).
    let mut self_uses = 0usize;
    for &id in &family.impl_blocks {
        let more = service.occurrences_of(project.id, id).await?;
        self_uses += more
            .iter()
            .filter(|h| freshness.fresh.contains_key(&h.file_id))
            .count();
    }
    let heuristic = pm.references_to_name(project.id, name).await?;
    let mut enrich = Enricher::new(pm, project, &heuristic);
    let mut sites = Vec::new();
    for (h, member) in hits {
        let definition = h.roles & PRECISE_ROLE_DEFINITION != 0;
        if definition && !member {
            continue;
        }
        let Some(path) = freshness.fresh.get(&h.file_id) else {
            continue;
        };
        sites.push(enrich.site(path, &h).await?);
    }
    sites.sort_by(|a, b| (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column)));
    sites.dedup_by(|a, b| a.file_path == b.file_path && a.line == b.line && a.column == b.column);
    let fallback: Vec<(String, String)> = freshness
        .stale
        .iter()
        .filter(|s| s.language == language)
        .map(|s| (s.path.clone(), s.reason.to_string()))
        .collect();
    let precision = if fallback.is_empty() {
        "precise"
    } else {
        "mixed"
    };
    let mut notes = Vec::new();
    if self_uses > 0 {
        notes.push(format!(
            "{self_uses} `Self` use(s) inside the type's own impl blocks: not listed"
        ));
    }
    if language == PreciseLanguage::Python
        && let Some(other) = other_class_method(symbols, &symbol)
    {
        notes.push(format!(
            "`{other}` has a method of this name too: a receiver typed as a union or not at all may be either, and scip-python resolves a union to one member"
        ));
    }
    Ok(PreciseUsages {
        precision,
        sites,
        fallback,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

/// For a Python method (`…/Class#name().`), another class of the project with a method
/// of the same name, if any (its class as written in the symbol).
fn other_class_method(symbols: &Symbols, symbol: &str) -> Option<String> {
    let (_, method) = symbol.rsplit_once('#')?;
    if !method.ends_with("().") || !symbol.starts_with("scip-python ") {
        return None;
    }
    let pattern = format!("scip-python % %#{method}");
    let others = symbols.like(&pattern);
    // `…/Class#method().` of a class at a module's top (no `#` before it).
    let class_of = |s: &str| -> Option<String> {
        let class = s.strip_suffix(method)?.strip_suffix('#')?;
        (!class.contains('#')).then(|| class.rsplit(['/', ' ']).next().unwrap_or(class).into())
    };
    others
        .into_iter()
        .filter(|(_, s)| s != symbol)
        .find_map(|(_, s)| class_of(&s))
}

/// The sites of a linked definition's name that its precise usages do not settle.
#[derive(Debug, Default)]
pub struct Unresolved {
    /// Sites of `name` the tree-sitter index holds in fresh precise files of the
    /// definition's language where the indexer recorded no occurrence at all (of any
    /// symbol, locals included): it could not resolve what is written there, so its
    /// usages of the definition may miss them. Each with whether its line holds no
    /// occurrence of anything (`true`: code the indexer did not read).
    pub sites: Vec<(PreciseSite, bool)>,
    /// Rust only: the sites on lines rust-analyzer did not read. It reads every line the
    /// compiler builds with the run's features and `cfg`s, so these are code that build
    /// leaves out (an inactive `cfg`, a `macro_rules!` body): no usages in it, and not in
    /// `sites` (ADR 0031).
    pub inactive: Vec<PreciseSite>,
}

impl Unresolved {
    /// The note a precise answer carries about the inactive sites, if any.
    pub fn inactive_note(&self, name: &str) -> Option<String> {
        if self.inactive.is_empty() {
            return None;
        }
        let files: BTreeSet<&str> = self.inactive.iter().map(|s| s.file_path.as_str()).collect();
        let shown: Vec<&str> = files.iter().take(3).copied().collect();
        let more = files.len().saturating_sub(shown.len());
        Some(format!(
            "{} site(s) named `{name}` sit in code rust-analyzer did not build (an inactive `cfg` or a `macro_rules!` body), in {}{}: not answered",
            self.inactive.len(),
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more file(s)")
            } else {
                String::new()
            },
        ))
    }
}

/// What a linked definition's unresolved sites depend on besides its name: its
/// language, its package and the project's freshness. Every definition of a name that
/// shares them shares the answer, so a call weighing hundreds of a common name's
/// definitions computes it once per package (the memo's key), not once per definition.
pub struct UnresolvedScope {
    pub language: PreciseLanguage,
    /// The definition's SCIP package (`scheme manager name version`).
    pub own: Option<String>,
    freshness: Arc<Freshness>,
}

impl UnresolvedScope {
    /// A key naming the answer among a project's and name's.
    pub fn key(&self) -> String {
        format!(
            "{}\0{}",
            self.language.name(),
            self.own.as_deref().unwrap_or_default()
        )
    }
}

/// The scope of the definition's unresolved sites; none when it is not linked.
pub async fn unresolved_scope(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    start_line: u32,
    name: &str,
) -> Result<Option<UnresolvedScope>> {
    let Link::Linked {
        language,
        freshness,
        symbol,
        ..
    } = link(pm, project, file, start_line, name).await?
    else {
        return Ok(None);
    };
    Ok(Some(UnresolvedScope {
        language,
        own: package_of(&symbol).map(str::to_string),
        freshness,
    }))
}

/// [`unresolved_in`], kept across calls until the index or the precise data changes: a
/// name's answer costs a read of the precise occurrences in every file that holds it
/// (tokio's `drop`: 200 ms), and an agent's calls come back to the same names.
pub async fn unresolved_cached(
    pm: &ProjectManager,
    project: &ProjectRow,
    scope: &UnresolvedScope,
    name: &str,
) -> Result<Arc<Unresolved>> {
    let service = pm.precise();
    let at = (pm.generation(project.id), service.precise_generation());
    // As the index's own caches: nothing read while a run writes the rows is kept.
    let writing = pm.writing(project.id).await;
    let key = (project.id, format!("{}\0{name}", scope.key()));
    if !writing && let Some(found) = service.unresolved.get(&key, at) {
        return Ok(found);
    }
    let found = Arc::new(unresolved_in(pm, project, scope, name).await?);
    if !writing {
        service.unresolved.keep(key, at, found.clone(), 1);
    }
    Ok(found)
}

/// What the precise usages of a definition of `name` in `scope` leave unsettled
/// ([`Unresolved`]).
pub async fn unresolved_in(
    pm: &ProjectManager,
    project: &ProjectRow,
    scope: &UnresolvedScope,
    name: &str,
) -> Result<Unresolved> {
    let UnresolvedScope {
        language,
        own,
        freshness,
    } = scope;
    let language = *language;
    let mut defined: HashMap<i64, bool> = HashMap::new();
    let mut names_it: HashMap<i64, bool> = HashMap::new();
    let rows = pm.references_to_name(project.id, name).await?;
    let mut by_file: HashMap<i64, Vec<&RefRow>> = HashMap::new();
    for r in rows.iter() {
        let same_language = scryer_engine::lang::language_for(&r.file_path)
            .and_then(|l| PreciseLanguage::for_file_language(l.name()))
            == Some(language);
        if let (true, Some(&id)) = (same_language, freshness.fresh_by_path.get(&r.file_path)) {
            by_file.entry(id).or_default().push(r);
        }
    }
    let mut out = Unresolved::default();
    for (file_id, rows) in by_file {
        // Only the occurrences on the sites' lines decide them.
        let mut lines: Vec<u32> = rows.iter().map(|r| r.line).collect();
        lines.sort_unstable();
        lines.dedup();
        let path = rows[0].file_path.clone();
        let hits = pm.precise().on_lines(project.id, file_id, &lines).await?;
        let read: std::collections::HashSet<u32> = hits.iter().map(|h| h.line).collect();
        let hits = resolving(
            pm,
            project,
            (file_id, &path),
            hits,
            name,
            own.as_deref(),
            &mut defined,
        )
        .await?;
        // A site is resolved by an occurrence on its line at its column, or of a symbol
        // named `name` (indexers count columns differently). A symbol's name is parsed
        // only when no column matches, once per symbol.
        let mut at_line: HashMap<u32, Vec<&PreciseHit>> = HashMap::new();
        for h in &hits {
            at_line.entry(h.line).or_default().push(h);
        }
        let mut resolved = |r: &RefRow| {
            let Some(at) = at_line.get(&r.line) else {
                return false;
            };
            at.iter().any(|h| h.column == r.column)
                || at.iter().any(|h| {
                    *names_it
                        .entry(h.symbol_id)
                        .or_insert_with(|| symbol_name(&h.symbol).as_deref() == Some(name))
                })
        };
        let unresolved: Vec<&RefRow> = rows.into_iter().filter(|r| !resolved(r)).collect();
        for r in unresolved {
            let site = PreciseSite {
                file_path: r.file_path.clone(),
                line: r.line,
                column: r.column,
                kind: r.kind.clone(),
                qualifier: r.qualifier.clone(),
                enclosing_symbol: r.enclosing_symbol.clone(),
            };
            let unread = !read.contains(&r.line);
            if unread && language == PreciseLanguage::Rust {
                out.inactive.push(site);
            } else {
                out.sites.push((site, unread));
            }
        }
    }
    let order = |a: &PreciseSite, b: &PreciseSite| {
        (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column))
    };
    out.sites.sort_by(|(a, _), (b, _)| order(a, b));
    out.inactive.sort_by(order);
    Ok(out)
}

/// The occurrences of `hits` (in one fresh precise file) that resolve what is written at
/// them. Two kinds do not:
/// - an occurrence of one of the project's own symbols (`own` package) that the index
///   defines nowhere: the indexer named what is written without finding its definition
///   (scip-python's `click.BOOL`, reached through a re-export);
/// - a local at a site of `name` in a file where no local definition is named `name`:
///   the indexer did not bind the name (scip-python in code it holds unreachable, such as
///   under `if os.name == "nt":`).
async fn resolving(
    pm: &ProjectManager,
    project: &ProjectRow,
    (file_id, path): (i64, &str),
    hits: Vec<PreciseHit>,
    name: &str,
    own: Option<&str>,
    defined: &mut HashMap<i64, bool>,
) -> Result<Vec<PreciseHit>> {
    let mut kept = Vec::with_capacity(hits.len());
    let mut local_named: Option<bool> = None;
    for h in hits {
        if h.symbol == LOCAL {
            let named = match local_named {
                Some(n) => n,
                None => {
                    *local_named.insert(local_defined(pm, project, (file_id, path), name).await?)
                }
            };
            if !named {
                continue;
            }
        } else if own.is_some() && package_of(&h.symbol) == own && !is_impl_block(&h.symbol) {
            let has = match defined.get(&h.symbol_id) {
                Some(&d) => d,
                None => {
                    let d = pm.precise().has_definition(project.id, h.symbol_id).await?;
                    *defined.entry(h.symbol_id).or_insert(d)
                }
            };
            if !has {
                continue;
            }
        }
        kept.push(h);
    }
    Ok(kept)
}

/// rust-analyzer's symbol of an impl block (`…/impl#[Type][Trait]`), which `Self` in it
/// refers to: it has no definition occurrence, yet names what is written exactly.
fn is_impl_block(symbol: &str) -> bool {
    symbol.ends_with(']') && (symbol.contains("/impl#[") || symbol.contains(" impl#["))
}

/// Whether a local definition in the file is named `name` (the source at a local
/// definition's position reads `name`; columns are tried as bytes and as characters).
async fn local_defined(
    pm: &ProjectManager,
    project: &ProjectRow,
    (file_id, path): (i64, &str),
    name: &str,
) -> Result<bool> {
    let Ok(text) = std::fs::read_to_string(std::path::Path::new(&project.root).join(path)) else {
        return Ok(true);
    };
    let lines: Vec<&str> = text.lines().collect();
    let defs = pm.precise().local_definitions(project.id, file_id).await?;
    Ok(defs.iter().any(|&(line, column)| {
        let Some(line) = lines.get((line as usize).saturating_sub(1)) else {
            return false;
        };
        let at = (column as usize).saturating_sub(1);
        line.get(at..).is_some_and(|t| starts_with_ident(t, name))
            || starts_with_ident(&line.chars().skip(at).collect::<String>(), name)
    }))
}

/// `text` starts with the identifier `name` (not a longer identifier).
fn starts_with_ident(text: &str, name: &str) -> bool {
    text.strip_prefix(name).is_some_and(|rest| {
        !rest
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// A SCIP symbol's package (`scheme manager name version`); `None` for locals.
fn package_of(symbol: &str) -> Option<&str> {
    let mut cut = symbol.match_indices(' ').map(|(i, _)| i);
    let end = cut.nth(3)?;
    Some(&symbol[..end])
}

/// The definitions the occurrence of `name` on `line` of `file` refers to, per precise
/// data, as scryer definition rows; `Err(why)` when precise data cannot say.
pub async fn definitions_at(
    pm: &ProjectManager,
    project: &ProjectRow,
    file: &str,
    line: u32,
    name: &str,
) -> Result<std::result::Result<Vec<SymbolRow>, String>> {
    let service = pm.precise();
    if service.mode() == PreciseMode::Off {
        return Ok(Err(OFF.into()));
    }
    let freshness = service
        .freshness(project.id, pm.generation(project.id))
        .await?;
    let Some(&file_id) = freshness.fresh_by_path.get(file) else {
        return Ok(Err(format!(
            "{file} has no precise data that applies (not indexed by a SCIP indexer, or edited since the run)"
        )));
    };
    let here = pm
        .precise()
        .in_file(project.id, file_id, line, line, false)
        .await?;
    let Some(hit) = here
        .iter()
        .find(|h| symbol_name(&h.symbol).as_deref() == Some(name))
    else {
        return Ok(Err(format!(
            "the indexer reports no `{name}` on {file}:{line}"
        )));
    };
    let mut out = Vec::new();
    for d in pm
        .precise()
        .occurrences_of(project.id, hit.symbol_id)
        .await?
    {
        if d.roles & PRECISE_ROLE_DEFINITION == 0 {
            continue;
        }
        let Some(path) = freshness.fresh.get(&d.file_id) else {
            continue;
        };
        let rows = pm
            .db()
            .file_symbols(project.id, path)
            .await?
            .unwrap_or_default();
        out.extend(
            rows.into_iter()
                .filter(|s| s.name == name && s.name_line == d.line),
        );
    }
    if out.is_empty() {
        return Ok(Err(format!(
            "`{name}` on {file}:{line} refers to a definition outside the project's indexed files (a dependency or the standard library)"
        )));
    }
    Ok(Ok(out))
}

/// Gives a precise site the heuristic's kind, qualifier and enclosing symbol at the same
/// place, else an enclosing definition from the file's outline.
struct Enricher<'a> {
    pm: &'a ProjectManager,
    project: &'a ProjectRow,
    /// The name's heuristic rows, ordered by file, line and column (as
    /// `references_to_name` hands them): a place's rows are one run, found by bisection.
    rows: &'a [RefRow],
    outlines: HashMap<String, Vec<SymbolRow>>,
}

impl<'a> Enricher<'a> {
    fn new(pm: &'a ProjectManager, project: &'a ProjectRow, heuristic: &'a [RefRow]) -> Self {
        Enricher {
            pm,
            project,
            rows: heuristic,
            outlines: HashMap::new(),
        }
    }

    /// The heuristic's rows at `path:line`.
    fn rows_at(&self, path: &str, line: u32) -> &'a [RefRow] {
        let rows = self.rows;
        let start = rows.partition_point(|r| (r.file_path.as_str(), r.line) < (path, line));
        let len = rows[start..]
            .iter()
            .take_while(|r| r.file_path == path && r.line == line)
            .count();
        &rows[start..start + len]
    }

    async fn site(&mut self, path: &str, h: &PreciseHit) -> Result<PreciseSite> {
        if let Some(r) = self
            .rows_at(path, h.line)
            .iter()
            .min_by_key(|r| r.column.abs_diff(h.column))
        {
            return Ok(PreciseSite {
                file_path: path.to_string(),
                line: h.line,
                column: h.column,
                kind: r.kind.clone(),
                qualifier: r.qualifier.clone(),
                enclosing_symbol: r.enclosing_symbol.clone(),
            });
        }
        if !self.outlines.contains_key(path) {
            let rows = self
                .pm
                .db()
                .file_symbols(self.project.id, path)
                .await?
                .unwrap_or_default();
            self.outlines.insert(path.to_string(), rows);
        }
        let enclosing = self.outlines[path]
            .iter()
            .filter(|s| s.start_line <= h.line && h.line <= s.end_line && s.kind != "field")
            .min_by_key(|s| s.end_line - s.start_line)
            .map(|s| s.qualified_name.clone())
            .unwrap_or_else(|| path.to_string());
        let kind = if h.roles & PRECISE_ROLE_DEFINITION != 0 {
            // another family member's definition (an impl's item, the trait's item)
            "implements"
        } else if h.roles as i32 & ROLE_IMPORT != 0 {
            "use"
        } else if h.roles as i32 & ROLE_WRITE != 0 {
            "write"
        } else {
            "reference"
        };
        Ok(PreciseSite {
            file_path: path.to_string(),
            line: h.line,
            column: h.column,
            kind: kind.into(),
            qualifier: None,
            enclosing_symbol: enclosing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indexing::precise::limits::UNRESOLVED_KEPT;

    #[tokio::test]
    async fn kept_unresolved_sites_answer_only_at_their_generations() {
        let dir = tempfile::tempdir().unwrap();
        let db = scryer_db::Db::open(&dir.path().join("kept.db"))
            .await
            .unwrap();
        let service = PreciseService::new(db);
        let key = |n: &str| (1i64, format!("rust\0tokio\0{n}"));
        let found = Arc::new(Unresolved::default());
        let keep = |n: &str, at| service.unresolved.keep(key(n), at, found.clone(), 1);
        keep("new", (1, 0));
        assert!(service.unresolved.get(&key("new"), (1, 0)).is_some());
        // An index refresh or a precise run moves a generation: not answered from the kept.
        assert!(service.unresolved.get(&key("new"), (2, 0)).is_none());
        assert!(service.unresolved.get(&key("new"), (1, 1)).is_none());
        assert!(service.unresolved.get(&key("fmt"), (1, 0)).is_none());
        // At the bound, older generations' answers go first ...
        for i in 0..UNRESOLVED_KEPT {
            keep(&format!("n{i}"), (2, 0));
        }
        let kept = |n: &str| service.unresolved.get(&key(n), (2, 0)).is_some();
        assert!(service.unresolved.get(&key("new"), (1, 0)).is_none());
        assert!(kept("n0") && kept(&format!("n{}", UNRESOLVED_KEPT - 1)));
        // ... then, all of one generation, everything: a bound, whatever the names.
        keep("last", (2, 0));
        assert!(kept("last") && !kept("n0") && !kept("n1"));
    }
}
