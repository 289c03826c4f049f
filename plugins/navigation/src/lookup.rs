//! Which definitions a written symbol names: shared by `resolve_definition` and
//! `get_type_contract`.
//!
//! A symbol is written as a bare name (`spawn`), `Type::method`, a path
//! (`crate::util::search::Input`, `tokio::sync::Mutex`) or a dotted name (`pkg.mod.Class`).
//! The workspace is asked first (by name, then by qualified-name suffix); only when it
//! has nothing are the locked dependency crates asked. Candidates are ranked so the
//! most likely definition comes first: how exactly the written path matches, then
//! non-test code, then items over modules and fields, then shorter paths.

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::attribution;
use scryer_plugin_sdk::host::{DepSym, Host, Sym};
use scryer_plugin_sdk::{ToolError, ToolResult};
use serde_json::{Value, json};

/// Candidates shown per page of an ambiguous answer.
pub const PAGE: usize = 10;
/// Longest doc line an answer carries (characters).
const DOC_CHARS: usize = 200;

#[derive(Debug)]
pub struct SymbolQuery {
    /// As the agent wrote it.
    pub text: String,
    pub name: String,
    /// Path segments before the name, without a leading `crate`/`self`/`super`.
    pub qualifier: Vec<String>,
    /// Written relative to the current crate (`crate::`, `self::`, `super::`): its first
    /// segment is never a dependency crate's name.
    pub crate_relative: bool,
    pub file_path: Option<String>,
}

impl SymbolQuery {
    /// `qualifier::name`, as a qualified-name suffix.
    pub fn joined(&self) -> String {
        let mut s = self.qualifier.join("::");
        if !s.is_empty() {
            s.push_str("::");
        }
        s.push_str(&self.name);
        s
    }

    pub fn file_note(&self) -> String {
        self.file_path
            .as_ref()
            .map(|f| format!(" in {f}"))
            .unwrap_or_default()
    }
}

pub fn parse_symbol(args: &Args, what: &str) -> ToolResult<SymbolQuery> {
    let text = args.required_str("symbol", what)?;
    let written = attribution::parse_written_symbol("symbol", &text)?;
    let mut segments = written.qualifier;
    let mut crate_relative = false;
    while let Some(first) = segments.first() {
        if matches!(first.as_str(), "crate" | "self" | "super" | "Self") {
            crate_relative = true;
            segments.remove(0);
        } else {
            break;
        }
    }
    let file_path = args.opt_str("file_path")?;
    if let Some(fp) = &file_path {
        check_text("file_path", fp, 4096)?;
    }
    Ok(SymbolQuery {
        text: written.text,
        name: written.name,
        qualifier: segments,
        crate_relative,
        file_path,
    })
}

/// How a definition answers to the written symbol, best first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Match {
    /// The qualified name is what was written.
    Exact,
    /// The qualified name ends with what was written.
    Suffix,
    /// `Type::name` where the definition's owner is `Type`.
    Owner,
    /// The written segments appear in order in the qualified name (a re-exported path:
    /// `tokio::sync::Mutex` for `tokio::sync::mutex::Mutex`).
    InOrder,
    /// Only the name was written (or only the name matched, for a dependency crate).
    Name,
}

fn segments(qn: &str) -> Vec<&str> {
    qn.split("::").filter(|s| !s.is_empty()).collect()
}

pub fn match_of(d: &Sym, q: &SymbolQuery) -> Option<Match> {
    if d.name != q.name {
        return None;
    }
    if q.qualifier.is_empty() {
        return Some(Match::Name);
    }
    let joined = q.joined();
    if d.qualified_name == joined {
        return Some(Match::Exact);
    }
    if d.qualified_name.ends_with(&format!("::{joined}")) {
        return Some(Match::Suffix);
    }
    if q.qualifier.len() == 1 && d.owner.as_deref() == Some(q.qualifier[0].as_str()) {
        return Some(Match::Owner);
    }
    let mut parent = segments(&d.qualified_name);
    parent.pop();
    let mut it = parent.iter();
    if q.qualifier.iter().all(|w| it.any(|p| p == w)) {
        return Some(Match::InOrder);
    }
    None
}

/// Code that exists to test or demonstrate the crate: ranked after the crate's own code.
pub fn is_test_code(d: &Sym) -> bool {
    let f = d.file_path.replace('\\', "/");
    let dirs = [
        "tests", "test", "benches", "examples", "testdata", "fixtures",
    ];
    let in_dir = dirs
        .iter()
        .any(|dir| f.starts_with(&format!("{dir}/")) || f.contains(&format!("/{dir}/")));
    let name = f.rsplit('/').next().unwrap_or("");
    in_dir
        || name.ends_with("_test.go")
        || name.starts_with("test_")
        || name.contains(".test.")
        || name.contains(".spec.")
        || segments(&d.qualified_name)
            .iter()
            .any(|s| *s == "tests" || *s == "test")
}

