//! Routers' native tests over one in-memory [`Host`]: [`MemHost`], the rows and files
//! a test sets, answered as the real host answers them; and builders for those rows,
//! written as briefly as a test reads them.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use crate::host::{
    CatalogProject, DecisionRow, DepSym, Document, Edge, Facts, Host, LockedCrate, RepoState,
    SearchHit, SearchPage, SearchScope, Site, Sym, TextMatch, TextMatches,
};
use crate::names::same_crate;
use crate::{ToolError, ToolResult};

/// How a [`MemHost`] scores a definition for a search query: (score, the query's
/// terms it matched); a score of 0 leaves it out.
pub type Scorer = fn(query: &str, symbol: &Sym) -> (f32, Vec<String>);

/// An in-memory host: what a test sets, answered as the real host answers it. Every
/// interface answers from its fields, empty by default; one named in
/// [`missing`](Self::missing) answers with an error, like a host without it.
///
/// Index rows keep the order they were set in, except a file's definitions (by line, as
/// the host reads a file) and a name's usage sites (by file and line, unless
/// [`sites_as_set`](Self::sites_as_set)).
#[derive(Default)]
pub struct MemHost {
    /// Definitions of the project.
    pub symbols: Vec<Sym>,
    /// Usage sites, each with the name it uses.
    pub sites: Vec<(String, Site)>,
    /// `calls` / `implements` / `instantiates` / `reexports` edges.
    pub edges: Vec<Edge>,
    /// Whether each edge is a usage site of its target too (before [`sites`](Self::sites)),
    /// so a fixture writes a call once.
    pub edges_are_sites: bool,
    /// Whether a name's usage sites keep the order they were set in (edges' first),
    /// instead of the host's: by file and line.
    pub sites_as_set: bool,
    /// Project files by path relative to the root: `read_lines`, line texts, the
    /// documents listed, decision files written.
    pub files: RefCell<BTreeMap<String, String>>,
    /// Files that failed to parse.
    pub parse_errors: Vec<String>,
    /// `None`: counted from the rows (files named by definitions, sites and files, parse
    /// failures, definitions, usage sites).
    pub facts: Option<Facts>,
    /// The crates the project locks.
    pub locked: Vec<LockedCrate>,
    /// Definitions in dependency crates.
    pub deps: Vec<DepSym>,
    /// How `search` scores a definition; `None`: [`word_score`].
    pub scorer: Option<Scorer>,
    /// Every search asked: (query, offset, limit).
    pub searches: RefCell<Vec<(String, u32, u32)>>,
    /// The documents' modification time.
    pub modified_ms: u64,
    /// Decision rows.
    pub decisions: RefCell<Vec<DecisionRow>>,
    /// Registered projects (the `catalog` interface).
    pub catalog: Vec<CatalogProject>,
    /// Working trees by project slug: `Ok(None)` outside git, `Err` when git fails.
    pub repos: BTreeMap<String, Result<Option<RepoState>, ToolError>>,
    /// Text files of registered projects, by (slug, path).
    pub catalog_files: BTreeMap<(String, String), String>,
    /// How the host counts tokens; `None`: the default estimate (4 bytes a token).
    pub token_counter: Option<fn(&str) -> u32>,
    /// Interfaces the host lacks: `index`, `edges` (the index's edge reads, which older
    /// hosts lack), `files`, `dependencies`, `search`, `docs`, `docs-write`, `git`,
    /// `catalog`.
    pub missing: BTreeSet<&'static str>,
    /// Documents the listing leaves out though they exist (as past the host's cap).
    pub unlisted: RefCell<BTreeSet<String>>,
    /// What happens between the router's calls (another writer, a concurrent purge):
    /// each runs once, before the next call of the `Host` method it names.
    pub before: RefCell<Vec<(&'static str, Hook)>>,
    /// `Host` methods that fail, with their error (a full disk).
    pub failing: RefCell<BTreeMap<&'static str, ToolError>>,
}

/// What a [`MemHost`] does before a call (see [`before`](MemHost::before)).
pub type Hook = Box<dyn FnOnce(&MemHost)>;

impl MemHost {
    /// A usage site of `name`.
    pub fn add_site(&mut self, name: &str, site: Site) {
        self.sites.push((name.to_string(), site));
    }

    /// A project file.
    pub fn add_file(&mut self, path: &str, text: impl Into<String>) {
        self.files.get_mut().insert(path.to_string(), text.into());
    }

