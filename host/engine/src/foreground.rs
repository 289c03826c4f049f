//! Background work gives way to agents' calls.
//!
//! Dependency crates are indexed in the background on the two cores that also answer
//! tool calls. At equal footing, in the first minute after `index_workspace` on
//! regex-automata, `find_references`' p95 was 15–19 ms against 9–10 ms with this, and
//! `get_file_outline`'s 32 ms against 15–21 (docs/learnings/tool-contract.md).
//! So a call that reads the index marks itself with [`Call`], and dependency indexing
//! asks [`yield_to_calls`] before each file it parses and each transaction it writes:
//! while a call runs or one ended within [`QUIET`], it waits.
//!
//! Process-wide on purpose: the cores are the process's, whichever project a call is
//! about. [`MAX_WAIT`] bounds each wait, so a steady stream of calls slows background
//! work down but never stops it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long after a call background work stays paused: agents send calls in bursts, a
/// few milliseconds apart.
pub const QUIET: Duration = Duration::from_millis(100);
/// The longest one [`yield_to_calls`] waits.
pub const MAX_WAIT: Duration = Duration::from_millis(500);
const STEP: Duration = Duration::from_millis(10);

static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// When the last call ended, in ms since [`epoch`]; 0 when none has yet.
static LAST_END_MS: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    // +1: a call that ends in the epoch's first millisecond still counts as one.
    epoch().elapsed().as_millis() as u64 + 1
}

/// A call in progress; background work waits while any is alive and [`QUIET`] after.
#[must_use = "the call counts as running only while this is alive"]
pub struct Call(());

impl Call {
    pub fn start() -> Call {
        IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
        Call(())
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        LAST_END_MS.store(now_ms(), Ordering::SeqCst);
        IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether background work should wait now.
pub fn calls_active() -> bool {
    if IN_FLIGHT.load(Ordering::SeqCst) > 0 {
        return true;
    }
    let last = LAST_END_MS.load(Ordering::SeqCst);
    last != 0 && now_ms().saturating_sub(last) < QUIET.as_millis() as u64
}

/// Blocks the calling (background) thread while calls are active, at most [`MAX_WAIT`].
/// Returns how long it waited.
pub fn yield_to_calls() -> Duration {
    let started = Instant::now();
    while calls_active() && started.elapsed() < MAX_WAIT {
        std::thread::sleep(STEP);
    }
    started.elapsed()
}

/// [`yield_to_calls`] for async background work.
pub async fn yield_to_calls_async() -> Duration {
    let started = Instant::now();
    while calls_active() && started.elapsed() < MAX_WAIT {
        tokio::time::sleep(STEP).await;
    }
    started.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test: the state is process-wide, and tests in one binary run in parallel.
    #[test]
    fn background_waits_while_a_call_runs_and_briefly_after_but_never_past_the_cap() {
        assert!(yield_to_calls() < STEP, "no call yet: no wait");
        let call = Call::start();
        assert!(calls_active());
        let waited = yield_to_calls();
        assert!(
            waited >= MAX_WAIT && waited < MAX_WAIT * 4,
            "a call that never ends is waited for only up to the cap: {waited:?}"
        );
        drop(call);
        assert!(calls_active(), "just ended: still within the quiet time");
        let waited = yield_to_calls();
        assert!(
            waited >= QUIET / 2 && waited < MAX_WAIT,
            "waits out the quiet time after the last call: {waited:?}"
        );
        assert!(!calls_active());
        let nested = (Call::start(), Call::start());
        drop(nested.0);
        assert!(calls_active(), "one of two calls still runs");
        drop(nested.1);
    }
}
