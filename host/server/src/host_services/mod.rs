//! The host side of the WIT imports: index queries, file reads, token counting, logging
//! and project administration, over the database and the project manager.
//!
//! Runs on the blocking thread of a router call; async work is driven with the runtime
//! handle. Every query is scoped to the project the host resolved for the call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use scryer_db::{ProjectRow, RefRow, SymbolRow};
use scryer_runtime::wit::{CallError, IndexFacts, Level, ProjectStatus, ReferenceSite, Symbol};
use scryer_runtime::{CallScope, HostServices};

use crate::Core;
use crate::call::paths::project_relative;
use scryer_engine::safe_fs::Refused;

mod admin;
mod catalog;
mod deps;
mod docs;
pub(crate) mod file_cache;
mod git;
mod graph;
mod precise;
mod search;

use crate::indexing::projects::IndexState;
use scryer_runtime::wit::{
    DecisionRow, DependencySymbol, Document, Edge, LockedCrate, SearchPage, SearchScope, ToolUsage,
};

/// Longest line text returned with a reference, in characters.
const MAX_LINE_TEXT: usize = 200;
/// Most lines one `read-lines` call returns.
const MAX_READ_LINES: u32 = 5_000;

pub struct HostImpl {
    pub core: Arc<Core>,
}

/// A call error's message, without its kind.
pub(crate) fn message(e: &CallError) -> &str {
    match e {
        CallError::InvalidArgument(m)
        | CallError::NotFound(m)
        | CallError::Denied(m)
        | CallError::Internal(m) => m,
    }
}

pub(crate) fn internal(e: anyhow::Error) -> CallError {
    CallError::Internal(format!("{e:#}"))
}

pub(crate) fn symbol(s: SymbolRow) -> Symbol {
    Symbol {
        name: s.name,
        kind: s.kind,
        qualified_name: s.qualified_name,
        owner: s.owner,
        file_path: s.file_path,
        start_line: s.start_line,
        end_line: s.end_line,
        signature: s.signature,
        docstring: s.docstring,
    }
}

/// A stored usage row as the `index` interface gives it (rows are shared with the
/// usage cache, so fields are copied).
fn reference_site(r: &RefRow, line_text: Option<String>) -> ReferenceSite {
    ReferenceSite {
        file_path: r.file_path.clone(),
        line: r.line,
        column: r.column,
        kind: r.kind.clone(),
        qualifier: r.qualifier.clone(),
        enclosing_symbol: r.enclosing_symbol.clone(),
        line_text,
    }
}

/// Distinct definitions among a name's symbol rows as routers count them (one per
/// qualified name, modules left out): what attribution weighs each usage against.
pub(crate) fn distinct_definitions(rows: &[SymbolRow]) -> usize {
    rows.iter()
        .filter(|r| r.kind != "module")
        .map(|r| r.qualified_name.as_str())
        .collect::<std::collections::HashSet<_>>()
        .len()
}

fn clip(line: &str) -> String {
    let t = line.trim();
    if t.chars().count() > MAX_LINE_TEXT {
        format!("{}…", t.chars().take(MAX_LINE_TEXT).collect::<String>())
    } else {
        t.to_string()
    }
}

/// Directories the kernel makes up rather than files anyone wrote: indexing them reads
/// process memory maps and devices, and registers them as projects.
const KERNEL_FILESYSTEMS: &[&str] = &["/proc", "/sys", "/dev"];

/// What `root` (canonical) is when it cannot be a project root: `/`, or in a kernel
/// filesystem.
fn not_a_project_root(root: &Path) -> Option<&'static str> {
    if root.parent().is_none() {
        return Some("the file system root");
    }
    KERNEL_FILESYSTEMS
        .iter()
        .any(|k| root.starts_with(k))
        .then_some("in a kernel filesystem (/proc, /sys, /dev)")
}

impl HostImpl {
    pub(crate) fn block<F: std::future::Future>(&self, f: F) -> F::Output {
        self.core.handle.block_on(f)
    }

