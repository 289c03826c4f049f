//! Dependency crates: the crates each project locks, and the shared index of their
//! sources (one entry per crate name and version, reused by every project).
//!
//! A crate's sources are indexed as a project row of their own (slug `deps/<name>@<version>`,
//! root the registry source directory), so the ordinary `source_file` / `symbol` /
//! `ref_site` tables hold them. Those rows are not user projects: [`Db::projects`] leaves
//! them out ([`NOT_A_DEPENDENCY`]).

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use turso::{Connection, Value};

use crate::{
    Db, PROJECT_COLUMNS, ProjectRow, SYMBOL_COLUMNS, SymbolRow, col, in_transaction, int,
    now_rfc3339, opt_text, symbol_from, text,
};

/// This area's tables, applied at open after the core schema.
pub(crate) const SCHEMA: &[&str] = &[
    // One row per crate name and version, shared by every project that locks it.
    // `index_project_id` is the project row holding its index (set when indexing starts);
    // `indexed_at` is set only when a run over it finished, so a half-written index is
    // never taken for a complete one. `source_root` is NULL when the sources were not
    // found; `note` says why a crate is not indexed.
    "CREATE TABLE IF NOT EXISTS dependency_crate (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        version TEXT NOT NULL,
        source_root TEXT,
        index_project_id INTEGER,
        indexed_at TEXT,
        note TEXT
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS dependency_crate_by_name ON dependency_crate (name, version)",
    "CREATE INDEX IF NOT EXISTS dependency_crate_by_project ON dependency_crate (index_project_id)",
    // What each project locks.
    "CREATE TABLE IF NOT EXISTS project_dependency (
        project_id INTEGER NOT NULL,
        crate_id INTEGER NOT NULL
    )",
    "CREATE UNIQUE INDEX IF NOT EXISTS project_dependency_by_pair ON project_dependency (project_id, crate_id)",
    // Crates whose index run failed: left out of the pending ones until an index run of a
    // project that locks them asks for a retry. A table of its own rather than a column,
    // so databases created before it get it from `CREATE TABLE IF NOT EXISTS`.
    "CREATE TABLE IF NOT EXISTS dependency_failure (
        crate_id INTEGER PRIMARY KEY,
        failed_at TEXT NOT NULL
    )",
];

/// Statements (project id as `?1`) removing a deleted project's rows from this area's
/// tables; run by `Db::delete_project`. Only what the project locks goes: the crates'
/// indexes are shared with other projects and stay cached.
pub(crate) const PROJECT_DELETIONS: &[&str] =
    &["DELETE FROM project_dependency WHERE project_id = ?1"];

/// Whether `e` comes from another writer holding the database (`database is locked`):
/// worth trying again later, unlike other failures.
pub fn is_busy(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<turso::Error>(),
            Some(turso::Error::Busy(_) | turso::Error::BusySnapshot(_))
        )
    })
}

/// SQL condition on `project.id` that keeps user projects and drops the rows holding a
/// dependency crate's index. (`IS NOT NULL` matters: `NOT IN` a set holding NULL is
/// never true.)
pub(crate) const NOT_A_DEPENDENCY: &str =
    "id NOT IN (SELECT index_project_id FROM dependency_crate WHERE index_project_id IS NOT NULL)";

/// The note of a crate whose index run failed: what failed, and what tries it again.
pub fn failure_note(error: &str) -> String {
    format!(
        "indexing failed: {error}. The next index_workspace of a project that locks it retries it"
    )
}

/// A locked crate and the state of its shared index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DependencyIndex {
    pub crate_name: String,
    pub version: String,
    /// The project row holding the crate's index; `Some` only once an index run over it
    /// finished (a crate being indexed, or never indexed, has `None`).
    pub index_project_id: Option<i64>,
    /// When that index run finished (RFC 3339, whole seconds), with `index_project_id`:
    /// together they name the run, and so what an index derived from it was built from.
    pub indexed_at: Option<String>,
    /// The registry source directory, when the sources were found.
    pub source_root: Option<String>,
    /// Why the crate is not indexed, when it is not.
    pub note: Option<String>,
}

/// One crate a project locks, as found on disk, to be recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DependencyRecord {
    pub name: String,
    pub version: String,
    /// The registry source directory; `None` when the sources are not on disk.
    pub source_root: Option<String>,
    /// Stored as the crate's note while it is not indexed.
    pub note: Option<String>,
}

