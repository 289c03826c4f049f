//! The one list of host functions, both sides of the seam: every WIT import a router may
//! call, how the host serves it and how a router asks for it. The list is a macro,
//! [`scryer_host_functions!`](crate::scryer_host_functions), that hands it to an
//! expander (`scryer_host_functions!(expander)`). Four expanders read it:
//!
//! - the SDK's [`Host`](crate::Host) trait (`host.rs`): the guest side of each entry,
//!   its signature and its default;
//! - `WitHost` (`component.rs`, wasm32 only): `Host` over the WIT imports;
//! - the runtime's `host_functions.rs`: its `HostServices` trait, the forwarders from
//!   each generated WIT `Host` trait to it, and the offline host;
//! - the runtime's `native.rs`: `NativeHost`, `Host` over `HostServices` (benchmarks).
//!
//! Adding a host function is its WIT, one entry here and the server's implementation
//! (`docs/dev/add-a-host-function.md`, ADR 0037).
//!
//! An entry reads
//!
//! ```text
//! fn <wit name>(<scope>, <arg>: <WIT type> => <host type>, ..) -> <WIT result>
//!     => <HostServices method> [default { .. }] [offline { .. }]
//!     guest fn <Host method>(&self, <arg>: <type>, ..) -> <result>
//!         [=> (<the WIT call's arguments>)] [{ <default> }];
//! ```
//!
//! The first part is the host's (ADR 0035): the `HostServices` method, its default for
//! hosts that may lack it, what the offline host answers; the first name in its
//! parentheses is what the call's scope is called in those bodies. The `guest` part is
//! the router's: the `Host` method, and, when its arguments are not the host method's,
//! the arguments of the WIT call made from them (`=> (..)`); without a default body the
//! method reports its interface unavailable. Results convert with [`Convert`] (the
//! records by [`scryer_host_conversions!`](crate::scryer_host_conversions)).
//!
//! Names in the entries resolve where an expander expands them: host-side types as
//! `wit::..` in the runtime, the SDK's types (`Sym`, `ToolResult`, ...) by their names,
//! interface modules (`log::Level`) as the bindings of each side name them.

/// A value the WIT bindings hand over (or take) as the value of the other side: a
/// WIT record as the SDK's plain type, a `call-error` as a [`ToolError`](crate::ToolError),
/// the SDK's `SearchScope` as the WIT's. Lists, options and results convert item by item.
pub trait Convert<T> {
    fn convert(self) -> T;
}

/// Plain values are the same on both sides.
macro_rules! same {
    ($($t:ty),*) => {
        $(impl Convert<$t> for $t {
            fn convert(self) -> $t {
                self
            }
        })*
    };
}

same!(String, bool, u32, u64, i64, f32, ());

impl<W: Convert<T>, T> Convert<Vec<T>> for Vec<W> {
    fn convert(self) -> Vec<T> {
        self.into_iter().map(Convert::convert).collect()
    }
}

impl<W: Convert<T>, T> Convert<Option<T>> for Option<W> {
    fn convert(self) -> Option<T> {
        self.map(Convert::convert)
    }
}

impl<W: Convert<T>, T, E: Convert<crate::ToolError>> Convert<crate::ToolResult<T>>
    for Result<W, E>
{
    fn convert(self) -> crate::ToolResult<T> {
        match self {
            Ok(w) => Ok(w.convert()),
            Err(e) => Err(e.convert()),
        }
    }
}

