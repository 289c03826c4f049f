//! `find_references`: every usage of a symbol, in one of three views.
//!
//! The query names a symbol by bare name (`spawn`), by owner and name
//! (`Runtime::spawn`) or by qualified path (`tokio::runtime::Runtime::spawn`). Usages are
//! looked up by name, then tied to a definition by the path written at the site
//! (`Runtime::spawn(..)`, `use crate::runtime::Runtime`); a usage that only the name ties
//! to the definition is counted as `name_matched` and marked per site (`tie: "name"`, or
//! `"open"` when a same-named definition could be meant). Same-named definitions that the query
//! does not tell apart are grouped, never merged.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::attribution::{NameIndex, SymbolQuery, Tie, line_texts, parse_symbol};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::{Field, ToolResult, compact_object, to_compact_json};
use serde_json::{Value, json};

use scryer_plugin_sdk::host::{Ctx, Format, Host, PreciseUsageSets, PreciseUsages, Site, Sym};
use scryer_plugin_sdk::resolve::Attribution;

pub const VIEWS: [&str; 3] = ["callers", "files", "sites"];
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: i64 = 10_000;
/// Sites shown per definition in an ambiguous answer.
const AMBIGUOUS_SITES_PER_GROUP: usize = 20;
/// Most definitions one page of an ambiguous answer is fitted from (a budget holds far
/// fewer): a common name has thousands, and rendering them all to count the tokens
/// cost more than the rest of the answer (ADR 0029).
const AMBIGUOUS_GROUPS_PER_PAGE: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum View {
    Callers,
    Files,
    Sites,
}

struct Query {
    symbol: SymbolQuery,
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
    let symbol = parse_symbol("symbol", &text)?;
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
        symbol,
        file_path,
        view,
        offset,
        limit,
    })
}

pub fn find_references(
    host: &(impl Host + ?Sized),
    arguments: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let q = parse_query(arguments)?;
    // Definitions (one per qualified name, no modules), the name's usages, and what
    // attribution needs around the definitions the query names.
    let (names, candidates) = NameIndex::load_selecting(host, &q.symbol.name, false, |defs| {
        q.symbol.select_public(host, defs, q.file_path.as_deref())
    })?;
    let (defs_all, sites) = (&names.defs, &names.sites);
    let facts = host.index_facts()?;
    let project = ctx.project.clone().unwrap_or_else(|| "this project".into());

    if candidates.is_empty() {
        return no_definition(host, &q, ctx, &names, &facts, &project);
    }
    if let [c] = candidates[..] {
        let precise = precise_of(host, &defs_all[c]);
        if precise.available() {
            return find_precise(host, &q, ctx, &names, c, &precise, &facts);
        }
        return find_heuristic(host, &q, ctx, &names, c, precise, &facts);
    }

    let attributed: Vec<Attribution> = sites.iter().map(|s| names.attribute(s)).collect();
    render_ambiguous(host, &q, ctx, &names, &candidates, &attributed)
}

/// The answer when no definition matches: the same-named ones, or the name's usages.
fn no_definition(
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    names: &NameIndex,
    facts: &scryer_plugin_sdk::host::Facts,
    project: &str,
) -> ToolResult<String> {
    let (defs_all, sites) = (&names.defs, &names.sites);
    if !defs_all.is_empty() {
        let listed: Vec<Value> = defs_all.iter().take(10).map(def_json).collect();
        let body = json!({
            "symbol": q.symbol.text,
            "total_sites": 0,
            "precision": "heuristic",
            "candidates": listed,
            "notes": [format!(
                "no definition matches `{}`{}; {} definition(s) are named `{}` (listed): call again with one of their qualified names",
                q.symbol.text,
                q.file_path.as_ref().map(|f| format!(" in {f}")).unwrap_or_default(),
                defs_all.len(),
                q.symbol.name
            )],
        });
        return Ok(render_plain(&body, ctx));
    }
    if sites.is_empty() {
        let body = json!({
            "symbol": q.symbol.text,
            "total_sites": 0,
            "complete": false,
            "precision": "heuristic",
            "notes": [format!(
                "unknown name: no symbol or usage named `{}` is indexed in {project} ({} files); check the spelling, or run index_workspace if the code is new",
                q.symbol.name, facts.files
            )],
        });
        return Ok(render_plain(&body, ctx));
    }
    // Usages with no definition here: a dependency's or the standard library's item.
    let group: Vec<(&Site, Tie)> = sites.iter().map(|s| (s, Tie::NameOnly)).collect();
    render_group(
        host,
        q,
        ctx,
        facts,
        Answer {
            def: None,
            group: &group,
            name_matched: group.len(),
            notes: vec![format!(
                "`{}` has no definition in {project}: it likely comes from a dependency or std; these {} usages match by name only",
                q.symbol.name,
                sites.len()
            )],
            precision: &Precision::heuristic(Some(
                "no definition in the project to ask precise data about".into(),
            )),
        },
    )
}

