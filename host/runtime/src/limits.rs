//! Every limit a router call runs under, in one place.
//!
//! A router is untrusted code: it may loop, allocate without bound, trap or answer with
//! more than anyone wants. Each call gets a fresh store with these limits; breaking one
//! ends that call with an error that names the limit, and the next call starts clean.

use std::time::Duration;

/// Limits applied to every router call. Defaults are documented on each field and in
/// `docs/architecture.md`; `from_env` lets an operator change them without a rebuild.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// CPU time a call may spend inside the component before it is trapped (epoch
    /// deadline). Default 5 s. Host calls the guest makes do not count towards it.
    pub cpu_deadline: Duration,
    /// Wall-clock time for the whole call, host calls included. Default 30 s.
    pub wall_timeout: Duration,
    /// How often the epoch advances; the deadline is checked at this granularity.
    /// Default 10 ms.
    pub epoch_tick: Duration,
    /// Linear memory one call may grow to, in bytes. Default 64 MiB.
    pub memory_bytes: usize,
    /// Largest answer body a router may return, in bytes. Default 4 MiB.
    pub max_answer_bytes: usize,
    /// Router calls that may be in flight at once (the instance pool's size); one more
    /// is refused as busy. Default 64.
    pub max_concurrent_calls: u32,
    /// Of those, how many run at once; the rest wait their turn in arrival order.
    /// Default [`running_calls_default`]: twice the machine's cores.
    pub running_calls: u32,
}

/// Longest a live call waits for its turn ([`Limits::running_calls`]) before it runs
/// anyway: a turn taken by calls of seconds (common names on a monorepo) does not hold
/// up the cheap ones behind it for longer than this. Under the 32-session load the wait's
/// p99 was 36 ms.
pub const MAX_TURN_WAIT: Duration = Duration::from_millis(200);

/// Router calls that run at once by default: twice the cores (at least 2). More threads
/// than that only take turns on the cores, and a host call preempted while it holds a
/// cache's lock stalls the others (32 sessions on 2 cores: host calls' median went from
/// microseconds to 5 ms; `docs/learnings/scale.md`, stop 31).
pub fn running_calls_default() -> u32 {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    u32::try_from(cores * 2).unwrap_or(u32::MAX).max(2)
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_deadline: Duration::from_secs(5),
            wall_timeout: Duration::from_secs(30),
            epoch_tick: Duration::from_millis(10),
            memory_bytes: 64 << 20,
            max_answer_bytes: 4 << 20,
            max_concurrent_calls: 64,
            running_calls: running_calls_default(),
        }
    }
}

