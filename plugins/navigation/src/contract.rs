//! `get_type_contract`: what a type offers. For a struct, enum, union, class or type
//! alias: its fields or variants, its methods (inherent and from trait impls, wherever
//! the impl block is) and the traits it implements. For a trait or interface: its
//! required and provided methods, associated items and implementors.
//!
//! Members come from the index's definitions: those nested under the type's qualified
//! name, and those of impl blocks elsewhere (found by the impl header's use of the type
//! name, whose enclosing symbol is the impl's self type). Traits come from the index's
//! `implements` edges; a host without them degrades to reading impl headers' source
//! lines, and says so.

use std::collections::{BTreeSet, HashSet};

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::attribution::file_matches;
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::host::{Ctx, Edge, Host, Site, Sym};
use scryer_plugin_sdk::resolve::{self, Attribution};
use scryer_plugin_sdk::{ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::lookup::{self, Detail, Found, PAGE};

pub const TYPE_KINDS: [&str; 7] = [
    "struct",
    "enum",
    "union",
    "trait",
    "type_alias",
    "class",
    "interface",
];
/// Files other than the type's own searched for impl blocks.
const MAX_IMPL_FILES: usize = 24;

fn is_type(kind: &str) -> bool {
    TYPE_KINDS.contains(&kind)
}

fn parent_of(qn: &str) -> &str {
    qn.rsplit_once("::").map(|(p, _)| p).unwrap_or("")
}

fn last_segment(qn: &str) -> &str {
    qn.rsplit("::").next().unwrap_or(qn)
}

/// Skips a balanced `<...>` at the start of `s` (the caller has seen `<`), returning the
/// rest. `->` inside (`Fn() -> T`) is not a closing bracket.
fn skip_angle(s: &str) -> &str {
    let mut depth = 0i32;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' if prev != '-' => {
                depth -= 1;
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            _ => {}
        }
        prev = c;
    }
    ""
}

/// Scans `s` at bracket depth 0: the byte index of the first `{`, ` where ` or (when
/// `stop_at_for`) ` for ` outside brackets, and which it was. `->` is not a bracket.
fn scan_depth0(s: &str, stop_at_for: bool) -> (usize, &'static str) {
    let mut depth = 0i32;
    let mut prev = ' ';
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if prev != '-' => depth -= 1,
            ')' | ']' => depth -= 1,
            '{' if depth == 0 => return (i, "{"),
            ' ' if depth == 0 => {
                let after = &s[i..];
                if stop_at_for && after.starts_with(" for ") {
                    return (i, "for");
                }
                if after.starts_with(" where ") {
                    return (i, "where");
                }
            }
            _ => {}
        }
        prev = c;
    }
    (s.len(), "")
}