/// The one list of host functions (see the [module](crate::host_functions)): expands to
/// `$then! { interface <module> ("<WIT name>") { <entries> } .. }`.
#[macro_export]
macro_rules! scryer_host_functions {
    ($then:path) => {
        $then! {
            interface index ("index") {
                fn symbols_by_name(scope, name: String => &str)
                    -> Result<Vec<wit::Symbol>, wit::CallError> => symbols_by_name
                    guest fn symbols_by_name(&self, name: &str) -> ToolResult<Vec<Sym>>;
                fn symbols_by_qualified_name(scope, qualified_name: String => &str)
                    -> Result<Vec<wit::Symbol>, wit::CallError> => symbols_by_qualified_name
                    guest fn symbols_by_qualified_name(&self, qualified_name: &str)
                        -> ToolResult<Vec<Sym>>;
                fn references_to_name(scope, name: String => &str, with_line_text: bool => bool)
                    -> Result<Vec<wit::ReferenceSite>, wit::CallError> => references_to_name
                    guest fn references_to_name(&self, name: &str, with_line_text: bool)
                        -> ToolResult<Vec<Site>>;
                /// `name`'s usage sites whose kind is one of `kinds`, without line text.
                fn references_of_kinds(scope, name: String => &str, kinds: Vec<String> => &[String])
                    -> Result<Vec<wit::ReferenceSite>, wit::CallError> => references_of_kinds
                    /// `name`'s usage sites of `kinds` only, without line text. By default
                    /// filtered from [`references_to_name`](Self::references_to_name); the
                    /// component asks the host, which reads only those rows.
                    guest fn references_of_kinds(&self, name: &str, kinds: &[&str])
                        -> ToolResult<Vec<Site>>
                        => (name, &kinds.iter().map(|k| k.to_string()).collect::<Vec<String>>())
                    {
                        let mut sites = self.references_to_name(name, false)?;
                        sites.retain(|s| kinds.contains(&s.kind.as_str()));
                        Ok(sites)
                    };
                /// The files that use any of `names`, sorted, each once.
                fn files_naming(scope, names: Vec<String> => &[String])
                    -> Result<Vec<String>, wit::CallError> => files_naming
                    /// The files that use any of `names`, sorted, each once. By default read
                    /// off [`references_to_name`](Self::references_to_name); the component
                    /// asks the host.
                    guest fn files_naming(&self, names: &[String]) -> ToolResult<Vec<String>> {
                        let mut files = std::collections::BTreeSet::new();
                        for name in names {
                            files.extend(
                                self.references_to_name(name, false)?
                                    .into_iter()
                                    .map(|s| s.file_path),
                            );
                        }
                        Ok(files.into_iter().collect())
                    };
                fn file_symbols(scope, file_path: String => &str)
                    -> Result<Vec<wit::Symbol>, wit::CallError> => file_symbols
                    guest fn file_symbols(&self, file_path: &str) -> ToolResult<Vec<Sym>>;
                fn file_has_parse_errors(scope, file_path: String => &str)
                    -> Result<bool, wit::CallError> => file_has_parse_errors
                    guest fn file_has_parse_errors(&self, file_path: &str) -> ToolResult<bool>;
                fn facts(scope) -> Result<wit::IndexFacts, wit::CallError> => index_facts
                    guest fn index_facts(&self) -> ToolResult<Facts>;
                /// Graph edges that start in `qualified_name`.
                fn edges_from(scope, qualified_name: String => &str)
                    -> Result<Vec<wit::Edge>, wit::CallError> => edges_from
                    guest fn edges_from(&self, qualified_name: &str) -> ToolResult<Vec<Edge>>;
                /// Graph edges whose written target is `name`.
                fn edges_to(scope, name: String => &str)
                    -> Result<Vec<wit::Edge>, wit::CallError> => edges_to
                    guest fn edges_to(&self, name: &str) -> ToolResult<Vec<Edge>>;
                /// Since WIT 0.4: a definition's usages from precise (SCIP) data. By default
                /// there is none, and the answer says so.
                fn precise_usages(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
                    -> Result<wit::PreciseUsageSet, wit::CallError> => precise_usages
                    default {
                        Ok(wit::PreciseUsageSet {
                            precision: "heuristic".into(),
                            sites: Vec::new(),
                            fallback_files: Vec::new(),
                            note: None,
                        })
                    }
                    /// Since WIT 0.4: the usages of the definition `def` by precise data. By
                    /// default there is none (`heuristic`), so native test hosts need nothing.
                    guest fn precise_usages(&self, def: &Sym) -> ToolResult<PreciseUsages>
                        => (&def.file_path, def.start_line, &def.name)
                    {
                        Ok(PreciseUsages {
                            precision: "heuristic".into(),
                            ..Default::default()
                        })
                    };
                /// Since WIT 0.5: `precise_usages` of many definitions in one call, each
                /// distinct answer once.
                fn precise_usages_of(scope, definitions: Vec<wit::DefinitionRef> => &[wit::DefinitionRef])
                    -> Result<wit::PreciseUsageSets, wit::CallError> => precise_usages_of
                    /// Since WIT 0.5: the precise usages of each of `defs`, in one call:
                    /// [`PreciseUsageSets::of`] gives each definition's. By default asked one
                    /// by one with [`precise_usages`](Self::precise_usages), a definition whose
                    /// data cannot be read answered `heuristic` with the reason.
                    guest fn precise_usages_of(&self, defs: &[&Sym]) -> ToolResult<PreciseUsageSets>
                        => (&defs.iter().map(|d| index::DefinitionRef {
                            file_path: d.file_path.clone(),
                            start_line: d.start_line,
                            name: d.name.clone(),
                        }).collect::<Vec<_>>())
                    {
                        let sets: Vec<PreciseUsages> = defs
                            .iter()
                            .map(|d| {
                                self.precise_usages(d)
                                    .unwrap_or_else(|e| PreciseUsages::unreadable(&e))
                            })
                            .collect();
                        Ok(PreciseUsageSets {
                            answer_of: (0..sets.len() as u32).collect(),
                            sets,
                        })
                    };
                /// Since WIT 0.4: whether a definition is linked to precise data.
                fn precise_link(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
                    -> Result<wit::PreciseLinkState, wit::CallError> => precise_link
                    default {
                        Ok(wit::PreciseLinkState {
                            precision: "heuristic".into(),
                            note: None,
                        })
                    }
                    /// Since WIT 0.4: whether `def` is linked to precise data: (`precise` or
                    /// `heuristic`, why not).
                    guest fn precise_link(&self, def: &Sym) -> ToolResult<(String, Option<String>)>
                        => (&def.file_path, def.start_line, &def.name)
                    {
                        Ok(("heuristic".into(), None))
                    };
                /// Since WIT 0.4: what a written site refers to, by precise data.
                fn precise_definitions_at(scope, file_path: String => &str, line: u32 => u32, name: String => &str)
                    -> Result<wit::PreciseTarget, wit::CallError> => precise_definitions_at
                    default {
                        Ok(wit::PreciseTarget {
                            precision: "heuristic".into(),
                            definitions: Vec::new(),
                            note: Some("this host keeps no precise data".into()),
                        })
                    }
                    /// Since WIT 0.4: the definitions the occurrence of `name` on `line` of
                    /// `file_path` refers to, by precise data.
                    guest fn precise_definitions_at(&self, file_path: &str, line: u32, name: &str)
                        -> ToolResult<PreciseTarget>
                    {
                        Ok(PreciseTarget {
                            precision: "heuristic".into(),
                            definitions: Vec::new(),
                            note: Some("no precise data".into()),
                        })
                    };
                /// Since WIT 0.4: the sites of a definition's name in files with precise data
                /// where the indexer recorded no occurrence. By default there are none.
                fn precise_unresolved(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
                    -> Result<Vec<wit::ReferenceSite>, wit::CallError> => precise_unresolved
                    default { Ok(Vec::new()) }
                    /// Since WIT 0.4: the sites of `def`'s name in files whose precise data
                    /// applies where the indexer recorded no occurrence at all (it could not
                    /// resolve them). By default there are none.
                    guest fn precise_unresolved(&self, def: &Sym) -> ToolResult<Vec<Site>>
                        => (&def.file_path, def.start_line, &def.name)
                    {
                        Ok(Vec::new())
                    };
                /// Since WIT 0.4: those of the unresolved sites on lines where the indexer
                /// recorded nothing (code it did not read). By default there are none.
                fn precise_unread(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
                    -> Result<Vec<wit::ReferenceSite>, wit::CallError> => precise_unread
                    default { Ok(Vec::new()) }
                    /// Since WIT 0.4: those of the unresolved sites on lines where the indexer
                    /// recorded nothing at all (code it did not read: inactive `cfg`, files
                    /// outside its targets). By default there are none.
                    guest fn precise_unread(&self, def: &Sym) -> ToolResult<Vec<Site>>
                        => (&def.file_path, def.start_line, &def.name)
                    {
                        Ok(Vec::new())
                    };
            }

            interface files ("files") {
                fn read_lines(scope, file_path: String => &str, start_line: u32 => u32, end_line: u32 => u32)
                    -> Result<Vec<String>, wit::CallError> => read_lines
                    guest fn read_lines(&self, file_path: &str, start_line: u32, end_line: u32)
                        -> ToolResult<Vec<String>>;
            }

            interface tokens ("tokens") {
                /// Tokens in `text` as the host counts them.
                fn count(scope, text: String => &str) -> u32 => count_tokens
                    // An estimate (a token per four bytes): describing a plugin never fits a budget.
                    offline { u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX) }
                    /// Tokens in `text` as the host counts them. The default approximates (4
                    /// bytes a token) for native hosts without a tokenizer.
                    guest fn count_tokens(&self, text: &str) -> u32 {
                        (text.len() as u32).div_ceil(4)
                    };
            }

            interface log ("log") {
                fn log(scope, level: wit::Level => wit::Level, message: String => &str) -> () => log
                    offline {
                        let plugin = &*scope.plugin;
                        match level {
                            wit::Level::Debug => tracing::debug!(%plugin, "{message}"),
                            wit::Level::Info => tracing::info!(%plugin, "{message}"),
                            wit::Level::Warn => tracing::warn!(%plugin, "{message}"),
                            wit::Level::Error => tracing::error!(%plugin, "{message}"),
                        }
                    }
                    /// A line in the host's log, at level info.
                    guest fn log(&self, message: &str) -> () => (log::Level::Info, message) {};
            }

            interface dependencies ("dependencies") {
                fn locked_crates(scope) -> Result<Vec<wit::LockedCrate>, wit::CallError> => locked_crates
                    guest fn locked_crates(&self) -> ToolResult<Vec<LockedCrate>>;
                fn crate_symbols(scope, crate_name: String => &str, version: Option<String> => Option<&str>)
                    -> Result<Vec<wit::DependencySymbol>, wit::CallError> => crate_symbols
                    guest fn crate_symbols(&self, crate_name: &str, version: Option<&str>)
                        -> ToolResult<Vec<DepSym>>;
                fn symbols_by_name(scope, name: String => &str, crate_name: Option<String> => Option<&str>)
                    -> Result<Vec<wit::DependencySymbol>, wit::CallError> => dependency_symbols_by_name
                    guest fn dependency_symbols_by_name(&self, name: &str, crate_name: Option<&str>)
                        -> ToolResult<Vec<DepSym>>;
            }

            interface search ("search") {
                fn query(
                    call,
                    query: String => &str,
                    level: wit::SearchScope => wit::SearchScope,
                    crate_name: Option<String> => Option<&str>,
                    offset: u32 => u32,
                    limit: u32 => u32,
                ) -> Result<wit::SearchPage, wit::CallError> => search
                    guest fn search(
                        &self,
                        query: &str,
                        scope: SearchScope,
                        crate_name: Option<&str>,
                        offset: u32,
                        limit: u32,
                    ) -> ToolResult<SearchPage>
                        => (query, $crate::host_functions::Convert::convert(scope), crate_name, offset, limit);
            }

            interface docs ("docs") {
                fn list_documents(scope, dir: String => &str)
                    -> Result<Vec<wit::Document>, wit::CallError> => list_documents
                    guest fn list_documents(&self, dir: &str) -> ToolResult<Vec<Document>>;
                fn decision_rows(scope) -> Result<Vec<wit::DecisionRow>, wit::CallError> => decision_rows
                    guest fn decision_rows(&self) -> ToolResult<Vec<DecisionRow>>;
            }

            interface docs_write ("docs-write") {
                fn insert_decision_row(scope, row: wit::DecisionRow => &wit::DecisionRow)
                    -> Result<(), wit::CallError> => insert_decision_row
                    guest fn insert_decision_row(&self, row: &DecisionRow) -> ToolResult<()>
                        => (&$crate::host_functions::Convert::convert(row));
                fn delete_decision_rows(scope, number: u32 => u32)
                    -> Result<u32, wit::CallError> => delete_decision_rows
                    guest fn delete_decision_rows(&self, number: u32) -> ToolResult<u32>;
                fn create_decision_file(scope, file_name: String => &str, text: String => &str)
                    -> Result<(), wit::CallError> => create_decision_file
                    guest fn create_decision_file(&self, file_name: &str, text: &str) -> ToolResult<()>;
                fn delete_decision_file(scope, file_name: String => &str)
                    -> Result<(), wit::CallError> => delete_decision_file
                    guest fn delete_decision_file(&self, file_name: &str) -> ToolResult<()>;
            }

            interface projects ("projects") {
                fn list_all(scope) -> Result<Vec<wit::ProjectStatus>, wit::CallError> => list_projects
                    guest fn list_projects(&self) -> ToolResult<Vec<ProjectStatus>>;
                fn index_workspace(scope, path: String => &str, wait_ms: u32 => u32)
                    -> Result<wit::ProjectStatus, wit::CallError> => index_workspace
                    guest fn index_workspace(&self, path: &str, wait_ms: u32) -> ToolResult<ProjectStatus>;
                fn status(scope, project: String => &str)
                    -> Result<wit::ProjectStatus, wit::CallError> => project_status
                    guest fn project_status(&self, project: &str) -> ToolResult<ProjectStatus>;
                fn switch_active(scope, project: String => &str)
                    -> Result<wit::ProjectStatus, wit::CallError> => switch_active_project
                    guest fn switch_active_project(&self, project: &str) -> ToolResult<ProjectStatus>;
                fn delete(scope, project: String => &str)
                    -> Result<wit::ProjectStatus, wit::CallError> => delete_project
                    guest fn delete_project(&self, project: &str) -> ToolResult<ProjectStatus>;
                fn usage(scope, project: Option<String> => Option<&str>, since_hours: Option<u32> => Option<u32>)
                    -> Result<Vec<wit::ToolUsage>, wit::CallError> => usage
                    guest fn usage(&self, project: Option<&str>, since_hours: Option<u32>)
                        -> ToolResult<Vec<ToolUsage>>;
                /// Since WIT 0.4: a project's precise stage.
                fn precise_status(scope, project: String => &str)
                    -> Result<wit::PreciseStage, wit::CallError> => precise_status
                    default {
                        Ok(wit::PreciseStage {
                            state: "off".into(),
                            languages: Vec::new(),
                            stale_files: 0,
                            note: Some("this host keeps no precise data".into()),
                        })
                    }
                    /// Since WIT 0.4: a project's precise stage.
                    guest fn precise_status(&self, project: &str) -> ToolResult<PreciseStatus>;
                /// Since WIT 0.4: what a project's index runs left out, as the note an answer
                /// about it carries; `None` when nothing was.
                fn index_gaps(scope, project: String => &str)
                    -> Result<Option<String>, wit::CallError> => index_gaps
                    default { Ok(None) }
                    /// Since WIT 0.4: what a project's index runs left out (links leaving the
                    /// root, files too large), as the note an answer about it carries;
                    /// `None`: nothing.
                    guest fn index_gaps(&self, project: &str) -> ToolResult<Option<String>>;
            }

            interface git ("git") {
                /// Since WIT 0.2. By default the host has no such service, so hosts that serve
                /// only index queries (the offline host) need not implement it.
                fn state(scope, project: Option<String> => Option<&str>, commit_limit: u32 => u32, change_limit: u32 => u32)
                    -> Result<Option<wit::RepoState>, wit::CallError> => git_state
                    default { Err(unavailable("git")) }
                    /// The working tree of a project (slug, id or root; `None`: the call's
                    /// project), or `None` when it is not in a git work tree. The host caps
                    /// the limits (100, 500).
                    guest fn git_state(&self, project: Option<&str>, commit_limit: u32, change_limit: u32)
                        -> ToolResult<Option<RepoState>>;
            }

            interface catalog ("catalog") {
                /// Since WIT 0.2, as `git`.
                fn list_projects(scope) -> Result<Vec<wit::ProjectEntry>, wit::CallError> => catalog_projects
                    default { Err(unavailable("catalog")) }
                    /// Every registered project, by slug.
                    guest fn catalog_projects(&self) -> ToolResult<Vec<CatalogProject>>;
                fn read_text(scope, project: String => &str, path: String => &str, max_bytes: u32 => u32)
                    -> Result<Option<String>, wit::CallError> => catalog_read_text
                    default { Err(unavailable("catalog")) }
                    /// Up to `max_bytes` (at most 64 KiB) of a text file inside a project's
                    /// root; `None` when there is no such file.
                    guest fn read_text(&self, project: &str, path: &str, max_bytes: u32)
                        -> ToolResult<Option<String>>;
                fn grep(scope, project: String => &str, query: String => &str, limit: u32 => u32)
                    -> Result<wit::TextMatches, wit::CallError> => catalog_grep
                    default { Err(unavailable("catalog")) }
                    /// Lines of a project's text files containing `query` (case-insensitive),
                    /// at most `limit` (at most 1000).
                    guest fn grep(&self, project: &str, query: &str, limit: u32) -> ToolResult<TextMatches>;
            }
        }
    };
}

/// The conversions between the WIT bindings' records and the SDK's plain types, as
/// [`Convert`] impls. Expanded where the bindings' interface modules (`index`,
/// `projects`, `types`, ...) and the SDK's host types are in scope: the SDK's component
/// glue (wit-bindgen's types) and the runtime's native host (wasmtime's).
#[macro_export]
macro_rules! scryer_host_conversions {
    () => {
        $crate::__scryer_conversions! {
            fields {
                index::Symbol => Sym {
                    name, kind, qualified_name, owner, file_path, start_line, end_line,
                    signature, docstring,
                };
                index::ReferenceSite => Site {
                    file_path, line, column, kind, qualifier, enclosing_symbol, line_text,
                };
                index::Edge => Edge {
                    kind, from_symbol, to_name, to_qualifier, site_kind, file_path, line, column,
                };
                index::IndexFacts => Facts {
                    files, parse_failures, symbols, references, indexed_at,
                };
                index::PreciseUsageSet => PreciseUsages { precision, sites, fallback_files, note };
                index::PreciseUsageSets => PreciseUsageSets { sets, answer_of };
                index::PreciseTarget => PreciseTarget { precision, definitions, note };
                dependencies::LockedCrate => LockedCrate { name, version, indexed, note, symbols };
                dependencies::DependencySymbol => DepSym { crate_name, crate_version, symbol };
                search::SearchHit => SearchHit {
                    symbol, score, matched_terms, crate_name, crate_version,
                };
                search::SearchPage => SearchPage { hits, total };
                docs::Document => Document { path, text, modified_ms };
                docs::DecisionRow => DecisionRow {
                    number, title, status, file_path, text, recorded_at,
                };
                projects::ProjectStatus => ProjectStatus {
                    id, slug, root, state, files_done, files_total, files, parse_failures,
                    symbols, references, indexed_at, last_index_ms, last_error, active,
                };
                projects::PreciseLanguage => PreciseLanguage {
                    language, state, indexer, indexer_version, source, files, occurrences,
                    duration_ms, peak_rss_kb, finished_at, error,
                };
                projects::PreciseStage => PreciseStatus { state, languages, stale_files, note };
                projects::ToolUsage => ToolUsage {
                    tool, calls, errors, tokens_mean, tokens_p95, truncated, latency_p50_ms,
                    latency_p95_ms, followed_up,
                };
                git::Commit => GitCommit { hash, time_ms, author, subject };
                git::ChangedFile => GitChange { path, change, staged };
                git::RepoState => RepoState {
                    branch, head, last_commit_ms, commits, changes, changes_total,
                    untracked_total,
                };
                catalog::TextMatch => TextMatch { path, line, text };
                catalog::TextMatches => TextMatches { matches, files_searched, stopped_early };
            }
            by {
                index::FallbackFile => (String, String) |f| (f.file_path, f.reason);
                index::PreciseLinkState => (String, Option<String>) |l| (l.precision, l.note);
                catalog::ProjectEntry => CatalogProject |e| CatalogProject {
                    id: e.project.id,
                    slug: e.project.slug,
                    root: e.project.root,
                    state: e.state,
                    files: e.files,
                    symbols: e.symbols,
                    indexed_at: e.indexed_at,
                    active: e.active,
                };
                types::CallError => $crate::ToolError |e| {
                    let (kind, message) = match e {
                        types::CallError::InvalidArgument(m) => ($crate::ErrorKind::InvalidArgument, m),
                        types::CallError::NotFound(m) => ($crate::ErrorKind::NotFound, m),
                        types::CallError::Denied(m) => ($crate::ErrorKind::Denied, m),
                        types::CallError::Internal(m) => ($crate::ErrorKind::Internal, m),
                    };
                    $crate::ToolError { kind, message }
                };
                SearchScope => search::SearchScope |s| match s {
                    SearchScope::Workspace => search::SearchScope::Workspace,
                    SearchScope::Dependencies => search::SearchScope::Dependencies,
                };
                &DecisionRow => docs::DecisionRow |r| docs::DecisionRow {
                    number: r.number,
                    title: r.title.clone(),
                    status: r.status.clone(),
                    file_path: r.file_path.clone(),
                    text: r.text.clone(),
                    recorded_at: r.recorded_at.clone(),
                };
            }
        }
    };
}

/// Writes [`scryer_host_conversions!`](crate::scryer_host_conversions)'s impls: a record
/// field by field, or by an expression of the value.
#[doc(hidden)]
#[macro_export]
macro_rules! __scryer_conversions {
    (
        fields { $($from:ty => $to:ident { $($field:ident),* $(,)? };)* }
        by { $($by_from:ty => $by_to:ty |$value:ident| $body:expr;)* }
    ) => {
        $(
            impl $crate::host_functions::Convert<$to> for $from {
                fn convert(self) -> $to {
                    $to {
                        $($field: $crate::host_functions::Convert::convert(self.$field)),*
                    }
                }
            }
        )*
        $(
            impl $crate::host_functions::Convert<$by_to> for $by_from {
                fn convert(self) -> $by_to {
                    let $value = self;
                    $body
                }
            }
        )*
    };
}
