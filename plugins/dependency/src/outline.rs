//! `get_crate_outline`: a dependency crate's modules and public items.
//!
//! Which version: the one the project locks (the newest when it locks several), else
//! one indexed for another project. Modules come from the crate's `mod` definitions
//! and its root; an item belongs to the module its qualified name sits in. Items are
//! the public types, traits, functions, constants and statics (`pub`, not
//! `pub(crate)`): what a user of the crate can name. The answer is a list of entries
//! (each item, or a module that has none) paged and fitted to the budget as a prefix.

use std::collections::{BTreeMap, HashMap, HashSet};

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::host::{Ctx, DepSym, Format, Host, LockedCrate, Sym};
use scryer_plugin_sdk::{ErrorKind, ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::similar::{closest, same_crate, version_key};

/// Kinds an outline lists per module (methods are counted on their type).
const ITEM_KINDS: &[&str] = &[
    "struct",
    "enum",
    "union",
    "trait",
    "type_alias",
    "function",
    "const",
    "static",
];
const SIGNATURE_CHARS: usize = 100;
/// Crate names shown when nothing close to an unknown one is locked.
const LOCKED_SHOWN: usize = 10;

/// Visible to users of the crate: `pub`, but not `pub(crate)`, `pub(super)`, `pub(in …)`.
fn is_public(signature: &str) -> bool {
    let s = signature.trim_start();
    s.starts_with("pub ") || s == "pub" || s.starts_with("pub\t")
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let head: String = text.chars().take(max - 1).collect();
        format!("{}…", head.trim_end())
    }
}

/// A public type, trait, function, constant or static at module level.
fn is_item(s: &Sym) -> bool {
    ITEM_KINDS.contains(&s.kind.as_str()) && s.owner.is_none() && is_public(&s.signature)
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn parent(qualified_name: &str) -> &str {
    qualified_name.rsplit_once("::").map_or("", |(p, _)| p)
}

struct Item<'a> {
    sym: &'a DepSym,
    /// Public methods of a type, or the methods a trait declares.
    methods: usize,
}

struct Module<'a> {
    path: String,
    /// The file most of its definitions are in (absolute).
    file: Option<String>,
    private: bool,
    items: Vec<Item<'a>>,
}

/// The crate's root module name: the first segment the crate's qualified names share
/// (the crate name with `-` as `_` when it is there).
fn root_segment(crate_name: &str, symbols: &[DepSym]) -> String {
    let expected = crate_name.replace('-', "_");
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for d in symbols {
        let first = d.symbol.qualified_name.split("::").next().unwrap_or("");
        *counts.entry(first).or_default() += 1;
    }
    if counts.contains_key(expected.as_str()) {
        return expected;
    }
    counts
        .into_iter()
        .max_by_key(|(name, n)| (*n, std::cmp::Reverse(*name)))
        .map_or(expected, |(name, _)| name.to_string())
}

fn build_modules<'a>(root: &str, symbols: &'a [DepSym]) -> Vec<Module<'a>> {
    let mut modules: BTreeMap<String, Module<'a>> = BTreeMap::new();
    modules.insert(
        root.to_string(),
        Module {
            path: root.to_string(),
            file: None,
            private: false,
            items: Vec::new(),
        },
    );
    let test_modules = test_modules(symbols);
    add_declared_modules(&mut modules, root, symbols, &test_modules);
    add_implied_modules(&mut modules, root, symbols, &test_modules);
    assign_files(&mut modules, symbols);
    fill_items(&mut modules, symbols);
    for m in modules.values_mut() {
        m.items.sort_by(|a, b| {
            (&a.sym.symbol.file_path, a.sym.symbol.start_line)
                .cmp(&(&b.sym.symbol.file_path, b.sym.symbol.start_line))
        });
    }
    modules.into_values().collect()
}

/// Is `qn` the crate's root or inside it?
fn in_crate(root: &str, qn: &str) -> bool {
    qn == root || qn.starts_with(&format!("{root}::"))
}

/// The prefixes (`a::tests::`) of the crate's private `test`/`tests` modules.
fn test_modules(symbols: &[DepSym]) -> Vec<String> {
    // A private `test`/`tests` module is the crate's own `#[cfg(test)]` code (the index
    // does not record cfg attributes): no user can name it, so it and what it holds
    // stay out.
    symbols
        .iter()
        .map(|d| &d.symbol)
        .filter(|s| {
            s.kind == "module"
                && !is_public(&s.signature)
                && matches!(s.name.as_str(), "test" | "tests")
        })
        .map(|s| format!("{}::", s.qualified_name))
        .collect()
}

/// Is `qn` one of the `test_modules` or inside one?
fn in_tests(test_modules: &[String], qn: &str) -> bool {
    test_modules
        .iter()
        .any(|t| qn.starts_with(t.as_str()) || format!("{qn}::") == *t)
}

/// Adds the crate's modules the index has a `mod` item for.
fn add_declared_modules<'a>(
    modules: &mut BTreeMap<String, Module<'a>>,
    root: &str,
    symbols: &'a [DepSym],
    test_modules: &[String],
) {
    for d in symbols {
        let s = &d.symbol;
        if s.kind == "module"
            && in_crate(root, &s.qualified_name)
            && !in_tests(test_modules, &s.qualified_name)
        {
            modules.insert(
                s.qualified_name.clone(),
                Module {
                    path: s.qualified_name.clone(),
                    file: None,
                    private: !is_public(&s.signature),
                    items: Vec::new(),
                },
            );
        }
    }
}