    pub(crate) fn project<'a>(
        &self,
        scope: &'a CallScope,
    ) -> Result<&'a scryer_runtime::wit::Project, CallError> {
        scope.project.as_ref().ok_or_else(|| {
            CallError::NotFound(
                "no project for this call: pass `project` (slug, id or root path) or an absolute `file_path`, \
                 or run index_workspace(path) first"
                    .into(),
            )
        })
    }

    /// Makes sure the call's usage window knows how many definitions `name` has (the
    /// window of its rows is sized by it, ADR 0029): a router usually looked them up
    /// already; when it did not, they are counted here.
    pub(super) fn know_definitions(
        &self,
        scope: &CallScope,
        project_id: i64,
        name: &str,
    ) -> Result<(), CallError> {
        if scope.window.definitions(name).is_none() {
            let rows = self
                .block(self.core.projects.symbols_by_name(project_id, name))
                .map_err(internal)?;
            scope
                .window
                .saw_definitions(name, distinct_definitions(&rows));
        }
        Ok(())
    }

    /// The indexed relative path for `raw`, or an error saying why there is none.
    fn indexed_file(&self, scope: &CallScope, raw: &str) -> Result<(i64, String), CallError> {
        let project = self.project(scope)?;
        let root = Path::new(&project.root);
        let rel = project_relative(root, raw)
            .map_err(|why| CallError::InvalidArgument(format!("file_path {raw:?}: {why}")))?;
        let known = self
            .block(self.core.projects.db().file(project.id, &rel))
            .map_err(internal)?;
        if known.is_none() {
            let on_disk = root.join(&rel);
            let skipped = self.core.projects.skipped(project.id);
            let why = if skipped.too_large.contains(&rel) {
                format!(
                    "{rel} is larger than {} MiB and is not indexed (too large)",
                    scryer_engine::file_limits::MAX_SOURCE_BYTES >> 20
                )
            } else if skipped.links_leaving_root.contains(&rel) {
                format!("{rel} is a link leading outside the project root; it is not indexed")
            } else if let Ok(meta) = std::fs::symlink_metadata(&on_disk)
                && !meta.is_file()
                && !meta.is_dir()
            {
                format!(
                    "{rel} is not a regular file (a link, FIFO, socket or device); only regular files are indexed"
                )
            } else if on_disk.is_file() {
                let accepted: Vec<String> = scryer_engine::lang::supported_extensions()
                    .map(|ext| format!(".{ext}"))
                    .collect();
                format!(
                    "{rel} exists but is not indexed in project `{}`: files ending {} are indexed, and files ignored by .gitignore are skipped",
                    project.slug,
                    accepted.join(" ")
                )
            } else if on_disk.is_dir() {
                format!("{rel} is a directory; pass a file")
            } else {
                format!(
                    "no file {rel} in project `{}` ({})",
                    project.slug, project.root
                )
            };
            return Err(CallError::NotFound(why));
        }
        Ok((project.id, rel))
    }

    pub(crate) fn status(
        &self,
        scope: &CallScope,
        p: &ProjectRow,
    ) -> Result<ProjectStatus, CallError> {
        let state = self.block(self.core.projects.state(p));
        let facts = self
            .block(self.core.projects.facts(p.id))
            .map_err(internal)?;
        let (done, total) = match state {
            IndexState::Building { done, total } | IndexState::Stale { done, total } => {
                (done, total)
            }
            _ => (0, 0),
        };
        let active = self.core.session(scope.session).active_project == Some(p.id);
        Ok(ProjectStatus {
            id: p.id,
            slug: p.slug.clone(),
            root: p.root.clone(),
            state: state.name().to_string(),
            files_done: done,
            files_total: total,
            files: facts.files,
            parse_failures: facts.parse_failures,
            symbols: facts.symbols,
            references: facts.references,
            indexed_at: p.indexed_at.clone(),
            last_index_ms: p.last_index_ms.map(|ms| ms as u64),
            last_error: p.last_error.clone(),
            active,
        })
    }
}

impl HostServices for HostImpl {
    fn precise_usages(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
    ) -> Result<scryer_runtime::wit::PreciseUsageSet, CallError> {
        self.precise_usages_of(scope, file_path, start_line, name)
    }

    fn precise_usages_of(
        &self,
        scope: &CallScope,
        definitions: &[scryer_runtime::wit::DefinitionRef],
    ) -> Result<scryer_runtime::wit::PreciseUsageSets, CallError> {
        self.precise_usages_many(scope, definitions)
    }

