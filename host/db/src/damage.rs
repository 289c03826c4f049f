//! A damaged database is kept aside, never deleted, and a fresh one takes its place
//! (ADR 0025): a file that does not open, fails its integrity check, or carries a
//! schema newer than this build. The index is rebuilt from the sources; the kept file
//! and a note saying why stay beside the database, and `scryer doctor` reports them.
//!
//! The check reads every page (`PRAGMA quick_check`: ~0.1 s for tokio's 19 MB, seconds
//! for a monorepo's gigabyte), so it is skipped when the file is exactly as a clean exit
//! left it: [`seal_clean_exit`] records the checkpointed file's size and modification
//! time, and the next open compares them (and finds no write-ahead log). A crash leaves
//! no seal; any write to the file since, a zeroed page included, changes its time.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::{Db, IN_USE, SCHEMA_VERSION};

/// Marks the error of a database whose schema is newer than this build.
pub(crate) const NEWER_SCHEMA: &str = "was written by a newer scryer (schema version";

/// What was set aside, and why.
#[derive(Debug, Clone)]
pub struct SetAside {
    /// The damaged database, moved here (its `-wal` beside it with the same stem).
    pub kept: PathBuf,
    /// Why it was set aside, one line.
    pub reason: String,
}

impl SetAside {
    /// The message the server logs and doctor repeats.
    pub fn message(&self, db: &Path) -> String {
        format!(
            "the database {} {}; it was kept at {} (never deleted) and a fresh index is being built from the sources",
            db.display(),
            self.reason,
            self.kept.display()
        )
    }
}

/// The suffix of a kept database's note file.
pub const NOTE_SUFFIX: &str = ".why";

impl Db {
    /// [`Db::open`], except that a damaged file (see the module) is moved aside with a
    /// note, and a fresh database is opened in its place.
    pub async fn open_or_set_aside(path: &Path) -> Result<(Db, Option<SetAside>)> {
        // Read and removed before the open writes anything: a seal speaks of one exit.
        let sealed = take_seal(path);
        let reason = match Db::open(path).await {
            Ok(db) if sealed => return Ok((db, None)),
            Ok(db) => match db.integrity_problem().await {
                None => return Ok((db, None)),
                Some(problem) => {
                    drop(db);
                    format!("failed its integrity check ({problem})")
                }
            },
            Err(e) => {
                let text = format!("{e:#}");
                if text.contains(IN_USE) || !path.exists() || !damage_kind(&text) {
                    return Err(e);
                }
                if text.contains(NEWER_SCHEMA) {
                    one_line(&text)
                } else {
                    format!("does not open ({})", one_line(&text))
                }
            }
        };
        let aside = set_aside(path, &reason)?;
        let db = Db::open(path)
            .await
            .context("opening a fresh database after setting the damaged one aside")?;
        Ok((db, Some(aside)))
    }

    /// Stamps the file with schema version `v`, as a build of that version would (the
    /// tests of the set-aside path make a "newer" file with it).
    #[doc(hidden)]
    pub async fn stamp_schema_version(&self, v: i64) -> Result<()> {
        let conn = self.connect().await?;
        conn.execute(
            "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
            (v.to_string(),),
        )
        .await?;
        Ok(())
    }

    /// Folds the write-ahead log into the database file and empties it (`PRAGMA
    /// wal_checkpoint(TRUNCATE)`): after a clean exit the file alone is the database.
    pub async fn checkpoint(&self) -> Result<()> {
        let conn = self.connect().await?;
        let mut rows = conn.query("PRAGMA wal_checkpoint(TRUNCATE)", ()).await?;
        while rows.next().await?.is_some() {}
        Ok(())
    }

    /// `PRAGMA integrity_check` in full: every complaint (empty when the file is sound).
    pub async fn integrity_check(&self) -> Result<Vec<String>> {
        let conn = self.connect().await?;
        let mut rows = conn.query("PRAGMA integrity_check", ()).await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            if let Some(v) = crate::text(crate::col(&row, 0)?).filter(|v| v != "ok") {
                out.push(v);
            }
        }
        Ok(out)
    }

    /// `PRAGMA quick_check`'s first complaint, if any (a check that cannot run counts).
    async fn integrity_problem(&self) -> Option<String> {
        let outcome: Result<Option<String>> = async {
            let conn = self.connect().await?;
            let mut rows = conn.query("PRAGMA quick_check", ()).await?;
            let first = match rows.next().await? {
                Some(row) => crate::text(crate::col(&row, 0)?),
                None => None,
            };
            Ok(first.filter(|v| v != "ok"))
        }
        .await;
        match outcome {
            Ok(problem) => problem.map(|p| one_line(&p)),
            Err(e) => Some(one_line(&format!("{e:#}"))),
        }
    }
}

