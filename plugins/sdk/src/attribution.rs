//! Query-time attribution as routers use it: reading a `symbol` argument, picking the
//! definitions it names, and tying the usages of a name (reference sites, or graph edges
//! seen as sites) to one of its same-named definitions.
//!
//! [`resolve::attribute`](crate::resolve::attribute) decides one site against a list of
//! definitions; this module gathers what it needs (the [`Scope`]: imports, same-named
//! owners, trait owners) and applies the rules a single definition's usages follow
//! (implementations of a trait item count as its uses; a member used on a receiver of
//! unknown type, in a file that never names its owner, is another type's member).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::args::check_text;
use crate::host::{Edge, Host, Site, Sym};
use crate::resolve::{self, Attribution, Scope, Strength};
use crate::{ToolError, ToolResult};

/// A `symbol` argument read as a name and the path written before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolQuery {
    /// The argument as given (trimmed).
    pub text: String,
    /// The bare name: the last segment.
    pub name: String,
    /// Path segments before the name (`["Runtime"]` for `Runtime::spawn`).
    pub qualifier: Vec<String>,
}

/// Reads a symbol argument: `name`, `Type::name`, `crate::path::name` (or `Type.name`).
/// `arg` names the argument in errors.
pub fn parse_symbol(arg: &str, text: &str) -> ToolResult<SymbolQuery> {
    let text = text.trim();
    check_text(arg, text, 512)?;
    split_symbol(
        arg,
        text,
        text,
        |c| c.is_alphanumeric() || c == '_',
        "accepted: `name`, `Type::name` or `crate::path::name`",
    )
}

/// [`parse_symbol`] for a symbol as copied from code or docs: generic arguments
/// (`Vec<T>::new`) and call parentheses (`run()`) are dropped, and a name may hold `$`
/// (JavaScript identifiers).
pub fn parse_written_symbol(arg: &str, text: &str) -> ToolResult<SymbolQuery> {
    let text = text.trim();
    check_text(arg, text, 512)?;
    let cleaned = strip_generics(text);
    split_symbol(
        arg,
        text,
        cleaned.trim().trim_end_matches("()"),
        |c| c.is_alphanumeric() || c == '_' || c == '$',
        "accepted: `name`, `Type::name`, `crate::path::name` or `a.b.name`",
    )
}

/// Splits `cleaned` (the argument `text` after any clean-up) at `::` and `.`; errors
/// quote `text` as given.
fn split_symbol(
    arg: &str,
    text: &str,
    cleaned: &str,
    ident: impl Fn(char) -> bool,
    accepted: &str,
) -> ToolResult<SymbolQuery> {
    let normalized = cleaned.replace('.', "::");
    let mut segments: Vec<String> = normalized
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let Some(name) = segments.pop() else {
        return Err(ToolError::invalid(format!(
            "`{arg}` {text:?} holds no name; {accepted}"
        )));
    };
    if !name.chars().all(ident) {
        return Err(ToolError::invalid(format!(
            "`{arg}` {text:?}: `{name}` is not an identifier; {accepted}"
        )));
    }
    Ok(SymbolQuery {
        text: text.to_string(),
        name,
        qualifier: segments,
    })
}

/// Removes generic arguments (`Vec<T>::new` → `Vec::new`), which no qualified name holds.
fn strip_generics(s: &str) -> String {
    let mut depth = 0usize;
    s.chars()
        .filter(|c| match c {
            '<' => {
                depth += 1;
                false
            }
            '>' => {
                depth = depth.saturating_sub(1);
                false
            }
            _ => depth == 0,
        })
        .collect()
}

impl SymbolQuery {
    /// Does `def` answer to the written qualifier? (The name is matched by the look-up.)
    pub fn matches(&self, def: &Sym) -> bool {
        if self.qualifier.is_empty() {
            return true;
        }
        let wanted = format!("{}::{}", self.qualifier.join("::"), self.name);
        if def.qualified_name == wanted || def.qualified_name.ends_with(&format!("::{wanted}")) {
            return true;
        }
        // `crate::a::b` written by the agent against a crate-named qualified name.
        if self.qualifier.first().map(String::as_str) == Some("crate") {
            let rest = format!("{}::{}", self.qualifier[1..].join("::"), self.name);
            let rest = rest.trim_start_matches("::");
            return def.qualified_name.ends_with(&format!("::{rest}"));
        }
        self.qualifier.len() == 1 && def.owner.as_deref() == Some(self.qualifier[0].as_str())
    }

    /// The definitions among `defs` this query names, narrowed to `file_path` when given.
    /// A definition whose qualified name is exactly the query wins over suffix matches.
    pub fn select(&self, defs: &[Sym], file_path: Option<&str>) -> Vec<usize> {
        let hits: Vec<usize> = (0..defs.len())
            .filter(|&i| self.matches(&defs[i]))
            .filter(|&i| file_path.is_none_or(|f| file_matches(&defs[i].file_path, f)))
            .collect();
        let exact: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&i| defs[i].qualified_name == self.text)
            .collect();
        if exact.len() == 1 { exact } else { hits }
    }
}