    /// With a project file.
    pub fn with_file(mut self, path: &str, text: impl Into<String>) -> MemHost {
        self.add_file(path, text);
        self
    }

    /// Without `interface` (see [`missing`](Self::missing)).
    pub fn lacking(mut self, interface: &'static str) -> MemHost {
        self.missing.insert(interface);
        self
    }

    /// Runs `hook` once, before the next call of `method` (see [`before`](Self::before)).
    pub fn before_next(&self, method: &'static str, hook: impl FnOnce(&MemHost) + 'static) {
        self.before.borrow_mut().push((method, Box::new(hook)));
    }

    /// `method` fails with `error` from now on.
    pub fn fail(&self, method: &'static str, error: ToolError) {
        self.failing.borrow_mut().insert(method, error);
    }

    /// The start of a call of `method`, of `interface`: what is to happen before it,
    /// then its failure or the interface's absence.
    fn enter(&self, method: &'static str, interface: &str) -> ToolResult<()> {
        let due: Vec<Hook> = {
            let mut before = self.before.borrow_mut();
            let (due, rest) = std::mem::take(&mut *before)
                .into_iter()
                .partition(|(m, _)| *m == method);
            *before = rest;
            due.into_iter().map(|(_, hook)| hook).collect()
        };
        for hook in due {
            hook(self);
        }
        if let Some(e) = self.failing.borrow().get(method) {
            return Err(e.clone());
        }
        self.has(interface)
    }

    fn has(&self, interface: &str) -> ToolResult<()> {
        if self.missing.contains(interface) {
            return Err(ToolError::internal(format!(
                "the host interface `{interface}` is not available to this router"
            )));
        }
        Ok(())
    }

    /// The stored path `path` names: itself, or one it ends with as whole components
    /// (an absolute path under the root).
    fn file_key(&self, path: &str) -> Option<String> {
        let files = self.files.borrow();
        files
            .keys()
            .find(|k| path == k.as_str() || path.ends_with(&format!("/{k}")))
            .cloned()
    }

    fn line_of(&self, path: &str, line: u32) -> Option<String> {
        let key = self.file_key(path)?;
        let files = self.files.borrow();
        let text = files[&key].lines().nth(line.checked_sub(1)? as usize)?;
        Some(text.trim().to_string())
    }
}

/// The lower-case words of `text`, split at non-alphanumerics and lower-to-upper case
/// changes.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The default search score: [`score_by`] the lower-case words of the text.
pub fn word_score(query: &str, s: &Sym) -> (f32, Vec<String>) {
    score_by(words, query, s)
}

/// A search score over the terms `split` makes of the text: 2 for each query term in
/// the definition's name, 1/3 for one in its path, signature or doc; the terms matched,
/// each once.
pub fn score_by(split: fn(&str) -> Vec<String>, query: &str, s: &Sym) -> (f32, Vec<String>) {
    let name = split(&s.name);
    let rest = split(&format!(
        "{} {} {}",
        s.qualified_name,
        s.signature,
        s.docstring.as_deref().unwrap_or("")
    ));
    let mut score = 0.0;
    let mut matched = Vec::new();
    for q in split(query) {
        let mut hit = false;
        if name.contains(&q) {
            score += 2.0;
            hit = true;
        }
        if rest.contains(&q) {
            score += 1.0 / 3.0;
            hit = true;
        }
        if hit && !matched.contains(&q) {
            matched.push(q);
        }
    }
    (score, matched)
}

impl Host for MemHost {
    fn symbols_by_name(&self, name: &str) -> ToolResult<Vec<Sym>> {
        self.enter("symbols_by_name", "index")?;
        Ok(self
            .symbols
            .iter()
            .filter(|s| s.name == name)
            .cloned()
            .collect())
    }

    /// The qualified name, or one ending with `::qualified_name`.
    fn symbols_by_qualified_name(&self, qualified_name: &str) -> ToolResult<Vec<Sym>> {
        self.enter("symbols_by_qualified_name", "index")?;
        let suffix = format!("::{qualified_name}");
        Ok(self
            .symbols
            .iter()
            .filter(|s| s.qualified_name == qualified_name || s.qualified_name.ends_with(&suffix))
            .cloned()
            .collect())
    }

