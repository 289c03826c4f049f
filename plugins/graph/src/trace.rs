//! `trace_call_hierarchy`: who calls a symbol and whom it calls, a few hops deep.
//!
//! The tree is walked depth first from the symbol, along `calls` and `instantiates`
//! edges, and flattened in that order (so a text answer reads as an indented tree).
//! A symbol already on the path closes a cycle and is not walked again; one walked
//! elsewhere in the tree is marked `repeated` instead of being walked twice.

use std::collections::HashSet;

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::attribution::{SymbolQuery, Tie, parse_symbol, relative_path};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::callgraph::{CALL_KINDS, CallGraph, Target};
use scryer_plugin_sdk::host::{Ctx, Edge, Facts, Format, Host, Sym};
use scryer_plugin_sdk::{Field, ToolError, ToolResult, compact_object, to_compact_json};
use serde_json::{Value, json};

use crate::common::{Coverage, Root, def_json, location, resolve_root};

pub const DIRECTIONS: [&str; 3] = ["incoming", "outgoing", "both"];
const DIRECTION_ALIASES: [(&str, &str); 2] = [("callers", "incoming"), ("callees", "outgoing")];
pub const DEFAULT_DEPTH: u32 = 2;
pub const MAX_DEPTH: u32 = 5;
/// The walk stops here whatever the budget, so a page is always cut from the same list.
pub const MAX_NODES: usize = 500;
/// Outside names listed per walked node.
const MAX_EXTERNAL_NAMES: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    In,
    Out,
}

struct Query {
    q: SymbolQuery,
    file_path: Option<String>,
    incoming: bool,
    outgoing: bool,
    depth: u32,
    offset: usize,
}

fn parse(args: &Args, ctx: &Ctx) -> ToolResult<Query> {
    let text = args.required_str(
        "symbol",
        "the function or method to trace: a name, `Type::method` or a qualified path",
    )?;
    let q = parse_symbol("symbol", &text)?;
    let direction = match args.opt_str("direction")? {
        None => "incoming",
        Some(raw) => {
            let lower = raw.to_ascii_lowercase();
            DIRECTIONS
                .iter()
                .copied()
                .find(|d| *d == lower)
                .or_else(|| {
                    DIRECTION_ALIASES
                        .iter()
                        .find(|(a, _)| *a == lower)
                        .map(|(_, d)| *d)
                })
                .ok_or_else(|| {
                    ToolError::invalid(format!(
                        "`direction` is {}; accepted: incoming, outgoing, both (or callers = incoming, callees = outgoing)",
                        scryer_plugin_sdk::args::shown(&raw)
                    ))
                })?
        }
    };
    let depth = args
        .opt_int("depth", 1, i64::from(MAX_DEPTH))?
        .map_or(DEFAULT_DEPTH, |d| d as u32);
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    let file_path = match args.opt_str("file_path")? {
        Some(fp) => {
            check_text("file_path", &fp, 4096)?;
            Some(relative_path(&fp, ctx.project_root.as_deref()))
        }
        None => None,
    };
    Ok(Query {
        q,
        file_path,
        incoming: direction != "outgoing",
        outgoing: direction != "incoming",
        depth,
        offset,
    })
}

/// One node of the flattened tree: a neighbour of its parent.
#[derive(Clone, Debug)]
struct Node {
    dir: Dir,
    depth: u32,
    /// The neighbour's qualified name (the written name for an unresolved callee).
    name: String,
    def: Option<Sym>,
    /// Where the first edge between parent and neighbour is written.
    site: String,
    /// Edges between parent and neighbour.
    count: usize,
    /// Edge kind when it is not `calls`.
    via: Option<String>,
    tie: Tie,
    /// Same-named definitions an unresolved callee could be.
    candidates: Vec<String>,
    cycle: bool,
    repeated: bool,
    /// Names this node calls outside the project (when walked).
    external: Vec<String>,
}

impl Node {
    fn json(&self) -> Value {
        let flag = |b: bool| if b { Some(true) } else { None };
        json!({
            "depth": self.depth,
            "qualified_name": self.name,
            "kind": self.def.as_ref().map(|d| d.kind.as_str()),
            "at": self.def.as_ref().map(location),
            "site": self.site,
            "count": (self.count > 1).then_some(self.count),
            "via": self.via,
            "name_only": flag(self.tie == Tie::NameOnly),
            "unresolved": flag(self.tie == Tie::Open),
            "candidates": self.candidates,
            "cycle": flag(self.cycle),
            "repeated": flag(self.repeated),
            "external": self.external,
        })
    }