/// Reads a Rust impl header line: `None` if the line is not one, else the trait as
/// written (`None` for an inherent impl; generic arguments kept: `From<u32>`) and the
/// self type as written (`Arc<Handle>`).
pub fn impl_parts(text: &str) -> Option<(Option<String>, String)> {
    let mut t = text.trim();
    for prefix in ["unsafe ", "default "] {
        t = t.strip_prefix(prefix).unwrap_or(t).trim_start();
    }
    let rest = t.strip_prefix("impl")?;
    if !(rest.starts_with('<') || rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let mut rest = rest.trim_start();
    if rest.starts_with('<') {
        rest = skip_angle(rest).trim_start();
    }
    let (at, what) = scan_depth0(rest, true);
    if what == "for" {
        let tr = rest[..at].trim();
        let after = &rest[at + " for ".len()..];
        let (end, _) = scan_depth0(after, false);
        let ty = after[..end].trim();
        return (!tr.is_empty() && !ty.is_empty()).then(|| (Some(tr.to_string()), ty.to_string()));
    }
    let ty = rest[..at].trim();
    (!ty.is_empty()).then(|| (None, ty.to_string()))
}

/// The trait of an impl header line: `None` if it is not one, `Some(None)` if inherent.
pub fn impl_header(text: &str) -> Option<Option<String>> {
    impl_parts(text).map(|(tr, _)| tr)
}

/// A trait's bare name, as written in a header or an edge (`fmt::Debug` → `Debug`,
/// `From<u32>` → `From`).
fn trait_name(written: &str) -> &str {
    let base = written.split('<').next().unwrap_or(written);
    last_segment(base.trim().trim_start_matches('!'))
}

fn edge_trait(e: &Edge) -> String {
    match e.to_qualifier.as_deref().filter(|q| !q.is_empty()) {
        Some(q) => format!("{q}::{}", e.to_name),
        None => e.to_name.clone(),
    }
}

/// An impl block of the type: where its header is, and the trait it implements.
struct Header {
    file: String,
    line: u32,
    /// The qualified name of the impl's self type as the index names it.
    path: String,
    text: Option<String>,
}

struct Member {
    sym: Sym,
    /// The trait of the impl block it is in.
    via: Option<String>,
    /// For a variant: its fields.
    fields: Vec<String>,
}

struct Relation {
    name: String,
    file: String,
    line: u32,
    /// For an implementor: the self type as the impl header writes it, when the index's
    /// name for it (the impl's module + the type's last segment) says less
    /// (`Arc<Handle>` for `m::Arc`).
    written: Option<String>,
}

/// The header's self type, when it says more than the implementor's indexed name.
fn written_self_type(header_text: &str, implementor: &str) -> Option<String> {
    let (_, ty) = impl_parts(header_text)?;
    (ty != last_segment(implementor)).then(|| lookup::clip(&ty, 80))
}

#[derive(Default)]
struct Contract {
    fields: Vec<Member>,
    variants: Vec<Member>,
    methods: Vec<Member>,
    required: Vec<Member>,
    provided: Vec<Member>,
    associated: Vec<Member>,
    implements: Vec<Relation>,
    implementors: Vec<Relation>,
    notes: Vec<String>,
}

pub fn get_type_contract(
    host: &(impl Host + ?Sized),
    args: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let q = lookup::parse_symbol(
        args,
        "the type or trait to describe: a name (`Runtime`), a path (`tokio::sync::Mutex`) or `a.b.Class`",
    )?;
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    let project = ctx.project.clone().unwrap_or_else(|| "this project".into());
    let mut notes = Vec::new();
    let found = match find_definitions(host, &q, &project, &mut notes)? {
        Ok(found) => found,
        Err(answer) => return Ok(answer),
    };
    let t = match pick_type(host, ctx, &q, &found, &mut notes)? {
        Ok(t) => t,
        Err(answer) => return Ok(answer),
    };

    let mut contract = match &t.krate {
        Some((krate, version)) => dependency_contract(host, &t.sym, krate, version),
        None => workspace_contract(host, &t.sym)?,
    };
    notes.append(&mut contract.notes);
    if t.sym.kind == "type_alias" {
        notes.push(format!(
            "`{}` is a type alias: its target is in the signature; call get_type_contract on the target type for its members",
            t.sym.name
        ));
    }
    if let Some((krate, version)) = &t.krate {
        notes.push(format!(
            "not defined in {project}: from the locked dependency {krate} {version}"
        ));
    }
    Ok(render(host, ctx, &q.text, t, &contract, offset, notes))
}

/// The definitions in `file_path`, when the query gives one.
fn narrow(q: &lookup::SymbolQuery, v: Vec<Found>) -> Vec<Found> {
    match &q.file_path {
        Some(fp) => v
            .into_iter()
            .filter(|f| file_matches(&f.sym.file_path, fp))
            .collect(),
        None => v,
    }
}

/// The definitions the query names (workspace, else dependencies); `Err`: the answer.
fn find_definitions(
    host: &(impl Host + ?Sized),
    q: &lookup::SymbolQuery,
    project: &str,
    notes: &mut Vec<String>,
) -> ToolResult<Result<Vec<Found>, String>> {
    let ws = lookup::workspace(host, q)?;
    let mut found = narrow(q, ws.workspace.clone());
    if found.is_empty() && !ws.workspace.is_empty() {
        let syms: Vec<Sym> = ws.workspace.iter().map(|f| f.sym.clone()).collect();
        return Ok(Err(to_compact_json(&json!({
            "symbol": q.text,
            "notes": [format!(
                "`{}` is defined {} time(s), none in {}: {}",
                q.text,
                syms.len(),
                q.file_path.as_deref().unwrap_or(""),
                lookup::locations(&syms, 5)
            )],
        }))));
    }
    if found.is_empty() {
        let deps = lookup::dependencies(host, q);
        notes.extend(deps.notes.iter().cloned());
        found = narrow(q, deps.found);
        if found.is_empty() {
            notes.insert(
                0,
                lookup::unknown_name_reason(host, q, project, &ws.same_name, &deps.notes),
            );
            return Ok(Err(to_compact_json(
                &json!({"symbol": q.text, "notes": notes}),
            )));
        }
    }
    Ok(Ok(found))
}

/// The type the query means among `found`, with notes on the rest; `Err`: the answer.
fn pick_type<'f>(
    host: &(impl Host + ?Sized),
    ctx: &Ctx,
    q: &lookup::SymbolQuery,
    found: &'f [Found],
    notes: &mut Vec<String>,
) -> ToolResult<Result<&'f Found, String>> {
    let mut types: Vec<&Found> = found.iter().filter(|f| is_type(&f.sym.kind)).collect();
    let Some(first) = types.first().copied() else {
        return Err(not_a_type(&q.text, found));
    };
    let distinct: BTreeSet<&str> = types
        .iter()
        .map(|f| f.sym.qualified_name.as_str())
        .collect();
    if distinct.len() > 1 {
        // One library type among test-only ones and associated types is the one meant:
        // answering it saves a turn, and the note names the others.
        let primary: Vec<&Found> = types
            .iter()
            .copied()
            .filter(|f| !lookup::is_test_code(&f.sym) && f.sym.owner.is_none())
            .collect();
        let primary_names: BTreeSet<&str> = primary
            .iter()
            .map(|f| f.sym.qualified_name.as_str())
            .collect();
        if primary_names.len() != 1 {
            return Ok(Err(ambiguous(host, ctx, &q.text, &types)));
        }
        let rest: Vec<Sym> = types
            .iter()
            .filter(|f| f.sym.qualified_name != primary[0].sym.qualified_name)
            .map(|f| f.sym.clone())
            .collect();
        notes.push(format!(
            "`{}` also names {} type(s) in test code or inside other types: {}",
            q.text,
            rest.len(),
            lookup::locations(&rest, 3)
        ));
        types = primary;
    }
    let t = types.first().copied().unwrap_or(first);
    if types.len() > 1 {
        notes.push(format!(
            "{} definitions share the qualified name {} (cfg or platform variants); this is the one at {}:{}",
            types.len(),
            t.sym.qualified_name,
            t.sym.file_path,
            t.sym.start_line
        ));
    }
    let non_types = found.iter().filter(|f| !is_type(&f.sym.kind)).count();
    if non_types > 0 {
        notes.push(format!(
            "{non_types} other definition(s) named `{}` are not types and are left out",
            q.name
        ));
    }
    Ok(Ok(t))
}

fn not_a_type(text: &str, found: &[Found]) -> ToolError {
    let d = &found[0].sym;
    let hint = match d.kind.as_str() {
        "function" | "method" => {
            "resolve_definition or inspect_symbol show it; find_references lists its callers"
                .to_string()
        }
        "field" | "variant" => match d.owner.as_deref() {
            Some(o) => format!("it is part of `{o}`: get_type_contract(symbol: {o:?})"),
            None => "resolve_definition shows it".to_string(),
        },
        "module" => "get_file_outline lists a module's file".to_string(),
        _ => "resolve_definition or inspect_symbol show it".to_string(),
    };
    let more = if found.len() > 1 {
        format!(" ({} definitions share the name, none a type)", found.len())
    } else {
        String::new()
    };
    ToolError::invalid(format!(
        "`{text}` is a {} ({}:{}), not a type{more}; get_type_contract takes a struct, enum, union, trait, type alias, class or interface. For a {}: {hint}",
        d.kind, d.file_path, d.start_line, d.kind
    ))
}