impl SymbolQuery {
    /// [`select`](Self::select), and when the written path names no definition, the ones
    /// it names as a public path ([`public_path_matches`]): `tokio::runtime::Runtime` is
    /// tokio's `runtime::runtime::Runtime`, re-exported by `tokio::runtime`.
    pub fn select_public<H: Host + ?Sized>(
        &self,
        host: &H,
        defs: &[Sym],
        file_path: Option<&str>,
    ) -> Vec<usize> {
        let hits = self.select(defs, file_path);
        if !hits.is_empty() {
            return hits;
        }
        public_path_matches(host, &self.qualifier, &self.name, defs)
            .into_iter()
            .filter(|&i| file_path.is_none_or(|f| file_matches(&defs[i].file_path, f)))
            .collect()
    }
}

/// The definitions among `defs` (named `name`) that `qualifier::name` names as a public
/// path rather than as their qualified name: crate first (the first segment is the
/// crate, `-` read as `_`), then the rest of the written path in order among their
/// modules (`tokio::runtime::Runtime` → `tokio::runtime::runtime::Runtime`). When that
/// leaves several, those the written module imports or re-exports (`pub use
/// runtime::Runtime` in `tokio::runtime`) win. Empty for a path of one segment.
pub fn public_path_matches<H: Host + ?Sized>(
    host: &H,
    qualifier: &[String],
    name: &str,
    defs: &[Sym],
) -> Vec<usize> {
    let Some((krate, rest)) = qualifier.split_first() else {
        return Vec::new();
    };
    let krate = krate.replace('-', "_");
    let in_crate: Vec<usize> = (0..defs.len())
        .filter(|&i| {
            let segs = segments_of(&defs[i].qualified_name);
            segs.len() >= 2
                && segs[0] == krate
                && segs[segs.len() - 1] == name
                && in_order(rest, &segs[1..segs.len() - 1])
        })
        .collect();
    if in_crate.len() <= 1 {
        return in_crate;
    }
    // The written module's own `use` of the name says which one it means.
    let module = qualifier.join("::").replace('-', "_");
    let Ok(uses) = host.references_of_kinds(name, &["use"]) else {
        return in_crate;
    };
    let targets: Vec<String> = uses
        .iter()
        .filter(|u| u.enclosing_symbol == module)
        .filter_map(|u| u.qualifier.as_deref())
        .map(|q| module_of_use(&module, &krate, q))
        .collect();
    let used: Vec<usize> = in_crate
        .iter()
        .copied()
        .filter(|&i| {
            let q = &defs[i].qualified_name;
            targets.iter().any(|t| q == &format!("{t}::{name}"))
        })
        .collect();
    if used.is_empty() { in_crate } else { used }
}

fn segments_of(path: &str) -> Vec<&str> {
    path.split("::").filter(|s| !s.is_empty()).collect()
}

/// Whether `wanted` appears in `have` in order (not necessarily next to each other).
fn in_order(wanted: &[String], have: &[&str]) -> bool {
    let mut it = have.iter();
    wanted.iter().all(|w| it.any(|h| h == w))
}

/// The module a `use` path written in `module` (of crate `krate`) leads to:
/// `self::a` and `a` → `module::a`, `crate::a` → `krate::a`, `super::a` → the parent's `a`.
fn module_of_use(module: &str, krate: &str, written: &str) -> String {
    let mut base: Vec<&str> = segments_of(module);
    let mut segs = segments_of(written).into_iter().peekable();
    match segs.peek().copied() {
        Some("crate") => {
            base = vec![krate];
            segs.next();
        }
        Some("self") => {
            segs.next();
        }
        _ => {}
    }
    while segs.peek() == Some(&"super") {
        base.pop();
        segs.next();
    }
    base.extend(segs);
    base.join("::")
}

/// A file path argument made relative to the project root (as the index stores paths):
/// an absolute path under `root` loses the root, `./` is dropped.
pub fn relative_path(path: &str, root: Option<&str>) -> String {
    let p = path.trim();
    if let Some(root) = root.map(|r| r.trim_end_matches('/'))
        && !root.is_empty()
        && let Some(rest) = p.strip_prefix(root)
        && rest.starts_with('/')
    {
        return rest.trim_start_matches('/').to_string();
    }
    p.trim_start_matches("./").to_string()
}

/// Does an indexed path match a path argument (relative, absolute, or a suffix)?
pub fn file_matches(indexed: &str, wanted: &str) -> bool {
    let w = wanted.trim_start_matches("./");
    indexed == w || w.ends_with(&format!("/{indexed}")) || indexed.ends_with(&format!("/{w}"))
}

/// Same-named definitions as one list per qualified name: cfg variants and repeated
/// `impl`s of one item are one symbol to an agent (the first is kept, in the place of
/// the first). Modules are left out: a path segment that names a module is not a use of
/// an item. A field and a method of one type may share a name (a Rust builder's
/// `Config::which_captures`): `Type::name` is the path of the associated item, so the
/// method is kept over the field, wherever it comes in the file. A TypeScript interface
/// or type alias may share its name with a value (`interface AjaxError` and
/// `const AjaxError: AjaxErrorCtor`, declaration merging): the value is kept, as what
/// `new`, calls and reads name (ADR 0032).
pub fn distinct_definitions(defs: Vec<Sym>) -> Vec<Sym> {
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<Sym> = Vec::new();
    let type_only = |k: &str| matches!(k, "interface" | "type_alias");
    let value = |k: &str| matches!(k, "const" | "static" | "function" | "class" | "variable");
    for d in defs.into_iter().filter(|d| d.kind != "module") {
        match at.get(&d.qualified_name) {
            Some(&k) => {
                let kept = out[k].kind.as_str();
                if (kept == "field" && d.kind != "field") || (type_only(kept) && value(&d.kind)) {
                    out[k] = d;
                }
            }
            None => {
                at.insert(d.qualified_name.clone(), out.len());
                out.push(d);
            }
        }
    }
    out
}

