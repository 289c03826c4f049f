//! `affected_paths`: the globs a decision names, and whether they cover a path.
//!
//! Semantics: case-insensitive, `*` and `?` never cross `/`, `**` spans directories. A
//! bare entry (no glob characters) names a file or a directory: `foo/bar` matches
//! `foo/bar` and everything under it. A `dir/**` entry also matches `dir` itself, so a
//! question about the directory finds the decision about its contents.

use globset::{GlobBuilder, GlobMatcher};

const GLOB_CHARS: &[char] = &['*', '?', '[', ']', '{', '}'];

/// One `affected_paths` entry, compiled.
#[derive(Clone, Debug)]
pub struct PathGlob {
    /// The entry as written (trimmed).
    pub raw: String,
    matchers: Vec<GlobMatcher>,
    /// The literal directories before the first glob character, lower-case
    /// (`src/net/client` for `src/net/client/**`).
    literal_prefix: String,
    /// Path segments that are not `**`: how specific the entry is.
    pub segments: usize,
}

/// Makes `raw` a project-relative `/` path: trims, drops `./` and a leading or trailing
/// `/`. `None` when nothing is left or the path climbs out with `..`.
pub fn normalize_path(raw: &str) -> Option<String> {
    let mut p = raw.trim().replace('\\', "/");
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.to_string();
    }
    let p = p.trim_matches('/');
    let parts: Vec<&str> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