    fn text(&self) -> String {
        let mut out = "  ".repeat(self.depth.saturating_sub(1) as usize);
        out.push_str(if self.dir == Dir::In { "← " } else { "→ " });
        out.push_str(&self.name);
        if let Some(d) = &self.def {
            out.push_str(&format!(" ({}) {}", d.kind, location(d)));
        }
        if !self.candidates.is_empty() {
            out.push_str(&format!(
                " ({} candidates: {})",
                self.candidates.len(),
                self.candidates.join(", ")
            ));
        }
        out.push_str(&format!(" | site {}", self.site));
        if self.count > 1 {
            out.push_str(&format!(" ×{}", self.count));
        }
        if let Some(v) = &self.via {
            out.push_str(&format!(" [{v}]"));
        }
        for (on, tag) in [
            (self.tie == Tie::NameOnly, "[name-only]"),
            (self.tie == Tie::Open, "[unresolved]"),
            (self.cycle, "[cycle]"),
            (self.repeated, "[repeated]"),
        ] {
            if on {
                out.push(' ');
                out.push_str(tag);
            }
        }
        if !self.external.is_empty() {
            out.push_str(&format!(" | outside: {}", self.external.join(", ")));
        }
        out
    }
}

/// The strongest of two ties: one exact edge makes the relation certain.
fn stronger(a: Tie, b: Tie) -> Tie {
    match (a, b) {
        (Tie::Exact, _) | (_, Tie::Exact) => Tie::Exact,
        (Tie::NameOnly, _) | (_, Tie::NameOnly) => Tie::NameOnly,
        _ => Tie::Open,
    }
}

fn site_of(e: &Edge) -> String {
    format!("{}:{}", e.file_path, e.line)
}

/// The edges between a walked symbol and one neighbour, in first-edge order.
struct Group {
    /// The neighbour's qualified name (the written name for an unresolved callee).
    name: String,
    def: Option<Sym>,
    edges: Vec<(Edge, Tie)>,
    /// Same-named definitions an unresolved callee could be.
    candidates: Vec<String>,
}

struct Walk<'g, 'h, H: Host + ?Sized> {
    g: &'g mut CallGraph<'h, H>,
    max_depth: u32,
    nodes: Vec<Node>,
    /// Symbols walked so far (per direction).
    walked: HashSet<String>,
    coverage: Coverage,
    /// Call sites of things outside the project.
    external_calls: usize,
}

impl<H: Host + ?Sized> Walk<'_, '_, H> {
    fn full(&mut self) -> bool {
        if self.nodes.len() >= MAX_NODES {
            self.coverage.capped_at = Some(MAX_NODES);
            true
        } else {
            false
        }
    }

    /// The callers of `def`, each with its edges to `def`, in first-edge order.
    fn incoming_groups(&mut self, def: &Sym) -> ToolResult<Vec<Group>> {
        let mut groups: Vec<Group> = Vec::new();
        let inc = self.g.incoming(def, CALL_KINDS)?;
        self.coverage.provenance(&inc.provenance);
        self.coverage.left_out(&inc.unrelated);
        for (e, tie) in inc.links {
            match groups.iter_mut().find(|g| g.name == e.from_symbol) {
                Some(g) => g.edges.push((e, tie)),
                None => {
                    let caller = self.g.symbol(&e.from_symbol)?;
                    groups.push(Group {
                        name: e.from_symbol.clone(),
                        def: caller,
                        edges: vec![(e, tie)],
                        candidates: Vec::new(),
                    });
                }
            }
        }
        Ok(groups)
    }

    /// What `def` calls in the project, grouped by callee, and the names it calls outside.
    fn outgoing_groups(&mut self, def: &Sym) -> ToolResult<(Vec<Group>, Vec<String>)> {
        let mut groups: Vec<Group> = Vec::new();
        let mut external: Vec<String> = Vec::new();
        self.coverage.heuristic_lookup();
        for (e, target) in self.g.outgoing(&def.qualified_name, CALL_KINDS)? {
            let (key, callee, tie, candidates) = match target {
                Target::Def(d, tie) => (d.qualified_name.clone(), Some(d), tie, Vec::new()),
                Target::Open(c) => (
                    e.to_name.clone(),
                    None,
                    Tie::Open,
                    c.into_iter().map(|d| d.qualified_name).collect(),
                ),
                Target::External => {
                    self.external_calls += 1;
                    let written = match &e.to_qualifier {
                        Some(q) if e.site_kind != "method_call" => {
                            format!("{q}::{}", e.to_name)
                        }
                        _ => e.to_name.clone(),
                    };
                    if !external.contains(&written) {
                        external.push(written);
                    }
                    continue;
                }
            };
            match groups.iter_mut().find(|g| g.name == key) {
                Some(g) => g.edges.push((e, tie)),
                None => groups.push(Group {
                    name: key,
                    def: callee,
                    edges: vec![(e, tie)],
                    candidates,
                }),
            }
        }
        Ok((groups, external))
    }