    fn precise_unresolved(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
    ) -> Result<Vec<scryer_runtime::wit::ReferenceSite>, CallError> {
        self.precise_unresolved_of(scope, file_path, start_line, name, false)
    }

    fn precise_unread(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
    ) -> Result<Vec<scryer_runtime::wit::ReferenceSite>, CallError> {
        self.precise_unresolved_of(scope, file_path, start_line, name, true)
    }

    fn precise_link(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        name: &str,
    ) -> Result<scryer_runtime::wit::PreciseLinkState, CallError> {
        self.precise_link_of(scope, file_path, start_line, name)
    }

    fn precise_definitions_at(
        &self,
        scope: &CallScope,
        file_path: &str,
        line: u32,
        name: &str,
    ) -> Result<scryer_runtime::wit::PreciseTarget, CallError> {
        self.precise_targets(scope, file_path, line, name)
    }

    fn precise_status(
        &self,
        scope: &CallScope,
        project: &str,
    ) -> Result<scryer_runtime::wit::PreciseStage, CallError> {
        self.precise_status_of(scope, project)
    }

    fn index_gaps(&self, _scope: &CallScope, project: &str) -> Result<Option<String>, CallError> {
        self.index_gaps_of(project)
    }

    fn symbols_by_name(&self, scope: &CallScope, name: &str) -> Result<Vec<Symbol>, CallError> {
        let p = self.project(scope)?;
        let rows = self
            .block(self.core.projects.symbols_by_name(p.id, name))
            .map_err(internal)?;
        scope
            .window
            .saw_definitions(name, distinct_definitions(&rows));
        Ok(rows.iter().cloned().map(symbol).collect())
    }

    fn symbols_by_qualified_name(
        &self,
        scope: &CallScope,
        qualified_name: &str,
    ) -> Result<Vec<Symbol>, CallError> {
        let p = self.project(scope)?;
        let name = qualified_name.rsplit("::").next().unwrap_or(qualified_name);
        // From the name's definitions as cached per index generation (a call hierarchy
        // asks this for every caller it meets: a query each cost 150 µs), matched as
        // `Db::symbols_by_qualified_name` matches: the qualified name, or a `::` suffix.
        let rows = self
            .block(self.core.projects.symbols_by_name(p.id, name))
            .map_err(internal)?;
        let suffix = format!("::{qualified_name}");
        Ok(rows
            .iter()
            .filter(|r| r.qualified_name == qualified_name || r.qualified_name.ends_with(&suffix))
            .cloned()
            .map(symbol)
            .collect())
    }

    fn references_to_name(
        &self,
        scope: &CallScope,
        name: &str,
        with_line_text: bool,
    ) -> Result<Vec<ReferenceSite>, CallError> {
        let p = self.project(scope)?;
        // A common name's rows are handed a window at a time (ADR 0024), and only the
        // window is read (ADR 0041).
        self.know_definitions(scope, p.id, name)?;
        let (read, window) = self
            .block(self.core.projects.usage_window(p.id, name, |total| {
                scope
                    .window
                    .take(name, scryer_runtime::window::USAGE_SITES, total)
            }))
            .map_err(internal)?;
        let rows = &read[window];
        // Read each file once, keeping only the lines asked for.
        let mut texts: HashMap<(String, u32), String> = HashMap::new();
        if with_line_text {
            let root = PathBuf::from(&p.root);
            let mut wanted: HashMap<&str, Vec<u32>> = HashMap::new();
            for r in rows.iter() {
                wanted.entry(&r.file_path).or_default().push(r.line);
            }
            for (file, mut lines) in wanted {
                lines.sort_unstable();
                lines.dedup();
                let Ok(bytes) = self.core.files.read(&root, file) else {
                    continue;
                };
                let text = String::from_utf8_lossy(&bytes);
                let mut next = lines.iter().peekable();
                for (i, l) in text.lines().enumerate() {
                    let Some(&&want) = next.peek() else { break };
                    if i as u32 + 1 == want {
                        texts.insert((file.to_string(), want), clip(l));
                        next.next();
                    }
                }
            }
        }
        Ok(rows
            .iter()
            .map(|r| {
                let line_text = texts.remove(&(r.file_path.clone(), r.line));
                reference_site(r, line_text)
            })
            .collect())
    }

