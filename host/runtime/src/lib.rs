//! The plugin runtime: loads router components into wasmtime and calls them in a sandbox.
//!
//! Architecture invariant: this is the only crate that knows about wasmtime. The server
//! sees [`Runtime`], [`Plugin`], the [`HostServices`] trait it implements, and the WIT
//! types re-exported in [`wit`].
//!
//! One [`Runtime`] holds one `Engine` (pooling allocator, epoch interruption). Each
//! plugin is compiled once (or loaded from the [`cache::CompileCache`]) into an
//! `InstancePre`; every call gets a fresh `Store` with the [`limits::Limits`], so no state
//! leaks between calls or sessions.

mod bindings;
pub mod cache;
pub mod capabilities;
mod compat;
mod host_functions;
pub mod installed;
pub mod limits;
pub mod manifest;
pub mod memo;
pub mod native;
mod offline;
pub mod policy;
pub mod precompiled;
pub mod profiles;
pub mod receipt;
pub mod window;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use wasmtime::component::{Component, ResourceTable};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store, Trap,
    UpdateDeadline,
};
use wasmtime_wasi::WasiCtxBuilder;

pub use bindings::WitVersion;
use bindings::{CallState, RouterInstance, RouterPre};
pub use cache::{CacheOutcome, CompileCache};
pub use capabilities::{Capability, Grants};
pub use host_functions::{HostServices, Pass};
pub use limits::Limits;
pub use memo::CallMemo;
pub use offline::OfflineHost;
pub use precompiled::Precompiled;
pub use window::UsageWindow;

/// The WIT types, as the host sees them.
pub mod wit {
    pub use crate::bindings::scryer::router::catalog::{ProjectEntry, TextMatch, TextMatches};
    pub use crate::bindings::scryer::router::dependencies::{DependencySymbol, LockedCrate};
    pub use crate::bindings::scryer::router::docs::{DecisionRow, Document};
    pub use crate::bindings::scryer::router::git::{ChangedFile, Commit, RepoState};
    pub use crate::bindings::scryer::router::index::{
        DefinitionRef, Edge, FallbackFile, IndexFacts, PreciseLinkState, PreciseTarget,
        PreciseUsageSet, PreciseUsageSets, ReferenceSite, Symbol,
    };
    pub use crate::bindings::scryer::router::log::Level;
    pub use crate::bindings::scryer::router::projects::{
        PreciseLanguage, PreciseStage, ProjectStatus, ToolUsage,
    };
    pub use crate::bindings::scryer::router::search::{SearchHit, SearchPage, SearchScope};
    pub use crate::bindings::scryer::router::types::{
        AnswerContext, CallContext, CallError, CallResult, HostNote, HostParameter,
        InstructionsEntry, ItemBudget, OutputFormat, PluginDescription, Project, ToolAnnotations,
        ToolAnswer, ToolDefinition, ToolTier, ToolTraits,
    };
    /// The newest WIT package version this host implements (every older released one is
    /// linked too, see [`crate::WitVersion`]).
    pub const VERSION: &str = "0.5.0";
}

/// Who is calling, as far as host services need to know: which plugin, for which
/// project, on behalf of which session.
#[derive(Clone, Debug)]
pub struct CallScope {
    pub plugin: Arc<str>,
    pub project: Option<wit::Project>,
    pub session: u64,
    /// How much of a name's usages this call may be handed (ADR 0024).
    pub window: Arc<UsageWindow>,
    /// What host functions computed during this call, for another that asks again.
    pub memo: Arc<CallMemo>,
}

/// Why a plugin could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "plugin `{plugin}` imports `{import}`, which it is not granted{}; routers may use only {allowed}",
        capability.map(|c| format!(" (capability `{}`)", c.name())).unwrap_or_default()
    )]
    UngrantedImport {
        plugin: String,
        import: String,
        capability: Option<Capability>,
        allowed: String,
    },
    #[error("plugin `{plugin}` is not a valid router component: {reason}")]
    Invalid { plugin: String, reason: String },
}

