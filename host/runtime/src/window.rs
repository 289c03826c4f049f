//! How much of a name's usages the host hands one router call (ADR 0024).
//!
//! A common name (`new`, `fmt`) has hundreds of thousands of usage sites in a large
//! project; lowered into a router whole they break its memory cap. Each call carries a
//! [`UsageWindow`]: the host asks it which rows of a name to hand over, and it answers
//! all of them up to [`USAGE_WINDOW_ROWS`](crate::limits::USAGE_WINDOW_ROWS), else a
//! window (from the call's `usage_offset` for the name the call is about, from the
//! start for names met on the way), never more than
//! [`CALL_USAGE_ROWS`](crate::limits::CALL_USAGE_ROWS) in all. Every cut is recorded,
//! so the host can tell the agent what the answer covers and where the next window is.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

use crate::limits::{CALL_USAGE_ROWS, USAGE_WINDOW_ROWS};

/// Which rows of a name one call was handed, when it was not handed all of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    pub name: String,
    /// `usage sites` or `edges`.
    pub what: &'static str,
    /// Rows the name has.
    pub total: usize,
    /// The rows handed over, in the host's order (file, then line).
    pub handed: Range<usize>,
    /// Whether this is the name the call is about (the one `usage_offset` moves).
    pub root: bool,
}

/// The per-call record of what was handed over. Shared by the clones of a call's scope.
#[derive(Debug, Default)]
pub struct UsageWindow {
    root: Option<String>,
    offset: usize,
    state: Mutex<Handed>,
}

#[derive(Debug, Default)]
struct Handed {
    rows: usize,
    ranges: HashMap<(String, &'static str), Range<usize>>,
    cuts: Vec<Cut>,
}

impl UsageWindow {
    /// A window for a call about the bare name `root` (the last segment of its `symbol`),
    /// starting at `offset` among that name's rows.
    pub fn new(root: Option<String>, offset: usize) -> UsageWindow {
        UsageWindow {
            root,
            offset,
            state: Mutex::default(),
        }
    }

    /// The rows of `name` (of `total`, in the host's order) to hand over. Asking again
    /// for the same name and kind gives the same range and counts once.
    pub fn take(&self, name: &str, what: &'static str, total: usize) -> Range<usize> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = (name.to_string(), what);
        if let Some(r) = st.ranges.get(&key) {
            return r.clone();
        }
        let root = self.root.as_deref() == Some(name);
        let left = CALL_USAGE_ROWS.saturating_sub(st.rows);
        let range = if total <= USAGE_WINDOW_ROWS.min(left) {
            0..total
        } else {
            let start = if root { self.offset.min(total) } else { 0 };
            let len = USAGE_WINDOW_ROWS.min(left).min(total - start);
            st.cuts.push(Cut {
                name: name.to_string(),
                what,
                total,
                handed: start..start + len,
                root,
            });
            start..start + len
        };
        st.rows += range.len();
        st.ranges.insert(key, range.clone());
        range
    }

    /// The cuts made so far, in the order they were made.
    pub fn cuts(&self) -> Vec<Cut> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.cuts.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_names_are_handed_whole_and_large_ones_a_window() {
        let w = UsageWindow::new(Some("new".into()), 25_000);
        assert_eq!(w.take("helper", "usage sites", 40), 0..40);
        let r = w.take("new", "usage sites", 100_000);
        assert_eq!(r, 25_000..25_000 + USAGE_WINDOW_ROWS);
        // Asked again: the same rows, counted once.
        assert_eq!(w.take("new", "usage sites", 100_000), r);
        // A name met on the way starts at its first row.
        assert_eq!(w.take("fmt", "edges", 50_000), 0..USAGE_WINDOW_ROWS);
        let cuts = w.cuts();
        assert_eq!(cuts.len(), 2);
        assert!(cuts[0].root && !cuts[1].root);
        // An offset past the end hands nothing, and says so.
        let past = UsageWindow::new(Some("new".into()), 200_000);
        assert_eq!(past.take("new", "usage sites", 100_000), 100_000..100_000);
        assert_eq!(past.cuts()[0].total, 100_000);
    }

    #[test]
    fn a_call_never_gets_more_than_its_share() {
        let w = UsageWindow::new(None, 0);
        let mut handed = 0;
        for i in 0..10 {
            handed += w.take(&format!("n{i}"), "edges", USAGE_WINDOW_ROWS).len();
        }
        assert_eq!(handed, CALL_USAGE_ROWS);
        assert_eq!(w.take("late", "edges", 5), 0..0);
        assert!(
            w.cuts()
                .iter()
                .any(|c| c.name == "late" && c.handed.is_empty())
        );
    }
}
