//! Where a file's rows live: `symbol`, `ref_site` and `edge` rows are numbered within
//! their file.
//!
//! A row's id is `file_id << ROW_BITS` plus its number in the file, so one file's rows
//! are one range of row ids, and "the rows of file F" (an outline, the rows an edit
//! reconciles, the rows a deleted file leaves) is a range read of the table itself. None
//! of the three tables needs an index on `file_id`: on a cold index of tokio that is
//! 158k index entries (45 % of all) the one writer no longer inserts, about 14 % of the
//! index run (`docs/learnings/indexing-speed.md`, 2026-12-01).
//!
//! Architecture invariant: every row inserted into these tables takes its id from a
//! [`RowIds`] of its file, and every by-file statement selects with [`in_file`].

use anyhow::{Result, bail};

/// Bits of a row id numbering rows within one file: 4 billion row ids per file, and
/// room for 2 billion files.
const ROW_BITS: u32 = 32;

/// `WHERE` condition selecting one file's rows by their `id` column (`id` or, in a
/// join, `alias.id`), with the file's [`range`] bound as `?1`, `?2`.
pub(crate) fn in_file(id: &str) -> String {
    format!("{id} >= ?1 AND {id} < ?2")
}

/// The half-open range of row ids holding `file_id`'s rows.
pub(crate) fn range(file_id: i64) -> Result<(i64, i64)> {
    let start = start_of(file_id)?;
    Ok((start, start + (1 << ROW_BITS)))
}

/// The row ids of `file_id`'s rows, as the keys a search index gives them (`u64`).
pub fn keys_of_file(file_id: i64) -> Result<std::ops::Range<u64>> {
    let (start, end) = range(file_id)?;
    Ok(start as u64..end as u64)
}

fn start_of(file_id: i64) -> Result<i64> {
    match file_id.checked_mul(1 << ROW_BITS) {
        Some(start) if file_id >= 0 && start.checked_add(1 << ROW_BITS).is_some() => Ok(start),
        _ => bail!(
            "file id {file_id} is past the {} files a database numbers rows for",
            i64::MAX >> ROW_BITS
        ),
    }
}

/// Hands out the ids of new rows of one table in one file, in insert order.
#[derive(Debug)]
pub(crate) struct RowIds {
    file_id: i64,
    next: i64,
    end: i64,
}

impl RowIds {
    /// Ids for a file whose rows of this table all have ids below `next` (or that has
    /// none: `next` is `None`).
    pub fn after(file_id: i64, next: Option<i64>) -> Result<Self> {
        let (start, end) = range(file_id)?;
        let next = next.unwrap_or(start);
        if !(start..=end).contains(&next) {
            bail!("row id {next} is not in file {file_id}'s range");
        }
        Ok(RowIds { file_id, next, end })
    }

    /// The next row's id.
    pub fn take(&mut self) -> Result<i64> {
        if self.next >= self.end {
            bail!(
                "file id {} has used all of its {} row ids; re-indexing the project from \
                 scratch (forget it, then index it) renumbers them",
                self.file_id,
                1_i64 << ROW_BITS
            );
        }
        let id = self.next;
        self.next += 1;
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_rows_are_numbered_inside_its_own_range() {
        let (start, end) = range(3).unwrap();
        assert_eq!((start, end), (3 << 32, 4 << 32));
        let mut ids = RowIds::after(3, None).unwrap();
        assert_eq!(ids.take().unwrap(), start);
        assert_eq!(ids.take().unwrap(), start + 1);
        let mut later = RowIds::after(3, Some(start + 10)).unwrap();
        assert_eq!(later.take().unwrap(), start + 10);
        assert!(range(4).unwrap().0 >= end, "ranges do not overlap");
    }

    #[test]
    fn running_out_of_ids_or_files_is_an_error_that_says_what_ran_out() {
        let (_, end) = range(7).unwrap();
        let mut ids = RowIds::after(7, Some(end - 1)).unwrap();
        assert_eq!(ids.take().unwrap(), end - 1);
        let e = ids.take().unwrap_err().to_string();
        assert!(e.contains("file id 7 has used all"), "{e}");
        let e = range(i64::MAX >> 31).unwrap_err().to_string();
        assert!(e.contains("past the"), "{e}");
        assert!(range(-1).is_err());
        assert!(RowIds::after(7, Some(end + 1)).is_err());
    }
}
