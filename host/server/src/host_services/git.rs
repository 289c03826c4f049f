//! The `git` interface (WIT 0.2, capability `git-read`): a project's branch, recent
//! commits and uncommitted files, read live with the `git` command on every call.
//!
//! The `git` CLI rather than a library: it is on every machine that has repositories,
//! reads every repository format and extension the user's git reads, and adds no
//! dependency to the host (gix is not in the tree). It runs without a shell, with
//! `-C root`, under a timeout, and with the settings that could make a read start
//! another program or write (fsmonitor hooks, optional index locks, signature checks)
//! switched off: a registered project is not necessarily trusted.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, ChangedFile, Commit, RepoState};

use super::{HostImpl, internal};

/// Most commits and changed files one call returns, whatever the router asks.
pub(crate) const MAX_COMMITS: u32 = 100;
pub(crate) const MAX_CHANGES: u32 = 500;
/// Wall time one git command may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(10);

impl HostImpl {
    pub(super) fn git_state_of(
        &self,
        scope: &CallScope,
        selector: Option<&str>,
        commit_limit: u32,
        change_limit: u32,
    ) -> Result<Option<RepoState>, CallError> {
        let root = match selector {
            Some(sel) => self.project_by_selector(sel)?.root,
            None => self.project(scope)?.root.clone(),
        };
        repo_state(
            Path::new(&root),
            commit_limit.min(MAX_COMMITS),
            change_limit.min(MAX_CHANGES),
        )
    }

    /// The project a selector (slug, id or root path) names, or an error listing the
    /// registered ones.
    pub(super) fn project_by_selector(
        &self,
        selector: &str,
    ) -> Result<scryer_db::ProjectRow, CallError> {
        self.block(self.core.projects.db().project_by_selector(selector))
            .map_err(internal)?
            .ok_or_else(|| CallError::NotFound(self.core.unknown_project_message(selector)))
    }
}

/// The state of the work tree at `root`, or `None` when `root` is not in one.
pub(crate) fn repo_state(
    root: &Path,
    commit_limit: u32,
    change_limit: u32,
) -> Result<Option<RepoState>, CallError> {
    if !root.is_dir() {
        return Err(CallError::NotFound(format!(
            "the project root {} no longer exists",
            root.display()
        )));
    }
    let status = match run_git(
        root,
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--untracked-files=normal",
            "--ignore-submodules=all",
        ],
    )? {
        GitOutput::Ok(out) => parse_status(&out),
        GitOutput::NotARepo => return Ok(None),
    };
    let (commits, last_commit_ms) = match &status.head {
        None => (Vec::new(), None),
        Some(_) => {
            // One commit at least, for the time of the last one.
            let n = commit_limit.max(1).to_string();
            let out = match run_git(
                root,
                &[
                    "log",
                    "-n",
                    &n,
                    "--no-show-signature",
                    "--no-color",
                    "--format=%H%x1f%ct%x1f%an%x1f%s%x1e",
                    "HEAD",
                    "--",
                ],
            )? {
                GitOutput::Ok(out) => out,
                GitOutput::NotARepo => return Ok(None),
            };
            let mut commits = parse_log(&out);
            let last = commits.first().map(|c| c.time_ms);
            commits.truncate(commit_limit as usize);
            (commits, last)
        }
    };
    let changes_total = status.changes.len() as u32;
    let untracked_total = status
        .changes
        .iter()
        .filter(|c| c.change == "untracked")
        .count() as u32;
    let mut changes = status.changes;
    changes.truncate(change_limit as usize);
    Ok(Some(RepoState {
        branch: status.branch,
        head: status.head,
        last_commit_ms,
        commits,
        changes,
        changes_total,
        untracked_total,
    }))
}

enum GitOutput {
    Ok(Vec<u8>),
    NotARepo,
}

