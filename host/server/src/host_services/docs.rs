//! The `docs` and `docs-write` interfaces: the project's Markdown decisions, learnings
//! and plans, and decision rows in the database.
//!
//! Reads are confined to three directories of the call's project; writes to its
//! `docs/adr`, by file name only. Every path is resolved (symlinks followed) and must stay
//! inside the project root (reads) or inside `docs/adr` (writes).

use std::io::{Read as _, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use scryer_db::DecisionRecord;
use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, DecisionRow, Document};

use super::{HostImpl, internal};

/// The directories `list-documents` reads, relative to the project root.
const DOC_DIRS: [&str; 3] = ["docs/adr", "docs/learnings", "docs/plans"];
/// Where decisions are written.
const ADR_DIR: &str = "docs/adr";
/// Longest text returned per document; longer files are cut (at a character boundary).
const MAX_DOC_BYTES: usize = 256 * 1024;
/// Most documents one listing returns (the first by name).
const MAX_DOCS: usize = 500;
/// Longest file name accepted for a decision.
const MAX_NAME_BYTES: usize = 255;

fn denied(message: String) -> CallError {
    CallError::Denied(message)
}

/// The first `max` bytes of `bytes` as text, cut at a character boundary.
fn capped_text(mut bytes: Vec<u8>, max: usize) -> String {
    if bytes.len() > max {
        bytes.truncate(max);
        // A cut inside a multi-byte character leaves an incomplete tail: drop it.
        if let Err(e) = std::str::from_utf8(&bytes)
            && e.error_len().is_none()
        {
            bytes.truncate(e.valid_up_to());
        }
    }
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// A decision file name: `NAME.md`, no separators, no leading dot, nothing that could
/// name another directory.
fn check_file_name(name: &str) -> Result<(), CallError> {
    let ok = name.ends_with(".md")
        && name.len() > 3
        && name.len() <= MAX_NAME_BYTES
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && !name.chars().any(char::is_control);
    if ok {
        Ok(())
    } else {
        Err(CallError::InvalidArgument(format!(
            "{name:?} is not a decision file name; accepted: a `.md` file name without path separators, e.g. 0003-title.md"
        )))
    }
}

/// The leading number of a decision file name (`0007-x.md` → 7).
fn number_of(name: &str) -> Option<u64> {
    let digits: String = name.chars().take_while(char::is_ascii_digit).collect();
    let rest = &name[digits.len()..];
    (!digits.is_empty() && (rest.starts_with('-') || rest.starts_with('.')))
        .then(|| digits.parse().ok())
        .flatten()
}

/// Another file in `dir` carrying the number `file_name` starts with.
fn same_number(dir: &Path, file_name: &str) -> Option<String> {
    let n = number_of(file_name)?;
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|other| other != file_name && other.ends_with(".md") && number_of(other) == Some(n))
}

impl HostImpl {
    /// The project's canonical root.
    fn docs_root(&self, scope: &CallScope) -> Result<PathBuf, CallError> {
        let p = self.project(scope)?;
        std::fs::canonicalize(&p.root)
            .map_err(|e| CallError::NotFound(format!("project root {}: {e}", p.root)))
    }

