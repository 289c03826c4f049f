//! Rewriting a re-extracted file's rows by difference instead of deleting and inserting
//! them all.
//!
//! An edit usually changes a few rows and moves the lines of the rest: a line inserted
//! near the top of a 5,300-line file moves all of its ~4,000 rows by one line. Deleting
//! and re-inserting them (with their index upkeep) cost ~40 ms; shifting their line
//! columns in one `UPDATE` per table and rewriting only the rows that really changed is
//! what keeps an edit under the freshness target.
//!
//! How lines moved is read from the rows themselves, not from the file's old text (which
//! is not kept): the stored and the new references, each in position order and compared
//! without their line, are aligned with a Myers diff; every aligned pair tells how far its
//! line moved, and the result is a [`LineShift`], a step function from old line to new.
//! A row counts as unchanged only if its values, with every line column shifted, equal a
//! new row exactly; the `UPDATE` applies the same function in SQL, so what is stored
//! afterwards is what was extracted.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use anyhow::{Context, Result};
use similar::{Algorithm, DiffOp};
use turso::{Connection, Value};

use crate::{col, file_rows, int};

/// One table of per-file rows, as they are inserted and compared: its name, the data
/// columns after `project_id, file_id` (in insert order) and which of them hold lines.
pub(crate) struct RowTable {
    pub name: &'static str,
    pub columns: &'static str,
    pub line_columns: &'static [usize],
}

pub(crate) const SYMBOL_ROWS: RowTable = RowTable {
    name: "symbol",
    columns: "name, kind, qualified_name, owner, signature, docstring, \
              start_line, end_line, name_line, name_column",
    line_columns: &[6, 7, 8],
};

pub(crate) const REF_ROWS: RowTable = RowTable {
    name: "ref_site",
    columns: "name, kind, line, col, qualifier, scope_id",
    line_columns: &[2],
};

pub(crate) const EDGE_ROWS: RowTable = RowTable {
    name: "edge",
    columns: crate::edges::EDGE_DATA_COLUMNS,
    line_columns: &[5],
};

/// Every table whose rows belong to one file (numbered within it: `file_rows`).
pub(crate) const FILE_ROW_TABLES: [&RowTable; 3] = [&SYMBOL_ROWS, &REF_ROWS, &EDGE_ROWS];

/// Where each table's new rows of a reconciled file start: past every id its stored rows
/// had (`None`: at the start of the file's range, its stored rows are all gone).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NextRowIds {
    pub symbol: Option<i64>,
    pub reference: Option<i64>,
    pub edge: Option<i64>,
}

/// A shift with more steps than this is not worth an `UPDATE` whose `CASE` lists them
/// all: the file was rewritten rather than edited, and its rows are replaced.
const MAX_SHIFT_STEPS: usize = 32;

/// How an edit moved lines: old line `l` becomes `l + delta` of the last step whose
/// `from` is at most `l` (the first step covers every line before it too).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LineShift {
    /// `(from, delta)` by ascending `from`; never empty.
    steps: Vec<(i64, i64)>,
}

impl LineShift {
    /// No line moved.
    pub fn none() -> Self {
        LineShift {
            steps: vec![(i64::MIN, 0)],
        }
    }

