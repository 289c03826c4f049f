//! `find_references`: every usage of a symbol, in one of three views.
//!
//! The query names a symbol by bare name (`spawn`), by owner and name
//! (`Runtime::spawn`) or by qualified path (`tokio::runtime::Runtime::spawn`). Usages are
//! looked up by name, then tied to a definition by the path written at the site
//! (`Runtime::spawn(..)`, `use crate::runtime::Runtime`); a usage that only the name ties
//! to the definition is counted as `name_matched`. Same-named definitions that the query
//! does not tell apart are grouped, never merged.

use std::collections::{BTreeMap, BTreeSet};

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::{ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::host::{Ctx, Format, IndexHost, Site, Sym};

pub const VIEWS: [&str; 3] = ["callers", "files", "sites"];
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: i64 = 10_000;
/// Sites shown per definition in an ambiguous answer.
const AMBIGUOUS_SITES_PER_GROUP: usize = 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Callers,
    Files,
    Sites,
}

struct Query {
    text: String,
    name: String,
    /// Path segments before the name (`["Runtime"]` for `Runtime::spawn`).
    qualifier: Vec<String>,
    file_path: Option<String>,
    view: View,
    offset: usize,
    limit: Option<usize>,
}

fn parse_query(args: &Args) -> ToolResult<Query> {
    let text = args.required_str(
        "symbol",
        "the symbol to find usages of: a name (`spawn`), `Type::method`, or a qualified path",
    )?;
    check_text("symbol", &text, 512)?;
    let normalized = text.replace('.', "::");
    let mut segments: Vec<String> = normalized
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let Some(name) = segments.pop() else {
        return Err(ToolError::invalid(format!(
            "`symbol` {text:?} holds no name; accepted: `name`, `Type::name` or `crate::path::name`"
        )));
    };
    if !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(ToolError::invalid(format!(
            "`symbol` {text:?}: `{name}` is not an identifier; accepted: `name`, `Type::name` or `crate::path::name`"
        )));
    }
    let view = match args.opt_choice(
        "view",
        &VIEWS,
        &[("callsites", "sites"), ("usages", "sites")],
    )? {
        None | Some("callers") => View::Callers,
        Some("files") => View::Files,
        Some(_) => View::Sites,
    };
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    let limit = args.opt_int("limit", 1, MAX_LIMIT)?.map(|n| n as usize);
    let file_path = args.opt_str("file_path")?;
    if let Some(fp) = &file_path {
        check_text("file_path", fp, 4096)?;
    }
    Ok(Query {
        text,
        name,
        qualifier: segments,
        file_path,
        view,
        offset,
        limit,
    })
}

/// Does `def` answer to the query's qualifier and file?
fn matches_query(def: &Sym, q: &Query) -> bool {
    if let Some(fp) = &q.file_path {
        let fp = fp.trim_start_matches("./");
        if !(def.file_path == fp
            || fp.ends_with(&format!("/{}", def.file_path))
            || def.file_path.ends_with(fp))
        {
            return false;
        }
    }
    if q.qualifier.is_empty() {
        return true;
    }
    let wanted = format!("{}::{}", q.qualifier.join("::"), q.name);
    if def.qualified_name == wanted || def.qualified_name.ends_with(&format!("::{wanted}")) {
        return true;
    }
    // `crate::a::b` written by the agent against a crate-named qualified name.
    if q.qualifier.first().map(String::as_str) == Some("crate") {
        let rest = format!("{}::{}", q.qualifier[1..].join("::"), q.name);
        let rest = rest.trim_start_matches("::");
        return def.qualified_name.ends_with(&format!("::{rest}"));
    }
    q.qualifier.len() == 1 && def.owner.as_deref() == Some(q.qualifier[0].as_str())
}

/// The segment before the name in a qualified name (`Type` in `crate::m::Type::f`).
fn parent_segment(qualified: &str) -> Option<&str> {
    let mut parts = qualified.rsplit("::");
    parts.next();
    parts.next()
}

