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

use scryer_plugin_sdk::host::{Ctx, Format, Host, Site, Sym};
use scryer_plugin_sdk::resolve::{self, Attribution, Scope, Strength};

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

/// What attribution needs to know beyond the sites: imports of the name and of
/// same-named owners, and which owners are traits.
fn build_scope(
    host: &(impl Host + ?Sized),
    defs: &[Sym],
    candidates: &[usize],
    sites: &[Site],
) -> ToolResult<Scope> {
    let mut scope = Scope {
        name_imports: resolve::imports_by_file(sites),
        ..Scope::default()
    };
    let mut owner_count: BTreeMap<&str, usize> = BTreeMap::new();
    for d in defs {
        if let Some(o) = d.owner.as_deref() {
            *owner_count.entry(o).or_default() += 1;
        }
    }
    // The owners of the definitions asked about come first: a common name (`new`) has
    // many owners, and only a few are worth a look-up.
    let mut owners: Vec<&str> = candidates
        .iter()
        .filter_map(|&c| defs[c].owner.as_deref())
        .collect();
    owners.extend(owner_count.keys().copied());
    owners.dedup();
    let mut seen = std::collections::HashSet::new();
    owners.retain(|o| seen.insert(*o));
    // Owners shared by several definitions (types of one name in different modules):
    // what each file imports under that name tells them apart.
    for owner in owners
        .iter()
        .filter(|o| owner_count.get(*o).copied().unwrap_or(0) > 1)
        .take(4)
    {
        let owner_sites = host.references_to_name(owner, false)?;
        scope
            .owner_imports
            .insert(owner.to_string(), resolve::imports_by_file(&owner_sites));
    }
    for owner in owners.iter().take(8) {
        if host
            .symbols_by_name(owner)?
            .iter()
            .any(|d| d.kind == "trait")
        {
            scope.trait_owners.insert(owner.to_string());
        }
    }
    Ok(scope)
}

/// snake_case names an accessor for `owner` may have: every word suffix of it
/// (`RuntimeMetrics` → `runtime_metrics`, `metrics`), at most three.
fn accessor_names(owner: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for ch in owner.chars() {
        if ch.is_uppercase() || words.is_empty() {
            words.push(String::new());
        }
        if let Some(w) = words.last_mut() {
            w.extend(ch.to_lowercase());
        }
    }
    (0..words.len())
        .rev()
        .take(3)
        .map(|i| words[i..].join("_"))
        .collect()
}

