//! What both graph tools share: finding the definition a `symbol` argument names (or
//! saying why there is none, or which several it could be), and stating how complete
//! an answer is.

use std::collections::{BTreeSet, HashSet};

use scryer_plugin_sdk::ToolResult;
use scryer_plugin_sdk::attribution::{SymbolQuery, Tie, edge_site};
use scryer_plugin_sdk::callgraph::{CallGraph, Provenance};
use scryer_plugin_sdk::host::{Ctx, Edge, Facts, Host, Sym};
use scryer_plugin_sdk::resolve::Attribution;
use serde_json::{Value, json};

/// Candidates listed in an ambiguous or no-match answer.
const MAX_CANDIDATES: usize = 10;
/// Files checked for parse errors per answer (each is a host call).
const MAX_PARSE_CHECKS: usize = 64;

/// The definition the traversal starts from, or an answer that says why there is none.
pub enum Root {
    One(Sym),
    /// Unknown name, no match, or several same-named definitions: the body to answer.
    Answer(Value),
}

pub fn location(d: &Sym) -> String {
    format!("{}:{}", d.file_path, d.start_line)
}

pub fn def_json(d: &Sym) -> Value {
    json!({
        "qualified_name": d.qualified_name,
        "kind": d.kind,
        "file_path": d.file_path,
        "line": d.start_line,
        "end_line": d.end_line,
    })
}

/// Resolves the root of a traversal. `kinds` are the edges whose count ranks the
/// candidates of an ambiguous name; `tool` names the call to repeat in `see_also`.
pub fn resolve_root<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    tool: &str,
    q: &SymbolQuery,
    file_path: Option<&str>,
    ctx: &Ctx,
    kinds: &[&str],
) -> ToolResult<Root> {
    let host = g.host();
    let names = g.names(&q.name, None)?;
    let picked = q.select_public(host, &names.defs, file_path);
    let project = ctx.project.as_deref().unwrap_or("this project");
    match picked.len() {
        1 => Ok(Root::One(names.defs[picked[0]].clone())),
        0 if names.defs.is_empty() => {
            let usages = host.references_to_name(&q.name, false)?.len();
            let note = if usages > 0 {
                format!(
                    "`{}` has no definition in {project}: {usages} usage(s) name it, so it likely comes from a dependency or std; inspect_symbol looks into dependencies",
                    q.name
                )
            } else {
                let files = host.index_facts().map(|f| f.files).unwrap_or(0);
                format!(
                    "unknown name: no symbol named `{}` is indexed in {project} ({files} files); check the spelling, or run index_workspace if the code is new",
                    q.name
                )
            };
            Ok(Root::Answer(json!({
                "symbol": q.text,
                "complete": false,
                "notes": [note],
            })))
        }
        0 => {
            let listed: Vec<Value> = names
                .defs
                .iter()
                .take(MAX_CANDIDATES)
                .map(|d| json!({"qualified_name": d.qualified_name, "kind": d.kind, "at": location(d)}))
                .collect();
            Ok(Root::Answer(json!({
                "symbol": q.text,
                "candidates": listed,
                "complete": false,
                "notes": [format!(
                    "no definition matches `{}`{}; {} definition(s) are named `{}`{}: call again with one of their qualified names",
                    q.text,
                    file_path.map(|f| format!(" in {f}")).unwrap_or_default(),
                    names.defs.len(),
                    q.name,
                    if names.defs.len() > MAX_CANDIDATES { " (first 10 listed)" } else { " (listed)" },
                )],
            })))
        }
        n => {
            // Usages per candidate, counted once over the name's edges, largest first.
            let edges: Vec<_> = host
                .edges_to(&q.name)?
                .into_iter()
                .filter(|e| kinds.contains(&e.kind.as_str()))
                .collect();
            let mut counts = vec![0usize; names.defs.len()];
            let mut open = 0;
            for e in &edges {
                match names.attribute(&edge_site(e)) {
                    Attribution::Resolved(i, _) => counts[i] += 1,
                    Attribution::Open(set) if set.iter().any(|i| picked.contains(i)) => open += 1,
                    _ => {}
                }
            }
            let mut ranked = picked.clone();
            ranked.sort_by_key(|&i| std::cmp::Reverse(counts[i]));
            let listed: Vec<Value> = ranked
                .iter()
                .take(MAX_CANDIDATES)
                .map(|&i| {
                    let d = &names.defs[i];
                    json!({"qualified_name": d.qualified_name, "kind": d.kind, "at": location(d), "usages": counts[i]})
                })
                .collect();
            let mut notes = vec![format!(
                "`{}` names {n} definitions; they are grouped, never merged{}",
                q.text,
                if n > MAX_CANDIDATES {
                    " (the 10 most used are listed)"
                } else {
                    ""
                }
            )];
            if open > 0 {
                notes.push(format!(
                    "{open} site(s) could belong to several of them and are in no count"
                ));
            }
            Ok(Root::Answer(json!({
                "symbol": q.text,
                "ambiguous": true,
                "candidate_count": n,
                "candidates": listed,
                "complete": false,
                "see_also": format!("{tool}(symbol: \"<one qualified_name above>\") for one of them"),
                "notes": notes,
            })))
        }
    }
}

