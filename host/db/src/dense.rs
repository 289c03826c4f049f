//! A name defined thousands of times keeps its definitions as one record (ADR 0048).
//!
//! `new` on the 7.17M-line monorepo has 7,531 definitions on about as many pages of
//! `symbol`. Read row by row, they took 32-88 ms of a first call about it, almost all of
//! it random page reads (docs/learnings/scale.md, stop 41). A full index run writes the
//! definitions of each name with at least [`DENSE_MIN_DEFINITIONS`], in
//! [`Db::symbols_by_name`]'s order, as one binary record (postcard: `new`'s is 1.97 MB
//! read and decoded in 7 ms, against 14 ms for the 3.1 MB of JSON it replaced, ADR 0050),
//! and reads take the record when there is one.
//!
//! The same run keeps, beside each of those names' definitions, how many of its usage
//! rows each file holds ([`Db::uses_per_file`]'s answer, `uses_record`), in path order:
//! counted off the name index and ordered by the project's 17,238 paths, `new`'s 102,528
//! rows in 8,244 files took 44-63 ms of a first call about it, where its record reads in
//! under 1 ms and needs no path (stop 48).
//!
//! Architecture invariant: a record is never stale. Every write of a project's files
//! (`write_files`: refreshes, re-index runs) drops all of the project's records in its own
//! transaction, and only the end of a full run writes them again, under the write lock,
//! from the rows as they are then. Until then the names are read row by row.

use anyhow::Result;

use crate::{Db, NameUses, SymbolRow, col, in_transaction, text};

pub(crate) const SCHEMA: &[&str] = &[
    // Stop 41's JSON records: dropped, the next full run writes binary ones.
    "DROP TABLE IF EXISTS dense_definition",
    "CREATE TABLE IF NOT EXISTS definition_record (
        project_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        rows BLOB NOT NULL,
        PRIMARY KEY (project_id, name)
    )",
    "CREATE TABLE IF NOT EXISTS uses_record (
        project_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        uses BLOB NOT NULL,
        PRIMARY KEY (project_id, name)
    )",
];

/// The tables of records: a project's rows in each go whenever its files are written,
/// and with the project.
pub(crate) const RECORD_TABLES: &[&str] = &["definition_record", "uses_record"];

/// The layout of both records: [`SymbolRow`]'s fields in order, and [`NameUses`]'s
/// (`crate::record`). Change it with the fields (`the_record_layout_is_the_rows_fields`
/// fails until it is).
const RECORD_LAYOUT: u32 = 1;

fn encode<T: serde::Serialize>(rows: &[T]) -> Result<Vec<u8>> {
    crate::record::encode(RECORD_LAYOUT, rows)
}

/// Writes `name`'s usages per file as one record, in path order.
async fn write_uses(
    conn: &turso::Connection,
    project_id: i64,
    name: &str,
    mut uses: Vec<NameUses>,
    paths: &std::collections::HashMap<i64, String>,
) -> Result<()> {
    uses.sort_by(|a, b| paths.get(&a.file_id).cmp(&paths.get(&b.file_id)));
    conn.execute(
        "INSERT INTO uses_record (project_id, name, uses) VALUES (?1, ?2, ?3)",
        (project_id, name, turso::Value::Blob(encode(&uses)?)),
    )
    .await?;
    Ok(())
}

/// Definitions a name needs for a record. On the monorepo, `new`, `fmt`, `from`,
/// `default` and a few more have thousands; a name with fewer is read row by row in a few
/// milliseconds.
pub const DENSE_MIN_DEFINITIONS: usize = 1_000;

/// Usage rows a name needs for a record of its usages per file without a definitions
/// record: a call about a name with more is handed a window of them (the host's
/// `USAGE_WINDOW_ROWS`), and counts them first. `into` on the monorepo has 17,078 and 61
/// definitions.
pub const USES_RECORD_MIN_ROWS: usize = 10_000;

/// Drops a project's records: every write of its files does, first.
pub(crate) async fn drop_records(conn: &turso::Connection, project_id: i64) -> Result<()> {
    for table in RECORD_TABLES {
        conn.execute(
            &format!("DELETE FROM {table} WHERE project_id = ?1"),
            (project_id,),
        )
        .await?;
    }
    Ok(())
}

