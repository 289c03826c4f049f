//! The `catalog` interface (WIT 0.2, capability `catalog-read`): every registered
//! project, read-only. Routers that look across projects (the portfolio plugin) list
//! them, read a text file inside one (a README) and search their text.
//!
//! Reads stay inside a registered root (no `..`, no symlink out) and are capped: a file
//! read at 64 KiB, a search at 1,000 matches, 20,000 files and 3 seconds per project.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, Project, ProjectEntry, TextMatch, TextMatches};

use super::{HostImpl, clip, internal};
use crate::call::paths::project_relative;

/// Most bytes one `read-text` returns.
const MAX_READ_BYTES: u32 = 64 * 1024;
/// Most matches one `grep` returns.
const MAX_MATCHES: u32 = 1_000;
/// Files larger than this are not searched.
const MAX_GREP_FILE_BYTES: u64 = 1 << 20;
/// Files one search reads at most, and how long it may take, per project.
const MAX_GREP_FILES: u32 = 20_000;
const GREP_DEADLINE: Duration = Duration::from_secs(3);

impl HostImpl {
    pub(super) fn catalog_list(&self, scope: &CallScope) -> Result<Vec<ProjectEntry>, CallError> {
        let mut rows = self
            .block(self.core.projects.db().projects())
            .map_err(internal)?;
        rows.sort_by(|a, b| a.slug.cmp(&b.slug));
        rows.iter()
            .map(|p| {
                let s = self.status(scope, p)?;
                Ok(ProjectEntry {
                    project: Project {
                        id: s.id,
                        slug: s.slug,
                        root: s.root,
                    },
                    state: s.state,
                    files: s.files,
                    symbols: s.symbols,
                    indexed_at: s.indexed_at,
                    active: s.active,
                })
            })
            .collect()
    }

    pub(super) fn catalog_read(
        &self,
        selector: &str,
        path: &str,
        max_bytes: u32,
    ) -> Result<Option<String>, CallError> {
        let project = self.project_by_selector(selector)?;
        read_text(Path::new(&project.root), path, max_bytes)
    }

    pub(super) fn catalog_search(
        &self,
        selector: &str,
        query: &str,
        limit: u32,
    ) -> Result<TextMatches, CallError> {
        let project = self.project_by_selector(selector)?;
        grep(Path::new(&project.root), query, limit)
    }
}

/// Up to `max_bytes` of the UTF-8 file `path` inside `root`, cut at a character
/// boundary; `None` when there is no such file.
pub(crate) fn read_text(
    root: &Path,
    path: &str,
    max_bytes: u32,
) -> Result<Option<String>, CallError> {
    if max_bytes == 0 {
        return Err(CallError::InvalidArgument(
            "max-bytes must be at least 1 (at most 65536 are read)".into(),
        ));
    }
    if path.trim().is_empty() {
        return Err(CallError::InvalidArgument(
            "path is empty; pass a file path relative to the project root, e.g. README.md".into(),
        ));
    }
    let rel = project_relative(root, path)
        .map_err(|why| CallError::InvalidArgument(format!("path {path:?}: {why}")))?;
    let full = root.join(&rel);
    if full.is_dir() {
        return Err(CallError::InvalidArgument(format!(
            "{rel} is a directory; pass a file"
        )));
    }
    // A regular file only: a FIFO or device in a project is never opened.
    let file = match scryer_engine::safe_fs::open_regular(&full) {
        Ok(f) => f,
        Err(scryer_engine::safe_fs::Refused::Missing) => return Ok(None),
        Err(e) => return Err(CallError::InvalidArgument(format!("{rel} is {e}"))),
    };
    let mut bytes = Vec::new();
    file.take(u64::from(max_bytes.min(MAX_READ_BYTES)))
        .read_to_end(&mut bytes)
        .map_err(|e| CallError::Internal(format!("reading {rel}: {e}")))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        // Cut inside a character at the end: keep what is whole.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            Ok(Some(String::from_utf8(bytes).unwrap_or_default()))
        }
        Err(_) => Err(CallError::InvalidArgument(format!(
            "{rel} is not UTF-8 text"
        ))),
    }
}

