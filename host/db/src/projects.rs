//! The project registry (`project`): registering a root under a unique slug, finding a
//! project by slug, id or root, index runs starting and finishing, and forgetting a
//! project with everything stored for it.

use std::path::Path;

use anyhow::Result;

use crate::{Db, col, decisions, deps, in_transaction, int, now_rfc3339, opt_text, precise, text};

/// Statements (each taking the project id as `?1`) that remove a project's rows from
/// the tables areas keep beside the core ones.
fn deletions_for_project() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    out.extend(decisions::PROJECT_DELETIONS);
    out.extend(deps::PROJECT_DELETIONS);
    out.extend(precise::PROJECT_DELETIONS);
    out
}

/// A registered project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRow {
    pub id: i64,
    pub slug: String,
    /// Canonical absolute path.
    pub root: String,
    pub crate_name: Option<String>,
    pub indexed_at: Option<String>,
    /// False while an index run is writing (or was interrupted while writing).
    pub index_complete: bool,
    pub last_index_ms: Option<i64>,
    pub last_error: Option<String>,
}

pub(crate) const PROJECT_COLUMNS: &str =
    "id, slug, root, crate_name, indexed_at, index_complete, last_index_ms, last_error";

fn project_columns(row: &turso::Row) -> Result<ProjectRow> {
    Ok(ProjectRow {
        id: int(col(row, 0)?).unwrap_or_default(),
        slug: text(col(row, 1)?).unwrap_or_default(),
        root: text(col(row, 2)?).unwrap_or_default(),
        crate_name: text(col(row, 3)?),
        indexed_at: text(col(row, 4)?),
        index_complete: int(col(row, 5)?).unwrap_or(0) != 0,
        last_index_ms: int(col(row, 6)?),
        last_error: text(col(row, 7)?),
    })
}

/// Most `-N` suffixes tried for a project's slug before registration gives up.
const MAX_SLUG_SUFFIX: u32 = 1000;

/// The project `selector` names among `all` (the rows [`Db::projects`] read), as
/// [`Db::project_by_selector`] finds it: for a caller that has read them already.
pub fn select_project<'a>(all: &'a [ProjectRow], selector: &str) -> Option<&'a ProjectRow> {
    let sel = selector.trim();
    let sel = if sel.len() > 1 {
        sel.trim_end_matches('/')
    } else {
        sel
    };
    let by_id = sel.parse::<i64>().ok();
    all.iter()
        .find(|p| p.slug == sel || p.root == sel || Some(p.id) == by_id)
}