/// Which definition (index into `defs`) the path written at a site points to, if the
/// path tells them apart.
fn attribute(site: &Site, defs: &[Sym]) -> Option<usize> {
    let qualifier = site.qualifier.as_deref()?;
    let mut last = qualifier.rsplit("::").next().unwrap_or(qualifier).trim();
    // `Self::f` inside `impl Type`: the owner is the type the enclosing item belongs to.
    let enclosing_owner;
    if last == "Self" {
        enclosing_owner = owner_of_enclosing(&site.enclosing_symbol, defs);
        last = enclosing_owner.as_deref().unwrap_or("Self");
    }
    let hits: Vec<usize> = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| {
            d.owner.as_deref() == Some(last) || parent_segment(&d.qualified_name) == Some(last)
        })
        .map(|(i, _)| i)
        .collect();
    if hits.len() == 1 {
        return Some(hits[0]);
    }
    // A longer written path (`crate::a::b::name`, `super::b::name`) narrows further.
    let written: Vec<&str> = qualifier
        .split("::")
        .filter(|s| !matches!(*s, "crate" | "self" | "super" | "Self"))
        .collect();
    if written.len() > 1 {
        let tail = format!(
            "{}::{}",
            written.join("::"),
            defs.first().map(|d| d.name.as_str()).unwrap_or("")
        );
        let hits: Vec<usize> = defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.qualified_name.ends_with(&tail))
            .map(|(i, _)| i)
            .collect();
        if hits.len() == 1 {
            return Some(hits[0]);
        }
    }
    None
}

/// For a site in `crate::m::Type::method`, the type `Type` when it owns methods here.
fn owner_of_enclosing(enclosing: &str, defs: &[Sym]) -> Option<String> {
    let parent = parent_segment(enclosing)?;
    let _ = defs;
    Some(parent.to_string())
}

pub fn find_references(host: &dyn IndexHost, arguments: &Args, ctx: &Ctx) -> ToolResult<String> {
    let q = parse_query(arguments)?;
    let defs_all: Vec<Sym> = host
        .symbols_by_name(&q.name)?
        .into_iter()
        .filter(|d| d.kind != "module")
        .collect();
    let candidates: Vec<usize> = (0..defs_all.len())
        .filter(|&i| matches_query(&defs_all[i], &q))
        .collect();
    let with_text = q.view != View::Files;
    let sites = host.references_to_name(&q.name, with_text)?;
    let facts = host.index_facts()?;
    let project = ctx.project.clone().unwrap_or_else(|| "this project".into());

    // Attribute every site: to a definition the written path names, or to none.
    let attributed: Vec<Option<usize>> = sites.iter().map(|s| attribute(s, &defs_all)).collect();

    if candidates.is_empty() {
        if !defs_all.is_empty() {
            let names: Vec<Value> = defs_all.iter().take(10).map(def_json).collect();
            let body = json!({
                "symbol": q.text,
                "total_sites": 0,
                "candidates": names,
                "notes": [format!(
                    "no definition matches `{}`{}; {} definition(s) are named `{}` (listed): call again with one of their qualified names",
                    q.text,
                    q.file_path.as_ref().map(|f| format!(" in {f}")).unwrap_or_default(),
                    defs_all.len(),
                    q.name
                )],
            });
            return Ok(render_plain(&body, ctx));
        }
        if sites.is_empty() {
            let body = json!({
                "symbol": q.text,
                "total_sites": 0,
                "complete": false,
                "notes": [format!(
                    "unknown name: no symbol or usage named `{}` is indexed in {project} ({} files); check the spelling, or run index_workspace if the code is new",
                    q.name, facts.files
                )],
            });
            return Ok(render_plain(&body, ctx));
        }
        // Usages with no definition here: a dependency's or the standard library's item.
        let group: Vec<&Site> = sites.iter().collect();
        return render_group(
            host,
            &q,
            ctx,
            None,
            &group,
            group.len(),
            &facts,
            vec![format!(
                "`{}` has no definition in {project}: it likely comes from a dependency or std; these {} usages match by name only",
                q.name,
                sites.len()
            )],
        );
    }

    if candidates.len() == 1 {
        let c = candidates[0];
        let group: Vec<&Site> = sites
            .iter()
            .zip(&attributed)
            .filter(|(_, a)| a.is_none() || **a == Some(c))
            .map(|(s, _)| s)
            .collect();
        // With other same-named definitions around, a site no path ties down is a name match.
        let name_matched = if defs_all.len() > 1 {
            sites
                .iter()
                .zip(&attributed)
                .filter(|(_, a)| a.is_none())
                .count()
        } else {
            0
        };
        let mut notes = Vec::new();
        if name_matched > 0 {
            notes.push(format!(
                "{name_matched} usage(s) are tied to this definition by name only: {} other definition(s) are also named `{}`",
                defs_all.len() - 1,
                q.name
            ));
        }
        return render_group(
            host,
            &q,
            ctx,
            Some(&defs_all[c]),
            &group,
            name_matched,
            &facts,
            notes,
        );
    }

    render_ambiguous(&q, ctx, &defs_all, &candidates, &sites, &attributed)
}

