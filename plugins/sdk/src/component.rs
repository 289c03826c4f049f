//! The WIT glue, compiled only for `wasm32`: the generated bindings (`crate::wit`), the
//! [`WitHost`] that forwards [`Host`] calls to the WIT imports, and what
//! [`export_router!`](crate::export_router) expands to.
//!
//! Architecture invariant: router logic is generic over `H: Host` (never `&dyn Host` on
//! the component path). Monomorphising keeps a component's imports to the interfaces
//! its logic really calls; a vtable would reference every import, and the host refuses
//! a component that imports an interface it was not granted.

use crate::host::*;
use crate::wit::scryer::router::{
    catalog, dependencies, docs, docs_write, files, git, index, log, projects, search, tokens,
    types,
};
use crate::{ErrorKind, ToolError, ToolResult};

pub fn from_wit(e: types::CallError) -> ToolError {
    let (kind, message) = match e {
        types::CallError::InvalidArgument(m) => (ErrorKind::InvalidArgument, m),
        types::CallError::NotFound(m) => (ErrorKind::NotFound, m),
        types::CallError::Denied(m) => (ErrorKind::Denied, m),
        types::CallError::Internal(m) => (ErrorKind::Internal, m),
    };
    ToolError { kind, message }
}

pub fn to_wit(e: ToolError) -> types::CallError {
    match e.kind {
        ErrorKind::InvalidArgument => types::CallError::InvalidArgument(e.message),
        ErrorKind::NotFound => types::CallError::NotFound(e.message),
        ErrorKind::Denied => types::CallError::Denied(e.message),
        ErrorKind::Internal => types::CallError::Internal(e.message),
    }
}