    fn references_to_name(&self, name: &str, with_line_text: bool) -> ToolResult<Vec<Site>> {
        self.enter("references_to_name", "index")?;
        let edge_sites = self
            .edges
            .iter()
            .filter(|e| self.edges_are_sites && e.to_name == name)
            .map(crate::attribution::edge_site);
        let named = self
            .sites
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| s.clone());
        let mut out: Vec<Site> = edge_sites
            .chain(named)
            .map(|mut s| {
                s.line_text = if with_line_text {
                    self.line_of(&s.file_path, s.line)
                } else {
                    None
                };
                s
            })
            .collect();
        if !self.sites_as_set {
            out.sort_by(|a, b| (&a.file_path, a.line).cmp(&(&b.file_path, b.line)));
        }
        Ok(out)
    }

    /// A file is indexed when a definition is in it or it is one of the files.
    fn file_symbols(&self, file_path: &str) -> ToolResult<Vec<Sym>> {
        self.enter("file_symbols", "index")?;
        let of = |s: &&Sym| {
            file_path == s.file_path || file_path.ends_with(&format!("/{}", s.file_path))
        };
        let mut out: Vec<Sym> = self.symbols.iter().filter(of).cloned().collect();
        if out.is_empty() && self.file_key(file_path).is_none() {
            return Err(ToolError::not_found(format!("{file_path} is not indexed")));
        }
        out.sort_by_key(|s| s.start_line);
        Ok(out)
    }

    fn file_has_parse_errors(&self, file_path: &str) -> ToolResult<bool> {
        self.enter("file_has_parse_errors", "index")?;
        Ok(self.parse_errors.iter().any(|f| f == file_path))
    }

    fn index_facts(&self) -> ToolResult<Facts> {
        self.enter("index_facts", "index")?;
        if let Some(facts) = &self.facts {
            return Ok(facts.clone());
        }
        let mut files: BTreeSet<&str> = self.symbols.iter().map(|s| s.file_path.as_str()).collect();
        files.extend(self.sites.iter().map(|(_, s)| s.file_path.as_str()));
        let stored = self.files.borrow();
        files.extend(stored.keys().map(String::as_str));
        Ok(Facts {
            files: files.len() as u32,
            parse_failures: self.parse_errors.len() as u32,
            symbols: self.symbols.len() as u32,
            references: self.sites.len() as u32,
            indexed_at: None,
        })
    }

    fn edges_from(&self, qualified_name: &str) -> ToolResult<Vec<Edge>> {
        self.enter("edges_from", "index")?;
        self.has("edges")?;
        Ok(self
            .edges
            .iter()
            .filter(|e| e.from_symbol == qualified_name)
            .cloned()
            .collect())
    }

    fn edges_to(&self, name: &str) -> ToolResult<Vec<Edge>> {
        self.enter("edges_to", "index")?;
        self.has("edges")?;
        Ok(self
            .edges
            .iter()
            .filter(|e| e.to_name == name)
            .cloned()
            .collect())
    }

    fn count_tokens(&self, text: &str) -> u32 {
        match self.token_counter {
            Some(count) => count(text),
            None => (text.len() as u32).div_ceil(4),
        }
    }

    /// As the host reads: lines are 1-based, at most 5,000 a call.
    fn read_lines(&self, file_path: &str, start: u32, end: u32) -> ToolResult<Vec<String>> {
        self.enter("read_lines", "files")?;
        if start == 0 || end < start {
            return Err(ToolError::invalid(format!(
                "lines {start}-{end}: lines are 1-based and the end may not precede the start"
            )));
        }
        let key = self
            .file_key(file_path)
            .ok_or_else(|| ToolError::not_found(format!("{file_path}: no such file")))?;
        let end = end.min(start.saturating_add(4_999));
        Ok(self.files.borrow()[&key]
            .lines()
            .skip(start as usize - 1)
            .take((end - start + 1) as usize)
            .map(String::from)
            .collect())
    }

    fn locked_crates(&self) -> ToolResult<Vec<LockedCrate>> {
        self.enter("locked_crates", "dependencies")?;
        Ok(self.locked.clone())
    }

    fn crate_symbols(&self, crate_name: &str, version: Option<&str>) -> ToolResult<Vec<DepSym>> {
        self.enter("crate_symbols", "dependencies")?;
        Ok(self
            .deps
            .iter()
            .filter(|d| {
                same_crate(&d.crate_name, crate_name)
                    && version.is_none_or(|v| d.crate_version == v)
            })
            .cloned()
            .collect())
    }