/// Rust visibility from the signature: public items are what a caller most likely means.
/// 0 `pub`, 1 `pub(crate)` and other restricted forms, 2 private; other languages 0.
fn visibility_rank(d: &Sym) -> u8 {
    if !d.file_path.ends_with(".rs") {
        return 0;
    }
    let sig = d.signature.trim_start();
    if sig.starts_with("pub(") {
        1
    } else if sig.starts_with("pub ") {
        0
    } else {
        2
    }
}

/// Ranking, most likely first: how the path matched, library before test code, for a
/// bare name free items before members (a member is usually written `Type::name`),
/// public before private, items before modules, fields and associated types, shorter
/// paths.
pub fn rank_key(d: &Sym, m: Match) -> (Match, bool, bool, u8, bool, usize, String, u32) {
    (
        m,
        is_test_code(d),
        m == Match::Name && d.owner.is_some(),
        visibility_rank(d),
        matches!(d.kind.as_str(), "module" | "field")
            || (d.kind == "type_alias" && d.owner.is_some()),
        segments(&d.qualified_name).len(),
        d.file_path.clone(),
        d.start_line,
    )
}

/// A definition found for a query: in the workspace, or in a dependency crate.
#[derive(Clone, Debug)]
pub struct Found {
    pub sym: Sym,
    pub matched: Match,
    /// `(crate, version)` for a dependency's definition.
    pub krate: Option<(String, String)>,
}

pub struct Lookup {
    /// Every workspace definition the written symbol names, best first, before
    /// `file_path` narrowing.
    pub workspace: Vec<Found>,
    /// Definitions that share the name but not the written path (for an explanation).
    pub same_name: Vec<Sym>,
}

/// Workspace definitions the query names, ranked.
pub fn workspace(host: &(impl Host + ?Sized), q: &SymbolQuery) -> ToolResult<Lookup> {
    let by_name = host.symbols_by_name(&q.name)?;
    let mut found: Vec<Found> = by_name
        .iter()
        .filter_map(|d| {
            match_of(d, q).map(|m| Found {
                sym: d.clone(),
                matched: m,
                krate: None,
            })
        })
        .collect();
    if found.is_empty() && !q.qualifier.is_empty() {
        // Definitions whose stored name differs from the last segment of their path.
        found = host
            .symbols_by_qualified_name(&q.joined())?
            .into_iter()
            .map(|d| Found {
                sym: d,
                matched: Match::Suffix,
                krate: None,
            })
            .collect();
    }
    narrow_in_order(host, q, &mut found);
    let mut seen = std::collections::HashSet::new();
    found.retain(|f| {
        seen.insert((
            f.sym.file_path.clone(),
            f.sym.start_line,
            f.sym.qualified_name.clone(),
        ))
    });
    found.sort_by_key(|f| rank_key(&f.sym, f.matched));
    let same_name = if found.is_empty() {
        by_name
    } else {
        Vec::new()
    };
    Ok(Lookup {
        workspace: found,
        same_name,
    })
}

/// Several definitions matched only with the written path's segments in order
/// (`tokio::runtime::Runtime`): keep those the path names as a public path, crate first
/// and then the written module's re-export (the SDK's `public_path_matches`), when any.
fn narrow_in_order(host: &(impl Host + ?Sized), q: &SymbolQuery, found: &mut Vec<Found>) {
    if q.crate_relative || found.len() < 2 || found.iter().any(|f| f.matched != Match::InOrder) {
        return;
    }
    let syms: Vec<Sym> = found.iter().map(|f| f.sym.clone()).collect();
    let keep =
        scryer_plugin_sdk::attribution::public_path_matches(host, &q.qualifier, &q.name, &syms);
    if !keep.is_empty() && keep.len() < found.len() {
        let mut i = 0;
        found.retain(|_| {
            i += 1;
            keep.contains(&(i - 1))
        });
    }
}

pub struct DepLookup {
    pub found: Vec<Found>,
    pub notes: Vec<String>,
}

fn dep_found(d: DepSym, m: Match) -> Found {
    Found {
        sym: d.symbol,
        matched: m,
        krate: Some((d.crate_name, d.crate_version)),
    }
}