fn ambiguous(host: &(impl Host + ?Sized), ctx: &Ctx, text: &str, types: &[&Found]) -> String {
    let page: Vec<&Found> = types.iter().take(PAGE).copied().collect();
    let render = |k: usize| {
        to_compact_json(&json!({
            "symbol": text,
            "ambiguous": true,
            "candidate_count": types.len(),
            "candidates": page[..k].iter().map(|f| lookup::found_json(f, Detail::NoDocs)).collect::<Vec<_>>(),
            "see_also": "get_type_contract(symbol: \"<a qualified_name above>\") for one of them",
            "notes": [format!(
                "`{text}` names {} types, most likely first{}",
                types.len(),
                if types.len() > PAGE { format!(" (the first {PAGE} listed)") } else { String::new() }
            )],
        }))
    };
    let k = match ctx.budget {
        None => page.len(),
        Some(b) => fit_prefix(page.len(), b, render, |s| host.count_tokens(s)),
    };
    render(k)
}

/// Members and relations of a workspace type.
fn workspace_contract(host: &(impl Host + ?Sized), t: &Sym) -> ToolResult<Contract> {
    let mut c = Contract::default();
    let own_file = host.file_symbols(&t.file_path)?;
    let others: Vec<Sym> = host
        .symbols_by_name(&t.name)?
        .into_iter()
        .filter(|d| is_type(&d.kind) && d.qualified_name != t.qualified_name)
        .collect();
    let sites = host.references_to_name(&t.name, true)?;

    // Impl headers: uses of the type name whose enclosing symbol is the impl's self type.
    let mut defs = vec![t.clone()];
    defs.extend(others.iter().cloned());
    let scope = resolve::Scope {
        name_imports: resolve::imports_by_file(&sites),
        ..resolve::Scope::default()
    };
    let (paths, headers) = impl_headers(t, &others, &defs, &scope, &sites, &mut c.notes);
    let files = member_files(t, &headers, &sites, &paths, &mut c.notes);
    let (members, nested) = read_members(host, t, &files, &own_file, &paths, &mut c.notes);

    let is_rust = t.file_path.ends_with(".rs");
    let trait_edges = implements_edges(host, t, &paths, is_rust, &mut c.notes);
    let trait_source = trait_source(host, t, is_rust, &mut c.notes);
    place_members(
        t,
        members,
        &nested,
        &headers,
        trait_edges.as_deref(),
        trait_source.as_deref(),
        &mut c,
    );

    // Traits implemented: edges where the host has them, else impl headers' text.
    if t.kind != "trait" && t.kind != "interface" {
        implemented_traits(trait_edges.as_deref(), &headers, &mut c);
    } else {
        implementors(host, t, &defs, &sites, &scope, &mut c);
    }
    Ok(c)
}

/// The type's impl headers, and the paths the index names the type by in them.
fn impl_headers(
    t: &Sym,
    others: &[Sym],
    defs: &[Sym],
    scope: &resolve::Scope,
    sites: &[Site],
    notes: &mut Vec<String>,
) -> (HashSet<String>, Vec<Header>) {
    let suffix = format!("::{}", t.name);
    let mut paths: HashSet<String> = HashSet::from([t.qualified_name.clone()]);
    let mut headers: Vec<Header> = Vec::new();
    let mut unclear_impls = 0;
    for s in sites.iter().filter(|s| s.kind == "type") {
        let e = s.enclosing_symbol.as_str();
        let own = e == t.qualified_name
            && (s.file_path != t.file_path || s.line < t.start_line || s.line > t.end_line);
        let elsewhere = e != t.qualified_name
            && e.ends_with(&suffix)
            && !others.iter().any(|o| o.qualified_name == e);
        if elsewhere {
            let ours = others.is_empty()
                || matches!(
                    resolve::attribute(s, defs, scope),
                    Attribution::Resolved(0, _)
                );
            if !ours {
                unclear_impls += 1;
                continue;
            }
            paths.insert(e.to_string());
        }
        if own || elsewhere {
            headers.push(Header {
                file: s.file_path.clone(),
                line: s.line,
                path: e.to_string(),
                text: s.line_text.clone(),
            });
        }
    }
    if unclear_impls > 0 {
        notes.push(format!(
            "{unclear_impls} impl block(s) in other modules may be for another type named `{}`; left out",
            t.name
        ));
    }
    (paths, headers)
}

/// The files holding the type's members: its own first, then at most MAX_IMPL_FILES.
fn member_files(
    t: &Sym,
    headers: &[Header],
    sites: &[Site],
    paths: &HashSet<String>,
    notes: &mut Vec<String>,
) -> Vec<String> {
    // Files holding members: the type's own, the impl blocks', and those of sites inside
    // members (a Go method's receiver type).
    let mut files: Vec<String> = vec![t.file_path.clone()];
    for f in headers.iter().map(|h| h.file.clone()).chain(
        sites
            .iter()
            .filter(|s| {
                paths
                    .iter()
                    .any(|p| s.enclosing_symbol.starts_with(&format!("{p}::")))
            })
            .map(|s| s.file_path.clone()),
    ) {
        if !files.contains(&f) {
            files.push(f);
        }
    }
    if files.len() > MAX_IMPL_FILES + 1 {
        notes.push(format!(
            "impl blocks sit in {} files; members of the first {MAX_IMPL_FILES} other files are listed",
            files.len() - 1
        ));
        files.truncate(MAX_IMPL_FILES + 1);
    }
    files
}