    fn references_of_kinds(
        &self,
        scope: &CallScope,
        name: &str,
        kinds: &[String],
    ) -> Result<Vec<ReferenceSite>, CallError> {
        let p = self.project(scope)?;
        // Attribution resolves every importing file's paths for every crate it meets:
        // a common name's scope rows are windowed like its usages (ADR 0029), and only
        // the window is read (ADR 0049).
        self.know_definitions(scope, p.id, name)?;
        let what = if kinds.iter().all(|k| k == "use") {
            "import sites"
        } else {
            "import and implementation sites"
        };
        let (rows, handed) = self
            .block(self.core.projects.kinds_window(p.id, name, kinds, |total| {
                scope.window.take_scope(name, what, total)
            }))
            .map_err(internal)?;
        Ok(rows[handed]
            .iter()
            .map(|r| reference_site(r, None))
            .collect())
    }

    fn files_naming(&self, scope: &CallScope, names: &[String]) -> Result<Vec<String>, CallError> {
        let p = self.project(scope)?;
        self.block(self.core.projects.files_naming(p.id, names))
            .map_err(internal)
    }

    fn file_symbols(&self, scope: &CallScope, file_path: &str) -> Result<Vec<Symbol>, CallError> {
        let (project_id, rel) = self.indexed_file(scope, file_path)?;
        let rows = self
            .block(self.core.projects.db().file_symbols(project_id, &rel))
            .map_err(internal)?
            .unwrap_or_default();
        Ok(rows.into_iter().map(symbol).collect())
    }

    fn file_has_parse_errors(&self, scope: &CallScope, file_path: &str) -> Result<bool, CallError> {
        let (project_id, rel) = self.indexed_file(scope, file_path)?;
        let f = self
            .block(self.core.projects.db().file(project_id, &rel))
            .map_err(internal)?;
        Ok(f.is_some_and(|f| f.parse_errors))
    }

    fn index_facts(&self, scope: &CallScope) -> Result<IndexFacts, CallError> {
        let p = self.project(scope)?;
        let facts = self
            .block(self.core.projects.facts(p.id))
            .map_err(internal)?;
        let row = self
            .block(self.core.projects.db().project(p.id))
            .map_err(internal)?;
        Ok(IndexFacts {
            files: facts.files,
            parse_failures: facts.parse_failures,
            symbols: facts.symbols,
            references: facts.references,
            indexed_at: row.and_then(|r| r.indexed_at),
        })
    }

    fn read_lines(
        &self,
        scope: &CallScope,
        file_path: &str,
        start_line: u32,
        end_line: u32,
    ) -> Result<Vec<String>, CallError> {
        let p = self.project(scope)?;
        if start_line == 0 || end_line < start_line {
            return Err(CallError::InvalidArgument(format!(
                "lines {start_line}-{end_line}: lines are 1-based and the end may not precede the start"
            )));
        }
        let end_line = end_line.min(start_line.saturating_add(MAX_READ_LINES - 1));
        let root = Path::new(&p.root);
        let rel = project_relative(root, file_path)
            .map_err(|why| CallError::InvalidArgument(format!("file_path {file_path:?}: {why}")))?;
        let bytes = self.core.files.read(root, &rel).map_err(|why| match why {
            Refused::Missing => CallError::NotFound(format!("{rel}: no such file")),
            other => CallError::InvalidArgument(format!("{rel} is not read: it is {other}")),
        })?;
        Ok(line_range(&bytes, start_line, end_line))
    }

    fn count_tokens(&self, _scope: &CallScope, text: &str) -> u32 {
        crate::call::tokens::count(text)
    }

    fn log(&self, scope: &CallScope, level: Level, message: &str) {
        let plugin = &*scope.plugin;
        match level {
            Level::Debug => tracing::debug!(%plugin, "{message}"),
            Level::Info => tracing::info!(%plugin, "{message}"),
            Level::Warn => tracing::warn!(%plugin, "{message}"),
            Level::Error => tracing::error!(%plugin, "{message}"),
        }
    }

    fn list_projects(&self, scope: &CallScope) -> Result<Vec<ProjectStatus>, CallError> {
        let rows = self
            .block(self.core.projects.db().projects())
            .map_err(internal)?;
        rows.iter().map(|p| self.status(scope, p)).collect()
    }