    /// `<root>/docs/adr`, resolved, checked to be a directory inside the root; created
    /// (one level at a time, each checked) when `create` is set. `None` when absent.
    fn adr_dir(&self, root: &Path, create: bool) -> Result<Option<PathBuf>, CallError> {
        let mut at = root.to_path_buf();
        for part in ADR_DIR.split('/') {
            let next = at.join(part);
            match std::fs::symlink_metadata(&next) {
                Ok(_) => {
                    let real = std::fs::canonicalize(&next)
                        .map_err(|e| CallError::Internal(format!("{}: {e}", next.display())))?;
                    if !real.starts_with(root) {
                        return Err(denied(format!(
                            "{} leads outside the project root (to {}); decisions are not written there",
                            next.display(),
                            real.display()
                        )));
                    }
                    if !real.is_dir() {
                        return Err(CallError::InvalidArgument(format!(
                            "{} is not a directory",
                            next.display()
                        )));
                    }
                    at = real;
                }
                Err(_) if create => {
                    std::fs::create_dir(&next).map_err(|e| {
                        CallError::Internal(format!("creating {}: {e}", next.display()))
                    })?;
                    at = next;
                }
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(at))
    }

    pub(super) fn docs_list(
        &self,
        scope: &CallScope,
        dir: &str,
    ) -> Result<Vec<Document>, CallError> {
        let dir = dir.trim_end_matches('/');
        if !DOC_DIRS.contains(&dir) {
            return Err(denied(format!(
                "list-documents reads only {}; got {dir:?}",
                DOC_DIRS.join(", ")
            )));
        }
        let root = self.docs_root(scope)?;
        let path = root.join(dir);
        if std::fs::symlink_metadata(&path).is_err() {
            return Ok(Vec::new());
        }
        let real = std::fs::canonicalize(&path)
            .map_err(|e| CallError::Internal(format!("{}: {e}", path.display())))?;
        if !real.starts_with(&root) {
            return Err(denied(format!(
                "{dir} leads outside the project root (to {})",
                real.display()
            )));
        }
        if !real.is_dir() {
            return Ok(Vec::new());
        }
        let mut names: Vec<String> = std::fs::read_dir(&real)
            .map_err(|e| CallError::Internal(format!("reading {}: {e}", real.display())))?
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".md") && !n.starts_with('.'))
            .collect();
        names.sort();
        let mut out = Vec::new();
        for name in names {
            if out.len() >= MAX_DOCS {
                break;
            }
            // Resolve symlinks: a link out of the project is skipped, not read.
            let Ok(file) = std::fs::canonicalize(real.join(&name)) else {
                continue;
            };
            if !file.starts_with(&root) {
                continue;
            }
            // Regular files only (never a FIFO or device), read up to the cap.
            let Ok(handle) = scryer_engine::safe_fs::open_regular(&file) else {
                continue;
            };
            let Ok(meta) = handle.metadata() else {
                continue;
            };
            // Only what is returned is read: the text is cut at MAX_DOC_BYTES anyway.
            let mut bytes = Vec::new();
            if std::io::Read::read_to_end(&mut handle.take(MAX_DOC_BYTES as u64), &mut bytes)
                .is_err()
            {
                continue;
            }
            let modified_ms = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            out.push(Document {
                path: format!("{dir}/{name}"),
                text: capped_text(bytes, MAX_DOC_BYTES),
                modified_ms,
            });
        }
        Ok(out)
    }

    pub(super) fn docs_decision_rows(
        &self,
        scope: &CallScope,
    ) -> Result<Vec<DecisionRow>, CallError> {
        let p = self.project(scope)?;
        let rows = self
            .block(self.core.projects.db().decisions(p.id))
            .map_err(internal)?;
        Ok(rows
            .into_iter()
            .map(|r| DecisionRow {
                number: r.number,
                title: r.title,
                status: r.status,
                file_path: r.file_path,
                text: r.text,
                recorded_at: r.recorded_at,
            })
            .collect())
    }

    pub(super) fn docs_insert_decision_row(
        &self,
        scope: &CallScope,
        row: DecisionRow,
    ) -> Result<(), CallError> {
        let p = self.project(scope)?;
        if row.number == 0 {
            return Err(CallError::InvalidArgument(
                "decision numbers start at 1".into(),
            ));
        }
        let name = row
            .file_path
            .strip_prefix(ADR_DIR)
            .and_then(|r| r.strip_prefix('/'))
            .unwrap_or("");
        check_file_name(name).map_err(|_| {
            CallError::InvalidArgument(format!(
                "a decision row's file_path must be {ADR_DIR}/<name>.md; got {:?}",
                row.file_path
            ))
        })?;
        if row.text.len() > MAX_DOC_BYTES {
            return Err(CallError::InvalidArgument(format!(
                "a decision is at most {MAX_DOC_BYTES} bytes; this one is {}",
                row.text.len()
            )));
        }
        let record = DecisionRecord {
            number: row.number,
            title: row.title,
            status: row.status,
            file_path: row.file_path,
            text: row.text,
            recorded_at: if row.recorded_at.is_empty() {
                scryer_db::now_rfc3339()
            } else {
                row.recorded_at
            },
        };
        let inserted = self
            .block(self.core.projects.db().insert_decision(p.id, &record))
            .map_err(internal)?;
        if inserted {
            Ok(())
        } else {
            Err(CallError::InvalidArgument(format!(
                "project `{}` already has a decision numbered {}",
                p.slug, record.number
            )))
        }
    }

    pub(super) fn docs_delete_decision_rows(
        &self,
        scope: &CallScope,
        number: u32,
    ) -> Result<u32, CallError> {
        let p = self.project(scope)?;
        self.block(self.core.projects.db().delete_decisions(p.id, number))
            .map_err(internal)
    }

    pub(super) fn docs_create_decision_file(
        &self,
        scope: &CallScope,
        file_name: &str,
        text: &str,
    ) -> Result<(), CallError> {
        check_file_name(file_name)?;
        if text.len() > MAX_DOC_BYTES {
            return Err(CallError::InvalidArgument(format!(
                "a decision file is at most {MAX_DOC_BYTES} bytes; this one is {}",
                text.len()
            )));
        }
        let root = self.docs_root(scope)?;
        let dir = self
            .adr_dir(&root, true)?
            .ok_or_else(|| CallError::Internal(format!("{ADR_DIR} could not be created")))?;
        if let Some(other) = same_number(&dir, file_name) {
            return Err(CallError::InvalidArgument(format!(
                "{ADR_DIR}/{other} already carries the number of {file_name}; one file per number"
            )));
        }
        let path = dir.join(file_name);
        // create_new refuses an existing file and any symlink (even a dangling one), so
        // the write cannot land anywhere but a new file in docs/adr.
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => {
                    CallError::InvalidArgument(format!("{ADR_DIR}/{file_name} already exists"))
                }
                _ => CallError::Internal(format!("creating {ADR_DIR}/{file_name}: {e}")),
            })?;
        if let Err(e) = file
            .write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
        {
            drop(file);
            let _ = std::fs::remove_file(&path);
            return Err(CallError::Internal(format!(
                "writing {ADR_DIR}/{file_name}: {e}"
            )));
        }
        Ok(())
    }

    pub(super) fn docs_delete_decision_file(
        &self,
        scope: &CallScope,
        file_name: &str,
    ) -> Result<(), CallError> {
        check_file_name(file_name)?;
        let root = self.docs_root(scope)?;
        let Some(dir) = self.adr_dir(&root, false)? else {
            return Err(CallError::NotFound(format!(
                "{ADR_DIR}/{file_name} does not exist (there is no {ADR_DIR})"
            )));
        };
        let path = dir.join(file_name);
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|_| CallError::NotFound(format!("{ADR_DIR}/{file_name} does not exist")))?;
        // What the name resolves to must itself be a file in docs/adr: a link elsewhere
        // (even inside the project) is refused rather than followed or removed.
        let real = std::fs::canonicalize(&path).map_err(|e| {
            denied(format!(
                "{ADR_DIR}/{file_name} does not resolve to a file ({e})"
            ))
        })?;
        if real.parent() != Some(dir.as_path()) {
            return Err(denied(format!(
                "{ADR_DIR}/{file_name} resolves to {}, outside {ADR_DIR}; not deleted",
                real.display()
            )));
        }
        if !meta.file_type().is_symlink() && !meta.is_file() {
            return Err(CallError::InvalidArgument(format!(
                "{ADR_DIR}/{file_name} is not a file"
            )));
        }
        std::fs::remove_file(&path)
            .map_err(|e| CallError::Internal(format!("deleting {ADR_DIR}/{file_name}: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_capped_at_a_character_boundary() {
        let s = "aé".repeat(10); // é is two bytes
        assert_eq!(capped_text(s.clone().into_bytes(), 3), "aé");
        assert_eq!(capped_text(s.clone().into_bytes(), 4), "aéa");
        // The fifth byte is half an é: dropped, not turned into U+FFFD.
        assert_eq!(capped_text(s.clone().into_bytes(), 5), "aéa");
        assert_eq!(capped_text(s.clone().into_bytes(), 1000), s);
        assert_eq!(capped_text(vec![b'a', 0xff, b'b'], 10), "a\u{fffd}b");
    }

    #[test]
    fn decision_file_names_are_plain_md_names() {
        assert!(check_file_name("0003-title.md").is_ok());
        for bad in [
            "../x.md",
            "a/b.md",
            "a\\b.md",
            ".md",
            ".hidden.md",
            "x.txt",
            "x.md\0",
            "x\n.md",
        ] {
            assert!(check_file_name(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