/// A shadow-run candidate's limits (ADR 0030): its own, tighter than a serving
/// router's, so a candidate never takes what live calls need. At most this many shadow
/// calls run at once (a live call finding them all busy is not shadowed, and counted as
/// skipped); the instance pool has this many slots beside the live calls'.
pub const SHADOW_CONCURRENT_CALLS: u32 = 2;
/// CPU time one shadow call may spend inside the candidate.
pub const SHADOW_CPU_DEADLINE: Duration = Duration::from_secs(2);
/// Wall-clock time of one shadow call, host calls included.
pub const SHADOW_WALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Linear memory one shadow call may grow to (never more than a serving call's).
pub const SHADOW_MEMORY_BYTES: usize = 32 << 20;

impl Limits {
    /// The limits a shadow call runs under: [`SHADOW_CPU_DEADLINE`],
    /// [`SHADOW_WALL_TIMEOUT`], [`SHADOW_MEMORY_BYTES`] (each at most the serving
    /// limit), [`SHADOW_CONCURRENT_CALLS`].
    pub fn for_shadow(&self) -> Limits {
        Limits {
            cpu_deadline: self.cpu_deadline.min(SHADOW_CPU_DEADLINE),
            wall_timeout: self.wall_timeout.min(SHADOW_WALL_TIMEOUT),
            epoch_tick: self.epoch_tick.min(SHADOW_CPU_DEADLINE),
            memory_bytes: self.memory_bytes.min(SHADOW_MEMORY_BYTES),
            max_answer_bytes: self.max_answer_bytes,
            max_concurrent_calls: SHADOW_CONCURRENT_CALLS,
            running_calls: SHADOW_CONCURRENT_CALLS,
        }
    }
}

/// Linear memory an instance slot keeps resident after a call, reset by `memset` of the
/// pages the call dirtied (found with Linux's `PAGEMAP_SCAN`) instead of `madvise`: the
/// next call in that slot takes no page faults on it. A call over common names touches a
/// few MiB (sites and their strings), and faulting them in again was about a tenth of
/// such a call (docs/learnings/latency.md, stop 30).
pub const WARM_MEMORY_BYTES: usize = 16 << 20;

/// Instance slots kept warm for other routers beyond those in use: bounds the resident
/// memory [`WARM_MEMORY_BYTES`] may hold to about (this + concurrent calls) slots.
pub const WARM_SLOTS: u32 = 12;

// A shadow call's slot keeps no more warm than half of what it may grow to.
const _: () = assert!(WARM_MEMORY_BYTES <= SHADOW_MEMORY_BYTES / 2);

/// Longest error message a router's typed error may carry to the client, in bytes;
/// the rest is cut at a character boundary and counted in the message (a router once
/// returned 10 MB of error text, which reached the agent whole).
pub const MAX_ERROR_MESSAGE_BYTES: usize = 8 << 10;

/// A router's typed error with its message cut to [`MAX_ERROR_MESSAGE_BYTES`].
pub fn cap_call_error(e: crate::wit::CallError) -> crate::wit::CallError {
    use crate::wit::CallError as E;
    let cap = |m: String| {
        if m.len() <= MAX_ERROR_MESSAGE_BYTES {
            return m;
        }
        let mut end = MAX_ERROR_MESSAGE_BYTES;
        while !m.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} bytes cut)", &m[..end], m.len() - end)
    };
    match e {
        E::InvalidArgument(m) => E::InvalidArgument(cap(m)),
        E::NotFound(m) => E::NotFound(cap(m)),
        E::Denied(m) => E::Denied(cap(m)),
        E::Internal(m) => E::Internal(cap(m)),
    }
}

/// Most tools one router may describe. The first-party routers describe at most a few
/// each; a router describing 10,000 was once loaded whole, and every `tools/list` then
/// carried them.
pub const MAX_TOOLS_PER_ROUTER: usize = 256;
/// Longest description of one tool, in bytes (the SDK holds first-party tools to 450
/// characters; a router once described one tool in 10 MB).
pub const MAX_TOOL_DESCRIPTION_BYTES: usize = 4 << 10;
/// Longest input schema of one tool, in bytes.
pub const MAX_TOOL_SCHEMA_BYTES: usize = 64 << 10;
/// Most bytes of a whole `describe` (names, descriptions, schemas, titles, and since 0.4
/// the traits' instructions), so many tools just under the other limits are refused too.
pub const MAX_DESCRIBE_BYTES: usize = 1 << 20;

/// Why a router's `describe` is over the limits above (`None`: it is within them). The
/// message names the limit, the size found and where the limit lives.
pub fn describe_problem(
    d: &crate::wit::PluginDescription,
    traits: &[crate::wit::ToolTraits],
) -> Option<String> {
    let here = "(router limits, host/runtime/src/limits.rs)";
    if d.tools.len() > MAX_TOOLS_PER_ROUTER {
        return Some(format!(
            "describe lists {} tools, over the limit of {MAX_TOOLS_PER_ROUTER} tools per router {here}",
            d.tools.len()
        ));
    }
    let mut total = d.name.len() + d.version.len();
    for t in &d.tools {
        if t.description.len() > MAX_TOOL_DESCRIPTION_BYTES {
            return Some(format!(
                "tool `{}` has a description of {} bytes, over the limit of {MAX_TOOL_DESCRIPTION_BYTES} bytes {here}",
                shown_name(&t.name),
                t.description.len()
            ));
        }
        if t.input_schema.len() > MAX_TOOL_SCHEMA_BYTES {
            return Some(format!(
                "tool `{}` has an input schema of {} bytes, over the limit of {MAX_TOOL_SCHEMA_BYTES} bytes {here}",
                shown_name(&t.name),
                t.input_schema.len()
            ));
        }
        total += t.name.len()
            + t.description.len()
            + t.input_schema.len()
            + t.annotations.title.as_ref().map_or(0, String::len);
    }
    total += traits
        .iter()
        .filter_map(|t| t.instructions.as_ref())
        .map(|i| i.question.len() + i.how.len())
        .sum::<usize>();
    (total > MAX_DESCRIBE_BYTES).then(|| {
        format!(
            "describe is {total} bytes, over the limit of {MAX_DESCRIBE_BYTES} bytes for all tools together {here}"
        )
    })
}

