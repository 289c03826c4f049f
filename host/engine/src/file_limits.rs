//! Limits on what the host reads from a checkout: every read of a project's files (or a
//! dependency crate's) is capped by one of these, in one place.

/// Largest source file indexed; a larger one is named "too large" in the index facts and
/// not parsed (generated tables, not code anyone navigates).
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;
/// Largest manifest (`Cargo.toml`, `go.mod`), ignore file (`.gitignore`, `.ignore`,
/// `.git/info/exclude`) or Markdown document read.
pub const MAX_TEXT_BYTES: u64 = 1 << 20;
/// Largest `Cargo.lock` read (a large workspace's lock file is a few MiB).
pub const MAX_LOCKFILE_BYTES: u64 = 32 << 20;

/// Deepest bracket nesting (`{`, `(`, `[`) a source file may have. The extractors walk
/// the syntax tree recursively; a hostile file nested 20,000 deep overflowed a 2 MiB
/// worker stack and took the daemon down. Real code stays far below (tokio's deepest is
/// under 40).
pub const MAX_NESTING: usize = 1_000;

/// Whether `source` nests brackets deeper than [`MAX_NESTING`], counted lexically
/// (brackets inside strings count too, which only makes the check stricter).
pub fn too_deeply_nested(source: &str) -> bool {
    let mut depth = 0usize;
    for b in source.bytes() {
        match b {
            b'{' | b'(' | b'[' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return true;
                }
            }
            b'}' | b')' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod nesting_tests {
    use super::*;

    #[test]
    fn nesting_past_the_limit_is_found_and_ordinary_code_passes() {
        let deep = "(".repeat(MAX_NESTING + 1);
        assert!(too_deeply_nested(&deep));
        let ok = "fn f() { g(h([1, 2])) }\n".repeat(10_000);
        assert!(!too_deeply_nested(&ok));
    }
}