/// One definition answered by the heuristic: its usages as attribution ties them.
fn find_heuristic(
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    names: &NameIndex,
    c: usize,
    precise: PreciseUsages,
    facts: &scryer_plugin_sdk::host::Facts,
) -> ToolResult<String> {
    let (defs_all, sites) = (&names.defs, &names.sites);
    let with_text = q.view != View::Files;
    let usages = names.usages_of(host, c, sites)?;
    let declaration = names.trait_declaration(host, c, with_text)?;
    // (site, how it is tied): an open tie is one nothing written decides either.
    let group: Vec<(&Site, Tie)> = usages
        .tied
        .iter()
        .map(|&(k, tie)| (&sites[k], tie))
        .chain(declaration.iter().map(|d| (d, Tie::Exact)))
        .collect();
    let name_matched = group.iter().filter(|(_, t)| *t != Tie::Exact).count();
    let open = group.iter().filter(|(_, t)| *t == Tie::Open).count();
    let mut notes = Vec::new();
    if name_matched > 0 {
        notes.push(format!(
        "{name_matched} usage(s) are tied to this definition by name only (no path, receiver type or import decides it), each marked `tie`: {} \"name\" (the only definition of that kind with the name), {open} \"open\" (a same-named definition could be meant)",
        name_matched - open
    ));
    }
    let mut precision = Precision::heuristic(precise.note);
    if !usages.unrelated.is_empty() {
        notes.push(format!(
        "{} more `.{}` use(s) on receivers of unknown type sit in files that never name `{}`: left out as most likely other types' members",
        usages.unrelated.len(),
        defs_all[c].name,
        defs_all[c].owner.as_deref().unwrap_or("")
    ));
        // A guess decided them: the answer cannot claim to hold every usage.
        precision.gaps.push(format!(
            "{} use(s) on receivers of unknown type left out",
            usages.unrelated.len()
        ));
    }
    render_group(
        host,
        q,
        ctx,
        facts,
        Answer {
            def: Some(&defs_all[c]),
            group: &group,
            name_matched,
            notes,
            precision: &precision,
        },
    )
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

/// A site's `tie` field: absent when the written path, receiver type or an import ties
/// it (the usual case), `"name"` or `"open"` when only the name does.
fn tie_label(tie: Option<Tie>) -> Option<&'static str> {
    match tie {
        Some(Tie::NameOnly) => Some("name"),
        Some(Tie::Open) => Some("open"),
        Some(Tie::Exact) | None => None,
    }
}

fn site_json(s: &Site, text: Option<String>, tie: Option<Tie>) -> Value {
    json!({
        "file_path": s.file_path,
        "line": s.line,
        "column": s.column,
        "kind": s.kind,
        "enclosing_symbol": s.enclosing_symbol,
        "text": text,
        "tie": tie_label(tie),
    })
}

struct Item {
    json: Value,
    text: String,
}

/// What an answer about one definition (or about a name with none) is made from.
struct Answer<'a> {
    /// The definition; `None`: the name has no definition in the project.
    def: Option<&'a Sym>,
    /// The usages, each with how it is tied.
    group: &'a [(&'a Site, Tie)],
    /// How many of the usages only the name ties.
    name_matched: usize,
    notes: Vec<String>,
    precision: &'a Precision,
}

/// One definition's usages (or a name's) in the asked view, paged and fitted to the budget.
fn render_group(
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    facts: &scryer_plugin_sdk::host::Facts,
    answer: Answer,
) -> ToolResult<String> {
    let Answer {
        def,
        group,
        name_matched,
        mut notes,
        precision,
    } = answer;
    if let Some(n) = &precision.note {
        notes.push(n.clone());
    }
    let uses = Uses::of(group, def.is_some());
    let total = match q.view {
        View::Sites => uses.ordered.len(),
        View::Callers => uses.callers.len(),
        View::Files => uses.files.len(),
    };
    let offset = q.offset.min(total);
    let limit = match (q.limit, ctx.budget) {
        (Some(l), _) => l,
        (None, None) => usize::MAX,
        (None, Some(_)) => DEFAULT_LIMIT as usize,
    };
    let page_end = offset.saturating_add(limit).min(total);
    let texts = uses.page_texts(host, q.view, offset, page_end);
    let items = uses.items(q.view, &texts);
    let failed_files = parse_failed_files(host, facts, &uses.files, def, precision);
    if items.is_empty()
        && let Some(d) = def
    {
        notes.push(format!(
            "`{}` is defined at {}:{} but has no usages in the {} indexed files",
            d.qualified_name, d.file_path, d.start_line, facts.files
        ));
    }
    let caveat = caveat(
        def,
        name_matched,
        uses.ordered.len(),
        &failed_files,
        precision,
    );
    let page = GroupPage {
        q,
        facts,
        def,
        precision,
        uses: &uses,
        items: &items[offset..page_end],
        item_json: match ctx.format {
            Format::Json => items[offset..page_end]
                .iter()
                .map(|i| to_compact_json(&i.json))
                .collect(),
            Format::Text => Vec::new(),
        },
        offset,
        total,
        name_matched,
        notes,
        caveat,
    };
    let k = match ctx.budget {
        None => page.items.len(),
        Some(budget) => fit_prefix(
            page.items.len(),
            budget,
            |k| page.render(ctx, k),
            |s| host.count_tokens(s),
        ),
    };
    Ok(page.render(ctx, k))
}

/// A group's usages in site order, with the tallies each view pages over.
struct Uses<'s> {
    /// The sites, by file, line and column.
    ordered: Vec<&'s Site>,
    /// Each site's tie, only when the answer is about one definition.
    ties: Vec<Option<Tie>>,
    /// Sites per file.
    files: BTreeMap<&'s str, usize>,
    /// (enclosing symbol, its first usage, its usages).
    callers: Vec<(&'s str, &'s Site, usize)>,
}

