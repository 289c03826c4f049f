//! `inspect_symbol`: "what is this?" in one call.
//!
//! A header (name, kind, place, signature, doc) and capped sections: the source, the
//! 1-hop callers and callees (or, for a type, its members), how many references it
//! has, and the recorded decisions that bear on it. Every capped section names the tool
//! that has the rest. When the answer is over budget the snippet is shortened first,
//! then the lists, so later sections are never lost to an early long one.

use std::collections::HashSet;

use scryer_decisions::{Corpus, DOC_DIRS, SourceDoc, StoredRow, SymbolInfo};
use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::attribution::{SymbolQuery, Tie, file_matches, parse_symbol, relative_path};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::callgraph::{CallGraph, Provenance, Target};
use scryer_plugin_sdk::host::{Ctx, DepSym, Host, Site, Sym};
use scryer_plugin_sdk::{ToolError, ToolResult, to_compact_json};
use serde_json::{Map, Value, json};

pub const SECTIONS: [&str; 6] = [
    "snippet",
    "callers",
    "callees",
    "references",
    "invariants",
    "members",
];
/// Edges that make a 1-hop neighbour.
const NEIGHBOUR_KINDS: &[&str] = &["calls", "implements", "instantiates"];
pub const DEFAULT_SNIPPET_LINES: u32 = 25;
const MAX_SNIPPET_LINES: i64 = 1000;
/// Snippet characters when the caller set no budget and no `snippet_lines`.
const DEFAULT_SNIPPET_CHARS: usize = 1200;
const MAX_LINE_CHARS: usize = 200;
const DOC_LINES: usize = 3;
const DOC_CHARS: usize = 400;
const MAX_NEIGHBOURS: usize = 5;
const MAX_MEMBERS: usize = 8;
const MAX_INVARIANTS: usize = 3;
const MAX_CANDIDATES: usize = 10;
pub const MAX_BATCH: usize = 20;
/// Per-name budget of a batch when the caller set none.
const BATCH_NAME_BUDGET: u32 = 500;

const TYPE_KINDS: &[&str] = &["struct", "enum", "trait", "union", "class", "interface"];
const CALLABLE_KINDS: &[&str] = &["function", "method"];

struct Request {
    names: Vec<SymbolQuery>,
    batch: bool,
    file_path: Option<String>,
    include: Vec<&'static str>,
    snippet_lines: u32,
    /// The project's name, for notes.
    project: String,
    /// Cap the snippet's characters (the caller set neither a budget nor `snippet_lines`).
    char_cap: bool,
}

fn parse(args: &Args, ctx: &Ctx) -> ToolResult<Request> {
    let one = args.opt_str("symbol")?;
    let many = args.opt_str_list("symbols")?;
    let (texts, batch) = match (one, many) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid(
                "give `symbol` for one name or `symbols` for several, not both",
            ));
        }
        (Some(s), None) => (vec![s], false),
        (None, Some(list)) => {
            let list: Vec<String> = list.into_iter().filter(|s| !s.is_empty()).collect();
            if list.is_empty() {
                return Err(ToolError::invalid(
                    "`symbols` is empty; accepted: a list of names, `Type::name` or qualified paths",
                ));
            }
            if list.len() > MAX_BATCH {
                return Err(ToolError::invalid(format!(
                    "`symbols` holds {} names; accepted: at most {MAX_BATCH} per call",
                    list.len()
                )));
            }
            (list, true)
        }
        (None, None) => {
            return Err(ToolError::invalid(
                "`symbol` is required: a name, `Type::name` or a qualified path (or `symbols`: a list of them)",
            ));
        }
    };
    let arg = if batch { "symbols" } else { "symbol" };
    let names = texts
        .iter()
        .map(|t| parse_symbol(arg, t))
        .collect::<ToolResult<Vec<_>>>()?;
    let include: Vec<&'static str> = match args.opt_str_list("include")? {
        None => SECTIONS.to_vec(),
        Some(list) => list
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| {
                let lower = s.to_ascii_lowercase();
                SECTIONS
                    .iter()
                    .copied()
                    .find(|c| *c == lower)
                    .ok_or_else(|| {
                        ToolError::invalid(format!(
                            "`include` has {s:?}; accepted: {} (the header always comes)",
                            SECTIONS.join(", ")
                        ))
                    })
            })
            .collect::<ToolResult<_>>()?,
    };
    let lines_arg = args.opt_int("snippet_lines", 1, MAX_SNIPPET_LINES)?;
    let file_path = match args.opt_str("file_path")? {
        Some(fp) => {
            check_text("file_path", &fp, 4096)?;
            Some(relative_path(&fp, ctx.project_root.as_deref()))
        }
        None => None,
    };
    Ok(Request {
        names,
        batch,
        file_path,
        include,
        snippet_lines: lines_arg.map_or(DEFAULT_SNIPPET_LINES, |n| n as u32),
        project: ctx.project.clone().unwrap_or_else(|| "this project".into()),
        char_cap: lines_arg.is_none() && !ctx.budget_explicit && ctx.budget.is_some(),
    })
}

