//! The one walk over a project (or crate) directory, shared by indexing and the watcher.
//!
//! Hidden entries and dependency/build directories are skipped; `.gitignore`, `.ignore`
//! and `.git/info/exclude` are honoured, but read by this module through
//! [`crate::safe_fs`] (capped, regular files only) rather than by the `ignore` crate, which
//! would open a FIFO named `.gitignore` and block the walk. Links are never followed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::file_limits::MAX_TEXT_BYTES;
use crate::safe_fs::read_text;

/// Ignore files read in every directory, lowest precedence first.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// The ignore rules of each directory under a root, read once each.
struct Rules {
    root: PathBuf,
    per_dir: Mutex<HashMap<PathBuf, Option<Arc<Gitignore>>>>,
}

impl Rules {
    fn matcher(&self, dir: &Path) -> Option<Arc<Gitignore>> {
        let mut cache = self.per_dir.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = cache.get(dir) {
            return m.clone();
        }
        let mut builder = GitignoreBuilder::new(dir);
        let mut any = false;
        let exclude = (dir == self.root).then(|| dir.join(".git/info/exclude"));
        let files = exclude
            .into_iter()
            .chain(IGNORE_FILES.iter().map(|n| dir.join(n)));
        for file in files {
            if let Ok(text) = read_text(&file, MAX_TEXT_BYTES) {
                for line in text.lines() {
                    any |= builder.add_line(Some(file.clone()), line).is_ok();
                }
            }
        }
        let built = any.then(|| builder.build().ok().map(Arc::new)).flatten();
        cache.insert(dir.to_path_buf(), built.clone());
        built
    }

    /// Whether `path` is ignored: the nearest directory whose rules decide, decides.
    fn ignored(&self, path: &Path, is_dir: bool) -> bool {
        let mut dir = path.parent();
        while let Some(d) = dir {
            if !d.starts_with(&self.root) {
                break;
            }
            if let Some(m) = self.matcher(d) {
                match m.matched(path, is_dir) {
                    Match::Ignore(_) => return true,
                    Match::Whitelist(_) => return false,
                    Match::None => {}
                }
            }
            dir = d.parent();
        }
        false
    }
}

/// Walks `root` (already resolved): hidden entries, directories `skip_dir` refuses (given
/// the path relative to the root) and ignored entries are left out; links are listed as
/// links, never followed.
pub fn walker(root: &Path, skip_dir: fn(&Path) -> bool) -> ignore::Walk {
    builder(root, skip_dir).build()
}

/// The builder behind [`walker`], for callers that add an order.
pub fn builder(root: &Path, skip_dir: fn(&Path) -> bool) -> ignore::WalkBuilder {
    let rules = Rules {
        root: root.to_path_buf(),
        per_dir: Mutex::new(HashMap::new()),
    };
    let root_owned = root.to_path_buf();
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(true)
        .git_ignore(false)
        .git_exclude(false)
        .ignore(false)
        .parents(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            if e.depth() == 0 {
                return true;
            }
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if is_dir && e.path().strip_prefix(&root_owned).is_ok_and(skip_dir) {
                return false;
            }
            !rules.ignored(e.path(), is_dir)
        });
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_files_are_honoured_without_the_ignore_crate_opening_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/gen")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\ngen/\n").unwrap();
        std::fs::write(root.join("a/.gitignore"), "!keep.log\n").unwrap();
        for f in ["x.log", "a/keep.log", "a/y.log", "a/gen/z.rs", "a/b.rs"] {
            std::fs::write(root.join(f), "").unwrap();
        }
        // A FIFO named like an ignore file is skipped, not opened (the walk would block).
        let fifo = std::ffi::CString::new(root.join("a/.ignore").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let mut seen: Vec<String> = walker(&root, |_| false)
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
            .map(|e| e.path().strip_prefix(&root).unwrap().display().to_string())
            .collect();
        seen.sort();
        assert_eq!(seen, ["a/b.rs", "a/keep.log"]);
    }
}
