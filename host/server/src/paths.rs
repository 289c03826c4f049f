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

/// `raw` relative to `root` without resolving links: where a file that became a link
/// out of the root was, so its stale rows can be dropped. `None` if it climbs out.
pub fn lexical_relative(root: &Path, raw: &str) -> Option<String> {
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
