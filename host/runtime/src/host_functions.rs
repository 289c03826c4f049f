//! The one list of host functions: every WIT import a router may call, the
//! [`HostServices`] method that serves it, its default when older hosts may lack it, and
//! what the offline host answers. `host_functions!` expands the list into
//!
//! - the [`HostServices`] trait (the host's seam, implemented for real by the server),
//! - the forwarders from each WIT interface's generated `Host` trait to it (`CallState`,
//!   every call timed by `in_host`),
//! - the offline host's implementation ([`OfflineHost`]: describing plugins, no database).
//!
//! Adding a host function: its WIT, one entry here, and the server's implementation
//! (`docs/dev/add-a-host-function.md`). The compiler then names every host that lacks it.
//!
//! An entry reads `fn <wit name>(<scope>, <arg>: <WIT type> => <host type>, ..) -> <result>
//! => <HostServices method> [default { .. }] [offline { .. }];`. The first name in the
//! parentheses is what the call's [`CallScope`] is called in the bodies. A WIT argument
//! reaches the host method through [`Pass`] (`String` as `&str`, `Vec<String>` as
//! `&[String]`, ...). Without `offline`, the offline host answers with its default when
//! there is one, else that it is offline.
//!
//! Hand-written with `macro_rules!` rather than generated from the WIT by a build script:
//! the host method's name, its argument types and the defaults are the host's choices,
//! not the WIT's, and a list of forty entries reads better than a generator.

use crate::bindings::CallState;
use crate::bindings::scryer::router::{
    catalog, dependencies, docs, docs_write, files, git, index, log, projects, search, tokens,
};
use crate::offline::{OfflineHost, offline};
use crate::{CallScope, wit};

/// How a WIT argument (owned, as the generated bindings hand it) reaches a host method.
pub trait Pass<'a, T> {
    fn pass(&'a self) -> T;
}

impl<'a> Pass<'a, &'a str> for String {
    fn pass(&'a self) -> &'a str {
        self
    }
}

impl<'a> Pass<'a, &'a [String]> for Vec<String> {
    fn pass(&'a self) -> &'a [String] {
        self
    }
}

impl<'a> Pass<'a, Option<&'a str>> for Option<String> {
    fn pass(&'a self) -> Option<&'a str> {
        self.as_deref()
    }
}

impl<'a> Pass<'a, wit::DecisionRow> for wit::DecisionRow {
    fn pass(&'a self) -> wit::DecisionRow {
        self.clone()
    }
}

/// Plain values pass as they are.
macro_rules! pass_copies {
    ($($t:ty),*) => {
        $(impl<'a> Pass<'a, $t> for $t {
            fn pass(&'a self) -> $t {
                *self
            }
        })*
    };
}

pass_copies!(u32, bool, Option<u32>, wit::SearchScope, wit::Level);