/// Why a call did not produce an answer. Every variant names the limit or the fault.
#[derive(Debug, thiserror::Error)]
pub enum CallFailure {
    /// The router answered with its own typed error.
    #[error("{}", describe_call_error(.0))]
    Router(wit::CallError),
    #[error("router `{plugin}` exceeded its CPU deadline of {deadline:?} and was stopped")]
    CpuDeadline { plugin: String, deadline: Duration },
    #[error("router `{plugin}` did not answer within {timeout:?} and was abandoned")]
    Timeout { plugin: String, timeout: Duration },
    #[error("router `{plugin}` exceeded its memory cap of {} MiB and was stopped", .limit_bytes >> 20)]
    Memory { plugin: String, limit_bytes: usize },
    #[error("router `{plugin}` answered {bytes} bytes, over the cap of {limit} bytes")]
    AnswerTooLarge {
        plugin: String,
        bytes: usize,
        limit: usize,
    },
    #[error("router `{plugin}` crashed: {detail}")]
    Trap { plugin: String, detail: String },
    #[error("too many router calls at once (limit {0}); retry")]
    Busy(u32),
}

fn describe_call_error(e: &wit::CallError) -> String {
    match e {
        wit::CallError::InvalidArgument(m) => format!("invalid argument: {m}"),
        wit::CallError::NotFound(m) => format!("not found: {m}"),
        wit::CallError::Denied(m) => format!("denied: {m}"),
        wit::CallError::Internal(m) => format!("internal error: {m}"),
    }
}

/// A loaded plugin: compiled, linked against its grants, described.
pub struct Plugin {
    pub description: wit::PluginDescription,
    /// Each tool's traits, in `description.tools` order.
    pub traits: Vec<wit::ToolTraits>,
    pub grants: Grants,
    /// How the compiled code was obtained on this load.
    pub cache_outcome: CacheOutcome,
    /// Why code built into the binary for it was not used (it was compiled instead).
    pub precompiled_unused: Option<String>,
    /// Wall time of compile-or-deserialize plus link.
    pub load_time: Duration,
    pre: RouterPre,
    name: Arc<str>,
    wit_version: WitVersion,
}

impl Plugin {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The WIT version the plugin was built against (and is linked under).
    pub fn wit_version(&self) -> WitVersion {
        self.wit_version
    }

    /// The traits of one of its tools (every tool it describes has them).
    pub fn traits_of(&self, tool: &str) -> Option<&wit::ToolTraits> {
        self.traits.iter().find(|t| t.tool == tool)
    }
}

/// A component compiled (or loaded from the cache) but not yet linked: what it imports
/// can be read before anything is granted.
pub struct Compiled {
    component: Component,
    cache_outcome: CacheOutcome,
    precompiled_unused: Option<String>,
    compile_time: Duration,
    imports: Vec<String>,
    exports: Vec<String>,
}

impl Compiled {
    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache_outcome
    }

    /// The component's imports, as written (`scryer:router/index@0.1.0`).
    pub fn imports(&self) -> &[String] {
        &self.imports
    }

    /// What the component needs, read from its imports: these decide what must be
    /// linked, whatever a manifest says.
    pub fn requirements(&self) -> Requirements {
        Requirements::from_imports(&self.imports, &self.exports)
    }
}

/// What a component needs to be linked, derived from its imports and exports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Capabilities whose interfaces it imports.
    pub needs: Grants,
    /// Imports no capability can grant (e.g. `wasi:filesystem/types`): such a component
    /// can never be linked.
    pub ungrantable: Vec<String>,
    /// The `scryer:router` WIT version it was built against (from its imports and
    /// exports), when it names one.
    pub wit_version: Option<String>,
}