    fn index_workspace(
        &self,
        scope: &CallScope,
        path: &str,
        wait_ms: u32,
    ) -> Result<ProjectStatus, CallError> {
        if path.contains('\0') {
            return Err(CallError::InvalidArgument(
                "path contains a NUL byte".into(),
            ));
        }
        let session = self.core.session(scope.session);
        let raw = PathBuf::from(path);
        let joined = if raw.is_absolute() {
            raw
        } else {
            session.cwd.join(raw)
        };
        let meta = std::fs::metadata(&joined).map_err(|_| {
            CallError::NotFound(format!(
                "{path} does not exist; pass the absolute path of a project directory"
            ))
        })?;
        if !meta.is_dir() {
            return Err(CallError::InvalidArgument(format!(
                "{path} is a file, not a directory; pass the project's root directory"
            )));
        }
        let root = std::fs::canonicalize(&joined)
            .map_err(|e| CallError::NotFound(format!("{path}: {e}")))?;
        if let Some(what) = not_a_project_root(&root) {
            return Err(CallError::InvalidArgument(format!(
                "`path` {path} is {what}, not a project; accepted: the absolute path of a project directory"
            )));
        }
        let (project, finished) = self
            .block(self.core.projects.register_and_index(&root))
            .map_err(internal)?;
        self.core.set_active_project(scope.session, project.id);
        if let Some(w) = &self.core.watcher {
            w.watch(&project);
        }
        self.block(crate::indexing::runs::wait_finished(
            finished,
            Duration::from_millis(u64::from(wait_ms)),
        ));
        let fresh = self
            .block(self.core.projects.db().project(project.id))
            .map_err(internal)?
            .unwrap_or(project);
        self.status(scope, &fresh)
    }

    fn project_status(
        &self,
        scope: &CallScope,
        selector: &str,
    ) -> Result<ProjectStatus, CallError> {
        let p = self
            .block(self.core.projects.db().project_by_selector(selector))
            .map_err(internal)?
            .ok_or_else(|| CallError::NotFound(self.core.unknown_project_message(selector)))?;
        self.status(scope, &p)
    }

    fn edges_from(&self, scope: &CallScope, qualified_name: &str) -> Result<Vec<Edge>, CallError> {
        self.graph_edges_from(scope, qualified_name)
    }

    fn edges_to(&self, scope: &CallScope, name: &str) -> Result<Vec<Edge>, CallError> {
        self.graph_edges_to(scope, name)
    }

    fn locked_crates(&self, scope: &CallScope) -> Result<Vec<LockedCrate>, CallError> {
        self.deps_locked_crates(scope)
    }

    fn crate_symbols(
        &self,
        scope: &CallScope,
        crate_name: &str,
        version: Option<&str>,
    ) -> Result<Vec<DependencySymbol>, CallError> {
        self.deps_crate_symbols(scope, crate_name, version)
    }

    fn dependency_symbols_by_name(
        &self,
        scope: &CallScope,
        name: &str,
        crate_name: Option<&str>,
    ) -> Result<Vec<DependencySymbol>, CallError> {
        self.deps_symbols_by_name(scope, name, crate_name)
    }

    fn search(
        &self,
        scope: &CallScope,
        query: &str,
        level: SearchScope,
        crate_name: Option<&str>,
        offset: u32,
        limit: u32,
    ) -> Result<SearchPage, CallError> {
        self.search_symbols(scope, query, level, crate_name, offset, limit)
    }

    fn list_documents(&self, scope: &CallScope, dir: &str) -> Result<Vec<Document>, CallError> {
        self.docs_list(scope, dir)
    }

    fn decision_rows(&self, scope: &CallScope) -> Result<Vec<DecisionRow>, CallError> {
        self.docs_decision_rows(scope)
    }

    fn insert_decision_row(&self, scope: &CallScope, row: &DecisionRow) -> Result<(), CallError> {
        self.docs_insert_decision_row(scope, row.clone())
    }

    fn delete_decision_rows(&self, scope: &CallScope, number: u32) -> Result<u32, CallError> {
        self.docs_delete_decision_rows(scope, number)
    }

    fn create_decision_file(
        &self,
        scope: &CallScope,
        file_name: &str,
        text: &str,
    ) -> Result<(), CallError> {
        self.docs_create_decision_file(scope, file_name, text)
    }

