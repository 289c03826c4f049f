//! Receipt order inside one session: a call received after a call that changes the
//! session's projects (a tool of a plugin granted `projects`: `index_workspace`,
//! `switch_active_project`, `delete_project`, …) waits until that call has answered,
//! so `index_workspace` piped before `find_references` is seen by it, whatever order
//! rmcp's tasks happen to run in (it runs every request on a task of its own).
//!
//! The order is taken where it exists: [`Tap`] reads the bytes of a byte-stream session
//! (a daemon socket, the stdio of `serve --no-daemon`) before rmcp decodes them and
//! numbers each `tools/call` line. Calls with no receipt number (HTTP requests, which
//! have no order between them) never wait. A wait never exceeds the first-query wait.
//! The end of a tapped input is passed on only once the calls it carried have been
//! answered (at most a minute), so `printf … | scryer serve` prints every answer.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// How long a project-changing call received but not yet started holds later calls
/// back: one that never starts (rmcp refused its request) must not hold them longer.
const UNSTARTED_GRACE: Duration = Duration::from_secs(5);
/// Longest line whose request is numbered; longer ones are passed on unnumbered.
const MAX_TAPPED_LINE: usize = 1 << 20;
/// How long the end of a session's input is held back while calls it sent are still
/// being answered (a piped `printf … | scryer serve` closes its input at once).
const EOF_HOLD: Duration = Duration::from_secs(60);
/// How long the end of input is held after the last call answered, so its answer is
/// written before the session ends.
const EOF_SETTLE: Duration = Duration::from_millis(200);

/// What a barrier call is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Barrier {
    Received(Instant),
    Running,
}

#[derive(Default)]
struct State {
    next: u64,
    /// Receipt numbers of `tools/call` requests not yet started, by JSON-RPC id.
    numbers: HashMap<String, u64>,
    /// Project-changing calls not yet answered, by receipt number.
    barriers: BTreeMap<u64, Barrier>,
    /// Numbered calls started and not yet answered.
    running: usize,
}

/// The receipt order of one session's calls.
pub struct SessionOrder {
    state: Mutex<State>,
    /// Bumped whenever a barrier starts or ends.
    changed: watch::Sender<u64>,
}

/// The part of a JSON-RPC message the order needs.
#[derive(Deserialize)]
struct Probe {
    method: Option<String>,
    id: Option<serde_json::Value>,
    params: Option<ProbeParams>,
}

#[derive(Deserialize)]
struct ProbeParams {
    name: Option<String>,
}

/// A JSON-RPC id as one key, whether it arrives as JSON or as rmcp's `RequestId`.
fn id_key(id: &serde_json::Value) -> Option<String> {
    match id {
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(format!("s:{s}")),
        _ => None,
    }
}

pub fn request_id_key(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => format!("s:{s}"),
    }
}

impl Default for SessionOrder {
    fn default() -> Self {
        SessionOrder {
            state: Mutex::default(),
            changed: watch::channel(0).0,
        }
    }
}

impl SessionOrder {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Numbers one received line if it is a `tools/call`; `is_barrier` tells whether
    /// the named tool changes the session's projects.
    pub fn received(&self, line: &[u8], is_barrier: impl Fn(&str) -> bool) {
        let Ok(probe) = serde_json::from_slice::<Probe>(line) else {
            return;
        };
        if probe.method.as_deref() != Some("tools/call") {
            return;
        }
        let Some(key) = probe.id.as_ref().and_then(id_key) else {
            return;
        };
        let barrier = probe
            .params
            .and_then(|p| p.name)
            .is_some_and(|n| is_barrier(&n));
        let mut state = self.lock();
        state.next += 1;
        let n = state.next;
        state.numbers.insert(key, n);
        if barrier {
            state.barriers.insert(n, Barrier::Received(Instant::now()));
        }
    }

    /// Starts the call with JSON-RPC id `key`: waits (at most `limit`) until every
    /// project-changing call received before it has answered. The returned ticket ends
    /// this call's own barrier when dropped.
    pub async fn begin(self: &Arc<Self>, key: &str, limit: Duration) -> Ticket {
        let number = {
            let mut state = self.lock();
            let n = state.numbers.remove(key);
            if let Some(n) = n {
                state.running += 1;
                if let Some(b) = state.barriers.get_mut(&n) {
                    *b = Barrier::Running;
                }
            }
            n
        };
        self.changed.send_modify(|v| *v += 1);
        let ticket = Ticket {
            order: self.clone(),
            number,
        };
        if let Some(n) = number {
            self.wait_before(n, limit).await;
        }
        ticket
    }

    /// Whether a barrier received before `n` still holds it back, and until when a
    /// not-yet-started one may.
    fn blocked(&self, n: u64) -> (bool, Option<Instant>) {
        let state = self.lock();
        let mut soonest: Option<Instant> = None;
        let mut blocked = false;
        for (_, b) in state.barriers.range(..n) {
            match b {
                Barrier::Running => blocked = true,
                Barrier::Received(at) if at.elapsed() < UNSTARTED_GRACE => {
                    blocked = true;
                    let until = *at + UNSTARTED_GRACE;
                    soonest = Some(soonest.map_or(until, |s| s.min(until)));
                }
                Barrier::Received(_) => {}
            }
        }
        (blocked, soonest)
    }