/// A crate whose sources were found, whose index is not complete yet, and whose last
/// run did not fail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingDependency {
    pub crate_id: i64,
    pub name: String,
    pub version: String,
    pub source_root: String,
}

/// What [`Db::record_project_dependencies`] changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordOutcome {
    /// Crates seen for the first time (by any project).
    pub new_crates: usize,
    /// Whether the project's set of locked crates changed.
    pub links_changed: bool,
}

/// A crate row as [`Db::record_project_dependencies`] reads it.
struct Known {
    source_root: Option<String>,
    note: Option<String>,
    indexed: bool,
    failed: bool,
}

impl Known {
    /// Whether recording `c` changes this row: an unindexed crate follows what was found
    /// on disk, except that a failed one keeps its failure note while its sources stay put.
    fn needs_update(&self, c: &DependencyRecord) -> bool {
        if self.indexed {
            return false;
        }
        if self.failed {
            return self.source_root != c.source_root;
        }
        self.source_root != c.source_root || self.note != c.note
    }
}

const DEPENDENCY_COLUMNS: &str = "d.name, d.version, \
     CASE WHEN d.indexed_at IS NOT NULL THEN d.index_project_id END, d.source_root, d.note, \
     d.indexed_at";

fn dependency_from(row: &turso::Row) -> Result<DependencyIndex> {
    Ok(DependencyIndex {
        crate_name: text(col(row, 0)?).unwrap_or_default(),
        version: text(col(row, 1)?).unwrap_or_default(),
        index_project_id: int(col(row, 2)?),
        source_root: text(col(row, 3)?),
        note: text(col(row, 4)?),
        indexed_at: text(col(row, 5)?),
    })
}

async fn collect_dependencies(mut rows: turso::Rows) -> Result<Vec<DependencyIndex>> {
    let mut out = Vec::new();
    while let Some(row) = rows.next().await? {
        out.push(dependency_from(&row)?);
    }
    Ok(out)
}

impl Db {
    /// The crates `project_id` locks, by name then version.
    pub async fn dependency_indexes(&self, project_id: i64) -> Result<Vec<DependencyIndex>> {
        let conn = self.reader().await?;
        let rows = conn
            .query_cached(
                format!(
                    "SELECT {DEPENDENCY_COLUMNS} FROM project_dependency pd \
                     JOIN dependency_crate d ON d.id = pd.crate_id \
                     WHERE pd.project_id = ?1 ORDER BY d.name, d.version"
                ),
                (project_id,),
            )
            .await?;
        collect_dependencies(rows).await
    }

    /// Every crate in the shared dependency index (locked by any project, or once
    /// locked), by name then version.
    pub async fn all_dependency_indexes(&self) -> Result<Vec<DependencyIndex>> {
        let conn = self.reader().await?;
        let rows = conn
            .query_cached(
                format!(
                    "SELECT {DEPENDENCY_COLUMNS} FROM dependency_crate d ORDER BY d.name, d.version"
                ),
                (),
            )
            .await?;
        collect_dependencies(rows).await
    }

    /// One crate by its row id (a [`PendingDependency::crate_id`]), `None` if it is gone.
    pub async fn dependency_index(&self, crate_id: i64) -> Result<Option<DependencyIndex>> {
        let conn = self.reader().await?;
        let rows = conn
            .query_cached(
                format!("SELECT {DEPENDENCY_COLUMNS} FROM dependency_crate d WHERE d.id = ?1"),
                (crate_id,),
            )
            .await?;
        Ok(collect_dependencies(rows).await?.pop())
    }

