//! A window's files, read as a few runs of file ids instead of one statement per file.
//!
//! A window of a common name's rows is read from the files holding it (ADR 0041). One
//! statement per file paid turso's per-statement cost thousands of times: `into`'s
//! 10,000-row window on the 7.17M-line monorepo sits in 3,183 files. The name index is
//! ordered by file id after the name, so files that hold the name and sit next to each
//! other in id order are one range scan of it. A cold index numbers files in path order,
//! the order a window is cut in, so a window is mostly one run.
//!
//! Architecture invariant: a read over [`FileSpans`] returns the rows of the wanted
//! files and nothing else. A span may bridge a few rows of files not wanted; the reader
//! drops them ([`FileSpans::keeps`]).

use std::collections::HashSet;

use crate::NameUses;

/// A span bridges files not wanted when they hold at most this many of the name's rows
/// in all: reading a row costs a few microseconds, a statement more than a few rows.
pub const SPAN_GAP_MAX_ROWS: usize = 4;

/// The files a read wants, as inclusive ranges of file ids to scan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpans {
    spans: Vec<(i64, i64)>,
    wanted: HashSet<i64>,
}

impl FileSpans {
    /// One span per file: for a caller that does not know which other files hold the
    /// name.
    pub fn each(files: &[i64]) -> FileSpans {
        let mut ids = files.to_vec();
        ids.sort_unstable();
        ids.dedup();
        FileSpans {
            spans: ids.iter().map(|&f| (f, f)).collect(),
            wanted: ids.into_iter().collect(),
        }
    }

    /// The `wanted` files among `holding`: every file holding rows of the name read,
    /// with how many. Wanted files next to each other in id order among `holding` are
    /// one span; a span goes on over files not wanted holding at most
    /// [`SPAN_GAP_MAX_ROWS`] rows. A wanted file missing from `holding` is a span of
    /// its own.
    pub fn among(wanted: &[i64], holding: impl IntoIterator<Item = (i64, usize)>) -> FileSpans {
        let wanted: HashSet<i64> = wanted.iter().copied().collect();
        let mut files: Vec<(i64, usize)> = holding.into_iter().collect();
        let held: HashSet<i64> = files.iter().map(|&(f, _)| f).collect();
        files.extend(wanted.iter().filter(|f| !held.contains(f)).map(|&f| (f, 0)));
        files.sort_unstable();
        files.dedup_by_key(|&mut (f, _)| f);
        let mut spans: Vec<(i64, i64)> = Vec::new();
        // The open span, and the rows of files not wanted since its last wanted file.
        let mut open: Option<(i64, i64)> = None;
        let mut gap = 0usize;
        for (file, rows) in files {
            if wanted.contains(&file) {
                open = match open {
                    Some((lo, _)) if gap <= SPAN_GAP_MAX_ROWS => Some((lo, file)),
                    Some(done) => {
                        spans.push(done);
                        Some((file, file))
                    }
                    None => Some((file, file)),
                };
                gap = 0;
            } else if open.is_some() {
                gap = gap.saturating_add(rows);
            }
        }
        spans.extend(open);
        FileSpans { spans, wanted }
    }

    /// The `wanted` files among the files holding a name's usage rows, as its usage
    /// counts give them ([`FileSpans::among`]).
    pub fn among_uses(wanted: &[i64], uses: &[NameUses]) -> FileSpans {
        FileSpans::among(wanted, uses.iter().map(|u| (u.file_id, u.rows as usize)))
    }

    /// The inclusive ranges of file ids to scan, in id order.
    pub fn spans(&self) -> &[(i64, i64)] {
        &self.spans
    }

    /// Whether a row read in a span belongs to a wanted file.
    pub fn keeps(&self, file_id: i64) -> bool {
        self.wanted.contains(&file_id)
    }

    /// Whether no file is wanted.
    pub fn is_empty(&self) -> bool {
        self.wanted.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_in_id_order_are_one_span_and_a_span_bridges_only_a_few_rows() {
        // Files 1..=9 hold the name; 4 holds 3 rows, 7 holds 50.
        let holding = [
            (1, 2),
            (2, 1),
            (3, 9),
            (4, 3),
            (5, 1),
            (6, 1),
            (7, 50),
            (8, 1),
            (9, 1),
        ];
        let spans = FileSpans::among(&[3, 2, 5, 6, 8], holding);
        // 4's 3 rows are bridged; 7's 50 are not.
        assert_eq!(spans.spans(), [(2, 6), (8, 8)]);
        assert!(spans.keeps(5) && !spans.keeps(4) && !spans.keeps(7));
        // Files not holding the name do not split a span: the index has no rows there.
        let sparse = FileSpans::among(&[10, 20, 30], [(10, 5), (20, 5), (30, 5)]);
        assert_eq!(sparse.spans(), [(10, 30)]);
        // Not wanted files after the last wanted one are not read.
        let tail = FileSpans::among(&[1], [(1, 1), (2, 1), (3, 1)]);
        assert_eq!(tail.spans(), [(1, 1)]);
        // A wanted file the list does not hold is still read.
        let missing = FileSpans::among(&[1, 40], [(1, 1), (7, 100)]);
        assert_eq!(missing.spans(), [(1, 1), (40, 40)]);
        // The rows of the wanted files only, whatever the order given.
        assert_eq!(FileSpans::each(&[5, 3, 5]).spans(), [(3, 3), (5, 5)]);
        assert!(FileSpans::among(&[], holding).spans().is_empty());
    }
}