/// Adds the modules only the qualified names of what they hold show.
fn add_implied_modules<'a>(
    modules: &mut BTreeMap<String, Module<'a>>,
    root: &str,
    symbols: &'a [DepSym],
    test_modules: &[String],
) {
    // A module the index has no `mod` item for (declared inside a macro such as
    // `cfg_if!`, or through `#[path]`) still shows in the qualified names of what it
    // holds. A parent path that names a function or a type is not a module: items there
    // are local to a body.
    let not_modules: HashSet<&str> = symbols
        .iter()
        .filter(|d| d.symbol.kind != "module")
        .map(|d| d.symbol.qualified_name.as_str())
        .collect();
    for d in symbols {
        let s = &d.symbol;
        let p = parent(&s.qualified_name);
        if is_item(s)
            && in_crate(root, p)
            && !in_tests(test_modules, p)
            && !modules.contains_key(p)
            && !not_modules.contains(p)
        {
            modules.insert(
                p.to_string(),
                Module {
                    path: p.to_string(),
                    file: None,
                    private: false,
                    items: Vec::new(),
                },
            );
        }
    }
}

/// Sets each module's file: where most of the definitions directly inside it are.
fn assign_files(modules: &mut BTreeMap<String, Module<'_>>, symbols: &[DepSym]) {
    // `mod error;` is declared in lib.rs, its items live in error.rs.
    let mut files: HashMap<&str, HashMap<&str, usize>> = HashMap::new();
    for d in symbols {
        let s = &d.symbol;
        if s.kind != "module" && modules.contains_key(parent(&s.qualified_name)) {
            *files
                .entry(parent(&s.qualified_name))
                .or_default()
                .entry(s.file_path.as_str())
                .or_default() += 1;
        }
    }
    for (path, m) in modules.iter_mut() {
        m.file = files.get(path.as_str()).and_then(|f| {
            f.iter()
                .max_by_key(|(file, n)| (**n, std::cmp::Reverse(**file)))
                .map(|(file, _)| file.to_string())
        });
    }
}

/// Puts each item in its module, with the methods it counts.
fn fill_items<'a>(modules: &mut BTreeMap<String, Module<'a>>, symbols: &'a [DepSym]) {
    // Methods per owner path: (public ones, all). A trait's methods are all public; a
    // type's inherent methods only when marked `pub` (trait impl methods are counted by
    // the trait).
    let mut methods: HashMap<&str, (usize, usize)> = HashMap::new();
    for d in symbols.iter().filter(|d| d.symbol.kind == "method") {
        let counts = methods.entry(parent(&d.symbol.qualified_name)).or_default();
        counts.0 += usize::from(is_public(&d.symbol.signature));
        counts.1 += 1;
    }
    for d in symbols {
        let s = &d.symbol;
        if !is_item(s) {
            continue;
        }
        let Some(m) = modules.get_mut(parent(&s.qualified_name)) else {
            // defined inside a function body: not nameable from outside
            continue;
        };
        let (public, all) = methods
            .get(s.qualified_name.as_str())
            .copied()
            .unwrap_or_default();
        let methods = match s.kind.as_str() {
            "trait" => all,
            "struct" | "enum" | "union" => public,
            _ => 0,
        };
        m.items.push(Item { sym: d, methods });
    }
}

/// The modules `wanted` names (`de`, `serde_json::de`, `crate::de`) and their submodules.
fn select_modules<'a>(
    modules: Vec<Module<'a>>,
    root: &str,
    wanted: &str,
) -> Result<Vec<Module<'a>>, Vec<Module<'a>>> {
    let w = wanted.trim().trim_matches(':').replace('.', "::");
    let w = w
        .strip_prefix("crate::")
        .or_else(|| w.strip_prefix(&format!("{root}::")))
        .unwrap_or(&w)
        .to_string();
    let full = if w == "crate" || w == root || w.is_empty() {
        root.to_string()
    } else {
        format!("{root}::{w}")
    };
    let exact: Vec<String> = modules
        .iter()
        .filter(|m| m.path == full)
        .map(|m| m.path.clone())
        .collect();
    // `de` may also be a nested module's last segment (`serde_json::value::de`).
    let heads: Vec<String> = if exact.is_empty() {
        modules
            .iter()
            .filter(|m| m.path.ends_with(&format!("::{w}")))
            .map(|m| m.path.clone())
            .collect()
    } else {
        exact
    };
    if heads.is_empty() {
        return Err(modules);
    }
    let under = |p: &str| {
        heads
            .iter()
            .any(|h| p == h || (h != root && p.starts_with(&format!("{h}::"))))
    };
    Ok(modules.into_iter().filter(|m| under(&m.path)).collect())
}

/// The crate's source directory (`…/hex-0.4.3`) when its files sit in one.
fn crate_dir(name: &str, version: &str, symbols: &[DepSym]) -> Option<String> {
    let needle = format!("/{name}-{version}/");
    let path = &symbols.first()?.symbol.file_path;
    let at = path.find(&needle)?;
    let dir = &path[..at + needle.len() - 1];
    symbols
        .iter()
        .all(|d| d.symbol.file_path.starts_with(dir))
        .then(|| dir.to_string())
}

fn relative<'p>(path: &'p str, dir: Option<&str>) -> &'p str {
    dir.and_then(|d| path.strip_prefix(d))
        .map_or(path, |p| p.trim_start_matches('/'))
}