/// The owners [`build_scope`] looks up around `focus`: those shared by several
/// definitions, whose importing files are read, and those checked for being traits.
/// Two foci with the same lookups get the same scope, so a call graph meeting several
/// definitions of one name builds its scope (and attributes its sites) once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScopeLookups {
    /// Owners shared by several definitions whose `use` sites are read (at most four).
    pub shared: Vec<String>,
    /// Owners not known to be traits from the sites, checked by their definitions (at
    /// most eight).
    pub unknown: Vec<String>,
}

impl ScopeLookups {
    /// The lookups for `focus`; the owners of `focus` come first.
    pub fn around(defs: &[Sym], focus: &[usize], sites: &[Site]) -> ScopeLookups {
        let mut owner_count: BTreeMap<&str, usize> = BTreeMap::new();
        for d in defs {
            if let Some(o) = d.owner.as_deref() {
                *owner_count.entry(o).or_default() += 1;
            }
        }
        // A common name (`new`) has many owners, and only a few are worth a look-up.
        let mut owners: Vec<&str> = focus
            .iter()
            .filter_map(|&c| defs[c].owner.as_deref())
            .collect();
        owners.extend(owner_count.keys().copied());
        let mut seen = HashSet::new();
        owners.retain(|o| seen.insert(*o));
        let implemented = implemented_traits(sites);
        // Owners shared by several definitions (types of one name in different modules):
        // what each file imports under that name tells them apart.
        let shared = owners
            .iter()
            .filter(|o| owner_count.get(*o).copied().unwrap_or(0) > 1)
            .take(4)
            .map(|o| o.to_string())
            .collect();
        let unknown = owners
            .iter()
            .filter(|o| !implemented.contains(**o))
            .take(8)
            .map(|o| o.to_string())
            .collect();
        ScopeLookups { shared, unknown }
    }

    /// The same lookups in a canonical order: two foci whose keys are equal get equal
    /// scopes (a scope's maps and sets do not depend on lookup order).
    pub fn key(&self) -> (Vec<String>, Vec<String>) {
        let mut shared = self.shared.clone();
        shared.sort();
        let mut unknown = self.unknown.clone();
        unknown.sort();
        (shared, unknown)
    }
}

/// What an `implements` use names is a trait by construction (`impl Trait for T`).
fn implemented_traits(sites: &[Site]) -> HashSet<&str> {
    sites
        .iter()
        .filter(|s| s.kind == "implements")
        .filter_map(|s| s.qualifier.as_deref())
        .collect()
}

/// What attribution needs to know beyond the sites: imports of the name (from `sites`,
/// the name's usages) and of same-named owners, and which owners are traits. The owners
/// of `focus` (the definitions asked about) are looked up first ([`ScopeLookups`]).
pub fn build_scope<H: Host + ?Sized>(
    host: &H,
    defs: &[Sym],
    focus: &[usize],
    sites: &[Site],
) -> ToolResult<Scope> {
    scope_from(host, sites, &ScopeLookups::around(defs, focus, sites))
}

/// [`build_scope`] with its lookups already worked out.
pub fn scope_from<H: Host + ?Sized>(
    host: &H,
    sites: &[Site],
    lookups: &ScopeLookups,
) -> ToolResult<Scope> {
    let mut scope = Scope {
        name_imports: resolve::imports_by_file(sites),
        ..Scope::default()
    };
    scope
        .trait_owners
        .extend(implemented_traits(sites).into_iter().map(str::to_string));
    for owner in &lookups.shared {
        let owner_sites = host.references_of_kinds(owner, &["use"])?;
        scope
            .owner_imports
            .insert(owner.to_string(), resolve::imports_by_file(&owner_sites));
    }
    for owner in &lookups.unknown {
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

/// The trait an impl's item implements, from its `implements` use (qualified by the trait).
fn implemented_trait<'a>(sites: &'a [Site], def: &Sym) -> Option<&'a str> {
    sites
        .iter()
        .find(|s| s.kind == "implements" && s.enclosing_symbol == def.qualified_name)
        .and_then(|s| s.qualifier.as_deref())
}

/// snake_case names an accessor for `owner` may have: every word suffix of it
/// (`RuntimeMetrics` → `runtime_metrics`, `metrics`), at most three.
pub fn accessor_names(owner: &str) -> Vec<String> {
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

/// How firmly a usage is tied to the definition asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tie {
    /// The written path, receiver type or an import decides it.
    Exact,
    /// Only one compatible definition has the name.
    NameOnly,
    /// It could be this definition or another same-named one; nothing written decides.
    Open,
}