/// The type's members in `files`, and the fields nested one level deeper (a variant's).
fn read_members(
    host: &(impl Host + ?Sized),
    t: &Sym,
    files: &[String],
    own_file: &[Sym],
    paths: &HashSet<String>,
    notes: &mut Vec<String>,
) -> (Vec<Sym>, Vec<Sym>) {
    let mut members: Vec<Sym> = Vec::new();
    let mut nested: Vec<Sym> = Vec::new();
    let mut seen = HashSet::new();
    for f in files {
        let syms = if *f == t.file_path {
            own_file.to_vec()
        } else {
            match host.file_symbols(f) {
                Ok(s) => s,
                Err(e) => {
                    notes.push(format!(
                        "{f} could not be read from the index: {}",
                        e.message
                    ));
                    continue;
                }
            }
        };
        for s in syms {
            let parent = parent_of(&s.qualified_name);
            let direct = paths.contains(parent)
                && (parent == t.qualified_name || s.owner.as_deref() == Some(t.name.as_str()));
            if !seen.insert((s.file_path.clone(), s.start_line, s.qualified_name.clone())) {
                continue;
            }
            if direct {
                members.push(s);
            } else if s.kind == "field" && paths.contains(parent_of(parent)) {
                nested.push(s);
            }
        }
    }
    (members, nested)
}

/// The type's `implements` edges; `None`, with a note, when the index has none yet.
fn implements_edges(
    host: &(impl Host + ?Sized),
    t: &Sym,
    paths: &HashSet<String>,
    is_rust: bool,
    notes: &mut Vec<String>,
) -> Option<Vec<Edge>> {
    match trait_edges_from(host, paths) {
        Ok(edges) => Some(edges),
        Err(e) => {
            if is_rust && t.kind != "trait" {
                notes.push(format!(
                    "the index has no implements edges yet ({}); implemented traits are read from impl headers' source lines",
                    e.message
                ));
            } else if t.kind != "trait" {
                notes.push(format!(
                    "implemented traits and base types are unavailable: the index has no implements edges yet ({})",
                    e.message
                ));
            }
            None
        }
    }
}

/// A Rust trait's source lines, to tell required methods from provided ones.
fn trait_source(
    host: &(impl Host + ?Sized),
    t: &Sym,
    is_rust: bool,
    notes: &mut Vec<String>,
) -> Option<Vec<String>> {
    if t.kind == "trait" && is_rust {
        match host.read_lines(&t.file_path, t.start_line, t.end_line) {
            Ok(l) => Some(l),
            Err(e) => {
                notes.push(format!(
                    "the trait's source could not be read ({}); its methods are not split into required and provided",
                    e.message
                ));
                None
            }
        }
    } else {
        None
    }
}

/// The trait an impl header implements: its `implements` edge, else its source line.
fn header_trait(trait_edges: Option<&[Edge]>, h: &Header) -> Option<String> {
    if let Some(edges) = trait_edges
        && let Some(e) = edges
            .iter()
            .find(|e| e.file_path == h.file && e.line <= h.line && h.line <= e.line + 2)
    {
        return Some(edge_trait(e));
    }
    h.text.as_deref().and_then(impl_header).flatten()
}

/// Is `s` inside the type's own body?
fn inside(t: &Sym, s: &Sym) -> bool {
    s.file_path == t.file_path && t.start_line <= s.start_line && s.end_line <= t.end_line
}

/// Puts each member, with its impl's trait and a variant's fields, in its contract list.
fn place_members(
    t: &Sym,
    mut members: Vec<Sym>,
    nested: &[Sym],
    headers: &[Header],
    trait_edges: Option<&[Edge]>,
    trait_source: Option<&[String]>,
    c: &mut Contract,
) {
    members.sort_by(|a, b| {
        (a.file_path != t.file_path, &a.file_path, a.start_line).cmp(&(
            b.file_path != t.file_path,
            &b.file_path,
            b.start_line,
        ))
    });
    for s in members {
        // Which impl block (and so which trait) each member outside the type's body is in:
        // the nearest header above it in its file.
        let via = if inside(t, &s) {
            None
        } else {
            headers
                .iter()
                .filter(|h| {
                    h.file == s.file_path
                        && h.line <= s.start_line
                        && h.path == parent_of(&s.qualified_name)
                })
                .max_by_key(|h| h.line)
                .and_then(|h| header_trait(trait_edges, h))
        };
        let fields = if s.kind == "variant" {
            nested
                .iter()
                .filter(|f| parent_of(&f.qualified_name) == s.qualified_name)
                .map(|f| f.name.clone())
                .collect()
        } else {
            Vec::new()
        };
        let kind = s.kind.clone();
        let m = Member {
            sym: s,
            via,
            fields,
        };
        match kind.as_str() {
            "field" => c.fields.push(m),
            "variant" => c.variants.push(m),
            "method" | "function" if t.kind == "interface" && inside(t, &m.sym) => {
                c.required.push(m)
            }
            "method" | "function" if inside(t, &m.sym) && trait_source.is_some() => {
                let src = trait_source.unwrap_or_default();
                if has_body(src, t.start_line, &m.sym) {
                    c.provided.push(m)
                } else {
                    c.required.push(m)
                }
            }
            "method" | "function" => c.methods.push(m),
            _ => c.associated.push(m),
        }
    }
}

/// The traits a type implements: from `implements` edges, else from impl headers.
fn implemented_traits(trait_edges: Option<&[Edge]>, headers: &[Header], c: &mut Contract) {
    match trait_edges {
        Some(edges) => {
            for e in edges {
                c.implements.push(Relation {
                    name: edge_trait(e),
                    file: e.file_path.clone(),
                    line: e.line,
                    written: None,
                });
            }
            c.implements
                .sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        }
        None => {
            for h in headers {
                if let Some(tr) = h.text.as_deref().and_then(impl_header).flatten() {
                    c.implements.push(Relation {
                        name: tr,
                        file: h.file.clone(),
                        line: h.line,
                        written: None,
                    });
                }
            }
        }
    }
}

/// `implements` edges leaving the type (under any of the paths its impl blocks use).
fn trait_edges_from(host: &(impl Host + ?Sized), paths: &HashSet<String>) -> ToolResult<Vec<Edge>> {
    let mut out = Vec::new();
    let mut sorted: Vec<&String> = paths.iter().collect();
    sorted.sort();
    for p in sorted {
        out.extend(
            host.edges_from(p)?
                .into_iter()
                .filter(|e| e.kind == "implements"),
        );
    }
    Ok(out)
}