/// A capped list: what is shown and how many there are.
#[derive(Default)]
struct Listing {
    items: Vec<String>,
    total: usize,
    /// Where an incoming listing comes from (precise data or the heuristic).
    precision: Option<Provenance>,
}

struct Snippet {
    file_path: String,
    start: u32,
    /// The symbol's last line.
    end: u32,
    /// Lines read (each cut at 200 characters), already within the line/char caps.
    lines: Vec<String>,
}

/// Everything found about one name, before it is fitted to a budget.
#[derive(Default)]
struct Report {
    /// Fields that always come: the query, the header, or ambiguity and candidates.
    head: Map<String, Value>,
    /// The definition's qualified name, when there is exactly one.
    qualified_name: Option<String>,
    name: String,
    snippet: Option<Snippet>,
    callers: Option<Listing>,
    callees: Option<Listing>,
    members: Option<Listing>,
    implements: Option<Listing>,
    implemented_by: Option<Listing>,
    reference_count: Option<usize>,
    invariants: Option<(Vec<Value>, usize)>,
    notes: Vec<String>,
}

/// How much of the lists a rendering keeps: full caps, two each, none.
const LIST_LEVELS: [usize; 3] = [usize::MAX, 2, 0];

impl Report {
    fn render(&self, snippet_k: usize, list_cap: usize) -> Value {
        let mut out = self.head.clone();
        let mut see_also: Vec<String> = Vec::new();
        let mut notes = self.notes.clone();
        let qn = self.qualified_name.as_deref().unwrap_or(&self.name);
        if let Some(s) = &self.snippet {
            let k = snippet_k.min(s.lines.len());
            if k > 0 {
                out.insert("snippet".into(), json!(s.lines[..k].join("\n")));
            }
            let next = s.start + k as u32;
            if next <= s.end {
                out.insert("snippet_truncated".into(), json!(true));
                out.insert(
                    "snippet_remaining".into(),
                    json!({"file_path": s.file_path, "start_line": next, "end_line": s.end}),
                );
                see_also.push(format!(
                    "rest of body: lines {next}-{} in {}",
                    s.end, s.file_path
                ));
                if k < s.lines.len() {
                    notes.push("snippet shortened to fit the token budget".into());
                }
            }
        }
        let mut list =
            |field: &str, count_field: &str, l: &Option<Listing>, cap: usize, more: String| {
                if let Some(l) = l {
                    let shown = cap.min(list_cap).min(l.items.len());
                    out.insert(field.into(), json!(l.items[..shown]));
                    out.insert(count_field.into(), json!(l.total));
                    if shown < l.total {
                        see_also.push(more);
                    }
                }
            };
        list(
            "callers",
            "caller_count",
            &self.callers,
            MAX_NEIGHBOURS,
            format!(
                "trace_call_hierarchy(symbol: {qn:?}, direction: \"incoming\") for every caller"
            ),
        );
        list(
            "callees",
            "callee_count",
            &self.callees,
            MAX_NEIGHBOURS,
            format!(
                "trace_call_hierarchy(symbol: {qn:?}, direction: \"outgoing\") for every callee"
            ),
        );
        list(
            "members",
            "member_count",
            &self.members,
            MAX_MEMBERS,
            format!("get_type_contract(symbol: {qn:?}) for every member"),
        );
        list(
            "implements",
            "implements_count",
            &self.implements,
            MAX_NEIGHBOURS,
            format!("calculate_blast_radius(symbol: {qn:?}) for what depends on it"),
        );
        list(
            "implemented_by",
            "implementor_count",
            &self.implemented_by,
            MAX_NEIGHBOURS,
            format!("calculate_blast_radius(symbol: {qn:?}) for every implementor and its users"),
        );
        if let Some(n) = self.reference_count {
            out.insert("reference_count".into(), json!(n));
            if n > 0 {
                see_also.push(format!(
                    "find_references(symbol: {qn:?}) for the references"
                ));
            }
        }
        if let Some((shown, total)) = &self.invariants {
            let k = list_cap.min(shown.len());
            out.insert("invariants".into(), json!(shown[..k]));
            if *total > k {
                see_also.push(format!(
                    "query_adrs(query: {:?}) for every decision that mentions it",
                    self.name
                ));
            }
        }
        see_also.dedup();
        out.insert("see_also".into(), json!(see_also));
        out.insert("notes".into(), json!(notes));
        Value::Object(out)
    }

