//! Turning a path an agent sent into a path inside a project, or a clear refusal.

use std::path::{Component, Path, PathBuf};

/// `raw` (absolute, or relative to `root`) as a `/`-separated path relative to `root`.
/// Refuses NUL bytes and anything that leaves the root, lexically or through a symlink.
pub fn project_relative(root: &Path, raw: &str) -> Result<String, String> {
    if raw.contains('\0') {
        return Err("the path contains a NUL byte".into());
    }
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    let candidate = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        root.join(raw)
    };
    let normal = normalize(&candidate)
        .ok_or_else(|| format!("{raw} is outside the project root {}", root.display()))?;
    // Resolve symlinks when the file exists, so a link cannot lead outside the root.
    let resolved = std::fs::canonicalize(&normal).unwrap_or(normal);
    let rel = resolved
        .strip_prefix(root)
        .map_err(|_| format!("{raw} is outside the project root {}", root.display()))?;
    Ok(rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/"))
}

/// How a path argument leads out of a project root.
#[derive(Debug, PartialEq, Eq)]
pub struct Escape {
    /// Where it leads (links resolved when it exists); `None` when it cannot be placed.
    pub resolved: Option<PathBuf>,
    /// How it leads out, in words: "it climbs out with `..`", ...
    pub how: &'static str,
}

/// Whether `raw` (absolute, a `file://` URL, or relative to `root`) names a place inside
/// `root`, lexically and with links resolved; how it leads out otherwise.
pub fn escape(root: &Path, raw: &str) -> Result<(), Escape> {
    if raw.contains('\0') {
        return Err(Escape {
            resolved: None,
            how: "it contains a NUL byte, which no path holds",
        });
    }
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    let absolute = Path::new(raw).is_absolute();
    let Some(normal) = normalize(&root.join(raw)) else {
        return Err(Escape {
            resolved: None,
            how: "it climbs out with `..`",
        });
    };
    let resolved = std::fs::canonicalize(&normal).unwrap_or_else(|_| normal.clone());
    if resolved.starts_with(root) {
        return Ok(());
    }
    let how = if normal.starts_with(root) {
        "it leads out through a link"
    } else if absolute {
        "it is an absolute path elsewhere"
    } else {
        "it climbs out with `..`"
    };
    Err(Escape {
        resolved: Some(resolved),
        how,
    })
}

/// `raw` relative to `root` without resolving links, by its spelling alone: where a file
/// that became a link out of the root was, so its stale rows can be dropped; and a path
/// used only as a key into the index (no file is opened with it). `None` if it climbs
/// out, holds a NUL byte or names the root itself. No file system call: a router asks
/// about each of a common name's thousands of definitions, and resolving each path's
/// links (`project_relative`) was 7 % of a `find_references new` session on the 7.17M-line
/// monorepo (docs/learnings/scale.md, stop 40).
pub fn lexical_relative(root: &Path, raw: &str) -> Option<String> {
    // The common case first: a relative path of plain segments (the index's own key,
    // which routers hand back) is its own answer. Building, normalizing and splitting
    // the joined path made most of the host's time in a `find_references new` call's
    // 7,139 precise look-ups on the monorepo: 1.1-4.9 ms against 0.3-1.7 ms now
    // (docs/learnings/scale.md, stop 44).
    if is_plain_relative(raw) {
        return Some(raw.to_string());
    }
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    let joined = if Path::new(raw).is_absolute() {
        PathBuf::from(raw)
    } else {
        root.join(raw)
    };
    let rel = normalize(&joined)?.strip_prefix(root).ok()?.to_path_buf();
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty() && !raw.contains('\0')).then(|| parts.join("/"))
}

/// A relative path of non-empty segments, none `.` or `..`, with no NUL byte: what
/// [`lexical_relative`] would give back unchanged under any normalized root.
fn is_plain_relative(raw: &str) -> bool {
    !raw.is_empty()
        && !raw.starts_with('/')
        && !raw.contains('\0')
        && raw
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// Lexical normalization: drops `.`, applies `..`; `None` if `..` climbs past `/`.
pub fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_by_its_spelling_never_leaves_the_root() {
        let root = Path::new("/nonexistent-root/proj");
        for (raw, want) in [
            ("src/lib.rs", Some("src/lib.rs")),
            ("./src/../src/lib.rs", Some("src/lib.rs")),
            ("/nonexistent-root/proj/src/a.rs", Some("src/a.rs")),
            ("file:///nonexistent-root/proj/src/a.rs", Some("src/a.rs")),
            ("../proj2/src/a.rs", None),
            ("src/../../proj2/a.rs", None),
            ("/etc/passwd", None),
            ("/nonexistent-root/proj2/a.rs", None),
            ("src/\0lib.rs", None),
            (".", None),
            ("", None),
            ("src//lib.rs", Some("src/lib.rs")),
            ("src/lib.rs/", Some("src/lib.rs")),
            ("src/./lib.rs", Some("src/lib.rs")),
            ("file:relative.rs", Some("file:relative.rs")),
            ("file://relative.rs", Some("relative.rs")),
            ("a b/ü.rs", Some("a b/ü.rs")),
        ] {
            assert_eq!(lexical_relative(root, raw).as_deref(), want, "{raw}");
            if let Some(w) = want {
                // The same key the checked form gives where no link is involved.
                assert_eq!(project_relative(root, raw).unwrap(), w, "{raw}");
            }
        }
    }

    #[test]
    fn relative_and_absolute_paths_inside_the_root() {
        let root = Path::new("/nonexistent-root/proj");
        assert_eq!(project_relative(root, "src/lib.rs").unwrap(), "src/lib.rs");
        assert_eq!(
            project_relative(root, "./src/../src/lib.rs").unwrap(),
            "src/lib.rs"
        );
        assert_eq!(
            project_relative(root, "/nonexistent-root/proj/src/a.rs").unwrap(),
            "src/a.rs"
        );
    }

    #[test]
    fn escapes_say_how_they_lead_out() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("proj");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(base.join("secret.rs"), "").unwrap();
        std::os::unix::fs::symlink(base.join("secret.rs"), root.join("src/out.rs")).unwrap();
        assert_eq!(escape(&root, "src/lib.rs"), Ok(()));
        assert_eq!(escape(&root, "src/new/dir"), Ok(()));
        assert_eq!(escape(&root, root.join("src").to_str().unwrap()), Ok(()));
        let how = |raw: &str| escape(&root, raw).unwrap_err().how;
        assert_eq!(how("../secret.rs"), "it climbs out with `..`");
        assert_eq!(how("src/../../secret.rs"), "it climbs out with `..`");
        assert_eq!(how("src/out.rs"), "it leads out through a link");
        assert_eq!(how("/etc/passwd"), "it is an absolute path elsewhere");
        assert_eq!(
            how("file:///proc/self/environ"),
            "it is an absolute path elsewhere"
        );
        assert_eq!(
            how("src/a\0.rs"),
            "it contains a NUL byte, which no path holds"
        );
    }

    #[test]
    fn escapes_and_nul_bytes_are_refused() {
        let root = Path::new("/nonexistent-root/proj");
        assert!(
            project_relative(root, "../../../../etc/passwd")
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            project_relative(root, "/etc/passwd")
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            project_relative(root, "src/\0lib.rs")
                .unwrap_err()
                .contains("NUL")
        );
    }
}
