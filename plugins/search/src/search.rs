//! `search_symbols`: ranked definitions for free text (`query`) or for a symbol's own
//! words (`like_symbol`), in the workspace or in the crates the project locks.
//!
//! The host ranks and pages. A kind filter or the `like_symbol` target (left out of
//! its own results) changes what a page holds, so then this router walks the ranked
//! list in chunks itself and pages what is left.

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::host::{
    Ctx, DepSym, Format, Host, LockedCrate, SearchHit, SearchScope, Sym,
};
use scryer_plugin_sdk::names::{edit_distance, same_crate};
use scryer_plugin_sdk::{ErrorKind, ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::terms::{self, MAX_QUERY_BYTES};

pub const SCOPES: [&str; 2] = ["workspace", "dependencies"];
const SCOPE_ALIASES: &[(&str, &str)] = &[
    ("project", "workspace"),
    ("deps", "dependencies"),
    ("dependency", "dependencies"),
    ("crates", "dependencies"),
];

/// The kinds of definition the index stores (`scryer_engine::model::SymbolKind`; `impl`
/// blocks are not stored as definitions).
pub const KINDS: [&str; 15] = [
    "function",
    "method",
    "struct",
    "enum",
    "variant",
    "trait",
    "const",
    "static",
    "type_alias",
    "module",
    "macro",
    "union",
    "field",
    "class",
    "interface",
];
const KIND_ALIASES: &[(&str, &str)] = &[
    ("fn", "function"),
    ("func", "function"),
    ("type", "type_alias"),
    ("typealias", "type_alias"),
    ("mod", "module"),
    ("constant", "const"),
];

pub const DEFAULT_LIMIT: u32 = 20;
const MAX_LIMIT: i64 = 50;
/// Hits asked of the host at a time while filtering.
const SCAN_CHUNK: u32 = 100;
/// Ranked hits a filtered search looks through at most; past it the kind filter's
/// counts cover only this many (and the answer says so).
const SCAN_CAP: u32 = 2000;
const SIGNATURE_CHARS: usize = 120;
/// Matched terms shown per hit: a `like_symbol` query can match dozens, and past a few
/// they say nothing the score does not.
const TERMS_SHOWN: usize = 8;
/// Longest query echoed in a header or `see_also`.
const ECHO_CHARS: usize = 80;

struct Target {
    sym: Sym,
    crate_name: Option<String>,
    version: Option<String>,
}

enum Subject {
    Query(String),
    Like(Target),
}

struct Request {
    subject: Subject,
    /// The text the host searches for.
    sent: String,
    scope: SearchScope,
    crate_name: Option<String>,
    /// Empty: every kind.
    kinds: Vec<&'static str>,
    offset: u32,
    limit: u32,
    /// As the agent sent it, for `see_also`.
    like_asked: Option<String>,
    notes: Vec<String>,
}

fn preview(text: &str) -> String {
    let head: String = text.chars().take(40).collect();
    if head.len() < text.len() {
        format!("{head:?}…")
    } else {
        format!("{head:?}")
    }
}

fn parse_kinds(args: &Args) -> ToolResult<Vec<&'static str>> {
    let Some(list) = args.opt_str_list("kind")? else {
        return Ok(Vec::new());
    };
    let mut kinds = Vec::new();
    // `["fn, trait"]` arrives when a client wraps a comma list in an array.
    for raw in list
        .iter()
        .flat_map(|k| k.split(','))
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        let lower = raw.to_ascii_lowercase();
        let kind = KINDS
            .iter()
            .find(|k| **k == lower)
            .or_else(|| {
                KIND_ALIASES
                    .iter()
                    .find(|(a, _)| *a == lower)
                    .map(|(_, k)| k)
            })
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "`kind` has {}; accepted: {}",
                    scryer_plugin_sdk::args::shown(raw),
                    KINDS.join(", ")
                ))
            })?;
        if !kinds.contains(kind) {
            kinds.push(*kind);
        }
    }
    Ok(kinds)
}

fn parse<H: Host + ?Sized>(host: &H, args: &Args) -> ToolResult<Request> {
    let query = args.opt_str("query")?;
    let like = args.opt_str("like_symbol")?;
    let scope_arg = args.opt_choice("scope_level", &SCOPES, SCOPE_ALIASES)?;
    let crate_name = args.opt_str("crate_name")?;
    if let Some(c) = &crate_name {
        check_text("crate_name", c, 128)?;
    }
    let scope = match (scope_arg, &crate_name) {
        (Some("workspace"), Some(c)) => {
            return Err(ToolError::invalid(format!(
                "`crate_name` ({c:?}) narrows dependency hits but `scope_level` is workspace; \
                 pass scope_level: \"dependencies\" or drop crate_name"
            )));
        }
        (Some("dependencies"), _) | (None, Some(_)) => SearchScope::Dependencies,
        _ => SearchScope::Workspace,
    };
    let kinds = parse_kinds(args)?;
    let limit = args
        .opt_int("limit", 1, MAX_LIMIT)?
        .map_or(DEFAULT_LIMIT, |n| n as u32);
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as u32;
    let mut notes = Vec::new();
    let (subject, sent, like_asked) = match (query, like) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid(
                "`query` and `like_symbol` exclude each other: pass exactly one (`query` for free \
                 text, `like_symbol` for symbols similar to a named one)",
            ));
        }
        (None, None) => {
            return Err(ToolError::invalid(
                "pass exactly one of `query` (free text: words of names, module paths, signatures \
                 or docs) or `like_symbol` (a name, `Type::name` or path whose similar symbols you want)",
            ));
        }
        (Some(q), None) => {
            let cleaned = terms::clean(&q);
            let (sent, cut) = terms::cap(&cleaned, MAX_QUERY_BYTES);
            if !terms::searchable(sent) {
                return Err(ToolError::invalid(format!(
                    "`query` {} has nothing searchable: no letter or digit{}; accepted: words or \
                     identifiers, e.g. \"parse config\" or \"HashMap\"",
                    preview(&q),
                    if cut { " in its first 4096 bytes" } else { "" }
                )));
            }
            if cut {
                notes.push(format!(
                    "the query is {} bytes; only its first {} were searched",
                    q.len(),
                    sent.len()
                ));
            }
            let sent = sent.to_string();
            (Subject::Query(q), sent, None)
        }
        (None, Some(l)) => {
            check_text("like_symbol", &l, 512)?;
            let (target, mut ns) = resolve_like(host, &l, scope, crate_name.as_deref())?;
            notes.append(&mut ns);
            let sent = terms::like_query(&target.sym);
            (Subject::Like(target), sent, Some(l))
        }
    };
    Ok(Request {
        subject,
        sent,
        scope,
        crate_name,
        kinds,
        offset,
        limit,
        like_asked,
        notes,
    })
}

