//! `calculate_blast_radius`: what a change to a symbol, or to every symbol of a file,
//! may break: its callers, implementors, constructors and re-exporters, and theirs, up
//! to three hops, grouped by hop with the files they sit in.
//!
//! The walk is breadth first, so each affected symbol is listed once, at the fewest
//! hops it is from the change.

use std::collections::{BTreeMap, HashMap, HashSet};

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::attribution::{Tie, edge_site, parse_symbol, relative_path};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::callgraph::{CallGraph, IMPACT_KINDS};
use scryer_plugin_sdk::host::{Ctx, Facts, Host, Sym};
use scryer_plugin_sdk::resolve::Attribution;
use scryer_plugin_sdk::{ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::common::{Coverage, Root, def_json, resolve_root};

pub const DEFAULT_DEPTH: u32 = 3;
pub const MAX_DEPTH: u32 = 3;
/// The walk stops here whatever the budget, so a page is always cut from the same list.
pub const MAX_AFFECTED: usize = 1000;

const TYPE_KINDS: &[&str] = &[
    "struct",
    "enum",
    "trait",
    "type_alias",
    "union",
    "class",
    "interface",
];

/// One symbol a change reaches.
struct Affected {
    depth: u32,
    qualified_name: String,
    kind: Option<String>,
    file_path: String,
    line: u32,
    /// The kind of the first edge that reached it.
    via: String,
    tie: Tie,
}

impl Affected {
    fn json(&self) -> Value {
        json!({
            "depth": self.depth,
            "qualified_name": self.qualified_name,
            "kind": self.kind,
            "at": format!("{}:{}", self.file_path, self.line),
            "via": (self.via != "calls").then_some(self.via.as_str()),
            "name_only": (self.tie == Tie::NameOnly).then_some(true),
            "unresolved": (self.tie == Tie::Open).then_some(true),
        })
    }
}

/// A listed item: files first (the short answer), then the symbols.
enum Item<'a> {
    File(&'a str, usize),
    Symbol(&'a Affected),
}

struct Walked {
    affected: Vec<Affected>,
    coverage: Coverage,
}

/// Breadth-first over incoming edges from `roots`. Callers whose edge sits in
/// `skip_file` (the file under change) are not listed.
fn walk<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    roots: &[Sym],
    max_depth: u32,
    skip_file: Option<&str>,
) -> ToolResult<Walked> {
    let mut seen: HashSet<String> = roots.iter().map(|r| r.qualified_name.clone()).collect();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut affected: Vec<Affected> = Vec::new();
    let mut coverage = Coverage::default();
    let mut frontier: Vec<Sym> = roots.to_vec();
    for depth in 1..=max_depth {
        let mut next = Vec::new();
        for def in &frontier {
            let inc = g.incoming(def, IMPACT_KINDS)?;
            coverage.provenance(&inc.provenance);
            coverage.left_out(&inc.unrelated);
            for (e, mut tie) in inc.links {
                if skip_file == Some(e.file_path.as_str()) {
                    continue;
                }
                // A site that could name any of several definitions, all in the file
                // under change, certainly reaches that file.
                if let (Tie::Open, Some(file)) = (tie, skip_file) {
                    let names = g.names(&def.name, Some(&def.qualified_name))?;
                    if let Attribution::Open(set) = names.attribute(&edge_site(&e))
                        && set.iter().all(|&i| names.defs[i].file_path == file)
                    {
                        tie = Tie::Exact;
                    }
                }
                coverage.tally(&e, tie);
                if let Some(&i) = index.get(&e.from_symbol) {
                    // Another edge to a symbol already listed: a firmer one wins.
                    if affected[i].depth == depth && tie == Tie::Exact {
                        affected[i].tie = Tie::Exact;
                    }
                    continue;
                }
                if !seen.insert(e.from_symbol.clone()) {
                    continue;
                }
                if affected.len() >= MAX_AFFECTED {
                    coverage.capped_at = Some(MAX_AFFECTED);
                    return Ok(Walked { affected, coverage });
                }
                let caller = g.symbol(&e.from_symbol)?;
                index.insert(e.from_symbol.clone(), affected.len());
                affected.push(Affected {
                    depth,
                    qualified_name: e.from_symbol.clone(),
                    kind: caller.as_ref().map(|c| c.kind.clone()),
                    file_path: caller
                        .as_ref()
                        .map_or_else(|| e.file_path.clone(), |c| c.file_path.clone()),
                    line: caller.as_ref().map_or(e.line, |c| c.start_line),
                    via: e.kind.clone(),
                    tie,
                });
                // A module re-exporting something is reached, but nothing calls a module.
                if let Some(c) = caller
                    && c.kind != "module"
                {
                    next.push(c);
                }
            }
        }
        frontier = next;
    }
    Ok(Walked { affected, coverage })
}

pub fn calculate_blast_radius<H: Host + ?Sized>(
    host: &H,
    args: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let Query {
        symbol,
        file_path,
        depth,
        offset,
    } = parse(args, ctx)?;
    let mut g = CallGraph::new(host);
    let facts = host.index_facts()?;

    let Subject {
        subject,
        head,
        roots,
        skip_file,
        mut notes,
    } = match subject_of(&mut g, host, &symbol, &file_path, ctx)? {
        Ok(s) => s,
        Err(body) => return Ok(to_compact_json(&body)),
    };

    let Walked { affected, coverage } =
        walk_checked(&mut g, host, &facts, &roots, depth, skip_file.as_deref())?;

    let files = files_reached(&affected);
    let by_depth = by_depth(&affected, depth);
    if affected.is_empty() && !roots.is_empty() {
        notes.push(nothing_reached(
            symbol.is_some(),
            &roots,
            &subject.1,
            skip_file.is_some(),
            &facts,
        ));
    }
    notes.extend(coverage.notes(symbol.as_ref().map(|_| roots[0].name.as_str())));
    notes.extend(coverage.precision_notes());
    let gaps = coverage.gaps();
    let precision = coverage.precision();

    let items: Vec<Item> = files
        .iter()
        .map(|(f, n)| Item::File(f, *n))
        .chain(affected.iter().map(Item::Symbol))
        .collect();
    let total = items.len();
    if offset >= total && total > 0 {
        notes.push(format!(
            "offset {offset} is past the last of the {total} items: nothing left to show"
        ));
    }
    let offset = offset.min(total);
    let page = BlastPage {
        subject: &subject,
        head: &head,
        depth,
        affected: &affected,
        files: &files,
        by_depth: &by_depth,
        coverage: &coverage,
        items: &items[offset..],
        offset,
        total,
        notes,
        gaps,
        precision,
    };
    let k = match ctx.budget {
        None => page.items.len(),
        Some(budget) => fit_prefix(
            page.items.len(),
            budget,
            |k| page.render(k),
            |s| host.count_tokens(s),
        ),
    };
    Ok(page.render(k))
}

/// The arguments of a call.
struct Query {
    symbol: Option<String>,
    file_path: Option<String>,
    depth: u32,
    offset: usize,
}

/// Reads the arguments; `file_path` is made relative to the project root.
fn parse(args: &Args, ctx: &Ctx) -> ToolResult<Query> {
    let symbol = args.opt_str("symbol")?;
    let file_path = match args.opt_str("file_path")? {
        Some(fp) => {
            check_text("file_path", &fp, 4096)?;
            Some(relative_path(&fp, ctx.project_root.as_deref()))
        }
        None => None,
    };
    let depth = args
        .opt_int("depth", 1, i64::from(MAX_DEPTH))?
        .map_or(DEFAULT_DEPTH, |d| d as u32);
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    Ok(Query {
        symbol,
        file_path,
        depth,
        offset,
    })
}

/// What a change travels from: one symbol, or what a file defines.
struct Subject {
    /// The argument that named it (`symbol` or `file_path`) and its value.
    subject: (&'static str, String),
    /// What the answer says about it: the definition, or how many symbols the file has.
    head: Value,
    roots: Vec<Sym>,
    /// The file under change: callers whose edge sits there are not listed.
    skip_file: Option<String>,
    notes: Vec<String>,
}

/// What the change starts from; `Err`: the answer instead (no such symbol, or several).
fn subject_of<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    host: &H,
    symbol: &Option<String>,
    file_path: &Option<String>,
    ctx: &Ctx,
) -> ToolResult<Result<Subject, Value>> {
    match (symbol, file_path) {
        (None, None) => Err(ToolError::invalid(
            "calculate_blast_radius needs `symbol` (a name, `Type::method` or a qualified path) or `file_path` (a file of the project); neither was given",
        )),
        (Some(text), fp) => symbol_subject(g, text, fp.as_deref(), ctx),
        (None, Some(fp)) => file_subject(host, fp).map(Ok),
    }
}

/// [`walk`] from `roots`, then the files of the answer checked for parse errors.
fn walk_checked<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    host: &H,
    facts: &Facts,
    roots: &[Sym],
    depth: u32,
    skip_file: Option<&str>,
) -> ToolResult<Walked> {
    let mut walked = walk(g, roots, depth, skip_file)?;
    walked.coverage.check_parse_errors(
        host,
        facts,
        roots
            .iter()
            .map(|r| r.file_path.as_str())
            .chain(walked.affected.iter().map(|a| a.file_path.as_str())),
    );
    Ok(walked)
}