impl Requirements {
    pub fn from_imports(imports: &[String], exports: &[String]) -> Requirements {
        let mut needs = Vec::new();
        let mut ungrantable = Vec::new();
        for import in imports {
            match Grants::capability_for(import) {
                Some(cap) => needs.push(cap),
                None if Grants::default().allows_import(import) => {}
                None => ungrantable.push(import.clone()),
            }
        }
        let wit_version = imports
            .iter()
            .chain(exports)
            .filter(|n| n.starts_with("scryer:router/"))
            .find_map(|n| n.split_once('@').map(|(_, v)| v.to_string()));
        Requirements {
            needs: Grants::new(needs),
            ungrantable,
            wit_version,
        }
    }
}

/// One engine, its limits, its compile cache and the host services routers import.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<RuntimeInner>,
}

struct RuntimeInner {
    engine: Engine,
    limits: Limits,
    cache: Option<CompileCache>,
    host: Arc<dyn HostServices>,
    permits: tokio::sync::Semaphore,
    /// Turns to run: of the calls holding a permit, `running_calls` run at once.
    running: tokio::sync::Semaphore,
    /// Shadow calls' own limits and permits (ADR 0030).
    shadow_limits: Limits,
    shadow_permits: tokio::sync::Semaphore,
}

impl Runtime {
    /// Builds the engine. `cache` is where compiled components are kept (`None`: compile
    /// every start).
    pub fn new(
        limits: Limits,
        cache: Option<CompileCache>,
        host: Arc<dyn HostServices>,
    ) -> anyhow::Result<Runtime> {
        limits.validate().map_err(anyhow::Error::msg)?;
        let engine = Engine::new(&engine_config(&limits))?;
        start_epoch_ticker(&engine, limits.epoch_tick);
        let permits = tokio::sync::Semaphore::new(limits.max_concurrent_calls as usize);
        let running = tokio::sync::Semaphore::new(limits.running_calls as usize);
        let shadow_limits = limits.for_shadow();
        let shadow_permits =
            tokio::sync::Semaphore::new(shadow_limits.max_concurrent_calls as usize);
        Ok(Runtime {
            inner: Arc::new(RuntimeInner {
                engine,
                limits,
                cache,
                host,
                permits,
                running,
                shadow_limits,
                shadow_permits,
            }),
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    /// Compiles (or loads from cache), checks imports against `grants`, links, and asks
    /// the plugin to describe itself. `label` names the plugin in errors until it has
    /// described itself (e.g. its file name).
    pub async fn load(
        &self,
        label: &str,
        wasm: &[u8],
        grants: Grants,
    ) -> Result<Plugin, LoadError> {
        let compiled = self.compile(label, wasm)?;
        self.link(label, compiled, grants).await
    }

    /// [`Runtime::load`] for a component that comes with code compiled at build time:
    /// that code is used when this engine may load it, else the component is compiled.
    pub async fn load_with(
        &self,
        label: &str,
        wasm: &[u8],
        precompiled: Option<&Precompiled>,
        grants: Grants,
    ) -> Result<Plugin, LoadError> {
        let compiled = self.compile_with(label, wasm, precompiled)?;
        self.link(label, compiled, grants).await
    }

    /// Whether this engine would load `p` (nothing is deserialized): when it would not,
    /// loading that component means compiling it.
    pub fn precompiled_usable(&self, p: &Precompiled) -> bool {
        precompiled::usable(&self.inner.engine, p).is_ok()
    }

    /// Loads `precompiled` code without the component it was compiled from: for a
    /// first-party router whose code fits this engine ([`Runtime::precompiled_usable`]).
    /// Fails when the code does not load (then compile the component instead).
    pub fn compile_precompiled(
        &self,
        label: &str,
        precompiled: &Precompiled,
    ) -> Result<Compiled, LoadError> {
        let started = Instant::now();
        let component = precompiled::load(&self.inner.engine, precompiled).map_err(|why| {
            LoadError::Invalid {
                plugin: label.to_string(),
                reason: format!("the code built into the binary does not load: {why}"),
            }
        })?;
        Ok(self.compiled(component, CacheOutcome::Embedded, None, started))
    }

    /// Validates and compiles (or loads from the cache) a component without linking it,
    /// so its [`Requirements`] can be read before deciding what to grant.
    pub fn compile(&self, label: &str, wasm: &[u8]) -> Result<Compiled, LoadError> {
        self.compile_with(label, wasm, None)
    }

    /// [`Runtime::compile`], taking `precompiled` code instead when this engine may load
    /// it.
    pub fn compile_with(
        &self,
        label: &str,
        wasm: &[u8],
        precompiled: Option<&Precompiled>,
    ) -> Result<Compiled, LoadError> {
        let started = Instant::now();
        let invalid = |reason: String| LoadError::Invalid {
            plugin: label.to_string(),
            reason,
        };
        let mut precompiled_unused = None;
        let embedded = precompiled.and_then(|p| {
            precompiled::load(&self.inner.engine, p)
                .inspect_err(|why| {
                    tracing::warn!(
                        plugin = label,
                        "code built into the binary not used, compiling: {why}"
                    );
                    precompiled_unused = Some(why.to_string());
                })
                .ok()
        });
        let (component, cache_outcome) = match (embedded, &self.inner.cache) {
            (Some(component), _) => (component, CacheOutcome::Embedded),
            (None, Some(cache)) => cache
                .load(&self.inner.engine, wasm)
                .map_err(|e| invalid(format!("{e:#}")))?,
            (None, None) => (
                Component::new(&self.inner.engine, wasm).map_err(|e| invalid(format!("{e:#}")))?,
                CacheOutcome::Disabled,
            ),
        };
        Ok(self.compiled(component, cache_outcome, precompiled_unused, started))
    }

    /// A loaded component with what linking it needs to know of its imports and exports.
    fn compiled(
        &self,
        component: Component,
        cache_outcome: CacheOutcome,
        precompiled_unused: Option<String>,
        started: Instant,
    ) -> Compiled {
        let ty = component.component_type();
        let engine = &self.inner.engine;
        let imports = ty.imports(engine).map(|(n, _)| n.to_string()).collect();
        let exports = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
        Compiled {
            component,
            cache_outcome,
            precompiled_unused,
            compile_time: started.elapsed(),
            imports,
            exports,
        }
    }

    /// Links a compiled component against exactly `grants` (refusing it when it imports
    /// anything else) and asks it to describe itself.
    pub async fn link(
        &self,
        label: &str,
        compiled: Compiled,
        grants: Grants,
    ) -> Result<Plugin, LoadError> {
        let started = Instant::now();
        let invalid = |reason: String| LoadError::Invalid {
            plugin: label.to_string(),
            reason,
        };
        check_imports(label, &compiled.imports, &grants)?;
        let wit_version = WitVersion::of_exports(&compiled.exports).map_err(invalid)?;
        let linker = capabilities::linker_for(&self.inner.engine, &grants, wit_version)
            .map_err(|e| invalid(format!("{e:#}")))?;
        let pre = linker
            .instantiate_pre(&compiled.component)
            .map_err(|e| invalid(format!("{e:#}")))?;
        let pre = RouterPre::new(wit_version, pre).map_err(|e| invalid(format!("{e:#}")))?;
        let load_time = compiled.compile_time + started.elapsed();

        let name: Arc<str> = Arc::from(label);
        let scope = CallScope {
            plugin: name.clone(),
            project: None,
            session: 0,
            window: Arc::default(),
            memo: Arc::default(),
        };
        let (description, traits) = self
            .run(&pre, scope, |instance, store| {
                let description = instance.describe(&mut *store)?;
                let traits = instance.describe_traits(&mut *store, &description)?;
                Ok((description, traits))
            })
            .await
            .map_err(|e| invalid(format!("describe failed: {e}")))?;
        if let Some(problem) = limits::describe_problem(&description, &traits) {
            return Err(invalid(problem));
        }
        validate_description(&description).map_err(invalid)?;
        validate_traits(&description, &traits).map_err(invalid)?;
        Ok(Plugin {
            name: Arc::from(description.name.as_str()),
            description,
            traits,
            grants,
            cache_outcome: compiled.cache_outcome,
            precompiled_unused: compiled.precompiled_unused,
            load_time,
            pre,
            wit_version,
        })
    }

    /// Calls `tool` on `plugin` in a fresh store under the limits. The answer carries
    /// `context.notes` (and the project notes for the roots it names) and says the files
    /// it is about, whatever WIT version the plugin was built against.
    pub async fn call(
        &self,
        plugin: &Plugin,
        scope: CallScope,
        tool: &str,
        arguments: &str,
        context: &wit::AnswerContext,
    ) -> Result<wit::ToolAnswer, CallFailure> {
        self.call_under(plugin, scope, tool, arguments, context, false)
            .await
    }

    /// [`call`](Self::call) for a shadow-run candidate (ADR 0030): under the shadow
    /// limits ([`Limits::for_shadow`]) and permits, never a live call's; `Busy` at once
    /// when every shadow permit is taken.
    pub async fn call_shadow(
        &self,
        plugin: &Plugin,
        scope: CallScope,
        tool: &str,
        arguments: &str,
        context: &wit::AnswerContext,
    ) -> Result<wit::ToolAnswer, CallFailure> {
        self.call_under(plugin, scope, tool, arguments, context, true)
            .await
    }

    async fn call_under(
        &self,
        plugin: &Plugin,
        scope: CallScope,
        tool: &str,
        arguments: &str,
        context: &wit::AnswerContext,
        shadow: bool,
    ) -> Result<wit::ToolAnswer, CallFailure> {
        let tool = tool.to_string();
        let arguments = arguments.to_string();
        let context = context.clone();
        let answer = self
            .run_as(&plugin.pre, scope, shadow, move |instance, store| {
                instance.answer(store, &tool, &arguments, &context)
            })
            .await?;
        let result = answer.map_err(|e| CallFailure::Router(limits::cap_call_error(e)))?;
        let limit = self.inner.limits.max_answer_bytes;
        if result.body.len() > limit {
            return Err(CallFailure::AnswerTooLarge {
                plugin: plugin.name.to_string(),
                bytes: result.body.len(),
                limit,
            });
        }
        Ok(result)
    }

    /// Runs `f` against a fresh instance on a blocking thread, under every limit.
    async fn run<R: Send + 'static>(
        &self,
        pre: &RouterPre,
        scope: CallScope,
        f: impl FnOnce(&RouterInstance, &mut Store<CallState>) -> wasmtime::Result<R> + Send + 'static,
    ) -> Result<R, CallFailure> {
        self.run_as(pre, scope, false, f).await
    }

    /// [`run`](Self::run) under the live limits, or with `shadow` the shadow ones.
    async fn run_as<R: Send + 'static>(
        &self,
        pre: &RouterPre,
        scope: CallScope,
        shadow: bool,
        f: impl FnOnce(&RouterInstance, &mut Store<CallState>) -> wasmtime::Result<R> + Send + 'static,
    ) -> Result<R, CallFailure> {
        let (limits, permits) = if shadow {
            (&self.inner.shadow_limits, &self.inner.shadow_permits)
        } else {
            (&self.inner.limits, &self.inner.permits)
        };
        let limits = limits.clone();
        let plugin = scope.plugin.to_string();
        let _permit = permits
            .try_acquire()
            .map_err(|_| CallFailure::Busy(limits.max_concurrent_calls))?;
        let spawned = Instant::now();
        // A live call waits for its turn to run (fair, in arrival order), but never longer
        // than `MAX_TURN_WAIT`: behind calls that take seconds it runs beside them, as
        // every call did before turns. A shadow call's permits are its turns already, and
        // it never waits behind live calls.
        let _turn = match shadow {
            true => None,
            false => {
                let turn = self.inner.running.acquire();
                match tokio::time::timeout(limits::MAX_TURN_WAIT, turn).await {
                    Ok(Ok(turn)) => Some(turn),
                    Ok(Err(_)) | Err(_) => None,
                }
            }
        };
        let pre = pre.clone();
        let engine = self.inner.engine.clone();
        let host = self.inner.host.clone();
        let limits_for_call = limits.clone();
        let task = tokio::task::spawn_blocking(move || {
            let queued = spawned.elapsed();
            let state = CallState {
                // No preopens, no environment, no arguments, stdio goes nowhere.
                wasi: WasiCtxBuilder::new().build(),
                table: ResourceTable::new(),
                limits: limits_for_call.store_limits(),
                host,
                scope,
                host_time: Duration::ZERO,
            };
            let mut store = Store::new(&engine, state);
            store.limiter(|s| &mut s.limits);
            // The deadline is in epoch ticks, which are wall time; when it is reached,
            // time spent in host calls is given back, so only the router's own work
            // counts against its CPU deadline.
            let started = Instant::now();
            store.set_epoch_deadline(limits_for_call.deadline_ticks());
            store.epoch_deadline_callback(move |store| {
                let own = started.elapsed().saturating_sub(store.data().host_time);
                match limits_for_call.ticks_left(own) {
                    Some(ticks) => Ok(UpdateDeadline::Continue(ticks)),
                    None => Err(Trap::Interrupt.into()),
                }
            });
            let instance = pre.instantiate(&mut store)?;
            let instantiated = started.elapsed();
            let result = f(&instance, &mut store);
            log_call_time(&store, queued, instantiated, started.elapsed());
            result
        });
        match tokio::time::timeout(limits.wall_timeout, task).await {
            Err(_) => Err(CallFailure::Timeout {
                plugin,
                timeout: limits.wall_timeout,
            }),
            Ok(Err(join)) => Err(CallFailure::Trap {
                plugin,
                detail: format!("host task failed: {join}"),
            }),
            Ok(Ok(Err(e))) => Err(classify_trap(&plugin, &limits, e)),
            Ok(Ok(Ok(r))) => Ok(r),
        }
    }
}

/// Where a router call's time went, as one `scryer::call_time` debug event (off unless
/// `SCRYER_LOG` enables it): waiting for a blocking thread, instantiating, the router's
/// own work and its host calls. `bench/call_time.py` sums these under load.
fn log_call_time(
    store: &Store<CallState>,
    queued: Duration,
    instantiated: Duration,
    total: Duration,
) {
    let host = store.data().host_time;
    let router = total.saturating_sub(instantiated).saturating_sub(host);
    tracing::debug!(
        target: "scryer::call_time",
        plugin = %store.data().scope.plugin,
        queued_us = queued.as_micros() as u64,
        instantiate_us = instantiated.as_micros() as u64,
        router_us = router.as_micros() as u64,
        host_us = host.as_micros() as u64,
        "router call"
    );
}

/// The engine configuration, the one function both the runtime and the build-time
/// compilation of the first-party routers ([`precompiled::compile_ahead`]) build their
/// engine with, so code compiled at build time has this engine's compatibility hash.
pub(crate) fn engine_config(limits: &Limits) -> Config {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.parallel_compilation(true);
    // + room for describe calls at load, and for shadow calls (ADR 0030).
    let slots = limits.max_concurrent_calls + 8 + limits::SHADOW_CONCURRENT_CALLS;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots);
    pool.total_core_instances(slots * 4);
    pool.total_memories(slots * 2);
    pool.total_tables(slots * 4);
    pool.max_memories_per_component(4);
    pool.max_tables_per_component(8);
    pool.max_memory_size(limits.memory_bytes);
    pool.linear_memory_keep_resident(limits::WARM_MEMORY_BYTES.min(limits.memory_bytes));
    pool.max_unused_warm_slots(limits::WARM_SLOTS);
    pool.pagemap_scan(wasmtime::Enabled::Auto);
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // No native-to-wasm address maps (10% of the routers' code, 1.75 MB): they only put
    // wasm offsets into trap backtraces, which name the functions without them; traps
    // are classified by their kind (`classify_trap`), not by those offsets.
    config.generate_address_map(false);
    // `SCRYER_WASM_PROFILE=perfmap` names router code for `perf` (a /tmp/perf-PID.map);
    // without it, time spent inside routers shows as anonymous addresses.
    if std::env::var("SCRYER_WASM_PROFILE").as_deref() == Ok("perfmap") {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}

/// Advances the engine's epoch every `tick` for as long as the engine lives.
fn start_epoch_ticker(engine: &Engine, tick: Duration) {
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("scryer-epoch".into())
        .spawn(move || {
            while let Some(engine) = weak.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(tick);
            }
        })
        .expect("spawning the epoch thread");
}