    fn dependency_symbols_by_name(
        &self,
        name: &str,
        crate_name: Option<&str>,
    ) -> ToolResult<Vec<DepSym>> {
        self.enter("dependency_symbols_by_name", "dependencies")?;
        Ok(self
            .deps
            .iter()
            .filter(|d| {
                d.symbol.name == name && crate_name.is_none_or(|c| same_crate(c, &d.crate_name))
            })
            .cloned()
            .collect())
    }

    /// The definitions the scorer scores above 0, best first (then by qualified name);
    /// a crate neither locked nor among the dependencies is not found.
    fn search(
        &self,
        query: &str,
        scope: SearchScope,
        crate_name: Option<&str>,
        offset: u32,
        limit: u32,
    ) -> ToolResult<SearchPage> {
        self.enter("search", "search")?;
        self.searches
            .borrow_mut()
            .push((query.to_string(), offset, limit));
        if let Some(c) = crate_name
            && scope == SearchScope::Dependencies
            && !self.locked.iter().any(|l| same_crate(&l.name, c))
            && !self.deps.iter().any(|d| same_crate(&d.crate_name, c))
        {
            return Err(ToolError::not_found(format!(
                "crate {c:?} is not locked by this project and no indexed version of it is cached"
            )));
        }
        let pool: Vec<(&Sym, Option<&DepSym>)> = match scope {
            SearchScope::Workspace => self.symbols.iter().map(|s| (s, None)).collect(),
            SearchScope::Dependencies => self
                .deps
                .iter()
                .filter(|d| crate_name.is_none_or(|c| same_crate(c, &d.crate_name)))
                .map(|d| (&d.symbol, Some(d)))
                .collect(),
        };
        let score = self.scorer.unwrap_or(word_score);
        let mut hits: Vec<SearchHit> = pool
            .into_iter()
            .filter_map(|(s, dep)| {
                let (score, matched) = score(query, s);
                (score > 0.0).then(|| SearchHit {
                    symbol: s.clone(),
                    score,
                    matched_terms: matched,
                    crate_name: dep.map(|d| d.crate_name.clone()),
                    crate_version: dep.map(|d| d.crate_version.clone()),
                })
            })
            .collect();
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.symbol.qualified_name.cmp(&b.symbol.qualified_name))
        });
        let total = hits.len() as u32;
        Ok(SearchPage {
            hits: hits
                .into_iter()
                .skip(offset as usize)
                .take(limit as usize)
                .collect(),
            total,
        })
    }

    /// The `.md` files directly in `dir`, by name, but the [`unlisted`](Self::unlisted).
    fn list_documents(&self, dir: &str) -> ToolResult<Vec<Document>> {
        self.enter("list_documents", "docs")?;
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        Ok(self
            .files
            .borrow()
            .iter()
            .filter(|(p, _)| {
                p.strip_prefix(&prefix)
                    .is_some_and(|n| !n.contains('/') && n.ends_with(".md") && !n.starts_with('.'))
                    && !self.unlisted.borrow().contains(*p)
            })
            .map(|(p, t)| Document {
                path: p.clone(),
                text: t.clone(),
                modified_ms: self.modified_ms,
            })
            .collect())
    }

    fn decision_rows(&self) -> ToolResult<Vec<DecisionRow>> {
        self.enter("decision_rows", "docs")?;
        Ok(self.decisions.borrow().clone())
    }

    /// A number already taken is refused.
    fn insert_decision_row(&self, row: &DecisionRow) -> ToolResult<()> {
        self.enter("insert_decision_row", "docs-write")?;
        if self
            .decisions
            .borrow()
            .iter()
            .any(|r| r.number == row.number)
        {
            return Err(ToolError::invalid(format!(
                "the project already has a decision numbered {}",
                row.number
            )));
        }
        self.decisions.borrow_mut().push(row.clone());
        Ok(())
    }

    fn delete_decision_rows(&self, number: u32) -> ToolResult<u32> {
        self.enter("delete_decision_rows", "docs-write")?;
        let mut rows = self.decisions.borrow_mut();
        let before = rows.len();
        rows.retain(|r| r.number != number);
        Ok((before - rows.len()) as u32)
    }

    /// A new file in `docs/adr`, named without a path.
    fn create_decision_file(&self, file_name: &str, text: &str) -> ToolResult<()> {
        self.enter("create_decision_file", "docs-write")?;
        let path = decision_file(file_name)?;
        let mut files = self.files.borrow_mut();
        if files.contains_key(&path) {
            return Err(ToolError::invalid(format!("{path} already exists")));
        }
        files.insert(path, text.to_string());
        Ok(())
    }

    /// A file in `docs/adr`, named without a path.
    fn delete_decision_file(&self, file_name: &str) -> ToolResult<()> {
        self.enter("delete_decision_file", "docs-write")?;
        match self.files.borrow_mut().remove(&decision_file(file_name)?) {
            Some(_) => Ok(()),
            None => Err(ToolError::not_found(format!(
                "no file docs/adr/{file_name}"
            ))),
        }
    }

    /// The working tree of `project` (by slug; `None`: the active project), with at most
    /// the commits and changes asked for.
    fn git_state(
        &self,
        project: Option<&str>,
        commit_limit: u32,
        change_limit: u32,
    ) -> ToolResult<Option<RepoState>> {
        self.enter("git_state", "git")?;
        let slug = match project {
            Some(p) => p.to_string(),
            None => self
                .catalog
                .iter()
                .find(|p| p.active)
                .map(|p| p.slug.clone())
                .ok_or_else(|| ToolError::not_found("no active project"))?,
        };
        match self.repos.get(&slug) {
            None => Err(ToolError::not_found(format!("no project {slug}"))),
            Some(Err(e)) => Err(e.clone()),
            Some(Ok(None)) => Ok(None),
            Some(Ok(Some(r))) => {
                let mut r = r.clone();
                r.commits.truncate(commit_limit as usize);
                r.changes.truncate(change_limit as usize);
                Ok(Some(r))
            }
        }
    }

    fn catalog_projects(&self) -> ToolResult<Vec<CatalogProject>> {
        self.enter("catalog_projects", "catalog")?;
        Ok(self.catalog.clone())
    }

    /// At most `max_bytes`, cut at a character boundary.
    fn read_text(&self, project: &str, path: &str, max_bytes: u32) -> ToolResult<Option<String>> {
        self.enter("read_text", "catalog")?;
        Ok(self
            .catalog_files
            .get(&(project.to_string(), path.to_string()))
            .map(|t| {
                let mut end = t.len().min(max_bytes as usize);
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                t[..end].to_string()
            }))
    }

    /// Case-insensitive, files by path; stopped early at the limit.
    fn grep(&self, project: &str, query: &str, limit: u32) -> ToolResult<TextMatches> {
        self.enter("grep", "catalog")?;
        let query = query.to_lowercase();
        let mut out = TextMatches::default();
        for ((p, path), text) in &self.catalog_files {
            if p != project {
                continue;
            }
            out.files_searched += 1;
            for (i, line) in text.lines().enumerate() {
                if line.to_lowercase().contains(&query) {
                    if out.matches.len() == limit as usize {
                        out.stopped_early = true;
                        return Ok(out);
                    }
                    out.matches.push(TextMatch {
                        path: path.clone(),
                        line: i as u32 + 1,
                        text: line.trim().to_string(),
                    });
                }
            }
        }
        Ok(out)
    }
}

