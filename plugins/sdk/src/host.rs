//! What a router may ask the host, as plain Rust types and one trait, so router logic
//! runs the same inside a component (over the WIT imports, see `component`) and natively
//! (unit tests and benchmarks over an in-memory host).
//!
//! Every method has a default that reports the interface as unavailable: a native test
//! host implements only what its router uses, and a router that reaches for an interface
//! it was not built to use gets a clear error instead of a silent empty answer. The
//! trait's methods and defaults are the router's side of the list of host functions
//! (`host_functions.rs`), from which the component's `WitHost` and the host's side are
//! expanded too.

use crate::{ErrorKind, ToolError, ToolResult};

/// A definition in the index. Paths are relative to the project root (absolute for
/// dependency crates); lines 1-based.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sym {
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub owner: Option<String>,
    pub file_path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub docstring: Option<String>,
}

/// One usage site of a name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Site {
    pub file_path: String,
    pub line: u32,
    pub column: u32,
    pub kind: String,
    pub qualifier: Option<String>,
    pub enclosing_symbol: String,
    pub line_text: Option<String>,
}

impl Site {
    /// Where it is written: (file, line, column).
    pub fn place(&self) -> (&str, u32, u32) {
        (self.file_path.as_str(), self.line, self.column)
    }
}

/// A `calls` / `implements` / `instantiates` / `reexports` edge as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Edge {
    pub kind: String,
    pub from_symbol: String,
    pub to_name: String,
    pub to_qualifier: Option<String>,
    /// The usage kind at the site (`call`, `method_call`, `type`...).
    pub site_kind: String,
    pub file_path: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub files: u32,
    pub parse_failures: u32,
    pub symbols: u32,
    pub references: u32,
    pub indexed_at: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LockedCrate {
    pub name: String,
    pub version: String,
    pub indexed: bool,
    pub note: Option<String>,
    pub symbols: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepSym {
    pub crate_name: String,
    pub crate_version: String,
    pub symbol: Sym,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchScope {
    Workspace,
    Dependencies,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchHit {
    pub symbol: Sym,
    pub score: f32,
    pub matched_terms: Vec<String>,
    pub crate_name: Option<String>,
    pub crate_version: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchPage {
    pub hits: Vec<SearchHit>,
    pub total: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Document {
    pub path: String,
    pub text: String,
    pub modified_ms: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecisionRow {
    pub number: u32,
    pub title: String,
    pub status: String,
    pub file_path: String,
    pub text: String,
    pub recorded_at: String,
}

/// A project's state as the host reports it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectStatus {
    pub id: i64,
    pub slug: String,
    pub root: String,
    pub state: String,
    pub files_done: u32,
    pub files_total: u32,
    pub files: u32,
    pub parse_failures: u32,
    pub symbols: u32,
    pub references: u32,
    pub indexed_at: Option<String>,
    pub last_index_ms: Option<u64>,
    pub last_error: Option<String>,
    pub active: bool,
}

/// Since WIT 0.4: a definition's usages from the languages' own indexers (SCIP).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreciseUsages {
    /// `precise`, `mixed` or `heuristic` (no precise data: `note` says why).
    pub precision: String,
    /// Usages in files whose precise data applies (the definition excluded).
    pub sites: Vec<Site>,
    /// Files to answer with the heuristic: (path, why).
    pub fallback_files: Vec<(String, String)>,
    pub note: Option<String>,
}

impl PreciseUsages {
    /// What a router answers with when the host could not give a definition's precise
    /// usages: no precise data, and why.
    pub fn unreadable(e: &crate::ToolError) -> PreciseUsages {
        PreciseUsages {
            precision: "heuristic".into(),
            note: Some(format!("precise data could not be read: {}", e.message)),
            ..Default::default()
        }
    }

    /// Whether there is precise data for the definition (`precise` or `mixed`).
    pub fn available(&self) -> bool {
        self.precision == "precise" || self.precision == "mixed"
    }
}

/// Since WIT 0.5: the precise usages of several definitions, each distinct answer once
/// (every definition of a language without precise data shares one).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreciseUsageSets {
    /// The distinct answers.
    pub sets: Vec<PreciseUsages>,
    /// For each definition asked, in order: the index of its answer in `sets`.
    pub answer_of: Vec<u32>,
}

impl PreciseUsageSets {
    /// The answer for the `i`-th definition asked (a `heuristic` one if the host said
    /// nothing of it).
    pub fn of(&self, i: usize) -> &PreciseUsages {
        static NONE: std::sync::OnceLock<PreciseUsages> = std::sync::OnceLock::new();
        self.answer_of
            .get(i)
            .and_then(|&k| self.sets.get(k as usize))
            .unwrap_or_else(|| {
                NONE.get_or_init(|| PreciseUsages {
                    precision: "heuristic".into(),
                    note: Some("the host gave no precise answer for this definition".into()),
                    ..Default::default()
                })
            })
    }
}

/// Since WIT 0.4: what a written site refers to, by precise data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreciseTarget {
    /// `precise` or `heuristic`.
    pub precision: String,
    pub definitions: Vec<Sym>,
    pub note: Option<String>,
}

/// Since WIT 0.4: one language's precise indexer in a project.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreciseLanguage {
    pub language: String,
    pub state: String,
    pub indexer: Option<String>,
    pub indexer_version: Option<String>,
    pub source: Option<String>,
    pub files: u32,
    pub occurrences: u32,
    pub duration_ms: Option<u64>,
    pub peak_rss_kb: Option<u64>,
    pub finished_at: Option<String>,
    pub error: Option<String>,
}

/// Since WIT 0.4: a project's precise stage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PreciseStatus {
    pub state: String,
    pub languages: Vec<PreciseLanguage>,
    pub stale_files: u32,
    pub note: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolUsage {
    pub tool: String,
    pub calls: u32,
    pub errors: u32,
    pub tokens_mean: u32,
    pub tokens_p95: u32,
    pub truncated: u32,
    pub latency_p50_ms: u32,
    pub latency_p95_ms: u32,
    pub followed_up: u32,
}

/// One commit, from the `git` interface (WIT 0.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitCommit {
    pub hash: String,
    /// Committer time, milliseconds since the Unix epoch.
    pub time_ms: i64,
    pub author: String,
    /// First line of the message.
    pub subject: String,
}

