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
use scryer_plugin_sdk::host::{Ctx, Host, Sym};
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
    let mut g = CallGraph::new(host);
    let facts = host.index_facts()?;

    let (subject, head, roots, skip_file, mut notes) = match (&symbol, &file_path) {
        (None, None) => {
            return Err(ToolError::invalid(
                "calculate_blast_radius needs `symbol` (a name, `Type::method` or a qualified path) or `file_path` (a file of the project); neither was given",
            ));
        }
        (Some(text), fp) => {
            let q = parse_symbol("symbol", text)?;
            let root = match resolve_root(
                &mut g,
                "calculate_blast_radius",
                &q,
                fp.as_deref(),
                ctx,
                IMPACT_KINDS,
            )? {
                Root::One(d) => d,
                Root::Answer(body) => return Ok(to_compact_json(&body)),
            };
            let mut notes = Vec::new();
            if TYPE_KINDS.contains(&root.kind.as_str()) {
                notes.push(format!(
                    "uses of `{}` as a type (signatures, fields, bounds) are not edges: find_references(symbol: {:?}) lists them",
                    root.name, root.qualified_name
                ));
            }
            (
                ("symbol", q.text.clone()),
                json!({"definition": def_json(&root)}),
                vec![root],
                None,
                notes,
            )
        }
        (None, Some(fp)) => {
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
            (
                ("file_path", fp.clone()),
                json!({"symbols_in_file": roots.len()}),
                roots,
                Some(fp.clone()),
                notes,
            )
        }
    };

    let Walked {
        affected,
        mut coverage,
    } = walk(&mut g, &roots, depth, skip_file.as_deref())?;
    coverage.check_parse_errors(
        host,
        &facts,
        roots
            .iter()
            .map(|r| r.file_path.as_str())
            .chain(affected.iter().map(|a| a.file_path.as_str())),
    );

    let mut files: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &affected {
        *files.entry(a.file_path.as_str()).or_default() += 1;
    }
    let mut files: Vec<(&str, usize)> = files.into_iter().collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let by_depth: Vec<Value> = (1..=depth)
        .map(|d| {
            let at: Vec<&Affected> = affected.iter().filter(|a| a.depth == d).collect();
            let distinct: HashSet<&str> = at.iter().map(|a| a.file_path.as_str()).collect();
            json!({"depth": d, "symbols": at.len(), "files": distinct.len()})
        })
        .collect();

    if affected.is_empty() && !roots.is_empty() {
        let what = match &symbol {
            Some(_) => format!("`{}`", roots[0].qualified_name),
            None => format!("the {} symbols of {}", roots.len(), subject.1),
        };
        let outside = if skip_file.is_some() {
            " outside the file"
        } else {
            ""
        };
        notes.push(format!(
            "nothing{outside} calls, implements, constructs or re-exports {what} in the {} indexed files",
            facts.files
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
    let page = &items[offset..];
    let render = |k: usize| -> String {
        let shown = &page[..k];
        let cut = offset + k < total;
        let mut body = json!({
            "depth": depth,
            "total_symbols": affected.len(),
            "total_files": files.len(),
            "by_depth": by_depth,
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
            "complete": !cut && gaps.is_empty(),
            "precision": precision,
            "notes": notes,
        });
        if let (Value::Object(b), Value::Object(h)) = (&mut body, &head) {
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
    };
    let k = match ctx.budget {
        None => page.len(),
        Some(budget) => fit_prefix(page.len(), budget, &render, |s| host.count_tokens(s)),
    };
    Ok(render(k))
}