    /// The shift that best explains how the `stored` rows of `table` became `new`,
    /// aligning them in position order by their values without the line columns. A
    /// shift too fragmented to be an edit is [`LineShift::none`].
    pub fn between<'a>(
        table: &RowTable,
        stored: impl Iterator<Item = &'a [Value]>,
        new: impl Iterator<Item = &'a [Value]>,
    ) -> Self {
        let line = table.line_columns[0];
        let keyed = |rows: &mut dyn Iterator<Item = &'a [Value]>| {
            let mut keyed: Vec<(i64, u64)> = rows
                .map(|r| (line_of(r, line), hash_without(r, table.line_columns)))
                .collect();
            // Position order; the key breaks ties so that equal lines align stably.
            keyed.sort_unstable();
            keyed
        };
        let (old, new) = (keyed(&mut { stored }), keyed(&mut { new }));
        let old_keys: Vec<u64> = old.iter().map(|k| k.1).collect();
        let new_keys: Vec<u64> = new.iter().map(|k| k.1).collect();
        let mut steps: Vec<(i64, i64)> = Vec::new();
        for op in similar::capture_diff_slices(Algorithm::Myers, &old_keys, &new_keys) {
            let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = op
            else {
                continue;
            };
            for i in 0..len {
                let (from, to) = (old[old_index + i].0, new[new_index + i].0);
                let delta = to - from;
                match steps.last() {
                    Some(&(_, d)) if d == delta => {}
                    // Two rows on one old line that moved differently (a line split):
                    // the first one decides.
                    Some(&(f, _)) if f == from => {}
                    _ => steps.push((from, delta)),
                }
            }
        }
        if steps.is_empty() || steps.len() > MAX_SHIFT_STEPS {
            return Self::none();
        }
        steps[0].0 = i64::MIN;
        LineShift { steps }
    }

    /// Where old line `line` is now.
    pub fn map(&self, line: i64) -> i64 {
        let i = self.steps.partition_point(|&(from, _)| from <= line);
        line + self.steps[i.saturating_sub(1)].1
    }

    /// Whether any line moves.
    pub fn moves_lines(&self) -> bool {
        self.steps.iter().any(|&(_, d)| d != 0)
    }

    /// `column` shifted, as an SQL expression over the row's current value.
    fn sql(&self, column: &str) -> String {
        if let [(_, delta)] = self.steps[..] {
            return format!("{column} + {delta}");
        }
        let mut case = format!("{column} + CASE");
        for &(from, delta) in self.steps.iter().skip(1).rev() {
            case.push_str(&format!(" WHEN {column} >= {from} THEN {delta}"));
        }
        case.push_str(&format!(" ELSE {} END", self.steps[0].1));
        case
    }

    /// `values` with every line column shifted.
    fn apply(&self, table: &RowTable, mut values: Vec<Value>) -> Vec<Value> {
        for &i in table.line_columns {
            if let Value::Integer(line) = values[i] {
                values[i] = Value::Integer(self.map(line));
            }
        }
        values
    }
}

/// Brings a re-extracted file's stored symbols, references and edges in line with the
/// new extraction ([`reconcile`] for each table), leaving in each list only the rows still
/// to insert. How lines moved is read off the references, the densest rows.
pub(crate) async fn reconcile_file(
    conn: &Connection,
    file_id: i64,
    symbols: &mut Vec<Vec<Value>>,
    references: &mut Vec<Vec<Value>>,
    edges: &mut Vec<Vec<Value>>,
) -> Result<NextRowIds> {
    let stored_refs = stored_rows(conn, &REF_ROWS, file_id).await?;
    let shift = LineShift::between(
        &REF_ROWS,
        stored_refs.iter().map(|(_, v)| v.as_slice()),
        references.iter().map(Vec::as_slice),
    );
    let reference = reconcile(conn, &REF_ROWS, file_id, stored_refs, &shift, references).await?;
    let stored = stored_rows(conn, &SYMBOL_ROWS, file_id).await?;
    let symbol = reconcile(conn, &SYMBOL_ROWS, file_id, stored, &shift, symbols).await?;
    let stored = stored_rows(conn, &EDGE_ROWS, file_id).await?;
    let edge = reconcile(conn, &EDGE_ROWS, file_id, stored, &shift, edges).await?;
    Ok(NextRowIds {
        symbol,
        reference,
        edge,
    })
}