impl PathGlob {
    /// Compiles one entry; the error says what is wrong with it.
    pub fn new(raw: &str) -> Result<PathGlob, String> {
        let trimmed = raw.trim();
        let Some(norm) = normalize_path(trimmed) else {
            return Err(format!(
                "affected path {trimmed:?} is not a project-relative path (empty, or climbing out with `..`)"
            ));
        };
        let mut patterns = Vec::new();
        if norm.contains(GLOB_CHARS) {
            patterns.push(norm.clone());
            if let Some(dir) = norm.strip_suffix("/**")
                && !dir.contains(GLOB_CHARS)
            {
                patterns.push(dir.to_string());
            }
        } else {
            patterns.push(norm.clone());
            patterns.push(format!("{norm}/**"));
        }
        let matchers = patterns
            .iter()
            .map(|p| {
                GlobBuilder::new(p)
                    .case_insensitive(true)
                    .literal_separator(true)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| format!("affected path {trimmed:?} is not a valid glob: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let literal: Vec<&str> = norm
            .split('/')
            .take_while(|seg| !seg.contains(GLOB_CHARS))
            .collect();
        Ok(PathGlob {
            raw: trimmed.to_string(),
            matchers,
            literal_prefix: literal.join("/").to_lowercase(),
            segments: norm.split('/').filter(|s| *s != "**").count(),
        })
    }

    /// Whether the entry matches `path` (normalized, project-relative).
    pub fn covers(&self, path: &str) -> bool {
        self.matchers.iter().any(|m| m.is_match(path))
    }

    /// Whether `dir` is a directory holding what the entry names
    /// (`src/net` holds `src/net/client/**`).
    pub fn inside(&self, dir: &str) -> bool {
        let d = dir.to_lowercase();
        self.literal_prefix.len() > d.len()
            && self.literal_prefix.starts_with(&d)
            && self.literal_prefix.as_bytes()[d.len()] == b'/'
    }

    /// The nearest directory above `path` that the entry matches.
    pub fn covered_ancestor<'p>(&self, path: &'p str) -> Option<&'p str> {
        let mut at = path;
        while let Some(i) = at.rfind('/') {
            at = &at[..i];
            if self.covers(at) {
                return Some(at);
            }
        }
        None
    }

    /// The specificity bonus: 0.2 per segment other than `**`, at most 1.
    pub fn specificity(&self) -> f64 {
        (0.2 * self.segments as f64).min(1.0)
    }
}

/// How a decision's globs relate to a path.
#[derive(Clone, Debug, PartialEq)]
pub enum Relation {
    /// A glob matches the path itself.
    Covers,
    /// A glob matches a directory above the path (the directory is named).
    Ancestor(String),
    /// The path is a directory holding what a glob names.
    Holds,
}

/// The strongest relation between `globs` and `path`, with the glob that gives it:
/// covers, then ancestor, then holds; among equals the most specific glob.
pub fn relate<'g>(globs: &'g [PathGlob], path: &str) -> Option<(Relation, &'g PathGlob)> {
    let rank = |r: &Relation| match r {
        Relation::Covers => 3,
        Relation::Ancestor(_) => 2,
        Relation::Holds => 1,
    };
    globs
        .iter()
        .filter_map(|g| {
            let rel = if g.covers(path) {
                Relation::Covers
            } else if let Some(dir) = g.covered_ancestor(path) {
                Relation::Ancestor(dir.to_string())
            } else if g.inside(path) {
                Relation::Holds
            } else {
                return None;
            };
            Some((rel, g))
        })
        .max_by_key(|(r, g)| (rank(r), g.segments))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> PathGlob {
        PathGlob::new(s).unwrap()
    }

    #[test]
    fn a_bare_entry_is_the_path_and_everything_under_it() {
        let e = g("foo/bar");
        assert!(e.covers("foo/bar"));
        assert!(e.covers("foo/bar/baz.rs"));
        assert!(e.covers("foo/bar/deep/er/x.rs"));
        assert!(!e.covers("foo/barn"));
        assert!(!e.covers("foo/barn/x.rs"));
        assert!(!e.covers("foo"));
        assert!(g("./foo/bar/").covers("foo/bar/x"));
    }

    #[test]
    fn a_star_stays_in_its_directory_and_double_star_does_not() {
        let star = g("src/*.rs");
        assert!(star.covers("src/lib.rs"));
        assert!(!star.covers("src/net/client.rs"));
        let deep = g("src/**/*.rs");
        assert!(deep.covers("src/net/client.rs"));
        assert!(deep.covers("src/lib.rs"));
        let dir = g("src/net/**");
        assert!(dir.covers("src/net"), "dir/** also names the directory");
        assert!(dir.covers("src/net/a/b.rs"));
        assert!(!dir.covers("src/network/a.rs"));
    }

    #[test]
    fn matching_ignores_case() {
        assert!(g("Host/DB/**").covers("host/db/src/lib.rs"));
        assert!(g("host/db").covers("HOST/DB/x.rs"));
    }

    #[test]
    fn relations_rank_covers_then_ancestor_then_holds() {
        let globs = vec![
            g("host/*"),
            g("host/db/src/schema.rs"),
            g("src/net/client/**"),
        ];
        let (r, which) = relate(&globs, "host/db/src/schema.rs").unwrap();
        assert_eq!(
            (r, which.raw.as_str()),
            (Relation::Covers, "host/db/src/schema.rs")
        );
        let (r, which) = relate(&globs, "host/db/src/lib.rs").unwrap();
        assert_eq!(
            (r, which.raw.as_str()),
            (Relation::Ancestor("host/db".into()), "host/*")
        );
        let (r, _) = relate(&globs, "src/net").unwrap();
        assert_eq!(r, Relation::Holds);
        assert!(relate(&globs, "src/netx").is_none());
        assert!(relate(&globs, "docs/x.md").is_none());
    }

    #[test]
    fn specificity_counts_literal_segments() {
        assert!((g("plugins/**").specificity() - 0.2).abs() < 1e-9);
        assert!((g("host/db/src/schema.rs").specificity() - 0.8).abs() < 1e-9);
        assert!((g("a/b/c/d/e/f").specificity() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn bad_entries_are_refused_with_the_reason() {
        assert!(PathGlob::new("../outside").unwrap_err().contains("`..`"));
        assert!(PathGlob::new("  ").is_err());
        assert!(
            PathGlob::new("src/[a")
                .unwrap_err()
                .contains("not a valid glob")
        );
        assert_eq!(normalize_path("/src//net/./x/"), Some("src/net/x".into()));
    }
}