    /// Records the crates `project_id` locks: new crates get a row (with their source
    /// directory, or a note saying why there is none), crates not indexed yet get their
    /// source directory and note refreshed (the sources may have been fetched since), and
    /// the project's set of locked crates becomes exactly `crates`. Indexed crates are
    /// left as they are: their index stays valid for that version. A failed crate keeps
    /// its failure note until [`Db::retry_failed_dependencies`], unless its sources moved
    /// (a new situation: the failure is forgotten). Writes nothing when nothing changed.
    pub async fn record_project_dependencies(
        &self,
        project_id: i64,
        crates: &[DependencyRecord],
    ) -> Result<RecordOutcome> {
        let conn = self.connect().await?;
        // Read first, outside any transaction: the common case (nothing changed) writes nothing.
        let mut known = std::collections::HashMap::new();
        {
            let mut rows = conn
                .query(
                    "SELECT d.id, d.name, d.version, d.source_root, d.note, d.indexed_at, f.crate_id \
                     FROM dependency_crate d LEFT JOIN dependency_failure f ON f.crate_id = d.id",
                    (),
                )
                .await?;
            while let Some(row) = rows.next().await? {
                let id = int(col(&row, 0)?).unwrap_or_default();
                let key = (
                    text(col(&row, 1)?).unwrap_or_default(),
                    text(col(&row, 2)?).unwrap_or_default(),
                );
                let state = Known {
                    source_root: text(col(&row, 3)?),
                    note: text(col(&row, 4)?),
                    indexed: text(col(&row, 5)?).is_some(),
                    failed: int(col(&row, 6)?).is_some(),
                };
                known.insert(key, (id, state));
            }
        }
        let linked: BTreeSet<i64> = {
            let mut rows = conn
                .query(
                    "SELECT crate_id FROM project_dependency WHERE project_id = ?1",
                    (project_id,),
                )
                .await?;
            let mut out = BTreeSet::new();
            while let Some(row) = rows.next().await? {
                out.extend(int(col(&row, 0)?));
            }
            out
        };
        let needs_write =
            crates
                .iter()
                .any(|c| match known.get(&(c.name.clone(), c.version.clone())) {
                    None => true,
                    Some((_, k)) => k.needs_update(c),
                });
        let wanted: Option<BTreeSet<i64>> = crates
            .iter()
            .map(|c| {
                known
                    .get(&(c.name.clone(), c.version.clone()))
                    .map(|(id, _)| *id)
            })
            .collect();
        if !needs_write && wanted.as_ref() == Some(&linked) {
            return Ok(RecordOutcome::default());
        }
        in_transaction(&conn, async |conn| {
            let mut outcome = RecordOutcome::default();
            let mut ids = BTreeSet::new();
            for c in crates {
                let id = match known.get(&(c.name.clone(), c.version.clone())) {
                    Some((id, k)) => {
                        if k.needs_update(c) {
                            conn.execute(
                                "UPDATE dependency_crate SET source_root = ?2, note = ?3 WHERE id = ?1",
                                (*id, opt_text(c.source_root.clone()), opt_text(c.note.clone())),
                            )
                            .await?;
                            if k.failed {
                                conn.execute(
                                    "DELETE FROM dependency_failure WHERE crate_id = ?1",
                                    (*id,),
                                )
                                .await?;
                            }
                        }
                        *id
                    }
                    None => {
                        conn.execute(
                            "INSERT INTO dependency_crate (name, version, source_root, note) VALUES (?1, ?2, ?3, ?4)",
                            (
                                c.name.as_str(),
                                c.version.as_str(),
                                opt_text(c.source_root.clone()),
                                opt_text(c.note.clone()),
                            ),
                        )
                        .await?;
                        outcome.new_crates += 1;
                        conn.last_insert_rowid()
                    }
                };
                ids.insert(id);
            }
            if ids != linked {
                conn.execute(
                    "DELETE FROM project_dependency WHERE project_id = ?1",
                    (project_id,),
                )
                .await?;
                let mut ins = conn
                    .prepare("INSERT INTO project_dependency (project_id, crate_id) VALUES (?1, ?2)")
                    .await?;
                for id in &ids {
                    ins.execute((project_id, *id)).await?;
                }
                outcome.links_changed = true;
            }
            Ok(outcome)
        })
        .await
    }