impl<'s> Uses<'s> {
    /// The usages of `group`, ordered and tallied by file and by caller.
    fn of(group: &[(&'s Site, Tie)], one_definition: bool) -> Self {
        let mut ordered: Vec<(&Site, Tie)> = group.to_vec();
        ordered.sort_by(|(a, _), (b, _)| {
            (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column))
        });
        // Per site, only when the answer is about one definition.
        let ties: Vec<Option<Tie>> = ordered
            .iter()
            .map(|(_, t)| one_definition.then_some(*t))
            .collect();
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
        Uses {
            ordered,
            ties,
            files,
            callers,
        }
    }

    /// The line texts of the rows `offset..page_end` of `view`.
    fn page_texts(
        &self,
        host: &(impl Host + ?Sized),
        view: View,
        offset: usize,
        page_end: usize,
    ) -> HashMap<(String, u32), String> {
        // Sites are loaded without their text: read only the lines this page shows.
        match view {
            View::Sites => line_texts(
                host,
                self.ordered[offset..page_end]
                    .iter()
                    .map(|s| (s.file_path.as_str(), s.line)),
            ),
            View::Callers => line_texts(
                host,
                self.callers[offset..page_end]
                    .iter()
                    .map(|(_, s, _)| (s.file_path.as_str(), s.line)),
            ),
            View::Files => Default::default(),
        }
    }

    /// Every row of `view`, as JSON and as a text line, with the line texts read.
    fn items(&self, view: View, texts: &HashMap<(String, u32), String>) -> Vec<Item> {
        let text_of = |s: &Site| -> Option<String> {
            s.line_text
                .clone()
                .or_else(|| texts.get(&(s.file_path.clone(), s.line)).cloned())
        };
        match view {
            View::Sites => self
                .ordered
                .iter()
                .zip(&self.ties)
                .map(|(s, &tie)| {
                    let text = text_of(s);
                    Item {
                        text: format!(
                            "{}:{}:{} [{}{}] in {} — {}",
                            s.file_path,
                            s.line,
                            s.column,
                            s.kind,
                            tie_label(tie)
                                .map(|t| format!(", tie: {t}"))
                                .unwrap_or_default(),
                            s.enclosing_symbol,
                            text.as_deref().unwrap_or("")
                        ),
                        json: site_json(s, text, tie),
                    }
                })
                .collect(),
            View::Callers => self
                .callers
                .iter()
                .map(|(caller, s, n)| {
                    let text = text_of(s);
                    Item {
                        text: format!(
                            "{caller} — {}:{} ({n}×) {}",
                            s.file_path,
                            s.line,
                            text.as_deref().unwrap_or("")
                        ),
                        json: json!({
                            "enclosing_symbol": caller,
                            "file_path": s.file_path,
                            "line": s.line,
                            "text": text,
                            "count": n,
                        }),
                    }
                })
                .collect(),
            View::Files => self
                .files
                .iter()
                .map(|(f, n)| Item {
                    json: json!({"file_path": f, "count": n}),
                    text: format!("{f} ({n})"),
                })
                .collect(),
        }
    }
}

/// The files of the answer (and the definition's) the parser failed on.
fn parse_failed_files(
    host: &(impl Host + ?Sized),
    facts: &scryer_plugin_sdk::host::Facts,
    files: &BTreeMap<&str, usize>,
    def: Option<&Sym>,
    precision: &Precision,
) -> Vec<String> {
    // Parse failures in any file of the answer make it partial.
    let mut failed_files = Vec::new();
    if facts.parse_failures > 0 {
        let mut to_check: BTreeSet<&str> = files.keys().copied().collect();
        if let Some(d) = def {
            to_check.insert(d.file_path.as_str());
        }
        // Files answered from precise data do not depend on what the parser read.
        if let Some(heuristic) = &precision.heuristic_files {
            to_check.retain(|f| heuristic.contains(*f));
        }
        for f in to_check {
            if host.file_has_parse_errors(f).unwrap_or(false) {
                failed_files.push(f.to_string());
            }
        }
    }
    failed_files
}

/// Why the answer may not hold every usage, one phrase each; empty when it does.
fn caveat(
    def: Option<&Sym>,
    name_matched: usize,
    total_sites: usize,
    failed_files: &[String],
    precision: &Precision,
) -> Vec<String> {
    let mut why = Vec::new();
    if name_matched > 0 || def.is_none() {
        why.push(format!(
            "{} usage(s) matched by name only",
            if def.is_none() {
                total_sites
            } else {
                name_matched
            }
        ));
    }
    if !failed_files.is_empty() {
        why.push(format!("parse errors in {}", failed_files.join(", ")));
    }
    why.extend(precision.gaps.iter().cloned());
    if let Some(files) = precision.heuristic_files.as_ref().filter(|f| !f.is_empty()) {
        why.push(format!(
            "{} file(s) answered by the heuristic (edited or added since the precise run)",
            files.len()
        ));
    }
    why
}

/// The page of a group's answer, rendered with as many of its rows as fit.
struct GroupPage<'a> {
    q: &'a Query,
    facts: &'a scryer_plugin_sdk::host::Facts,
    def: Option<&'a Sym>,
    precision: &'a Precision,
    uses: &'a Uses<'a>,
    /// The rows of this page.
    items: &'a [Item],
    /// Each of `items` as compact JSON (JSON answers only): rendered once, not once per
    /// candidate the budget fit renders.
    item_json: Vec<String>,
    offset: usize,
    /// The rows of the whole view.
    total: usize,
    name_matched: usize,
    notes: Vec<String>,
    caveat: Vec<String>,
}

