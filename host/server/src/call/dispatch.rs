//! What one `tools/call` means: which router, which project, which budget; then the
//! router call and the host's last word on size.
//!
//! Arguments the host interprets (`project`, `max_tokens`, `no_truncate`, `format`) are
//! read here for every tool, published or not; everything else is the router's.

use std::path::Path;
use std::sync::Arc;

use scryer_db::{Db, ProjectRow};
use scryer_runtime::installed::PluginHome;
use scryer_runtime::wit::{
    AnswerContext, CallContext, HostNote, HostParameter, OutputFormat, Project, ToolAnswer,
    ToolDefinition, ToolTraits,
};
use scryer_runtime::{CallFailure, CallScope, Plugin, Runtime, UsageWindow};
use serde_json::{Map, Value};

use crate::call::budget;
use crate::indexing::projects::{IndexState, ProjectManager};
use crate::plugins::registry::Registry;
use crate::{Core, Format};

/// What telemetry learns while a call is answered.
#[derive(Default)]
struct Measured {
    project_id: Option<i64>,
    truncated: bool,
    /// The answer's tokens, when the budget check counted them.
    response_tokens: Option<u32>,
    /// When the router call (with its refresh and window fit) started and ended.
    serving: Option<(std::time::Instant, std::time::Instant)>,
}

/// A tool's answer: the text to send and whether it is an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallOutcome {
    pub text: String,
    pub is_error: bool,
}

impl CallOutcome {
    fn error(text: impl Into<String>) -> CallOutcome {
        CallOutcome {
            text: text.into(),
            is_error: true,
        }
    }
}

/// Largest `max_tokens` accepted.
const MAX_BUDGET: i64 = 1_000_000;
/// Most files of one answer checked for changes after the call.
const MAX_REFRESH_FILES: usize = 64;

pub(crate) fn host_int(
    args: &Map<String, Value>,
    name: &str,
    min: i64,
    max: i64,
) -> Result<Option<i64>, String> {
    let n = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
        Some(_) => None,
    };
    match n {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!(
            "`{name}` must be a whole number from {min} to {max}, got {}",
            args.get(name).map(|v| v.to_string()).unwrap_or_default()
        )),
    }
}

fn host_bool(args: &Map<String, Value>, name: &str) -> Result<bool, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" | "" => Ok(false),
            _ => Err(format!("`{name}` must be true or false, got {s:?}")),
        },
        Some(other) => Err(format!("`{name}` must be true or false, got {other}")),
    }
}

fn host_str<'a>(args: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim())),
        Some(other) => Err(format!("`{name}` must be a string, got {other}")),
    }
}

/// The arguments that name a place in the call's project, for a tool whose answer is
/// about one project (it publishes `project`): checked by the host for every router.
const PATH_ARGUMENTS: &[&str] = &["file_path", "path"];

/// A tool call's pipeline, over the parts of the server it runs on (`Server::call_tool`):
/// the shared state, the registry the call keeps to its end, the runtime, and the
/// plugin home a shadow run reports under.
pub(crate) struct Dispatch<'s> {
    pub(crate) core: &'s Arc<Core>,
    pub(crate) registry: &'s Registry,
    pub(crate) runtime: &'s Runtime,
    pub(crate) plugin_home: Option<&'s PluginHome>,
}