/// One line of the outline: item `item` of module `module`.
#[derive(Clone, Copy)]
struct Entry {
    module: usize,
    item: usize,
}

fn entries(modules: &[Module<'_>]) -> Vec<Entry> {
    modules
        .iter()
        .enumerate()
        .flat_map(|(module, m)| (0..m.items.len()).map(move |item| Entry { module, item }))
        .collect()
}

struct Outline<'a> {
    crate_name: String,
    version: String,
    dir: Option<String>,
    modules: Vec<Module<'a>>,
    entries: Vec<Entry>,
    offset: usize,
    module_arg: Option<String>,
    notes: Vec<String>,
}

impl Outline<'_> {
    fn total_items(&self) -> usize {
        self.modules.iter().map(|m| m.items.len()).sum()
    }

    /// The shown entries grouped by module, in order.
    fn groups(&self, k: usize) -> Vec<(usize, Vec<usize>)> {
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for e in &self.entries[self.offset..self.offset + k] {
            match groups.last_mut() {
                Some((m, items)) if *m == e.module => items.push(e.item),
                _ => groups.push((e.module, vec![e.item])),
            }
        }
        groups
    }

    fn next_call(&self, next: usize) -> String {
        let mut parts = vec![format!("crate_name: {:?}", self.crate_name)];
        parts.push(format!("version: {:?}", self.version));
        if let Some(m) = &self.module_arg {
            parts.push(format!("module: {m:?}"));
        }
        parts.push(format!("offset: {next}"));
        format!("get_crate_outline({}) for the rest", parts.join(", "))
    }

    fn item_json(&self, item: &Item<'_>) -> Value {
        let s = &item.sym.symbol;
        json!({
            "name": s.name,
            "kind": s.kind,
            "line": s.start_line,
            "signature": shorten(&s.signature, SIGNATURE_CHARS),
            "methods": (item.methods > 0).then_some(item.methods),
        })
    }

    fn render(&self, k: usize, format: Format) -> String {
        let shown = self.groups(k);
        let end = self.offset + k;
        let cut = end < self.entries.len();
        let mut notes = self.notes.clone();
        let omitted = cut.then(|| self.omitted(end, &shown, &mut notes));
        match format {
            Format::Json => self.json(&shown, end, cut, &notes, omitted),
            Format::Text => self.text(&shown, k, end, cut, &notes),
        }
    }

    /// (modules, items) past a page that ends at `end`, said in a note.
    fn omitted(
        &self,
        end: usize,
        shown: &[(usize, Vec<usize>)],
        notes: &mut Vec<String>,
    ) -> (usize, usize) {
        let rest = &self.entries[end..];
        let items = rest.len();
        // a module whose first items are shown is not omitted, only its later items
        let partly_shown = shown.last().map(|(m, _)| *m);
        let mut modules: Vec<usize> = rest
            .iter()
            .map(|e| e.module)
            .filter(|m| Some(*m) != partly_shown)
            .collect();
        modules.dedup();
        notes.push(format!(
            "{} and {} omitted to fit the budget",
            plural(items, "more item"),
            plural(modules.len(), "more module")
        ));
        (modules.len(), items)
    }

    /// The page of entries up to `end` as JSON.
    fn json(
        &self,
        shown: &[(usize, Vec<usize>)],
        end: usize,
        cut: bool,
        notes: &[String],
        omitted: Option<(usize, usize)>,
    ) -> String {
        let dir = self.dir.as_deref();
        let modules: Vec<Value> = shown
            .iter()
            .map(|(mi, items)| {
                let m = &self.modules[*mi];
                json!({
                    "path": m.path,
                    "file": m.file.as_deref().map(|f| relative(f, dir)),
                    "private": m.private.then_some(true),
                    "items": items.iter().map(|i| self.item_json(&m.items[*i])).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut body = json!({
            "crate_name": self.crate_name,
            "version": self.version,
            "root": self.dir,
            "total_modules": self.modules.len(),
            "total_items": self.total_items(),
            "offset": (self.offset > 0).then_some(self.offset),
            "modules": modules,
            "complete": !cut,
            "notes": notes,
        });
        if let Some((modules, items)) = omitted {
            body["omitted"] = json!({"modules": modules, "items": items});
            body["next_offset"] = json!(end);
            body["see_also"] = json!(self.next_call(end));
        }
        to_compact_json(&body)
    }

    /// The page of `k` entries up to `end` as text: a header, then each module's items.
    fn text(
        &self,
        shown: &[(usize, Vec<usize>)],
        k: usize,
        end: usize,
        cut: bool,
        notes: &[String],
    ) -> String {
        let dir = self.dir.as_deref();
        let range = if k == 0 {
            "none shown".to_string()
        } else {
            format!(
                "entries {}-{end} of {}",
                self.offset + 1,
                self.entries.len()
            )
        };
        let state = if cut {
            format!("TRUNCATED: call again with offset={end}")
        } else {
            "complete".into()
        };
        let mut out = format!(
            "get_crate_outline {} {}: {}, {} | {range} | {state}",
            self.crate_name,
            self.version,
            plural(self.modules.len(), "module"),
            plural(self.total_items(), "public item")
        );
        if let Some(d) = dir {
            out.push_str(&format!("\nroot: {d}"));
        }
        for n in notes {
            out.push_str(&format!("\nnote: {n}"));
        }
        for (mi, items) in shown {
            let m = &self.modules[*mi];
            out.push_str(&format!("\n## {}", m.path));
            let mut tags: Vec<&str> = m
                .file
                .as_deref()
                .map(|f| relative(f, dir))
                .into_iter()
                .collect();
            if m.private {
                tags.push("private");
            }
            if !tags.is_empty() {
                out.push_str(&format!(" ({})", tags.join(", ")));
            }
            for i in items {
                let item = &m.items[*i];
                let s = &item.sym.symbol;
                out.push_str(&format!(
                    "\n- {} {} {}",
                    s.start_line,
                    s.kind,
                    shorten(&s.signature, SIGNATURE_CHARS)
                ));
                if item.methods > 0 {
                    out.push_str(&format!(" ({})", plural(item.methods, "method")));
                }
            }
        }
        out
    }
}

/// An answer for a crate that has nothing to show, with why.
fn empty_answer(
    crate_name: &str,
    version: &str,
    indexed: bool,
    notes: Vec<String>,
    format: Format,
) -> String {
    match format {
        Format::Json => to_compact_json(&json!({
            "crate_name": crate_name,
            "version": version,
            "indexed": indexed,
            "notes": notes,
        })),
        Format::Text => {
            let mut out = format!(
                "get_crate_outline {crate_name} {version}: {} | none shown | complete",
                if indexed {
                    "nothing public"
                } else {
                    "not indexed"
                }
            );
            for n in &notes {
                out.push_str(&format!("\nnote: {n}"));
            }
            out
        }
    }
}

fn not_indexed_note(l: &LockedCrate) -> String {
    match &l.note {
        Some(why) => format!("{} {} is locked but not indexed: {why}", l.name, l.version),
        None => format!(
            "{} {} is locked but not indexed yet: dependency indexing runs in the background \
             after the project is indexed; retry in a few seconds",
            l.name, l.version
        ),
    }
}

fn unknown_crate(crate_name: &str, version: Option<&str>, locked: &[LockedCrate]) -> ToolError {
    let asked = match version {
        Some(v) => format!("`{crate_name}` {v}"),
        None => format!("`{crate_name}`"),
    };
    if locked.is_empty() {
        return ToolError::not_found(format!(
            "crate {asked} is not indexed, and the project locks no crates: dependency indexing \
             needs a Cargo.lock in the project root and the crates' sources in the local cargo \
             registry (run `cargo fetch`, then index_workspace again)"
        ));
    }
    let mut names: Vec<&str> = locked.iter().map(|l| l.name.as_str()).collect();
    names.dedup();
    let same: Vec<String> = locked
        .iter()
        .filter(|l| same_crate(&l.name, crate_name))
        .map(|l| l.version.clone())
        .collect();
    if !same.is_empty() {
        return ToolError::not_found(format!(
            "crate {asked} is not indexed; the project locks {crate_name} at {}",
            same.join(", ")
        ));
    }
    let close = closest(crate_name, names.iter().copied(), 5);
    let hint = if close.is_empty() {
        let shown: Vec<&str> = names.iter().take(LOCKED_SHOWN).copied().collect();
        format!(
            "; it locks: {}{}",
            shown.join(", "),
            if names.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        )
    } else {
        format!("; closest: {}", close.join(", "))
    };
    ToolError::not_found(format!(
        "crate {asked} is not among the {} crates the project locks{hint}",
        names.len()
    ))
}

/// The crate's definitions, or none when the host does not know it.
fn symbols_of<H: Host + ?Sized>(
    host: &H,
    name: &str,
    version: Option<&str>,
) -> ToolResult<Vec<DepSym>> {
    match host.crate_symbols(name, version) {
        Err(e) if e.kind == ErrorKind::NotFound => Ok(Vec::new()),
        other => other,
    }
}

pub fn get_crate_outline<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let Query {
        crate_name,
        version,
        module_arg,
        offset,
    } = parse(args)?;

    let locked = host.locked_crates()?;
    let mut notes = Vec::new();
    let (matches, chosen) = choose_locked(&locked, &crate_name, version.as_deref(), &mut notes);
    if let Some(l) = chosen
        && !l.indexed
    {
        return Ok(empty_answer(
            &l.name,
            &l.version,
            false,
            vec![not_indexed_note(l)],
            ctx.format,
        ));
    }
    let (name, wanted_version) = match chosen {
        Some(l) => (l.name.clone(), Some(l.version.clone())),
        None => (crate_name.clone(), version.clone()),
    };
    let symbols = symbols_of(host, &name, wanted_version.as_deref())?;
    let Some(first) = symbols.first() else {
        if let Some(l) = chosen {
            return Ok(empty_answer(
                &l.name,
                &l.version,
                true,
                vec![format!(
                    "{} {} is indexed but holds no definitions",
                    l.name, l.version
                )],
                ctx.format,
            ));
        }
        return Err(unknown_crate(&crate_name, version.as_deref(), &locked));
    };
    let (name, found_version) = (first.crate_name.clone(), first.crate_version.clone());
    if chosen.is_none() {
        notes.push(match matches.first() {
            Some(_) => format!("the project does not lock {name} {found_version}; this version was indexed for another project"),
            None => format!("the project does not lock {name}; this is the {found_version} indexed for another project"),
        });
    }

    let root = root_segment(&name, &symbols);
    let mut modules = build_modules(&root, &symbols);
    if let Some(m) = &module_arg {
        modules = selected_modules(modules, &root, m, &name, &found_version)?;
    }
    list_public_modules(&mut modules, module_arg.is_some(), &mut notes);
    let entries = entries(&modules);
    let offset = offset.min(entries.len());
    if offset > 0 && offset == entries.len() {
        notes.push(format!(
            "offset {offset} is past the last entry ({})",
            entries.len()
        ));
    }
    let outline = Outline {
        crate_name: name.clone(),
        version: found_version.clone(),
        dir: crate_dir(&name, &found_version, &symbols),
        modules,
        entries,
        offset,
        module_arg,
        notes,
    };
    Ok(render_fitted(host, &outline, ctx))
}

/// The outline with the entries from its offset that the budget holds (all without one).
fn render_fitted<H: Host + ?Sized>(host: &H, outline: &Outline, ctx: &Ctx) -> String {
    let n = outline.entries.len() - outline.offset;
    let Some(budget) = ctx.budget else {
        return outline.render(n, ctx.format);
    };
    let k = fit_prefix(
        n,
        budget,
        |k| outline.render(k, ctx.format),
        |s| host.count_tokens(s),
    );
    // One entry over the budget still beats none; the host has the last word on size.
    outline.render(k.max(1).min(n), ctx.format)
}

/// The arguments of a call.
struct Query {
    crate_name: String,
    version: Option<String>,
    module_arg: Option<String>,
    offset: usize,
}

/// Reads and checks the arguments: a crate name is letters, digits, `-` and `_`.
fn parse(args: &Args) -> ToolResult<Query> {
    let crate_name =
        args.required_str("crate_name", "the crate to outline, as named in Cargo.lock")?;
    check_text("crate_name", &crate_name, 128)?;
    if !crate_name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(ToolError::invalid(format!(
            "`crate_name` {crate_name:?} is not a crate name; accepted: letters, digits, `-` and `_`, e.g. serde_json"
        )));
    }
    let version = args.opt_str("version")?;
    if let Some(v) = &version {
        check_text("version", v, 64)?;
    }
    let module_arg = args.opt_str("module")?;
    if let Some(m) = &module_arg {
        check_text("module", m, 512)?;
    }
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    Ok(Query {
        crate_name,
        version,
        module_arg,
        offset,
    })
}

/// The locked versions of the crate, newest first, and the one asked for (default: newest).
fn choose_locked<'l>(
    locked: &'l [LockedCrate],
    crate_name: &str,
    version: Option<&str>,
    notes: &mut Vec<String>,
) -> (Vec<&'l LockedCrate>, Option<&'l LockedCrate>) {
    let mut matches: Vec<&LockedCrate> = locked
        .iter()
        .filter(|l| same_crate(&l.name, crate_name))
        .collect();
    matches.sort_by_key(|l| std::cmp::Reverse(version_key(&l.version)));
    let chosen: Option<&LockedCrate> = match version {
        Some(v) => matches.iter().copied().find(|l| l.version == v),
        None => matches.first().copied(),
    };
    if version.is_none() && matches.len() > 1 {
        let versions: Vec<&str> = matches.iter().map(|l| l.version.as_str()).collect();
        notes.push(format!(
            "the project locks {} at {}; this is {} (pass version for another)",
            matches[0].name,
            versions.join(" and "),
            matches[0].version
        ));
    }
    (matches, chosen)
}