/// A tool name as an error shows it: at most 64 characters (the name itself may be
/// what is wrong).
fn shown_name(name: &str) -> String {
    match name.char_indices().nth(64) {
        Some((end, _)) => format!("{}…", &name[..end]),
        None => name.to_string(),
    }
}

/// Environment variables that override the defaults.
pub const ENV_CPU_DEADLINE_MS: &str = "SCRYER_PLUGIN_CPU_MS";
pub const ENV_WALL_TIMEOUT_MS: &str = "SCRYER_PLUGIN_TIMEOUT_MS";
pub const ENV_MEMORY_MIB: &str = "SCRYER_PLUGIN_MEMORY_MIB";
pub const ENV_MAX_ANSWER_KIB: &str = "SCRYER_PLUGIN_MAX_ANSWER_KIB";
pub const ENV_RUNNING_CALLS: &str = "SCRYER_PLUGIN_RUNNING_CALLS";

impl Limits {
    /// Defaults, overridden by any of the `SCRYER_PLUGIN_*` variables that are set.
    pub fn from_env() -> Result<Limits, String> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Like `from_env`, with the variables looked up through `get` (testable).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Limits, String> {
        let mut limits = Limits::default();
        let num = |key: &str| -> Result<Option<u64>, String> {
            match get(key) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<u64>() {
                    Ok(n) if n > 0 => Ok(Some(n)),
                    _ => Err(format!(
                        "{key}={v:?} is not accepted: use a whole number above 0"
                    )),
                },
            }
        };
        if let Some(ms) = num(ENV_CPU_DEADLINE_MS)? {
            limits.cpu_deadline = Duration::from_millis(ms);
        }
        if let Some(ms) = num(ENV_WALL_TIMEOUT_MS)? {
            limits.wall_timeout = Duration::from_millis(ms);
        }
        if let Some(mib) = num(ENV_MEMORY_MIB)? {
            limits.memory_bytes = usize::try_from(mib << 20).map_err(|e| e.to_string())?;
        }
        if let Some(kib) = num(ENV_MAX_ANSWER_KIB)? {
            limits.max_answer_bytes = usize::try_from(kib << 10).map_err(|e| e.to_string())?;
        }
        if let Some(n) = num(ENV_RUNNING_CALLS)? {
            limits.running_calls = u32::try_from(n).unwrap_or(u32::MAX);
        }
        limits.validate()?;
        Ok(limits)
    }

    /// Rejects combinations that cannot work.
    pub fn validate(&self) -> Result<(), String> {
        if self.epoch_tick.is_zero() || self.epoch_tick > self.cpu_deadline {
            return Err(format!(
                "epoch tick {:?} must be above zero and at most the CPU deadline {:?}",
                self.epoch_tick, self.cpu_deadline
            ));
        }
        if self.memory_bytes < (1 << 20) {
            return Err(format!(
                "memory cap {} bytes is below 1 MiB",
                self.memory_bytes
            ));
        }
        if self.max_concurrent_calls == 0 {
            return Err("max_concurrent_calls must be at least 1".into());
        }
        if self.running_calls == 0 {
            return Err("running_calls must be at least 1".into());
        }
        Ok(())
    }

    /// Epoch ticks until the CPU deadline, rounded up, at least one.
    pub fn deadline_ticks(&self) -> u64 {
        self.ticks_in(self.cpu_deadline)
    }

    /// Epoch ticks left before the CPU deadline after `used` of it, rounded up; `None`
    /// once it is spent.
    pub fn ticks_left(&self, used: Duration) -> Option<u64> {
        let left = self
            .cpu_deadline
            .checked_sub(used)
            .filter(|d| !d.is_zero())?;
        Some(self.ticks_in(left))
    }

    /// Epoch ticks covering `span`, rounded up, at least one.
    fn ticks_in(&self, span: Duration) -> u64 {
        let tick = self.epoch_tick.as_nanos().max(1);
        (span.as_nanos().div_ceil(tick)).max(1) as u64
    }

    /// The store limiter for one call.
    pub fn store_limits(&self) -> wasmtime::StoreLimits {
        wasmtime::StoreLimitsBuilder::new()
            .memory_size(self.memory_bytes)
            .table_elements(100_000)
            .instances(32)
            .tables(32)
            .memories(8)
            .trap_on_grow_failure(true)
            .build()
    }
}