/// Whether a trait item has a default body: its source, comments removed, does not end
/// in `;`.
fn has_body(trait_source: &[String], trait_start: u32, m: &Sym) -> bool {
    let from = (m.start_line - trait_start) as usize;
    let to = ((m.end_line - trait_start) as usize).min(trait_source.len().saturating_sub(1));
    let text: String = trait_source
        .get(from..=to)
        .unwrap_or_default()
        .iter()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    !text.trim_end().ends_with(';')
}

fn implementors(
    host: &(impl Host + ?Sized),
    t: &Sym,
    defs: &[Sym],
    sites: &[Site],
    scope: &resolve::Scope,
    c: &mut Contract,
) {
    // Same-named traits elsewhere: what is written at each impl tells them apart.
    let ours = |s: &Site| {
        defs.len() == 1
            || matches!(
                resolve::attribute(s, defs, scope),
                Attribution::Resolved(0, _)
            )
    };
    match host.edges_to(&t.name) {
        Ok(edges) => {
            implementors_from_edges(&edges, &ours, &mut c.implementors);
            if t.file_path.ends_with(".rs") {
                add_written_self_types(host, &mut c.implementors);
            }
        }
        Err(e) => {
            let rust = t.file_path.ends_with(".rs");
            c.notes.push(if rust {
                format!(
                    "the index has no implements edges yet ({}); implementors are read from impl headers' source lines",
                    e.message
                )
            } else {
                format!(
                    "implementors are unavailable: the index has no implements edges yet ({})",
                    e.message
                )
            });
            if !rust {
                return;
            }
            implementors_from_headers(t, sites, &ours, &mut c.implementors);
        }
    }
}

/// The implementors the `implements` edges name, those of `ours` once each.
fn implementors_from_edges(edges: &[Edge], ours: &dyn Fn(&Site) -> bool, out: &mut Vec<Relation>) {
    let mut seen = HashSet::new();
    for e in edges.iter().filter(|e| e.kind == "implements") {
        let site = scryer_plugin_sdk::attribution::edge_site(e);
        if ours(&site) && seen.insert((e.from_symbol.clone(), e.file_path.clone(), e.line)) {
            out.push(Relation {
                name: e.from_symbol.clone(),
                file: e.file_path.clone(),
                line: e.line,
                written: None,
            });
        }
    }
}

/// The implementors Rust impl headers' source lines name, those of `ours` once each.
fn implementors_from_headers(
    t: &Sym,
    sites: &[Site],
    ours: &dyn Fn(&Site) -> bool,
    out: &mut Vec<Relation>,
) {
    let mut seen = HashSet::new();
    for s in sites.iter().filter(|s| s.kind == "type") {
        let Some(Some(tr)) = s.line_text.as_deref().and_then(impl_header) else {
            continue;
        };
        if trait_name(&tr) == t.name
            && ours(s)
            && seen.insert((s.enclosing_symbol.clone(), s.file_path.clone(), s.line))
        {
            out.push(Relation {
                name: s.enclosing_symbol.clone(),
                file: s.file_path.clone(),
                line: s.line,
                written: s
                    .line_text
                    .as_deref()
                    .and_then(|l| written_self_type(l, &s.enclosing_symbol)),
            });
        }
    }
}

/// Reads the impl header lines of edge-found implementors (one read per file, for the
/// first files only) to name self types the index names vaguely.
fn add_written_self_types(host: &(impl Host + ?Sized), rels: &mut [Relation]) {
    const MAX_FILES: usize = 16;
    let mut files: Vec<String> = Vec::new();
    for r in rels.iter() {
        if !files.contains(&r.file) {
            files.push(r.file.clone());
        }
    }
    for f in files.iter().take(MAX_FILES) {
        let lines: Vec<u32> = rels
            .iter()
            .filter(|r| &r.file == f)
            .map(|r| r.line)
            .collect();
        let (lo, hi) = (
            lines.iter().copied().min().unwrap_or(1),
            lines.iter().copied().max().unwrap_or(1),
        );
        let Ok(text) = host.read_lines(f, lo, hi) else {
            continue;
        };
        for r in rels.iter_mut().filter(|r| &r.file == f) {
            if let Some(l) = text.get((r.line - lo) as usize) {
                r.written = written_self_type(l, &r.name);
            }
        }
    }
}

/// A dependency's type: its members from the crate's definitions (no edges and no
/// source reads outside the project).
fn dependency_contract(
    host: &(impl Host + ?Sized),
    t: &Sym,
    krate: &str,
    version: &str,
) -> Contract {
    let mut c = Contract::default();
    let all = match host.crate_symbols(krate, Some(version)) {
        Ok(a) => a,
        Err(e) => {
            c.notes.push(format!(
                "the members of {krate} {version} could not be read ({}); only the definition is shown",
                e.message
            ));
            return c;
        }
    };
    let suffix = format!("::{}", t.name);
    let others: HashSet<&str> = all
        .iter()
        .filter(|d| d.symbol.name == t.name && is_type(&d.symbol.kind))
        .map(|d| d.symbol.qualified_name.as_str())
        .filter(|qn| *qn != t.qualified_name)
        .collect();
    for d in &all {
        let s = &d.symbol;
        let parent = parent_of(&s.qualified_name);
        let ours = parent == t.qualified_name
            || (others.is_empty()
                && parent.ends_with(&suffix)
                && s.owner.as_deref() == Some(t.name.as_str()));
        if !ours {
            continue;
        }
        let m = Member {
            sym: s.clone(),
            via: None,
            fields: Vec::new(),
        };
        match s.kind.as_str() {
            "field" => c.fields.push(m),
            "variant" => c.variants.push(m),
            "method" | "function" => c.methods.push(m),
            _ => c.associated.push(m),
        }
    }
    c.notes.push(
        "for a dependency's type, traits and implementors are not indexed and trait methods are not split into required and provided".into(),
    );
    c
}