/// A file that differs from HEAD or is untracked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GitChange {
    /// Relative to the repository's top level.
    pub path: String,
    /// `modified`, `added`, `deleted`, `renamed`, `copied`, `type-changed`, `conflicted`
    /// or `untracked`.
    pub change: String,
    pub staged: bool,
}

/// A project's working tree, read live with git.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepoState {
    /// None when HEAD is detached.
    pub branch: Option<String>,
    /// None in a repository without commits.
    pub head: Option<String>,
    pub last_commit_ms: Option<i64>,
    /// Newest first, at most the limit asked.
    pub commits: Vec<GitCommit>,
    /// Tracked changes first, then untracked files; at most the limit asked.
    pub changes: Vec<GitChange>,
    /// Changed and untracked files in all, before the limit.
    pub changes_total: u32,
    pub untracked_total: u32,
}

/// A registered project, from the `catalog` interface (WIT 0.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogProject {
    pub id: i64,
    pub slug: String,
    pub root: String,
    /// `ready`, `building`, `stale` or `unindexed`.
    pub state: String,
    pub files: u32,
    pub symbols: u32,
    pub indexed_at: Option<String>,
    /// The calling session's active project.
    pub active: bool,
}

/// A line containing a searched text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextMatch {
    /// Relative to the project root.
    pub path: String,
    /// 1-based.
    pub line: u32,
    pub text: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextMatches {
    pub matches: Vec<TextMatch>,
    pub files_searched: u32,
    /// At the limit asked, or at the host's file or time cap.
    pub stopped_early: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Json,
    Text,
}