/// Most usage rows (sites of `references-to-name`, edges of `edges-to`) of one name the
/// host hands one router call. A name with more is handed a window of this many, and
/// the answer says which and how to get the next (`usage_offset`; ADR 0024). At roughly
/// 0.5 KiB a row inside a router (the lowered WIT list and the SDK's copy), a window
/// stays far below the memory cap.
pub const USAGE_WINDOW_ROWS: usize = 10_000;

/// Most usage rows of all names together the host hands one router call (a traversal
/// meets many names): past it, further names get none, and the answer says so.
pub const CALL_USAGE_ROWS: usize = 30_000;

/// Most (usage row × same-named definition) pairs of one name the host hands one router
/// call. Attribution weighs every row against the name's definitions (a site nothing
/// written decides is tied openly to every compatible one), so the work and memory of a
/// window grow with both: a name with thousands of definitions (`fmt` on a 7M-line tree:
/// 4,967) gets a window of `ATTRIBUTION_PAIRS / definitions` rows (201), never more
/// than [`USAGE_WINDOW_ROWS`]. tokio's largest name (`new`: 213 definitions, 2,315 sites,
/// 0.49M pairs) is handed whole.
pub const ATTRIBUTION_PAIRS: usize = 1_000_000;

/// Most (usage row × definition) pairs of all names together one router call is handed.
pub const CALL_ATTRIBUTION_PAIRS: usize = 3 * ATTRIBUTION_PAIRS;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_are_the_documented_values() {
        let l = Limits::default();
        assert_eq!(l.cpu_deadline, Duration::from_secs(5));
        assert_eq!(l.wall_timeout, Duration::from_secs(30));
        assert_eq!(l.memory_bytes, 64 * 1024 * 1024);
        assert_eq!(l.max_answer_bytes, 4 * 1024 * 1024);
        assert_eq!(l.deadline_ticks(), 500);
        l.validate().unwrap();
        // Warm slots keep at most a quarter of a call's memory cap each:
        // (slots + calls) x 16 MiB bounds what stays resident.
        assert_eq!(WARM_MEMORY_BYTES, 16 << 20);
        assert!(WARM_MEMORY_BYTES <= l.memory_bytes / 4);
    }

    #[test]
    fn ticks_left_count_what_remains_of_the_cpu_deadline() {
        let l = Limits::default();
        assert_eq!(l.ticks_left(Duration::ZERO), Some(500));
        assert_eq!(l.ticks_left(Duration::from_millis(4_995)), Some(1));
        assert_eq!(l.ticks_left(Duration::from_millis(4_999)), Some(1));
        assert_eq!(l.ticks_left(Duration::from_secs(5)), None);
        assert_eq!(l.ticks_left(Duration::from_secs(9)), None);
    }

    #[test]
    fn environment_overrides_each_limit() {
        let l = Limits::from_lookup(lookup(&[
            (ENV_CPU_DEADLINE_MS, "250"),
            (ENV_WALL_TIMEOUT_MS, "1000"),
            (ENV_MEMORY_MIB, "16"),
            (ENV_MAX_ANSWER_KIB, "8"),
            (ENV_RUNNING_CALLS, "3"),
        ]))
        .unwrap();
        assert_eq!(l.running_calls, 3);
        assert_eq!(l.cpu_deadline, Duration::from_millis(250));
        assert_eq!(l.wall_timeout, Duration::from_secs(1));
        assert_eq!(l.memory_bytes, 16 << 20);
        assert_eq!(l.max_answer_bytes, 8 << 10);
        assert_eq!(l.deadline_ticks(), 25);
    }

    #[test]
    fn calls_run_two_per_core_by_default_and_a_shadow_call_under_its_own_cap() {
        let cores = std::thread::available_parallelism().unwrap().get() as u32;
        let l = Limits::default();
        assert_eq!(l.running_calls, (2 * cores).max(2));
        assert!(l.running_calls <= l.max_concurrent_calls || cores > 32);
        assert_eq!(l.for_shadow().running_calls, SHADOW_CONCURRENT_CALLS);
        let err = Limits::from_lookup(lookup(&[(ENV_RUNNING_CALLS, "0")])).unwrap_err();
        assert!(err.contains(ENV_RUNNING_CALLS), "{err}");
    }

    #[test]
    fn a_bad_value_is_named_in_the_error() {
        let err = Limits::from_lookup(lookup(&[(ENV_MEMORY_MIB, "lots")])).unwrap_err();
        assert!(err.contains("SCRYER_PLUGIN_MEMORY_MIB"), "{err}");
        assert!(err.contains("whole number"), "{err}");
        let err = Limits::from_lookup(lookup(&[(ENV_CPU_DEADLINE_MS, "0")])).unwrap_err();
        assert!(err.contains("SCRYER_PLUGIN_CPU_MS"), "{err}");
    }

    #[test]
    fn impossible_combinations_are_rejected() {
        let l = Limits {
            epoch_tick: Duration::from_secs(10),
            ..Limits::default()
        };
        assert!(l.validate().is_err());
        let l = Limits {
            memory_bytes: 1000,
            ..Limits::default()
        };
        assert!(l.validate().unwrap_err().contains("1 MiB"));
    }

    #[test]
    fn deadline_rounds_up_to_whole_ticks() {
        let l = Limits {
            cpu_deadline: Duration::from_millis(15),
            epoch_tick: Duration::from_millis(10),
            ..Limits::default()
        };
        assert_eq!(l.deadline_ticks(), 2);
    }

    fn description(
        tools: usize,
        description: usize,
        schema: usize,
    ) -> crate::wit::PluginDescription {
        use crate::wit::{PluginDescription, ToolAnnotations, ToolDefinition};
        let tool = |i: usize| ToolDefinition {
            name: format!("t{i}"),
            description: "d".repeat(description),
            input_schema: format!("{{\"type\":\"object\"{}}}", " ".repeat(schema)),
            annotations: ToolAnnotations {
                title: None,
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            default_budget_tokens: 100,
            budget_per_item: None,
            reads_index: false,
        };
        PluginDescription {
            name: "p".into(),
            version: "1.0.0".into(),
            tools: (0..tools).map(tool).collect(),
        }
    }

    #[test]
    fn a_describe_over_a_limit_is_named_and_one_within_them_passes() {
        assert_eq!(
            describe_problem(&description(MAX_TOOLS_PER_ROUTER, 400, 100), &[]),
            None
        );
        let many = describe_problem(&description(MAX_TOOLS_PER_ROUTER + 1, 10, 0), &[]).unwrap();
        assert!(
            many.contains("257 tools") && many.contains("limit of 256"),
            "{many}"
        );
        let long = describe_problem(&description(1, MAX_TOOL_DESCRIPTION_BYTES + 1, 0), &[]);
        assert!(
            long.unwrap()
                .contains("tool `t0` has a description of 4097 bytes")
        );
        let schema = describe_problem(&description(1, 10, MAX_TOOL_SCHEMA_BYTES), &[]).unwrap();
        assert!(
            schema.contains("input schema of") && schema.contains("65536 bytes"),
            "{schema}"
        );
        // Each tool within its limits, all of them together over the whole limit.
        let all = describe_problem(&description(200, 4000, 2000), &[]).unwrap();
        assert!(all.contains("for all tools together"), "{all}");
        assert!(all.contains("host/runtime/src/limits.rs"), "{all}");
    }

    #[test]
    fn a_router_error_message_is_cut_at_a_character_boundary() {
        use crate::wit::CallError;
        let long = "é".repeat(MAX_ERROR_MESSAGE_BYTES);
        let CallError::Internal(m) = cap_call_error(CallError::Internal(long)) else {
            panic!("the variant is kept");
        };
        assert!(m.len() < MAX_ERROR_MESSAGE_BYTES + 64, "{}", m.len());
        assert!(
            m.ends_with(&format!("({} bytes cut)", MAX_ERROR_MESSAGE_BYTES)),
            "{m:.80}"
        );
        let short = CallError::NotFound("no such tool".into());
        assert!(matches!(cap_call_error(short), CallError::NotFound(m) if m == "no such tool"));
    }
}