impl Tie {
    /// Whether this tie answers a site the language's indexer read but could not
    /// resolve (ADR 0021). An open tie is a guess between same-named definitions where
    /// a type checker found no type to decide by either: it is counted, not listed.
    pub fn answers_unresolved(self) -> bool {
        self != Tie::Open
    }
}

/// The usages of one definition among a name's usage sites.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Usages {
    /// (index into the usage sites, how it is tied), in site order.
    pub tied: Vec<(usize, Tie)>,
    /// Member uses on receivers of unknown type in files that never name the owner
    /// (indices into the usage sites): left out as most likely other types' members.
    pub unrelated: Vec<usize>,
}

/// Everything known about one bare name: its definitions, its usage sites (with line
/// text when asked) and the scope attribution needs.
pub struct NameIndex {
    pub name: String,
    pub defs: Vec<Sym>,
    pub sites: Vec<Site>,
    pub scope: Scope,
}

impl NameIndex {
    /// Looks a name up: definitions (distinct, no modules), usage sites, scope built
    /// around the definitions in `focus` (qualified names; may be empty).
    pub fn load<H: Host + ?Sized>(
        host: &H,
        name: &str,
        focus: &[&str],
        with_line_text: bool,
    ) -> ToolResult<NameIndex> {
        let (index, _) = Self::load_selecting(host, name, with_line_text, |defs| {
            (0..defs.len())
                .filter(|&i| focus.contains(&defs[i].qualified_name.as_str()))
                .collect()
        })?;
        Ok(index)
    }

    /// [`load`](Self::load) with the focus picked from the definitions once they are
    /// known (a query's candidates): returns the index and the picked definitions.
    pub fn load_selecting<H: Host + ?Sized>(
        host: &H,
        name: &str,
        with_line_text: bool,
        select: impl FnOnce(&[Sym]) -> Vec<usize>,
    ) -> ToolResult<(NameIndex, Vec<usize>)> {
        let defs = distinct_definitions(host.symbols_by_name(name)?);
        let focus = select(&defs);
        Self::with_definitions(host, name, defs, with_line_text, focus)
    }

    /// What attributing *one* site of a name (a call's target) needs, not its usages:
    /// the definitions and, when there are any, only the `use` and `implements` sites
    /// (the scope: imports, trait owners, implementors). An undefined name (`unwrap`,
    /// `push`) costs one look-up; a defined common one (`new`) is not read whole.
    /// `sites` holds those two kinds only, so this index answers
    /// [`attribute`](Self::attribute), never usage questions.
    pub fn load_if_defined<H: Host + ?Sized>(host: &H, name: &str) -> ToolResult<NameIndex> {
        let defs = distinct_definitions(host.symbols_by_name(name)?);
        if defs.is_empty() {
            return Ok(NameIndex {
                name: name.to_string(),
                defs,
                sites: Vec::new(),
                scope: Scope::default(),
            });
        }
        let sites = host.references_of_kinds(name, SCOPE_SITE_KINDS)?;
        Ok(Self::with_sites(host, name, defs, sites, Vec::new())?.0)
    }

    fn with_definitions<H: Host + ?Sized>(
        host: &H,
        name: &str,
        defs: Vec<Sym>,
        with_line_text: bool,
        focus: Vec<usize>,
    ) -> ToolResult<(NameIndex, Vec<usize>)> {
        let sites = host.references_to_name(name, with_line_text)?;
        Self::with_sites(host, name, defs, sites, focus)
    }

    /// A name's index from its distinct definitions and usage sites already read, with
    /// the scope its `lookups` give.
    pub fn from_parts<H: Host + ?Sized>(
        host: &H,
        name: &str,
        defs: Vec<Sym>,
        sites: Vec<Site>,
        lookups: &ScopeLookups,
    ) -> ToolResult<NameIndex> {
        let scope = scope_from(host, &sites, lookups)?;
        Ok(NameIndex {
            name: name.to_string(),
            defs,
            sites,
            scope,
        })
    }

    fn with_sites<H: Host + ?Sized>(
        host: &H,
        name: &str,
        defs: Vec<Sym>,
        sites: Vec<Site>,
        focus: Vec<usize>,
    ) -> ToolResult<(NameIndex, Vec<usize>)> {
        let scope = build_scope(host, &defs, &focus, &sites)?;
        let index = NameIndex {
            name: name.to_string(),
            defs,
            sites,
            scope,
        };
        Ok((index, focus))
    }

    pub fn position(&self, qualified_name: &str) -> Option<usize> {
        self.defs
            .iter()
            .position(|d| d.qualified_name == qualified_name)
    }

    pub fn attribute(&self, site: &Site) -> Attribution {
        resolve::attribute(site, &self.defs, &self.scope)
    }

