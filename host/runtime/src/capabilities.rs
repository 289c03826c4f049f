//! What a plugin may import, and the linker that provides exactly that.
//!
//! Deny by default: a plugin is linked only against the host interfaces it is granted,
//! plus the WASI interfaces the Rust standard library needs to start (clocks, random,
//! stdio streams that lead nowhere, an empty environment). No filesystem, no sockets.
//! A component that imports anything else is refused at load, naming the import.

use std::collections::BTreeSet;

use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::p2::bindings::sync as wasi_sync;
use wasmtime_wasi::p2::bindings::{cli, clocks, random};

use crate::bindings::{CallState, WitVersion, scryer::router as wit};

/// A host interface a plugin may be granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// `scryer:router/index`: read-only index queries for the call's project.
    IndexRead,
    /// `scryer:router/files`: read lines of files inside the call's project root.
    FileRead,
    /// `scryer:router/tokens`: count tokens the way the host does.
    Tokens,
    /// `scryer:router/log`: write to the host's log.
    Log,
    /// `scryer:router/projects`: register, index and list projects.
    ProjectAdmin,
    /// `scryer:router/dependencies`: the locked dependency crates and their definitions.
    DependencyRead,
    /// `scryer:router/search`: ranked symbol search.
    Search,
    /// `scryer:router/docs`: the project's decision, learning and plan documents.
    DocsRead,
    /// `scryer:router/docs-write`: record and delete architecture decisions.
    DocsWrite,
    /// `scryer:router/git` (WIT 0.2): a project's branch, commits and uncommitted files.
    GitRead,
    /// `scryer:router/catalog` (WIT 0.2): every registered project, its text files and a
    /// text search across them, read-only.
    CatalogRead,
}

impl Capability {
    pub const ALL: [Capability; 11] = [
        Capability::IndexRead,
        Capability::FileRead,
        Capability::Tokens,
        Capability::Log,
        Capability::ProjectAdmin,
        Capability::DependencyRead,
        Capability::Search,
        Capability::DocsRead,
        Capability::DocsWrite,
        Capability::GitRead,
        Capability::CatalogRead,
    ];