fn sym(s: index::Symbol) -> Sym {
    Sym {
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

fn site(r: index::ReferenceSite) -> Site {
    Site {
        file_path: r.file_path,
        line: r.line,
        column: r.column,
        kind: r.kind,
        qualifier: r.qualifier,
        enclosing_symbol: r.enclosing_symbol,
        line_text: r.line_text,
    }
}

fn edge(e: index::Edge) -> Edge {
    Edge {
        kind: e.kind,
        from_symbol: e.from_symbol,
        to_name: e.to_name,
        to_qualifier: e.to_qualifier,
        site_kind: e.site_kind,
        file_path: e.file_path,
        line: e.line,
        column: e.column,
    }
}

fn dep_sym(d: dependencies::DependencySymbol) -> DepSym {
    DepSym {
        crate_name: d.crate_name,
        crate_version: d.crate_version,
        symbol: sym(d.symbol),
    }
}

fn decision(r: docs::DecisionRow) -> DecisionRow {
    DecisionRow {
        number: r.number,
        title: r.title,
        status: r.status,
        file_path: r.file_path,
        text: r.text,
        recorded_at: r.recorded_at,
    }
}

fn status(s: projects::ProjectStatus) -> ProjectStatus {
    ProjectStatus {
        id: s.id,
        slug: s.slug,
        root: s.root,
        state: s.state,
        files_done: s.files_done,
        files_total: s.files_total,
        files: s.files,
        parse_failures: s.parse_failures,
        symbols: s.symbols,
        references: s.references,
        indexed_at: s.indexed_at,
        last_index_ms: s.last_index_ms,
        last_error: s.last_error,
        active: s.active,
    }
}

fn all<T, U>(r: Result<Vec<T>, types::CallError>, f: impl FnMut(T) -> U) -> ToolResult<Vec<U>> {
    Ok(r.map_err(from_wit)?.into_iter().map(f).collect())
}

/// [`Host`] over the WIT imports.
pub struct WitHost;

impl Host for WitHost {
    fn symbols_by_name(&self, name: &str) -> ToolResult<Vec<Sym>> {
        all(index::symbols_by_name(name), sym)
    }
    fn symbols_by_qualified_name(&self, qualified_name: &str) -> ToolResult<Vec<Sym>> {
        all(index::symbols_by_qualified_name(qualified_name), sym)
    }
    fn references_to_name(&self, name: &str, with_line_text: bool) -> ToolResult<Vec<Site>> {
        all(index::references_to_name(name, with_line_text), site)
    }
    fn references_of_kinds(&self, name: &str, kinds: &[&str]) -> ToolResult<Vec<Site>> {
        let kinds: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
        all(index::references_of_kinds(name, &kinds), site)
    }
    fn files_naming(&self, names: &[String]) -> ToolResult<Vec<String>> {
        index::files_naming(names).map_err(from_wit)
    }
    fn file_symbols(&self, file_path: &str) -> ToolResult<Vec<Sym>> {
        all(index::file_symbols(file_path), sym)
    }
    fn file_has_parse_errors(&self, file_path: &str) -> ToolResult<bool> {
        index::file_has_parse_errors(file_path).map_err(from_wit)
    }
    fn index_facts(&self) -> ToolResult<Facts> {
        let f = index::facts().map_err(from_wit)?;
        Ok(Facts {
            files: f.files,
            parse_failures: f.parse_failures,
            symbols: f.symbols,
            references: f.references,
            indexed_at: f.indexed_at,
        })
    }
    fn edges_from(&self, qualified_name: &str) -> ToolResult<Vec<Edge>> {
        all(index::edges_from(qualified_name), edge)
    }
    fn edges_to(&self, name: &str) -> ToolResult<Vec<Edge>> {
        all(index::edges_to(name), edge)
    }
    fn precise_usages(&self, def: &Sym) -> ToolResult<PreciseUsages> {
        let u =
            index::precise_usages(&def.file_path, def.start_line, &def.name).map_err(from_wit)?;
        Ok(PreciseUsages {
            precision: u.precision,
            sites: u.sites.into_iter().map(site).collect(),
            fallback_files: u
                .fallback_files
                .into_iter()
                .map(|f| (f.file_path, f.reason))
                .collect(),
            note: u.note,
        })
    }
    fn precise_unresolved(&self, def: &Sym) -> ToolResult<Vec<Site>> {
        all(
            index::precise_unresolved(&def.file_path, def.start_line, &def.name),
            site,
        )
    }
    fn precise_unread(&self, def: &Sym) -> ToolResult<Vec<Site>> {
        all(
            index::precise_unread(&def.file_path, def.start_line, &def.name),
            site,
        )
    }
    fn precise_link(&self, def: &Sym) -> ToolResult<(String, Option<String>)> {
        let l = index::precise_link(&def.file_path, def.start_line, &def.name).map_err(from_wit)?;
        Ok((l.precision, l.note))
    }
    fn precise_definitions_at(
        &self,
        file_path: &str,
        line: u32,
        name: &str,
    ) -> ToolResult<PreciseTarget> {
        let t = index::precise_definitions_at(file_path, line, name).map_err(from_wit)?;
        Ok(PreciseTarget {
            precision: t.precision,
            definitions: t.definitions.into_iter().map(sym).collect(),
            note: t.note,
        })
    }

    fn read_lines(
        &self,
        file_path: &str,
        start_line: u32,
        end_line: u32,
    ) -> ToolResult<Vec<String>> {
        files::read_lines(file_path, start_line, end_line).map_err(from_wit)
    }
    fn count_tokens(&self, text: &str) -> u32 {
        tokens::count(text)
    }
    fn log(&self, message: &str) {
        log::log(log::Level::Info, message)
    }

    fn locked_crates(&self) -> ToolResult<Vec<LockedCrate>> {
        all(dependencies::locked_crates(), |c| LockedCrate {
            name: c.name,
            version: c.version,
            indexed: c.indexed,
            note: c.note,
            symbols: c.symbols,
        })
    }
    fn crate_symbols(&self, crate_name: &str, version: Option<&str>) -> ToolResult<Vec<DepSym>> {
        all(dependencies::crate_symbols(crate_name, version), dep_sym)
    }
    fn dependency_symbols_by_name(
        &self,
        name: &str,
        crate_name: Option<&str>,
    ) -> ToolResult<Vec<DepSym>> {
        all(dependencies::symbols_by_name(name, crate_name), dep_sym)
    }

    fn search(
        &self,
        query: &str,
        scope: SearchScope,
        crate_name: Option<&str>,
        offset: u32,
        limit: u32,
    ) -> ToolResult<SearchPage> {
        let scope = match scope {
            SearchScope::Workspace => search::SearchScope::Workspace,
            SearchScope::Dependencies => search::SearchScope::Dependencies,
        };
        let page = search::query(query, scope, crate_name, offset, limit).map_err(from_wit)?;
        Ok(SearchPage {
            total: page.total,
            hits: page
                .hits
                .into_iter()
                .map(|h| SearchHit {
                    symbol: sym(h.symbol),
                    score: h.score,
                    matched_terms: h.matched_terms,
                    crate_name: h.crate_name,
                    crate_version: h.crate_version,
                })
                .collect(),
        })
    }

    fn list_documents(&self, dir: &str) -> ToolResult<Vec<Document>> {
        all(docs::list_documents(dir), |d| Document {
            path: d.path,
            text: d.text,
            modified_ms: d.modified_ms,
        })
    }
    fn decision_rows(&self) -> ToolResult<Vec<DecisionRow>> {
        all(docs::decision_rows(), decision)
    }
    fn insert_decision_row(&self, row: &DecisionRow) -> ToolResult<()> {
        docs_write::insert_decision_row(&docs::DecisionRow {
            number: row.number,
            title: row.title.clone(),
            status: row.status.clone(),
            file_path: row.file_path.clone(),
            text: row.text.clone(),
            recorded_at: row.recorded_at.clone(),
        })
        .map_err(from_wit)
    }
    fn delete_decision_rows(&self, number: u32) -> ToolResult<u32> {
        docs_write::delete_decision_rows(number).map_err(from_wit)
    }
    fn create_decision_file(&self, file_name: &str, text: &str) -> ToolResult<()> {
        docs_write::create_decision_file(file_name, text).map_err(from_wit)
    }
    fn delete_decision_file(&self, file_name: &str) -> ToolResult<()> {
        docs_write::delete_decision_file(file_name).map_err(from_wit)
    }

    fn list_projects(&self) -> ToolResult<Vec<ProjectStatus>> {
        all(projects::list_all(), status)
    }
    fn index_workspace(&self, path: &str, wait_ms: u32) -> ToolResult<ProjectStatus> {
        projects::index_workspace(path, wait_ms)
            .map(status)
            .map_err(from_wit)
    }
    fn project_status(&self, project: &str) -> ToolResult<ProjectStatus> {
        projects::status(project).map(status).map_err(from_wit)
    }
    fn switch_active_project(&self, project: &str) -> ToolResult<ProjectStatus> {
        projects::switch_active(project)
            .map(status)
            .map_err(from_wit)
    }
    fn delete_project(&self, project: &str) -> ToolResult<ProjectStatus> {
        projects::delete(project).map(status).map_err(from_wit)
    }
    fn index_gaps(&self, project: &str) -> ToolResult<Option<String>> {
        projects::index_gaps(project).map_err(from_wit)
    }
    fn precise_status(&self, project: &str) -> ToolResult<PreciseStatus> {
        let s = projects::precise_status(project).map_err(from_wit)?;
        Ok(PreciseStatus {
            state: s.state,
            languages: s
                .languages
                .into_iter()
                .map(|l| PreciseLanguage {
                    language: l.language,
                    state: l.state,
                    indexer: l.indexer,
                    indexer_version: l.indexer_version,
                    source: l.source,
                    files: l.files,
                    occurrences: l.occurrences,
                    duration_ms: l.duration_ms,
                    peak_rss_kb: l.peak_rss_kb,
                    finished_at: l.finished_at,
                    error: l.error,
                })
                .collect(),
            stale_files: s.stale_files,
            note: s.note,
        })
    }
    fn usage(&self, project: Option<&str>, since_hours: Option<u32>) -> ToolResult<Vec<ToolUsage>> {
        all(projects::usage(project, since_hours), |u| ToolUsage {
            tool: u.tool,
            calls: u.calls,
            errors: u.errors,
            tokens_mean: u.tokens_mean,
            tokens_p95: u.tokens_p95,
            truncated: u.truncated,
            latency_p50_ms: u.latency_p50_ms,
            latency_p95_ms: u.latency_p95_ms,
            followed_up: u.followed_up,
        })
    }

    fn git_state(
        &self,
        project: Option<&str>,
        commit_limit: u32,
        change_limit: u32,
    ) -> ToolResult<Option<RepoState>> {
        let state = git::state(project, commit_limit, change_limit).map_err(from_wit)?;
        Ok(state.map(|s| RepoState {
            branch: s.branch,
            head: s.head,
            last_commit_ms: s.last_commit_ms,
            commits: s
                .commits
                .into_iter()
                .map(|c| GitCommit {
                    hash: c.hash,
                    time_ms: c.time_ms,
                    author: c.author,
                    subject: c.subject,
                })
                .collect(),
            changes: s
                .changes
                .into_iter()
                .map(|c| GitChange {
                    path: c.path,
                    change: c.change,
                    staged: c.staged,
                })
                .collect(),
            changes_total: s.changes_total,
            untracked_total: s.untracked_total,
        }))
    }

    fn catalog_projects(&self) -> ToolResult<Vec<CatalogProject>> {
        all(catalog::list_projects(), |e| CatalogProject {
            id: e.project.id,
            slug: e.project.slug,
            root: e.project.root,
            state: e.state,
            files: e.files,
            symbols: e.symbols,
            indexed_at: e.indexed_at,
            active: e.active,
        })
    }
    fn read_text(&self, project: &str, path: &str, max_bytes: u32) -> ToolResult<Option<String>> {
        catalog::read_text(project, path, max_bytes).map_err(from_wit)
    }
    fn grep(&self, project: &str, query: &str, limit: u32) -> ToolResult<TextMatches> {
        let found = catalog::grep(project, query, limit).map_err(from_wit)?;
        Ok(TextMatches {
            matches: found
                .matches
                .into_iter()
                .map(|m| TextMatch {
                    path: m.path,
                    line: m.line,
                    text: m.text,
                })
                .collect(),
            files_searched: found.files_searched,
            stopped_early: found.stopped_early,
        })
    }
}

/// `describe`, for [`export_router!`](crate::export_router).
pub fn describe<R: Router>() -> types::PluginDescription {
    types::PluginDescription {
        name: R::NAME.into(),
        version: R::VERSION.into(),
        tools: R::tools()
            .into_iter()
            .map(|t| types::ToolDefinition {
                name: t.name.into(),
                description: t.description.into(),
                input_schema: t.schema.to_string(),
                annotations: types::ToolAnnotations {
                    title: None,
                    read_only: t.read_only,
                    destructive: t.destructive,
                    idempotent: t.idempotent,
                    open_world: false,
                },
                default_budget_tokens: t.default_budget,
                budget_per_item: t.budget_per_item.map(|(argument, tokens_per_item)| {
                    types::ItemBudget {
                        argument: argument.into(),
                        tokens_per_item,
                    }
                }),
                reads_index: t.reads_index,
            })
            .collect(),
    }
}

/// `describe-traits`, for [`export_router!`](crate::export_router).
pub fn describe_traits<R: Router>() -> Vec<types::ToolTraits> {
    R::tools()
        .into_iter()
        .map(|t| types::ToolTraits {
            tool: t.name.into(),
            tier: match t.tier {
                Tier::Core => types::ToolTier::Core,
                Tier::Extended => types::ToolTier::Extended,
            },
            host_parameters: t
                .host_params
                .iter()
                .map(|p| match p {
                    HostParam::Budget => types::HostParameter::Budget,
                    HostParam::Project => types::HostParameter::Project,
                    HostParam::ProjectSubject => types::HostParameter::ProjectSubject,
                })
                .collect(),
            instructions: t.guide.map(|(question, how)| types::InstructionsEntry {
                question: question.into(),
                how: how.into(),
            }),
        })
        .collect()
}

/// `answer`, for [`export_router!`](crate::export_router): the router's answer with the
/// host's notes in it, and the files it is about.
pub fn answer<R: Router>(
    tool: String,
    arguments: String,
    context: types::AnswerContext,
) -> Result<types::ToolAnswer, types::CallError> {
    let types::AnswerContext {
        call: context,
        notes,
    } = context;
    let result = call::<R>(tool.clone(), arguments, context)?;
    let files = R::answer_files(&tool, &result.body);
    let notes: Vec<crate::answer::HostNote> = notes
        .into_iter()
        .map(|n| crate::answer::HostNote {
            text: n.text,
            incomplete: n.incomplete,
        })
        .collect();
    Ok(types::ToolAnswer {
        body: crate::answer::with_notes(result.body, &notes),
        truncated: result.truncated,
        files,
    })
}

/// `call`, for [`export_router!`](crate::export_router).
pub fn call<R: Router>(
    tool: String,
    arguments: String,
    context: types::CallContext,
) -> Result<types::CallResult, types::CallError> {
    let ctx = Ctx {
        budget: context.budget_tokens,
        budget_explicit: context.budget_explicit,
        format: match context.format {
            types::OutputFormat::Json => Format::Json,
            types::OutputFormat::Text => Format::Text,
        },
        project: context.project.as_ref().map(|p| p.slug.clone()),
        project_root: context.project.map(|p| p.root),
    };
    let args = crate::args::Args::parse(&arguments).map_err(to_wit)?;
    let body = R::call(&WitHost, &tool, &args, &ctx).map_err(to_wit)?;
    let truncated = body.contains("\"next_offset\"") || body.contains("TRUNCATED");
    Ok(types::CallResult { body, truncated })
}