fn def_json(d: &Sym) -> Value {
    json!({
        "qualified_name": d.qualified_name,
        "kind": d.kind,
        "file_path": d.file_path,
        "line": d.start_line,
        "end_line": d.end_line,
    })
}

fn site_json(s: &Site, name_matched: bool) -> Value {
    json!({
        "file_path": s.file_path,
        "line": s.line,
        "column": s.column,
        "kind": s.kind,
        "enclosing_symbol": s.enclosing_symbol,
        "text": s.line_text,
        "name_matched": if name_matched { Some(true) } else { None },
    })
}

struct Item {
    json: Value,
    text: String,
}

#[allow(clippy::too_many_arguments)]
fn render_group(
    host: &dyn IndexHost,
    q: &Query,
    ctx: &Ctx,
    def: Option<&Sym>,
    group: &[&Site],
    name_matched: usize,
    facts: &crate::host::Facts,
    mut notes: Vec<String>,
) -> ToolResult<String> {
    let mut ordered: Vec<&Site> = group.to_vec();
    ordered.sort_by(|a, b| (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column)));
    let files: BTreeMap<&str, usize> = ordered.iter().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(s.file_path.as_str()).or_default() += 1;
        m
    });
    // Callers: one entry per enclosing symbol, at its first usage.
    let mut callers: Vec<(&str, &Site, usize)> = Vec::new();
    let mut caller_index: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &ordered {
        match caller_index.get(s.enclosing_symbol.as_str()) {
            Some(&i) => callers[i].2 += 1,
            None => {
                caller_index.insert(s.enclosing_symbol.as_str(), callers.len());
                callers.push((s.enclosing_symbol.as_str(), s, 1));
            }
        }
    }
    let unattributed_here = def.is_none() || name_matched > 0;
    let items: Vec<Item> = match q.view {
        View::Sites => ordered
            .iter()
            .map(|s| Item {
                json: site_json(
                    s,
                    def.is_some() && name_matched > 0 && s.qualifier.is_none(),
                ),
                text: format!(
                    "{}:{}:{} [{}] in {} — {}",
                    s.file_path,
                    s.line,
                    s.column,
                    s.kind,
                    s.enclosing_symbol,
                    s.line_text.as_deref().unwrap_or("")
                ),
            })
            .collect(),
        View::Callers => callers
            .iter()
            .map(|(caller, s, n)| Item {
                json: json!({
                    "enclosing_symbol": caller,
                    "file_path": s.file_path,
                    "line": s.line,
                    "text": s.line_text,
                    "count": n,
                }),
                text: format!(
                    "{caller} — {}:{} ({n}×) {}",
                    s.file_path,
                    s.line,
                    s.line_text.as_deref().unwrap_or("")
                ),
            })
            .collect(),
        View::Files => files
            .iter()
            .map(|(f, n)| Item {
                json: json!({"file_path": f, "count": n}),
                text: format!("{f} ({n})"),
            })
            .collect(),
    };

    // Parse failures in any file of the answer make it partial.
    let mut failed_files = Vec::new();
    if facts.parse_failures > 0 {
        let mut to_check: BTreeSet<&str> = files.keys().copied().collect();
        if let Some(d) = def {
            to_check.insert(d.file_path.as_str());
        }
        for f in to_check {
            if host.file_has_parse_errors(f).unwrap_or(false) {
                failed_files.push(f.to_string());
            }
        }
    }

    if items.is_empty()
        && let Some(d) = def
    {
        notes.push(format!(
            "`{}` is defined at {}:{} but has no usages in the {} indexed files",
            d.qualified_name, d.file_path, d.start_line, facts.files
        ));
    }
    let total = items.len();
    let offset = q.offset.min(total);
    let limit = match (q.limit, ctx.budget) {
        (Some(l), _) => l,
        (None, None) => usize::MAX,
        (None, Some(_)) => DEFAULT_LIMIT as usize,
    };
    let page_end = offset.saturating_add(limit).min(total);
    let page = &items[offset..page_end];
    let view = match q.view {
        View::Callers => "callers",
        View::Files => "files",
        View::Sites => "sites",
    };
    let caveat = {
        let mut why = Vec::new();
        if name_matched > 0 || def.is_none() {
            why.push(format!(
                "{} usage(s) matched by name only",
                if def.is_none() {
                    ordered.len()
                } else {
                    name_matched
                }
            ));
        }
        if !failed_files.is_empty() {
            why.push(format!("parse errors in {}", failed_files.join(", ")));
        }
        why
    };
    let _ = unattributed_here;

    let render = |k: usize| -> String {
        let shown = &page[..k];
        let cut = offset + k < total;
        let complete = !cut && caveat.is_empty();
        match ctx.format {
            Format::Json => {
                let mut body = json!({
                    "symbol": q.text,
                    "definition": def.map(def_json),
                    "view": view,
                    "total_sites": ordered.len(),
                    "total_files": files.len(),
                    "total_callers": callers.len(),
                    "name_matched": if name_matched > 0 { Some(name_matched) } else { None },
                    "offset": offset,
                    "returned": k,
                    "items": shown.iter().map(|i| i.json.clone()).collect::<Vec<_>>(),
                    "complete": complete,
                });
                if cut {
                    body["next_offset"] = json!(offset + k);
                    body["see_also"] = json!(format!(
                        "find_references(symbol: {:?}, view: {view:?}, offset: {}) for the next page; view: \"files\" or \"callers\" for a summary",
                        q.text,
                        offset + k
                    ));
                }
                let mut all_notes = notes.clone();
                if !caveat.is_empty() {
                    all_notes.push(format!("CAVEAT: not complete: {}", caveat.join("; ")));
                }
                body["notes"] = json!(all_notes);
                to_compact_json(&body)
            }
            Format::Text => {
                let mut out = format!(
                    "find_references {}: {} sites in {} files ({} callers) | {}-{} of {} {view} | {} | index: {} files, {} parse failures{}",
                    q.text,
                    ordered.len(),
                    files.len(),
                    callers.len(),
                    if k == 0 { offset } else { offset + 1 },
                    offset + k,
                    total,
                    if cut {
                        format!("TRUNCATED: call again with offset={}", offset + k)
                    } else if complete {
                        "complete".to_string()
                    } else {
                        "partial".to_string()
                    },
                    facts.files,
                    facts.parse_failures,
                    facts
                        .indexed_at
                        .as_deref()
                        .map(|t| format!(", indexed {t}"))
                        .unwrap_or_default(),
                );
                if !caveat.is_empty() {
                    out.push_str(&format!(" | CAVEAT {}", caveat.join("; ")));
                }
                if let Some(d) = def {
                    out.push_str(&format!(
                        "\ndefinition: {} {} {}:{}",
                        d.kind, d.qualified_name, d.file_path, d.start_line
                    ));
                }
                for n in &notes {
                    out.push_str(&format!("\nnote: {n}"));
                }
                for i in shown {
                    out.push('\n');
                    out.push_str(&i.text);
                }
                out
            }
        }
    };
    let k = match ctx.budget {
        None => page.len(),
        Some(budget) => fit_prefix(page.len(), budget, &render, |s| host.count_tokens(s)),
    };
    Ok(render(k))
}