impl Dispatch<'_> {
    /// Answers one tool call for a session. Never fails: every problem becomes an
    /// error answer that names it.
    pub async fn call_tool(
        &self,
        session_id: u64,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> CallOutcome {
        let started = std::time::Instant::now();
        let mut measured = Measured::default();
        let outcome = self
            .answer_tool_call(session_id, name, arguments, &mut measured)
            .await;
        log_call_time(name, started, measured.serving);
        if let Some(recorder) = &self.core.telemetry
            && self.registry.tool(name).is_some()
        {
            let row = scryer_db::ToolCallRow {
                at_ms: crate::call::telemetry::now_ms(),
                session: crate::call::telemetry::session_key(session_id),
                project_id: measured.project_id,
                tool: name.to_string(),
                response_tokens: measured.response_tokens.unwrap_or(0),
                truncated: measured.truncated,
                latency_ms: started.elapsed().as_millis().min(u128::from(u32::MAX)) as u32,
                is_error: outcome.is_error,
            };
            // Counting an answer's tokens takes as long as a small call: the writer
            // counts the ones the budget check did not.
            let count_text = measured
                .response_tokens
                .is_none()
                .then(|| outcome.text.clone());
            recorder.record(crate::call::telemetry::PendingRow { row, count_text });
        }
        outcome
    }

    /// The tool and its plugin in the session's profile, the arguments coerced to its
    /// schema, and what the host reads of them; or the error answer.
    fn checked<'r>(
        &'r self,
        session_id: u64,
        name: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<Checked<'r>, CallOutcome> {
        let (plugin, tool, traits) = serving_router(self.registry, self.core, session_id, name)?;
        let (args, remarks) = checked_arguments(self.registry, name, traits, arguments);
        let session = self.core.session(session_id);
        match HostArguments::read(&args, &session) {
            Ok(host) => Ok(Checked {
                plugin,
                tool,
                traits,
                args,
                remarks,
                session,
                host,
            }),
            Err(e) => Err(CallOutcome::error(with_remarks(
                format!("invalid argument: {e}"),
                &remarks,
            ))),
        }
    }

    /// The path arguments of a tool whose answer is about one project (it publishes
    /// `project`), checked against `project`.
    async fn check_paths(
        &self,
        name: &str,
        traits: &ToolTraits,
        project: &ProjectRow,
        args: &Map<String, Value>,
    ) -> Result<(), String> {
        if !traits.host_parameters.contains(&HostParameter::Project) {
            return Ok(());
        }
        let schema = self.registry.schema(name);
        check_path_arguments(self.core.projects.db(), project, args, schema).await
    }

    /// The call's steps, in order: the tool and its plugin, the arguments the host reads,
    /// the project, the index's state, the router call kept fresh and fitted to the
    /// budget, a shadow run beside it, and the host's last word on size.
    async fn answer_tool_call(
        &self,
        session_id: u64,
        name: &str,
        arguments: Option<Map<String, Value>>,
        measured: &mut Measured,
    ) -> CallOutcome {
        let Checked {
            plugin,
            tool,
            traits,
            mut args,
            remarks,
            session,
            host,
        } = match self.checked(session_id, name, arguments) {
            Ok(checked) => checked,
            Err(refused) => return refused,
        };

        let writes = crate::call::contract::needs_named_project(tool).then_some(name);
        let project = match crate::call::session::session_project(
            self.core, session_id, &session, &mut args, writes,
        )
        .await
        {
            Ok(p) => p,
            Err(e) => return CallOutcome::error(with_remarks(e, &remarks)),
        };
        measured.project_id = project.as_ref().map(|p| p.id);
        if let Some(p) = &project
            && let Err(e) = self.check_paths(name, traits, p, &args).await
        {
            return CallOutcome::error(with_remarks(format!("invalid argument: {e}"), &remarks));
        }
        // Writing calls run one at a time per project, across sessions: `record_adr`
        // reserves a number (its row) and creates the file exclusively with nothing
        // between them, and a `delete_adr` cannot interleave.
        let _one_writer = match (writes, &project) {
            (Some(_), Some(p)) => Some(project_write_lock(&p.root).lock_owned().await),
            _ => None,
        };
        let notes = match &project {
            Some(p) if tool.reads_index => index_state_notes(self.core, p).await,
            _ => Vec::new(),
        };

        let budget = host.budget(&session, tool, &args);
        let mut call = RouterCall::new(plugin, name, session_id, project.as_ref(), budget, host);
        // Dependency indexing in the background waits while this runs.
        let _foreground = tool
            .reads_index
            .then(scryer_engine::foreground::Call::start);
        let fresh_project = project.as_ref().filter(|_| tool.reads_index);
        if let Some(p) = fresh_project {
            self.core.projects.warm(p.id);
        }
        let refreshed = match fresh_project {
            Some(p) => refresh_named_file(&self.core.projects, p, &args).await,
            None => Vec::new(),
        };
        call.args_json = Value::Object(args).to_string();
        call.answer_context.notes = host_notes(&notes, &refreshed, &remarks);
        let serving_started = std::time::Instant::now();
        if let (Some(b), Some(p)) = (budget, fresh_project)
            && let Some(room) =
                crate::call::windowed::foreseen_room(&self.core.projects, p.id, &call.scope.window)
                    .await
        {
            call.answer_context.call.budget_tokens = Some(b.saturating_sub(room).max(1));
            tracing::debug!(
                target: "scryer::call_time",
                foresee_us = serving_started.elapsed().as_micros() as u64,
                "window notes foreseen"
            );
        }
        let fresh = fresh_project.map(|p| (&*self.core.projects, p));
        let outcome = call
            .run_fresh(self.runtime, fresh, refreshed, &notes, &remarks)
            .await;
        let (outcome, window_notes, next_window) =
            call.fit_window_notes(self.runtime, budget, outcome).await;
        measured.serving = Some((serving_started, std::time::Instant::now()));
        self.shadow(&call, &outcome, serving_started);
        finish(
            outcome,
            window_notes,
            next_window,
            budget,
            name,
            &remarks,
            measured,
        )
    }

    /// A candidate shadowing the call's router runs beside the call, off its answer
    /// path (`plugins/shadow.rs`).
    fn shadow(
        &self,
        call: &RouterCall<'_>,
        outcome: &Result<ToolAnswer, CallFailure>,
        serving_started: std::time::Instant,
    ) {
        let Some(candidate) = self.registry.shadow_for(call.name) else {
            return;
        };
        let live = crate::plugins::shadow::LiveCall {
            tool: call.name.to_string(),
            arguments: call.args_json.clone(),
            context: call.answer_context.clone(),
            scope: call.scope.clone(),
            serving: crate::plugins::shadow::served(outcome),
            serving_us: serving_started
                .elapsed()
                .as_micros()
                .min(u128::from(u32::MAX)) as u32,
        };
        crate::plugins::shadow::spawn(
            self.runtime.clone(),
            self.core.clone(),
            self.plugin_home.cloned(),
            candidate.clone(),
            call.plugin.name().to_string(),
            live,
        );
    }
}