impl GroupPage<'_> {
    /// The page with its first `k` rows, in the asked format.
    fn render(&self, ctx: &Ctx, k: usize) -> String {
        let cut = self.offset + k < self.total;
        let complete = !cut && self.caveat.is_empty();
        match ctx.format {
            Format::Json => self.json(k, cut, complete),
            Format::Text => self.text(k, cut, complete),
        }
    }

    /// The page with its first `k` rows as JSON.
    fn json(&self, k: usize, cut: bool, complete: bool) -> String {
        let (q, offset, name_matched) = (self.q, self.offset, self.name_matched);
        let view = view_name(q.view);
        let v = |value: Value| Field::Value(value);
        let mut fields = vec![
            ("symbol", v(json!(q.symbol.text))),
            ("definition", v(json!(self.def.map(def_json)))),
            ("view", v(json!(view))),
            ("total_sites", v(json!(self.uses.ordered.len()))),
            ("total_files", v(json!(self.uses.files.len()))),
            ("total_callers", v(json!(self.uses.callers.len()))),
            (
                "name_matched",
                v(json!((name_matched > 0).then_some(name_matched))),
            ),
            ("offset", v(json!(offset))),
            ("returned", v(json!(k))),
            (
                "items",
                Field::Rendered(self.item_json[..k].iter().map(String::as_str).collect()),
            ),
            ("complete", v(json!(complete))),
            ("precision", v(json!(self.precision.label))),
        ];
        if cut {
            fields.push(("next_offset", v(json!(offset + k))));
            fields.push(("see_also", v(json!(format!(
                "find_references(symbol: {:?}, view: {view:?}, offset: {}) for the next page; view: \"files\" or \"callers\" for a summary",
                q.symbol.text,
                offset + k
            )))));
        }
        let mut all_notes = self.notes.clone();
        if !self.caveat.is_empty() {
            all_notes.push(format!("CAVEAT: not complete: {}", self.caveat.join("; ")));
        }
        fields.push(("notes", v(json!(all_notes))));
        compact_object(fields)
    }

    /// The page with its first `k` rows as text: a header line, then a line per row.
    fn text(&self, k: usize, cut: bool, complete: bool) -> String {
        let (q, offset, facts) = (self.q, self.offset, self.facts);
        let shown = &self.items[..k];
        let view = view_name(q.view);
        let mut out = format!(
            "find_references {}: {} sites in {} files ({} callers) | {}-{} of {} {view} | {} | {} | index: {} files, {} parse failures{}",
            q.symbol.text,
            self.uses.ordered.len(),
            self.uses.files.len(),
            self.uses.callers.len(),
            if k == 0 { offset } else { offset + 1 },
            offset + k,
            self.total,
            if cut {
                format!("TRUNCATED: call again with offset={}", offset + k)
            } else if complete {
                "complete".to_string()
            } else {
                "partial".to_string()
            },
            self.precision.label,
            facts.files,
            facts.parse_failures,
            facts
                .indexed_at
                .as_deref()
                .map(|t| format!(", indexed {t}"))
                .unwrap_or_default(),
        );
        if !self.caveat.is_empty() {
            out.push_str(&format!(" | CAVEAT {}", self.caveat.join("; ")));
        }
        if let Some(d) = self.def {
            out.push_str(&format!(
                "\ndefinition: {} {} {}:{}",
                d.kind, d.qualified_name, d.file_path, d.start_line
            ));
        }
        for n in &self.notes {
            out.push_str(&format!("\nnote: {n}"));
        }
        for i in shown {
            out.push('\n');
            out.push_str(&i.text);
        }
        out
    }
}

/// A name several definitions answer to: a group of usages per definition, most used first.
fn render_ambiguous(
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    names: &NameIndex,
    candidates: &[usize],
    attributed: &[Attribution],
) -> ToolResult<String> {
    let (defs, sites) = (&names.defs, &names.sites);
    let families: Vec<Vec<usize>> = candidates.iter().map(|&c| names.family(c)).collect();
    // A definition with precise data gets its precise usages, and the heuristic's only in
    // the files that fell back.
    // All of them in one call: a common name has thousands (WIT 0.5, ADR 0056).
    let asked: Vec<&Sym> = candidates.iter().map(|&c| &defs[c]).collect();
    let answers = precise_of_many(host, &asked);
    let precise: Vec<&PreciseUsages> = (0..candidates.len()).map(|i| answers.of(i)).collect();
    let label = precision_label(&precise);
    let declarations = candidates
        .iter()
        .map(|&c| names.trait_declaration(host, c, q.view != View::Files))
        .collect::<ToolResult<Vec<Option<Site>>>>()?;
    let resolved_to = resolved_to(attributed);
    let mut groups = definition_groups(
        candidates,
        &families,
        &declarations,
        &precise,
        &resolved_to,
        sites,
    );
    groups.sort_by_key(|g| std::cmp::Reverse(g.1.len()));
    let unattributed = attributed
        .iter()
        .filter(
            |a| matches!(a, Attribution::Open(set) if set.iter().any(|i| candidates.contains(i))),
        )
        .count();
    // Each definition's uses in the asked view: sites, callers or files.
    let rows: Vec<Vec<(&Site, usize)>> = groups.iter().map(|(_, g)| view_rows(q.view, g)).collect();
    let largest = rows.iter().map(Vec::len).max().unwrap_or(0);
    let most_shown = match ctx.budget {
        None => largest,
        Some(_) => largest.min(AMBIGUOUS_SITES_PER_GROUP),
    };
    let page = AmbiguousPage {
        q,
        defs,
        candidate_count: candidates.len(),
        groups: &groups,
        rows: &rows,
        first: q.offset.min(groups.len()),
        most_shown,
        unattributed,
        label,
        texts: RefCell::new(HashMap::new()),
    };
    let rest = groups.len() - page.first;
    let (shown, per_group) = match ctx.budget {
        None => {
            page.texts.replace(page.read_texts(host, rest));
            (rest, largest)
        }
        Some(budget) => {
            let count = |t: &str| host.count_tokens(t);
            // Without items no line text is shown: how many groups fit is known first.
            let most = rest.min(AMBIGUOUS_GROUPS_PER_PAGE);
            let shown = fit_prefix(most, budget, |g| page.render(ctx, g, 0), count).max(1);
            page.texts.replace(page.read_texts(host, shown));
            let per = fit_prefix(most_shown, budget, |k| page.render(ctx, shown, k), count);
            (shown, per)
        }
    };
    Ok(page.render(ctx, shown, per_group))
}