/// The suffix of the file [`seal_clean_exit`] writes beside the database.
const SEAL_SUFFIX: &str = ".clean";

/// A database file's size and modification time, as a seal records them.
fn fingerprint(db: &Path) -> Option<String> {
    let meta = std::fs::metadata(db).ok()?;
    let mtime = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{} {}", meta.len(), mtime.as_nanos()))
}

fn seal_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(SEAL_SUFFIX);
    PathBuf::from(name)
}

/// Whether a write-ahead log with frames stands beside `db`.
fn has_wal(db: &Path) -> bool {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal)).is_ok_and(|m| m.len() > 0)
}

/// Records that `db` was left whole by a clean exit, after its log was folded into it
/// ([`Db::checkpoint`]): the next [`Db::open_or_set_aside`] then skips the page check
/// while the file is unchanged. Best effort: without a seal the next start checks.
pub fn seal_clean_exit(db: &Path) {
    if has_wal(db) {
        return;
    }
    if let Some(print) = fingerprint(db) {
        let _ = std::fs::write(seal_path(db), print);
    }
}

/// Whether `db` is as its last clean exit sealed it; the seal is removed either way.
fn take_seal(db: &Path) -> bool {
    let seal = seal_path(db);
    let Ok(recorded) = std::fs::read_to_string(&seal) else {
        return false;
    };
    let _ = std::fs::remove_file(&seal);
    !has_wal(db) && fingerprint(db).is_some_and(|now| now == recorded.trim())
}

/// Whether an open error means the file's contents are damaged (rather than, say, a
/// permission or a path problem, which setting the file aside would not fix).
fn damage_kind(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    [
        "corrupt",
        "malformed",
        "not a database",
        "newer scryer",
        "short read",
        "invalid page",
        "database header",
        "applying schema",
        "page size",
        "wal",
    ]
    .iter()
    .any(|k| t.contains(k))
}

fn one_line(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 300 {
        format!("{}…", line.chars().take(300).collect::<String>())
    } else {
        line
    }
}

/// Moves `db` (and its `-wal` and `-shm`) to `<db>.damaged-<unix seconds>` and writes
/// the reason beside it.
fn set_aside(db: &Path, reason: &str) -> Result<SetAside> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut kept = PathBuf::from(format!("{}.damaged-{stamp}", db.display()));
    let mut n = 1;
    while kept.exists() {
        kept = PathBuf::from(format!("{}.damaged-{stamp}-{n}", db.display()));
        n += 1;
    }
    std::fs::rename(db, &kept)
        .with_context(|| format!("moving the damaged {} aside", db.display()))?;
    for side in ["-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{side}", db.display()));
        if from.exists() {
            let to = PathBuf::from(format!("{}{side}", kept.display()));
            std::fs::rename(&from, &to)
                .with_context(|| format!("moving {} aside", from.display()))?;
        }
    }
    let note = format!(
        "{reason}\nset aside at unix time {stamp}; this build reads schema version {SCHEMA_VERSION}\n"
    );
    std::fs::write(format!("{}{NOTE_SUFFIX}", kept.display()), note)
        .with_context(|| format!("writing the note beside {}", kept.display()))?;
    Ok(SetAside {
        kept,
        reason: reason.to_string(),
    })
}