/// Refuses a path argument that leads out of `project`: `..` climbing out, an
/// absolute path elsewhere, a link inside the root pointing out, `/proc`, a device.
/// A path into the sources of one of the project's dependency crates is accepted
/// (answers name those files by absolute path).
async fn check_path_arguments(
    db: &Db,
    project: &ProjectRow,
    args: &Map<String, Value>,
    schema: Option<&Value>,
) -> Result<(), String> {
    let root = Path::new(&project.root);
    for name in PATH_ARGUMENTS {
        let Ok(Some(raw)) = host_str(args, name) else {
            continue;
        };
        let Err(escape) = crate::call::paths::escape(root, raw) else {
            continue;
        };
        if let Some(to) = &escape.resolved
            && in_dependency_sources(db, project.id, to).await
        {
            continue;
        }
        let shown: String = raw.chars().take(200).collect();
        // The tool's own words for the argument ("e.g. docs/adr/0003-x.md").
        let described = schema
            .and_then(|s| s["properties"][*name]["description"].as_str())
            .map(|d| format!("; the tool describes `{name}` as: {d}"))
            .unwrap_or_default();
        return Err(format!(
            "`{name}` {shown:?} is outside the project root {} (project `{}`): {}; accepted: a path inside the project, relative to its root or absolute under it, or under the sources of one of its dependency crates{described}",
            project.root, project.slug, escape.how,
        ));
    }
    Ok(())
}

/// Whether `path` lies in the registry sources of a crate `project_id` locks.
async fn in_dependency_sources(db: &Db, project_id: i64, path: &Path) -> bool {
    let Ok(crates) = db.dependency_indexes(project_id).await else {
        return false;
    };
    crates
        .iter()
        .filter_map(|c| c.source_root.as_deref())
        .any(|r| {
            let r = std::fs::canonicalize(r).unwrap_or_else(|_| r.into());
            path.starts_with(r)
        })
}

/// The plugin serving `name` in the session's profile, the tool and its traits; or
/// the error answer saying why none does.
fn serving_router<'r>(
    registry: &'r Registry,
    core: &Core,
    session_id: u64,
    name: &str,
) -> Result<(&'r Arc<Plugin>, &'r ToolDefinition, &'r ToolTraits), CallOutcome> {
    let Some((plugin, tool)) = registry.tool(name) else {
        let shown: String = name.chars().take(80).collect();
        let profile = core.session(session_id).options.tools;
        return Err(CallOutcome::error(format!(
            "unknown tool {shown:?}; this server offers: {}{}",
            registry.tool_names().join(", "),
            profile.unloaded_hint()
        )));
    };
    if let Some(why) = core
        .session(session_id)
        .options
        .tools
        .refusal(plugin.name(), name)
    {
        return Err(CallOutcome::error(why));
    }
    let Some(traits) = plugin.traits_of(name) else {
        return Err(CallOutcome::error(format!(
            "internal error: plugin `{}` described no traits for {name}",
            plugin.name()
        )));
    };
    Ok((plugin, tool, traits))
}