fn member_json(m: &Member, t: &Sym, detail: Detail) -> Value {
    let mut v = json!({"name": m.sym.name, "line": m.sym.start_line});
    if !matches!(
        m.sym.kind.as_str(),
        "field" | "variant" | "method" | "function"
    ) {
        v["kind"] = json!(m.sym.kind);
    }
    if detail < Detail::Bare && !m.sym.signature.is_empty() {
        v["signature"] = json!(m.sym.signature);
    }
    if let Some(tr) = &m.via {
        v["trait"] = json!(tr);
    }
    if !m.fields.is_empty() {
        v["fields"] = json!(m.fields);
    }
    if m.sym.file_path != t.file_path {
        v["file_path"] = json!(m.sym.file_path);
    }
    v
}

fn relation_json(r: &Relation, key: &str) -> Value {
    json!({key: r.name, "written": r.written, "file_path": r.file, "line": r.line})
}

fn render(
    host: &(impl Host + ?Sized),
    ctx: &Ctx,
    text: &str,
    t: &Found,
    c: &Contract,
    offset: usize,
    notes: Vec<String>,
) -> String {
    let sections = sections(t, c);
    let longest = sections.iter().map(|s| s.1.len()).max().unwrap_or(0);
    let per_section = longest.saturating_sub(offset);
    let empty_note = empty_note(t, offset, longest, per_section);
    let answer = ContractAnswer {
        text,
        t,
        sections,
        offset,
        notes,
        empty_note,
    };
    let body = |k: usize, detail: Detail| answer.body(k, detail);
    let Some(budget) = ctx.budget else {
        return body(per_section, Detail::Full);
    };
    let count = |s: &str| host.count_tokens(s);
    for detail in [Detail::Full, Detail::NoDocs] {
        let b = body(per_section, detail);
        if count(&b) <= budget {
            return b;
        }
    }
    let k = fit_prefix(per_section, budget, |k| body(k, Detail::NoDocs), count);
    if k > 0 {
        return body(k, Detail::NoDocs);
    }
    let k = fit_prefix(per_section, budget, |k| body(k, Detail::Bare), count);
    body(k.max(1).min(per_section), Detail::Bare)
}

/// (answer key, items in full, items bare) of one list of the contract.
type Section<'a> = (&'a str, Vec<Value>, Vec<Value>);

/// The contract's lists as (answer key, items) in the order an agent reads them.
fn sections<'a>(t: &Found, c: &Contract) -> Vec<Section<'a>> {
    let members = |key: &'static str, ms: &[Member]| {
        (
            key,
            ms.iter()
                .map(|m| member_json(m, &t.sym, Detail::Full))
                .collect(),
            ms.iter()
                .map(|m| member_json(m, &t.sym, Detail::Bare))
                .collect(),
        )
    };
    let relations = |key: &'static str, item: &str, rs: &[Relation]| {
        let v: Vec<Value> = rs.iter().map(|r| relation_json(r, item)).collect();
        (key, v.clone(), v)
    };
    vec![
        members("fields", &c.fields),
        members("variants", &c.variants),
        members("required", &c.required),
        members("provided", &c.provided),
        members("methods", &c.methods),
        members("associated", &c.associated),
        relations("implements", "trait", &c.implements),
        relations("implementors", "type", &c.implementors),
    ]
}

/// The note for an answer with no items: the type has none, or the offset is past them.
fn empty_note(t: &Found, offset: usize, longest: usize, per_section: usize) -> Vec<String> {
    let mut empty_note = Vec::new();
    if longest == 0 {
        empty_note.push(format!(
            "no members indexed for `{}`: it has no fields, variants, methods or impls the index knows of",
            t.sym.qualified_name
        ));
    } else if per_section == 0 {
        empty_note.push(format!(
            "offset {offset} is past every list (the longest has {longest} items)"
        ));
    }
    empty_note
}

/// What a contract answer is rendered from, at any page size and detail.
struct ContractAnswer<'a> {
    text: &'a str,
    t: &'a Found,
    sections: Vec<Section<'a>>,
    offset: usize,
    notes: Vec<String>,
    empty_note: Vec<String>,
}