    fn delete_decision_file(&self, scope: &CallScope, file_name: &str) -> Result<(), CallError> {
        self.docs_delete_decision_file(scope, file_name)
    }

    fn switch_active_project(
        &self,
        scope: &CallScope,
        project: &str,
    ) -> Result<ProjectStatus, CallError> {
        self.admin_switch_active(scope, project)
    }

    fn delete_project(&self, scope: &CallScope, project: &str) -> Result<ProjectStatus, CallError> {
        self.admin_delete_project(scope, project)
    }

    fn usage(
        &self,
        scope: &CallScope,
        project: Option<&str>,
        since_hours: Option<u32>,
    ) -> Result<Vec<ToolUsage>, CallError> {
        self.admin_usage(scope, project, since_hours)
    }

    fn git_state(
        &self,
        scope: &CallScope,
        project: Option<&str>,
        commit_limit: u32,
        change_limit: u32,
    ) -> Result<Option<scryer_runtime::wit::RepoState>, CallError> {
        self.git_state_of(scope, project, commit_limit, change_limit)
    }

    fn catalog_projects(
        &self,
        scope: &CallScope,
    ) -> Result<Vec<scryer_runtime::wit::ProjectEntry>, CallError> {
        self.catalog_list(scope)
    }

    fn catalog_read_text(
        &self,
        _scope: &CallScope,
        project: &str,
        path: &str,
        max_bytes: u32,
    ) -> Result<Option<String>, CallError> {
        self.catalog_read(project, path, max_bytes)
    }

    fn catalog_grep(
        &self,
        _scope: &CallScope,
        project: &str,
        query: &str,
        limit: u32,
    ) -> Result<scryer_runtime::wit::TextMatches, CallError> {
        self.catalog_search(project, query, limit)
    }
}

/// Lines `start..=end` (1-based) of `bytes`, as `String::from_utf8_lossy(bytes).lines()`
/// gives them, decoding only those lines: a router reading one line of a large file
/// (a candidate's signature) no longer pays for decoding the whole file.
fn line_range(bytes: &[u8], start: u32, end: u32) -> Vec<String> {
    if bytes.is_empty() {
        return Vec::new();
    }
    // `lines()` yields no empty line after a final "\n", and strips "\r" only before "\n".
    let (body, ends_with_newline) = match bytes.strip_suffix(b"\n") {
        Some(body) => (body, true),
        None => (bytes, false),
    };
    // Line `start` begins just past the newline before it; only the lines asked for are
    // split off (under load, splitting whole files was 1.9 % of the daemon's CPU).
    let mut rest = match start {
        0 | 1 => body,
        _ => match memchr::memchr_iter(b'\n', body).nth(start as usize - 2) {
            Some(newline) => &body[newline + 1..],
            None => return Vec::new(),
        },
    };
    let mut lines = Vec::new();
    for _ in start..=end {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(newline) => (&rest[..newline], Some(&rest[newline + 1..])),
            None => (rest, None),
        };
        let terminated = next.is_some() || ends_with_newline;
        let line = match line.strip_suffix(b"\r") {
            Some(stripped) if terminated => stripped,
            _ => line,
        };
        lines.push(String::from_utf8_lossy(line).into_owned());
        match next {
            Some(next) => rest = next,
            None => break,
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::line_range;

    #[test]
    fn line_ranges_are_the_lines_the_whole_text_splits_into() {
        let texts: [&[u8]; 9] = [
            b"",
            b"\n",
            b"one",
            b"one\ntwo\n",
            b"one\r\ntwo\r\n\r\n",
            b"a\n\nb\r",
            b"bad \xff\xfe utf-8\n\xe2\x82\nok\r\n",
            b"\r\n\r\n",
            b"x\ny\nz",
        ];
        for text in texts {
            let whole: Vec<String> = String::from_utf8_lossy(text)
                .lines()
                .map(str::to_string)
                .collect();
            for start in 1..6u32 {
                for end in start..7u32 {
                    let want: Vec<String> = whole
                        .iter()
                        .skip(start as usize - 1)
                        .take((end - start + 1) as usize)
                        .cloned()
                        .collect();
                    assert_eq!(line_range(text, start, end), want, "{text:?} {start}-{end}");
                }
            }
        }
    }
}