/// Which of several same-named definitions `like_symbol` compares with: types and
/// traits first (what "similar" usually asks about), then functions, methods, the rest.
fn kind_rank(kind: &str) -> u8 {
    match kind {
        "struct" | "enum" | "union" | "trait" | "type_alias" | "class" | "interface" => 0,
        "function" => 1,
        "method" => 2,
        "field" | "variant" => 4,
        _ => 3,
    }
}

fn path_matches(qualified_name: &str, path: &str) -> bool {
    qualified_name == path || qualified_name.ends_with(&format!("::{path}"))
}

/// The definition `like_symbol` names: in the workspace by name or qualified path,
/// else (dependency scope) in the locked crates. Several candidates: the first by
/// [`kind_rank`], the others named in a note.
fn resolve_like<H: Host + ?Sized>(
    host: &H,
    asked: &str,
    scope: SearchScope,
    crate_name: Option<&str>,
) -> ToolResult<(Target, Vec<String>)> {
    let normalized = asked.replace('.', "::");
    let path = normalized.trim_matches(':').trim();
    let path = path.strip_prefix("crate::").unwrap_or(path);
    let name = path.rsplit("::").next().unwrap_or(path).trim();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    {
        return Err(ToolError::invalid(format!(
            "`like_symbol` {asked:?} does not end in a name; accepted: `name`, `Type::name` or `crate::path::name`"
        )));
    }
    let qualified = path.contains("::");
    let workspace = if qualified {
        host.symbols_by_qualified_name(path)?
    } else {
        host.symbols_by_name(name)?
    };
    let mut candidates: Vec<Target> = workspace
        .into_iter()
        .map(|sym| Target {
            sym,
            crate_name: None,
            version: None,
        })
        .collect();
    if candidates.is_empty() && scope == SearchScope::Dependencies {
        let named = host.dependency_symbols_by_name(name, crate_name)?;
        let exact: Vec<&DepSym> = named
            .iter()
            .filter(|d| !qualified || path_matches(&d.symbol.qualified_name, path))
            .collect();
        // A public path (`tokio::sync::Mutex`) often re-exports a definition that lives
        // deeper (`tokio::sync::mutex::Mutex`): then the name within the named crate.
        let chosen = if exact.is_empty() && qualified {
            let krate = path.split("::").next().unwrap_or("");
            named
                .iter()
                .filter(|d| same_crate(&d.crate_name, krate))
                .collect()
        } else {
            exact
        };
        candidates = chosen
            .into_iter()
            .map(|d| Target {
                sym: d.symbol.clone(),
                crate_name: Some(d.crate_name.clone()),
                version: Some(d.crate_version.clone()),
            })
            .collect();
    }
    if candidates.is_empty() {
        let place = if scope == SearchScope::Dependencies {
            "in the workspace or the locked crates"
        } else {
            "in the workspace index"
        };
        return Err(ToolError::not_found(format!(
            "like_symbol {asked:?}: no definition named that {place}; pass the name, `Type::name` \
             or path of an indexed symbol (search_symbols(query: {name:?}) finds names by their words)"
        )));
    }
    candidates.sort_by(|a, b| {
        (
            kind_rank(&a.sym.kind),
            a.sym.qualified_name.len(),
            &a.sym.qualified_name,
            &a.sym.file_path,
            a.sym.start_line,
        )
            .cmp(&(
                kind_rank(&b.sym.kind),
                b.sym.qualified_name.len(),
                &b.sym.qualified_name,
                &b.sym.file_path,
                b.sym.start_line,
            ))
    });
    let mut notes = Vec::new();
    if candidates.len() > 1 {
        let others: Vec<&str> = candidates[1..]
            .iter()
            .take(5)
            .map(|t| t.sym.qualified_name.as_str())
            .collect();
        notes.push(format!(
            "like_symbol {asked:?} names {} definitions; compared with {} (others: {}{}); qualify like_symbol to pick another",
            candidates.len(),
            candidates[0].sym.qualified_name,
            others.join(", "),
            if candidates.len() > 6 { ", …" } else { "" }
        ));
    }
    Ok((candidates.swap_remove(0), notes))
}

fn same_symbol(a: &Sym, b: &Sym) -> bool {
    a.qualified_name == b.qualified_name
        && a.file_path == b.file_path
        && a.start_line == b.start_line
}

/// One page of what is left after the kind filter and the target's exclusion.
struct Found {
    page: Vec<SearchHit>,
    total: u32,
    /// Hits the kind filter removed among those looked at.
    filtered: u32,
    /// Hits the host ranked, before any filter.
    ranked: u32,
    /// The kind filter looked at only the first [`SCAN_CAP`] ranked hits.
    capped: bool,
}