    /// The rendering that fits `budget`: the longest snippet with full lists, else
    /// shorter lists, else the header alone.
    fn fit<H: Host + ?Sized>(&self, host: &H, budget: Option<u32>) -> Value {
        let lines = self.snippet.as_ref().map_or(0, |s| s.lines.len());
        let Some(budget) = budget else {
            return self.render(lines, usize::MAX);
        };
        let count = |v: &Value| host.count_tokens(&to_compact_json(v));
        for cap in LIST_LEVELS {
            if count(&self.render(0, cap)) <= budget {
                let k = fit_prefix(
                    lines,
                    budget,
                    |k| to_compact_json(&self.render(k, cap)),
                    |s| host.count_tokens(s),
                );
                return self.render(k, cap);
            }
        }
        self.render(0, 0)
    }
}

fn first_lines(doc: &str) -> (String, bool) {
    let lines: Vec<&str> = doc.lines().collect();
    let mut text = lines
        .iter()
        .take(DOC_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    let mut cut = lines.len() > DOC_LINES;
    if text.chars().count() > DOC_CHARS {
        text = text.chars().take(DOC_CHARS).collect::<String>() + "…";
        cut = true;
    }
    (text, cut)
}

fn header(d: &Sym) -> Map<String, Value> {
    let mut h = Map::new();
    h.insert("qualified_name".into(), json!(d.qualified_name));
    h.insert("kind".into(), json!(d.kind));
    h.insert("file_path".into(), json!(d.file_path));
    h.insert("start_line".into(), json!(d.start_line));
    h.insert("end_line".into(), json!(d.end_line));
    if !d.signature.is_empty() {
        h.insert("signature".into(), json!(d.signature));
    }
    if let Some(doc) = d.docstring.as_deref().filter(|d| !d.trim().is_empty()) {
        let (text, cut) = first_lines(doc.trim());
        h.insert("docstring".into(), json!(text));
        if cut {
            h.insert("docstring_truncated".into(), json!(true));
        }
    }
    h
}

fn cut_line(line: &str) -> String {
    if line.chars().count() > MAX_LINE_CHARS {
        line.chars().take(MAX_LINE_CHARS).collect::<String>() + "…"
    } else {
        line.to_string()
    }
}

/// The definition's source, within the line cap (and the character cap when asked).
fn read_snippet<H: Host + ?Sized>(
    host: &H,
    d: &Sym,
    req: &Request,
    notes: &mut Vec<String>,
) -> Option<Snippet> {
    let end = d.end_line.max(d.start_line);
    let last = end.min(d.start_line.saturating_add(req.snippet_lines - 1));
    match host.read_lines(&d.file_path, d.start_line, last) {
        Ok(raw) => {
            let mut lines = Vec::new();
            let mut chars = 0;
            for l in raw.iter().map(|l| cut_line(l)) {
                let n = l.chars().count() + 1;
                if req.char_cap && !lines.is_empty() && chars + n > DEFAULT_SNIPPET_CHARS {
                    break;
                }
                chars += n;
                lines.push(l);
            }
            Some(Snippet {
                file_path: d.file_path.clone(),
                start: d.start_line,
                end,
                lines,
            })
        }
        Err(e) => {
            notes.push(format!("snippet unavailable: {}", e.message));
            None
        }
    }
}

/// Shared across a batch: the decision corpus, built on first use.
struct Shared {
    corpus: Option<Result<Corpus, String>>,
}

impl Shared {
    fn corpus<H: Host + ?Sized>(&mut self, host: &H) -> Result<&Corpus, String> {
        if self.corpus.is_none() {
            let built = (|| -> ToolResult<Corpus> {
                let mut docs = Vec::new();
                for dir in DOC_DIRS {
                    docs.extend(host.list_documents(dir)?.into_iter().map(|d| SourceDoc {
                        path: d.path,
                        text: d.text,
                        modified_ms: d.modified_ms,
                    }));
                }
                let rows = host
                    .decision_rows()?
                    .into_iter()
                    .map(|r| StoredRow {
                        number: r.number,
                        title: r.title,
                        status: r.status,
                        file_path: r.file_path,
                        text: r.text,
                        recorded_at: r.recorded_at,
                    })
                    .collect();
                Ok(Corpus::build(docs, rows))
            })();
            self.corpus = Some(built.map_err(|e| e.message));
        }
        match self.corpus.as_ref() {
            Some(Ok(c)) => Ok(c),
            Some(Err(e)) => Err(e.clone()),
            None => Err("the decision corpus could not be built".into()),
        }
    }
}

fn tie_suffix(tie: Tie) -> &'static str {
    match tie {
        Tie::Exact => "",
        Tie::NameOnly => " (name only)",
        Tie::Open => " (unresolved)",
    }
}