/// Definitions in the project's locked dependency crates. The dependency index may be
/// unavailable (not built, or the host cannot answer yet): that is "no hit" plus a note,
/// never a failed call.
pub fn dependencies(host: &(impl Host + ?Sized), q: &SymbolQuery) -> DepLookup {
    let mut notes = Vec::new();
    let unavailable = |e: ToolError| {
        format!(
            "the dependency index could not be searched ({}); only the workspace was",
            e.message
        )
    };
    let mut found: Vec<Found> = Vec::new();
    // `tokio::sync::Mutex`: the first segment may name a locked crate.
    if let Some(first) = q.qualifier.first().filter(|_| !q.crate_relative) {
        let mut spellings = vec![first.clone()];
        if first.contains('_') {
            spellings.push(first.replace('_', "-"));
        }
        for krate in &spellings {
            match host.dependency_symbols_by_name(&q.name, Some(krate)) {
                Ok(hits) if !hits.is_empty() => {
                    let (exact, rest): (Vec<_>, Vec<_>) = hits
                        .into_iter()
                        .map(|d| (match_of(&d.symbol, q), d))
                        .partition(|(m, _)| m.is_some());
                    if exact.is_empty() {
                        notes.push(format!(
                            "no definition in crate `{krate}` has the path `{}`; these are the definitions named `{}` in it",
                            q.text, q.name
                        ));
                        found = rest
                            .into_iter()
                            .map(|(_, d)| dep_found(d, Match::Name))
                            .collect();
                    } else {
                        found = exact
                            .into_iter()
                            .map(|(m, d)| dep_found(d, m.unwrap_or(Match::Name)))
                            .collect();
                    }
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    notes.push(unavailable(e));
                    return DepLookup {
                        found: Vec::new(),
                        notes,
                    };
                }
            }
        }
    }
    if found.is_empty() {
        match host.dependency_symbols_by_name(&q.name, None) {
            Ok(hits) => {
                found = hits
                    .into_iter()
                    .filter_map(|d| match_of(&d.symbol, q).map(|m| dep_found(d, m)))
                    .collect();
            }
            Err(e) => notes.push(unavailable(e)),
        }
    }
    found.sort_by_key(|f| rank_key(&f.sym, f.matched));
    DepLookup { found, notes }
}

/// The first non-empty line of a docstring, trimmed and clipped.
pub fn first_doc_line(doc: Option<&str>) -> Option<String> {
    let line = doc?.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(clip(line, DOC_CHARS))
}

pub fn clip(s: &str, max_chars: usize) -> String {
    if s.chars().count() > max_chars {
        format!("{}…", s.chars().take(max_chars).collect::<String>())
    } else {
        s.to_string()
    }
}

/// How much of each definition an answer shows; shed from the most to the least
/// detailed to fit a budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Detail {
    Full,
    NoDocs,
    Bare,
}

pub fn found_json(f: &Found, detail: Detail) -> Value {
    let d = &f.sym;
    let mut v = json!({
        "qualified_name": d.qualified_name,
        "kind": d.kind,
        "file_path": d.file_path,
        "start_line": d.start_line,
        "end_line": d.end_line,
    });
    if detail < Detail::Bare && !d.signature.is_empty() {
        v["signature"] = json!(d.signature);
    }
    if detail == Detail::Full
        && let Some(doc) = first_doc_line(d.docstring.as_deref())
    {
        v["doc"] = json!(doc);
    }
    if let Some((krate, version)) = &f.krate {
        v["crate"] = json!(krate);
        v["crate_version"] = json!(version);
    }
    v
}

/// A short `qualified_name (file:line)` list for notes.
pub fn locations(defs: &[Sym], max: usize) -> String {
    let mut parts: Vec<String> = defs
        .iter()
        .take(max)
        .map(|d| format!("{} ({}:{})", d.qualified_name, d.file_path, d.start_line))
        .collect();
    if defs.len() > max {
        parts.push(format!("{} more", defs.len() - max));
    }
    parts.join(", ")
}