pub fn find_references(
    host: &(impl Host + ?Sized),
    arguments: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let q = parse_query(arguments)?;
    let defs_all: Vec<Sym> = host
        .symbols_by_name(&q.name)?
        .into_iter()
        .filter(|d| d.kind != "module")
        .collect();
    // Definitions sharing one qualified name (cfg variants, several `impl TryFrom<_>`
    // for one type) are one symbol to the agent: keep the first, note the others.
    let mut seen = std::collections::HashSet::new();
    let defs_all: Vec<Sym> = defs_all
        .into_iter()
        .filter(|d| seen.insert(d.qualified_name.clone()))
        .collect();
    let candidates: Vec<usize> = (0..defs_all.len())
        .filter(|&i| matches_query(&defs_all[i], &q))
        .collect();
    let with_text = q.view != View::Files;
    let sites = host.references_to_name(&q.name, with_text)?;
    let facts = host.index_facts()?;
    let project = ctx.project.clone().unwrap_or_else(|| "this project".into());

    // Tie every site to a definition where what is written around it allows.
    let scope = build_scope(host, &defs_all, &candidates, &sites)?;
    let attributed: Vec<Attribution> = sites
        .iter()
        .map(|s| resolve::attribute(s, &defs_all, &scope))
        .collect();

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
        let group: Vec<(&Site, bool)> = sites.iter().map(|s| (s, true)).collect();
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
        // A member used on a receiver of unknown type, in a file that never names the
        // member's owner, is most likely another type's member of the same name.
        // Naming it includes reaching it through an accessor named after it
        // (`.registration()` for `Registration`, `.metrics()` for `RuntimeMetrics`).
        let owner_files: Option<std::collections::HashSet<String>> =
            match defs_all[c].owner.as_deref() {
                Some(owner) if matches!(defs_all[c].kind.as_str(), "method" | "field") => {
                    let mut files: std::collections::HashSet<String> =
                        std::iter::once(defs_all[c].file_path.clone()).collect();
                    for name in std::iter::once(owner.to_string()).chain(accessor_names(owner)) {
                        files.extend(
                            host.references_to_name(&name, false)?
                                .into_iter()
                                .map(|s| s.file_path),
                        );
                    }
                    Some(files)
                }
                _ => None,
            };
        // For a trait's item, the items implementing it (`impl Trait for T { fn f }`, known
        // by their `implements` use) are the same operation: their uses count.
        let implementations: Vec<usize> = match defs_all[c].owner.as_deref() {
            Some(owner) if scope.trait_owners.contains(owner) => sites
                .iter()
                .filter(|s| s.kind == "implements" && s.qualifier.as_deref() == Some(owner))
                .filter_map(|s| {
                    defs_all
                        .iter()
                        .position(|d| d.qualified_name == s.enclosing_symbol)
                })
                .collect(),
            _ => Vec::new(),
        };
        let mut group: Vec<(&Site, bool)> = Vec::new();
        let mut unrelated = 0;
        for (site, a) in sites.iter().zip(&attributed) {
            let by_name = match a {
                Attribution::Resolved(i, strength) if *i == c => *strength == Strength::NameOnly,
                Attribution::Resolved(i, strength) if implementations.contains(i) => {
                    *strength == Strength::NameOnly
                }
                Attribution::Open(set) if set.contains(&c) => true,
                _ => continue,
            };
            let blind_member = by_name
                && site.qualifier.is_none()
                && matches!(site.kind.as_str(), "method_call" | "field");
            if blind_member
                && owner_files
                    .as_ref()
                    .is_some_and(|f| !f.contains(&site.file_path))
            {
                unrelated += 1;
                continue;
            }
            group.push((site, by_name));
        }
        let name_matched = group.iter().filter(|(_, by_name)| *by_name).count();
        let mut notes = Vec::new();
        if name_matched > 0 {
            notes.push(format!(
                "{name_matched} usage(s) are tied to this definition by name only (no path, receiver type or import decides it)"
            ));
        }
        if unrelated > 0 {
            notes.push(format!(
                "{unrelated} more `.{}` use(s) on receivers of unknown type sit in files that never name `{}`: left out as most likely other types' members",
                defs_all[c].name,
                defs_all[c].owner.as_deref().unwrap_or("")
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

    render_ambiguous(host, &q, ctx, &defs_all, &candidates, &sites, &attributed)
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
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    def: Option<&Sym>,
    group: &[(&Site, bool)],
    name_matched: usize,
    facts: &scryer_plugin_sdk::host::Facts,
    mut notes: Vec<String>,
) -> ToolResult<String> {
    let mut ordered: Vec<(&Site, bool)> = group.to_vec();
    ordered.sort_by(|(a, _), (b, _)| {
        (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column))
    });
    let by_name: Vec<bool> = ordered.iter().map(|(_, n)| *n).collect();
    let ordered: Vec<&Site> = ordered.into_iter().map(|(s, _)| s).collect();
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
    let items: Vec<Item> = match q.view {
        View::Sites => ordered
            .iter()
            .zip(&by_name)
            .map(|(s, by_name)| Item {
                json: site_json(s, def.is_some() && *by_name),
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
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    defs: &[Sym],
    candidates: &[usize],
    sites: &[Site],
    attributed: &[Attribution],
) -> ToolResult<String> {
    let mut groups: Vec<(usize, Vec<&Site>)> = candidates
        .iter()
        .map(|&c| {
            let mut g: Vec<&Site> = sites
                .iter()
                .zip(attributed)
                .filter(|(_, a)| matches!(a, Attribution::Resolved(i, _) if *i == c))
                .map(|(s, _)| s)
                .collect();
            g.sort_by(|a, b| (&a.file_path, a.line).cmp(&(&b.file_path, b.line)));
            (c, g)
        })
        .collect();
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    let unattributed = attributed
        .iter()
        .filter(
            |a| matches!(a, Attribution::Open(set) if set.iter().any(|i| candidates.contains(i))),
        )
        .count();
    let render = |per_group: usize| {
        let body = json!({
            "symbol": q.text,
            "ambiguous": true,
            "candidate_count": candidates.len(),
            "definitions": groups.iter().map(|(c, g)| json!({
                "definition": def_json(&defs[*c]),
                "total_sites": g.len(),
                "items": g.iter().take(per_group).map(|s| site_json(s, false)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "unattributed_sites": unattributed,
            "complete": false,
            "see_also": "find_references(symbol: \"<one qualified_name above>\") for every usage of one definition, with paging",
            "notes": [format!(
                "`{}` names {} definitions; usages are grouped by what is written at each site (path, receiver type, imports). {unattributed} usage(s) could belong to several of them and appear when you ask for one definition",
                q.text,
                candidates.len()
            )],
        });
        render_plain(&body, ctx)
    };
    let largest = groups.iter().map(|(_, g)| g.len()).max().unwrap_or(0);
    let per_group = match ctx.budget {
        None => largest,
        Some(budget) => fit_prefix(
            largest.min(AMBIGUOUS_SITES_PER_GROUP),
            budget,
            render,
            |t| host.count_tokens(t),
        ),
    };
    Ok(render(per_group))
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
