//! A project's interned SCIP symbols held in memory per precise generation, and the
//! `%` patterns a trait item's family and the Python shared-method note are found by.
//!
//! Those look-ups run for every definition an answer weighs: an ambiguous
//! `find_references new` asks about hundreds, each with up to five patterns. As SQL
//! `LIKE` scans of `precise_symbol` they cost 5–30 ms apiece and stopped such calls at
//! the router's 30 s limit; over the symbols in memory (tokio: 11.5k) a pattern is a
//! pass of prefix checks. Hand-written because the match is this small: `%` is any run
//! of characters, everything else is literal and case-sensitive (symbol text, where
//! `LIKE`'s `_` wildcard and ASCII case folding were never wanted).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use scryer_db::Db;

/// The project's interned SCIP symbols, `(id, symbol)`.
#[derive(Debug, Default)]
pub struct Symbols {
    rows: Vec<(i64, String)>,
}

impl Symbols {
    pub fn new(rows: Vec<(i64, String)>) -> Symbols {
        Symbols { rows }
    }

    /// The symbols `pattern` matches (`%`: any run of characters), in id order.
    pub fn like(&self, pattern: &str) -> Vec<(i64, String)> {
        let parts: Vec<&str> = pattern.split('%').collect();
        self.rows
            .iter()
            .filter(|(_, s)| matches(&parts, s))
            .cloned()
            .collect()
    }
}

/// Whether `text` matches the pattern split at its `%`s into `parts`.
fn matches(parts: &[&str], text: &str) -> bool {
    let [first, middle @ .., last] = parts else {
        // No `%`: the whole text.
        return parts.first().is_some_and(|p| *p == text);
    };
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// The symbols of each project, cached until the precise generation moves.
#[derive(Default)]
pub struct SymbolCache {
    at: Mutex<HashMap<i64, (u64, Arc<Symbols>)>>,
}

impl SymbolCache {
    pub async fn get(&self, db: &Db, project_id: i64, generation: u64) -> Result<Arc<Symbols>> {
        if let Some((g, s)) = self
            .at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&project_id)
            && *g == generation
        {
            return Ok(s.clone());
        }
        let symbols = Arc::new(Symbols::new(db.precise_symbols(project_id).await?));
        self.at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(project_id, (generation, symbols.clone()));
        Ok(symbols)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbols(list: &[&str]) -> Symbols {
        Symbols::new(
            list.iter()
                .enumerate()
                .map(|(i, s)| (i as i64, s.to_string()))
                .collect(),
        )
    }

    #[test]
    fn percent_is_any_run_and_the_rest_is_literal() {
        let s = symbols(&[
            "p io/impl#[File][AsyncWrite]poll_write().",
            "p io/impl#[`Tasks<S>`][AsyncWrite]poll_write().",
            "p io/AsyncWrite#poll_write().",
            "p io/impl#[File][AsyncWrite]pollxwrite().",
            "q io/impl#[File][AsyncWrite]poll_write().",
            "p io/impl#[file][AsyncWrite]poll_write().",
        ]);
        let ids = |pattern: &str| {
            s.like(pattern)
                .into_iter()
                .map(|(i, _)| i)
                .collect::<Vec<_>>()
        };
        // `_` is no wildcard, case counts, the package prefix anchors.
        assert_eq!(ids("p %][AsyncWrite]poll_write()."), [0, 1, 5]);
        assert_eq!(ids("p %impl#[File]%"), [0, 3]);
        assert_eq!(ids("p %impl#[`Tasks<%"), [1]);
        // No `%`: the whole symbol.
        assert_eq!(ids("p io/AsyncWrite#poll_write()."), [2]);
        assert_eq!(ids("p io/AsyncWrite#poll_write"), Vec::<i64>::new());
        // Parts in order and not overlapping.
        assert_eq!(ids("p %Async%Write%"), [0, 1, 2, 3, 5]);
        assert_eq!(ids("p %Write%Write%"), Vec::<i64>::new());
        assert_eq!(ids("p %poll_write().%poll_write()."), Vec::<i64>::new());
    }
}