/// Distinct callers and callees of a function, and the files they sit in.
fn neighbours<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    d: &Sym,
) -> ToolResult<(Listing, Listing, Vec<String>)> {
    let mut files: Vec<String> = Vec::new();
    let mut callers = Listing::default();
    let mut seen: HashSet<String> = HashSet::new();
    let incoming = g.incoming(d, NEIGHBOUR_KINDS)?;
    callers.precision = Some(incoming.provenance);
    for (e, tie) in incoming.links {
        if !seen.insert(e.from_symbol.clone()) {
            continue;
        }
        callers.total += 1;
        if !files.contains(&e.file_path) {
            files.push(e.file_path.clone());
        }
        if callers.items.len() < MAX_NEIGHBOURS {
            callers.items.push(format!(
                "{} — {}:{}{}",
                e.from_symbol,
                e.file_path,
                e.line,
                tie_suffix(tie)
            ));
        }
    }
    let mut callees = Listing::default();
    let mut seen: HashSet<String> = HashSet::new();
    for (e, target) in g.outgoing(&d.qualified_name, NEIGHBOUR_KINDS)? {
        let (key, item, file) = match target {
            Target::Def(t, tie) => (
                t.qualified_name.clone(),
                format!(
                    "{} — {}:{}{}",
                    t.qualified_name,
                    t.file_path,
                    t.start_line,
                    tie_suffix(tie)
                ),
                Some(t.file_path),
            ),
            Target::Open(c) => (
                format!("{}?", e.to_name),
                format!(
                    "{} — one of {} definitions (unresolved), called at {}:{}",
                    e.to_name,
                    c.len(),
                    e.file_path,
                    e.line
                ),
                None,
            ),
            Target::External => continue,
        };
        if !seen.insert(key) {
            continue;
        }
        callees.total += 1;
        if let Some(f) = file
            && !files.contains(&f)
        {
            files.push(f);
        }
        if callees.items.len() < MAX_NEIGHBOURS {
            callees.items.push(item);
        }
    }
    Ok((callers, callees, files))
}

/// Members of a type defined in its file (fields, variants, methods, associated items),
/// in source order, each as `line: signature`.
fn members<H: Host + ?Sized>(host: &H, d: &Sym) -> ToolResult<Listing> {
    let prefix = format!("{}::", d.qualified_name);
    let mut out = Listing::default();
    let mut seen = HashSet::new();
    for m in host.file_symbols(&d.file_path)? {
        let Some(rest) = m.qualified_name.strip_prefix(&prefix) else {
            continue;
        };
        if rest.contains("::") || !seen.insert(m.qualified_name.clone()) {
            continue;
        }
        out.total += 1;
        if out.items.len() < MAX_MEMBERS {
            let what = if m.signature.is_empty() {
                format!("{} {}", m.kind, m.name)
            } else {
                m.signature.clone()
            };
            out.items.push(format!("{}: {what}", m.start_line));
        }
    }
    Ok(out)
}

