//! Reading the corpus through the host, and keeping the database honest: a decision row
//! whose file was deleted on disk is purged when the corpus is next read.

use scryer_decisions::{Corpus, DOC_DIRS, SourceDoc, StoredRow};
use scryer_plugin_sdk::host::DecisionRow;
use scryer_plugin_sdk::{ErrorKind, Host, ToolResult};

/// Parse warnings shown at most; the rest are counted.
const MAX_WARNINGS: usize = 5;

pub struct Loaded {
    pub corpus: Corpus,
    /// Every row as stored, after purging (including rows shadowed by their file).
    pub rows: Vec<StoredRow>,
    /// What the caller should be told: purges, unreadable frontmatter.
    pub notes: Vec<String>,
}

fn stored(r: DecisionRow) -> StoredRow {
    StoredRow {
        number: r.number,
        title: r.title,
        status: r.status,
        file_path: r.file_path,
        text: r.text,
        recorded_at: r.recorded_at,
    }
}

/// Lists the three directories and the rows, purges rows whose file is gone, parses.
///
/// A `record_adr` running at the same time writes its row before its file; if this read
/// purges that row in between, `record_adr` sees it gone after writing the file and
/// stores it again.
pub fn load<H: Host + ?Sized>(host: &H) -> ToolResult<Loaded> {
    let mut docs = Vec::new();
    for dir in DOC_DIRS {
        for d in host.list_documents(dir)? {
            docs.push(SourceDoc {
                path: d.path,
                text: d.text,
                modified_ms: d.modified_ms,
            });
        }
    }
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    for row in host.decision_rows()?.into_iter().map(stored) {
        if docs.iter().any(|d| d.path == row.file_path) || file_gone(host, &row) != Some(true) {
            rows.push(row);
            continue;
        }
        match host.delete_decision_rows(row.number) {
            Ok(_) => notes.push(format!(
                "purged recorded decision {} ({}): its file {} was deleted",
                row.number, row.title, row.file_path
            )),
            Err(e) => {
                notes.push(format!(
                    "recorded decision {} has no file {} but could not be purged: {}",
                    row.number, row.file_path, e.message
                ));
                rows.push(row);
            }
        }
    }
    let corpus = Corpus::build(docs, rows.clone());
    let warnings: Vec<String> = corpus
        .decisions
        .iter()
        .flat_map(|d| d.warnings.iter().map(move |w| format!("{}: {w}", d.path)))
        .collect();
    notes.extend(warnings.iter().take(MAX_WARNINGS).cloned());
    if warnings.len() > MAX_WARNINGS {
        notes.push(format!(
            "{} more documents had unreadable parts",
            warnings.len() - MAX_WARNINGS
        ));
    }
    Ok(Loaded {
        corpus,
        rows,
        notes,
    })
}

/// Whether the row's file is known to be gone (`Some(true)`); `Some(false)` when it exists
/// although it was not listed (past the listing cap, say); `None` when the host could
/// not tell. Only `Some(true)` purges.
fn file_gone<H: Host + ?Sized>(host: &H, row: &StoredRow) -> Option<bool> {
    match host.read_lines(&row.file_path, 1, 1) {
        Ok(_) => Some(false),
        Err(e) if e.kind == ErrorKind::NotFound => Some(true),
        Err(_) => None,
    }
}