/// Runs `git -C root <args>` with no shell, no prompts, no optional locks and no
/// fsmonitor, under [`GIT_TIMEOUT`].
fn run_git(root: &Path, args: &[&str]) -> Result<GitOutput, CallError> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        // A repository's config may name an fsmonitor program; reading must not run it.
        .args(["-c", "core.fsmonitor=false", "--no-optional-locks"])
        .args(args)
        .env("LC_ALL", "C")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CallError::Internal(
                    "the `git` command is not installed on the host (git-read runs it)".into(),
                )
            } else {
                CallError::Internal(format!("starting git: {e}"))
            }
        })?;
    // Drain both pipes on threads so a large status cannot block git on a full pipe.
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > GIT_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(CallError::Internal(format!(
                    "git {} in {} took longer than {GIT_TIMEOUT:?} and was stopped",
                    args[0],
                    root.display()
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(CallError::Internal(format!("waiting for git: {e}"))),
        }
    };
    let stdout = out
        .join()
        .map_err(|_| CallError::Internal("reading git's output failed".into()))?
        .map_err(|e| CallError::Internal(format!("reading git's output: {e}")))?;
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    if status.success() {
        return Ok(GitOutput::Ok(stdout));
    }
    if stderr.contains("not a git repository") {
        return Ok(GitOutput::NotARepo);
    }
    Err(CallError::Internal(format!(
        "git {} in {} failed: {}",
        args[0],
        root.display(),
        stderr.trim()
    )))
}

struct Status {
    branch: Option<String>,
    head: Option<String>,
    changes: Vec<ChangedFile>,
}

/// Parses `git status --porcelain=v2 --branch -z`: headers, then one record per changed
/// path (renames and copies carry their original path as the next record). Tracked
/// changes come first, then untracked files, each in git's order.
fn parse_status(out: &[u8]) -> Status {
    let text = String::from_utf8_lossy(out);
    let mut records = text.split('\0').filter(|r| !r.is_empty());
    let mut branch = None;
    let mut head = None;
    let mut tracked = Vec::new();
    let mut untracked = Vec::new();
    while let Some(record) = records.next() {
        if let Some(header) = record.strip_prefix("# ") {
            if let Some(oid) = header.strip_prefix("branch.oid ") {
                head = (oid != "(initial)").then(|| oid.to_string());
            } else if let Some(name) = header.strip_prefix("branch.head ") {
                branch = (name != "(detached)").then(|| name.to_string());
            }
            continue;
        }
        let (kind, rest) = record.split_at(1.min(record.len()));
        let rest = rest.strip_prefix(' ').unwrap_or(rest);
        // Fields before the path: XY sub mH mI mW hH hI (+ a score for renames, + a third
        // mode and hash for conflicts).
        let (fields_before_path, conflicted) = match kind {
            "1" => (7, false),
            "2" => (8, false),
            "u" => (9, true),
            "?" => {
                untracked.push(ChangedFile {
                    path: rest.to_string(),
                    change: "untracked".into(),
                    staged: false,
                });
                continue;
            }
            _ => continue, // `!` (ignored) is not asked for; anything else is unknown.
        };
        let mut parts = rest.splitn(fields_before_path + 1, ' ');
        let xy = parts.next().unwrap_or("..");
        let Some(path) = parts.nth(fields_before_path - 1) else {
            continue;
        };
        if kind == "2" {
            records.next(); // the original path of a rename or copy
        }
        let mut codes = xy.chars();
        let (x, y) = (codes.next().unwrap_or('.'), codes.next().unwrap_or('.'));
        let staged = x != '.';
        let code = if conflicted {
            'U'
        } else if staged {
            x
        } else {
            y
        };
        tracked.push(ChangedFile {
            path: path.to_string(),
            change: change_name(code).into(),
            staged: staged && !conflicted,
        });
    }
    tracked.extend(untracked);
    Status {
        branch,
        head,
        changes: tracked,
    }
}

fn change_name(code: char) -> &'static str {
    match code {
        'A' => "added",
        'D' => "deleted",
        'R' => "renamed",
        'C' => "copied",
        'T' => "type-changed",
        'U' => "conflicted",
        _ => "modified",
    }
}