/// For a type: the traits it implements; for a trait: the types implementing it.
fn implementations<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    d: &Sym,
) -> ToolResult<(Option<Listing>, Option<Listing>)> {
    if d.kind == "trait" || d.kind == "interface" {
        let mut by = Listing::default();
        let mut seen = HashSet::new();
        for (e, tie) in g.incoming(d, &["implements"])?.links {
            if seen.insert(e.from_symbol.clone()) {
                by.total += 1;
                if by.items.len() < MAX_NEIGHBOURS {
                    by.items.push(format!(
                        "{} — {}:{}{}",
                        e.from_symbol,
                        e.file_path,
                        e.line,
                        tie_suffix(tie)
                    ));
                }
            }
        }
        return Ok((None, (by.total > 0).then_some(by)));
    }
    let mut traits = Listing::default();
    let mut seen = HashSet::new();
    for (e, target) in g.outgoing(&d.qualified_name, &["implements"])? {
        let name = match target {
            Target::Def(t, _) => t.qualified_name,
            // A trait of std or a dependency, as written.
            _ => match &e.to_qualifier {
                Some(q) => format!("{q}::{}", e.to_name),
                None => e.to_name.clone(),
            },
        };
        if seen.insert(name.clone()) {
            traits.total += 1;
            if traits.items.len() < MAX_NEIGHBOURS {
                traits.items.push(name);
            }
        }
    }
    Ok(((traits.total > 0).then_some(traits), None))
}

/// References to definition `d` (the count `find_references` would list) and where the
/// count comes from: precise data where it applies, the heuristic's attribution in files
/// edited since the precise run and at sites the indexer left unresolved.
fn reference_count<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    d: &Sym,
) -> ToolResult<Option<(usize, Option<String>)>> {
    let names = g.names(&d.name, Some(&d.qualified_name))?;
    let Some(c) = names.position(&d.qualified_name) else {
        return Ok(None);
    };
    let host = g.host();
    let precise = host.precise_usages(d).unwrap_or_default();
    if !precise.available() {
        let tied = names.usages_of(host, c, &names.sites)?.tied;
        // Heuristic with nothing to say why (precise mode off): no label (ADR 0021).
        let label = precise.note.is_some().then(|| "heuristic".to_string());
        return Ok(Some((tied.len(), label)));
    }
    let (unresolved, unread) = (
        host.precise_unresolved(d).unwrap_or_default(),
        host.precise_unread(d).unwrap_or_default(),
    );
    let unresolved: HashSet<(&str, u32, u32)> = unresolved.iter().map(Site::place).collect();
    let unread: HashSet<(&str, u32, u32)> = unread.iter().map(Site::place).collect();
    let fallback = |s: &Site| {
        precise
            .fallback_files
            .iter()
            .any(|(f, _)| *f == s.file_path)
    };
    // Only sites in fallen-back files, unread or unresolved can count: only those are
    // attributed.
    let tied = names
        .usages_where(host, c, &names.sites, |s| {
            fallback(s) || unread.contains(&s.place()) || unresolved.contains(&s.place())
        })?
        .tied;
    let heuristic = tied
        .iter()
        .filter(|&&(k, tie)| {
            let s = &names.sites[k];
            fallback(s)
                || unread.contains(&s.place())
                || (tie.answers_unresolved() && unresolved.contains(&s.place()))
        })
        .count();
    Ok(Some((
        precise.sites.len() + heuristic,
        Some(precise.precision),
    )))
}