/// The call's arguments coerced to the tool's schema, and the remarks on those it
/// does not know (notes that say nothing about completeness).
fn checked_arguments(
    registry: &Registry,
    name: &str,
    traits: &ToolTraits,
    arguments: Option<Map<String, Value>>,
) -> (Map<String, Value>, Vec<String>) {
    let mut args = arguments.unwrap_or_default();
    let mut remarks = Vec::new();
    if let Some(schema) = registry.schema(name) {
        crate::call::contract::coerce_arguments(schema, &mut args);
        let published = crate::call::contract::publish_schema(traits, schema);
        let unknown = crate::call::contract::unknown_arguments(&published, &args);
        if !unknown.is_empty() {
            remarks.push(crate::call::contract::unknown_arguments_note(
                name, &published, &unknown,
            ));
        }
    }
    (args, remarks)
}

/// A call that reads the index waits for a first index that is being built; the
/// notes saying how partial or stale the index still is.
async fn index_state_notes(core: &Core, p: &ProjectRow) -> Vec<String> {
    let mut notes = Vec::new();
    let state = core.projects.state(p).await;
    if let IndexState::Building { .. } = state
        && !core.projects.wait_idle(p.id, core.first_query_wait).await
        && let IndexState::Building { done, total } = core.projects.state(p).await
    {
        let pct = (done * 100).checked_div(total).unwrap_or(0);
        notes.push(format!(
                "INDEXING {pct}%: project `{}` is still being indexed ({done} of {total} files); results so far are partial; retry in a few seconds",
                p.slug
            ));
    } else if let IndexState::Stale { done, total } = state {
        // A re-index over an existing index: answers come from a mix of
        // updated and not-yet-updated files, each file consistent in itself.
        notes.push(if total > 0 {
                format!("STALE: project `{}` is being re-indexed ({done} of {total} files checked); results for files not yet reached may be out of date", p.slug)
            } else {
                format!("STALE: the last index run of `{}` did not finish; run index_workspace to bring it up to date", p.slug)
            });
    }
    notes
}

/// Freshness before the call: the file the call names (`file_path`) is refreshed if
/// it changed since indexing; the paths that did.
async fn refresh_named_file(
    projects: &ProjectManager,
    p: &ProjectRow,
    args: &Map<String, Value>,
) -> Vec<String> {
    if let Ok(Some(fp)) = host_str(args, "file_path")
        && let Some(rel) = crate::call::paths::project_relative(Path::new(&p.root), fp)
            .ok()
            .or_else(|| crate::call::paths::lexical_relative(Path::new(&p.root), fp))
    {
        return refresh(projects, p, vec![rel]).await;
    }
    Vec::new()
}

/// Refreshes `paths` of `project`; returns the ones that changed.
async fn refresh(
    projects: &ProjectManager,
    project: &ProjectRow,
    paths: Vec<String>,
) -> Vec<String> {
    match projects.refresh(project, &paths).await {
        Ok(r) => r.updated.into_iter().chain(r.removed).collect(),
        Err(e) => {
            tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "refreshing files failed");
            Vec::new()
        }
    }
}

/// A call checked before its project is known: the serving plugin, the tool and its
/// traits, the coerced arguments with the remarks on them, the session, the host's
/// arguments.
struct Checked<'r> {
    plugin: &'r Arc<Plugin>,
    tool: &'r ToolDefinition,
    traits: &'r ToolTraits,
    args: Map<String, Value>,
    remarks: Vec<String>,
    session: crate::SessionState,
    host: HostArguments,
}

/// The host's reading of the arguments every tool accepts, published or not.
struct HostArguments {
    max_tokens: Option<i64>,
    no_truncate: bool,
    format: Format,
    window: UsageWindow,
}

impl HostArguments {
    fn read(args: &Map<String, Value>, session: &crate::SessionState) -> Result<Self, String> {
        let max_tokens = host_int(args, "max_tokens", 1, MAX_BUDGET)?;
        let no_truncate = host_bool(args, "no_truncate")?;
        let format = match host_str(args, "format")? {
            None => session.options.format,
            Some(f) if f.eq_ignore_ascii_case("json") => Format::Json,
            Some(f) if f.eq_ignore_ascii_case("text") => Format::Text,
            Some(f) => return Err(format!("`format` is {f:?}; accepted: json, text")),
        };
        let window = crate::call::windowed::for_call(args)?;
        Ok(HostArguments {
            max_tokens,
            no_truncate,
            format,
            window,
        })
    }