    /// Crates whose sources were found and whose index is not complete, by name then
    /// version; failed ones are left out until [`Db::retry_failed_dependencies`].
    /// `project_id` narrows them to the crates one project locks.
    pub async fn pending_dependencies(
        &self,
        project_id: Option<i64>,
    ) -> Result<Vec<PendingDependency>> {
        let conn = self.reader().await?;
        let sql = "SELECT d.id, d.name, d.version, d.source_root FROM dependency_crate d \
                   WHERE d.indexed_at IS NULL AND d.source_root IS NOT NULL \
                   AND d.id NOT IN (SELECT crate_id FROM dependency_failure)";
        let mut rows = match project_id {
            Some(p) => {
                conn.query_cached(
                    format!(
                        "{sql} AND d.id IN (SELECT crate_id FROM project_dependency WHERE project_id = ?1) \
                         ORDER BY d.name, d.version"
                    ),
                    (p,),
                )
                .await?
            }
            None => conn.query_cached(format!("{sql} ORDER BY d.name, d.version"), ()).await?,
        };
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(PendingDependency {
                crate_id: int(col(&row, 0)?).unwrap_or_default(),
                name: text(col(&row, 1)?).unwrap_or_default(),
                version: text(col(&row, 2)?).unwrap_or_default(),
                source_root: text(col(&row, 3)?).unwrap_or_default(),
            });
        }
        Ok(out)
    }

    /// The project row that holds a crate's index, created on first use (slug
    /// `deps/<name>@<version>`: a `/` never appears in a user project's slug, which is a
    /// directory name). Fails if the source directory is registered as a user project.
    pub async fn dependency_index_project(&self, crate_id: i64) -> Result<ProjectRow> {
        let conn = self.connect().await?;
        let mut rows = conn
            .query(
                "SELECT name, version, source_root, index_project_id FROM dependency_crate WHERE id = ?1",
                (crate_id,),
            )
            .await?;
        let row = rows
            .next()
            .await?
            .with_context(|| format!("no dependency crate with id {crate_id}"))?;
        let name = text(col(&row, 0)?).unwrap_or_default();
        let version = text(col(&row, 1)?).unwrap_or_default();
        let root = text(col(&row, 2)?)
            .with_context(|| format!("{name} {version}: its sources were not found"))?;
        let existing = int(col(&row, 3)?);
        drop(rows);
        if let Some(id) = existing
            && let Some(p) = self.project(id).await?
        {
            return Ok(p);
        }
        if let Some(owner) = self.project_with_root(&conn, &root).await? {
            anyhow::bail!(
                "{root} is registered as the project `{}`; its index is not shared as a dependency",
                owner.slug
            );
        }
        let slug = format!("deps/{name}@{version}");
        let crate_name = name.replace('-', "_");
        let id = in_transaction(&conn, async |conn| {
            conn.execute(
                "INSERT INTO project (slug, root, crate_name, registered_at) VALUES (?1, ?2, ?3, ?4)",
                (slug.as_str(), root.as_str(), crate_name.as_str(), now_rfc3339()),
            )
            .await?;
            let id = conn.last_insert_rowid();
            // In the same transaction, so the row is never seen as a user project.
            conn.execute(
                "UPDATE dependency_crate SET index_project_id = ?2 WHERE id = ?1",
                (crate_id, id),
            )
            .await?;
            Ok(id)
        })
        .await?;
        self.project(id)
            .await?
            .context("a dependency's index project vanished right after it was created")
    }

    async fn project_with_root(&self, conn: &Connection, root: &str) -> Result<Option<ProjectRow>> {
        let mut rows = conn
            .query(
                format!("SELECT {PROJECT_COLUMNS} FROM project WHERE root = ?1"),
                (root,),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some(self.project_from(&row)?)),
            None => Ok(None),
        }
    }

    /// Ends an index run over a crate: on success its index counts as complete (and its
    /// note is cleared); on failure the note says why ([`failure_note`]) and the crate is
    /// no longer pending, so no worker tries it again and again: the next index run of a
    /// project that locks it does ([`Db::retry_failed_dependencies`]).
    pub async fn finish_dependency_index(&self, crate_id: i64, error: Option<&str>) -> Result<()> {
        let conn = self.connect().await?;
        in_transaction(&conn, async |conn| {
            match error {
                None => {
                    conn.execute(
                        "UPDATE dependency_crate SET indexed_at = ?2, note = NULL WHERE id = ?1",
                        (crate_id, now_rfc3339()),
                    )
                    .await?;
                    conn.execute(
                        "DELETE FROM dependency_failure WHERE crate_id = ?1",
                        (crate_id,),
                    )
                    .await?;
                }
                Some(e) => {
                    conn.execute(
                        "UPDATE dependency_crate SET indexed_at = NULL, note = ?2 WHERE id = ?1",
                        (crate_id, failure_note(e)),
                    )
                    .await?;
                    conn.execute(
                        "INSERT INTO dependency_failure (crate_id, failed_at) VALUES (?1, ?2) \
                         ON CONFLICT(crate_id) DO UPDATE SET failed_at = excluded.failed_at",
                        (crate_id, now_rfc3339()),
                    )
                    .await?;
                }
            }
            Ok(())
        })
        .await
    }

    /// Makes the failed crates `project_id` locks pending again, with `note` (an index
    /// run of the project asks for another try). Returns how many there were.
    pub async fn retry_failed_dependencies(&self, project_id: i64, note: &str) -> Result<usize> {
        let conn = self.connect().await?;
        let mut rows = conn
            .query(
                "SELECT f.crate_id FROM dependency_failure f \
                 JOIN project_dependency pd ON pd.crate_id = f.crate_id WHERE pd.project_id = ?1",
                (project_id,),
            )
            .await?;
        let mut ids = Vec::new();
        while let Some(row) = rows.next().await? {
            ids.extend(int(col(&row, 0)?));
        }
        drop(rows);
        if ids.is_empty() {
            return Ok(0);
        }
        let conn = self.connect().await?;
        in_transaction(&conn, async |conn| {
            for &id in &ids {
                conn.execute("DELETE FROM dependency_failure WHERE crate_id = ?1", (id,))
                    .await?;
                conn.execute(
                    "UPDATE dependency_crate SET note = ?2 WHERE id = ?1 AND indexed_at IS NULL",
                    (id, note),
                )
                .await?;
            }
            Ok(())
        })
        .await?;
        Ok(ids.len())
    }

    /// The dependency crate whose index row is rooted at `root`, as `(name, version)`.
    pub(crate) async fn dependency_rooted_at(
        &self,
        root: &str,
    ) -> Result<Option<(String, String)>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT d.name, d.version FROM dependency_crate d \
                 JOIN project p ON p.id = d.index_project_id WHERE p.root = ?1",
                (root,),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some((
                text(col(&row, 0)?).unwrap_or_default(),
                text(col(&row, 1)?).unwrap_or_default(),
            ))),
            None => Ok(None),
        }
    }

    /// How many definitions each of `index_project_ids` holds (ids without any are left
    /// out). Counts symbols only, on the `(project_id, name)` index: a dependency's
    /// reference rows, many times more, are never counted.
    pub async fn symbol_counts(
        &self,
        index_project_ids: &[i64],
    ) -> Result<std::collections::HashMap<i64, u32>> {
        let conn = self.reader().await?;
        let mut stmt = conn
            .prepare("SELECT COUNT(*) FROM symbol WHERE project_id = ?1")
            .await?;
        let mut out = std::collections::HashMap::new();
        for &id in index_project_ids {
            let mut rows = stmt.query((id,)).await?;
            if let Some(row) = rows.next().await?
                && let Some(n) = int(col(&row, 0)?).filter(|n| *n > 0)
            {
                out.insert(id, n as u32);
            }
        }
        Ok(out)
    }

    /// Definitions named `name` in each of `index_project_ids`, paired with the id they
    /// come from, in the order of the ids, then by file and line. One lookup per project
    /// on the `(project_id, name)` index.
    pub async fn symbols_by_name_in(
        &self,
        index_project_ids: &[i64],
        name: &str,
    ) -> Result<Vec<(i64, SymbolRow)>> {
        let conn = self.reader().await?;
        let mut stmt = conn
            .prepare(format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbol s JOIN source_file f ON f.id = s.file_id \
                 WHERE s.project_id = ?1 AND s.name = ?2 ORDER BY f.path, s.start_line"
            ))
            .await?;
        let mut out = Vec::new();
        for &id in index_project_ids {
            let mut rows = stmt
                .query(vec![Value::Integer(id), Value::Text(name.to_string())])
                .await?;
            while let Some(row) = rows.next().await? {
                out.push((id, symbol_from(&row)?));
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str, version: &str, root: Option<&str>) -> DependencyRecord {
        DependencyRecord {
            name: name.into(),
            version: version.into(),
            source_root: root.map(str::to_string),
            note: if root.is_some() {
                Some("queued".into())
            } else {
                Some("missing".into())
            },
        }
    }

    /// Stores one file with one function in an index project. Raw SQL, so the test
    /// does not depend on the shape of `FileWrite`.
    async fn store_function(db: &Db, project_id: i64, name: &str) {
        let conn = db.connect().await.unwrap();
        conn.execute(
            "INSERT INTO source_file (project_id, path, content_hash, size, language, parse_errors, line_count) \
             VALUES (?1, 'src/lib.rs', 'h', 1, 'rust', 0, 3)",
            (project_id,),
        )
        .await
        .unwrap();
        let file_id = conn.last_insert_rowid();
        conn.execute(
            "INSERT INTO symbol (id, project_id, file_id, name, kind, qualified_name, signature, \
             start_line, end_line, name_line, name_column) VALUES (?6, ?1, ?2, ?3, 'function', ?4, ?5, 1, 1, 1, 8)",
            (
                project_id,
                file_id,
                name,
                format!("foo::{name}"),
                format!("pub fn {name}()"),
                crate::file_rows::range(file_id).unwrap().0,
            ),
        )
        .await
        .unwrap();
    }

    async fn open() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        (dir, db)
    }

    #[tokio::test]
    async fn locked_crates_are_shared_and_their_index_projects_are_not_user_projects() {
        let (_dir, db) = open().await;
        let a = db.register_project("/w/a", None).await.unwrap();
        let b = db.register_project("/w/b", None).await.unwrap();

        let out = db
            .record_project_dependencies(
                a.id,
                &[
                    record("foo", "1.2.3", Some("/reg/foo-1.2.3")),
                    record("gone", "0.1.0", None),
                ],
            )
            .await
            .unwrap();
        assert_eq!(
            out,
            RecordOutcome {
                new_crates: 2,
                links_changed: true
            }
        );
        // Recording the same set again writes nothing.
        let again = db
            .record_project_dependencies(
                a.id,
                &[
                    record("foo", "1.2.3", Some("/reg/foo-1.2.3")),
                    record("gone", "0.1.0", None),
                ],
            )
            .await
            .unwrap();
        assert_eq!(again, RecordOutcome::default());
        // A second project locking foo reuses its row.
        let out_b = db
            .record_project_dependencies(b.id, &[record("foo", "1.2.3", Some("/reg/foo-1.2.3"))])
            .await
            .unwrap();
        assert_eq!(
            out_b,
            RecordOutcome {
                new_crates: 0,
                links_changed: true
            }
        );
        assert_eq!(db.all_dependency_indexes().await.unwrap().len(), 2);

        let pending = db.pending_dependencies(Some(b.id)).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(
            (pending[0].name.as_str(), pending[0].source_root.as_str()),
            ("foo", "/reg/foo-1.2.3")
        );

        let index = db
            .dependency_index_project(pending[0].crate_id)
            .await
            .unwrap();
        assert_eq!(index.slug, "deps/foo@1.2.3");
        assert_eq!(index.root, "/reg/foo-1.2.3");
        // Asking again returns the same row.
        assert_eq!(
            db.dependency_index_project(pending[0].crate_id)
                .await
                .unwrap()
                .id,
            index.id
        );
        store_function(&db, index.id, "helper").await;

        // Not indexed until the run finishes.
        let listed = db.dependency_indexes(a.id).await.unwrap();
        assert_eq!(listed[0].crate_name, "foo");
        assert_eq!(listed[0].index_project_id, None);
        db.finish_dependency_index(pending[0].crate_id, None)
            .await
            .unwrap();
        let listed = db.dependency_indexes(a.id).await.unwrap();
        assert_eq!(
            listed,
            vec![
                DependencyIndex {
                    crate_name: "foo".into(),
                    version: "1.2.3".into(),
                    index_project_id: Some(index.id),
                    indexed_at: listed[0].indexed_at.clone(),
                    source_root: Some("/reg/foo-1.2.3".into()),
                    note: None,
                },
                DependencyIndex {
                    crate_name: "gone".into(),
                    version: "0.1.0".into(),
                    index_project_id: None,
                    indexed_at: None,
                    source_root: None,
                    note: Some("missing".into()),
                },
            ]
        );
        assert!(
            listed[0]
                .indexed_at
                .as_deref()
                .is_some_and(|t| t.ends_with('Z'))
        );
        assert_eq!(
            db.dependency_index(pending[0].crate_id)
                .await
                .unwrap()
                .as_ref(),
            Some(&listed[0])
        );
        assert_eq!(db.dependency_index(-1).await.unwrap(), None);
        assert!(db.pending_dependencies(None).await.unwrap().is_empty());

        // The index project is hidden from the user's project list and selectors.
        let slugs: Vec<String> = db
            .projects()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.slug)
            .collect();
        assert_eq!(slugs, vec!["a", "b"]);
        assert!(
            db.project_by_selector("deps/foo@1.2.3")
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            db.project_by_selector(&index.id.to_string())
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            db.project_by_selector("/reg/foo-1.2.3")
                .await
                .unwrap()
                .is_none()
        );

        let syms = db.all_symbols(index.id).await.unwrap();
        assert_eq!(syms.len(), 1);
        assert_eq!(syms[0].file_path, "src/lib.rs");
        let counts = db.symbol_counts(&[a.id, index.id]).await.unwrap();
        assert_eq!(counts.get(&index.id), Some(&1));
        assert_eq!(counts.get(&a.id), None);
        let hits = db
            .symbols_by_name_in(&[a.id, index.id], "helper")
            .await
            .unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].0, index.id);
        assert!(
            db.symbols_by_name_in(&[index.id], "nothing")
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[tokio::test]
    async fn unindexed_crates_pick_up_fetched_sources_and_a_project_drops_what_it_no_longer_locks()
    {
        let (_dir, db) = open().await;
        let a = db.register_project("/w/a", None).await.unwrap();
        db.record_project_dependencies(a.id, &[record("foo", "1.0.0", None)])
            .await
            .unwrap();
        assert!(db.pending_dependencies(None).await.unwrap().is_empty());
        // `cargo fetch` ran: the sources are there now.
        let out = db
            .record_project_dependencies(a.id, &[record("foo", "1.0.0", Some("/reg/foo-1.0.0"))])
            .await
            .unwrap();
        assert_eq!(out, RecordOutcome::default());
        let listed = db.dependency_indexes(a.id).await.unwrap();
        assert_eq!(listed[0].source_root.as_deref(), Some("/reg/foo-1.0.0"));
        assert_eq!(listed[0].note.as_deref(), Some("queued"));
        assert_eq!(db.pending_dependencies(Some(a.id)).await.unwrap().len(), 1);

        // A failed run leaves the crate unindexed with the reason.
        let id = db.pending_dependencies(None).await.unwrap()[0].crate_id;
        db.finish_dependency_index(id, Some("disk full"))
            .await
            .unwrap();
        let listed = db.dependency_indexes(a.id).await.unwrap();
        assert_eq!(
            listed[0].note.as_deref(),
            Some(failure_note("disk full").as_str())
        );
        assert_eq!(listed[0].index_project_id, None);
        // It is no longer pending: no worker tries it again and again.
        assert!(db.pending_dependencies(None).await.unwrap().is_empty());

        // Bumped to 1.1.0: the project locks only the new version; the old row stays cached.
        let out = db
            .record_project_dependencies(a.id, &[record("foo", "1.1.0", Some("/reg/foo-1.1.0"))])
            .await
            .unwrap();
        assert_eq!(
            out,
            RecordOutcome {
                new_crates: 1,
                links_changed: true
            }
        );
        let listed = db.dependency_indexes(a.id).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].version, "1.1.0");
        assert_eq!(db.all_dependency_indexes().await.unwrap().len(), 2);

        // Deleting the project forgets what it locked (its id may be given out again),
        // not the cached crates.
        db.delete_project(a.id).await.unwrap();
        assert!(db.dependency_indexes(a.id).await.unwrap().is_empty());
        assert_eq!(db.all_dependency_indexes().await.unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_busy_database_is_told_apart_from_other_failures() {
        let (_dir, db) = open().await;
        let holder = db.connect().await.unwrap();
        holder.execute("BEGIN IMMEDIATE", ()).await.unwrap();
        let other = db.connect().await.unwrap();
        let err = anyhow::Error::from(other.execute("BEGIN IMMEDIATE", ()).await.unwrap_err())
            .context("writing files");
        assert!(is_busy(&err), "{err:#}");
        assert!(!is_busy(&anyhow::anyhow!(
            "database is locked, said nobody"
        )));
        holder.execute("ROLLBACK", ()).await.unwrap();
    }

    #[tokio::test]
    async fn a_directory_registered_as_a_user_project_is_not_taken_over() {
        let (_dir, db) = open().await;
        let user = db.register_project("/reg/foo-1.0.0", None).await.unwrap();
        db.record_project_dependencies(user.id, &[record("foo", "1.0.0", Some("/reg/foo-1.0.0"))])
            .await
            .unwrap();
        let id = db.pending_dependencies(None).await.unwrap()[0].crate_id;
        let err = db
            .dependency_index_project(id)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("registered as the project `foo-1.0.0`"),
            "{err}"
        );
        assert_eq!(db.projects().await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_failed_crate_keeps_its_note_until_an_index_run_of_a_project_retries_it() {
        let (_dir, db) = open().await;
        let a = db.register_project("/w/a", None).await.unwrap();
        let b = db.register_project("/w/b", None).await.unwrap();
        let foo = record("foo", "1.0.0", Some("/reg/foo-1.0.0"));
        db.record_project_dependencies(a.id, std::slice::from_ref(&foo))
            .await
            .unwrap();
        let id = db.pending_dependencies(None).await.unwrap()[0].crate_id;
        db.finish_dependency_index(id, Some("database is locked"))
            .await
            .unwrap();
        let note = db.dependency_indexes(a.id).await.unwrap()[0].note.clone();
        let note = note.unwrap();
        assert!(
            note.starts_with("indexing failed: database is locked.")
                && note.contains("next index_workspace"),
            "{note}"
        );

        // Recording the same lockfile again (a re-check, another project locking it)
        // does not turn the failure back into "queued".
        db.record_project_dependencies(a.id, std::slice::from_ref(&foo))
            .await
            .unwrap();
        db.record_project_dependencies(b.id, std::slice::from_ref(&foo))
            .await
            .unwrap();
        assert_eq!(
            db.dependency_indexes(b.id).await.unwrap()[0]
                .note
                .as_deref(),
            Some(note.as_str())
        );
        assert!(db.pending_dependencies(None).await.unwrap().is_empty());

        // A project that does not lock it retries nothing.
        let c = db.register_project("/w/c", None).await.unwrap();
        assert_eq!(
            db.retry_failed_dependencies(c.id, "again").await.unwrap(),
            0
        );
        // An index run of a project that locks it does.
        assert_eq!(
            db.retry_failed_dependencies(b.id, "again").await.unwrap(),
            1
        );
        assert_eq!(
            db.dependency_indexes(a.id).await.unwrap()[0]
                .note
                .as_deref(),
            Some("again")
        );
        assert_eq!(db.pending_dependencies(Some(a.id)).await.unwrap().len(), 1);
        assert_eq!(
            db.retry_failed_dependencies(b.id, "again").await.unwrap(),
            0
        );

        // Failed again, then its sources move: the failure is forgotten.
        db.finish_dependency_index(id, Some("disk full"))
            .await
            .unwrap();
        db.record_project_dependencies(a.id, &[record("foo", "1.0.0", Some("/reg2/foo-1.0.0"))])
            .await
            .unwrap();
        let listed = db.dependency_indexes(a.id).await.unwrap();
        assert_eq!(listed[0].note.as_deref(), Some("queued"));
        assert_eq!(db.pending_dependencies(None).await.unwrap().len(), 1);

        // Success clears any failure.
        db.finish_dependency_index(id, Some("disk full"))
            .await
            .unwrap();
        db.finish_dependency_index(id, None).await.unwrap();
        assert_eq!(
            db.retry_failed_dependencies(a.id, "again").await.unwrap(),
            0
        );
        assert_eq!(db.dependency_indexes(a.id).await.unwrap()[0].note, None);
    }

    #[tokio::test]
    async fn registering_a_dependency_index_root_as_a_project_names_the_crate() {
        let (_dir, db) = open().await;
        let a = db.register_project("/w/a", None).await.unwrap();
        db.record_project_dependencies(a.id, &[record("foo", "1.0.0", Some("/reg/foo-1.0.0"))])
            .await
            .unwrap();
        let id = db.pending_dependencies(None).await.unwrap()[0].crate_id;
        db.dependency_index_project(id).await.unwrap();
        let err = db
            .register_project("/reg/foo-1.0.0", None)
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("/reg/foo-1.0.0 is indexed as the dependency crate foo 1.0.0"),
            "{err}"
        );
        assert!(!err.contains("UNIQUE"), "{err}");
        assert_eq!(db.projects().await.unwrap().len(), 1);
        // Other directories still register.
        db.register_project("/reg/bar-1.0.0", None).await.unwrap();
    }
}