/// The symbol `text` names (in `fp`, when given); `Err`: the answer instead.
fn symbol_subject<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    text: &str,
    fp: Option<&str>,
    ctx: &Ctx,
) -> ToolResult<Result<Subject, Value>> {
    let q = parse_symbol("symbol", text)?;
    let root = match resolve_root(g, "calculate_blast_radius", &q, fp, ctx, IMPACT_KINDS)? {
        Root::One(d) => d,
        Root::Answer(body) => return Ok(Err(body)),
    };
    let mut notes = Vec::new();
    if TYPE_KINDS.contains(&root.kind.as_str()) {
        notes.push(format!(
            "uses of `{}` as a type (signatures, fields, bounds) are not edges: find_references(symbol: {:?}) lists them",
            root.name, root.qualified_name
        ));
    }
    Ok(Ok(Subject {
        subject: ("symbol", q.text.clone()),
        head: json!({"definition": def_json(&root)}),
        roots: vec![root],
        skip_file: None,
        notes,
    }))
}

/// The symbols file `fp` defines that a change could travel from.
fn file_subject<H: Host + ?Sized>(host: &H, fp: &str) -> ToolResult<Subject> {
    let defined = host.file_symbols(fp).map_err(|e| {
        ToolError::not_found(format!(
            "`file_path` {fp:?} is not an indexed file of the project ({}); give a path relative to the project root",
            e.message
        ))
    })?;
    // Fields are read and written, never called; modules are reached through paths.
    let roots: Vec<Sym> = defined
        .into_iter()
        .filter(|d| d.kind != "field" && d.kind != "module")
        .collect();
    let mut notes = Vec::new();
    if roots.is_empty() {
        notes.push(format!(
            "{fp} defines nothing a change could travel from (no functions, types or constants)"
        ));
    }
    Ok(Subject {
        subject: ("file_path", fp.to_string()),
        head: json!({"symbols_in_file": roots.len()}),
        roots,
        skip_file: Some(fp.to_string()),
        notes,
    })
}

