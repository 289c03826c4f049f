//! A project's precise occurrences held in memory per precise generation: a symbol's
//! occurrences and a file's lines are look-ups, not database reads.
//!
//! A precise answer weighs every definition of a name: `find_references new` on tokio
//! links about 200 definitions, each reading its file's definitions, its symbol's
//! occurrences, its trait family's and its impl blocks', and the unresolved sites of the
//! name read the occurrences of every file that holds it. As database reads those were
//! about 1 ms per definition and most of a precise answer's time
//! (`docs/learnings/precise.md`). The rows are small and fixed-size (20 bytes, plus 4
//! for the by-symbol order: tokio's 171k occurrences are 4 MB), loaded once per precise
//! generation, and a project with more than [`limits::OCCURRENCES_HELD`] is read from
//! the database as before.
//!
//! Both orders are the database reads' orders exactly: by file, line and column, ties in
//! id order; by symbol, then the same.
//!
//! [`limits::OCCURRENCES_HELD`]: super::limits::OCCURRENCES_HELD

use scryer_db::{PRECISE_ROLE_DEFINITION, PreciseHit};

use super::symbols::Symbols;

/// One occurrence, with ids narrowed to 32 bits (a project whose ids do not fit is not
/// held).
#[derive(Clone, Copy, Debug)]
struct Occ {
    file: u32,
    symbol: u32,
    line: u32,
    column: u32,
    roles: u32,
}

/// A project's occurrences in (file, line, column) order, and by symbol.
#[derive(Debug, Default)]
pub struct Occurrences {
    rows: Vec<Occ>,
    /// Indexes into `rows` in (symbol, file, line, column) order.
    by_symbol: Vec<u32>,
}

impl Occurrences {
    /// Held from `hits` in id order (as [`scryer_db::Db::precise_occurrences_in`] reads
    /// them); `None` when an id or role does not fit the compact row.
    pub fn new(hits: Vec<PreciseHit>) -> Option<Occurrences> {
        let mut rows = Vec::with_capacity(hits.len());
        for h in hits {
            rows.push(Occ {
                file: u32::try_from(h.file_id).ok()?,
                symbol: u32::try_from(h.symbol_id).ok()?,
                line: h.line,
                column: h.column,
                roles: u32::try_from(h.roles).ok()?,
            });
        }
        u32::try_from(rows.len()).ok()?;
        // Stable sorts: ties keep id order, as the database's reads do.
        rows.sort_by_key(|o| (o.file, o.line, o.column));
        let mut by_symbol: Vec<u32> = (0..rows.len() as u32).collect();
        by_symbol.sort_by_key(|&i| rows[i as usize].symbol);
        Some(Occurrences { rows, by_symbol })
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Every occurrence of `symbol_id` (its `symbol` left empty), by file, line, column.
    pub fn of_symbol(&self, symbol_id: i64) -> Vec<PreciseHit> {
        self.symbol_rows(symbol_id)
            .map(|o| hit(o, String::new()))
            .collect()
    }

    /// The rows of `symbol_id`, by file, line and column (none for an id past 32 bits).
    fn symbol_rows(&self, symbol_id: i64) -> impl Iterator<Item = Occ> + '_ {
        let symbol = u32::try_from(symbol_id).ok();
        let start = symbol.map_or(self.by_symbol.len(), |symbol| {
            self.by_symbol
                .partition_point(|&i| self.rows[i as usize].symbol < symbol)
        });
        self.by_symbol[start..]
            .iter()
            .map(|&i| self.rows[i as usize])
            .take_while(move |o| Some(o.symbol) == symbol)
    }