impl Db {
    /// Writes the records of project `project_id`'s names with at least `min`
    /// definitions (their definitions, and their usages per file), and the usages per
    /// file of those of `used` with at least [`USES_RECORD_MIN_ROWS`] usage rows,
    /// replacing all its records, in one transaction. Returns how many names have a
    /// record.
    pub async fn write_records(
        &self,
        project_id: i64,
        min: usize,
        used: &[String],
    ) -> Result<usize> {
        let conn = self.connect().await?;
        // Taking the write lock first: no file of the project changes between the rows
        // read here and the records written.
        in_transaction(&conn, async |conn| {
            drop_records(conn, project_id).await?;
            let mut rows = conn
                .query(
                    "SELECT name FROM symbol WHERE project_id = ?1 GROUP BY name HAVING count(*) >= ?2",
                    (project_id, min as i64),
                )
                .await?;
            let mut names = Vec::new();
            while let Some(row) = rows.next().await? {
                if let Some(name) = text(col(&row, 0)?) {
                    names.push(name);
                }
            }
            drop(rows);
            let paths = self.file_paths(project_id).await?;
            for name in &names {
                let defs = self.symbols_row_by_row(project_id, name).await?;
                conn.execute(
                    "INSERT INTO definition_record (project_id, name, rows) VALUES (?1, ?2, ?3)",
                    (project_id, name.as_str(), turso::Value::Blob(encode(&defs)?)),
                )
                .await?;
                let uses = self.uses_per_file(project_id, name).await?;
                write_uses(conn, project_id, name, uses, &paths).await?;
            }
            let mut recorded = names.len();
            for name in used.iter().filter(|n| !names.contains(n)) {
                let uses = self.uses_per_file(project_id, name).await?;
                if uses.iter().map(|u| u.rows as usize).sum::<usize>() >= USES_RECORD_MIN_ROWS {
                    write_uses(conn, project_id, name, uses, &paths).await?;
                    recorded += 1;
                }
            }
            Ok(recorded)
        })
        .await
    }