impl Db {
    /// The user's projects, by slug. The rows that hold a dependency crate's index are
    /// not projects anyone registered, and are left out.
    pub async fn projects(&self) -> Result<Vec<ProjectRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {PROJECT_COLUMNS} FROM project WHERE {} ORDER BY slug",
                    deps::NOT_A_DEPENDENCY
                ),
                (),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(self.project_from(&row)?);
        }
        Ok(out)
    }

    pub async fn project(&self, id: i64) -> Result<Option<ProjectRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!("SELECT {PROJECT_COLUMNS} FROM project WHERE id = ?1"),
                (id,),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some(self.project_from(&row)?)),
            None => Ok(None),
        }
    }

    /// A user project by slug, numeric id or root path (exact, after trimming a trailing
    /// `/`). Dependency index rows never match: they are not in [`Db::projects`].
    pub async fn project_by_selector(&self, selector: &str) -> Result<Option<ProjectRow>> {
        Ok(select_project(&self.projects().await?, selector).cloned())
    }

    /// Registers `root` (canonical, absolute) or returns the existing registration. The
    /// slug is the directory name, made unique with a numeric suffix. Fails when `root`
    /// already holds a dependency crate's shared index: one directory, one project row.
    pub async fn register_project(
        &self,
        root: &str,
        crate_name: Option<&str>,
    ) -> Result<ProjectRow> {
        if let Some(p) = self.project_by_root(root).await? {
            return Ok(p);
        }
        if let Some((name, version)) = self.dependency_rooted_at(root).await? {
            anyhow::bail!(
                "{root} is indexed as the dependency crate {name} {version} (cargo registry \
                 sources), so it cannot be registered as a project; look it up through the \
                 dependency tools (e.g. get_crate_outline, search_symbols with \
                 scope_level \"dependencies\"), or copy the sources elsewhere to index them as a project"
            );
        }
        let base = Path::new(root)
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .unwrap_or("project")
            .to_string();
        let conn = self.connect().await?;
        // Idempotent under concurrency: a row another registration of the same root
        // inserted meanwhile is the answer, and a slug taken meanwhile moves on to the
        // next one (`ON CONFLICT DO NOTHING` covers both unique columns).
        for n in 1..=MAX_SLUG_SUFFIX {
            let slug = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            if self.slug_taken(&slug).await? {
                continue;
            }
            conn.execute(
                "INSERT INTO project (slug, root, crate_name, registered_at) VALUES (?1, ?2, ?3, ?4) \
                 ON CONFLICT DO NOTHING",
                (slug.as_str(), root, opt_text(crate_name), now_rfc3339()),
            )
            .await?;
            if let Some(p) = self.project_by_root(root).await? {
                return Ok(p);
            }
        }
        anyhow::bail!(
            "registering {root}: the slugs {base} to {base}-{MAX_SLUG_SUFFIX} are all taken; delete_project some of them"
        )
    }

    /// The user project registered at exactly `root`.
    pub async fn project_by_root(&self, root: &str) -> Result<Option<ProjectRow>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                format!(
                    "SELECT {PROJECT_COLUMNS} FROM project WHERE root = ?1 AND {}",
                    deps::NOT_A_DEPENDENCY
                ),
                (root,),
            )
            .await?;
        match rows.next().await? {
            Some(row) => Ok(Some(self.project_from(&row)?)),
            None => Ok(None),
        }
    }

    /// Whether any row of `project` (a user's or a dependency index's) has `slug`.
    async fn slug_taken(&self, slug: &str) -> Result<bool> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached("SELECT 1 FROM project WHERE slug = ?1", (slug,))
            .await?;
        Ok(rows.next().await?.is_some())
    }

    /// Marks the start of an index run: answers must not claim completeness until
    /// [`Db::finish_index_run`].
    pub async fn start_index_run(&self, project_id: i64) -> Result<()> {
        self.unrecorded().remove(&project_id);
        let conn = self.connect().await?;
        conn.execute(
            "UPDATE project SET index_complete = 0 WHERE id = ?1",
            (project_id,),
        )
        .await?;
        Ok(())
    }

    /// Marks the end of an index run, with its failure if it failed. A failure that
    /// cannot be written (the disk that failed the run is still full) is kept in memory
    /// instead and shown in the project's rows ([`Db::project`]) until its next run
    /// starts: a failed run never reads as one still going.
    pub async fn finish_index_run(
        &self,
        project_id: i64,
        elapsed_ms: i64,
        error: Option<&str>,
    ) -> Result<()> {
        let written = self.write_run_end(project_id, elapsed_ms, error).await;
        match (&written, error) {
            (Err(_), Some(e)) => {
                self.unrecorded().insert(project_id, e.to_string());
            }
            _ => {
                self.unrecorded().remove(&project_id);
            }
        }
        written
    }

    async fn write_run_end(
        &self,
        project_id: i64,
        elapsed_ms: i64,
        error: Option<&str>,
    ) -> Result<()> {
        let conn = self.connect().await?;
        conn.execute(
            "UPDATE project SET index_complete = ?2, indexed_at = ?3, last_index_ms = ?4, last_error = ?5 WHERE id = ?1",
            (
                project_id,
                i64::from(error.is_none()),
                now_rfc3339(),
                elapsed_ms,
                opt_text(error),
            ),
        )
        .await?;
        Ok(())
    }

    fn unrecorded(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<i64, String>> {
        self.unrecorded_failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// A project row as every read returns it: with its run's failure when that could
    /// not be written ([`Db::finish_index_run`]).
    pub(crate) fn project_from(&self, row: &turso::Row) -> Result<ProjectRow> {
        let mut row = project_columns(row)?;
        if row.last_error.is_none()
            && let Some(e) = self.unrecorded().get(&row.id)
        {
            row.last_error = Some(e.clone());
        }
        Ok(row)
    }

    /// Forgets a project: its row and everything indexed for it, in one transaction.
    /// Telemetry rows stay (they hold no content) but lose their project.
    pub async fn delete_project(&self, project_id: i64) -> Result<()> {
        let conn = self.connect().await?;
        in_transaction(&conn, async |conn| {
            for table in ["edge", "ref_site", "ref_scope", "symbol", "source_file"] {
                conn.execute(
                    &format!("DELETE FROM {table} WHERE project_id = ?1"),
                    (project_id,),
                )
                .await?;
            }
            crate::dense::drop_records(conn, project_id).await?;
            for stmt in deletions_for_project() {
                conn.execute(stmt, (project_id,)).await?;
            }
            conn.execute(
                "UPDATE tool_call SET project_id = NULL WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
            conn.execute("DELETE FROM project WHERE id = ?1", (project_id,))
                .await?;
            Ok(())
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_registrations_of_one_root_make_one_row_and_same_names_get_own_slugs() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let mut tasks = Vec::new();
        for i in 0..24 {
            let db = db.clone();
            // Half register one root, half register roots that share its last component.
            let root = if i % 2 == 0 {
                "/work/app".to_string()
            } else {
                format!("/elsewhere/{i}/app")
            };
            tasks.push(tokio::spawn(async move {
                db.register_project(&root, None).await.map(|p| (root, p))
            }));
        }
        let mut same = std::collections::BTreeSet::new();
        for t in tasks {
            let (root, p) = t.await.unwrap().expect("every registration answers");
            assert_eq!(p.root, root);
            if root == "/work/app" {
                same.insert(p.id);
            }
        }
        assert_eq!(same.len(), 1, "one row for one root: {same:?}");
        let all = db.projects().await.unwrap();
        assert_eq!(all.len(), 13, "{all:?}");
        let slugs: std::collections::BTreeSet<&str> = all.iter().map(|p| p.slug.as_str()).collect();
        assert_eq!(slugs.len(), 13, "slugs are distinct: {slugs:?}");
        // Registering again answers the existing row.
        let again = db.register_project("/work/app", None).await.unwrap();
        assert!(same.contains(&again.id));
    }

    #[tokio::test]
    async fn projects_are_found_by_slug_id_or_root_and_slugs_stay_unique() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(&dir.path().join("index.db")).await.unwrap();
        let a = db.register_project("/a/demo", None).await.unwrap();
        let b = db.register_project("/b/demo", None).await.unwrap();
        assert_eq!(b.slug, "demo-2");
        assert_eq!(db.register_project("/a/demo", None).await.unwrap().id, a.id);
        assert_eq!(
            db.project_by_selector("demo-2").await.unwrap().unwrap().id,
            b.id
        );
        assert_eq!(
            db.project_by_selector(&a.id.to_string())
                .await
                .unwrap()
                .unwrap()
                .id,
            a.id
        );
        assert_eq!(
            db.project_by_selector("/b/demo/")
                .await
                .unwrap()
                .unwrap()
                .id,
            b.id
        );
        assert!(db.project_by_selector("nope").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn an_index_run_is_complete_only_once_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let db = Db::open(&path).await.unwrap();
        let p = db.register_project("/a/demo", None).await.unwrap();
        db.start_index_run(p.id).await.unwrap();
        assert!(!db.project(p.id).await.unwrap().unwrap().index_complete);
        db.finish_index_run(p.id, 12, None).await.unwrap();
        let p2 = db.project(p.id).await.unwrap().unwrap();
        assert!(p2.index_complete);
        assert_eq!(p2.last_index_ms, Some(12));
        assert!(p2.indexed_at.is_some());
        db.finish_index_run(p.id, 3, Some("disk full"))
            .await
            .unwrap();
        let p3 = db.project(p.id).await.unwrap().unwrap();
        assert!(!p3.index_complete);
        assert_eq!(p3.last_error.as_deref(), Some("disk full"));
    }
}