/// Lines of the text files under `root` containing `query`, case-insensitively.
pub(crate) fn grep(root: &Path, query: &str, limit: u32) -> Result<TextMatches, CallError> {
    let needle = query.trim().to_lowercase();
    if needle.is_empty() {
        return Err(CallError::InvalidArgument(
            "query is empty; pass the text to look for".into(),
        ));
    }
    if limit == 0 {
        return Err(CallError::InvalidArgument(
            "limit must be at least 1 (at most 1000)".into(),
        ));
    }
    if !root.is_dir() {
        return Err(CallError::NotFound(format!(
            "the project root {} no longer exists",
            root.display()
        )));
    }
    let limit = limit.min(MAX_MATCHES) as usize;
    let started = Instant::now();
    let mut out = TextMatches {
        matches: Vec::new(),
        files_searched: 0,
        stopped_early: false,
    };
    // Hidden files and what .gitignore excludes are skipped, in a repository or not;
    // sorted by name so pages are stable.
    // The engine's walk: ignore files are read through its gate (a FIFO named
    // `.gitignore` would block the `ignore` crate's own reading).
    let walker = scryer_engine::walk::builder(root, |_| false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if out.files_searched >= MAX_GREP_FILES || started.elapsed() > GREP_DEADLINE {
            out.stopped_early = true;
            break;
        }
        if entry
            .metadata()
            .map_or(true, |m| m.len() > MAX_GREP_FILE_BYTES)
        {
            continue;
        }
        let Ok(bytes) = scryer_engine::safe_fs::read_regular(entry.path(), MAX_GREP_FILE_BYTES)
        else {
            continue;
        };
        // Binary files (a NUL early on) and non-UTF-8 files are not text.
        if bytes.iter().take(8192).any(|&b| b == 0) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        out.files_searched += 1;
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        for (i, line) in text.lines().enumerate() {
            if line.to_lowercase().contains(&needle) {
                if out.matches.len() == limit {
                    out.stopped_early = true;
                    return Ok(out);
                }
                out.matches.push(TextMatch {
                    path: rel.clone(),
                    line: i as u32 + 1,
                    text: clip(line),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("README.md"), "# Demo\n\nA café for crates.\n").unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/lib.rs"),
            "// TODO: wire\nfn main() {}\n// todo later\n",
        )
        .unwrap();
        std::fs::write(root.join("blob.bin"), b"todo\0\x01\x02").unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir(root.join("target")).unwrap();
        std::fs::write(root.join("target/out.txt"), "todo in build output\n").unwrap();
        dir
    }

    #[test]
    fn reads_are_capped_whole_characters_and_confined_to_the_root() {
        let dir = tree();
        let root = dir.path();
        assert_eq!(
            read_text(root, "README.md", 1000).unwrap().unwrap(),
            "# Demo\n\nA café for crates.\n"
        );
        // "é" is two bytes: a cut between them keeps only what is whole.
        let cut = read_text(root, "README.md", 13).unwrap().unwrap();
        assert_eq!(cut, "# Demo\n\nA caf");
        assert_eq!(read_text(root, "NOPE.md", 10).unwrap(), None);
        assert!(matches!(
            read_text(root, "../etc/passwd", 10),
            Err(CallError::InvalidArgument(m)) if m.contains("outside")
        ));
        assert!(matches!(
            read_text(root, "src", 10),
            Err(CallError::InvalidArgument(m)) if m.contains("directory")
        ));
        assert!(matches!(
            read_text(root, "README.md", 0),
            Err(CallError::InvalidArgument(_))
        ));
    }

    #[test]
    fn grep_is_case_insensitive_skips_binary_and_ignored_files_and_stops_at_the_limit() {
        let dir = tree();
        let all = grep(dir.path(), "TODO", 10).unwrap();
        let got: Vec<(&str, u32)> = all
            .matches
            .iter()
            .map(|m| (m.path.as_str(), m.line))
            .collect();
        assert_eq!(got, [("src/lib.rs", 1), ("src/lib.rs", 3)]);
        assert!(!all.stopped_early);
        let one = grep(dir.path(), "todo", 1).unwrap();
        assert_eq!(one.matches.len(), 1);
        assert!(one.stopped_early);
        assert!(
            grep(dir.path(), "absent words", 5)
                .unwrap()
                .matches
                .is_empty()
        );
        assert!(matches!(
            grep(dir.path(), "  ", 5),
            Err(CallError::InvalidArgument(_))
        ));
    }
}