/// The path of decision file `file_name`: in `docs/adr`, named without a path, as the
/// host takes it.
fn decision_file(file_name: &str) -> ToolResult<String> {
    if file_name.contains(['/', '\\']) || !file_name.ends_with(".md") {
        return Err(ToolError::invalid(format!(
            "{file_name:?} is not a decision file name"
        )));
    }
    Ok(format!("docs/adr/{file_name}"))
}

/// A definition named by the last segment of `qualified`, on lines 1–2 of `file`.
pub fn def(qualified: &str, kind: &str, owner: Option<&str>, file: &str) -> Sym {
    Sym {
        name: qualified.rsplit("::").next().unwrap_or(qualified).into(),
        kind: kind.into(),
        qualified_name: qualified.into(),
        owner: owner.map(Into::into),
        file_path: file.into(),
        start_line: 1,
        end_line: 2,
        ..Sym::default()
    }
}

/// `k::shapes::Circle::new` and `k::shapes::Square::new`: two owners' methods of one
/// name in one file, the shape most attribution tests start from.
pub fn circle_and_square_new() -> [Sym; 2] {
    [
        def(
            "k::shapes::Circle::new",
            "method",
            Some("Circle"),
            "src/shapes.rs",
        ),
        def(
            "k::shapes::Square::new",
            "method",
            Some("Square"),
            "src/shapes.rs",
        ),
    ]
}