    /// The occurrences in `file_id` on lines `from..=to` (definitions only when
    /// `definitions_only`), by line and column, each with its symbol's text.
    pub fn in_file(
        &self,
        symbols: &Symbols,
        file_id: i64,
        from: u32,
        to: u32,
        definitions_only: bool,
    ) -> Vec<PreciseHit> {
        let Ok(file) = u32::try_from(file_id) else {
            return Vec::new();
        };
        let start = self
            .rows
            .partition_point(|o| (o.file, o.line) < (file, from));
        self.rows[start..]
            .iter()
            .take_while(|o| o.file == file && o.line <= to)
            .filter(|o| !definitions_only || i64::from(o.roles) & PRECISE_ROLE_DEFINITION != 0)
            .map(|o| {
                hit(
                    *o,
                    symbols
                        .text(i64::from(o.symbol))
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    }
}

impl Occurrences {
    /// [`in_file`](Self::in_file) for only the lines in `lines` (sorted, each once):
    /// the occurrences at a name's sites, without the text of every symbol in between.
    pub fn on_lines(&self, symbols: &Symbols, file_id: i64, lines: &[u32]) -> Vec<PreciseHit> {
        let Ok(file) = u32::try_from(file_id) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &line in lines {
            let start = self
                .rows
                .partition_point(|o| (o.file, o.line) < (file, line));
            out.extend(
                self.rows[start..]
                    .iter()
                    .take_while(|o| o.file == file && o.line == line)
                    .map(|o| {
                        let text = symbols.text(i64::from(o.symbol)).unwrap_or_default();
                        hit(*o, text.to_string())
                    }),
            );
        }
        out
    }

    /// Where the symbols in `local_ids` (the locals' interned ids) are defined in
    /// `file_id` (line, column), by line and column.
    pub fn local_definitions(&self, local_ids: &[i64], file_id: i64) -> Vec<(u32, u32)> {
        let Ok(file) = u32::try_from(file_id) else {
            return Vec::new();
        };
        let start = self.rows.partition_point(|o| o.file < file);
        self.rows[start..]
            .iter()
            .take_while(|o| o.file == file)
            .filter(|o| i64::from(o.roles) & PRECISE_ROLE_DEFINITION != 0)
            .filter(|o| local_ids.contains(&i64::from(o.symbol)))
            .map(|o| (o.line, o.column))
            .collect()
    }

    /// Whether any occurrence of `symbol_id` defines it.
    pub fn has_definition(&self, symbol_id: i64) -> bool {
        self.symbol_rows(symbol_id)
            .any(|o| i64::from(o.roles) & PRECISE_ROLE_DEFINITION != 0)
    }
}

fn hit(o: Occ, symbol: String) -> PreciseHit {
    PreciseHit {
        file_id: i64::from(o.file),
        symbol_id: i64::from(o.symbol),
        symbol,
        line: o.line,
        column: o.column,
        roles: i64::from(o.roles),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(file_id: i64, symbol_id: i64, line: u32, column: u32, roles: i64) -> PreciseHit {
        PreciseHit {
            file_id,
            symbol_id,
            symbol: String::new(),
            line,
            column,
            roles,
        }
    }

    #[test]
    fn look_ups_answer_in_the_database_reads_order() {
        let symbols = Symbols::new(vec![(1, "s a/A#".into()), (2, "s a/b().".into())]);
        // Id order, as read: file 2 before file 1 in id terms is not possible, but lines
        // and columns arrive out of order within a file.
        let o = Occurrences::new(vec![
            h(1, 2, 9, 1, 0),
            h(1, 1, 3, 5, PRECISE_ROLE_DEFINITION),
            h(1, 2, 3, 1, 0),
            h(2, 1, 1, 1, 0),
            h(2, 2, 4, 2, PRECISE_ROLE_DEFINITION),
        ])
        .unwrap();
        assert_eq!(o.len(), 5);
        let at = |v: Vec<PreciseHit>| {
            v.into_iter()
                .map(|h| (h.file_id, h.line, h.column, h.symbol))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            at(o.of_symbol(2)),
            [
                (1, 3, 1, String::new()),
                (1, 9, 1, String::new()),
                (2, 4, 2, String::new())
            ]
        );
        assert_eq!(at(o.of_symbol(3)), []);
        assert_eq!(at(o.of_symbol(-1)), []);
        assert_eq!(
            at(o.in_file(&symbols, 1, 1, 10, false)),
            [
                (1, 3, 1, "s a/b().".to_string()),
                (1, 3, 5, "s a/A#".to_string()),
                (1, 9, 1, "s a/b().".to_string())
            ]
        );
        assert_eq!(
            at(o.in_file(&symbols, 1, 4, 9, false)),
            [(1, 9, 1, "s a/b().".to_string())]
        );
        assert_eq!(
            at(o.in_file(&symbols, 1, 1, u32::MAX, true)),
            [(1, 3, 5, "s a/A#".to_string())]
        );
        assert_eq!(at(o.in_file(&symbols, 3, 1, 10, false)), []);
        // Only the lines asked for, in the same order as the range read.
        assert_eq!(
            at(o.on_lines(&symbols, 1, &[3, 9])),
            at(o.in_file(&symbols, 1, 1, 10, false))
        );
        assert_eq!(
            at(o.on_lines(&symbols, 1, &[4, 9])),
            [(1, 9, 1, "s a/b().".to_string())]
        );
        assert_eq!(o.local_definitions(&[1], 1), [(3, 5)]);
        assert_eq!(o.local_definitions(&[2], 2), [(4, 2)]);
        assert_eq!(o.local_definitions(&[2], 1), []);
        assert!(o.has_definition(1) && o.has_definition(2));
        assert!(!o.has_definition(3) && !o.has_definition(-1));
        let no_definition = Occurrences::new(vec![h(1, 7, 1, 1, 0), h(2, 7, 2, 1, 0)]).unwrap();
        assert!(!no_definition.has_definition(7));
    }

    #[test]
    fn ids_past_32_bits_are_not_held() {
        assert!(Occurrences::new(vec![h(1 << 33, 1, 1, 1, 0)]).is_none());
        assert!(Occurrences::new(vec![h(1, 1 << 33, 1, 1, 0)]).is_none());
        assert!(Occurrences::new(vec![h(1, 1, 1, 1, -1)]).is_none());
    }
}