/// The answer's `precision` over the candidates: `precise`, `mixed` or `heuristic`.
fn precision_label(precise: &[&PreciseUsages]) -> &'static str {
    match precise.iter().filter(|p| p.available()).count() {
        0 => "heuristic",
        n if n == precise.len() && precise.iter().all(|p| p.precision == "precise") => "precise",
        _ => "mixed",
    }
}

/// The sites (indices) resolved to each definition, in site order.
fn resolved_to(attributed: &[Attribution]) -> BTreeMap<usize, Vec<usize>> {
    // Found in one pass: a common name has thousands of candidates, and each scanning
    // every site was the answer's cost.
    let mut resolved_to: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, a) in attributed.iter().enumerate() {
        if let Attribution::Resolved(i, _) = a {
            resolved_to.entry(*i).or_default().push(k);
        }
    }
    resolved_to
}

/// Each candidate with its usages (heuristic where not precise), by file and line.
fn definition_groups<'s>(
    candidates: &[usize],
    families: &[Vec<usize>],
    declarations: &'s [Option<Site>],
    precise: &[&'s PreciseUsages],
    resolved_to: &BTreeMap<usize, Vec<usize>>,
    sites: &'s [Site],
) -> Vec<(usize, Vec<&'s Site>)> {
    // A trait item and its implementations answer as one: each of their groups holds
    // the uses of all of them, as asking for any one of them would.
    candidates
        .iter()
        .zip(families)
        .zip(declarations)
        .zip(precise)
        .map(|(((&c, family), declaration), p)| {
            let heuristic_in = |s: &Site| {
                !p.available() || p.fallback_files.iter().any(|(f, _)| *f == s.file_path)
            };
            let mut of_family: Vec<usize> = family
                .iter()
                .filter_map(|i| resolved_to.get(i))
                .flatten()
                .copied()
                .collect();
            of_family.sort_unstable();
            of_family.dedup();
            let mut g: Vec<&Site> = of_family
                .into_iter()
                .map(|k| &sites[k])
                .filter(|s| heuristic_in(s))
                .chain(declaration.iter().filter(|_| !p.available()))
                .chain(p.sites.iter())
                .collect();
            g.sort_by(|a, b| (&a.file_path, a.line).cmp(&(&b.file_path, b.line)));
            (c, g)
        })
        .collect()
}

/// An ambiguous answer's definitions and their rows, rendered a page at a time.
struct AmbiguousPage<'a> {
    q: &'a Query,
    defs: &'a [Sym],
    candidate_count: usize,
    /// (definition, its usages), most used first.
    groups: &'a [(usize, Vec<&'a Site>)],
    /// Each group's rows in the asked view.
    rows: &'a [Vec<(&'a Site, usize)>],
    /// The first group the page shows.
    first: usize,
    /// Most rows a group shows.
    most_shown: usize,
    unattributed: usize,
    label: &'static str,
    /// The line texts read for the groups shown.
    texts: RefCell<HashMap<(String, u32), String>>,
}