/// The files the affected symbols sit in, with how many each, most first.
fn files_reached(affected: &[Affected]) -> Vec<(&str, usize)> {
    let mut files: BTreeMap<&str, usize> = BTreeMap::new();
    for a in affected {
        *files.entry(a.file_path.as_str()).or_default() += 1;
    }
    let mut files: Vec<(&str, usize)> = files.into_iter().collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    files
}

/// Per depth from 1 to `depth`: how many symbols and files the change reaches there.
fn by_depth(affected: &[Affected], depth: u32) -> Vec<Value> {
    (1..=depth)
        .map(|d| {
            let at: Vec<&Affected> = affected.iter().filter(|a| a.depth == d).collect();
            let distinct: HashSet<&str> = at.iter().map(|a| a.file_path.as_str()).collect();
            json!({"depth": d, "symbols": at.len(), "files": distinct.len()})
        })
        .collect()
}

/// The note for a change that reaches nothing.
fn nothing_reached(
    by_symbol: bool,
    roots: &[Sym],
    named: &str,
    skip_file: bool,
    facts: &Facts,
) -> String {
    let what = if by_symbol {
        format!("`{}`", roots[0].qualified_name)
    } else {
        format!("the {} symbols of {}", roots.len(), named)
    };
    let outside = if skip_file { " outside the file" } else { "" };
    format!(
        "nothing{outside} calls, implements, constructs or re-exports {what} in the {} indexed files",
        facts.files
    )
}

/// The answer's items from `offset` on, rendered with as many as fit.
struct BlastPage<'a> {
    subject: &'a (&'static str, String),
    head: &'a Value,
    depth: u32,
    affected: &'a [Affected],
    files: &'a [(&'a str, usize)],
    by_depth: &'a [Value],
    coverage: &'a Coverage,
    /// The items from `offset` on.
    items: &'a [Item<'a>],
    offset: usize,
    /// All the items: files, then symbols.
    total: usize,
    notes: Vec<String>,
    gaps: Vec<String>,
    precision: Option<&'static str>,
}

impl BlastPage<'_> {
    /// The page with its first `k` items, as JSON.
    fn render(&self, k: usize) -> String {
        let (subject, depth, offset, coverage) =
            (self.subject, self.depth, self.offset, self.coverage);
        let shown = &self.items[..k];
        let cut = offset + k < self.total;
        let mut body = json!({
            "depth": depth,
            "total_symbols": self.affected.len(),
            "total_files": self.files.len(),
            "by_depth": self.by_depth,
            "offset": offset,
            "returned": k,
            "files": shown.iter().filter_map(|i| match i {
                Item::File(f, n) => Some(json!({"file_path": f, "symbols": n})),
                Item::Symbol(_) => None,
            }).collect::<Vec<_>>(),
            "affected": shown.iter().filter_map(|i| match i {
                Item::Symbol(a) => Some(a.json()),
                Item::File(..) => None,
            }).collect::<Vec<_>>(),
            "name_only": (coverage.name_only > 0).then_some(coverage.name_only),
            "unresolved": (coverage.unresolved > 0).then_some(coverage.unresolved),
            "complete": !cut && self.gaps.is_empty(),
            "precision": self.precision,
            "notes": self.notes,
        });
        if let (Value::Object(b), Value::Object(h)) = (&mut body, self.head) {
            b.insert(subject.0.to_string(), json!(subject.1));
            for (k, v) in h {
                b.insert(k.clone(), v.clone());
            }
        }
        if cut {
            body["next_offset"] = json!(offset + k);
            body["see_also"] = json!(format!(
                "calculate_blast_radius({}: {:?}, depth: {depth}, offset: {}) for the rest (files come first, then symbols by depth)",
                subject.0,
                subject.1,
                offset + k
            ));
        }
        to_compact_json(&body)
    }
}