impl ContractAnswer<'_> {
    /// The answer with up to `k` items of each list from the offset, at `detail`.
    fn body(&self, k: usize, detail: Detail) -> String {
        let (t, offset) = (self.t, self.offset);
        let mut v = json!({
            "symbol": self.text,
            "type": lookup::found_json(t, if detail == Detail::Full { Detail::Full } else { Detail::NoDocs }),
        });
        let mut omitted = serde_json::Map::new();
        let mut total = serde_json::Map::new();
        for (key, full, bare) in &self.sections {
            let items = if detail == Detail::Bare { bare } else { full };
            let from = offset.min(items.len());
            let to = (offset + k).min(items.len());
            v[*key] = json!(items[from..to]);
            if !items.is_empty() {
                total.insert(key.to_string(), json!(items.len()));
            }
            if to < items.len() {
                omitted.insert(key.to_string(), json!(items.len() - to));
            }
        }
        let cut = !omitted.is_empty();
        if cut || offset > 0 {
            // Counts of the whole lists, for an answer that shows only part of them.
            v["total"] = Value::Object(total);
        }
        if offset > 0 {
            v["offset"] = json!(offset);
        }
        v["complete"] = json!(!cut);
        if cut {
            v["omitted"] = Value::Object(omitted);
            v["next_offset"] = json!(offset + k);
            v["see_also"] = json!(format!(
                "get_type_contract(symbol: {:?}, offset: {}) for the next items of each list",
                t.sym.qualified_name,
                offset + k
            ));
        }
        let mut all_notes = self.notes.clone();
        all_notes.extend(self.empty_note.iter().cloned());
        if detail == Detail::Bare {
            all_notes.push(
                "member signatures omitted to fit the budget (raise max_tokens for them)".into(),
            );
        }
        v["notes"] = json!(all_notes);
        to_compact_json(&v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_host::{MemHost, demo, demo_edges, site, sym};

    fn call(h: &MemHost, args: Value, budget: Option<u32>) -> ToolResult<Value> {
        let ctx = Ctx {
            budget,
            project: Some("demo".into()),
            ..Ctx::default()
        };
        let out = get_type_contract(h, &Args::from_value(args).unwrap(), &ctx)?;
        Ok(serde_json::from_str(&out).unwrap())
    }

    #[test]
    fn impl_headers_are_read_for_their_trait() {
        assert_eq!(
            impl_header("impl Shape for Circle {"),
            Some(Some("Shape".into()))
        );
        assert_eq!(impl_header("impl Circle {"), Some(None));
        assert_eq!(
            impl_header("impl<T: Fn() -> u8> fmt::Debug for Wrap<T> where T: Clone {"),
            Some(Some("fmt::Debug".into()))
        );
        assert_eq!(
            impl_header("unsafe impl<T: Send> Send for Chan<T> {}"),
            Some(Some("Send".into()))
        );
        assert_eq!(
            impl_header("impl From<Vec<u8>> for Bytes {"),
            Some(Some("From<Vec<u8>>".into()))
        );
        assert_eq!(
            impl_header("impl<F> Future for Map<F> where F: for<'a> Fn(&'a u8) {"),
            Some(Some("Future".into()))
        );
        assert_eq!(impl_header("impl<T> Wrap<T> where T: Clone {"), Some(None));
        assert_eq!(impl_header("let implement = 3;"), None);
        assert_eq!(impl_header("pub fn both() -> (Circle, Square) {"), None);
        assert_eq!(
            impl_parts("impl Schedule for Arc<Handle> {"),
            Some((Some("Schedule".into()), "Arc<Handle>".into()))
        );
        assert_eq!(
            impl_parts("impl<T: ?Sized + AsyncRead + Unpin> AsyncRead for Box<T> {"),
            Some((Some("AsyncRead".into()), "Box<T>".into()))
        );
        assert_eq!(
            impl_parts("impl<T> Wrap<T> where T: Clone {"),
            Some((None, "Wrap<T>".into()))
        );
        assert_eq!(trait_name("fmt::Debug"), "Debug");
        assert_eq!(trait_name("From<Vec<u8>>"), "From");
    }

    #[test]
    fn a_struct_lists_fields_methods_and_traits_from_edges() {
        let mut h = demo();
        h.edges = demo_edges();
        h.missing.remove("edges");
        let v = call(&h, json!({"symbol": "Circle"}), Some(1000)).unwrap();
        assert_eq!(
            v,
            json!({
                "symbol": "Circle",
                "type": {"qualified_name": "demo::shapes::Circle", "kind": "struct",
                         "file_path": "src/shapes.rs", "start_line": 9, "end_line": 11,
                         "signature": "pub struct Circle", "doc": "A circle."},
                "fields": [{"name": "radius", "line": 10, "signature": "pub radius: f64"}],
                "methods": [
                    {"name": "new", "line": 15, "signature": "pub fn new(radius: f64) -> Circle"},
                    {"name": "area", "line": 21, "signature": "fn area(&self) -> f64", "trait": "Shape"},
                ],
                "implements": [{"trait": "Shape", "file_path": "src/shapes.rs", "line": 20}],
                "complete": true,
            })
        );
    }

    #[test]
    fn without_edges_traits_come_from_impl_headers_with_a_note() {
        let h = demo();
        let v = call(&h, json!({"symbol": "Square"}), Some(1000)).unwrap();
        assert_eq!(
            v["implements"],
            json!([{"trait": "Shape", "file_path": "src/shapes.rs", "line": 36}])
        );
        assert_eq!(v["methods"][1]["trait"], "Shape");
        assert!(v["methods"][0].get("trait").is_none());
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("no implements edges yet"),
            "{v}"
        );
    }

    #[test]
    fn a_trait_splits_required_and_provided_and_lists_implementors() {
        let mut h = demo();
        // A provided method, added to the trait's source and the index.
        let shapes = h.files.borrow()["src/shapes.rs"].replace(
            "    fn area(&self) -> f64;\n}",
            "    fn area(&self) -> f64;\n    fn name(&self) -> String { // default\n        \"shape\".into()\n    }\n}",
        );
        h.add_file("src/shapes.rs", shapes);
        h.symbols
            .iter_mut()
            .filter(|s| s.qualified_name == "demo::shapes::Shape")
            .for_each(|s| s.end_line = 9);
        h.symbols.push(sym(
            "method",
            "demo::shapes::Shape::name",
            Some("Shape"),
            "src/shapes.rs",
            (6, 8),
            "fn name(&self) -> String",
        ));
        for with_edges in [false, true] {
            // Without edges the impl headers' lines are read; with them, the edges. The
            // header lines moved down by three with the added method.
            if with_edges {
                let mut edges = demo_edges();
                edges.iter_mut().for_each(|e| e.line += 3);
                h.edges = edges;
                h.missing.remove("edges");
            } else {
                h.sites
                    .iter_mut()
                    .filter(|(_, s)| s.file_path == "src/shapes.rs" && s.line > 6)
                    .for_each(|(_, s)| s.line += 3);
            }
            let v = call(&h, json!({"symbol": "Shape"}), Some(1000)).unwrap();
            assert_eq!(
                v["required"],
                json!([{"name": "area", "line": 5, "signature": "fn area(&self) -> f64"}]),
                "{v}"
            );
            assert_eq!(v["provided"][0]["name"], "name");
            assert_eq!(
                v["implementors"],
                json!([
                    {"type": "demo::shapes::Circle", "file_path": "src/shapes.rs", "line": 23},
                    {"type": "demo::shapes::Square", "file_path": "src/shapes.rs", "line": 39},
                ]),
                "edges: {with_edges}"
            );
            assert_eq!(v["notes"].as_array().is_some(), !with_edges, "{v}");
        }
    }

    #[test]
    fn implementors_named_vaguely_by_the_index_carry_the_written_self_type() {
        let mut h = demo();
        h.add_file(
            "src/boxed.rs",
            "use crate::shapes::Shape;\n\nimpl<T: Shape + ?Sized> Shape for Box<T> {\n    fn area(&self) -> f64 {\n        (**self).area()\n    }\n}\n",
        );
        h.add_site(
            "Shape",
            site("src/boxed.rs", 3, "type", None, "demo::boxed::Box"),
        );
        let boxed = |v: &Value| {
            v["implementors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["file_path"] == "src/boxed.rs")
                .cloned()
        };
        let without_edges = call(&h, json!({"symbol": "Shape"}), None).unwrap();
        let mut edges = demo_edges();
        edges.push(Edge {
            kind: "implements".into(),
            from_symbol: "demo::boxed::Box".into(),
            to_name: "Shape".into(),
            site_kind: "type".into(),
            file_path: "src/boxed.rs".into(),
            line: 3,
            column: 26,
            ..Edge::default()
        });
        h.edges = edges;
        h.missing.remove("edges");
        let with_edges = call(&h, json!({"symbol": "Shape"}), None).unwrap();
        for v in [without_edges, with_edges] {
            assert_eq!(
                boxed(&v),
                Some(
                    json!({"type": "demo::boxed::Box", "written": "Box<T>", "file_path": "src/boxed.rs", "line": 3})
                ),
                "{v}"
            );
            // Circle's header names it plainly: nothing to add.
            let circle = v["implementors"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["type"] == "demo::shapes::Circle")
                .cloned()
                .unwrap();
            assert!(circle.get("written").is_none(), "{v}");
        }
    }

    #[test]
    fn methods_of_impl_blocks_in_other_files_are_found() {
        let mut h = demo();
        h.add_file("src/extra.rs", "use crate::shapes::Circle;\n\nimpl Circle {\n    pub fn grow(&mut self) {\n        self.radius *= 2.0;\n    }\n}\n");
        h.symbols.push(sym(
            "method",
            "demo::extra::Circle::grow",
            Some("Circle"),
            "src/extra.rs",
            (4, 6),
            "pub fn grow(&mut self)",
        ));
        h.add_site(
            "Circle",
            site("src/extra.rs", 3, "type", None, "demo::extra::Circle"),
        );
        let v = call(&h, json!({"symbol": "Circle"}), Some(1000)).unwrap();
        let methods: Vec<(&str, Option<&str>)> = v["methods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["name"].as_str().unwrap(), m["file_path"].as_str()))
            .collect();
        assert_eq!(
            methods,
            [
                ("new", None),
                ("area", None),
                ("grow", Some("src/extra.rs"))
            ]
        );
    }

    #[test]
    fn not_a_type_is_an_error_naming_the_kind_and_the_tool() {
        let h = demo();
        let e = call(&h, json!({"symbol": "describe"}), None).unwrap_err();
        assert_eq!(e.kind, scryer_plugin_sdk::ErrorKind::InvalidArgument);
        assert!(
            e.message.contains("is a function (src/util.rs:6)")
                && e.message.contains("resolve_definition"),
            "{}",
            e.message
        );
        let e = call(&h, json!({"symbol": "radius"}), None).unwrap_err();
        assert!(
            e.message.contains("get_type_contract(symbol: \"Circle\")"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unknown_names_and_ambiguous_types_are_explained() {
        let mut h = demo();
        let v = call(&h, json!({"symbol": "Nope"}), None).unwrap();
        assert!(
            v["notes"][0].as_str().unwrap().starts_with("unknown name"),
            "{v}"
        );
        h.symbols.push(sym(
            "struct",
            "demo::util::Circle",
            None,
            "src/util.rs",
            (40, 42),
            "pub struct Circle",
        ));
        let v = call(&h, json!({"symbol": "Circle"}), None).unwrap();
        assert_eq!(v["ambiguous"], true);
        assert_eq!(v["candidate_count"], 2);
        let v = call(
            &h,
            json!({"symbol": "Circle", "file_path": "src/shapes.rs"}),
            None,
        )
        .unwrap();
        assert_eq!(v["type"]["qualified_name"], "demo::shapes::Circle");
    }

    #[test]
    fn one_library_type_among_test_types_is_answered_with_a_note() {
        let mut h = demo();
        h.add_file("tests/shapes.rs", "struct Circle;\n");
        h.symbols.push(sym(
            "struct",
            "demo::tests::shapes::Circle",
            None,
            "tests/shapes.rs",
            (1, 1),
            "struct Circle",
        ));
        let v = call(&h, json!({"symbol": "Circle"}), Some(1000)).unwrap();
        assert_eq!(v["type"]["qualified_name"], "demo::shapes::Circle", "{v}");
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("demo::tests::shapes::Circle (tests/shapes.rs:1)"),
            "{v}"
        );
    }

    #[test]
    fn long_lists_are_cut_evenly_and_paged() {
        let mut h = demo();
        let mut src = String::from("pub struct Big {\n");
        for i in 0..40 {
            src.push_str(&format!("    pub field_{i:02}: u64,\n"));
            h.symbols.push(sym(
                "field",
                &format!("demo::big::Big::field_{i:02}"),
                Some("Big"),
                "src/big.rs",
                (i + 2, i + 2),
                &format!("pub field_{i:02}: u64"),
            ));
        }
        src.push_str("}\n");
        h.add_file("src/big.rs", src);
        h.symbols.push(sym(
            "struct",
            "demo::big::Big",
            None,
            "src/big.rs",
            (1, 42),
            "pub struct Big",
        ));
        let v = call(&h, json!({"symbol": "Big"}), Some(300)).unwrap();
        let shown = v["fields"].as_array().unwrap().len();
        assert!(shown > 0 && shown < 40, "{v}");
        assert_eq!(v["complete"], false);
        assert_eq!(v["omitted"]["fields"], 40 - shown);
        assert_eq!(v["next_offset"], shown);
        let rest = call(&h, json!({"symbol": "Big", "offset": shown}), None).unwrap();
        assert_eq!(rest["fields"].as_array().unwrap().len(), 40 - shown);
        assert_eq!(rest["complete"], true);
    }
}
