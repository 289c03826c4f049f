//! A project's interned SCIP symbols held in memory per precise generation, and the
//! `%` patterns a trait item's family and the Python shared-method note are found by;
//! with the occurrences ([`super::occurrences`]), what the service holds of a project
//! ([`Held`]).
//!
//! Those look-ups run for every definition an answer weighs: an ambiguous
//! `find_references new` asks about hundreds, each with up to five patterns. As SQL
//! `LIKE` scans of `precise_symbol` they cost 5–30 ms apiece and stopped such calls at
//! the router's 30 s limit; over the symbols in memory (tokio: 11.5k) a pattern is a
//! pass of prefix checks. Hand-written because the match is this small: `%` is any run
//! of characters, everything else is literal and case-sensitive (symbol text, where
//! `LIKE`'s `_` wildcard and ASCII case folding were never wanted).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::Result;
use scryer_db::Db;

use super::occurrences::Occurrences;

/// The project's interned SCIP symbols, `(id, symbol)`.
#[derive(Debug, Default)]
pub struct Symbols {
    rows: Vec<(i64, String)>,
}

impl Symbols {
    pub fn new(mut rows: Vec<(i64, String)>) -> Symbols {
        rows.sort_by_key(|(id, _)| *id);
        Symbols { rows }
    }

    /// The text of the symbol numbered `id`.
    pub fn text(&self, id: i64) -> Option<&str> {
        let at = self.rows.binary_search_by_key(&id, |(i, _)| *i).ok()?;
        Some(&self.rows[at].1)
    }

    /// The ids of the symbols whose text is `symbol`.
    pub fn ids_of(&self, symbol: &str) -> Vec<i64> {
        self.rows
            .iter()
            .filter(|(_, s)| s == symbol)
            .map(|(i, _)| *i)
            .collect()
    }

    /// Every `(id, symbol)`, in id order.
    pub fn rows(&self) -> &[(i64, String)] {
        &self.rows
    }

    /// [`like`](Self::like) among the rows at positions `among` (ascending) only.
    pub fn like_among(&self, pattern: &str, among: &[usize]) -> Vec<(i64, String)> {
        let parts: Vec<&str> = pattern.split('%').collect();
        among
            .iter()
            .map(|&at| &self.rows[at])
            .filter(|(_, s)| matches(&parts, s))
            .cloned()
            .collect()
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

/// What of a project's precise data is held in memory at one precise generation.
#[derive(Debug, Default)]
pub struct Held {
    pub symbols: Symbols,
    /// `None`: more occurrences than [`limits::OCCURRENCES_HELD`] (or ids past 32 bits),
    /// read from the database instead.
    ///
    /// [`limits::OCCURRENCES_HELD`]: super::limits::OCCURRENCES_HELD
    pub occurrences: Option<Occurrences>,
    /// Each symbol's family, as it is first asked for.
    families: Mutex<HashMap<String, Arc<Family>>>,
    /// What the family look-ups search, built when the first family is asked for.
    family_index: OnceLock<super::family::Index>,
    /// The interned ids of the locals' symbol text.
    local_ids: OnceLock<Vec<i64>>,
}

/// A symbol's family in the precise data ([`super::family`]).
#[derive(Debug, Default)]
pub struct Family {
    /// The other members of a Rust trait item's family.
    pub members: Vec<i64>,
    /// The impl blocks of a type (whose occurrences are its `Self` uses).
    pub impl_blocks: Vec<i64>,
}

impl Held {
    pub fn new(symbols: Symbols, occurrences: Option<Occurrences>) -> Held {
        Held {
            symbols,
            occurrences,
            families: Mutex::new(HashMap::new()),
            family_index: OnceLock::new(),
            local_ids: OnceLock::new(),
        }
    }

    /// The ids of the symbol text every local is stored under.
    pub fn local_ids(&self) -> &[i64] {
        self.local_ids.get_or_init(|| {
            self.symbols
                .ids_of(scryer_engine::precise::scip_read::LOCAL)
        })
    }

    /// Builds now what the first look-ups would build (the family look-ups' index, the
    /// locals' ids), for a caller priming the data before any call needs it. Returns how
    /// many symbols are held.
    pub fn prime(&self) -> usize {
        self.family_index
            .get_or_init(|| super::family::Index::new(&self.symbols));
        self.local_ids();
        self.symbols.rows().len()
    }

    /// `symbol`'s family, worked out once per precise generation: each pattern is a scan
    /// of the project's symbols, and every call that weighs a common name asks about each
    /// of its definitions again.
    pub fn family_of(&self, symbol: &str) -> Arc<Family> {
        if let Some(f) = self
            .families
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(symbol)
        {
            return f.clone();
        }
        let lookup = super::family::Lookup {
            symbols: &self.symbols,
            index: self
                .family_index
                .get_or_init(|| super::family::Index::new(&self.symbols)),
        };
        let family = Arc::new(Family {
            members: super::family::members(lookup, symbol),
            impl_blocks: super::family::impl_blocks(lookup, symbol),
        });
        self.families
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(symbol.to_string(), family.clone());
        family
    }
}

/// Each project's [`Held`] data, kept until the precise generation moves.
#[derive(Default)]
pub struct HeldCache {
    at: Mutex<HashMap<i64, (u64, Arc<Held>)>>,
    /// One load at a time: calls arriving while a generation's data loads wait for it
    /// instead of each reading every row again.
    loading: tokio::sync::Mutex<()>,
}

impl HeldCache {
    fn kept(&self, project_id: i64, generation: u64) -> Option<Arc<Held>> {
        self.at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&project_id)
            .filter(|(g, _)| *g == generation)
            .map(|(_, h)| h.clone())
    }

    /// The project's held data at `generation`, read from `db` if it is not held yet.
    /// The caller reads `generation` before this call, so data read while a run stores
    /// new rows is kept under the generation that run's end retires.
    pub async fn get(&self, db: &Db, project_id: i64, generation: u64) -> Result<Arc<Held>> {
        if let Some(h) = self.kept(project_id, generation) {
            return Ok(h);
        }
        let _one = self.loading.lock().await;
        if let Some(h) = self.kept(project_id, generation) {
            return Ok(h);
        }
        let started = std::time::Instant::now();
        let symbols = Symbols::new(db.precise_symbols(project_id).await?);
        let symbols_us = started.elapsed().as_micros() as u64;
        let files: Vec<i64> = db
            .precise_files(project_id)
            .await?
            .values()
            .map(|f| f.id)
            .collect();
        let files_us = started.elapsed().as_micros() as u64;
        let hits = db
            .precise_occurrences_in(&files, super::limits::OCCURRENCES_HELD)
            .await?;
        let read_us = started.elapsed().as_micros() as u64;
        let occurrences = hits.and_then(Occurrences::new);
        tracing::debug!(
            target: "scryer::call_time",
            project_id,
            symbols = symbols.rows().len(),
            occurrences = occurrences.as_ref().map_or(0, Occurrences::len),
            symbols_us,
            files_us,
            read_us,
            held_us = started.elapsed().as_micros() as u64,
            "precise data held"
        );
        let held = Arc::new(Held::new(symbols, occurrences));
        self.at
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(project_id, (generation, held.clone()));
        Ok(held)
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