    /// Adds the neighbours of `def` (at `depth - 1`) in direction `dir`, walking each
    /// in turn. `path` holds the qualified names from the root to `def`. Returns what
    /// `def` calls outside the project (outgoing only).
    fn expand(
        &mut self,
        dir: Dir,
        def: &Sym,
        depth: u32,
        path: &mut Vec<String>,
    ) -> ToolResult<Vec<String>> {
        self.walked.insert(def.qualified_name.clone());
        let (groups, mut external) = match dir {
            Dir::In => (self.incoming_groups(def)?, Vec::new()),
            Dir::Out => self.outgoing_groups(def)?,
        };
        external.truncate(MAX_EXTERNAL_NAMES);
        for Group {
            name,
            def: neighbour,
            edges,
            candidates,
        } in groups
        {
            if self.full() {
                return Ok(external);
            }
            let tie = edges.iter().map(|(_, t)| *t).fold(Tie::Open, stronger);
            for (e, t) in &edges {
                self.coverage.tally(e, *t);
            }
            let first = &edges[0].0;
            let cycle = path.contains(&name);
            let repeated = !cycle && self.walked.contains(&name);
            self.nodes.push(Node {
                dir,
                depth,
                name: name.clone(),
                def: neighbour.clone(),
                site: site_of(first),
                count: edges.len(),
                via: (first.kind != "calls").then(|| first.kind.clone()),
                tie,
                candidates,
                cycle,
                repeated,
                external: Vec::new(),
            });
            let me = self.nodes.len() - 1;
            if let Some(n) = neighbour
                && !cycle
                && !repeated
                && depth < self.max_depth
            {
                path.push(name);
                self.nodes[me].external = self.expand(dir, &n, depth + 1, path)?;
                path.pop();
            }
        }
        Ok(external)
    }
}

pub fn trace_call_hierarchy<H: Host + ?Sized>(
    host: &H,
    args: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let query = parse(args, ctx)?;
    let mut g = CallGraph::new(host);
    let root = match resolve_root(
        &mut g,
        "trace_call_hierarchy",
        &query.q,
        query.file_path.as_deref(),
        ctx,
        CALL_KINDS,
    )? {
        Root::One(d) => d,
        Root::Answer(body) => return Ok(render_plain(&body, ctx)),
    };
    let facts = host.index_facts()?;

    let Tree {
        nodes,
        mut coverage,
        external_calls,
        callers,
        root_external,
    } = walk_tree(&mut g, &query, &root)?;
    let callees = nodes.len() - callers;
    check_parse_errors(host, &facts, &root, &nodes, &mut coverage);

    let mut notes = nothing_found_notes(
        &query,
        &root,
        &facts,
        callers,
        callees,
        external_calls,
        &coverage,
    );
    notes.extend(coverage.notes(Some(&root.name)));
    notes.extend(coverage.precision_notes());
    let gaps = coverage.gaps();
    let precision = coverage.precision();

    let total = nodes.len();
    if query.offset >= total && total > 0 {
        notes.push(format!(
            "offset {} is past the last of the {total} nodes: nothing left to show",
            query.offset
        ));
    }
    let offset = query.offset.min(total);
    let page = TracePage {
        query: &query,
        root: &root,
        facts: &facts,
        coverage: &coverage,
        nodes: &nodes[offset..],
        node_json: match ctx.format {
            Format::Json => nodes[offset..]
                .iter()
                .map(|n| to_compact_json(&n.json()))
                .collect(),
            Format::Text => Vec::new(),
        },
        offset,
        total,
        callers,
        callees,
        external_calls,
        root_external: &root_external,
        notes,
        gaps,
        precision,
    };
    let k = match ctx.budget {
        None => page.nodes.len(),
        Some(budget) => fit_prefix(
            page.nodes.len(),
            budget,
            |k| page.render(ctx, k),
            |s| host.count_tokens(s),
        ),
    };
    Ok(page.render(ctx, k))
}

/// Checks the files of the answer (the root's and every node's) for parse errors.
fn check_parse_errors<H: Host + ?Sized>(
    host: &H,
    facts: &Facts,
    root: &Sym,
    nodes: &[Node],
    coverage: &mut Coverage,
) {
    coverage.check_parse_errors(
        host,
        facts,
        std::iter::once(root.file_path.as_str()).chain(
            nodes
                .iter()
                .filter_map(|n| n.def.as_ref().map(|d| d.file_path.as_str())),
        ),
    );
}