    /// The call's token budget: none with `no_truncate`; else `max_tokens`, the
    /// session's, or the tool's default for these arguments.
    fn budget(
        &self,
        session: &crate::SessionState,
        tool: &ToolDefinition,
        args: &Map<String, Value>,
    ) -> Option<u32> {
        if self.no_truncate {
            return None;
        }
        Some(
            self.max_tokens
                .map(|n| n as u32)
                .or(session.options.max_tokens)
                .unwrap_or_else(|| crate::call::contract::default_budget(tool, args)),
        )
    }
}

/// One router call as the host runs it (and may run again: fresh, or in less).
struct RouterCall<'a> {
    plugin: &'a Plugin,
    name: &'a str,
    scope: CallScope,
    args_json: String,
    answer_context: AnswerContext,
}

impl<'a> RouterCall<'a> {
    /// The call of `name` on `plugin` with what the host read (its arguments are set
    /// once the project's files are refreshed).
    fn new(
        plugin: &'a Plugin,
        name: &'a str,
        session_id: u64,
        project: Option<&ProjectRow>,
        budget: Option<u32>,
        host: HostArguments,
    ) -> Self {
        let context = CallContext {
            project: project.map(|p| Project {
                id: p.id,
                slug: p.slug.clone(),
                root: p.root.clone(),
            }),
            budget_tokens: budget,
            budget_explicit: host.max_tokens.is_some(),
            format: match host.format {
                Format::Json => OutputFormat::Json,
                Format::Text => OutputFormat::Text,
            },
        };
        RouterCall {
            plugin,
            name,
            scope: CallScope {
                plugin: plugin.name().into(),
                project: context.project.clone(),
                session: session_id,
                window: Arc::new(host.window),
                memo: Default::default(),
            },
            args_json: String::new(),
            answer_context: AnswerContext {
                call: context,
                notes: Vec::new(),
            },
        }
    }

    /// Runs the router, with `context` in place of the call's own when given.
    async fn run(
        &self,
        runtime: &Runtime,
        context: Option<&AnswerContext>,
    ) -> Result<ToolAnswer, CallFailure> {
        runtime
            .call(
                self.plugin,
                self.scope.clone(),
                self.name,
                &self.args_json,
                context.unwrap_or(&self.answer_context),
            )
            .await
    }

    /// The router call, kept fresh: the files the answer names are checked after it
    /// (when `fresh` names a project, for a tool reading the index); if any changed, the call
    /// runs again on the fresh index.
    async fn run_fresh(
        &mut self,
        runtime: &Runtime,
        fresh: Option<(&ProjectManager, &ProjectRow)>,
        mut refreshed: Vec<String>,
        notes: &[String],
        remarks: &[String],
    ) -> Result<ToolAnswer, CallFailure> {
        let outcome = self.run(runtime, None).await;
        let (Some((projects, p)), Ok(answer)) = (fresh, &outcome) else {
            return outcome;
        };
        let named: Vec<String> = answer
            .files
            .iter()
            .take(MAX_REFRESH_FILES)
            .cloned()
            .collect();
        let checking = std::time::Instant::now();
        let checked = named.len();
        let changed = refresh(projects, p, named).await;
        tracing::debug!(
            target: "scryer::call_time",
            files = checked,
            changed = changed.len(),
            check_us = checking.elapsed().as_micros() as u64,
            "named files checked"
        );
        if changed.is_empty() {
            return outcome;
        }
        refreshed.extend(changed);
        self.answer_context.notes = host_notes(notes, &refreshed, remarks);
        // The index changed under the first run: nothing it computed still holds.
        self.scope.memo = Default::default();
        self.reset_window();
        self.run(runtime, None).await
    }