fn find<H: Host + ?Sized>(host: &H, r: &Request) -> ToolResult<Found> {
    let crate_name = r.crate_name.as_deref();
    let exclude = match &r.subject {
        Subject::Like(t) => Some(&t.sym),
        Subject::Query(_) => None,
    };
    if r.kinds.is_empty() && exclude.is_none() {
        let mut p = host.search(&r.sent, r.scope, crate_name, r.offset, r.limit)?;
        p.hits.truncate(r.limit as usize);
        return Ok(Found {
            page: p.hits,
            total: p.total,
            filtered: 0,
            ranked: p.total,
            capped: false,
        });
    }
    let (start, end) = (
        u64::from(r.offset),
        u64::from(r.offset) + u64::from(r.limit),
    );
    let mut page = Vec::new();
    let (mut kept, mut filtered, mut seen) = (0u64, 0u32, 0u32);
    let mut ranked: u32;
    let mut target_seen = exclude.is_none();
    let mut capped = false;
    loop {
        let chunk = host.search(&r.sent, r.scope, crate_name, seen, SCAN_CHUNK)?;
        ranked = chunk.total;
        if chunk.hits.is_empty() {
            break;
        }
        for hit in chunk.hits {
            seen += 1;
            if exclude.is_some_and(|t| same_symbol(&hit.symbol, t)) {
                target_seen = true;
                continue;
            }
            if !r.kinds.is_empty() && !r.kinds.contains(&hit.symbol.kind.as_str()) {
                filtered += 1;
                continue;
            }
            if (start..end).contains(&kept) {
                page.push(hit);
            }
            kept += 1;
        }
        if seen >= ranked {
            break;
        }
        // Without a kind filter only the target is left out: once it is behind us and
        // the page is full, the unseen rest counts as it is.
        let rest_unfiltered = r.kinds.is_empty() && target_seen && kept >= end;
        if rest_unfiltered || seen >= SCAN_CAP {
            if r.kinds.is_empty() {
                kept += u64::from(ranked - seen);
            } else {
                capped = true;
            }
            break;
        }
    }
    Ok(Found {
        page,
        total: kept.min(u64::from(u32::MAX)) as u32,
        filtered,
        ranked,
        capped,
    })
}