impl AmbiguousPage<'_> {
    /// The line texts of the rows the first `shown` groups from `first` can show.
    fn read_texts(
        &self,
        host: &(impl Host + ?Sized),
        shown: usize,
    ) -> HashMap<(String, u32), String> {
        // Line texts are read only for the groups a page can show: a common name has
        // thousands of groups and a page holds a few.
        let (rows, first) = (self.rows, self.first);
        match self.q.view {
            View::Files => HashMap::new(),
            View::Sites | View::Callers => line_texts(
                host,
                rows[first..(first + shown).min(rows.len())]
                    .iter()
                    .flat_map(|r| r.iter().take(self.most_shown))
                    .map(|(s, _)| (s.file_path.as_str(), s.line)),
            ),
        }
    }

    /// A site's line text: its own, or the one read for the page.
    fn text_of(&self, s: &Site) -> Option<String> {
        s.line_text.clone().or_else(|| {
            self.texts
                .borrow()
                .get(&(s.file_path.clone(), s.line))
                .cloned()
        })
    }

    /// One row of a group as JSON, in the asked view.
    fn row_json(&self, &(s, n): &(&Site, usize)) -> Value {
        match self.q.view {
            View::Sites => site_json(s, self.text_of(s), None),
            View::Callers => json!({
                "enclosing_symbol": s.enclosing_symbol,
                "file_path": s.file_path,
                "line": s.line,
                "text": self.text_of(s),
                "count": n,
            }),
            View::Files => json!({"file_path": s.file_path, "count": n}),
        }
    }

    /// `shown` groups from `first` with `per_group` rows each, in the asked format.
    fn render(&self, ctx: &Ctx, shown: usize, per_group: usize) -> String {
        // A common name has more definitions than a budget holds: they are paged (most used
        // first), `offset` moving over them.
        let (q, groups, rows, first) = (self.q, self.groups, self.rows, self.first);
        let unattributed = self.unattributed;
        let end = (first + shown).min(groups.len());
        let mut body = json!({
            "symbol": q.symbol.text,
            "ambiguous": true,
            "candidate_count": self.candidate_count,
            "view": view_name(q.view),
            "definitions": groups[first..end].iter().zip(&rows[first..end]).map(|((c, g), r)| json!({
                "definition": def_json(&self.defs[*c]),
                "total_sites": g.len(),
                "total": r.len(),
                "items": r.iter().take(per_group).map(|row| self.row_json(row)).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "unattributed_sites": unattributed,
            "complete": false,
            "precision": self.label,
            "see_also": "find_references(symbol: \"<one qualified_name above>\") for every usage of one definition, with paging",
            "notes": [format!(
                "`{}` names {} definitions; usages are grouped by what is written at each site (path, receiver type, imports). {unattributed} usage(s) could belong to several of them and appear when you ask for one definition",
                q.symbol.text,
                self.candidate_count
            )],
        });
        if end < groups.len() {
            body["offset"] = json!(first);
            body["next_offset"] = json!(end);
            if let Some(n) = body["notes"].as_array_mut() {
                n.push(json!(format!(
                    "definitions {}-{end} of {} shown, most used first; offset: {end} for the next ones",
                    first + 1,
                    groups.len()
                )));
            }
        }
        render_plain(&body, ctx)
    }
}

fn view_name(view: View) -> &'static str {
    match view {
        View::Callers => "callers",
        View::Files => "files",
        View::Sites => "sites",
    }
}

/// One row of an ambiguous answer's group, as a text line.
fn ambiguous_row_text(item: &Value) -> String {
    let at = format!(
        "{}{}",
        item["file_path"].as_str().unwrap_or(""),
        item["line"]
            .as_u64()
            .map(|l| format!(":{l}"))
            .unwrap_or_default()
    );
    let text = item["text"].as_str().unwrap_or("");
    match (item["enclosing_symbol"].as_str(), item["count"].as_u64()) {
        (Some(caller), Some(n)) => format!("{caller} — {at} ({n}×) {text}"),
        (None, Some(n)) => format!("{at} ({n})"),
        (Some(caller), None) => format!("{at} in {caller} — {text}"),
        (None, None) => at,
    }
}

/// A group's uses as rows of `view`, in the group's order: each site once, or each
/// enclosing symbol / file once with its first site and how many sites it holds.
fn view_rows<'a>(view: View, group: &[&'a Site]) -> Vec<(&'a Site, usize)> {
    let key = |s: &'a Site| -> &'a str {
        match view {
            View::Callers => &s.enclosing_symbol,
            _ => &s.file_path,
        }
    };
    if view == View::Sites {
        return group.iter().map(|s| (*s, 1)).collect();
    }
    let mut out: Vec<(&Site, usize)> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for &s in group {
        match index.get(key(s)) {
            Some(&i) => out[i].1 += 1,
            None => {
                index.insert(key(s), out.len());
                out.push((s, 1));
            }
        }
    }
    out
}

/// Where an answer's sites come from, as the answer says it (`precision`).
struct Precision {
    /// `precise`, `mixed` or `heuristic`.
    label: String,
    /// Why the answer is not precise, for `heuristic`.
    note: Option<String>,
    /// The files answered by the heuristic; `None`: all of them.
    heuristic_files: Option<BTreeSet<String>>,
    /// Why the sites may not be all of them, beyond what every answer checks: sites of
    /// the name the indexer left unresolved, or that the heuristic left out.
    gaps: Vec<String>,
}

impl Precision {
    fn heuristic(note: Option<String>) -> Precision {
        Precision {
            label: "heuristic".into(),
            note: note.map(|n| format!("precision heuristic: {n}")),
            heuristic_files: None,
            gaps: Vec::new(),
        }
    }
}

/// The precise usages of each of `defs`, in one call; a host error counts as no
/// precise data for any.
fn precise_of_many(host: &(impl Host + ?Sized), defs: &[&Sym]) -> PreciseUsageSets {
    host.precise_usages_of(defs)
        .unwrap_or_else(|e| PreciseUsageSets {
            sets: vec![PreciseUsages::unreadable(&e)],
            answer_of: vec![0; defs.len()],
        })
}

/// The definition's precise usages; a host error counts as no precise data.
fn precise_of(host: &(impl Host + ?Sized), def: &Sym) -> PreciseUsages {
    host.precise_usages(def)
        .unwrap_or_else(|e| PreciseUsages::unreadable(&e))
}

/// One definition answered from precise data, with the heuristic's usages in the files
/// that fell back (edited or added since the precise run).
fn find_precise(
    host: &(impl Host + ?Sized),
    q: &Query,
    ctx: &Ctx,
    names: &NameIndex,
    c: usize,
    precise: &PreciseUsages,
    facts: &scryer_plugin_sdk::host::Facts,
) -> ToolResult<String> {
    let fallback: BTreeSet<String> = precise
        .fallback_files
        .iter()
        .map(|(f, _)| f.clone())
        .collect();
    // Sites of the name the indexer resolved to nothing: the heuristic answers those.
    let unresolved = host.precise_unresolved(&names.defs[c]).unwrap_or_default();
    let taken = precise_group(host, names, c, precise, &fallback, &unresolved)?;
    let (notes, gaps) = precise_notes(names, c, precise, &fallback, unresolved.len(), &taken);
    let precision = Precision {
        label: precise.precision.clone(),
        note: None,
        heuristic_files: Some(fallback),
        gaps,
    };
    render_group(
        host,
        q,
        ctx,
        facts,
        Answer {
            def: Some(&names.defs[c]),
            group: &taken.group,
            name_matched: taken.name_matched,
            notes,
            precision: &precision,
        },
    )
}