/// The call's context, as router logic needs it.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    /// `None`: the caller asked for no truncation.
    pub budget: Option<u32>,
    /// Whether the caller set the budget (`max_tokens`) rather than a default.
    pub budget_explicit: bool,
    pub format: Format,
    /// The project's slug, for messages.
    pub project: Option<String>,
    /// The project's root, for turning absolute paths into relative ones.
    pub project_root: Option<String>,
}

fn unavailable<T>(interface: &str) -> ToolResult<T> {
    Err(ToolError {
        kind: ErrorKind::Internal,
        message: format!("the host interface `{interface}` is not available to this router"),
    })
}

/// Writes the [`Host`] trait from the guest side of the list of host functions
/// ([`scryer_host_functions!`](crate::scryer_host_functions)): each entry's `guest`
/// signature, with its default or, without one, "unavailable".
macro_rules! host_trait {
    ($(
        interface $iface:ident ($interface:literal) {
            $(
                $(#[$meta:meta])*
                fn $wit:ident ($scope:ident $(, $arg:ident : $wty:ty => $hty:ty)* $(,)?) -> $ret:ty
                    => $svc:ident
                    $(default $default:block)?
                    $(offline $offline:block)?
                    $(#[$guest_meta:meta])*
                    guest fn $method:ident (&$this:ident $(, $guest_arg:ident : $guest_ty:ty)* $(,)?)
                        -> $guest_ret:ty
                        $(=> ($($call:expr),* $(,)?))?
                        $($guest_default:block)?;
            )*
        }
    )*) => {
        /// Everything a router may ask the host. Which of these a component may actually
        /// call is decided by its grants (see the host's capabilities); the defaults only
        /// serve native hosts that implement part of it. Expanded from the list of host
        /// functions (`host_functions.rs`).
        #[allow(unused_variables)]
        pub trait Host {
            $($(
                host_trait!(@method $interface [$(#[$guest_meta])*]
                    [fn $method(&$this $(, $guest_arg: $guest_ty)*) -> $guest_ret]
                    [$($guest_default)?]);
            )*)*
        }
    };

    (@method $interface:literal [$($meta:tt)*] [$($sig:tt)*] [$default:block]) => {
        $($meta)*
        #[allow(clippy::unused_unit)]
        $($sig)* $default
    };
    (@method $interface:literal [$($meta:tt)*] [$($sig:tt)*] []) => {
        $($meta)*
        $($sig)* {
            unavailable($interface)
        }
    };
}

crate::scryer_host_functions!(host_trait);

/// A tool a router offers: what `describe` publishes.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    /// At most 600 characters.
    pub description: &'static str,
    /// JSON Schema of the arguments (portable subset: plain `type`, inline `enum`).
    pub schema: serde_json::Value,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Answer budget in tokens when neither the call nor the session sets one.
    pub default_budget: u32,
    /// (argument, tokens per item): a batched call's budget when none is set.
    pub budget_per_item: Option<(&'static str, u32)>,
    /// Whether the tool answers from the code index (see the WIT `tool-definition`).
    pub reads_index: bool,
    /// Which profiles list it (WIT 0.4 `tool-traits`).
    pub tier: Tier,
    /// The host parameters its published schema shows.
    pub host_params: &'static [HostParam],
    /// (question, how) for the server instructions: one line per question, naming
    /// every loaded tool that answers it. `None`: named among the others.
    pub guide: Option<(&'static str, &'static str)>,
}

/// Which profiles list a tool (WIT 0.4 `tool-tier`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tier {
    /// The `core` profile lists it; clients are told to load it up front.
    Core,
    /// The `full` profile lists it, and any profile naming its plugin.
    #[default]
    Extended,
}

/// A host parameter a tool's published schema shows (WIT 0.4 `host-parameter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostParam {
    /// `max_tokens` and `no_truncate`: answers large enough that callers tune the budget.
    Budget,
    /// `project`, its type only: the answer depends on the project.
    Project,
    /// `project` with a description: the tool's subject is a project.
    ProjectSubject,
}

impl ToolSpec {
    /// A read-only, idempotent query tool that reads the index (so it publishes
    /// `project`), in the extended tier, without an instructions line.
    pub fn query(
        name: &'static str,
        description: &'static str,
        schema: serde_json::Value,
        default_budget: u32,
    ) -> ToolSpec {
        ToolSpec {
            name,
            description,
            schema,
            read_only: true,
            destructive: false,
            idempotent: true,
            default_budget,
            budget_per_item: None,
            reads_index: true,
            tier: Tier::Extended,
            host_params: &[HostParam::Project],
            guide: None,
        }
    }

    /// In the `core` tier.
    pub fn core(mut self) -> ToolSpec {
        self.tier = Tier::Core;
        self
    }

    /// Publishing these host parameters (instead of the default ones).
    pub fn publishing(mut self, params: &'static [HostParam]) -> ToolSpec {
        self.host_params = params;
        self
    }

    /// With its line in the server instructions: the question it answers and how.
    pub fn guide(mut self, question: &'static str, how: &'static str) -> ToolSpec {
        self.guide = Some((question, how));
        self
    }
}

/// A router's logic: what it offers and how it answers, independent of the WIT glue.
/// `export_router!` turns a type implementing this into a component.
pub trait Router {
    /// The plugin's name, e.g. `navigation`.
    const NAME: &'static str;
    /// The plugin's version (usually `env!("CARGO_PKG_VERSION")`).
    const VERSION: &'static str;
    fn tools() -> Vec<ToolSpec>;
    /// Answers one call. `args` is the JSON object the agent sent.
    fn call<H: Host + ?Sized>(
        host: &H,
        tool: &str,
        args: &crate::args::Args,
        ctx: &Ctx,
    ) -> ToolResult<String>;
    /// The project files an answer of `tool` is about (relative, each once, at most
    /// [`MAX_ANSWER_FILES`](crate::answer::MAX_ANSWER_FILES)): the host refreshes them
    /// when they changed. By default the `file_path` values and `path:line` locations
    /// (`at`, `site`, `location`) of a JSON answer, the keys the SDK's answers use; a
    /// router answering with other keys says its files here.
    fn answer_files(tool: &str, body: &str) -> Vec<String> {
        let _ = tool;
        crate::answer::files_named_in(body, crate::answer::MAX_ANSWER_FILES)
    }
}

/// The error for a tool name this router does not have, listing the ones it does.
pub fn unknown_tool<R: Router>(tool: &str) -> ToolError {
    let names: Vec<&str> = R::tools().iter().map(|t| t.name).collect();
    ToolError::not_found(format!(
        "the {} router has no tool `{tool}`; it offers {}",
        R::NAME,
        names.join(", ")
    ))
}

/// Keywords strict function-calling validators reject.
const NON_PORTABLE: &[&str] = &[
    "$ref",
    "$defs",
    "definitions",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "oneOf",
    "anyOf",
    "allOf",
    "const",
    "pattern",
];

/// What keeps a schema from being portable (empty when it is): `$ref` and friends,
/// numeric bounds, formats, and `type` arrays. Paths are JSON-pointer-like.
pub fn schema_problems(schema: &serde_json::Value) -> Vec<String> {
    use serde_json::Value;
    fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let here = format!("{path}/{k}");
                    // Property names are data, not keywords.
                    if path.ends_with("/properties") {
                        walk(child, &here, out);
                        continue;
                    }
                    if NON_PORTABLE.contains(&k.as_str()) {
                        out.push(format!("{here}: `{k}` is not portable"));
                    }
                    if k == "type" && !child.is_string() {
                        out.push(format!("{here}: `type` must be one string, not {child}"));
                    }
                    walk(child, &here, out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, "", &mut out);
    out
}

/// Parameters the host publishes and reads for every tool; a router's schema leaves
/// them out.
pub const HOST_PARAMETERS: &[&str] = &["max_tokens", "no_truncate", "project", "format"];

/// What is wrong with a router's tool definitions, for its unit tests (empty when they
/// are fine): a description over 450 characters, a description and schema over
/// `max_chars` together, a non-portable schema, or a host parameter in the schema.
pub fn definition_problems(tools: &[ToolSpec], max_chars: usize) -> Vec<String> {
    let mut out = Vec::new();
    for t in tools {
        let schema = t.schema.to_string();
        if t.description.len() > 450 {
            out.push(format!(
                "{}: description of {} characters (at most 450)",
                t.name,
                t.description.len()
            ));
        }
        if t.description.len() + schema.len() > max_chars {
            out.push(format!(
                "{}: {} characters of description and schema (at most {max_chars})",
                t.name,
                t.description.len() + schema.len()
            ));
        }
        out.extend(
            schema_problems(&t.schema)
                .into_iter()
                .map(|p| format!("{}: {p}", t.name)),
        );
        if let Some(props) = t.schema.get("properties").and_then(|p| p.as_object()) {
            for h in HOST_PARAMETERS {
                if props.contains_key(*h) {
                    out.push(format!(
                        "{}: publishes `{h}`, which the host adds where it matters",
                        t.name
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod definition_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn non_portable_schemas_and_host_parameters_are_named() {
        // A property named like a keyword is data, not the keyword.
        assert!(schema_problems(&json!({"properties": {"format": {"type": "string"}}})).is_empty());
        let good = ToolSpec::query(
            "t",
            "does t",
            json!({"type": "object", "properties": {"kind": {"type": "string"}}}),
            100,
        );
        assert!(definition_problems(std::slice::from_ref(&good), 1000).is_empty());
        let bad = ToolSpec::query(
            "u",
            "does u",
            json!({"type": "object", "$defs": {}, "properties": {
                "n": {"type": ["integer", "null"], "minimum": 1},
                "max_tokens": {"type": "integer"}
            }}),
            100,
        );
        let problems = definition_problems(&[bad], 40);
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("max_tokens")));
        assert!(
            problems
                .iter()
                .any(|p| p.contains("characters of description and schema"))
        );
    }
}

#[cfg(test)]
mod precise_tests {
    use super::*;
    use crate::testing::def;

    /// Precise data for `a`, a host error for anything else.
    struct OneKnown;

    impl Host for OneKnown {
        fn precise_usages(&self, d: &Sym) -> ToolResult<PreciseUsages> {
            match d.name.as_str() {
                "a" => Ok(PreciseUsages {
                    precision: "precise".into(),
                    ..Default::default()
                }),
                _ => Err(crate::ToolError {
                    kind: crate::ErrorKind::Internal,
                    message: "disk gone".into(),
                }),
            }
        }
    }

    #[test]
    fn a_host_without_the_batch_answers_each_definition_by_itself_in_order() {
        let (a, b) = (
            def("m::a", "function", None, "src/m.rs"),
            def("m::b", "function", None, "src/m.rs"),
        );
        let sets = OneKnown.precise_usages_of(&[&b, &a, &b]).unwrap();
        assert_eq!(sets.of(1).precision, "precise");
        for i in [0, 2] {
            assert_eq!(sets.of(i).precision, "heuristic");
            assert_eq!(
                sets.of(i).note.as_deref(),
                Some("precise data could not be read: disk gone")
            );
        }
        // An index the host gave nothing for reads as no precise data, never a panic.
        assert_eq!(sets.of(3).precision, "heuristic");
    }
}