macro_rules! host_functions {
    ($(
        interface $iface:ident {
            $(
                $(#[$meta:meta])*
                fn $wit:ident ($scope:ident $(, $arg:ident : $wty:ty => $hty:ty)* $(,)?) -> $ret:ty
                    => $svc:ident
                    $(default $default:block)?
                    $(offline $offline:block)?;
            )*
        }
    )*) => {
        /// What the host offers routers through the imported WIT interfaces. Implemented
        /// by the server over the database and the index engine. Called on a blocking
        /// thread from inside a router call, so implementations may block. Expanded from
        /// the list in `host_functions.rs`.
        pub trait HostServices: Send + Sync + 'static {
            $($(
                host_functions!(@method [$(#[$meta])*]
                    [fn $svc(&self, $scope: &CallScope $(, $arg: $hty)*) -> $ret]
                    $($default)?);
            )*)*
        }

        $(
            impl $iface::Host for CallState {
                $(
                    #[allow(clippy::unused_unit)]
                    fn $wit(&mut self $(, $arg: $wty)*) -> $ret {
                        self.in_host(|host, $scope| host.$svc($scope $(, Pass::pass(&$arg))*))
                    }
                )*
            }
        )*

        /// Answers every host query with "offline"; logs go to the host's log.
        impl HostServices for OfflineHost {
            $($(
                host_functions!(@offline
                    [fn $svc(&self, $scope: &CallScope $(, $arg: $hty)*) -> $ret]
                    [$($offline)?] [$($default)?]);
            )*)*
        }
    };

    // A trait method, with its default body when it has one.
    (@method [$($meta:tt)*] [$($sig:tt)*] $default:block) => {
        $($meta)*
        #[allow(unused_variables, clippy::unused_unit)]
        $($sig)* $default
    };
    (@method [$($meta:tt)*] [$($sig:tt)*]) => {
        $($meta)*
        #[allow(clippy::unused_unit)]
        $($sig)*;
    };

    // The offline host: its own answer, else the trait's default, else "offline".
    (@offline [$($sig:tt)*] [$offline:block] [$($default:tt)*]) => {
        #[allow(unused_variables, clippy::unused_unit)]
        $($sig)* $offline
    };
    (@offline [$($sig:tt)*] [] [$default:block]) => {};
    (@offline [$($sig:tt)*] [] []) => {
        #[allow(unused_variables)]
        $($sig)* {
            offline()
        }
    };
}

host_functions! {
    interface index {
        fn symbols_by_name(scope, name: String => &str)
            -> Result<Vec<wit::Symbol>, wit::CallError> => symbols_by_name;
        fn symbols_by_qualified_name(scope, qualified_name: String => &str)
            -> Result<Vec<wit::Symbol>, wit::CallError> => symbols_by_qualified_name;
        fn references_to_name(scope, name: String => &str, with_line_text: bool => bool)
            -> Result<Vec<wit::ReferenceSite>, wit::CallError> => references_to_name;
        /// `name`'s usage sites whose kind is one of `kinds`, without line text.
        fn references_of_kinds(scope, name: String => &str, kinds: Vec<String> => &[String])
            -> Result<Vec<wit::ReferenceSite>, wit::CallError> => references_of_kinds;
        /// The files that use any of `names`, sorted, each once.
        fn files_naming(scope, names: Vec<String> => &[String])
            -> Result<Vec<String>, wit::CallError> => files_naming;
        fn file_symbols(scope, file_path: String => &str)
            -> Result<Vec<wit::Symbol>, wit::CallError> => file_symbols;
        fn file_has_parse_errors(scope, file_path: String => &str)
            -> Result<bool, wit::CallError> => file_has_parse_errors;
        fn facts(scope) -> Result<wit::IndexFacts, wit::CallError> => index_facts;
        /// Graph edges that start in `qualified_name`.
        fn edges_from(scope, qualified_name: String => &str)
            -> Result<Vec<wit::Edge>, wit::CallError> => edges_from;
        /// Graph edges whose written target is `name`.
        fn edges_to(scope, name: String => &str)
            -> Result<Vec<wit::Edge>, wit::CallError> => edges_to;
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
            };
        /// Since WIT 0.4: whether a definition is linked to precise data.
        fn precise_link(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
            -> Result<wit::PreciseLinkState, wit::CallError> => precise_link
            default {
                Ok(wit::PreciseLinkState {
                    precision: "heuristic".into(),
                    note: None,
                })
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
            };
        /// Since WIT 0.4: the sites of a definition's name in files with precise data
        /// where the indexer recorded no occurrence. By default there are none.
        fn precise_unresolved(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
            -> Result<Vec<wit::ReferenceSite>, wit::CallError> => precise_unresolved
            default { Ok(Vec::new()) };
        /// Since WIT 0.4: those of the unresolved sites on lines where the indexer
        /// recorded nothing (code it did not read). By default there are none.
        fn precise_unread(scope, file_path: String => &str, start_line: u32 => u32, name: String => &str)
            -> Result<Vec<wit::ReferenceSite>, wit::CallError> => precise_unread
            default { Ok(Vec::new()) };
    }

    interface dependencies {
        fn locked_crates(scope) -> Result<Vec<wit::LockedCrate>, wit::CallError> => locked_crates;
        fn crate_symbols(scope, crate_name: String => &str, version: Option<String> => Option<&str>)
            -> Result<Vec<wit::DependencySymbol>, wit::CallError> => crate_symbols;
        fn symbols_by_name(scope, name: String => &str, crate_name: Option<String> => Option<&str>)
            -> Result<Vec<wit::DependencySymbol>, wit::CallError> => dependency_symbols_by_name;
    }

    interface search {
        fn query(
            call,
            query: String => &str,
            level: wit::SearchScope => wit::SearchScope,
            crate_name: Option<String> => Option<&str>,
            offset: u32 => u32,
            limit: u32 => u32,
        ) -> Result<wit::SearchPage, wit::CallError> => search;
    }

    interface docs {
        fn list_documents(scope, dir: String => &str)
            -> Result<Vec<wit::Document>, wit::CallError> => list_documents;
        fn decision_rows(scope) -> Result<Vec<wit::DecisionRow>, wit::CallError> => decision_rows;
    }

    interface docs_write {
        fn insert_decision_row(scope, row: wit::DecisionRow => wit::DecisionRow)
            -> Result<(), wit::CallError> => insert_decision_row;
        fn delete_decision_rows(scope, number: u32 => u32)
            -> Result<u32, wit::CallError> => delete_decision_rows;
        fn create_decision_file(scope, file_name: String => &str, text: String => &str)
            -> Result<(), wit::CallError> => create_decision_file;
        fn delete_decision_file(scope, file_name: String => &str)
            -> Result<(), wit::CallError> => delete_decision_file;
    }

    interface files {
        fn read_lines(scope, file_path: String => &str, start_line: u32 => u32, end_line: u32 => u32)
            -> Result<Vec<String>, wit::CallError> => read_lines;
    }

    interface tokens {
        /// Tokens in `text` as the host counts them.
        fn count(scope, text: String => &str) -> u32 => count_tokens
            // An estimate (a token per four bytes): describing a plugin never fits a budget.
            offline { u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX) };
    }

    interface log {
        fn log(scope, level: wit::Level => wit::Level, message: String => &str) -> () => log
            offline {
                let plugin = &*scope.plugin;
                match level {
                    wit::Level::Debug => tracing::debug!(%plugin, "{message}"),
                    wit::Level::Info => tracing::info!(%plugin, "{message}"),
                    wit::Level::Warn => tracing::warn!(%plugin, "{message}"),
                    wit::Level::Error => tracing::error!(%plugin, "{message}"),
                }
            };
    }

    interface projects {
        fn list_all(scope) -> Result<Vec<wit::ProjectStatus>, wit::CallError> => list_projects;
        fn index_workspace(scope, path: String => &str, wait_ms: u32 => u32)
            -> Result<wit::ProjectStatus, wit::CallError> => index_workspace;
        fn status(scope, project: String => &str)
            -> Result<wit::ProjectStatus, wit::CallError> => project_status;
        fn switch_active(scope, project: String => &str)
            -> Result<wit::ProjectStatus, wit::CallError> => switch_active_project;
        fn delete(scope, project: String => &str)
            -> Result<wit::ProjectStatus, wit::CallError> => delete_project;
        fn usage(scope, project: Option<String> => Option<&str>, since_hours: Option<u32> => Option<u32>)
            -> Result<Vec<wit::ToolUsage>, wit::CallError> => usage;
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
            };
        /// Since WIT 0.4: what a project's index runs left out, as the note an answer
        /// about it carries; `None` when nothing was.
        fn index_gaps(scope, project: String => &str)
            -> Result<Option<String>, wit::CallError> => index_gaps
            default { Ok(None) };
    }

    interface git {
        /// Since WIT 0.2. By default the host has no such service, so hosts that serve
        /// only index queries (the offline host) need not implement it.
        fn state(scope, project: Option<String> => Option<&str>, commit_limit: u32 => u32, change_limit: u32 => u32)
            -> Result<Option<wit::RepoState>, wit::CallError> => git_state
            default { Err(unavailable("git")) };
    }

    interface catalog {
        /// Since WIT 0.2, as `git`.
        fn list_projects(scope) -> Result<Vec<wit::ProjectEntry>, wit::CallError> => catalog_projects
            default { Err(unavailable("catalog")) };
        fn read_text(scope, project: String => &str, path: String => &str, max_bytes: u32 => u32)
            -> Result<Option<String>, wit::CallError> => catalog_read_text
            default { Err(unavailable("catalog")) };
        fn grep(scope, project: String => &str, query: String => &str, limit: u32 => u32)
            -> Result<wit::TextMatches, wit::CallError> => catalog_grep
            default { Err(unavailable("catalog")) };
    }
}

fn unavailable(interface: &str) -> wit::CallError {
    wit::CallError::Internal(format!(
        "this host does not serve the `{interface}` interface"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> CallScope {
        CallScope {
            plugin: "p".into(),
            project: None,
            session: 0,
            window: Default::default(),
            memo: Default::default(),
        }
    }

    #[test]
    fn the_offline_host_answers_from_the_list() {
        let (host, s) = (OfflineHost, scope());
        // No entry of its own and no default: offline.
        let e = host.symbols_by_name(&s, "new").unwrap_err();
        assert!(
            matches!(&e, wit::CallError::Denied(m) if m.contains("offline")),
            "{e:?}"
        );
        assert!(host.read_lines(&s, "a.rs", 1, 2).is_err());
        // Its own answer: a token estimate, not an error.
        assert_eq!(host.count_tokens(&s, "12345678"), 2);
        // The trait's default where the list has one: precise data is absent, not offline.
        let u = host.precise_usages(&s, "a.rs", 1, "new").unwrap();
        assert_eq!((u.precision.as_str(), u.sites.len()), ("heuristic", 0));
        assert_eq!(host.index_gaps(&s, "p").unwrap(), None);
        let e = host.git_state(&s, None, 1, 1).unwrap_err();
        assert!(
            matches!(&e, wit::CallError::Internal(m) if m.contains("`git`")),
            "{e:?}"
        );
    }

    #[test]
    fn arguments_pass_as_the_host_methods_take_them() {
        let (name, kinds, krate) = ("new".to_string(), vec!["use".to_string()], Some("c".into()));
        let as_str: &str = Pass::pass(&name);
        let as_slice: &[String] = Pass::pass(&kinds);
        let as_option: Option<&str> = Pass::pass(&krate);
        assert_eq!(
            (as_str, as_slice, as_option),
            ("new", &kinds[..], Some("c"))
        );
        let copied: Option<u32> = Pass::pass(&Some(7u32));
        assert_eq!(copied, Some(7));
    }
}