    /// The definitions that answer as one for references: a trait's item and the impl
    /// items implementing it (`impl Trait for T { fn f }`, known by their `implements`
    /// use). Asked about the trait's item, rust-analyzer lists the uses of all of them;
    /// asked about an impl's associated type or constant, too, but not about an impl's
    /// method (its callers through the trait are not its own). Anything else is a
    /// family of one.
    pub fn family(&self, c: usize) -> Vec<usize> {
        let def = &self.defs[c];
        let is_trait = |o: &str| self.scope.trait_owners.contains(o);
        let trait_item = match def.owner.as_deref() {
            Some(o) if is_trait(o) => Some(c),
            _ if matches!(def.kind.as_str(), "method" | "function") => None,
            _ => implemented_trait(&self.sites, def)
                .filter(|t| is_trait(t))
                .and_then(|t| self.defs.iter().position(|d| d.owner.as_deref() == Some(t))),
        };
        let Some(t) = trait_item else {
            return vec![c];
        };
        let trait_owner = self.defs[t].owner.as_deref();
        let mut family = vec![t];
        for s in &self.sites {
            if s.kind == "implements"
                && s.qualifier.as_deref() == trait_owner
                && let Some(i) = self.position(&s.enclosing_symbol)
                && !family.contains(&i)
            {
                family.push(i);
            }
        }
        if !family.contains(&c) {
            family.push(c);
        }
        family
    }

    /// Asked about an impl's associated type or constant, rust-analyzer lists the
    /// trait's declaration of it among the references: that declaration as a site
    /// (kind `declaration`), or `None` when `c` is not such an item.
    pub fn trait_declaration<H: Host + ?Sized>(
        &self,
        host: &H,
        c: usize,
        with_line_text: bool,
    ) -> ToolResult<Option<Site>> {
        let t = self.family(c)[0];
        if t == c {
            return Ok(None);
        }
        let d = &self.defs[t];
        let line_text = if with_line_text {
            host.read_lines(&d.file_path, d.start_line, d.start_line)?
                .into_iter()
                .next()
        } else {
            None
        };
        let column = line_text
            .as_deref()
            .and_then(|l| l.find(d.name.as_str()))
            .map_or(1, |i| i as u32 + 1);
        Ok(Some(Site {
            file_path: d.file_path.clone(),
            line: d.start_line,
            column,
            kind: "declaration".into(),
            qualifier: d.owner.clone(),
            enclosing_symbol: d.qualified_name.clone(),
            line_text,
        }))
    }

    /// Which of `usage_sites` (this name's sites, or edges seen as sites) are uses of
    /// definition `c`, and how firmly.
    pub fn usages_of<H: Host + ?Sized>(
        &self,
        host: &H,
        c: usize,
        usage_sites: &[Site],
    ) -> ToolResult<Usages> {
        let owner_files = owner_files(host, &self.defs[c])?;
        Ok(self.usages_with(c, usage_sites, owner_files.as_ref()))
    }

    /// [`usages_of`](Self::usages_of) with the owner's files already looked up.
    pub fn usages_with(
        &self,
        c: usize,
        usage_sites: &[Site],
        owner_files: Option<&HashSet<String>>,
    ) -> Usages {
        self.usages_kept(c, usage_sites, owner_files, |_, _| true)
    }

    /// Whether `site` may be a use of one of `family`: `false` only when
    /// [`attribute`](Self::attribute) provably ties it elsewhere
    /// ([`resolve::may_name`]), so a common name's other owners' sites are not
    /// attributed one by one.
    pub fn may_name(&self, site: &Site, family: &[usize]) -> bool {
        resolve::may_name(site, &self.defs, &self.scope, family)
    }

    /// [`usages_of`](Self::usages_of) over only the sites `keep` admits (indices still
    /// into `usage_sites`). A site's tie depends on that site alone, so a caller that
    /// needs a few sites' (the ones precise data leaves to the heuristic) does not
    /// attribute a common name's thousands.
    pub fn usages_where<H: Host + ?Sized>(
        &self,
        host: &H,
        c: usize,
        usage_sites: &[Site],
        keep: impl Fn(&Site) -> bool,
    ) -> ToolResult<Usages> {
        let owner_files = owner_files(host, &self.defs[c])?;
        Ok(self.usages_kept(c, usage_sites, owner_files.as_ref(), |_, s| keep(s)))
    }

    /// The one walk behind the `usages_*` methods: each site `keep` admits (by its
    /// index into `usage_sites` and itself) that [`may_name`](Self::may_name) `c`'s
    /// family is attributed and classified; the rest are passed over.
    pub fn usages_kept(
        &self,
        c: usize,
        usage_sites: &[Site],
        owner_files: Option<&HashSet<String>>,
        keep: impl Fn(usize, &Site) -> bool,
    ) -> Usages {
        let family = self.family(c);
        let mut out = Usages::default();
        for (k, site) in usage_sites.iter().enumerate() {
            if keep(k, site) && self.may_name(site, &family) {
                let attribution = self.attribute(site);
                self.classify(&family, k, site, &attribution, owner_files, &mut out);
            }
        }
        out
    }

    /// Files site `k` among the usages of the definitions `family` when its attribution
    /// ties it to one of them: tied, or unrelated (a blind member use in a file that
    /// never names the owner).
    fn classify(
        &self,
        family: &[usize],
        k: usize,
        site: &Site,
        attribution: &Attribution,
        owner_files: Option<&HashSet<String>>,
        out: &mut Usages,
    ) {
        let tie = match attribution {
            Attribution::Resolved(i, strength) if family.contains(i) => {
                if *strength == Strength::NameOnly {
                    Tie::NameOnly
                } else {
                    Tie::Exact
                }
            }
            Attribution::Open(set) if set.iter().any(|i| family.contains(i)) => Tie::Open,
            _ => return,
        };
        let blind_member = tie != Tie::Exact
            && site.qualifier.is_none()
            && matches!(site.kind.as_str(), "method_call" | "field");
        if blind_member && owner_files.is_some_and(|f| !f.contains(&site.file_path)) {
            out.unrelated.push(k);
            return;
        }
        out.tied.push((k, tie));
    }
}