    /// The router fitted its answer to the budget without the window's notes: when they
    /// would push it over (and the host's cut would lose them), it answers again in
    /// less, leaving them room. The outcome, the window's notes and the next offset.
    async fn fit_window_notes(
        &mut self,
        runtime: &Runtime,
        budget: Option<u32>,
        outcome: Result<ToolAnswer, CallFailure>,
    ) -> (Result<ToolAnswer, CallFailure>, Vec<String>, Option<usize>) {
        let (window_notes, next_window) = crate::call::windowed::notes(&self.scope.window.cuts());
        if let (Some(b), Ok(answer)) = (budget, &outcome)
            && !window_notes.is_empty()
            && crate::call::tokens::count(&crate::call::windowed::mark(
                answer.body.clone(),
                &window_notes,
                next_window,
            )) > b
        {
            let room = crate::call::windowed::room(&window_notes);
            let mut tighter = self.answer_context.clone();
            tighter.call.budget_tokens = Some(b.saturating_sub(room).max(1));
            self.reset_window();
            let outcome = self.run(runtime, Some(&tighter)).await;
            let (window_notes, next_window) =
                crate::call::windowed::notes(&self.scope.window.cuts());
            return (outcome, window_notes, next_window);
        }
        (outcome, window_notes, next_window)
    }

    /// A new usage window from the call's arguments, for a run again.
    fn reset_window(&mut self) {
        self.scope.window = Arc::new(
            crate::call::windowed::for_call(
                &serde_json::from_str(&self.args_json).unwrap_or_default(),
            )
            .unwrap_or_default(),
        );
    }
}

/// The host's last word on a router's outcome: the window's notes marked, `complete`
/// withdrawn from a cut answer, the budget enforced, and telemetry told.
fn finish(
    outcome: Result<ToolAnswer, CallFailure>,
    window_notes: Vec<String>,
    next_window: Option<usize>,
    budget: Option<u32>,
    name: &str,
    remarks: &[String],
    measured: &mut Measured,
) -> CallOutcome {
    match outcome {
        Ok(answer) => {
            let router_truncated = answer.truncated || !window_notes.is_empty();
            // The one edit the host still makes to a 0.4 answer: the window's notes and
            // `next_usage_offset`, known only after the router ran (windowed.rs).
            let body = if window_notes.is_empty() {
                answer.body
            } else {
                crate::call::windowed::mark(answer.body, &window_notes, next_window)
            };
            // An answer its router flags as cut claims no `complete`, whatever its
            // body says (ADR 0027); one the host cuts neither (`budget::enforce`).
            let body = if router_truncated {
                scryer_plugin_sdk::answer::withdraw_complete(body)
            } else {
                body
            };
            let (text, cut, tokens) = budget::enforce(body, budget);
            measured.truncated = cut || router_truncated;
            measured.response_tokens = tokens;
            CallOutcome {
                text,
                is_error: false,
            }
        }
        Err(CallFailure::Router(e)) => {
            CallOutcome::error(with_remarks(CallFailure::Router(e).to_string(), remarks))
        }
        Err(other) => {
            tracing::warn!(tool = name, error = %other, "router call failed");
            CallOutcome::error(with_remarks(other.to_string(), remarks))
        }
    }
}

/// Where a tool call's time went in the host, as one `scryer::call_time` debug event
/// (off unless `SCRYER_LOG` enables it): before the router call (arguments, project,
/// index state, freshness), the router call with its window fit, and after it (budget,
/// notes). The runtime's own event splits the router call further.
fn log_call_time(
    tool: &str,
    started: std::time::Instant,
    serving: Option<(std::time::Instant, std::time::Instant)>,
) {
    let total = started.elapsed();
    let (before, router, after) = match serving {
        Some((from, to)) => (
            from - started,
            to - from,
            total.saturating_sub(to - started),
        ),
        None => (total, std::time::Duration::ZERO, std::time::Duration::ZERO),
    };
    tracing::debug!(
        target: "scryer::call_time",
        tool,
        total_us = total.as_micros() as u64,
        before_us = before.as_micros() as u64,
        serving_us = router.as_micros() as u64,
        after_us = after.as_micros() as u64,
        "tool call"
    );
}

/// The lock a writing call on the project at `root` holds while it runs.
fn project_write_lock(root: &str) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    static LOCKS: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<tokio::sync::Mutex<()>>>>,
    > = std::sync::OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    locks.entry(root.to_string()).or_default().clone()
}

/// An error answer with the host's remarks after it, one `note:` line each.
fn with_remarks(mut text: String, remarks: &[String]) -> String {
    for r in remarks {
        text.push_str("\nnote: ");
        text.push_str(r);
    }
    text
}

