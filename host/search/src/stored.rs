//! Indexes kept in directories across runs, each valid for one stamp.
//!
//! A dependency crate's sources never change, so its index is built once and kept on
//! disk; a later process maps it instead of building it again. The caller's stamp names
//! what the index was built from (for a crate: its index run in the database). An index
//! with another stamp, a half-written one, or one written with another schema is built
//! again.
//!
//! An index is built in `<dir>.partial`, its stamp is written last, and the directory is
//! then renamed to `<dir>`: a crash leaves `<dir>` whole or absent, never half-written.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::{SearchError, SymbolIndex, SymbolIndexBuilder};

/// The file in an index directory naming what it was built from.
pub const STAMP_FILE: &str = "scryer-stamp";

/// What is indexed, in a way the schema check cannot see: raise it when [`crate::tokens`]
/// or [`SymbolIndexBuilder::add`] change the terms a symbol gets, so kept indexes are
/// built again.
const FORMAT: u32 = 1;

/// How [`open_or_build`] or [`keep`] found the index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The kept index was built for the stamp (and, by [`open_or_build`], is now mapped).
    Kept,
    /// It was (re)built by the caller's fill.
    Built,
}

fn stamp_text(stamp: &str) -> String {
    format!("scryer-search format {FORMAT}\n{stamp}\n")
}

fn partial_dir(dir: &Path) -> PathBuf {
    let mut name = dir.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    dir.with_file_name(name)
}

fn io(what: &str, path: &Path, e: std::io::Error) -> SearchError {
    SearchError::Index(format!("{what} {}: {e}", path.display()))
}

fn stamped(dir: &Path, wanted: &str) -> bool {
    fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|kept| kept == wanted)
}

/// The index kept in `dir` if it was built for `stamp`; otherwise one built now by `fill`
/// (which adds the documents), kept in `dir` for the next call.
pub fn open_or_build<E: From<SearchError>>(
    dir: &Path,
    stamp: &str,
    fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<(), E>,
) -> Result<(SymbolIndex, Outcome), E> {
    open_or_build_on(dir, stamp, 1, fill)
}

/// [`open_or_build`], an index built by `threads` worker threads
/// ([`SymbolIndexBuilder::in_directory_on`]).
pub fn open_or_build_on<E: From<SearchError>>(
    dir: &Path,
    stamp: &str,
    threads: usize,
    fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<(), E>,
) -> Result<(SymbolIndex, Outcome), E> {
    let wanted = stamp_text(stamp);
    if stamped(dir, &wanted)
        && let Ok(index) = SymbolIndex::open(dir)
    {
        return Ok((index, Outcome::Kept));
    }
    build_in_place(dir, &wanted, threads, fill)?;
    Ok((SymbolIndex::open(dir)?, Outcome::Built))
}

/// The index kept in `dir` if it was built for `stamp`, mapped; `None` otherwise (absent,
/// another stamp, or damaged).
pub fn open_kept(dir: &Path, stamp: &str) -> Option<SymbolIndex> {
    stamped(dir, &stamp_text(stamp))
        .then(|| SymbolIndex::open(dir).ok())
        .flatten()
}

/// Makes sure `dir` keeps an index built for `stamp`, building it with `fill` if not,
/// without opening it. A kept index whose files are damaged is found out, and built
/// again, by the [`open_or_build`] that first opens it.
pub fn keep<E: From<SearchError>>(
    dir: &Path,
    stamp: &str,
    fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<(), E>,
) -> Result<Outcome, E> {
    let wanted = stamp_text(stamp);
    if stamped(dir, &wanted) {
        return Ok(Outcome::Kept);
    }
    build_in_place(dir, &wanted, 1, fill)?;
    Ok(Outcome::Built)
}