/// Longest line text a site carries, in characters (the host clips the same way).
const MAX_LINE_TEXT: usize = 200;

/// The site kinds a name's scope is built from (see [`build_scope`]): its imports and
/// the `impl Trait for T` uses that name traits and tie implementors to them.
pub(crate) const SCOPE_SITE_KINDS: &[&str] = &["use", "implements"];

/// The text of each `(file, line)` asked for, read from the files once per cluster
/// of nearby lines. Loading a common name's sites without their text and reading only
/// the lines an answer shows keeps a query from reading every file the name appears
/// in. A file that cannot be read leaves its lines out.
pub fn line_texts<'a, H: Host + ?Sized>(
    host: &H,
    places: impl IntoIterator<Item = (&'a str, u32)>,
) -> HashMap<(String, u32), String> {
    /// Lines read in one host call at most; lines further apart take another call.
    const SPAN: u32 = 256;
    let mut places: Vec<(&str, u32)> = places.into_iter().filter(|p| p.1 > 0).collect();
    places.sort_unstable();
    places.dedup();
    let mut out = HashMap::new();
    let mut i = 0;
    while i < places.len() {
        let (file, start) = places[i];
        let mut j = i;
        while j + 1 < places.len() && places[j + 1].0 == file && places[j + 1].1 < start + SPAN {
            j += 1;
        }
        if let Ok(lines) = host.read_lines(file, start, places[j].1) {
            for &(_, line) in &places[i..=j] {
                if let Some(l) = lines.get((line - start) as usize) {
                    out.insert((file.to_string(), line), clip_line(l));
                }
            }
        }
        i = j + 1;
    }
    out
}

fn clip_line(line: &str) -> String {
    let t = line.trim();
    match t.char_indices().nth(MAX_LINE_TEXT) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t.to_string(),
    }
}

/// For a member (method or field) of a type or trait: the files that name its owner,
/// directly or through an accessor named after it, plus its own file. A member used on
/// a receiver of unknown type in any other file is most likely another type's member
/// of the same name. `None` for anything that is not a member.
pub fn owner_files<H: Host + ?Sized>(host: &H, def: &Sym) -> ToolResult<Option<HashSet<String>>> {
    let Some(owner) = def.owner.as_deref() else {
        return Ok(None);
    };
    if !matches!(def.kind.as_str(), "method" | "field") {
        return Ok(None);
    }
    let names: Vec<String> = std::iter::once(owner.to_string())
        .chain(accessor_names(owner))
        .collect();
    let mut files: HashSet<String> = host.files_naming(&names)?.into_iter().collect();
    files.insert(def.file_path.clone());
    Ok(Some(files))
}