/// An edge `from` → `to` written at `file:line` (column 5), `to` as `qualifier::name`
/// or `name`, with the usage kind `site` at the call site.
pub fn edge(kind: &str, from: &str, to: &str, site: &str, file: &str, line: u32) -> Edge {
    let (qualifier, name) = match to.rsplit_once("::") {
        Some((q, n)) => (Some(q.to_string()), n.to_string()),
        None => (None, to.to_string()),
    };
    Edge {
        kind: kind.into(),
        from_symbol: from.into(),
        to_name: name,
        to_qualifier: qualifier,
        site_kind: site.into(),
        file_path: file.into(),
        line,
        column: 5,
    }
}

/// A usage of `name` (paired with it, as test hosts store them) at `file:line`,
/// column 1, without line text.
pub fn site(
    name: &str,
    kind: &str,
    qualifier: Option<&str>,
    enclosing: &str,
    file: &str,
    line: u32,
) -> (String, Site) {
    (
        name.into(),
        Site {
            file_path: file.into(),
            line,
            column: 1,
            kind: kind.into(),
            qualifier: qualifier.map(Into::into),
            enclosing_symbol: enclosing.into(),
            line_text: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_path_splits_into_qualifier_and_name() {
        let e = edge("calls", "k::f", "Shape::area", "call", "src/a.rs", 3);
        assert_eq!(
            (e.to_qualifier.as_deref(), e.to_name.as_str()),
            (Some("Shape"), "area")
        );
        let e = edge("calls", "k::f", "area", "method_call", "src/a.rs", 3);
        assert_eq!((e.to_qualifier, e.to_name.as_str()), (None, "area"));
    }

    #[test]
    fn the_mem_host_answers_from_its_rows_and_lacks_what_it_is_told_to() {
        let mut h = MemHost {
            symbols: vec![def("k::f", "function", None, "src/a.rs")],
            edges: vec![edge("calls", "k::f", "g", "call", "src/b.rs", 2)],
            edges_are_sites: true,
            ..MemHost::default()
        }
        .with_file("src/b.rs", "fn x() {}\n  g();\n");
        let (name, s) = site("g", "use", None, "k", "src/a.rs", 1);
        h.add_site(&name, s);
        let sites = h.references_to_name("g", true).unwrap();
        let at: Vec<(&str, u32, Option<&str>)> = sites
            .iter()
            .map(|s| (s.file_path.as_str(), s.line, s.line_text.as_deref()))
            .collect();
        assert_eq!(at, [("src/a.rs", 1, None), ("src/b.rs", 2, Some("g();"))]);
        assert_eq!(h.symbols_by_qualified_name("f").unwrap().len(), 1);
        assert_eq!(h.read_lines("/r/src/b.rs", 2, 9).unwrap(), ["  g();"]);
        assert!(h.read_lines("src/b.rs", 0, 1).is_err());
        assert!(h.file_symbols("src/c.rs").is_err());
        assert_eq!(h.index_facts().unwrap().files, 2);
        assert!(h.edges_to("g").is_ok());
        let page = h
            .search("the f", SearchScope::Workspace, None, 0, 10)
            .unwrap();
        assert_eq!(
            (page.total, page.hits[0].matched_terms.as_slice()),
            (1, ["f".to_string()].as_slice())
        );
        assert_eq!(h.searches.borrow().len(), 1);
        let h = h.lacking("edges");
        assert!(h.edges_to("g").is_err());
        assert!(h.references_to_name("g", false).is_ok());
    }

    #[test]
    fn the_mem_host_runs_what_happens_between_calls_and_fails_as_told() {
        let h = MemHost::default()
            .with_file("docs/adr/0001-a.md", "# A\n")
            .with_file("docs/adr/0002-b.md", "# B\n");
        h.unlisted.borrow_mut().insert("docs/adr/0002-b.md".into());
        let listed = h.list_documents("docs/adr").unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].path, "docs/adr/0001-a.md");
        // Once, before the next call of the method named.
        h.before_next("decision_rows", |h| {
            h.decisions.borrow_mut().push(DecisionRow {
                number: 3,
                ..DecisionRow::default()
            })
        });
        assert!(h.decisions.borrow().is_empty());
        assert_eq!(h.decision_rows().unwrap().len(), 1);
        h.decisions.borrow_mut().clear();
        assert!(h.decision_rows().unwrap().is_empty());
        h.fail("create_decision_file", ToolError::internal("disk full"));
        let e = h.create_decision_file("0003-c.md", "# C\n").unwrap_err();
        assert_eq!(e.message, "disk full");
        assert!(h.delete_decision_file("../x.md").is_err());
        assert!(h.delete_decision_file("0001-a.md").is_ok());
    }
}
