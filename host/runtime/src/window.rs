//! How much of a name's usages the host hands one router call (ADR 0024).
//!
//! A common name (`new`, `fmt`) has hundreds of thousands of usage sites in a large
//! project; lowered into a router whole they break its memory cap. Each call carries a
//! [`UsageWindow`]: the host asks it which rows of a name to hand over, and it answers
//! all of them up to [`USAGE_WINDOW_ROWS`](crate::limits::USAGE_WINDOW_ROWS), else a
//! window (from the call's `usage_offset` for the name the call is about, from the
//! start for names met on the way), never more than
//! [`CALL_USAGE_ROWS`](crate::limits::CALL_USAGE_ROWS) in all. A name with many
//! definitions gets a smaller window: attribution weighs each row against each of them,
//! so the window holds at most [`ATTRIBUTION_PAIRS`](crate::limits::ATTRIBUTION_PAIRS)
//! (row, definition) pairs, and a call at most
//! [`CALL_ATTRIBUTION_PAIRS`](crate::limits::CALL_ATTRIBUTION_PAIRS). Every cut is
//! recorded, so the host can tell the agent what the answer covers and where the next
//! window is.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Mutex;

use crate::limits::{
    ATTRIBUTION_PAIRS, CALL_ATTRIBUTION_PAIRS, CALL_USAGE_ROWS, USAGE_WINDOW_ROWS,
};

/// What a name's usage rows are called in a [`Cut`] (`references-to-name`).
pub const USAGE_SITES: &str = "usage sites";

/// What a name's call edges are called in a [`Cut`] (`edges-to`).
pub const EDGES: &str = "edges";

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
    /// The name's distinct definitions, when they (not the row limit) made the window
    /// smaller than [`USAGE_WINDOW_ROWS`].
    pub definitions: Option<usize>,
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
    pairs: usize,
    /// Distinct definitions of the names the call looked up (`symbols-by-name`).
    definitions: HashMap<String, usize>,
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

    /// Records how many distinct definitions `name` has, as a look-up of its
    /// definitions found them: the window of its rows is sized by it.
    pub fn saw_definitions(&self, name: &str, definitions: usize) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.definitions.insert(name.to_string(), definitions);
    }

    /// The distinct definitions of `name` recorded by [`saw_definitions`](Self::saw_definitions).
    pub fn definitions(&self, name: &str) -> Option<usize> {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.definitions.get(name).copied()
    }

    /// The rows of `name` (of `total`, in the host's order) to hand over. Asking again
    /// for the same name and kind gives the same range and counts once.
    pub fn take(&self, name: &str, what: &'static str, total: usize) -> Range<usize> {
        self.take_at(name, what, total, true)
    }

    /// [`take`](Self::take) for rows that only help attribute a name's usages (its `use`
    /// and `implements` sites): always from the first row, whatever `usage_offset` says.
    pub fn take_scope(&self, name: &str, what: &'static str, total: usize) -> Range<usize> {
        self.take_at(name, what, total, false)
    }

    fn take_at(&self, name: &str, what: &'static str, total: usize, movable: bool) -> Range<usize> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = (name.to_string(), what);
        if let Some(r) = st.ranges.get(&key) {
            return r.clone();
        }
        let root = movable && self.root.as_deref() == Some(name);
        let defs = st.definitions.get(name).copied().unwrap_or(1).max(1);
        let by_rows = USAGE_WINDOW_ROWS.min(CALL_USAGE_ROWS.saturating_sub(st.rows));
        let by_pairs =
            ATTRIBUTION_PAIRS.min(CALL_ATTRIBUTION_PAIRS.saturating_sub(st.pairs)) / defs;
        let most = by_rows.min(by_pairs);
        let range = if total <= most {
            0..total
        } else {
            let start = if root { self.offset.min(total) } else { 0 };
            let len = most.min(total - start);
            st.cuts.push(Cut {
                name: name.to_string(),
                what,
                total,
                handed: start..start + len,
                root,
                definitions: (by_pairs < by_rows).then_some(defs),
            });
            start..start + len
        };
        st.rows += range.len();
        st.pairs += range.len() * defs;
        st.ranges.insert(key, range.clone());
        range
    }

    /// The cut this call would make of its own name's usage sites, were the name (with
    /// `definitions` distinct definitions) to have `total` of them and be asked for
    /// first: what the host can tell before the router runs. Records nothing.
    pub fn foresee(&self, definitions: usize, total: usize) -> Option<Cut> {
        let root = self.root.as_deref()?;
        let probe = UsageWindow::new(Some(root.to_string()), self.offset);
        probe.saw_definitions(root, definitions);
        probe.take(root, USAGE_SITES, total);
        probe.cuts().pop()
    }

    /// The name the call is about, if any.
    pub fn root(&self) -> Option<&str> {
        self.root.as_deref()
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
    fn the_cut_of_the_calls_own_name_is_foreseen_without_being_made() {
        let w = UsageWindow::new(Some("fmt".into()), 300);
        let seen = w.foresee(4_967, 120_000).expect("a cut");
        assert!(w.cuts().is_empty(), "foreseeing records nothing");
        w.saw_definitions("fmt", 4_967);
        w.take("fmt", USAGE_SITES, 120_000);
        assert_eq!(w.cuts(), [seen]);
        // Handed whole, or about no name: nothing to foresee.
        assert_eq!(
            UsageWindow::new(Some("new".into()), 0).foresee(213, 2_315),
            None
        );
        assert_eq!(UsageWindow::new(None, 0).foresee(1, 100_000), None);
    }

    #[test]
    fn a_name_with_many_definitions_gets_a_smaller_window() {
        let w = UsageWindow::new(Some("fmt".into()), 0);
        w.saw_definitions("fmt", 4_967);
        let r = w.take("fmt", "usage sites", 120_000);
        assert_eq!(r, 0..ATTRIBUTION_PAIRS / 4_967);
        assert_eq!(w.cuts()[0].definitions, Some(4_967));
        // Few rows are handed whole however many definitions there are.
        w.saw_definitions("poll", 900);
        assert_eq!(w.take("poll", "edges", 800), 0..800);
        // The row limit, not the definitions, cut this one.
        w.saw_definitions("new", 20);
        w.take("new", "edges", 50_000);
        assert_eq!(w.cuts()[1].definitions, None);
        // tokio's largest name is handed whole.
        let t = UsageWindow::new(Some("new".into()), 0);
        t.saw_definitions("new", 213);
        assert_eq!(t.take("new", "usage sites", 2_315), 0..2_315);
        assert!(t.cuts().is_empty());
    }

    #[test]
    fn a_call_never_gets_more_pairs_than_its_share() {
        let w = UsageWindow::new(None, 0);
        let mut pairs = 0;
        for i in 0..5 {
            let name = format!("n{i}");
            w.saw_definitions(&name, 1_000);
            pairs += w.take(&name, "edges", 100_000).len() * 1_000;
        }
        assert_eq!(pairs, CALL_ATTRIBUTION_PAIRS);
        w.saw_definitions("late", 10);
        assert_eq!(w.take("late", "edges", 5), 0..0);
    }

    #[test]
    fn scope_rows_start_at_the_first_whatever_the_offset() {
        let w = UsageWindow::new(Some("fmt".into()), 400);
        w.saw_definitions("fmt", 4_967);
        let n = ATTRIBUTION_PAIRS / 4_967;
        assert_eq!(w.take_scope("fmt", "import sites", 9_000), 0..n);
        assert_eq!(w.take("fmt", "usage sites", 100_000), 400..400 + n);
        let cuts = w.cuts();
        assert!(!cuts[0].root && cuts[1].root);
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