/// Why nothing was found, for an answer that has no definition: the name is unknown,
/// or is only used (defined outside what is indexed), and whether the index is partial.
pub fn unknown_name_reason(
    host: &(impl Host + ?Sized),
    q: &SymbolQuery,
    project: &str,
    same_name: &[Sym],
    dep_notes: &[String],
) -> String {
    if !same_name.is_empty() {
        format!(
            "no definition matches `{}`; `{}` is defined {} time(s) under other paths: {}",
            q.text,
            q.name,
            same_name.len(),
            locations(same_name, 5)
        )
    } else {
        let facts = host.index_facts().ok();
        let uses = host
            .references_to_name(&q.name, false)
            .map(|s| s.len())
            .unwrap_or(0);
        let searched = if dep_notes.is_empty() {
            "or its locked dependencies"
        } else {
            "(dependencies could not be searched)"
        };
        let mut s = format!(
            "unknown name: no definition of `{}` in {project}{} {searched}",
            q.text,
            facts
                .as_ref()
                .map(|f| format!(" ({} files indexed)", f.files))
                .unwrap_or_default()
        );
        if uses > 0 {
            s.push_str(&format!(
                "; `{}` is used {uses} time(s), so it is defined outside the index (std, a macro, or generated code)",
                q.name
            ));
        } else {
            s.push_str("; check the spelling, or run index_workspace if the code is new");
        }
        if let Some(f) = facts {
            if f.indexed_at.is_none() {
                s.push_str("; the index is not complete yet, so it may still appear");
            } else if f.parse_failures > 0 {
                s.push_str(&format!(
                    "; {} file(s) could only partly be parsed, so it may be defined in one of them",
                    f.parse_failures
                ));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> SymbolQuery {
        parse_symbol(
            &Args::parse(&json!({"symbol": text}).to_string()).unwrap(),
            "x",
        )
        .unwrap()
    }

    fn def(qn: &str, owner: Option<&str>) -> Sym {
        Sym {
            name: qn.rsplit("::").next().unwrap().into(),
            kind: "method".into(),
            qualified_name: qn.into(),
            owner: owner.map(Into::into),
            file_path: "src/a.rs".into(),
            start_line: 1,
            end_line: 2,
            ..Sym::default()
        }
    }

    #[test]
    fn written_forms_are_normalised() {
        let a = q("crate::util::describe");
        assert_eq!(
            (a.name.as_str(), a.qualifier.clone()),
            ("describe", vec!["util".to_string()])
        );
        assert!(a.crate_relative);
        let b = q("pkg.mod.Class.method()");
        assert_eq!(b.joined(), "pkg::mod::Class::method");
        assert!(!b.crate_relative);
        assert_eq!(q("Vec<T>::new").joined(), "Vec::new");
        let bad = parse_symbol(&Args::parse(r#"{"symbol":"a::b-c"}"#).unwrap(), "x")
            .unwrap_err()
            .message;
        assert!(
            bad.contains("not an identifier") && bad.contains("accepted"),
            "{bad}"
        );
        let empty = parse_symbol(&Args::parse(r#"{"symbol":"::"}"#).unwrap(), "x")
            .unwrap_err()
            .message;
        assert!(empty.contains("holds no name"), "{empty}");
    }

    #[test]
    fn matches_are_graded_from_exact_to_in_order() {
        let d = def("tokio::sync::mutex::Mutex", None);
        assert_eq!(
            match_of(&d, &q("tokio::sync::mutex::Mutex")),
            Some(Match::Exact)
        );
        assert_eq!(match_of(&d, &q("mutex::Mutex")), Some(Match::Suffix));
        assert_eq!(match_of(&d, &q("tokio::sync::Mutex")), Some(Match::InOrder));
        assert_eq!(match_of(&d, &q("Mutex")), Some(Match::Name));
        assert_eq!(match_of(&d, &q("std::Mutex")), None);
        assert_eq!(match_of(&d, &q("Lock")), None);
        let m = def("k::other::Circle::area", Some("Circle"));
        assert_eq!(match_of(&m, &q("Circle::area")), Some(Match::Suffix));
        assert_eq!(match_of(&m, &q("Square::area")), None);
    }

    #[test]
    fn test_code_ranks_after_library_code() {
        let mut lib = def("k::a::run", None);
        lib.file_path = "src/a.rs".into();
        let mut test = def("k::tests::run", None);
        test.file_path = "tests/run.rs".into();
        assert!(is_test_code(&test) && !is_test_code(&lib));
        assert!(rank_key(&lib, Match::Name) < rank_key(&test, Match::Name));
        let mut public = def("k::a::Handle", None);
        public.signature = "pub struct Handle".into();
        public.file_path = "src/z.rs".into();
        let mut internal = def("k::b::Handle", None);
        internal.signature = "pub(crate) struct Handle".into();
        assert!(rank_key(&public, Match::Name) < rank_key(&internal, Match::Name));
        // A bare name: the free function before a method of that name.
        let mut free = def("k::search::gave_up", None);
        free.signature = "fn gave_up(offset: usize) -> MatchError".into();
        let mut method = def("k::util::MatchError::gave_up", Some("MatchError"));
        method.signature = "pub fn gave_up(offset: usize) -> MatchError".into();
        assert!(rank_key(&free, Match::Name) < rank_key(&method, Match::Name));
    }
}