/// Locked crate names close to `wanted`: a prefix either way, or a few edits away.
fn closest<'a>(wanted: &str, locked: &'a [LockedCrate]) -> Vec<&'a str> {
    let norm = |s: &str| s.to_ascii_lowercase().replace('-', "_");
    let w = norm(wanted);
    let mut scored: Vec<(usize, &str)> = locked
        .iter()
        .filter_map(|l| {
            let n = norm(&l.name);
            let d = edit_distance(&w, &n);
            let prefix = n.starts_with(&w) || w.starts_with(&n);
            (prefix || d <= (w.chars().count() / 3).max(2)).then_some((d, l.name.as_str()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

fn not_indexed(l: &LockedCrate) -> String {
    match &l.note {
        Some(why) => format!("{} {} is locked but not indexed: {why}", l.name, l.version),
        None => format!(
            "{} {} is locked but not indexed yet; dependency indexing runs in the background, \
             retry in a few seconds",
            l.name, l.version
        ),
    }
}

/// Why a dependency search may have found nothing, from the crates the project locks.
fn dependency_notes<H: Host + ?Sized>(host: &H, crate_name: Option<&str>) -> Vec<String> {
    let locked = match host.locked_crates() {
        Ok(l) => l,
        Err(e) => return vec![format!("could not list the crates the project locks: {e}")],
    };
    if locked.is_empty() {
        return vec![
            "the project locks no crates: dependency search needs a Cargo.lock in the project \
             root and the crates' sources in the local cargo registry (`cargo fetch`)"
                .into(),
        ];
    }
    if let Some(c) = crate_name {
        // A crate the project does not lock was searched in a version indexed for
        // another project (or refused by the host): only a locked one can be pending.
        return locked
            .iter()
            .filter(|l| same_crate(&l.name, c) && !l.indexed)
            .map(not_indexed)
            .collect();
    }
    if locked.iter().any(|l| l.indexed) {
        return Vec::new();
    }
    let why = locked
        .iter()
        .find_map(|l| l.note.as_deref())
        .map(|n| format!(" ({}: {n})", locked[0].name))
        .unwrap_or_default();
    vec![format!(
        "none of the {} crates the project locks is indexed yet{why}; dependency indexing runs \
         in the background after the project is indexed",
        locked.len()
    )]
}

fn empty_notes<H: Host + ?Sized>(host: &H, r: &Request, found: &Found) -> Vec<String> {
    let mut notes = Vec::new();
    if found.total > 0 {
        if found.page.is_empty() {
            notes.push(format!(
                "offset {} is past the last hit (total {}); pages start at offset 0",
                r.offset, found.total
            ));
        }
        return notes;
    }
    if r.scope == SearchScope::Dependencies && found.ranked == 0 {
        // no crate to search: that, not the words, is why nothing matched
        let why = dependency_notes(host, r.crate_name.as_deref());
        if !why.is_empty() {
            return why;
        }
    }
    if found.filtered > 0 {
        notes.push(format!(
            "the kind filter ({}) removed all {} hits{}; widen or drop `kind`",
            r.kinds.join(", "),
            found.filtered,
            if found.capped {
                format!(" among the first {SCAN_CAP} ranked")
            } else {
                String::new()
            }
        ));
        return notes;
    }
    match &r.subject {
        Subject::Like(t) if found.ranked > 0 => notes.push(format!(
            "nothing but {} itself matched its words",
            t.sym.qualified_name
        )),
        Subject::Like(t) => notes.push(format!(
            "nothing matched the words of {}",
            t.sym.qualified_name
        )),
        Subject::Query(_) => {
            let words = terms::terms(&r.sent);
            let shown: Vec<&str> = words.iter().take(12).map(String::as_str).collect();
            notes.push(format!(
                "nothing matched the terms: {}{}",
                shown.join(", "),
                if words.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            ));
        }
    }
    notes
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let head: String = text.chars().take(max - 1).collect();
        format!("{}…", head.trim_end())
    }
}

fn round2(score: f32) -> f64 {
    (f64::from(score) * 100.0).round() / 100.0
}

fn hit_json(hit: &SearchHit) -> Value {
    let s = &hit.symbol;
    json!({
        "score": round2(hit.score),
        "matched_terms": &hit.matched_terms[..hit.matched_terms.len().min(TERMS_SHOWN)],
        "more_terms": (hit.matched_terms.len() > TERMS_SHOWN).then(|| hit.matched_terms.len() - TERMS_SHOWN),
        "qualified_name": s.qualified_name,
        "kind": s.kind,
        "file_path": s.file_path,
        "line": s.start_line,
        "signature": (!s.signature.is_empty()).then(|| shorten(&s.signature, SIGNATURE_CHARS)),
        "crate_name": hit.crate_name,
        "version": hit.crate_version,
    })
}

fn hit_text(hit: &SearchHit) -> String {
    let s = &hit.symbol;
    let mut line = format!(
        "{:.2} {} {} {}:{}",
        round2(hit.score),
        s.kind,
        s.qualified_name,
        s.file_path,
        s.start_line
    );
    if let (Some(c), Some(v)) = (&hit.crate_name, &hit.crate_version) {
        line.push_str(&format!(" ({c} {v})"));
    }
    if !s.signature.is_empty() {
        line.push_str(" — ");
        line.push_str(&shorten(&s.signature, SIGNATURE_CHARS));
    }
    if !hit.matched_terms.is_empty() {
        let shown = &hit.matched_terms[..hit.matched_terms.len().min(TERMS_SHOWN)];
        let more = hit.matched_terms.len() - shown.len();
        line.push_str(&format!(" [{}", shown.join(", ")));
        if more > 0 {
            line.push_str(&format!(", +{more}"));
        }
        line.push(']');
    }
    line
}

/// The arguments of the call that gets the page at `offset`.
fn next_call(r: &Request, offset: u32) -> String {
    let mut parts = Vec::new();
    match (&r.subject, &r.like_asked) {
        (Subject::Query(q), _) if q.chars().count() <= ECHO_CHARS => {
            parts.push(format!("query: {q:?}"))
        }
        (Subject::Query(_), _) => parts.push("the same query".into()),
        (Subject::Like(_), Some(asked)) => parts.push(format!("like_symbol: {asked:?}")),
        (Subject::Like(t), None) => parts.push(format!("like_symbol: {:?}", t.sym.qualified_name)),
    }
    if r.scope == SearchScope::Dependencies {
        parts.push("scope_level: \"dependencies\"".into());
    }
    if let Some(c) = &r.crate_name {
        parts.push(format!("crate_name: {c:?}"));
    }
    if !r.kinds.is_empty() {
        parts.push(format!("kind: {:?}", r.kinds));
    }
    if r.limit != DEFAULT_LIMIT {
        parts.push(format!("limit: {}", r.limit));
    }
    parts.push(format!("offset: {offset}"));
    format!("search_symbols({}) for more hits", parts.join(", "))
}

fn subject_text(r: &Request) -> String {
    let mut s = match &r.subject {
        Subject::Query(q) => format!("{:?}", shorten(q, ECHO_CHARS)),
        Subject::Like(t) => format!("like {}", t.sym.qualified_name),
    };
    match (&r.crate_name, r.scope) {
        (Some(c), _) => s.push_str(&format!(" in crate {c}")),
        (None, SearchScope::Dependencies) => s.push_str(" in dependencies"),
        _ => {}
    }
    if !r.kinds.is_empty() {
        s.push_str(&format!(" kind={}", r.kinds.join(",")));
    }
    s
}

fn render(r: &Request, found: &Found, notes: &[String], k: usize, format: Format) -> String {
    let shown = &found.page[..k];
    let next = r.offset as u64 + k as u64;
    let has_more = next < u64::from(found.total);
    let mut notes = notes.to_vec();
    if k < found.page.len() {
        notes.push(format!(
            "{k} of the page's {} hits fit the token budget",
            found.page.len()
        ));
    }
    if found.capped {
        notes.push(format!(
            "the kind filter looked at the first {SCAN_CAP} of {} ranked hits; total counts those",
            found.ranked
        ));
    }
    match format {
        Format::Json => {
            let like = match &r.subject {
                Subject::Like(t) => Some(json!({
                    "qualified_name": t.sym.qualified_name,
                    "kind": t.sym.kind,
                    "file_path": t.sym.file_path,
                    "line": t.sym.start_line,
                    "crate_name": t.crate_name,
                    "version": t.version,
                })),
                Subject::Query(_) => None,
            };
            let mut body = json!({
                "like_symbol": like,
                "scope": (r.scope == SearchScope::Dependencies).then_some("dependencies"),
                "crate_name": r.crate_name,
                "kind": r.kinds,
                "total": found.total,
                "offset": (r.offset > 0).then_some(r.offset),
                "hits": shown.iter().map(hit_json).collect::<Vec<_>>(),
                "has_more": has_more,
                "complete": !has_more && !found.capped,
                "notes": notes,
            });
            if has_more {
                body["next_offset"] = json!(next);
                body["see_also"] = json!(next_call(r, next as u32));
            }
            to_compact_json(&body)
        }
        Format::Text => {
            let range = if k == 0 {
                "none shown".to_string()
            } else {
                format!("{}-{}", r.offset as u64 + 1, next)
            };
            let state = if has_more {
                format!("TRUNCATED: call again with offset={next}")
            } else if found.capped {
                "partial".into()
            } else {
                "complete".into()
            };
            let mut out = format!(
                "search_symbols {}: {} | {range} | {state}",
                subject_text(r),
                if found.total == 1 {
                    "1 hit".to_string()
                } else {
                    format!("{} hits", found.total)
                }
            );
            for n in &notes {
                out.push_str(&format!("\nnote: {n}"));
            }
            for hit in shown {
                out.push('\n');
                out.push_str(&hit_text(hit));
            }
            out
        }
    }
}

/// The host refuses a `crate_name` the project does not lock and nobody indexed; say
/// which locked crates come close, when some do.
fn unknown_crate<H: Host + ?Sized>(host: &H, crate_name: &str, host_error: ToolError) -> ToolError {
    let Ok(locked) = host.locked_crates() else {
        return host_error;
    };
    if locked.is_empty() {
        return ToolError::not_found(format!(
            "crate `{crate_name}` is not indexed and the project locks no crates: dependency \
             search needs a Cargo.lock in the project root and the crates' sources in the local \
             cargo registry (`cargo fetch`)"
        ));
    }
    let close = closest(crate_name, &locked);
    if close.is_empty() {
        return host_error;
    }
    ToolError::not_found(format!(
        "`{crate_name}` is not among the {} crates the project locks and no indexed version of \
         it is cached; closest: {}",
        locked.len(),
        close.join(", ")
    ))
}

pub fn search_symbols<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let r = parse(host, args)?;
    let found = match (find(host, &r), &r.crate_name) {
        (Err(e), Some(c)) if e.kind == ErrorKind::NotFound => {
            return Err(unknown_crate(host, c, e));
        }
        (found, _) => found?,
    };
    let mut notes = r.notes.clone();
    notes.extend(empty_notes(host, &r, &found));
    let n = found.page.len();
    let Some(budget) = ctx.budget else {
        return Ok(render(&r, &found, &notes, n, ctx.format));
    };
    let k = fit_prefix(
        n,
        budget,
        |k| render(&r, &found, &notes, k, ctx.format),
        |s| host.count_tokens(s),
    );
    // One hit over the budget still beats none; the host has the last word on size.
    Ok(render(&r, &found, &notes, k.max(1).min(n), ctx.format))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scryer_plugin_sdk::testing::MemHost;

    fn sym(qn: &str, kind: &str, file: &str, line: u32, sig: &str, doc: Option<&str>) -> Sym {
        Sym {
            name: qn.rsplit("::").next().unwrap().into(),
            kind: kind.into(),
            qualified_name: qn.into(),
            owner: None,
            file_path: file.into(),
            start_line: line,
            end_line: line + 2,
            signature: sig.into(),
            docstring: doc.map(Into::into),
        }
    }

    /// The SDK's in-memory host, its search scoring a symbol by how many query words its
    /// name, path, signature and doc hold (the name counting double), like the host's
    /// ranking in miniature.
    fn fixture() -> MemHost {
        MemHost {
            scorer: Some(score),
            symbols: vec![
                sym(
                    "demo::total_area",
                    "function",
                    "src/lib.rs",
                    9,
                    "pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64",
                    Some("Sums the areas of all shapes."),
                ),
                sym(
                    "demo::shapes::Shape",
                    "trait",
                    "src/shapes.rs",
                    4,
                    "pub trait Shape",
                    Some("Anything with an area."),
                ),
                sym(
                    "demo::shapes::Circle",
                    "struct",
                    "src/shapes.rs",
                    9,
                    "pub struct Circle",
                    Some("A circle."),
                ),
                sym(
                    "demo::shapes::Circle::area",
                    "method",
                    "src/shapes.rs",
                    21,
                    "fn area(&self) -> f64",
                    None,
                ),
                sym(
                    "demo::shapes::Square::area",
                    "method",
                    "src/shapes.rs",
                    37,
                    "fn area(&self) -> f64",
                    None,
                ),
                sym(
                    "demo::util::describe",
                    "function",
                    "src/util.rs",
                    6,
                    "pub fn describe(area: f64) -> String",
                    Some("Formats an area for people."),
                ),
                sym(
                    "demo::util::count_up",
                    "function",
                    "src/util.rs",
                    18,
                    "pub fn count_up() -> u32",
                    None,
                ),
                sym(
                    "demo::util::tick",
                    "function",
                    "src/util.rs",
                    14,
                    "pub fn tick(n: u32) -> u32",
                    None,
                ),
            ],
            ..MemHost::default()
        }
    }

    fn with_hex(mut h: MemHost) -> MemHost {
        let dir = "/registry/hex-0.4.3/src";
        h.deps = vec![
            DepSym {
                crate_name: "hex".into(),
                crate_version: "0.4.3".into(),
                symbol: sym(
                    "hex::encode",
                    "function",
                    &format!("{dir}/lib.rs"),
                    140,
                    "pub fn encode<T: AsRef<[u8]>>(data: T) -> String",
                    Some("Encodes data as hex string."),
                ),
            },
            DepSym {
                crate_name: "hex".into(),
                crate_version: "0.4.3".into(),
                symbol: sym(
                    "hex::decode",
                    "function",
                    &format!("{dir}/lib.rs"),
                    220,
                    "pub fn decode<T: AsRef<[u8]>>(data: T) -> Result<Vec<u8>, FromHexError>",
                    Some("Decodes a hex string into raw bytes."),
                ),
            },
        ];
        h.locked = vec![LockedCrate {
            name: "hex".into(),
            version: "0.4.3".into(),
            indexed: true,
            note: None,
            symbols: 2,
        }];
        h
    }

    /// The test host scores with the router's own terms.
    fn score(query: &str, s: &Sym) -> (f32, Vec<String>) {
        scryer_plugin_sdk::testing::score_by(terms::terms, query, s)
    }

    fn ctx() -> Ctx {
        Ctx {
            budget: Some(1500),
            ..Ctx::default()
        }
    }

    fn call(host: &MemHost, args: Value) -> ToolResult<Value> {
        call_ctx(host, args, &ctx())
    }

    fn call_ctx(host: &MemHost, args: Value, ctx: &Ctx) -> ToolResult<Value> {
        let body = search_symbols(host, &Args::from_value(args).unwrap(), ctx)?;
        Ok(serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")))
    }

    fn names(v: &Value) -> Vec<String> {
        v["hits"]
            .as_array()
            .map(|h| {
                h.iter()
                    .map(|h| h["qualified_name"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn a_word_of_a_name_finds_it_with_its_matched_terms() {
        let host = fixture();
        let v = call(&host, json!({"query": "count"})).unwrap();
        assert_eq!(names(&v), ["demo::util::count_up"]);
        let hit = &v["hits"][0];
        assert_eq!(hit["matched_terms"], json!(["count"]));
        assert_eq!(hit["kind"], "function");
        assert_eq!(hit["file_path"], "src/util.rs");
        assert_eq!(hit["line"], 18);
        assert_eq!(hit["score"], 2.33);
        assert_eq!(hit["signature"], "pub fn count_up() -> u32");
        assert_eq!(
            (
                v["total"].as_u64(),
                v["has_more"].as_bool(),
                v["complete"].as_bool()
            ),
            (Some(1), Some(false), Some(true))
        );
    }

    #[test]
    fn long_matched_term_lists_are_cut_with_a_count() {
        let hit = SearchHit {
            symbol: sym("demo::f", "function", "src/lib.rs", 3, "", None),
            score: 1.0,
            matched_terms: (0..12).map(|i| format!("t{i}")).collect(),
            ..SearchHit::default()
        };
        let v = hit_json(&hit);
        assert_eq!(v["matched_terms"].as_array().unwrap().len(), TERMS_SHOWN);
        assert_eq!(v["more_terms"], 4);
        assert!(v.get("signature").unwrap().is_null());
        assert!(
            hit_text(&hit).ends_with("[t0, t1, t2, t3, t4, t5, t6, t7, +4]"),
            "{}",
            hit_text(&hit)
        );
    }

    #[test]
    fn scores_have_two_decimals() {
        assert_eq!(round2(2.3333333), 2.33);
        let host = fixture();
        let v = call(&host, json!({"query": "people"})).unwrap();
        assert_eq!(v["hits"][0]["score"], 0.33);
    }

    #[test]
    fn exactly_one_of_query_and_like_symbol() {
        let host = fixture();
        let both = call(&host, json!({"query": "area", "like_symbol": "tick"})).unwrap_err();
        assert_eq!(both.kind, scryer_plugin_sdk::ErrorKind::InvalidArgument);
        assert!(
            both.message.contains("`query`") && both.message.contains("`like_symbol`"),
            "{}",
            both.message
        );
        let neither = call(&host, json!({"limit": 5})).unwrap_err();
        assert!(
            neither.message.contains("exactly one of `query`")
                && neither.message.contains("`like_symbol`"),
            "{}",
            neither.message
        );
        let blank = call(&host, json!({"query": "   "})).unwrap_err();
        assert!(blank.message.contains("exactly one"), "{}", blank.message);
    }

    #[test]
    fn a_query_with_nothing_searchable_is_refused() {
        let host = fixture();
        for q in ["\u{301}\u{302}\u{303}", "\u{ffff}", ":: -> {}"] {
            let e = call(&host, json!({"query": q})).unwrap_err();
            assert_eq!(e.kind, scryer_plugin_sdk::ErrorKind::InvalidArgument);
            assert!(e.message.contains("nothing searchable"), "{}", e.message);
        }
        assert!(
            host.searches.borrow().is_empty(),
            "the host was asked anyway"
        );
    }

    #[test]
    fn a_huge_query_is_cut_before_the_host_sees_it() {
        let host = fixture();
        let q = format!("count {}", "zzz ".repeat(250_000));
        let v = call(&host, json!({"query": q})).unwrap();
        assert_eq!(names(&v), ["demo::util::count_up"]);
        let asked = host.searches.borrow();
        assert!(
            asked
                .iter()
                .all(|(text, _, _)| text.len() <= MAX_QUERY_BYTES)
        );
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("1000005 bytes") && notes.contains("first 4093"),
            "{notes}"
        );
    }

    #[test]
    fn like_symbol_compares_with_the_symbol_and_leaves_it_out() {
        let host = fixture();
        let v = call(&host, json!({"like_symbol": "util::describe"})).unwrap();
        assert_eq!(v["like_symbol"]["qualified_name"], "demo::util::describe");
        let found = names(&v);
        assert!(
            !found.contains(&"demo::util::describe".to_string()),
            "{found:?}"
        );
        // its words (area, f64, string, people...) reach the area methods and total_area
        assert!(found.contains(&"demo::total_area".to_string()), "{found:?}");
        assert_eq!(v["total"].as_u64().unwrap() as usize, found.len());
        let asked = host.searches.borrow();
        assert!(
            asked[0].0.starts_with("describe util describe"),
            "{:?}",
            asked[0]
        );
    }

    #[test]
    fn like_symbol_exclusion_keeps_pages_and_totals_consistent() {
        let mut host = fixture();
        for i in 0..30 {
            host.symbols.push(sym(
                &format!("demo::gen::area_{i:02}"),
                "function",
                "src/gen.rs",
                10 + i,
                "pub fn x()",
                None,
            ));
        }
        let all = call_ctx(
            &host,
            json!({"like_symbol": "demo::shapes::Circle::area", "limit": 50}),
            &Ctx::default(),
        )
        .unwrap();
        let every = names(&all);
        assert!(!every.contains(&"demo::shapes::Circle::area".to_string()));
        let total = all["total"].as_u64().unwrap();
        assert_eq!(total as usize, every.len());
        let mut paged = Vec::new();
        let mut offset = 0;
        loop {
            let v = call(
                &host,
                json!({"like_symbol": "demo::shapes::Circle::area", "limit": 7, "offset": offset}),
            )
            .unwrap();
            assert_eq!(v["total"].as_u64(), Some(total));
            paged.extend(names(&v));
            match v["next_offset"].as_u64() {
                Some(n) => {
                    assert_eq!(v["has_more"], true);
                    assert!(
                        v["see_also"]
                            .as_str()
                            .unwrap()
                            .contains(&format!("offset: {n}"))
                    );
                    offset = n;
                }
                None => break,
            }
        }
        assert_eq!(paged, every);
    }

    #[test]
    fn an_unknown_like_symbol_is_not_found_by_name() {
        let host = fixture();
        let e = call(&host, json!({"like_symbol": "Hexagon"})).unwrap_err();
        assert_eq!(e.kind, scryer_plugin_sdk::ErrorKind::NotFound);
        assert!(e.message.contains("\"Hexagon\""), "{}", e.message);
        for bad in ["::", "a b", "Circle::<T>"] {
            let e = call(&host, json!({"like_symbol": bad})).unwrap_err();
            assert_eq!(
                e.kind,
                scryer_plugin_sdk::ErrorKind::InvalidArgument,
                "{bad}: {}",
                e.message
            );
            assert!(
                e.message.contains("does not end in a name"),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn an_ambiguous_like_symbol_picks_one_and_names_the_others() {
        let host = fixture();
        let v = call(&host, json!({"like_symbol": "area"})).unwrap();
        assert_eq!(
            v["like_symbol"]["qualified_name"],
            "demo::shapes::Circle::area"
        );
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("names 2 definitions") && notes.contains("demo::shapes::Square::area"),
            "{notes}"
        );
        assert!(names(&v).contains(&"demo::shapes::Square::area".to_string()));
    }

    #[test]
    fn pages_follow_next_offset_to_the_end() {
        let host = fixture();
        let first = call(&host, json!({"query": "area", "limit": 2})).unwrap();
        let total = first["total"].as_u64().unwrap();
        assert!(total > 2);
        assert_eq!(first["has_more"], true);
        assert_eq!(first["complete"], false);
        assert_eq!(first["next_offset"], 2);
        assert!(
            first["see_also"]
                .as_str()
                .unwrap()
                .contains("query: \"area\", limit: 2, offset: 2"),
            "{first}"
        );
        let second = call(&host, json!({"query": "area", "limit": 2, "offset": 2})).unwrap();
        assert_eq!(second["offset"], 2);
        assert!(names(&first).iter().all(|n| !names(&second).contains(n)));
        let past = call(&host, json!({"query": "area", "offset": 99})).unwrap();
        assert!(
            past["notes"]
                .to_string()
                .contains("offset 99 is past the last hit"),
            "{past}"
        );
        let e = call(&host, json!({"query": "area", "limit": 51})).unwrap_err();
        assert!(e.message.contains("from 1 to 50"), "{}", e.message);
    }

    #[test]
    fn the_kind_filter_pages_what_it_keeps_and_explains_an_empty_result() {
        let host = fixture();
        let v = call(&host, json!({"query": "area", "kind": "method"})).unwrap();
        assert_eq!(
            names(&v),
            ["demo::shapes::Circle::area", "demo::shapes::Square::area"]
        );
        assert_eq!(v["total"], 2);
        assert_eq!(v["kind"], json!(["method"]));
        let v = call(
            &host,
            json!({"query": "area", "kind": ["fn", "trait"], "limit": 1, "offset": 1}),
        )
        .unwrap();
        assert_eq!(v["total"], 3);
        assert_eq!(names(&v).len(), 1);
        // a comma list wrapped in an array, as a client's coercion may send it
        let v = call(&host, json!({"query": "area", "kind": ["function, trait"]})).unwrap();
        assert_eq!(v["total"], 3, "{v}");
        let none = call(&host, json!({"query": "area", "kind": "macro"})).unwrap();
        assert_eq!(none["total"], 0);
        let notes = none["notes"].to_string();
        assert!(
            notes.contains("kind filter (macro) removed all 5 hits"),
            "{notes}"
        );
        let e = call(&host, json!({"query": "area", "kind": "widget"})).unwrap_err();
        assert!(
            e.message.contains("\"widget\"") && e.message.contains("type_alias"),
            "{}",
            e.message
        );
    }

    #[test]
    fn nothing_matched_names_the_terms() {
        let host = fixture();
        let v = call(&host, json!({"query": "frobnicateWidget"})).unwrap();
        assert_eq!(v["total"], 0);
        assert!(
            v["notes"]
                .to_string()
                .contains("nothing matched the terms: frobnicate, widget"),
            "{v}"
        );
    }

    #[test]
    fn dependency_hits_carry_their_crate_and_empty_scopes_say_why() {
        let host = with_hex(fixture());
        let v = call(
            &host,
            json!({"query": "decode hex", "scope_level": "dependencies"}),
        )
        .unwrap();
        assert_eq!(v["scope"], "dependencies");
        let hit = &v["hits"][0];
        assert_eq!(hit["qualified_name"], "hex::decode");
        assert_eq!(
            (hit["crate_name"].as_str(), hit["version"].as_str()),
            (Some("hex"), Some("0.4.3"))
        );
        assert!(hit["file_path"].as_str().unwrap().starts_with("/registry/"));
        // crate_name alone implies the dependency scope
        let v = call(&host, json!({"query": "encode", "crate_name": "HEX"})).unwrap();
        assert_eq!(names(&v), ["hex::encode"]);
        let e = call(
            &host,
            json!({"query": "x", "crate_name": "hex", "scope_level": "workspace"}),
        )
        .unwrap_err();
        assert!(e.message.contains("scope_level"), "{}", e.message);

        let e = call(&host, json!({"query": "encode", "crate_name": "hexx"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert!(
            e.message
                .contains("`hexx` is not among the 1 crates the project locks")
                && e.message.contains("closest: hex"),
            "{}",
            e.message
        );
        // nothing close: the host's own message stands
        let e = call(&host, json!({"query": "encode", "crate_name": "tokio"})).unwrap_err();
        assert!(
            e.message.contains("crate \"tokio\" is not locked"),
            "{}",
            e.message
        );

        let mut pending = with_hex(fixture());
        pending.deps.clear();
        pending.locked[0].indexed = false;
        let v = call(&pending, json!({"query": "encode", "scope_level": "deps"})).unwrap();
        assert!(
            v["notes"]
                .to_string()
                .contains("none of the 1 crates the project locks is indexed yet"),
            "{v}"
        );
        let v = call(&pending, json!({"query": "encode", "crate_name": "hex"})).unwrap();
        assert!(
            v["notes"]
                .to_string()
                .contains("hex 0.4.3 is locked but not indexed yet"),
            "{v}"
        );

        let bare = fixture();
        let v = call(
            &bare,
            json!({"query": "encode", "scope_level": "dependencies"}),
        )
        .unwrap();
        assert!(
            v["notes"].to_string().contains("needs a Cargo.lock")
                && v["notes"].to_string().contains("cargo fetch"),
            "{v}"
        );
    }

    #[test]
    fn like_symbol_falls_back_to_dependency_symbols_in_the_dependency_scope() {
        let host = with_hex(fixture());
        let v = call(
            &host,
            json!({"like_symbol": "hex::decode", "scope_level": "dependencies"}),
        )
        .unwrap();
        assert_eq!(v["like_symbol"]["crate_name"], "hex");
        assert_eq!(names(&v), ["hex::encode"]);
        // a public path that re-exports a deeper definition finds it by name in the crate
        let mut nested = with_hex(fixture());
        nested.deps[1].symbol.qualified_name = "hex::codec::decode".into();
        let v = call(
            &nested,
            json!({"like_symbol": "hex::decode", "scope_level": "dependencies"}),
        )
        .unwrap();
        assert_eq!(v["like_symbol"]["qualified_name"], "hex::codec::decode");
        let e = call(
            &nested,
            json!({"like_symbol": "other::decode", "scope_level": "dependencies"}),
        )
        .unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        let e = call(&host, json!({"like_symbol": "hex::decode"})).unwrap_err();
        assert!(e.message.contains("workspace index"), "{}", e.message);
    }

    #[test]
    fn a_small_budget_keeps_a_prefix_and_points_at_the_rest() {
        let host = fixture();
        let tight = Ctx {
            budget: Some(110),
            ..Ctx::default()
        };
        let v = call_ctx(&host, json!({"query": "area"}), &tight).unwrap();
        let k = names(&v).len();
        assert!(k >= 1 && (k as u64) < v["total"].as_u64().unwrap(), "{v}");
        assert_eq!(v["next_offset"].as_u64(), Some(k as u64));
        assert_eq!(v["complete"], false);
        assert!(v["notes"].to_string().contains("fit the token budget"));
        let body = search_symbols(
            &host,
            &Args::from_value(json!({"query": "area"})).unwrap(),
            &tight,
        )
        .unwrap();
        assert!(host.count_tokens(&body) <= 110, "{body}");
        let all = call_ctx(&host, json!({"query": "area"}), &Ctx::default()).unwrap();
        assert_eq!(all["complete"], true);
    }

    #[test]
    fn text_format_is_a_header_and_one_line_per_hit() {
        let host = fixture();
        let ctx = Ctx {
            format: Format::Text,
            budget: Some(1500),
            ..Ctx::default()
        };
        let body = search_symbols(
            &host,
            &Args::from_value(json!({"query": "tick", "kind": "function"})).unwrap(),
            &ctx,
        )
        .unwrap();
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(
            lines[0],
            "search_symbols \"tick\" kind=function: 1 hit | 1-1 | complete"
        );
        assert_eq!(
            lines[1],
            "2.33 function demo::util::tick src/util.rs:14 — pub fn tick(n: u32) -> u32 [tick]"
        );
        assert_eq!(lines.len(), 2);
        let paged = search_symbols(
            &host,
            &Args::from_value(json!({"query": "area", "limit": 2})).unwrap(),
            &ctx,
        )
        .unwrap();
        assert!(
            paged
                .lines()
                .next()
                .unwrap()
                .ends_with("| 1-2 | TRUNCATED: call again with offset=2"),
            "{paged}"
        );
    }
}