/// The sites of a precise answer, and how many of the heuristic's it took or left.
struct PreciseGroup<'s> {
    /// The precise sites and the heuristic's taken, by file, line and column, once each.
    group: Vec<(&'s Site, Tie)>,
    /// Heuristic sites taken that only the name ties.
    name_matched: usize,
    /// Unresolved sites the heuristic ties to the definition.
    taken: usize,
    /// Unresolved sites a same-named definition could be meant at (left out).
    open: usize,
}

/// The precise sites, with the heuristic's where files fell back or sites are unresolved.
fn precise_group<'s>(
    host: &(impl Host + ?Sized),
    names: &'s NameIndex,
    c: usize,
    precise: &'s PreciseUsages,
    fallback: &BTreeSet<String>,
    unresolved: &[Site],
) -> ToolResult<PreciseGroup<'s>> {
    let unresolved_at: BTreeSet<(&str, u32, u32)> = unresolved.iter().map(Site::place).collect();
    // Of those, the ones in code the indexer did not read: answered as an edited file is.
    let unread_sites = host.precise_unread(&names.defs[c]).unwrap_or_default();
    let unread: BTreeSet<(&str, u32, u32)> = unread_sites.iter().map(Site::place).collect();
    let mut group: Vec<(&Site, Tie)> = precise.sites.iter().map(|s| (s, Tie::Exact)).collect();
    let (mut name_matched, mut taken, mut open) = (0, 0, 0);
    // A trait item's implementations (`impl Trait for T { fn item .. }`) are among the
    // precise sites: the host adds its family's (ADR 0031).
    if !fallback.is_empty() || !unresolved.is_empty() {
        // Only sites in fallen-back files or left unresolved can be taken.
        let usages = names.usages_where(host, c, &names.sites, |s| {
            fallback.contains(&s.file_path) || unresolved_at.contains(&s.place())
        })?;
        for &(k, tie) in &usages.tied {
            let s = &names.sites[k];
            let left = unresolved_at.contains(&s.place());
            let read = !unread.contains(&s.place());
            if left && read && !fallback.contains(&s.file_path) && !tie.answers_unresolved() {
                open += 1;
            } else if fallback.contains(&s.file_path) || left {
                name_matched += usize::from(tie != Tie::Exact);
                taken += usize::from(left);
                group.push((s, tie));
            }
        }
    }
    group.sort_by(|(a, _), (b, _)| {
        (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column))
    });
    group.dedup_by(|(a, _), (b, _)| {
        (&a.file_path, a.line, a.column) == (&b.file_path, b.line, b.column)
    });
    Ok(PreciseGroup {
        group,
        name_matched,
        taken,
        open,
    })
}

/// A precise answer's notes, and its gaps: why it may not hold every usage.
fn precise_notes(
    names: &NameIndex,
    c: usize,
    precise: &PreciseUsages,
    fallback: &BTreeSet<String>,
    unresolved: usize,
    g: &PreciseGroup,
) -> (Vec<String>, Vec<String>) {
    let (name_matched, taken, open) = (g.name_matched, g.taken, g.open);
    let mut notes = Vec::new();
    if !fallback.is_empty() {
        notes.push(fallback_note(&precise.fallback_files));
    }
    if unresolved > 0 {
        notes.push(format!(
            "{} site(s) named `{}` are ones the indexer could not resolve; the heuristic ties {taken} of them to this definition (included){}",
            unresolved,
            names.defs[c].name,
            if open > 0 {
                format!(", and {open} could be this or a same-named definition, nothing written decides (left out)")
            } else {
                String::new()
            }
        ));
    }
    if name_matched > 0 {
        notes.push(format!(
            "{name_matched} usage(s) answered by the heuristic are tied to this definition by name only"
        ));
    }
    let mut gaps = Vec::new();
    if unresolved > 0 {
        gaps.push(format!(
            "{} site(s) of the name the indexer left unresolved",
            unresolved
        ));
    }
    // What the host says the precise sites leave open (Rust: `Self` in the type's impls
    // and sites in code the indexer's build leaves out, counted but not listed; Python:
    // another class's method of the name): the note says it, and the answer does not
    // claim to be complete.
    if let Some(note) = &precise.note {
        notes.push(note.clone());
        gaps.push("what the notes say the precise sites leave open".into());
    }
    (notes, gaps)
}