/// Where an edge is written: one site may be met from several definitions.
type SiteKey = (String, u32, u32, String);

fn key(e: &Edge) -> SiteKey {
    (e.file_path.clone(), e.line, e.column, e.to_name.clone())
}

/// How far an answer can be trusted to be exhaustive.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Sites tied to their target by name only (one compatible definition).
    pub name_only: usize,
    /// Sites that could belong to another same-named definition.
    pub unresolved: usize,
    /// Member uses on receivers of unknown type in files that never name the owner,
    /// and never tied to anything the walk reached.
    pub unrelated: usize,
    /// Sites counted so far, so a site met from several definitions counts once.
    tied_sites: HashSet<SiteKey>,
    unrelated_sites: HashSet<SiteKey>,
    /// Answer files the parser could only partly read.
    pub failed_files: Vec<String>,
    /// The traversal stopped at this many nodes.
    pub capped_at: Option<usize>,
    /// Incoming lookups answered from precise data, and from the heuristic alone.
    precise_lookups: usize,
    heuristic_lookups: usize,
    /// Files answered by the heuristic although their language has precise data.
    fallback_files: BTreeSet<String>,
    /// Edge sites the indexer left unresolved, answered by the heuristic.
    indexer_unresolved: usize,
    /// Why the first heuristic lookup had no precise data.
    heuristic_note: Option<String>,
}

impl Coverage {
    /// Counts a site tied to a walked definition.
    pub fn tally(&mut self, e: &Edge, tie: Tie) {
        let k = key(e);
        self.unrelated_sites.remove(&k);
        if !self.tied_sites.insert(k) {
            return;
        }
        match tie {
            Tie::NameOnly => self.name_only += 1,
            Tie::Open => self.unresolved += 1,
            Tie::Exact => {}
        }
        self.unrelated = self.unrelated_sites.len();
    }

    /// Records sites left out as other types' members (unless tied elsewhere).
    pub fn left_out(&mut self, edges: &[Edge]) {
        for e in edges {
            let k = key(e);
            if !self.tied_sites.contains(&k) {
                self.unrelated_sites.insert(k);
            }
        }
        self.unrelated = self.unrelated_sites.len();
    }

    /// Counts where one lookup's edges came from.
    pub fn provenance(&mut self, p: &Provenance) {
        if p.precision == "precise" || p.precision == "mixed" {
            self.precise_lookups += 1;
            self.fallback_files.extend(p.fallback_files.iter().cloned());
            self.indexer_unresolved += p.unresolved;
        } else {
            self.heuristic_lookups += 1;
            if self.heuristic_note.is_none() {
                self.heuristic_note = p.note.clone();
            }
        }
    }

    /// Counts a lookup the heuristic answered (outgoing edges).
    pub fn heuristic_lookup(&mut self) {
        self.heuristic_lookups += 1;
    }