/// An edge seen as the usage site of its target, for attribution: the site kind and the
/// written path are the edge's, the enclosing symbol is its source.
pub fn edge_site(e: &Edge) -> Site {
    Site {
        file_path: e.file_path.clone(),
        line: e.line,
        column: e.column,
        kind: e.site_kind.clone(),
        qualifier: e.to_qualifier.clone(),
        enclosing_symbol: e.from_symbol.clone(),
        line_text: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{self, MemHost, def};

    #[test]
    fn a_method_is_kept_over_a_same_named_field_in_the_fields_place() {
        let mut field = def("k::Config::which", "field", Some("Config"), "src/c.rs");
        field.start_line = 3;
        let mut method = def("k::Config::which", "method", Some("Config"), "src/c.rs");
        method.start_line = 40;
        let other = def("k::Other::which", "field", Some("Other"), "src/o.rs");
        let kept = distinct_definitions(vec![field.clone(), other.clone(), method.clone()]);
        assert_eq!(kept, vec![method, other.clone()]);
        // Two fields of one name (cfg variants) stay one: the first.
        let kept = distinct_definitions(vec![field.clone(), field.clone(), other.clone()]);
        assert_eq!(kept, vec![field, other]);
    }

    #[test]
    fn a_typescript_value_is_kept_over_its_same_named_interface() {
        // `export interface AjaxError` and `export const AjaxError: AjaxErrorCtor`, in
        // either order: the value is what `new AjaxError(..)` and reads name.
        let iface = def("m.AjaxError", "interface", None, "src/ajax/errors.ts");
        let value = def("m.AjaxError", "const", None, "src/ajax/errors.ts");
        let alias = def("m.Other", "type_alias", None, "src/o.ts");
        let kept = distinct_definitions(vec![iface.clone(), value.clone(), alias.clone()]);
        assert_eq!(kept, vec![value.clone(), alias.clone()]);
        let kept = distinct_definitions(vec![value.clone(), iface.clone()]);
        assert_eq!(kept, vec![value]);
        // Two type-only definitions of one name stay the first.
        let class_iface = def("m.Other", "interface", None, "src/o.ts");
        assert_eq!(
            distinct_definitions(vec![alias.clone(), class_iface]),
            vec![alias]
        );
    }

    #[test]
    fn symbol_arguments_split_into_name_and_path() {
        let q = parse_symbol("symbol", " Circle.new ").unwrap();
        assert_eq!(q.name, "new");
        assert_eq!(q.qualifier, ["Circle"]);
        assert_eq!(q.text, "Circle.new");
        assert!(parse_symbol("symbol", "::").is_err());
        let e = parse_symbol("symbol", "a::b c").unwrap_err().message;
        assert!(e.contains("not an identifier"), "{e}");
        assert!(parse_symbol("symbol", "x\u{202e}").is_err());
    }

    #[test]
    fn written_symbols_drop_generics_and_call_parentheses() {
        let q = parse_written_symbol("symbol", "Vec<T>::new()").unwrap();
        assert_eq!(
            (q.name.as_str(), q.qualifier.as_slice()),
            ("new", ["Vec".to_string()].as_slice())
        );
        assert_eq!(q.text, "Vec<T>::new()");
        assert_eq!(
            parse_written_symbol("symbol", "$.ajax").unwrap().qualifier,
            ["$"]
        );
        assert_eq!(
            parse_written_symbol("symbol", "jq.$el").unwrap().name,
            "$el"
        );
        // The strict form keeps refusing what only code copies hold.
        assert!(parse_symbol("symbol", "run()").is_err());
        assert!(parse_symbol("symbol", "jq.$el").is_err());
        let e = parse_written_symbol("symbol", "a-b").unwrap_err().message;
        assert!(e.contains("\"a-b\"") && e.contains("`a.b.name`"), "{e}");
        let e = parse_written_symbol("symbol", "<T>").unwrap_err().message;
        assert!(e.contains("holds no name"), "{e}");
    }

    #[test]
    fn queries_select_by_owner_path_file_and_exact_name() {
        let [circle, square] = crate::testing::circle_and_square_new();
        let defs = [
            circle,
            square,
            def("k::other::new", "function", None, "src/other.rs"),
        ];
        let q = |t: &str| parse_symbol("symbol", t).unwrap();
        assert_eq!(q("new").select(&defs, None), [0, 1, 2]);
        assert_eq!(q("Circle::new").select(&defs, None), [0]);
        assert_eq!(q("crate::other::new").select(&defs, None), [2]);
        assert_eq!(q("new").select(&defs, Some("./src/other.rs")), [2]);
        assert_eq!(
            q("new").select(&defs, Some("/abs/root/src/shapes.rs")),
            [0, 1]
        );
        assert!(q("Triangle::new").select(&defs, None).is_empty());
    }

    #[test]
    fn paths_are_made_relative_to_the_root() {
        assert_eq!(relative_path("/r/p/src/a.rs", Some("/r/p")), "src/a.rs");
        assert_eq!(relative_path("/r/p/src/a.rs", Some("/r/p/")), "src/a.rs");
        assert_eq!(relative_path("./src/a.rs", Some("/r/p")), "src/a.rs");
        assert_eq!(relative_path("/r/pp/a.rs", Some("/r/p")), "/r/pp/a.rs");
    }

    #[test]
    fn file_arguments_match_whole_path_components() {
        assert!(file_matches("src/a.rs", "/home/x/proj/src/a.rs"));
        assert!(file_matches("src/a.rs", "a.rs"));
        assert!(file_matches("src/a.rs", "./src/a.rs"));
        assert!(!file_matches("src/ba.rs", "a.rs"));
        assert!(!file_matches("src/a.rs", "src/b.rs"));
    }

    #[test]
    fn accessor_names_are_word_suffixes() {
        assert_eq!(
            accessor_names("RuntimeMetrics"),
            ["metrics", "runtime_metrics"]
        );
    }

    fn site(
        name: &str,
        file: &str,
        kind: &str,
        q: Option<&str>,
        enclosing: &str,
    ) -> (String, Site) {
        testing::site(name, kind, q, enclosing, file, 1)
    }

    #[test]
    fn a_crate_qualified_public_path_narrows_to_that_crate_and_its_reexport() {
        let host = MemHost {
            symbols: vec![
                def(
                    "bollard_stubs::models::Runtime",
                    "struct",
                    None,
                    "b/src/models.rs",
                ),
                def(
                    "tokio::runtime::runtime::Runtime",
                    "struct",
                    None,
                    "t/src/runtime/runtime.rs",
                ),
                def(
                    "tokio::runtime::scheduler::Runtime",
                    "enum",
                    None,
                    "t/src/runtime/scheduler.rs",
                ),
                def(
                    "tokio_util::runtime::Runtime",
                    "struct",
                    None,
                    "u/src/runtime.rs",
                ),
            ],
            sites: vec![site(
                "Runtime",
                "t/src/runtime/mod.rs",
                "use",
                Some("self::runtime"),
                "tokio::runtime",
            )],
            sites_as_set: true,
            ..MemHost::default()
        };
        let q = |t: &str| parse_symbol("symbol", t).unwrap();
        let defs = host.symbols.clone();
        // No definition is written that way: crate first, then the re-export decides.
        assert!(q("tokio::runtime::Runtime").select(&defs, None).is_empty());
        assert_eq!(
            q("tokio::runtime::Runtime").select_public(&host, &defs, None),
            [1]
        );
        // The crate alone narrows; an exact path still wins; an unknown crate finds none.
        assert_eq!(
            q("tokio-util::Runtime").select_public(&host, &defs, None),
            [3]
        );
        assert_eq!(
            q("tokio::runtime::scheduler::Runtime").select_public(&host, &defs, None),
            [2]
        );
        assert!(
            q("tonic::runtime::Runtime")
                .select_public(&host, &defs, None)
                .is_empty()
        );
        assert_eq!(module_of_use("a::b::c", "a", "super::super::x"), "a::x");
        assert_eq!(module_of_use("a::b", "a", "crate::y::z"), "a::y::z");
    }

    #[test]
    fn usages_count_implementations_and_leave_out_blind_members_elsewhere() {
        let host = MemHost {
            symbols: vec![
                def("k::Shape", "trait", None, "src/s.rs"),
                def("k::Shape::area", "method", Some("Shape"), "src/s.rs"),
                def("k::Circle::area", "method", Some("Circle"), "src/s.rs"),
            ],
            sites: vec![
                site(
                    "area",
                    "src/s.rs",
                    "implements",
                    Some("Shape"),
                    "k::Circle::area",
                ),
                site("area", "src/lib.rs", "method_call", None, "k::total"),
                site("area", "src/far.rs", "method_call", None, "k::far::f"),
                site("area", "src/lib.rs", "call", Some("Circle"), "k::g"),
                site("Shape", "src/lib.rs", "use", Some("crate"), "k"),
            ],
            sites_as_set: true,
            ..MemHost::default()
        };
        let n = NameIndex::load(&host, "area", &["k::Shape::area"], false).unwrap();
        assert!(n.scope.trait_owners.contains("Shape"));
        let trait_item = n.position("k::Shape::area").unwrap();
        let u = n.usages_of(&host, trait_item, &n.sites).unwrap();
        // The implementation's site, the dyn call in a file naming `Shape`, and the
        // `Circle::area` call (an implementation's use); `far.rs` never names Shape.
        assert_eq!(u.tied, [(0, Tie::Exact), (1, Tie::Open), (3, Tie::Exact)]);
        assert_eq!(u.unrelated, [2]);
        // Asked about some sites only, the same ties and indices for those, none else.
        let outside_lib = |s: &Site| s.file_path != "src/lib.rs";
        let some = n
            .usages_where(&host, trait_item, &n.sites, outside_lib)
            .unwrap();
        assert_eq!(some.tied, [(0, Tie::Exact)]);
        assert_eq!(some.unrelated, [2]);
        let all = n
            .usages_where(&host, trait_item, &n.sites, |_| true)
            .unwrap();
        assert_eq!(all, u);
    }

    #[test]
    fn an_impls_associated_type_answers_with_its_trait_item_and_siblings() {
        let host = MemHost {
            symbols: vec![
                def("k::Resolve::Out", "type_alias", Some("Resolve"), "src/r.rs"),
                def("k::A::Out", "type_alias", Some("A"), "src/r.rs"),
                def("k::B::Out", "type_alias", Some("B"), "src/r.rs"),
                def("k::A::run", "method", Some("A"), "src/r.rs"),
            ],
            sites: vec![
                site(
                    "Out",
                    "src/r.rs",
                    "implements",
                    Some("Resolve"),
                    "k::A::Out",
                ),
                site(
                    "Out",
                    "src/r.rs",
                    "implements",
                    Some("Resolve"),
                    "k::B::Out",
                ),
                site("Out", "src/r.rs", "type", Some("Self"), "k::B::run"),
            ],
            sites_as_set: true,
            ..MemHost::default()
        };
        // No host call is needed to know `Resolve` is a trait: `impl Resolve for A` says so.
        let n = NameIndex::load(&host, "Out", &["k::A::Out"], false).unwrap();
        let a = n.position("k::A::Out").unwrap();
        let family: Vec<&str> = n
            .family(a)
            .iter()
            .map(|&i| n.defs[i].qualified_name.as_str())
            .collect();
        assert_eq!(family, ["k::Resolve::Out", "k::A::Out", "k::B::Out"]);
        let declaration = n.trait_declaration(&host, a, false).unwrap().unwrap();
        assert_eq!(
            (
                declaration.kind.as_str(),
                declaration.enclosing_symbol.as_str()
            ),
            ("declaration", "k::Resolve::Out")
        );
        // Asked about the trait's own item, there is no extra declaration site.
        let t = n.position("k::Resolve::Out").unwrap();
        assert!(n.trait_declaration(&host, t, false).unwrap().is_none());
    }

    #[test]
    fn edges_read_as_sites_of_their_target() {
        let e = Edge {
            kind: "calls".into(),
            from_symbol: "k::f".into(),
            to_name: "g".into(),
            to_qualifier: Some("util".into()),
            site_kind: "call".into(),
            file_path: "src/lib.rs".into(),
            line: 3,
            column: 5,
        };
        let s = edge_site(&e);
        assert_eq!(
            (
                s.enclosing_symbol.as_str(),
                s.kind.as_str(),
                s.qualifier.as_deref(),
                s.line
            ),
            ("k::f", "call", Some("util"), 3)
        );
    }
}