fn render_ambiguous(
    q: &Query,
    ctx: &Ctx,
    defs: &[Sym],
    candidates: &[usize],
    sites: &[Site],
    attributed: &[Option<usize>],
) -> ToolResult<String> {
    let mut groups: Vec<(usize, Vec<&Site>)> = candidates
        .iter()
        .map(|&c| {
            let mut g: Vec<&Site> = sites
                .iter()
                .zip(attributed)
                .filter(|(_, a)| **a == Some(c))
                .map(|(s, _)| s)
                .collect();
            g.sort_by(|a, b| (&a.file_path, a.line).cmp(&(&b.file_path, b.line)));
            (c, g)
        })
        .collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    let unattributed = attributed.iter().filter(|a| a.is_none()).count();
    let body = json!({
        "symbol": q.text,
        "ambiguous": true,
        "candidate_count": candidates.len(),
        "definitions": groups.iter().map(|(c, g)| json!({
            "definition": def_json(&defs[*c]),
            "total_sites": g.len(),
            "items": g.iter().take(AMBIGUOUS_SITES_PER_GROUP).map(|s| site_json(s, false)).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "unattributed_sites": unattributed,
        "complete": false,
        "see_also": format!(
            "find_references(symbol: \"<one qualified_name above>\") for every usage of one definition"
        ),
        "notes": [format!(
            "`{}` names {} definitions; usages are grouped by the path written at the site. {unattributed} usage(s) (method calls, bare names) could belong to any of them and appear when you ask for one definition",
            q.text,
            candidates.len()
        )],
    });
    Ok(render_plain(&body, ctx))
}

/// Renders an answer that is not a list (notes, ambiguity) in the requested format.
fn render_plain(body: &Value, ctx: &Ctx) -> String {
    match ctx.format {
        Format::Json => to_compact_json(body),
        Format::Text => {
            let mut out = format!("find_references {}:", body["symbol"].as_str().unwrap_or(""));
            if body["ambiguous"] == json!(true) {
                out.push_str(&format!(
                    " AMBIGUOUS, {} definitions",
                    body["candidate_count"]
                ));
                for g in body["definitions"].as_array().into_iter().flatten() {
                    let d = &g["definition"];
                    out.push_str(&format!(
                        "\n{} {} {}:{} ({} sites)",
                        d["kind"].as_str().unwrap_or(""),
                        d["qualified_name"].as_str().unwrap_or(""),
                        d["file_path"].as_str().unwrap_or(""),
                        d["line"],
                        g["total_sites"]
                    ));
                }
            } else {
                out.push_str(" 0 sites");
                for c in body["candidates"].as_array().into_iter().flatten() {
                    out.push_str(&format!(
                        "\ncandidate: {} {} {}:{}",
                        c["kind"].as_str().unwrap_or(""),
                        c["qualified_name"].as_str().unwrap_or(""),
                        c["file_path"].as_str().unwrap_or(""),
                        c["line"]
                    ));
                }
            }
            for n in body["notes"].as_array().into_iter().flatten() {
                out.push_str(&format!("\nnote: {}", n.as_str().unwrap_or("")));
            }
            out
        }
    }
}