    /// The name operators use in policy and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Capability::IndexRead => "index-read",
            Capability::FileRead => "file-read",
            Capability::Tokens => "tokens",
            Capability::Log => "log",
            Capability::ProjectAdmin => "project-admin",
            Capability::DependencyRead => "dependency-read",
            Capability::Search => "search",
            Capability::DocsRead => "docs-read",
            Capability::DocsWrite => "docs-write",
            Capability::GitRead => "git-read",
            Capability::CatalogRead => "catalog-read",
        }
    }

    /// The WIT interface (without version) this capability links.
    pub fn interface(self) -> &'static str {
        match self {
            Capability::IndexRead => "scryer:router/index",
            Capability::FileRead => "scryer:router/files",
            Capability::Tokens => "scryer:router/tokens",
            Capability::Log => "scryer:router/log",
            Capability::ProjectAdmin => "scryer:router/projects",
            Capability::DependencyRead => "scryer:router/dependencies",
            Capability::Search => "scryer:router/search",
            Capability::DocsRead => "scryer:router/docs",
            Capability::DocsWrite => "scryer:router/docs-write",
            Capability::GitRead => "scryer:router/git",
            Capability::CatalogRead => "scryer:router/catalog",
        }
    }

    /// The first WIT version that has this capability's interface.
    pub fn since(self) -> WitVersion {
        match self {
            Capability::GitRead | Capability::CatalogRead => WitVersion::V0_2,
            _ => WitVersion::V0_1,
        }
    }

    pub fn parse(name: &str) -> Option<Capability> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Parses an operator-written name, or says which names are accepted.
    pub fn parse_named(name: &str) -> Result<Capability, String> {
        Self::parse(name.trim()).ok_or_else(|| {
            format!(
                "unknown capability {name:?}; accepted: {}",
                Self::ALL.map(Capability::name).join(", ")
            )
        })
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The capabilities granted to one plugin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants(BTreeSet<Capability>);

impl Grants {
    pub fn new(caps: impl IntoIterator<Item = Capability>) -> Grants {
        Grants(caps.into_iter().collect())
    }

    /// What every router gets: the read-only interfaces (index, files, dependencies,
    /// search, docs), tokens and log.
    pub fn router() -> Grants {
        Grants::new([
            Capability::IndexRead,
            Capability::FileRead,
            Capability::Tokens,
            Capability::Log,
            Capability::DependencyRead,
            Capability::Search,
            Capability::DocsRead,
        ])
    }

    /// The memory router: a router that may also record and delete decisions.
    pub fn memory() -> Grants {
        let mut g = Grants::router();
        g.0.insert(Capability::DocsWrite);
        g
    }

    /// The administration router: a router that may also manage projects.
    pub fn admin() -> Grants {
        let mut g = Grants::router();
        g.0.insert(Capability::ProjectAdmin);
        g
    }

    /// A named grant set: `router`, `admin` or `memory`.
    pub fn for_set(name: &str) -> Option<Grants> {
        match name {
            "router" => Some(Grants::router()),
            "admin" => Some(Grants::admin()),
            "memory" => Some(Grants::memory()),
            _ => None,
        }
    }

    /// Parses a comma-separated list of capability names (`index-read,tokens`).
    pub fn parse_list(list: &str) -> Result<Grants, String> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(Capability::parse_named)
            .collect::<Result<_, _>>()
            .map(Grants)
    }

    pub fn contains(&self, cap: Capability) -> bool {
        self.0.contains(&cap)
    }

    pub fn insert(&mut self, cap: Capability) -> bool {
        self.0.insert(cap)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every capability in `self` or `other`.
    pub fn union(&self, other: &Grants) -> Grants {
        Grants(self.0.union(&other.0).copied().collect())
    }

    /// The capabilities of `needed` that `self` does not grant.
    pub fn missing(&self, needed: &Grants) -> Grants {
        Grants(needed.0.difference(&self.0).copied().collect())
    }

    /// Operator names, in a stable order.
    pub fn names(&self) -> Vec<&'static str> {
        self.iter().map(Capability::name).collect()
    }

    pub fn iter(&self) -> impl Iterator<Item = Capability> + '_ {
        self.0.iter().copied()
    }

    /// Whether a component import (e.g. `scryer:router/index@0.1.0`) is allowed.
    pub fn allows_import(&self, import: &str) -> bool {
        let unversioned = import.split('@').next().unwrap_or(import);
        if unversioned == "scryer:router/types" {
            return true;
        }
        if WASI_BASELINE.contains(&unversioned) {
            return true;
        }
        self.iter().any(|c| c.interface() == unversioned)
    }

    /// The capability that would allow this import, if any.
    pub fn capability_for(import: &str) -> Option<Capability> {
        let unversioned = import.split('@').next().unwrap_or(import);
        Capability::ALL
            .into_iter()
            .find(|c| c.interface() == unversioned)
    }
}

/// WASI interfaces every plugin is linked against. They give a Rust-std guest what it
/// needs to start and panic readably, and nothing that reaches the machine: the context
/// has no preopened directories, no environment, no arguments and no inherited stdio.
pub const WASI_BASELINE: &[&str] = &[
    "wasi:io/error",
    "wasi:io/poll",
    "wasi:io/streams",
    "wasi:clocks/wall-clock",
    "wasi:clocks/monotonic-clock",
    "wasi:random/random",
    "wasi:random/insecure",
    "wasi:random/insecure-seed",
    "wasi:cli/environment",
    "wasi:cli/exit",
    "wasi:cli/stdin",
    "wasi:cli/stdout",
    "wasi:cli/stderr",
    "wasi:cli/terminal-input",
    "wasi:cli/terminal-output",
    "wasi:cli/terminal-stdin",
    "wasi:cli/terminal-stdout",
    "wasi:cli/terminal-stderr",
];