/// Builds the index in `<dir>.partial` (on `threads` workers), stamps it `wanted` and moves it to `dir`.
fn build_in_place<E: From<SearchError>>(
    dir: &Path,
    wanted: &str,
    threads: usize,
    fill: impl FnOnce(&mut SymbolIndexBuilder) -> Result<(), E>,
) -> Result<(), E> {
    let partial = partial_dir(dir);
    if partial.exists() {
        fs::remove_dir_all(&partial).map_err(|e| io("removing", &partial, e))?;
    }
    fs::create_dir_all(&partial).map_err(|e| io("creating", &partial, e))?;
    let mut builder = SymbolIndexBuilder::in_directory_on(&partial, threads)?;
    fill(&mut builder)?;
    builder.close()?;
    let stamp_path = partial.join(STAMP_FILE);
    let mut file = fs::File::create(&stamp_path).map_err(|e| io("writing", &stamp_path, e))?;
    file.write_all(wanted.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| io("writing", &stamp_path, e))?;
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| io("removing", dir, e))?;
    }
    fs::rename(&partial, dir).map_err(|e| io("moving the new index to", dir, e))?;
    if let Some(parent) = dir.parent() {
        // The rename itself reaches the disk with its directory (best effort: a lost
        // rename only means building the index again).
        let _ = fs::File::open(parent).and_then(|d| d.sync_all());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SearchDoc;

    fn doc(key: u64, name: &str) -> SearchDoc {
        SearchDoc {
            key,
            name: name.into(),
            qualified_name: format!("demo::{name}"),
            signature: format!("fn {name}()"),
            kind: "function".into(),
            ..SearchDoc::default()
        }
    }

    fn fill_with(
        names: &[&str],
        calls: &mut u32,
    ) -> impl FnOnce(&mut SymbolIndexBuilder) -> Result<(), SearchError> {
        *calls += 1;
        let docs: Vec<SearchDoc> = names
            .iter()
            .enumerate()
            .map(|(i, n)| doc(i as u64 + 1, n))
            .collect();
        move |b| docs.into_iter().try_for_each(|d| b.add(d))
    }

    fn top(index: &SymbolIndex, query: &str) -> Option<u64> {
        let page = index.search(query, None, 0, 1).unwrap();
        page.hits.first().map(|h| h.key)
    }

    #[test]
    fn a_kept_index_is_opened_for_its_stamp_and_built_again_for_another() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("serde-1.0.0-7");
        let mut calls = 0;
        let (built, how) =
            open_or_build(&dir, "run 1", fill_with(&["decode", "encode"], &mut calls)).unwrap();
        assert_eq!(
            (how, built.len(), top(&built, "encode")),
            (Outcome::Built, 2, Some(2))
        );
        drop(built);

        // Same stamp: mapped again, the fill is not run.
        let (opened, how) = open_or_build(&dir, "run 1", |_| -> Result<(), SearchError> {
            panic!("a kept index with its stamp is not built again")
        })
        .unwrap();
        assert_eq!(
            (how, opened.len(), top(&opened, "decode")),
            (Outcome::Kept, 2, Some(1))
        );

        // Another stamp (the crate was indexed again): built from the new rows.
        let (rebuilt, how) =
            open_or_build(&dir, "run 2", fill_with(&["serialize"], &mut calls)).unwrap();
        assert_eq!((how, rebuilt.len()), (Outcome::Built, 1));
        assert_eq!(top(&rebuilt, "decode"), None);
        assert_eq!(calls, 2);
        assert!(!partial_dir(&dir).exists());
    }

    #[test]
    fn a_half_written_or_unreadable_index_is_built_again() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("regex-1.0.0-3");
        let mut calls = 0;
        // A build that died: its partial directory is left, no index in place.
        fs::create_dir_all(partial_dir(&dir)).unwrap();
        fs::write(partial_dir(&dir).join("meta.json"), "{ torn").unwrap();
        let (ix, how) = open_or_build(&dir, "run 1", fill_with(&["compile"], &mut calls)).unwrap();
        assert_eq!((how, top(&ix, "compile")), (Outcome::Built, Some(1)));
        drop(ix);

        // Its stamp is right but the index files are damaged.
        fs::write(dir.join("meta.json"), "{ torn").unwrap();
        let (ix, how) = open_or_build(&dir, "run 1", fill_with(&["compile"], &mut calls)).unwrap();
        assert_eq!((how, top(&ix, "compile")), (Outcome::Built, Some(1)));
        drop(ix);

        // An index without a stamp (written by something else) is not trusted either.
        fs::remove_file(dir.join(STAMP_FILE)).unwrap();
        let (_, how) = open_or_build(&dir, "run 1", fill_with(&["compile"], &mut calls)).unwrap();
        assert_eq!(how, Outcome::Built);
        assert_eq!(calls, 3);
    }

    #[test]
    fn keeping_builds_an_index_once_and_a_search_opens_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("bytes-1.0.0-5");
        let mut calls = 0;
        let how = keep(&dir, "run 1", fill_with(&["advance"], &mut calls)).unwrap();
        assert_eq!(how, Outcome::Built);
        let how = keep(&dir, "run 1", |_| -> Result<(), SearchError> {
            panic!("a kept index is not built again")
        })
        .unwrap();
        assert_eq!(how, Outcome::Kept);
        let (ix, how) = open_or_build(&dir, "run 1", |_| -> Result<(), SearchError> {
            panic!("what keep built is opened")
        })
        .unwrap();
        assert_eq!((how, top(&ix, "advance")), (Outcome::Kept, Some(1)));
        // Another run of the crate: kept again, from the new rows.
        assert_eq!(
            keep(&dir, "run 2", fill_with(&["chunk"], &mut calls)).unwrap(),
            Outcome::Built
        );
        assert_eq!(calls, 2);
    }

    #[test]
    fn a_failed_fill_leaves_the_kept_index_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("log-0.4.0-9");
        let mut calls = 0;
        drop(open_or_build(&dir, "run 1", fill_with(&["warn"], &mut calls)).unwrap());
        let failed = open_or_build(&dir, "run 2", |_| -> Result<(), SearchError> {
            Err(SearchError::Index("database gone".into()))
        });
        assert!(failed.is_err());
        let (ix, how) = open_or_build(&dir, "run 1", |_| -> Result<(), SearchError> {
            panic!("the old index is still whole")
        })
        .unwrap();
        assert_eq!((how, top(&ix, "warn")), (Outcome::Kept, Some(1)));
    }
}