    /// Calls received and not yet answered.
    fn unanswered(&self) -> usize {
        let state = self.lock();
        state.numbers.len() + state.running
    }

    /// Waits (at most [`EOF_HOLD`]) until every call received has been answered.
    async fn drained(self: Arc<Self>) {
        let deadline = Instant::now() + EOF_HOLD;
        let mut changed = self.changed.subscribe();
        while self.unanswered() > 0 && Instant::now() < deadline {
            let _ = tokio::time::timeout_at(deadline.into(), changed.changed()).await;
        }
        tokio::time::sleep(EOF_SETTLE).await;
    }

    async fn wait_before(&self, n: u64, limit: Duration) {
        let deadline = Instant::now() + limit;
        let mut changed = self.changed.subscribe();
        loop {
            let (blocked, grace_ends) = self.blocked(n);
            if !blocked || Instant::now() >= deadline {
                return;
            }
            let until = grace_ends.map_or(deadline, |g| g.min(deadline));
            let _ = tokio::time::timeout_at(until.into(), changed.changed()).await;
        }
    }
}

/// A started call; its barrier (if it is one) ends with it.
pub struct Ticket {
    order: Arc<SessionOrder>,
    number: Option<u64>,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(n) = self.number {
            let mut state = self.order.lock();
            state.running = state.running.saturating_sub(1);
            state.barriers.remove(&n);
            drop(state);
            self.order.changed.send_modify(|v| *v += 1);
        }
    }
}

/// A reader that shows every complete line it passes on to a [`SessionOrder`] first.
pub struct Tap<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line passed [`MAX_TAPPED_LINE`]: skipped up to its newline.
    skipping: bool,
    order: Arc<SessionOrder>,
    is_barrier: Box<dyn Fn(&str) -> bool + Send + Sync>,
    /// The input ended: the wait for the calls still being answered.
    ending: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl<R> Tap<R> {
    pub fn new(
        inner: R,
        order: Arc<SessionOrder>,
        is_barrier: Box<dyn Fn(&str) -> bool + Send + Sync>,
    ) -> Tap<R> {
        Tap {
            inner,
            line: Vec::new(),
            skipping: false,
            order,
            is_barrier,
            ending: None,
        }
    }

    fn scan(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let (part, rest, ends) = match bytes.iter().position(|b| *b == b'\n') {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            if !self.skipping {
                if self.line.len() + part.len() > MAX_TAPPED_LINE {
                    self.skipping = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if ends {
                if !self.skipping {
                    self.order.received(&self.line, &self.is_barrier);
                }
                self.line.clear();
                self.skipping = false;
            }
            bytes = rest;
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Tap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(ending) = self.ending.as_mut() {
            return ending.as_mut().poll(cx).map(Ok);
        }
        let before = buf.filled().len();
        let room = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            if room && buf.filled().len() == before {
                // The end of input: rmcp ends the session on it, dropping answers not
                // yet written, so it is passed on once the calls are answered.
                let mut ending: Pin<Box<dyn Future<Output = ()> + Send>> =
                    Box::pin(self.order.clone().drained());
                let now = ending.as_mut().poll(cx).map(Ok);
                self.ending = Some(ending);
                return now;
            }
            let fresh = buf.filled()[before..].to_vec();
            self.scan(&fresh);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn call(id: u64, tool: &str) -> String {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{tool}\",\"arguments\":{{}}}}}}\n"
        )
    }

    #[tokio::test]
    async fn a_call_received_after_a_project_change_waits_for_it() {
        let order = Arc::new(SessionOrder::default());
        let input = format!(
            "{}{}",
            call(1, "index_workspace"),
            call(2, "find_references")
        );
        let mut tap = Tap::new(
            std::io::Cursor::new(input.clone().into_bytes()),
            order.clone(),
            Box::new(|t| t == "index_workspace"),
        );
        let mut out = vec![0u8; input.len()];
        tap.read_exact(&mut out).await.unwrap();
        assert_eq!(out, input.as_bytes(), "the bytes pass unchanged");
        // The end of input waits for the two calls.
        let end = tokio::spawn(async move {
            let mut rest = Vec::new();
            tap.read_to_end(&mut rest).await.unwrap();
            rest.len()
        });

        // The later call starts first: it waits until the earlier one has answered.
        let later = tokio::spawn({
            let order = order.clone();
            async move {
                let started = Instant::now();
                let _t = order.begin("2", Duration::from_secs(10)).await;
                started.elapsed()
            }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        let first = order.begin("1", Duration::from_secs(10)).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!later.is_finished(), "the later call went ahead");
        drop(first);
        assert!(
            !end.is_finished(),
            "the input ended while a call was answered"
        );
        let waited = later.await.unwrap();
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert_eq!(end.await.unwrap(), 0, "then it ends");

        // Unnumbered calls (HTTP) and calls after answered barriers do not wait.
        let t = order.begin("99", Duration::from_secs(10)).await;
        assert!(t.number.is_none());
    }

    #[tokio::test]
    async fn a_wait_is_bounded() {
        let order = Arc::new(SessionOrder::default());
        order.received(call(1, "index_workspace").trim().as_bytes(), |_| true);
        order.received(call(2, "find_references").trim().as_bytes(), |_| false);
        let _first = order.begin("1", Duration::from_secs(10)).await;
        let started = Instant::now();
        let _second = order.begin("2", Duration::from_millis(100)).await;
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