/// The notes the answer carries, in the order answers always showed them: the index
/// state, the refreshed files (sorted, each once), then the remarks that say nothing
/// about completeness.
fn host_notes(notes: &[String], refreshed: &[String], remarks: &[String]) -> Vec<HostNote> {
    let mut refreshed = refreshed.to_vec();
    refreshed.sort();
    refreshed.dedup();
    let refreshed_note = (!refreshed.is_empty()).then(|| {
        format!(
            "refreshed {} file(s) changed since indexing: {}",
            refreshed.len(),
            refreshed.join(", ")
        )
    });
    let incomplete = notes
        .iter()
        .cloned()
        .chain(refreshed_note)
        .map(|text| HostNote {
            text,
            incomplete: true,
        });
    let complete = remarks.iter().map(|text| HostNote {
        text: text.clone(),
        incomplete: false,
    });
    incomplete.chain(complete).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A path into a dependency crate's sources passes the host's check; one elsewhere
    /// outside the root is refused naming the argument, how and what is accepted.
    #[tokio::test]
    async fn path_arguments_may_lead_into_dependency_sources_only() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, krate) = (base.join("proj"), base.join("registry/foo-1.0.0"));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(krate.join("src")).unwrap();
        let db_path = base.join("index.db");
        let project = {
            let db = scryer_db::Db::open(&db_path).await.unwrap();
            let p = db
                .register_project(&root.to_string_lossy(), None)
                .await
                .unwrap();
            db.finish_index_run(p.id, 1, None).await.unwrap();
            let record = scryer_db::DependencyRecord {
                name: "foo".into(),
                version: "1.0.0".into(),
                source_root: Some(krate.to_string_lossy().into_owned()),
                note: None,
            };
            db.record_project_dependencies(p.id, &[record])
                .await
                .unwrap();
            p
        };
        let server = crate::Server::start(crate::ServerConfig {
            db_path,
            compile_cache: None,
            limits: scryer_runtime::Limits::default(),
            plugins: vec![],
            first_query_wait: std::time::Duration::from_secs(5),
            watch_files: false,
        })
        .await
        .unwrap();
        let check = |v: Value| {
            let args = v.as_object().unwrap().clone();
            let server = &server;
            let project = &project;
            async move { check_path_arguments(server.core.projects.db(), project, &args, None).await }
        };
        let in_dep = krate.join("src/lib.rs");
        assert_eq!(
            check(json!({"file_path": in_dep.to_str().unwrap()})).await,
            Ok(())
        );
        assert_eq!(check(json!({"path": "src/new.rs"})).await, Ok(()));
        let elsewhere = base.join("registry/bar-1.0.0/src/lib.rs");
        let e = check(json!({"file_path": elsewhere.to_str().unwrap()}))
            .await
            .unwrap_err();
        assert!(
            e.starts_with("`file_path`")
                && e.contains("it is an absolute path elsewhere")
                && e.contains("accepted:"),
            "{e}"
        );
        let e = check(json!({"path": "../registry/foo-1.0.0/../x"}))
            .await
            .unwrap_err();
        assert!(e.starts_with("`path`") && e.contains("climbs out"), "{e}");
    }

    #[test]
    fn host_arguments_are_coerced_and_checked() {
        let args = json!({"max_tokens": "300", "no_truncate": "true", "bad": "abc"});
        let args = args.as_object().unwrap();
        assert_eq!(
            host_int(args, "max_tokens", 1, MAX_BUDGET).unwrap(),
            Some(300)
        );
        assert!(host_bool(args, "no_truncate").unwrap());
        assert!(host_int(args, "bad", 1, 10).unwrap_err().contains("`bad`"));
        assert_eq!(host_int(args, "absent", 1, 10).unwrap(), None);
    }

    #[test]
    fn host_notes_keep_their_order_and_refreshed_files_are_sorted_once() {
        let notes = host_notes(
            &["INDEXING 50%".into()],
            &["b.rs".into(), "a.rs".into(), "b.rs".into()],
            &["ignored `x`".into()],
        );
        let shown: Vec<(&str, bool)> = notes
            .iter()
            .map(|n| (n.text.as_str(), n.incomplete))
            .collect();
        assert_eq!(
            shown,
            [
                ("INDEXING 50%", true),
                (
                    "refreshed 2 file(s) changed since indexing: a.rs, b.rs",
                    true
                ),
                ("ignored `x`", false)
            ]
        );
        assert!(host_notes(&[], &[], &[]).is_empty());
    }
}
