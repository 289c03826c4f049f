//! `scryer precise import <index.scip> [--project P]`: stores a SCIP index built
//! elsewhere (by CI, or by hand where the build already runs), through the database's
//! daemon when one runs, else in this process. Its files' precise data applies while
//! their content matches what is on disk at the import (ADR 0018).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Subcommand;
use scryer_server::daemon::{self, Hello, Op, RunPaths};
use scryer_server::precise::ImportReply;

#[derive(Subcommand, Debug)]
pub enum PreciseCommand {
    /// Store a SCIP index (index.scip from rust-analyzer scip, scip-python, scip-typescript
    /// or scip-go) for a project.
    Import {
        /// The SCIP file.
        index: PathBuf,
        /// The project (slug, id or root path); default: the one holding the current directory.
        #[arg(long)]
        project: Option<String>,
    },
}

pub async fn run(cli: &crate::Cli, command: &PreciseCommand) -> Result<()> {
    let PreciseCommand::Import { index, project } = command;
    let index = std::fs::canonicalize(index)
        .with_context(|| format!("{}: accepted is an existing SCIP file", index.display()))?;
    let cwd = std::env::current_dir()?;
    let db = cli.db.clone().unwrap_or_else(crate::default_db);
    let reply = match via_daemon(&db, &index, project.as_deref(), &cwd).await? {
        Some(r) => r,
        None => {
            let server = crate::build_index_server(cli).await?;
            let hello = hello(&index, project.as_deref(), &cwd);
            server.precise_import(&hello).await?
        }
    };
    println!(
        "{}: stored {} precise occurrences of {} {} file(s) from {} {}",
        reply.project, reply.occurrences, reply.files, reply.language, reply.tool, reply.version
    );
    Ok(())
}

fn hello(index: &Path, project: Option<&str>, cwd: &Path) -> Hello {
    Hello {
        scryer: daemon::PROTOCOL,
        op: Op::PreciseImport,
        path: Some(index.to_path_buf()),
        project: project.map(str::to_string),
        cwd: Some(cwd.to_path_buf()),
        ..Hello::default()
    }
}

async fn via_daemon(
    db: &Path,
    index: &Path,
    project: Option<&str>,
    cwd: &Path,
) -> Result<Option<ImportReply>> {
    if !db.exists() {
        return Ok(None);
    }
    let paths = RunPaths::for_db(db)?;
    let Some(reply) = daemon::ask(
        &paths,
        &hello(index, project, cwd),
        Duration::from_secs(3600),
    )
    .await?
    else {
        return Ok(None);
    };
    match (reply.ok, reply.imported) {
        (true, Some(r)) => Ok(Some(r)),
        _ => bail!(
            "the scryer daemon holding {} did not import {}: {}",
            paths.db.display(),
            index.display(),
            reply.error.unwrap_or_default()
        ),
    }
}