/// A file's stored rows of `table`: (id, data values).
async fn stored_rows(
    conn: &Connection,
    table: &RowTable,
    file_id: i64,
) -> Result<Vec<(i64, Vec<Value>)>> {
    let width = table.columns.split(',').count();
    let mut found = conn
        .query(
            &format!(
                "SELECT id, {} FROM {} WHERE {}",
                table.columns,
                table.name,
                file_rows::in_file("id")
            ),
            file_rows::range(file_id)?,
        )
        .await?;
    let mut rows = Vec::new();
    while let Some(row) = found.next().await? {
        let id = int(col(&row, 0)?).context("a row without an id")?;
        let values = (1..=width)
            .map(|i| col(&row, i))
            .collect::<Result<Vec<Value>>>()?;
        rows.push((id, values));
    }
    Ok(rows)
}

/// Brings a re-extracted file's `stored` rows of `table` in line with `rows` (the new
/// extraction), given how lines moved: stored rows that no longer exist are deleted,
/// the rest have their lines shifted, and `rows` keeps only the rows still to insert.
/// When most stored rows changed anyway, they are all deleted at once (far cheaper than
/// one by one) and every row is inserted again. Returns where the new rows' ids start
/// ([`NextRowIds`]).
async fn reconcile(
    conn: &Connection,
    table: &RowTable,
    file_id: i64,
    stored: Vec<(i64, Vec<Value>)>,
    shift: &LineShift,
    rows: &mut Vec<Vec<Value>>,
) -> Result<Option<i64>> {
    let stored_count = stored.len();
    let past_stored = stored.iter().map(|(id, _)| id + 1).max();
    let range = file_rows::range(file_id)?;
    // Stored rows as they will read after the shift, by a hash of their values; a hash
    // match is confirmed by comparing values.
    let mut by_hash: HashMap<u64, Vec<(i64, Vec<Value>)>> = HashMap::new();
    for (id, values) in stored {
        let shifted = shift.apply(table, values);
        by_hash
            .entry(row_hash(&shifted))
            .or_default()
            .push((id, shifted));
    }
    let already: Vec<bool> = rows
        .iter()
        .map(|r| {
            by_hash.get_mut(&row_hash(r)).is_some_and(|same| {
                match same.iter().position(|(_, v)| v == r) {
                    Some(i) => {
                        same.swap_remove(i);
                        true
                    }
                    None => false,
                }
            })
        })
        .collect();
    let kept = already.iter().filter(|&&k| k).count();
    if (stored_count - kept) * 2 > stored_count {
        conn.execute(
            &format!(
                "DELETE FROM {} WHERE {}",
                table.name,
                file_rows::in_file("id")
            ),
            range,
        )
        .await?;
        return Ok(None);
    }
    let mut flags = already.into_iter();
    rows.retain(|_| !flags.next().unwrap_or(false));
    let mut delete = conn
        .prepare(&format!("DELETE FROM {} WHERE id = ?1", table.name))
        .await?;
    for (id, _) in by_hash.into_values().flatten() {
        delete.execute((id,)).await?;
    }
    // Only kept rows are left, and each becomes exactly the new row it was matched to.
    if kept > 0 && shift.moves_lines() {
        let names: Vec<&str> = table.columns.split(',').map(str::trim).collect();
        let sets = table
            .line_columns
            .iter()
            .map(|&i| format!("{0} = {1}", names[i], shift.sql(names[i])))
            .collect::<Vec<_>>()
            .join(", ");
        conn.execute(
            &format!(
                "UPDATE {} SET {sets} WHERE {}",
                table.name,
                file_rows::in_file("id")
            ),
            range,
        )
        .await?;
    }
    Ok(past_stored)
}

fn line_of(row: &[Value], i: usize) -> i64 {
    match row.get(i) {
        Some(Value::Integer(l)) => *l,
        _ => 0,
    }
}

/// A hash of one row's values (confirmed by equality wherever it decides anything).
fn row_hash(values: &[Value]) -> u64 {
    hash_without(values, &[])
}