/// The modules `m` selects, or an error listing the crate's modules when it names none.
fn selected_modules<'a>(
    modules: Vec<Module<'a>>,
    root: &str,
    m: &str,
    name: &str,
    found_version: &str,
) -> ToolResult<Vec<Module<'a>>> {
    match select_modules(modules, root, m) {
        Ok(selected) => Ok(selected),
        Err(all) => {
            let paths: Vec<&str> = all.iter().map(|m| m.path.as_str()).collect();
            let shown: Vec<&str> = paths.iter().take(20).copied().collect();
            Err(ToolError::not_found(format!(
                "{name} {found_version} has no module {m:?}; its modules: {}{}",
                shown.join(", "),
                if paths.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            )))
        }
    }
}

/// Keeps the modules with public items, the crate's surface first; a note names the rest.
fn list_public_modules(modules: &mut Vec<Module<'_>>, in_module: bool, notes: &mut Vec<String>) {
    // Modules without public items are only structure (helpers, platform shims): they
    // are named in a note, not listed.
    let empty: Vec<String> = modules
        .iter()
        .filter(|m| m.items.is_empty())
        .map(|m| m.path.clone())
        .collect();
    modules.retain(|m| !m.items.is_empty());
    // The crate's surface first: the root, then its modules, then deeper ones.
    modules.sort_by(|a, b| {
        (a.path.matches("::").count(), &a.path).cmp(&(b.path.matches("::").count(), &b.path))
    });
    if modules.is_empty() {
        notes.push(format!(
            "no public types, traits, functions or constants {}; its items may be private or come from macros",
            if in_module { "in this module" } else { "are defined in the crate" }
        ));
    } else if !empty.is_empty() {
        let shown: Vec<&str> = empty.iter().take(5).map(String::as_str).collect();
        notes.push(format!(
            "{} without public items not listed: {}{}",
            plural(empty.len(), "module"),
            shown.join(", "),
            if empty.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scryer_plugin_sdk::testing::MemHost;

    const DIR: &str = "/home/u/.cargo/registry/src/index.crates.io-x/hex-0.4.3";

    fn dep(qn: &str, kind: &str, owner: Option<&str>, file: &str, line: u32, sig: &str) -> DepSym {
        DepSym {
            crate_name: "hex".into(),
            crate_version: "0.4.3".into(),
            symbol: Sym {
                name: qn.rsplit("::").next().unwrap().into(),
                kind: kind.into(),
                qualified_name: qn.into(),
                owner: owner.map(Into::into),
                file_path: format!("{DIR}/{file}"),
                start_line: line,
                end_line: line + 3,
                signature: sig.into(),
                docstring: None,
            },
        }
    }

    /// hex 0.4.3 in miniature, as the dependency index holds it.
    fn hex() -> Vec<DepSym> {
        vec![
            dep("hex::error", "module", None, "src/lib.rs", 45, "mod error"),
            dep(
                "hex::serde",
                "module",
                None,
                "src/lib.rs",
                52,
                "pub mod serde",
            ),
            dep(
                "hex::ToHex",
                "trait",
                None,
                "src/lib.rs",
                70,
                "pub trait ToHex",
            ),
            dep(
                "hex::ToHex::encode_hex",
                "method",
                Some("ToHex"),
                "src/lib.rs",
                72,
                "fn encode_hex<T: iter::FromIterator<char>>(&self) -> T",
            ),
            dep(
                "hex::ToHex::encode_hex_upper",
                "method",
                Some("ToHex"),
                "src/lib.rs",
                76,
                "fn encode_hex_upper<T: iter::FromIterator<char>>(&self) -> T",
            ),
            dep(
                "hex::FromHex",
                "trait",
                None,
                "src/lib.rs",
                140,
                "pub trait FromHex: Sized",
            ),
            dep(
                "hex::val",
                "function",
                None,
                "src/lib.rs",
                160,
                "fn val(c: u8, idx: usize) -> Result<u8, FromHexError>",
            ),
            dep(
                "hex::encode",
                "function",
                None,
                "src/lib.rs",
                200,
                "pub fn encode<T: AsRef<[u8]>>(data: T) -> String",
            ),
            dep(
                "hex::decode",
                "function",
                None,
                "src/lib.rs",
                240,
                "pub fn decode<T: AsRef<[u8]>>(data: T) -> Result<Vec<u8>, FromHexError>",
            ),
            dep("hex::tests", "module", None, "src/lib.rs", 300, "mod tests"),
            dep(
                "hex::tests::helper",
                "function",
                None,
                "src/lib.rs",
                302,
                "pub fn helper()",
            ),
            dep(
                "hex::tests::nested",
                "module",
                None,
                "src/lib.rs",
                304,
                "pub mod nested",
            ),
            dep("hex::util", "module", None, "src/lib.rs", 40, "mod util"),
            // declared inside a macro: no `mod` item, but its items name it
            dep(
                "hex::simd::Lanes",
                "struct",
                None,
                "src/simd.rs",
                5,
                "pub struct Lanes",
            ),
            dep(
                "hex::util::helper",
                "function",
                None,
                "src/util.rs",
                3,
                "fn helper()",
            ),
            dep(
                "hex::arch",
                "module",
                None,
                "src/lib.rs",
                41,
                "pub mod arch",
            ),
            dep(
                "hex::arch::x86",
                "module",
                None,
                "src/lib.rs",
                42,
                "pub mod x86",
            ),
            dep(
                "hex::arch::x86::Simd",
                "struct",
                None,
                "src/arch/x86.rs",
                3,
                "pub struct Simd",
            ),
            dep(
                "hex::error::FromHexError",
                "enum",
                None,
                "src/error.rs",
                6,
                "pub enum FromHexError",
            ),
            dep(
                "hex::error::FromHexError::InvalidHexCharacter",
                "variant",
                Some("FromHexError"),
                "src/error.rs",
                8,
                "InvalidHexCharacter { c: char, index: usize }",
            ),
            dep(
                "hex::error::FromHexError::describe",
                "method",
                Some("FromHexError"),
                "src/error.rs",
                30,
                "pub fn describe(&self) -> &str",
            ),
            dep(
                "hex::error::FromHexError::secret",
                "method",
                Some("FromHexError"),
                "src/error.rs",
                34,
                "pub(crate) fn secret(&self)",
            ),
            dep(
                "hex::serde::serialize",
                "function",
                None,
                "src/serde.rs",
                20,
                "pub fn serialize<S, T>(data: T, serializer: S) -> Result<S::Ok, S::Error>",
            ),
            dep(
                "hex::serde::deserialize",
                "function",
                None,
                "src/serde.rs",
                40,
                "pub fn deserialize<'de, D, T>(deserializer: D) -> Result<T, D::Error>",
            ),
            dep(
                "hex::serde::inner",
                "function",
                None,
                "src/serde.rs",
                60,
                "pub(crate) fn inner()",
            ),
            dep(
                "hex::encode::Local",
                "struct",
                None,
                "src/lib.rs",
                205,
                "pub struct Local",
            ),
        ]
    }

    fn locked(name: &str, version: &str, indexed: bool, note: Option<&str>) -> LockedCrate {
        LockedCrate {
            name: name.into(),
            version: version.into(),
            indexed,
            note: note.map(Into::into),
            symbols: 0,
        }
    }

    fn hex_host() -> MemHost {
        MemHost {
            locked: vec![
                locked("hashbrown", "0.15.2", true, None),
                locked("hex", "0.4.3", true, None),
                locked("itoa", "1.0.19", true, None),
            ],
            deps: hex(),
            ..MemHost::default()
        }
    }

    fn call_ctx(host: &MemHost, args: Value, ctx: &Ctx) -> ToolResult<String> {
        get_crate_outline(host, &Args::from_value(args).unwrap(), ctx)
    }

    fn call(host: &MemHost, args: Value) -> ToolResult<Value> {
        let body = call_ctx(
            host,
            args,
            &Ctx {
                budget: Some(1000),
                ..Ctx::default()
            },
        )?;
        Ok(serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")))
    }

    fn item_names(module: &Value) -> Vec<&str> {
        module["items"]
            .as_array()
            .map(|a| a.iter().map(|i| i["name"].as_str().unwrap()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn modules_hold_their_public_items_with_method_counts() {
        let v = call(&hex_host(), json!({"crate_name": "hex"})).unwrap();
        assert_eq!(
            (v["crate_name"].as_str(), v["version"].as_str()),
            (Some("hex"), Some("0.4.3"))
        );
        assert_eq!(v["root"], DIR);
        let modules = v["modules"].as_array().unwrap();
        let paths: Vec<&str> = modules
            .iter()
            .map(|m| m["path"].as_str().unwrap())
            .collect();
        // the private `tests` module (cfg(test) code) and what is inside it are left out;
        // the root comes first, then its modules, then deeper ones
        assert_eq!(
            paths,
            [
                "hex",
                "hex::error",
                "hex::serde",
                "hex::simd",
                "hex::arch::x86"
            ]
        );
        assert_eq!(
            v["notes"],
            json!(["2 modules without public items not listed: hex::arch, hex::util"])
        );
        // private `val`, fn-local `Local` and the methods are not items of `hex`
        assert_eq!(
            item_names(&modules[0]),
            ["ToHex", "FromHex", "encode", "decode"]
        );
        assert_eq!(modules[0]["file"], "src/lib.rs");
        assert_eq!(
            modules[0]["items"][0],
            json!({"name": "ToHex", "kind": "trait", "line": 70, "signature": "pub trait ToHex", "methods": 2})
        );
        assert_eq!(modules[1]["private"], true);
        assert_eq!(modules[1]["file"], "src/error.rs");
        // one public method; pub(crate) ones are not counted
        assert_eq!(modules[1]["items"][0]["methods"], 1);
        assert_eq!(item_names(&modules[2]), ["serialize", "deserialize"]);
        assert!(modules[2].get("private").is_none());
        assert_eq!(
            (v["total_modules"].as_u64(), v["total_items"].as_u64()),
            (Some(5), Some(9))
        );
        assert_eq!(v["complete"], true);
    }

    #[test]
    fn long_signatures_are_shortened() {
        let mut host = hex_host();
        host.deps.push(dep(
            "hex::long",
            "function",
            None,
            "src/lib.rs",
            280,
            &format!("pub fn long({}) -> u8", "a: u8, ".repeat(40)),
        ));
        let v = call(&host, json!({"crate_name": "hex"})).unwrap();
        let sig = v["modules"][0]["items"][4]["signature"].as_str().unwrap();
        assert!(sig.chars().count() <= SIGNATURE_CHARS, "{sig}");
        assert!(sig.ends_with('…') && sig.starts_with("pub fn long("));
    }

    #[test]
    fn the_module_argument_narrows_to_a_module_and_its_submodules() {
        let mut host = hex_host();
        host.deps.push(dep(
            "hex::serde::inner_mod",
            "module",
            None,
            "src/serde.rs",
            70,
            "pub mod inner_mod",
        ));
        host.deps.push(dep(
            "hex::serde::inner_mod::Thing",
            "struct",
            None,
            "src/serde.rs",
            72,
            "pub struct Thing",
        ));
        for m in ["serde", "hex::serde", "crate::serde"] {
            let v = call(&host, json!({"crate_name": "hex", "module": m})).unwrap();
            let paths: Vec<&str> = v["modules"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["path"].as_str().unwrap())
                .collect();
            assert_eq!(paths, ["hex::serde", "hex::serde::inner_mod"], "{m}");
        }
        let v = call(&host, json!({"crate_name": "hex", "module": "inner_mod"})).unwrap();
        assert_eq!(v["modules"][0]["path"], "hex::serde::inner_mod");
        let v = call(&host, json!({"crate_name": "hex", "module": "hex"})).unwrap();
        assert_eq!(v["modules"].as_array().unwrap().len(), 1);
        let e = call(&host, json!({"crate_name": "hex", "module": "de"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert!(
            e.message.contains("no module \"de\"") && e.message.contains("hex::error"),
            "{}",
            e.message
        );
    }

    #[test]
    fn an_unknown_crate_names_the_closest_locked_ones() {
        let e = call(&hex_host(), json!({"crate_name": "hexx"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert!(
            e.message
                .contains("`hexx` is not among the 3 crates the project locks; closest: hex"),
            "{}",
            e.message
        );
        let e = call(&hex_host(), json!({"crate_name": "tokio"})).unwrap_err();
        assert!(
            e.message.contains("it locks: hashbrown, hex, itoa"),
            "{}",
            e.message
        );
        let none = MemHost::default();
        let e = call(&none, json!({"crate_name": "hex"})).unwrap_err();
        assert!(
            e.message.contains("Cargo.lock") && e.message.contains("cargo fetch"),
            "{}",
            e.message
        );
        let e = call(
            &hex_host(),
            json!({"crate_name": "hex", "version": "0.3.0"}),
        )
        .unwrap_err();
        assert!(e.message.contains("locks hex at 0.4.3"), "{}", e.message);
        let e = call(&hex_host(), json!({"crate_name": "he x"})).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        let e = call(&hex_host(), json!({})).unwrap_err();
        assert!(
            e.message.contains("`crate_name` is required"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_locked_crate_that_is_not_indexed_says_why() {
        let mut host = hex_host();
        host.deps.clear();
        host.locked[1].indexed = false;
        let v = call(&host, json!({"crate_name": "hex"})).unwrap();
        assert_eq!(v["indexed"], false);
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("hex 0.4.3 is locked but not indexed yet"),
            "{v}"
        );
        host.locked[1].note = Some("not in the local cargo registry (run `cargo fetch`)".into());
        let v = call(&host, json!({"crate_name": "Hex"})).unwrap();
        assert_eq!(
            v["notes"][0],
            "hex 0.4.3 is locked but not indexed: not in the local cargo registry (run `cargo fetch`)"
        );
    }

    #[test]
    fn the_newest_locked_version_is_the_default_and_others_are_named() {
        let mut host = hex_host();
        host.locked.push(locked("hex", "0.3.2", true, None));
        let mut old = hex();
        for d in &mut old {
            d.crate_version = "0.3.2".into();
        }
        old.truncate(3);
        host.deps.extend(old);
        let v = call(&host, json!({"crate_name": "hex"})).unwrap();
        assert_eq!(v["version"], "0.4.3");
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("locks hex at 0.4.3 and 0.3.2"),
            "{v}"
        );
        let v = call(&host, json!({"crate_name": "hex", "version": "0.3.2"})).unwrap();
        assert_eq!(v["version"], "0.3.2");
        assert_eq!(v["total_items"], 1);
    }

    #[test]
    fn a_crate_indexed_for_another_project_is_shown_with_a_note() {
        let mut host = hex_host();
        host.locked.remove(1);
        let v = call(&host, json!({"crate_name": "hex"})).unwrap();
        assert_eq!(v["version"], "0.4.3");
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("does not lock hex"),
            "{v}"
        );
    }

    #[test]
    fn a_small_budget_keeps_the_first_entries_and_counts_the_rest() {
        let host = hex_host();
        let tight = Ctx {
            budget: Some(160),
            ..Ctx::default()
        };
        let body = call_ctx(&host, json!({"crate_name": "hex"}), &tight).unwrap();
        assert!(host.count_tokens(&body) <= 160, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["complete"], false);
        let next = v["next_offset"].as_u64().unwrap();
        let shown: usize = v["modules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| item_names(m).len())
            .sum();
        assert_eq!(shown as u64, next);
        let omitted_items = v["omitted"]["items"].as_u64().unwrap();
        assert_eq!(
            omitted_items
                + v["modules"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| item_names(m).len() as u64)
                    .sum::<u64>(),
            9
        );
        assert!(v["omitted"]["modules"].as_u64().unwrap() >= 1);
        let note = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .find(|n| n.contains("omitted"))
            .unwrap();
        assert!(
            note.ends_with("more modules omitted to fit the budget")
                && note.starts_with(&format!("{omitted_items} more item")),
            "{note}"
        );
        assert!(
            v["see_also"]
                .as_str()
                .unwrap()
                .contains(&format!("offset: {next}"))
        );

        // following next_offset visits every entry once
        let mut seen = Vec::new();
        let mut offset = 0u64;
        loop {
            let body = call_ctx(
                &host,
                json!({"crate_name": "hex", "offset": offset}),
                &tight,
            )
            .unwrap();
            let v: Value = serde_json::from_str(&body).unwrap();
            for m in v["modules"].as_array().unwrap() {
                let items = item_names(m);
                seen.extend(
                    items
                        .iter()
                        .map(|i| format!("{}::{i}", m["path"].as_str().unwrap())),
                );
            }
            match v["next_offset"].as_u64() {
                Some(n) => offset = n,
                None => break,
            }
        }
        let everything = call_ctx(&host, json!({"crate_name": "hex"}), &Ctx::default()).unwrap();
        let all: Value = serde_json::from_str(&everything).unwrap();
        assert_eq!(seen.len(), 9);
        assert_eq!(all["complete"], true);
    }

    #[test]
    fn text_format_is_a_header_and_one_line_per_item() {
        let host = hex_host();
        let ctx = Ctx {
            format: Format::Text,
            budget: Some(1000),
            ..Ctx::default()
        };
        let body = call_ctx(&host, json!({"crate_name": "hex", "module": "error"}), &ctx).unwrap();
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(
            lines,
            [
                "get_crate_outline hex 0.4.3: 1 module, 1 public item | entries 1-1 of 1 | complete",
                &format!("root: {DIR}"),
                "## hex::error (src/error.rs, private)",
                "- 6 enum pub enum FromHexError (1 method)",
            ]
        );
        let mut pending = hex_host();
        pending.locked[1].indexed = false;
        let body = call_ctx(&pending, json!({"crate_name": "hex"}), &ctx).unwrap();
        assert!(
            body.starts_with("get_crate_outline hex 0.4.3: not indexed"),
            "{body}"
        );
        assert!(
            body.contains("\nnote: hex 0.4.3 is locked but not indexed yet"),
            "{body}"
        );
    }
}