fn inspect_definition<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    shared: &mut Shared,
    req: &Request,
    q: &SymbolQuery,
    d: &Sym,
) -> ToolResult<Report> {
    let host = g.host();
    let wants = |s: &str| req.include.contains(&s);
    let mut r = Report {
        head: header(d),
        qualified_name: Some(d.qualified_name.clone()),
        name: d.name.clone(),
        ..Report::default()
    };
    if q.text != d.qualified_name {
        r.head.insert("symbol".into(), json!(q.text));
    }
    if wants("snippet") {
        r.snippet = read_snippet(host, d, req, &mut r.notes);
    }
    let mut neighbour_files = Vec::new();
    if CALLABLE_KINDS.contains(&d.kind.as_str())
        && (wants("callers") || wants("callees") || wants("invariants"))
    {
        let (callers, callees, files) = neighbours(g, d)?;
        neighbour_files = files;
        if wants("callers") {
            r.callers = Some(callers);
        }
        if wants("callees") {
            r.callees = Some(callees);
        }
    }
    if TYPE_KINDS.contains(&d.kind.as_str()) && wants("members") {
        r.members = Some(members(host, d)?);
        let (implements, implemented_by) = implementations(g, d)?;
        r.implements = implements;
        r.implemented_by = implemented_by;
    }
    if wants("references")
        && let Some((n, precision)) = reference_count(g, d)?
    {
        r.reference_count = Some(n);
        if let Some(precision) = precision {
            r.head
                .insert("references_precision".into(), json!(precision));
        }
    }
    if let Some(p) = r
        .callers
        .as_ref()
        .and_then(|c| c.precision.as_ref())
        .filter(|p| p.precision != "heuristic" || p.note.is_some())
    {
        r.head
            .insert("callers_precision".into(), json!(p.precision));
        if p.precision != "precise"
            && let Some(n) = &p.note
        {
            r.notes
                .push(format!("callers precision {}: {n}", p.precision));
        }
        if !p.fallback_files.is_empty() {
            r.notes.push(format!(
                "callers precision mixed: {} file(s) edited or added since the precise run answered by the heuristic",
                p.fallback_files.len()
            ));
        }
    }
    if wants("invariants") {
        match shared.corpus(host) {
            Ok(corpus) => {
                let ranked = scryer_decisions::rank_invariants_for_symbol(
                    corpus,
                    &SymbolInfo {
                        name: &d.name,
                        qualified_name: &d.qualified_name,
                        file_path: &d.file_path,
                        docstring: d.docstring.as_deref(),
                    },
                    &neighbour_files,
                );
                if !ranked.is_empty() {
                    let shown = ranked
                        .iter()
                        .take(MAX_INVARIANTS)
                        .map(|i| json!({"adr_number": i.number, "title": i.title, "reason": i.reason}))
                        .collect();
                    r.invariants = Some((shown, ranked.len()));
                }
            }
            Err(e) => r.notes.push(format!("invariants unavailable: {e}")),
        }
    }
    Ok(r)
}

fn candidate_json(d: &Sym, crate_version: Option<(&str, &str)>) -> Value {
    json!({
        "qualified_name": d.qualified_name,
        "kind": d.kind,
        "location": format!("{}:{}", d.file_path, d.start_line),
        "crate": crate_version.map(|(c, v)| format!("{c} {v}")),
    })
}

fn ambiguous(q: &SymbolQuery, candidates: Vec<Value>, total: usize, where_: &str) -> Report {
    let mut head = Map::new();
    head.insert("symbol".into(), json!(q.text));
    head.insert("ambiguous".into(), json!(true));
    head.insert("candidate_count".into(), json!(total));
    if total > candidates.len() {
        // Only some are listed: the answer is a first page; the rest are a
        // resolve_definition(offset) or a narrower symbol away.
        head.insert("complete".into(), json!(false));
        head.insert(
            "see_also".into(),
            json!(format!(
                "resolve_definition(symbol: {:?}, offset: {}) lists the next candidates",
                q.text,
                candidates.len()
            )),
        );
    }
    head.insert("candidates".into(), json!(candidates));
    Report {
        head,
        name: q.name.clone(),
        notes: vec![format!(
            "`{}` names {total} definitions{where_}{}; call again with one qualified_name (or narrow with file_path)",
            q.text,
            if total > MAX_CANDIDATES {
                " (first 10 listed)"
            } else {
                ""
            }
        )],
        ..Report::default()
    }
}