/// `mixed`: how many files fell back, why, and the first few of them.
fn fallback_note(files: &[(String, String)]) -> String {
    let mut why: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, reason) in files {
        *why.entry(reason.as_str()).or_default() += 1;
    }
    let reasons: Vec<String> = why.iter().map(|(r, n)| format!("{n} {r}")).collect();
    let shown: Vec<&str> = files.iter().take(5).map(|(f, _)| f.as_str()).collect();
    format!(
        "precision mixed: {} file(s) fell back to the heuristic ({}): {}{}",
        files.len(),
        reasons.join(", "),
        shown.join(", "),
        if files.len() > shown.len() {
            ", …"
        } else {
            ""
        }
    )
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
                        "\n{} {} {}:{} ({} sites, {} {})",
                        d["kind"].as_str().unwrap_or(""),
                        d["qualified_name"].as_str().unwrap_or(""),
                        d["file_path"].as_str().unwrap_or(""),
                        d["line"],
                        g["total_sites"],
                        g["total"],
                        body["view"].as_str().unwrap_or("")
                    ));
                    for item in g["items"].as_array().into_iter().flatten() {
                        out.push_str(&format!("\n  {}", ambiguous_row_text(item)));
                    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_host::{MemHost, demo, sym};

    fn call(h: &MemHost, args: Value) -> Value {
        let ctx = Ctx {
            project: Some("demo".into()),
            ..Ctx::default()
        };
        let out = find_references(h, &Args::from_value(args).unwrap(), &ctx).unwrap();
        serde_json::from_str(&out).unwrap()
    }

    #[test]
    fn an_ambiguous_answer_groups_each_definition_in_the_asked_view() {
        let h = demo();
        let sites = call(&h, json!({"symbol": "area", "view": "sites"}));
        assert_eq!(sites["ambiguous"], true, "{sites}");
        assert_eq!(sites["view"], "sites");
        let files = call(&h, json!({"symbol": "area", "view": "files"}));
        let callers = call(&h, json!({"symbol": "area"}));
        assert_eq!(files["view"], "files");
        assert_eq!(callers["view"], "callers");
        let groups = |v: &Value| v["definitions"].as_array().unwrap().clone();
        // Compact JSON leaves an empty list out.
        let items = |g: &Value| g["items"].as_array().cloned().unwrap_or_default();
        let total_count =
            |g: &Value| -> u64 { items(g).iter().map(|r| r["count"].as_u64().unwrap()).sum() };
        for ((s, f), c) in groups(&sites)
            .iter()
            .zip(groups(&files))
            .zip(groups(&callers))
        {
            assert_eq!(s["definition"], f["definition"]);
            assert_eq!(s["definition"], c["definition"]);
            let n = s["total_sites"].as_u64().unwrap();
            assert_eq!(s["total"], n, "{s}");
            assert!(items(s).iter().all(|r| r.get("column").is_some()));
            // Files: each once, with how many sites it holds.
            assert_eq!(total_count(&f), n, "{f}");
            let file_rows = items(&f);
            let paths: BTreeSet<&str> = file_rows
                .iter()
                .map(|r| r["file_path"].as_str().unwrap())
                .collect();
            assert_eq!(paths.len() as u64, f["total"].as_u64().unwrap());
            assert!(file_rows.iter().all(|r| r.get("line").is_none()));
            // Callers: each enclosing symbol once, with its first site.
            assert_eq!(total_count(&c), n, "{c}");
            assert!(
                items(&c)
                    .iter()
                    .all(|r| r["enclosing_symbol"].is_string() && r["line"].is_u64())
            );
        }
    }

    #[test]
    fn a_file_path_narrows_on_whole_path_components() {
        let h = demo();
        let v = call(&h, json!({"symbol": "describe", "file_path": "util.rs"}));
        assert_eq!(v["definition"]["qualified_name"], "demo::util::describe");
        let v = call(&h, json!({"symbol": "describe", "file_path": "til.rs"}));
        assert_eq!(v["total_sites"], 0);
        assert_eq!(v["candidates"][0]["qualified_name"], "demo::util::describe");
        let note = v["notes"][0].as_str().unwrap();
        assert!(
            note.starts_with("no definition matches `describe` in til.rs"),
            "{note}"
        );
    }

    #[test]
    fn an_exact_qualified_name_wins_over_longer_paths_ending_with_it() {
        let mut h = demo();
        h.symbols.push(sym(
            "function",
            "vendored::demo::util::describe",
            None,
            "vendor/util.rs",
            (1, 3),
            "pub fn describe(area: f64) -> String",
        ));
        let v = call(&h, json!({"symbol": "demo::util::describe"}));
        assert_eq!(v["definition"]["qualified_name"], "demo::util::describe");
        let v = call(&h, json!({"symbol": "util::describe"}));
        assert_eq!(v["ambiguous"], true, "{v}");
        assert_eq!(v["candidate_count"], 2);
    }

    #[test]
    fn member_uses_on_unknown_receivers_count_only_where_the_owner_is_named() {
        let h = demo();
        // src/lib.rs names `Circle`: its `.area()` could be Circle's, by name only.
        let v = call(&h, json!({"symbol": "Circle::area", "view": "sites"}));
        assert_eq!(
            v["definition"]["qualified_name"],
            "demo::shapes::Circle::area"
        );
        let lib: Vec<&Value> = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["file_path"] == "src/lib.rs")
            .collect();
        assert_eq!(lib.len(), 1, "{v}");
        // `Square` also has an `area`: the site could be either.
        assert_eq!(lib[0]["tie"], "open");
        assert!(v["name_matched"].as_u64().unwrap() >= 1, "{v}");
        // src/lib.rs never names `Square`: the same use is left out, and said so.
        let v = call(&h, json!({"symbol": "Square::area", "view": "sites"}));
        assert!(
            v["items"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|i| i["file_path"] != "src/lib.rs"),
            "{v}"
        );
        let notes = v["notes"].to_string();
        assert!(
            notes.contains("1 more `.area` use(s)") && notes.contains("`Square`"),
            "{notes}"
        );
    }

    #[test]
    fn symbol_errors_name_what_is_accepted() {
        let h = demo();
        let ctx = Ctx::default();
        for (symbol, says) in [("a-b", "not an identifier"), ("::", "holds no name")] {
            let e = find_references(
                &h,
                &Args::from_value(json!({"symbol": symbol})).unwrap(),
                &ctx,
            )
            .unwrap_err()
            .message;
            assert!(e.contains(says) && e.contains("accepted: `name`"), "{e}");
        }
    }
}