/// A linker holding the WASI baseline and the granted host interfaces, nothing more,
/// under the interface names of WIT `version`. Every version is served by the newest
/// bindings' functions (see `bindings`): the interfaces an older version has are
/// unchanged since, and the component model checks types structurally. A granted
/// capability whose interface is newer than `version` is not linked: nothing built
/// against `version` can import it.
pub fn linker_for(
    engine: &wasmtime::Engine,
    grants: &Grants,
    version: WitVersion,
) -> anyhow::Result<Linker<CallState>> {
    use wasmtime_wasi::cli::{WasiCli, WasiCliView};
    use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
    use wasmtime_wasi::random::WasiRandom;
    let mut linker = Linker::<CallState>::new(engine);
    let l = &mut linker;

    // WASI baseline (see WASI_BASELINE).
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<CallState, HasTable>(l, |t| {
        &mut t.table
    })?;
    wasi_sync::io::poll::add_to_linker::<CallState, HasTable>(l, |t| &mut t.table)?;
    wasi_sync::io::streams::add_to_linker::<CallState, HasTable>(l, |t| &mut t.table)?;
    clocks::wall_clock::add_to_linker::<CallState, WasiClocks>(l, CallState::clocks)?;
    clocks::monotonic_clock::add_to_linker::<CallState, WasiClocks>(l, CallState::clocks)?;
    random::random::add_to_linker::<CallState, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure::add_to_linker::<CallState, WasiRandom>(l, |t| t.wasi.random())?;
    random::insecure_seed::add_to_linker::<CallState, WasiRandom>(l, |t| t.wasi.random())?;
    cli::exit::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::environment::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::stdin::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::stdout::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::stderr::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::terminal_input::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::terminal_output::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::terminal_stdin::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::terminal_stdout::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;
    cli::terminal_stderr::add_to_linker::<CallState, WasiCli>(l, CallState::cli)?;

    let v = version.as_str();
    wit::types::add_to_linker_instance::<CallState, HasSelf<CallState>>(
        &mut l.instance(&format!("scryer:router/types@{v}"))?,
        |s| s,
    )?;
    for cap in grants.iter().filter(|c| c.since() <= version) {
        let inst = &mut l.instance(&format!("{}@{v}", cap.interface()))?;
        match cap {
            Capability::IndexRead => {
                wit::index::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::FileRead => {
                wit::files::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::Tokens => {
                wit::tokens::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::Log => {
                wit::log::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::ProjectAdmin => {
                wit::projects::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::DependencyRead => wit::dependencies::add_to_linker_instance::<
                CallState,
                HasSelf<CallState>,
            >(inst, |s| s)?,
            Capability::Search => {
                wit::search::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::DocsRead => {
                wit::docs::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::DocsWrite => wit::docs_write::add_to_linker_instance::<
                CallState,
                HasSelf<CallState>,
            >(inst, |s| s)?,
            Capability::GitRead => {
                wit::git::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
            Capability::CatalogRead => {
                wit::catalog::add_to_linker_instance::<CallState, HasSelf<CallState>>(inst, |s| s)?
            }
        }
    }
    Ok(linker)
}

struct HasTable;
impl wasmtime::component::HasData for HasTable {
    type Data<'a> = &'a mut wasmtime::component::ResourceTable;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routers_get_no_project_admin_and_no_filesystem() {
        let g = Grants::router();
        assert!(g.allows_import("scryer:router/index@0.1.0"));
        assert!(g.allows_import("scryer:router/types@0.1.0"));
        assert!(g.allows_import("wasi:io/streams@0.2.6"));
        assert!(!g.allows_import("scryer:router/projects@0.1.0"));
        assert!(!g.allows_import("scryer:router/docs-write@0.1.0"));
        assert!(Grants::memory().allows_import("scryer:router/docs-write@0.1.0"));
        assert!(!g.allows_import("wasi:filesystem/types@0.2.6"));
        assert!(!g.allows_import("wasi:filesystem/preopens@0.2.6"));
        assert!(!g.allows_import("wasi:sockets/tcp@0.2.6"));
        assert!(Grants::admin().allows_import("scryer:router/projects@0.1.0"));
    }

    #[test]
    fn capability_names_round_trip() {
        for c in Capability::ALL {
            assert_eq!(Capability::parse(c.name()), Some(c));
        }
        assert_eq!(
            Grants::capability_for("scryer:router/projects@0.1.0"),
            Some(Capability::ProjectAdmin)
        );
        assert_eq!(Grants::capability_for("wasi:filesystem/types@0.2.6"), None);
        assert_eq!(
            Grants::capability_for("scryer:router/git@0.2.0"),
            Some(Capability::GitRead)
        );
        assert_eq!(Capability::GitRead.since(), WitVersion::V0_2);
        assert_eq!(Capability::IndexRead.since(), WitVersion::V0_1);
    }

    #[test]
    fn lists_parse_and_unknown_names_are_named_with_the_choices() {
        let g = Grants::parse_list(" index-read, tokens ,").unwrap();
        assert_eq!(g.names(), ["index-read", "tokens"]);
        let e = Grants::parse_list("index-read,git-write").unwrap_err();
        assert!(
            e.contains("\"git-write\"") && e.contains("docs-write"),
            "{e}"
        );
        assert!(Grants::parse_list("").unwrap().is_empty());
    }

    #[test]
    fn missing_is_what_is_needed_but_not_granted() {
        let granted = Grants::new([Capability::Tokens, Capability::Log]);
        let needed = Grants::new([Capability::Tokens, Capability::IndexRead]);
        assert_eq!(granted.missing(&needed).names(), ["index-read"]);
        assert!(granted.union(&needed).missing(&needed).is_empty());
    }
}