/// Parses `git log --format=%H%x1f%ct%x1f%an%x1f%s%x1e`.
fn parse_log(out: &[u8]) -> Vec<Commit> {
    String::from_utf8_lossy(out)
        .split('\x1e')
        .filter_map(|record| {
            let mut f = record.trim_start_matches('\n').split('\x1f');
            let hash = f.next()?.trim();
            let seconds: i64 = f.next()?.trim().parse().ok()?;
            let author = f.next()?.to_string();
            let subject = f.next().unwrap_or("").trim_end().to_string();
            (!hash.is_empty()).then(|| Commit {
                hash: hash.to_string(),
                time_ms: seconds * 1000,
                author,
                subject,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_become_changes_tracked_first() {
        let out = b"# branch.oid 1234abcd\0# branch.head main\0\
? notes.txt\0\
1 .M N... 100644 100644 100644 aaa aaa src/lib.rs\0\
1 A. N... 000000 100644 100644 000 bbb new file.rs\0\
2 R. N... 100644 100644 100644 ccc ccc R100 renamed.rs\0old.rs\0\
u UU N... 100644 100644 100644 100644 d e f both.rs\0";
        let s = parse_status(out);
        assert_eq!(s.branch.as_deref(), Some("main"));
        assert_eq!(s.head.as_deref(), Some("1234abcd"));
        let got: Vec<(&str, &str, bool)> = s
            .changes
            .iter()
            .map(|c| (c.path.as_str(), c.change.as_str(), c.staged))
            .collect();
        assert_eq!(
            got,
            [
                ("src/lib.rs", "modified", false),
                ("new file.rs", "added", true),
                ("renamed.rs", "renamed", true),
                ("both.rs", "conflicted", false),
                ("notes.txt", "untracked", false),
            ]
        );
    }

    #[test]
    fn a_repository_without_commits_or_branch_has_neither() {
        let s = parse_status(b"# branch.oid (initial)\0# branch.head (detached)\0");
        assert_eq!((s.branch, s.head), (None, None));
        assert!(s.changes.is_empty());
    }

    #[test]
    fn log_records_parse_with_times_in_milliseconds() {
        let out = b"aaa\x1f1700000000\x1fAda\x1fFirst line\x1e\nbbb\x1f1600000000\x1fBob\x1f\x1e\n";
        let commits = parse_log(out);
        assert_eq!(commits.len(), 2);
        assert_eq!(commits[0].hash, "aaa");
        assert_eq!(commits[0].time_ms, 1_700_000_000_000);
        assert_eq!(commits[0].subject, "First line");
        assert_eq!(commits[1].author, "Bob");
        assert_eq!(commits[1].subject, "");
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.com")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_real_repository_reports_branch_commits_and_dirty_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(repo_state(root, 5, 5).unwrap().is_none(), "not a repo yet");
        git(root, &["init", "-q", "-b", "trunk"]);
        let fresh = repo_state(root, 5, 5).unwrap().unwrap();
        assert_eq!(fresh.branch.as_deref(), Some("trunk"));
        assert!(fresh.head.is_none() && fresh.commits.is_empty());
        std::fs::write(root.join("a.txt"), "one\n").unwrap();
        git(root, &["add", "a.txt"]);
        git(root, &["commit", "-q", "-m", "first"]);
        std::fs::write(root.join("a.txt"), "two\n").unwrap();
        git(root, &["commit", "-q", "-am", "second"]);
        std::fs::write(root.join("a.txt"), "three\n").unwrap();
        std::fs::write(root.join("b.txt"), "new\n").unwrap();
        std::fs::write(root.join("c.txt"), "new\n").unwrap();
        let s = repo_state(root, 1, 2).unwrap().unwrap();
        assert_eq!(s.commits.len(), 1);
        assert_eq!(s.commits[0].subject, "second");
        assert_eq!(s.commits[0].author, "Ada");
        assert_eq!(s.last_commit_ms, Some(s.commits[0].time_ms));
        assert_eq!(s.head.as_deref(), Some(s.commits[0].hash.as_str()));
        assert_eq!((s.changes_total, s.untracked_total), (3, 2));
        assert_eq!(s.changes.len(), 2, "capped at the limit");
        assert_eq!(s.changes[0].path, "a.txt");
        assert_eq!(s.changes[0].change, "modified");
        let none = repo_state(root, 0, 0).unwrap().unwrap();
        assert!(none.commits.is_empty() && none.changes.is_empty());
        assert!(
            none.last_commit_ms.is_some(),
            "the time is read even with no commits asked"
        );
    }

    #[test]
    fn a_missing_root_is_not_found() {
        let e = repo_state(Path::new("/nonexistent/scryer-root"), 1, 1).unwrap_err();
        assert!(matches!(e, CallError::NotFound(m) if m.contains("no longer exists")));
    }
}