fn check_imports(label: &str, imports: &[String], grants: &Grants) -> Result<(), LoadError> {
    for import in imports {
        if !grants.allows_import(import) {
            let mut allowed: Vec<String> =
                grants.iter().map(|c| c.interface().to_string()).collect();
            allowed.push("the WASI baseline (clocks, random, stdio, io)".into());
            return Err(LoadError::UngrantedImport {
                plugin: label.to_string(),
                import: import.to_string(),
                capability: Grants::capability_for(import),
                allowed: allowed.join(", "),
            });
        }
    }
    Ok(())
}

/// One traits record per tool, in the description's order.
fn validate_traits(d: &wit::PluginDescription, traits: &[wit::ToolTraits]) -> Result<(), String> {
    let tools: Vec<&str> = d.tools.iter().map(|t| t.name.as_str()).collect();
    let described: Vec<&str> = traits.iter().map(|t| t.tool.as_str()).collect();
    if tools != described {
        return Err(format!(
            "describe-traits names the tools [{}] but describe lists [{}]; give one traits record per tool, in the same order",
            described.join(", "),
            tools.join(", ")
        ));
    }
    Ok(())
}

fn validate_description(d: &wit::PluginDescription) -> Result<(), String> {
    if d.name.is_empty() {
        return Err("describe returned an empty plugin name".into());
    }
    let mut seen = std::collections::HashSet::new();
    for t in &d.tools {
        let ok_name = !t.name.is_empty()
            && t.name.len() <= 64
            && t.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !ok_name {
            return Err(format!(
                "tool name {:?} is not 1-64 characters of [A-Za-z0-9_-]",
                t.name
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err(format!("tool `{}` is declared twice", t.name));
        }
        match serde_json::from_str::<serde_json::Value>(&t.input_schema) {
            Ok(serde_json::Value::Object(_)) => {}
            _ => {
                return Err(format!(
                    "tool `{}` has an input schema that is not a JSON object",
                    t.name
                ));
            }
        }
    }
    Ok(())
}

fn classify_trap(plugin: &str, limits: &Limits, e: wasmtime::Error) -> CallFailure {
    let plugin = plugin.to_string();
    if let Some(trap) = e.downcast_ref::<Trap>()
        && *trap == Trap::Interrupt
    {
        return CallFailure::CpuDeadline {
            plugin,
            deadline: limits.cpu_deadline,
        };
    }
    let detail = format!("{e:#}");
    if detail.contains("forcing trap when growing memory") || detail.contains("memory minimum size")
    {
        return CallFailure::Memory {
            plugin,
            limit_bytes: limits.memory_bytes,
        };
    }
    // The first line names the trap; the backtrace that follows is for the log.
    tracing::warn!(%plugin, error = %detail, "router trapped");
    let first = e.root_cause().to_string();
    let first = first.lines().next().unwrap_or("trap").to_string();
    CallFailure::Trap {
        plugin,
        detail: first,
    }
}

/// Convenience for callers that want a `Context` on load errors.
pub fn read_plugin_file(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading plugin {}", path.display()))
}