/// The databases kept aside beside `db`, each with its note's first line.
pub fn kept_aside(db: &Path) -> Vec<(PathBuf, String)> {
    let (Some(dir), Some(name)) = (db.parent(), db.file_name()) else {
        return Vec::new();
    };
    let prefix = format!("{}.damaged-", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, String)> = entries
        .flatten()
        .filter_map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let note = file.strip_suffix(NOTE_SUFFIX)?;
            if !note.starts_with(&prefix) {
                return None;
            }
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let why = text.lines().next().unwrap_or("").to_string();
            Some((dir.join(note), why))
        })
        .collect();
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn fresh_with_rows(path: &Path) {
        let db = Db::open(path).await.unwrap();
        db.register_project("/tmp/scryer-damage-demo", None)
            .await
            .unwrap();
    }

    async fn reopen(path: &Path) -> (Db, Option<SetAside>) {
        Db::open_or_set_aside(path).await.unwrap()
    }

    #[tokio::test]
    async fn a_sound_database_is_opened_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        fresh_with_rows(&path).await;
        let (db, aside) = reopen(&path).await;
        assert!(aside.is_none());
        assert_eq!(db.projects().await.unwrap().len(), 1);
        assert!(kept_aside(&path).is_empty());
    }

    /// Pages zeroed inside a table's b-tree (not the schema's first page) are found by
    /// the start check, and the file is kept aside.
    #[tokio::test]
    async fn pages_zeroed_inside_a_table_are_found_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        filled_and_checkpointed(&path).await;
        zero_the_middle(&path);
        let (db, aside) = reopen(&path).await;
        let aside = aside.expect("the damage is found");
        assert!(aside.kept.exists());
        assert!(db.projects().await.unwrap().is_empty());
        assert_eq!(kept_aside(&path).len(), 1);
    }

    /// A file of 3,000 rows (over 200 pages), its log folded in and the database closed.
    async fn filled_and_checkpointed(path: &Path) {
        let db = Db::open(path).await.unwrap();
        let conn = db.connect().await.unwrap();
        conn.execute("CREATE TABLE filler(id INTEGER PRIMARY KEY, body TEXT)", ())
            .await
            .unwrap();
        for i in 0..3_000 {
            conn.execute(
                "INSERT INTO filler(id, body) VALUES (?1, ?2)",
                (i, "x".repeat(400)),
            )
            .await
            .unwrap();
        }
        db.checkpoint().await.unwrap();
        let len = std::fs::metadata(path).unwrap().len();
        assert!(len > 200 * 4096, "{len}");
    }

    /// Zeroes eight pages in the middle of the file, inside the filler table's b-tree.
    fn zero_the_middle(path: &Path) {
        use std::io::{Seek, SeekFrom, Write};
        let len = std::fs::metadata(path).unwrap().len();
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        f.seek(SeekFrom::Start(len / 2)).unwrap();
        f.write_all(&vec![0u8; 8 * 4096]).unwrap();
    }

    /// [`filled_and_checkpointed`], sealed as a clean exit leaves it, then zeroed in the
    /// middle; `keep_time` puts the file's old modification time back.
    async fn sealed_then_zeroed(path: &Path, keep_time: bool) {
        filled_and_checkpointed(path).await;
        seal_clean_exit(path);
        assert!(seal_path(path).exists(), "sealed");
        let modified = std::fs::metadata(path).unwrap().modified().unwrap();
        zero_the_middle(path);
        if keep_time {
            let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            f.set_modified(modified).unwrap();
        }
    }

    /// The seal is what skips the check: a file changed behind its back with its time
    /// put back is not checked (so the seal is read), one changed plainly is.
    #[tokio::test]
    async fn a_sealed_file_skips_the_check_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let forged = dir.path().join("forged.db");
        sealed_then_zeroed(&forged, true).await;
        let (_db, aside) = reopen(&forged).await;
        assert!(aside.is_none(), "the seal matched, so no page was read");
        assert!(!seal_path(&forged).exists(), "a seal speaks of one exit");

        let plain = dir.path().join("plain.db");
        sealed_then_zeroed(&plain, false).await;
        let (_db, aside) = reopen(&plain).await;
        assert!(
            aside
                .expect("changed since the seal: checked")
                .kept
                .exists()
        );
    }

    #[tokio::test]
    async fn a_newer_schema_is_kept_aside_and_a_fresh_database_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        fresh_with_rows(&path).await;
        Db::open(&path)
            .await
            .unwrap()
            .stamp_schema_version(999)
            .await
            .unwrap();
        let (db, aside) = reopen(&path).await;
        let aside = aside.expect("set aside");
        assert!(aside.reason.contains("newer scryer"), "{}", aside.reason);
        assert!(aside.kept.exists());
        assert!(db.projects().await.unwrap().is_empty());
        let kept = kept_aside(&path);
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].1.contains("999"), "{kept:?}");
    }
}