/// A hash of `values` leaving out the columns in `skip`.
fn hash_without(values: &[Value], skip: &[usize]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (i, v) in values.iter().enumerate() {
        if skip.contains(&i) {
            continue;
        }
        match v {
            Value::Null => 0u8.hash(&mut h),
            Value::Integer(i) => (1u8, i).hash(&mut h),
            Value::Real(f) => (2u8, f.to_bits()).hash(&mut h),
            Value::Text(t) => (3u8, t).hash(&mut h),
            Value::Blob(b) => (4u8, b).hash(&mut h),
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str, line: i64, column: i64) -> Vec<Value> {
        vec![
            Value::Text(name.into()),
            Value::Text("call".into()),
            Value::Integer(line),
            Value::Integer(column),
            Value::Null,
            Value::Text("f".into()),
        ]
    }

    #[test]
    fn a_line_inserted_at_the_top_moves_every_line_by_one() {
        let old: Vec<_> = (1..=50)
            .map(|l| reference(&format!("n{l}"), l, 4))
            .collect();
        let new: Vec<_> = (1..=50)
            .map(|l| reference(&format!("n{l}"), l + 1, 4))
            .collect();
        let shift = LineShift::between(
            &REF_ROWS,
            old.iter().map(Vec::as_slice),
            new.iter().map(Vec::as_slice),
        );
        assert_eq!(shift.map(1), 2);
        assert_eq!(shift.map(50), 51);
        assert!(shift.moves_lines());
        assert_eq!(shift.sql("line"), "line + 1");
    }

    #[test]
    fn lines_above_an_insertion_stay_and_lines_below_move() {
        let old: Vec<_> = (1..=40)
            .map(|l| reference(&format!("n{l}"), l, 0))
            .collect();
        // Three lines inserted after line 20, one new reference on them.
        let mut new: Vec<_> = (1..=20)
            .map(|l| reference(&format!("n{l}"), l, 0))
            .collect();
        new.push(reference("added", 22, 0));
        new.extend((21..=40).map(|l| reference(&format!("n{l}"), l + 3, 0)));
        let shift = LineShift::between(
            &REF_ROWS,
            old.iter().map(Vec::as_slice),
            new.iter().map(Vec::as_slice),
        );
        assert_eq!((shift.map(5), shift.map(20)), (5, 20));
        assert_eq!((shift.map(21), shift.map(40)), (24, 43));
        let case = shift.sql("line");
        assert_eq!(case, "line + CASE WHEN line >= 21 THEN 3 ELSE 0 END");
    }

    #[test]
    fn an_edit_that_moves_nothing_is_no_shift() {
        let old: Vec<_> = (1..=10).map(|l| reference("x", l, 0)).collect();
        let mut new = old.clone();
        new[4] = reference("y", 5, 0);
        let shift = LineShift::between(
            &REF_ROWS,
            old.iter().map(Vec::as_slice),
            new.iter().map(Vec::as_slice),
        );
        assert!(!shift.moves_lines());
        assert_eq!(shift, LineShift::none());
    }

    #[test]
    fn a_symbol_spanning_the_edit_keeps_its_start_and_moves_its_end() {
        let shift = LineShift {
            steps: vec![(i64::MIN, 0), (10, 2)],
        };
        let symbol = vec![
            Value::Text("f".into()),
            Value::Text("function".into()),
            Value::Text("f".into()),
            Value::Null,
            Value::Text("fn f()".into()),
            Value::Null,
            Value::Integer(3),
            Value::Integer(12),
            Value::Integer(3),
            Value::Integer(3),
        ];
        let moved = shift.apply(&SYMBOL_ROWS, symbol);
        assert_eq!(
            (&moved[6], &moved[7], &moved[8], &moved[9]),
            (
                &Value::Integer(3),
                &Value::Integer(14),
                &Value::Integer(3),
                &Value::Integer(3)
            )
        );
    }
}