    /// The names project `project_id` keeps a record of usages for.
    pub async fn uses_record_names(&self, project_id: i64) -> Result<Vec<String>> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT name FROM uses_record WHERE project_id = ?1",
                (project_id,),
            )
            .await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.extend(text(col(&row, 0)?));
        }
        Ok(out)
    }

    /// Whether project `project_id` has its records as this build writes them: a
    /// database written before the uses records has definition records alone, and its
    /// next full run writes both.
    pub async fn has_records(&self, project_id: i64) -> Result<bool> {
        let conn = self.reader().await?;
        let mut rows = conn
            .query_cached(
                "SELECT 1 FROM uses_record WHERE project_id = ?1 LIMIT 1",
                (project_id,),
            )
            .await?;
        Ok(rows.next().await?.is_some())
    }

    /// The record of `name`'s definitions in project `project_id`, if it has one that
    /// reads. One that does not (written by a build whose rows had other fields) is
    /// logged and passed over: the rows answer, until the next full run rewrites it.
    pub(crate) async fn dense_definitions(
        &self,
        project_id: i64,
        name: &str,
    ) -> Result<Option<Vec<SymbolRow>>> {
        self.record(
            "SELECT rows FROM definition_record WHERE project_id = ?1 AND name = ?2",
            project_id,
            name,
        )
        .await
    }

    /// The record of how many of `name`'s usage rows each file holds, **in path order**
    /// (a reader needs no path to order them), if it has one that reads (as
    /// [`Db::dense_definitions`]). `None`: ask [`Db::uses_per_file`].
    pub async fn dense_uses(&self, project_id: i64, name: &str) -> Result<Option<Vec<NameUses>>> {
        self.record(
            "SELECT uses FROM uses_record WHERE project_id = ?1 AND name = ?2",
            project_id,
            name,
        )
        .await
    }

    /// One record, read by `sql` (`?1` project, `?2` name); `None` when there is none or
    /// it does not read (logged).
    async fn record<T: serde::de::DeserializeOwned>(
        &self,
        sql: &str,
        project_id: i64,
        name: &str,
    ) -> Result<Option<Vec<T>>> {
        let conn = self.reader().await?;
        let mut rows = conn.query_cached(sql, (project_id, name)).await?;
        let Some(row) = rows.next().await? else {
            return Ok(None);
        };
        let decoded = match col(&row, 0)? {
            turso::Value::Blob(bytes) => crate::record::decode(RECORD_LAYOUT, &bytes),
            _ => Err("not a binary record".to_string()),
        };
        match decoded {
            Ok(rows) => Ok(Some(rows)),
            Err(why) => {
                tracing::warn!(
                    project_id,
                    name,
                    sql,
                    why,
                    "a record that does not read is passed over"
                );
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RefRow;
    use crate::test_rows::{reference, sym, write};

    /// The records kept, as (definition records, uses records).
    async fn records(db: &Db) -> (usize, usize) {
        let conn = db.connect().await.unwrap();
        let mut counts = Vec::new();
        for table in RECORD_TABLES {
            let mut rows = conn
                .query(&format!("SELECT count(*) FROM {table}"), ())
                .await
                .unwrap();
            let row = rows.next().await.unwrap().unwrap();
            counts.push(crate::int(col(&row, 0).unwrap()).unwrap() as usize);
        }
        (counts[0], counts[1])
    }

    /// A record names no fields: its layout number goes with [`SymbolRow`]'s fields, in
    /// their order.
    #[test]
    fn the_record_layout_is_the_rows_fields() {
        let uses = NameUses {
            file_id: 1,
            rows: 2,
            calls: 3,
            kinds: 4,
        };
        let fields = format!(
            "{} {}",
            serde_json::to_string(&sym("new", 1)).unwrap(),
            serde_json::to_string(&uses).unwrap()
        );
        let by_layout = [(
            1,
            r#"{"name":"new","kind":"function","qualified_name":"demo::new","owner":null,"signature":"fn new()","docstring":null,"start_line":1,"end_line":3,"name_line":1,"name_column":4,"file_path":""} {"file_id":1,"rows":2,"calls":3,"kinds":4}"#,
        )];
        assert_eq!(
            by_layout
                .iter()
                .find(|(layout, _)| *layout == RECORD_LAYOUT)
                .map(|(_, f)| *f),
            Some(fields.as_str()),
            "SymbolRow's or NameUses's fields changed: give RECORD_LAYOUT a new number and its fields here"
        );
    }

    #[tokio::test]
    async fn a_record_holds_what_the_rows_hold_and_any_write_drops_it() {
        let (_dir, db, p) = crate::test_rows::demo_project().await;
        // `new` three times in each of three files (9); `run` once in each (3). `new` is
        // used in each file as often as its place in the list (1, 2, 3: one a `use`),
        // `run` once in each.
        let mut writes = Vec::new();
        for (n, f) in ["c.rs", "a.rs", "b.rs"].into_iter().enumerate() {
            let mut syms: Vec<SymbolRow> = (0..3).map(|i| sym("new", 10 * i + 1)).collect();
            syms[1].docstring = Some(format!("Makes one, in {f}.\n\nWith \"quotes\" and ✓."));
            syms[2].owner = Some("Shape".into());
            syms.push(sym("run", 40));
            let mut refs: Vec<RefRow> = (0..=n as u32).map(|i| reference("new", 50 + i)).collect();
            refs[0].kind = "use".into();
            refs.push(reference("run", 60));
            writes.push(write(f, f, syms, refs));
        }
        db.write_files(p.id, &writes, &[]).await.unwrap();
        let by_rows = db.symbols_by_name(p.id, "new").await.unwrap();
        assert_eq!(by_rows.len(), 9);
        let uses_by_rows = db.uses_per_file(p.id, "new").await.unwrap();
        assert_eq!(
            uses_by_rows
                .iter()
                .map(|u| (u.rows, u.calls))
                .collect::<Vec<_>>(),
            [(1, 0), (2, 1), (3, 2)],
            "{uses_by_rows:?}"
        );

        assert!(!db.has_records(p.id).await.unwrap());
        assert_eq!(db.write_records(p.id, 4, &[]).await.unwrap(), 1);
        assert_eq!(
            records(&db).await,
            (1, 1),
            "only `new` has four definitions"
        );
        assert!(db.has_records(p.id).await.unwrap());
        let kept = db.dense_definitions(p.id, "new").await.unwrap();
        assert_eq!(kept.as_ref(), Some(&by_rows));
        assert_eq!(db.symbols_by_name(p.id, "new").await.unwrap(), by_rows);
        assert_eq!(db.dense_definitions(p.id, "run").await.unwrap(), None);
        // Its usages per file too, kinds and all; `run`'s are read off the name index.
        let kept = db.dense_uses(p.id, "new").await.unwrap().expect("a record");
        assert_eq!(
            kept.iter().map(|u| (u.rows, u.calls)).collect::<Vec<_>>(),
            [(2, 1), (3, 2), (1, 0)],
            "in path order (a.rs, b.rs, c.rs), not in file id order"
        );
        let mut by_id = kept.clone();
        by_id.sort_by_key(|u| u.file_id);
        assert_eq!(by_id, uses_by_rows);
        assert_eq!(db.dense_uses(p.id, "run").await.unwrap(), None);
        assert_eq!(db.uses_per_file(p.id, "run").await.unwrap().len(), 3);
        // A database an earlier build wrote has definition records alone: its records
        // are not as this build writes them, so the next full run writes them again.
        let conn = db.connect().await.unwrap();
        conn.execute("DELETE FROM uses_record", ()).await.unwrap();
        assert!(!db.has_records(p.id).await.unwrap());
        assert_eq!(db.write_records(p.id, 4, &[]).await.unwrap(), 1);
        assert_eq!(records(&db).await, (1, 1));

        // A record that does not read is passed over: another layout's, one cut short,
        // one with bytes left over, one that is not bytes.
        let good = encode(&by_rows).unwrap();
        let other_layout = crate::record::encode(RECORD_LAYOUT + 1, &by_rows).unwrap();
        let mut longer = good.clone();
        longer.push(0);
        for bad in [
            turso::Value::Blob(other_layout),
            turso::Value::Blob(good[..good.len() / 2].to_vec()),
            turso::Value::Blob(longer),
            turso::Value::Text("[{\"name\":\"new\"}]".into()),
        ] {
            conn.execute(
                "UPDATE definition_record SET rows = ?1 WHERE name = 'new'",
                (bad,),
            )
            .await
            .unwrap();
            assert_eq!(db.dense_definitions(p.id, "new").await.unwrap(), None);
            assert_eq!(db.symbols_by_name(p.id, "new").await.unwrap(), by_rows);
        }
        conn.execute(
            "UPDATE uses_record SET uses = ?1 WHERE name = 'new'",
            (turso::Value::Blob(vec![1, 3, 9]),),
        )
        .await
        .unwrap();
        assert_eq!(db.dense_uses(p.id, "new").await.unwrap(), None);
        assert_eq!(db.uses_per_file(p.id, "new").await.unwrap(), uses_by_rows);

        // An edit of one file drops every record; the rows answer, with the edit.
        let edited = write("a.rs", "a2", vec![sym("new", 5)], Vec::new());
        db.write_files(p.id, &[edited], &[]).await.unwrap();
        assert_eq!(records(&db).await, (0, 0));
        assert!(!db.has_records(p.id).await.unwrap());
        let after = db.symbols_by_name(p.id, "new").await.unwrap();
        assert_eq!(after.len(), 7, "{after:?}");
        assert!(
            after
                .iter()
                .any(|s| s.file_path == "a.rs" && s.start_line == 5)
        );

        // Written again, then a file removed: dropped again.
        assert_eq!(db.write_records(p.id, 4, &[]).await.unwrap(), 1);
        assert_eq!(db.symbols_by_name(p.id, "new").await.unwrap(), after);
        db.write_files(p.id, &[], &["b.rs".to_string()])
            .await
            .unwrap();
        assert_eq!(records(&db).await, (0, 0));
        assert_eq!(db.symbols_by_name(p.id, "new").await.unwrap().len(), 4);
        // The uses left: c.rs's one and the edited a.rs's none.
        let uses = db.uses_per_file(p.id, "new").await.unwrap();
        assert_eq!(uses.iter().map(|u| u.rows).sum::<u32>(), 1, "{uses:?}");

        // Deleting the project drops its records with it.
        assert_eq!(db.write_records(p.id, 2, &[]).await.unwrap(), 1);
        assert_eq!(records(&db).await, (1, 1));
        db.delete_project(p.id).await.unwrap();
        assert_eq!(records(&db).await, (0, 0));
    }
}