/// What the walk found: the flattened tree and how far it can be trusted.
struct Tree {
    nodes: Vec<Node>,
    coverage: Coverage,
    /// Call sites of things outside the project.
    external_calls: usize,
    /// How many of the first nodes are the incoming tree.
    callers: usize,
    /// What the root calls outside the project.
    root_external: Vec<String>,
}

/// Walks the tree from `root`: its callers, then (walked afresh) its callees.
fn walk_tree<H: Host + ?Sized>(
    g: &mut CallGraph<'_, H>,
    query: &Query,
    root: &Sym,
) -> ToolResult<Tree> {
    let mut walk = Walk {
        g,
        max_depth: query.depth,
        nodes: Vec::new(),
        walked: HashSet::new(),
        coverage: Coverage::default(),
        external_calls: 0,
    };
    let mut root_external = Vec::new();
    if query.incoming {
        walk.expand(Dir::In, root, 1, &mut vec![root.qualified_name.clone()])?;
    }
    let callers = walk.nodes.len();
    if query.outgoing {
        walk.walked.clear();
        root_external = walk.expand(Dir::Out, root, 1, &mut vec![root.qualified_name.clone()])?;
    }
    let Walk {
        nodes,
        coverage,
        external_calls,
        ..
    } = walk;
    Ok(Tree {
        nodes,
        coverage,
        external_calls,
        callers,
        root_external,
    })
}

/// The notes for an asked direction that found nothing: no callers, or no callees.
fn nothing_found_notes(
    query: &Query,
    root: &Sym,
    facts: &Facts,
    callers: usize,
    callees: usize,
    external_calls: usize,
    coverage: &Coverage,
) -> Vec<String> {
    let mut notes = Vec::new();
    if query.incoming && callers == 0 {
        notes.push(if coverage.unrelated > 0 {
            format!(
                "no callers of `{}` in the {} indexed files could be tied to it",
                root.qualified_name, facts.files
            )
        } else {
            format!(
                "`{}` has no callers in the {} indexed files",
                root.qualified_name, facts.files
            )
        });
    }
    if query.outgoing && callees == 0 {
        notes.push(if external_calls > 0 {
            format!(
                "`{}` calls nothing defined in the project; its {external_calls} call(s) go to std or dependencies",
                root.qualified_name
            )
        } else {
            format!("`{}` calls nothing", root.qualified_name)
        });
    }
    notes
}

/// The tree's nodes from `offset` on, rendered with as many as fit.
struct TracePage<'a> {
    query: &'a Query,
    root: &'a Sym,
    facts: &'a Facts,
    coverage: &'a Coverage,
    /// The nodes from `offset` on.
    nodes: &'a [Node],
    /// Each of `nodes` as compact JSON (JSON answers only): rendered once, not once per
    /// candidate the budget fit renders.
    node_json: Vec<String>,
    offset: usize,
    /// All the nodes of the tree.
    total: usize,
    callers: usize,
    callees: usize,
    external_calls: usize,
    root_external: &'a [String],
    notes: Vec<String>,
    gaps: Vec<String>,
    precision: Option<&'static str>,
}