/// A name with no workspace definition: the project's locked dependency crates.
fn inspect_dependency<H: Host + ?Sized>(
    host: &H,
    req: &Request,
    q: &SymbolQuery,
    workspace_defs: &[Sym],
) -> ToolResult<Report> {
    let project = &req.project;
    let mut notes = Vec::new();
    let found: Vec<DepSym> = match host.dependency_symbols_by_name(&q.name, None) {
        Ok(f) => f,
        Err(e) => {
            notes.push(format!(
                "the dependency index could not be searched ({}); only the workspace was",
                e.message
            ));
            Vec::new()
        }
    };
    let mut hits: Vec<&DepSym> = found.iter().filter(|d| q.matches(&d.symbol)).collect();
    if hits.is_empty()
        && let Some(krate) = q.qualifier.first()
    {
        // A crate's public path (`tokio::sync::Mutex`) names an item defined deeper
        // (`tokio::sync::mutex::Mutex`): the bare name within that crate.
        let krate = krate.replace('-', "_");
        hits = found
            .iter()
            .filter(|d| d.crate_name.replace('-', "_") == krate)
            .collect();
    }
    if let Some(fp) = &req.file_path {
        hits.retain(|d| file_matches(&d.symbol.file_path, fp));
    }
    let mut seen = HashSet::new();
    hits.retain(|d| seen.insert((d.crate_name.clone(), d.symbol.qualified_name.clone())));
    match hits.len() {
        0 => {
            let mut head = Map::new();
            head.insert("symbol".into(), json!(q.text));
            if workspace_defs.is_empty() {
                notes.insert(
                    0,
                    format!(
                        "unknown name: no definition named `{}` in {project} or its indexed dependencies; check the spelling, or run index_workspace if the code is new",
                        q.name
                    ),
                );
            } else {
                head.insert(
                    "candidates".into(),
                    json!(
                        workspace_defs
                            .iter()
                            .take(MAX_CANDIDATES)
                            .map(|d| candidate_json(d, None))
                            .collect::<Vec<_>>()
                    ),
                );
                notes.insert(
                    0,
                    format!(
                        "no definition matches `{}`{}; {} definition(s) are named `{}` (listed): call again with one of their qualified names",
                        q.text,
                        req.file_path
                            .as_ref()
                            .map(|f| format!(" in {f}"))
                            .unwrap_or_default(),
                        workspace_defs.len(),
                        q.name
                    ),
                );
            }
            Ok(Report {
                head,
                name: q.name.clone(),
                notes,
                ..Report::default()
            })
        }
        1 => {
            let d = hits[0];
            let mut r = Report {
                head: header(&d.symbol),
                qualified_name: Some(d.symbol.qualified_name.clone()),
                name: d.symbol.name.clone(),
                notes,
                ..Report::default()
            };
            r.head.insert("symbol".into(), json!(q.text));
            r.head.insert(
                "crate".into(),
                json!(format!("{} {}", d.crate_name, d.crate_version)),
            );
            if req.include.contains(&"snippet") {
                r.snippet = read_snippet(host, &d.symbol, req, &mut r.notes);
            }
            if req.include.contains(&"references") {
                // Workspace usages of a dependency's item are tied to it by name.
                let n = host.references_to_name(&d.symbol.name, false)?.len();
                r.reference_count = Some(n);
                if n > 0 {
                    r.notes.push(format!(
                        "reference_count counts the {n} usage(s) of `{}` in the project by name",
                        d.symbol.name
                    ));
                }
            }
            Ok(r)
        }
        n => Ok(ambiguous(
            q,
            hits.iter()
                .take(MAX_CANDIDATES)
                .map(|d| candidate_json(&d.symbol, Some((&d.crate_name, &d.crate_version))))
                .collect(),
            n,
            " in the project's dependencies",
        )),
    }
}

fn inspect_one<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    shared: &mut Shared,
    req: &Request,
    q: &SymbolQuery,
) -> ToolResult<Report> {
    let host = g.host();
    let mut all: Vec<Sym> = host.symbols_by_name(&q.name)?;
    let mut seen = HashSet::new();
    all.retain(|d| seen.insert(d.qualified_name.clone()));
    let mut picked = q.select_public(host, &all, req.file_path.as_deref());
    // An item wins over a module of the same name (`mod shapes` beside `shapes()`).
    if picked.iter().any(|&i| all[i].kind != "module") {
        picked.retain(|&i| all[i].kind != "module");
    }
    match picked.len() {
        0 => inspect_dependency(host, req, q, &all),
        1 => inspect_definition(g, shared, req, q, &all[picked[0]]),
        n => Ok(ambiguous(
            q,
            picked
                .iter()
                .take(MAX_CANDIDATES)
                .map(|&i| candidate_json(&all[i], None))
                .collect(),
            n,
            "",
        )),
    }
}

pub fn inspect_symbol<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let req = parse(args, ctx)?;
    let mut g = CallGraph::new(host);
    let mut shared = Shared { corpus: None };
    let n = req.names.len() as u32;
    // A batch shares the budget: 500 tokens a name unless the caller set one (then an
    // equal share of it). A few tokens go to the list around the answers.
    let per_name = ctx.budget.map(|b| {
        let share = b.saturating_sub(8) / n;
        if req.batch && !ctx.budget_explicit {
            share.min(BATCH_NAME_BUDGET)
        } else {
            share
        }
    });
    let mut answers = Vec::with_capacity(req.names.len());
    for q in &req.names {
        let report = inspect_one(&mut g, &mut shared, &req, q)?;
        answers.push(report.fit(host, per_name));
    }
    let body = if req.batch {
        json!({"results": answers})
    } else {
        answers.pop().unwrap_or(Value::Null)
    };
    Ok(to_compact_json(&body))
}