    /// The answer's `precision`: `precise` when precise data answered every lookup and
    /// no file fell back, `heuristic` when it answered none, else `mixed`. `None` when
    /// there is nothing to say (ADR 0021): no lookup had precise data and none said why
    /// (precise mode off, or a host without precise data), so every answer in the
    /// project would carry the same label and `get_indexing_status` says it once.
    pub fn precision(&self) -> Option<&'static str> {
        match (self.precise_lookups, self.heuristic_lookups) {
            (0, _) if self.heuristic_note.is_none() => None,
            (0, _) => Some("heuristic"),
            (_, 0) if self.fallback_files.is_empty() => Some("precise"),
            _ => Some("mixed"),
        }
    }

    /// What the answer says about its precision, when it is not plainly precise.
    pub fn precision_notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.fallback_files.is_empty() {
            let shown: Vec<&str> = self
                .fallback_files
                .iter()
                .take(5)
                .map(String::as_str)
                .collect();
            notes.push(format!(
                "precision mixed: {} file(s) fell back to the heuristic (edited or added since the precise run): {}{}",
                self.fallback_files.len(),
                shown.join(", "),
                if self.fallback_files.len() > shown.len() { ", …" } else { "" }
            ));
        }
        if self.precise_lookups > 0 && self.heuristic_lookups > 0 {
            notes.push(format!(
                "precision mixed: {} lookup(s) from precise data, {} from the heuristic (callees, or definitions without precise data{})",
                self.precise_lookups,
                self.heuristic_lookups,
                self.heuristic_note
                    .as_deref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            ));
        } else if self.precise_lookups == 0
            && let Some(n) = &self.heuristic_note
        {
            notes.push(format!("precision heuristic: {n}"));
        }
        notes
    }

    /// Why the answer is not exhaustive (empty: it is).
    pub fn gaps(&self) -> Vec<String> {
        let mut why = Vec::new();
        if !self.fallback_files.is_empty() {
            why.push(format!(
                "{} file(s) answered by the heuristic (edited or added since the precise run)",
                self.fallback_files.len()
            ));
        }
        if self.indexer_unresolved > 0 {
            why.push(format!(
                "{} site(s) the indexer left unresolved (answered by the heuristic)",
                self.indexer_unresolved
            ));
        }
        if self.name_only > 0 {
            why.push(format!(
                "{} edge(s) tied to their target by name only",
                self.name_only
            ));
        }
        if self.unresolved > 0 {
            why.push(format!(
                "{} call site(s) unresolved (they could target another same-named definition)",
                self.unresolved
            ));
        }
        if !self.failed_files.is_empty() {
            why.push(format!("parse errors in {}", self.failed_files.join(", ")));
        }
        if let Some(n) = self.capped_at {
            why.push(format!(
                "traversal stopped at {n} nodes: ask for a smaller depth"
            ));
        }
        why
    }

    /// Notes for the answer: the caveat, and what was left out on purpose. `member`
    /// names the member asked about, when there is one.
    pub fn notes(&self, member: Option<&str>) -> Vec<String> {
        let mut notes = Vec::new();
        let gaps = self.gaps();
        if !gaps.is_empty() {
            notes.push(format!("CAVEAT: not complete: {}", gaps.join("; ")));
        }
        if self.unrelated > 0 {
            let what = member.map_or_else(|| "member".to_string(), |m| format!("`.{m}`"));
            notes.push(format!(
                "{} {what} use(s) on receivers of unknown type sit in files that never name the owner: left out as most likely other types' members",
                self.unrelated
            ));
        }
        notes
    }

    /// Records which of `files` had parse errors, when the index has any.
    pub fn check_parse_errors<'a, H: Host + ?Sized>(
        &mut self,
        host: &H,
        facts: &Facts,
        files: impl IntoIterator<Item = &'a str>,
    ) {
        if facts.parse_failures == 0 {
            return;
        }
        let files: BTreeSet<&str> = files.into_iter().collect();
        for f in files.into_iter().take(MAX_PARSE_CHECKS) {
            if host.file_has_parse_errors(f).unwrap_or(false) {
                self.failed_files.push(f.to_string());
            }
        }
    }
}