impl TracePage<'_> {
    /// The page with its first `k` nodes, in the asked format.
    fn render(&self, ctx: &Ctx, k: usize) -> String {
        let cut = self.offset + k < self.total;
        let complete = !cut && self.gaps.is_empty();
        match ctx.format {
            Format::Json => self.json(k, cut, complete),
            Format::Text => self.text(k, cut, complete),
        }
    }

    /// `both`, `incoming` or `outgoing`, as the query asked.
    fn direction(&self) -> &'static str {
        match (self.query.incoming, self.query.outgoing) {
            (true, true) => "both",
            (true, false) => "incoming",
            _ => "outgoing",
        }
    }

    /// The page with its first `k` nodes as JSON, callers and callees apart.
    fn json(&self, k: usize, cut: bool, complete: bool) -> String {
        let (query, root, coverage, offset) = (self.query, self.root, self.coverage, self.offset);
        let (callers, callees, external_calls) = (self.callers, self.callees, self.external_calls);
        let shown = &self.nodes[..k];
        let direction = self.direction();
        let next = offset + k;
        let see_also = format!(
            "trace_call_hierarchy(symbol: {:?}, direction: {direction:?}, depth: {}, offset: {next}) for the rest",
            root.qualified_name, query.depth
        );
        let rendered = |dir: Dir| -> Vec<&str> {
            shown
                .iter()
                .zip(&self.node_json)
                .filter(|(n, _)| n.dir == dir)
                .map(|(_, j)| j.as_str())
                .collect()
        };
        let v = |value: Value| Field::Value(value);
        let mut fields = vec![
            ("symbol", v(json!(query.q.text))),
            ("definition", v(def_json(root))),
            ("direction", v(json!(direction))),
            ("depth", v(json!(query.depth))),
            ("total_callers", v(json!(query.incoming.then_some(callers)))),
            ("total_callees", v(json!(query.outgoing.then_some(callees)))),
            ("offset", v(json!(offset))),
            ("returned", v(json!(k))),
            ("callers", Field::Rendered(rendered(Dir::In))),
            ("callees", Field::Rendered(rendered(Dir::Out))),
            ("external", v(json!(self.root_external))),
            (
                "external_calls",
                v(json!((external_calls > 0).then_some(external_calls))),
            ),
            (
                "name_only",
                v(json!(
                    (coverage.name_only > 0).then_some(coverage.name_only)
                )),
            ),
            (
                "unresolved",
                v(json!(
                    (coverage.unresolved > 0).then_some(coverage.unresolved)
                )),
            ),
            ("complete", v(json!(complete))),
            ("precision", v(json!(self.precision))),
            ("notes", v(json!(self.notes))),
        ];
        if cut {
            fields.push(("next_offset", v(json!(next))));
            fields.push(("see_also", v(json!(see_also))));
        }
        compact_object(fields)
    }

    /// The page with its first `k` nodes as text: a header, then the indented tree.
    fn text(&self, k: usize, cut: bool, complete: bool) -> String {
        let (query, root, facts, offset, total) =
            (self.query, self.root, self.facts, self.offset, self.total);
        let shown = &self.nodes[..k];
        let direction = self.direction();
        let next = offset + k;
        let mut summary = Vec::new();
        if query.incoming {
            summary.push(format!("{} callers", self.callers));
        }
        if query.outgoing {
            summary.push(format!("{} callees", self.callees));
        }
        let mut out = format!(
            "trace_call_hierarchy {}: {} ({direction}, depth {}) | {}-{} of {total} nodes | {}",
            query.q.text,
            summary.join(", "),
            query.depth,
            if k == 0 { offset } else { offset + 1 },
            offset + k,
            if cut {
                format!("TRUNCATED: call again with offset={next}")
            } else if complete {
                "complete".into()
            } else {
                "partial".into()
            },
        );
        if let Some(p) = self.precision {
            out.push_str(&format!(" | {p}"));
        }
        out.push_str(&format!(
            " | index: {} files, {} parse failures",
            facts.files, facts.parse_failures
        ));
        if !self.gaps.is_empty() {
            out.push_str(&format!(" | CAVEAT {}", self.gaps.join("; ")));
        }
        out.push_str(&format!(
            "\ndefinition: {} {} {}",
            root.kind,
            root.qualified_name,
            location(root)
        ));
        if !self.root_external.is_empty() {
            out.push_str(&format!(
                "\noutside the project: {}",
                self.root_external.join(", ")
            ));
        }
        for n in self.notes.iter().filter(|n| !n.starts_with("CAVEAT")) {
            out.push_str(&format!("\nnote: {n}"));
        }
        for n in shown {
            out.push('\n');
            out.push_str(&n.text());
        }
        out
    }
}

/// An answer without a tree (unknown name, no match, ambiguity) in the requested format.
fn render_plain(body: &Value, ctx: &Ctx) -> String {
    match ctx.format {
        Format::Json => to_compact_json(body),
        Format::Text => {
            let mut out = format!(
                "trace_call_hierarchy {}:",
                body["symbol"].as_str().unwrap_or("")
            );
            if body["ambiguous"] == json!(true) {
                out.push_str(&format!(
                    " AMBIGUOUS, {} definitions | partial",
                    body["candidate_count"]
                ));
            } else {
                out.push_str(" no definition | partial");
            }
            for c in body["candidates"].as_array().into_iter().flatten() {
                out.push_str(&format!(
                    "\ncandidate: {} {} {}",
                    c["kind"].as_str().unwrap_or(""),
                    c["qualified_name"].as_str().unwrap_or(""),
                    c["at"].as_str().unwrap_or("")
                ));
                if let Some(n) = c["usages"].as_u64() {
                    out.push_str(&format!(" ({n} usages)"));
                }
            }
            for n in body["notes"].as_array().into_iter().flatten() {
                out.push_str(&format!("\nnote: {}", n.as_str().unwrap_or("")));
            }
            if let Some(s) = body["see_also"].as_str() {
                out.push_str(&format!("\nsee also: {s}"));
            }
            out
        }
    }
}
