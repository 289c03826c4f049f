//! Which definition a usage site refers to, from what is written around it.
//!
//! The index stores every usage by name, with the path written before it (or, for a
//! method call, the receiver's type when the extractor could see it) and the function
//! or type it sits in. Given all same-named definitions, a site is tied to one of them
//! by, in order:
//!
//! 1. **kind**: a type position names a type, `x.f()` a method, `f!()` a macro...;
//! 2. **the written path or receiver type**: `Circle::new`, `self.trie.insert(..)`
//!    with `trie: RangeTrie`, `Self::f` inside `impl Owner`;
//! 3. **scope**: a bare name defined in the site's own file, or imported there by a
//!    `use` whose path leads to one definition;
//! 4. **uniqueness**: one compatible definition left, tied by name only.
//!
//! A site whose written path or receiver names something none of the definitions
//! belong to (`Vec::new` when asking for `Circle::new`) is excluded.

use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::host::{Site, Sym};

pub mod script;

/// How a site was tied to a definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strength {
    /// The written path or receiver type names the definition's owner or module.
    Path,
    /// The definition is in scope in the site's file (defined there, or imported).
    Scope,
    /// Only one definition of that kind has the name.
    NameOnly,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attribution {
    Resolved(usize, Strength),
    /// Could be any of these definitions (indices); nothing written tells them apart.
    Open(Vec<usize>),
    /// Refers to something none of the definitions is (another type's method, a local).
    Excluded,
}

/// Facts about the neighbourhood that attribution needs beyond the sites themselves.
#[derive(Default)]
pub struct Scope {
    /// For each file: the paths of `use` items that import the queried name
    /// (`crate::util::search` for `use crate::util::search::Anchored`).
    pub name_imports: HashMap<String, Vec<String>>,
    /// For each owner name and file: the paths that import that owner.
    pub owner_imports: HashMap<String, HashMap<String, Vec<String>>>,
    /// Owner names that are traits (a method call on any receiver may reach them).
    pub trait_owners: HashSet<String>,
    /// Per-definition facts every site asks about, built on first use. A scope is only
    /// ever used with the one definition list it was built for.
    pub memo: DefMemo,
}

/// What attribution looks up for every site of a name, computed once per definition
/// list: a common name (`new`) has thousands of sites and hundreds of definitions.
#[derive(Default)]
pub struct DefMemo {
    /// Definition indices by owner name and by the segment before the name.
    by_owner: OnceCell<HashMap<String, Vec<usize>>>,
    /// Definition indices a site kind (with or without a qualifier) can name; a
    /// handful of kinds, so a list.
    compatible: RefCell<Vec<CompatibleDefs>>,
    /// Definitions whose owner is a trait, in definition order.
    trait_items: OnceCell<Vec<usize>>,
    /// Each definition's parent path (`[k, m, Type]` for `k::m::Type::f`).
    homes: OnceCell<Vec<Vec<String>>>,
    /// An imports map (by address) resolved for a crate: see [`Scope::resolved_imports`].
    resolved: RefCell<HashMap<(usize, String), ResolvedImports>>,
    /// Verdicts on bare sites (no written qualifier) by file, then (site kind, crate):
    /// nothing else about a bare site decides its verdict, and a common name's
    /// thousands of `.fmt(f)` sites sit in a few hundred files.
    bare: RefCell<HashMap<String, Vec<BareVerdict>>>,
}

/// (site kind, crate, verdict) of a bare site in one file: see `DefMemo::bare`.
type BareVerdict = (String, String, Attribution);

/// (site kind, qualified?, the definitions such a site can name).
type CompatibleDefs = (String, bool, Rc<[usize]>);

/// An imports map resolved for one crate: each importing file's module, and the
/// absolute modules its `use` paths lead to.
type ResolvedImports = Rc<[(Vec<String>, Vec<Vec<String>>)]>;

impl Scope {
    fn defs_owned_by(&self, defs: &[Sym]) -> &HashMap<String, Vec<usize>> {
        self.memo.by_owner.get_or_init(|| {
            let mut map: HashMap<String, Vec<usize>> = HashMap::new();
            for (i, d) in defs.iter().enumerate() {
                let parent = parent_segment(&d.qualified_name);
                for o in d.owner.as_deref().into_iter().chain(parent) {
                    let list = map.entry(o.to_string()).or_default();
                    if list.last() != Some(&i) {
                        list.push(i);
                    }
                }
            }
            map
        })
    }

    fn compatible_defs(&self, defs: &[Sym], site_kind: &str, qualified: bool) -> Rc<[usize]> {
        if let Some((_, _, hit)) = self
            .memo
            .compatible
            .borrow()
            .iter()
            .find(|(k, q, _)| k == site_kind && *q == qualified)
        {
            return hit.clone();
        }
        let list: Rc<[usize]> = (0..defs.len())
            .filter(|&i| compatible(site_kind, qualified, &defs[i].kind))
            .collect();
        self.memo
            .compatible
            .borrow_mut()
            .push((site_kind.to_string(), qualified, list.clone()));
        list
    }

    fn homes(&self, defs: &[Sym]) -> &[Vec<String>] {
        self.memo.homes.get_or_init(|| {
            defs.iter()
                .map(|d| parent_path(d).iter().map(|s| s.to_string()).collect())
                .collect()
        })
    }

    /// `imports` (this scope's `name_imports` or one of its `owner_imports` maps, which
    /// live as long as the scope) with every file's module and `use` targets worked out
    /// once: attribution walks them for many sites.
    fn resolved_imports(
        &self,
        imports: &HashMap<String, Vec<String>>,
        crate_name: &str,
    ) -> ResolvedImports {
        let key = (imports as *const _ as usize, crate_name.to_string());
        if let Some(hit) = self.memo.resolved.borrow().get(&key) {
            return hit.clone();
        }
        let resolved: ResolvedImports = imports
            .iter()
            .map(|(file, paths)| {
                let here = module_of_file(crate_name, file);
                let targets = paths
                    .iter()
                    .map(|p| absolute_from(p, &here, crate_name))
                    .collect();
                (here, targets)
            })
            .collect();
        self.memo
            .resolved
            .borrow_mut()
            .insert(key, resolved.clone());
        resolved
    }

    fn trait_items(&self, defs: &[Sym]) -> &[usize] {
        self.memo.trait_items.get_or_init(|| {
            (0..defs.len())
                .filter(|&i| {
                    defs[i]
                        .owner
                        .as_deref()
                        .is_some_and(|o| self.trait_owners.contains(o))
                })
                .collect()
        })
    }
}

const TYPE_KINDS: &[&str] = &[
    "struct",
    "enum",
    "trait",
    "type_alias",
    "union",
    "class",
    "interface",
];

/// Can a site of `site_kind` (with or without a written qualifier) name a definition
/// of `def_kind`?
pub fn compatible(site_kind: &str, qualified: bool, def_kind: &str) -> bool {
    match site_kind {
        "type" => TYPE_KINDS.contains(&def_kind),
        "macro" => def_kind == "macro",
        "method_call" => def_kind == "method" || def_kind == "field",
        "field" => def_kind == "field",
        // a class is called to construct it (`Foo()`, `new Foo()`); a value may hold
        // what is called (`const AjaxError: AjaxErrorCtor = ..; new AjaxError(..)`)
        "call" if qualified => matches!(
            def_kind,
            "function"
                | "method"
                | "struct"
                | "variant"
                | "field"
                | "class"
                | "const"
                | "static"
                | "variable"
        ),
        "call" => matches!(
            def_kind,
            "function" | "struct" | "variant" | "field" | "class" | "const" | "static" | "variable"
        ),
        "path" => def_kind != "macro" && def_kind != "field",
        // `impl Trait for T { fn f() }`: `f` implements the trait's item
        "implements" => matches!(def_kind, "method" | "const" | "type_alias"),
        _ => true, // use, macro_token: any
    }
}

fn segments(path: &str) -> Vec<&str> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// The qualified path of the module or type that holds a definition.
fn parent_path(d: &Sym) -> Vec<&str> {
    let mut s = segments(&d.qualified_name);
    s.pop();
    s
}

/// The segment before the last in a qualified name (`Type` in `crate::m::Type::f`).
fn parent_segment(qualified: &str) -> Option<&str> {
    // Called for every definition at every site of a common name: no allocation.
    let mut from_end = qualified
        .rsplit("::")
        .map(str::trim)
        .filter(|s| !s.is_empty());
    from_end.next()?;
    from_end.next()
}

/// Does a written path (`crate::nfa::thompson`) lead to `target` (a definition's
/// parent path `regex_automata::nfa::thompson::compiler`)? Its named segments must
/// appear in `target` in order (re-exports skip levels), and it must name something.
fn path_leads_to(written: &str, target: &[&str]) -> bool {
    segments_lead_to(&named_segments(written), target)
}

/// A written path's segments that name something (not `crate`, `self`, `super`, `Self`).
fn named_segments(written: &str) -> Vec<&str> {
    segments(written)
        .into_iter()
        .filter(|s| !matches!(*s, "crate" | "self" | "super" | "Self"))
        .collect()
}

/// [`path_leads_to`] with the written path's named segments already split.
fn segments_lead_to<T: AsRef<str>>(named: &[&str], target: &[T]) -> bool {
    if named.is_empty() {
        return false;
    }
    let mut it = target.iter();
    named.iter().all(|n| it.any(|t| t.as_ref() == *n))
}

/// The last non-empty segment of a path, as [`segments`] would end; no allocation.
fn last_segment(path: &str) -> Option<&str> {
    path.rsplit("::").map(str::trim).find(|s| !s.is_empty())
}

/// For a site inside `crate::m::Owner::method` (or `crate::m::Owner`), the owner
/// names `Self` may stand for.
fn self_owners(enclosing: &str) -> Vec<&str> {
    let s = segments(enclosing);
    let mut out = Vec::new();
    if let Some(last) = s.last() {
        out.push(*last);
    }
    if s.len() >= 2 {
        out.push(s[s.len() - 2]);
    }
    out
}

/// The module path of a file, mirroring how the index names modules: `src/lib.rs` is
/// the crate root, `src/a/mod.rs` and `src/a.rs` are `a`, `tests/x.rs` is `tests::x`.
pub fn module_of_file(crate_name: &str, file: &str) -> Vec<String> {
    let mut parts: Vec<&str> = file.split('/').collect();
    if parts.first() == Some(&"src") {
        parts.remove(0);
    }
    let last = parts.pop().unwrap_or("");
    let stem = last.strip_suffix(".rs").unwrap_or(last);
    let is_root = parts.is_empty() && matches!(stem, "lib" | "main");
    let mut out = vec![crate_name.to_string()];
    out.extend(parts.iter().map(|p| p.replace('-', "_")));
    if stem != "mod" && !is_root {
        out.push(stem.replace('-', "_"));
    }
    out
}

/// A written path made absolute from the module of the file it is written in.
fn absolute_module(written: &str, file: &str, crate_name: &str) -> Vec<String> {
    absolute_from(written, &module_of_file(crate_name, file), crate_name)
}

/// [`absolute_module`] for a file whose module (`here`) is known.
fn absolute_from(written: &str, here: &[String], crate_name: &str) -> Vec<String> {
    let segs = segments(written);
    let here = here.to_vec();
    let mut out: Vec<String>;
    let mut rest = segs.as_slice();
    match segs.first().copied() {
        Some("crate") => {
            out = vec![crate_name.to_string()];
            rest = &segs[1..];
        }
        Some("self") => {
            out = here;
            rest = &segs[1..];
        }
        Some("super") => {
            out = here;
            while rest.first() == Some(&"super") {
                out.pop();
                rest = &rest[1..];
            }
        }
        Some(first) if first == crate_name => {
            out = vec![crate_name.to_string()];
            rest = &segs[1..];
        }
        _ => out = here,
    }
    out.extend(rest.iter().map(|s| s.to_string()));
    out
}

/// Where a written path leads: the absolute module, plus (for a path that starts with an
/// imported module's name, `thompson::State`) the written segments to match as a
/// suffix of a module path.
fn import_target(written: &str, file: &str, crate_name: &str) -> (Vec<String>, Vec<String>) {
    let segs = segments(written);
    let module = absolute_module(written, file, crate_name);
    let relative_to_import = !matches!(segs.first().copied(), Some("crate" | "self" | "super"))
        && segs.first().copied() != Some(crate_name);
    let suffix = if relative_to_import {
        segs.iter().map(|s| s.to_string()).collect()
    } else {
        Vec::new()
    };
    (module, suffix)
}

/// Candidates (indices into `defs`, among `compat`) that the module path `module`
/// holds, directly or through a `use` re-export of the name in that module's file
/// (followed once more for re-exports of re-exports).
#[allow(clippy::too_many_arguments)]
fn through_module<'h>(
    module: &[String],
    suffix: &[String],
    imports: &HashMap<String, Vec<String>>,
    scope: &Scope,
    crate_name: &str,
    home: &dyn Fn(usize) -> &'h [String],
    compat: &[usize],
    depth: u8,
) -> Vec<usize> {
    let direct: Vec<usize> = compat
        .iter()
        .copied()
        .filter(|&i| home(i) == module)
        .collect();
    if !direct.is_empty() || depth == 0 {
        return direct;
    }
    let mut found = Vec::new();
    for (file_module, targets) in scope.resolved_imports(imports, crate_name).iter() {
        // A path that starts with an imported module name (`thompson::State`) names
        // whichever module ends that way.
        let same = file_module == module || (!suffix.is_empty() && file_module.ends_with(suffix));
        if !same {
            continue;
        }
        for target in targets {
            for i in through_module(
                target,
                &[],
                imports,
                scope,
                crate_name,
                home,
                compat,
                depth - 1,
            ) {
                if !found.contains(&i) {
                    found.push(i);
                }
            }
        }
    }
    found
}

/// Ties a usage site to one of the same-named definitions `defs`, by the module doc's rules.
pub fn attribute(site: &Site, defs: &[Sym], scope: &Scope) -> Attribution {
    let qualifier = site.qualifier.as_deref().filter(|q| !q.is_empty());
    if qualifier.is_none() {
        return attribute_bare(site, defs, scope);
    }
    attribute_once(site, defs, scope, qualifier)
}

/// [`attribute`] for a site with no written qualifier: its verdict depends only on its
/// file, its kind and its crate (see [`AtSite::by_scope`]), so it is worked out once
/// per (file, kind, crate) and kept in the scope's memo.
fn attribute_bare(site: &Site, defs: &[Sym], scope: &Scope) -> Attribution {
    let crate_name = crate_of(site);
    if let Some(kept) = scope.memo.bare.borrow().get(&site.file_path)
        && let Some((_, _, a)) = kept
            .iter()
            .find(|(k, c, _)| *k == site.kind && c == crate_name)
    {
        return a.clone();
    }
    let a = attribute_once(site, defs, scope, None);
    scope
        .memo
        .bare
        .borrow_mut()
        .entry(site.file_path.clone())
        .or_default()
        .push((site.kind.clone(), crate_name.to_string(), a.clone()));
    a
}

/// The crate a site is in: the first segment of its enclosing symbol, as `segments`
/// would split it; no allocation.
fn crate_of(site: &Site) -> &str {
    site.enclosing_symbol
        .split("::")
        .map(str::trim)
        .find(|s| !s.is_empty())
        .unwrap_or("crate")
}

/// [`attribute`], worked out.
fn attribute_once(
    site: &Site,
    defs: &[Sym],
    scope: &Scope,
    qualifier: Option<&str>,
) -> Attribution {
    let compat = compatible_candidates(site, defs, scope, qualifier.is_some());
    if compat.is_empty() {
        return Attribution::Excluded;
    }
    let at = AtSite::new(site, defs, scope);
    if let Some(q) = qualifier
        && let Some(verdict) = at.by_written_path(q, &compat)
    {
        return verdict;
    }
    at.by_scope(qualifier.is_some(), compat.to_vec())
}

/// Whether [`attribute`] may tie `site` to one of `family` (definition indices): `false`
/// only when it provably cannot, from what decides first and cheaply. A qualified site
/// whose path ends in an owner (`Mutex::new`) is attributed among that owner's items
/// (or, when it owns none, among trait items and unowned ones), so asked about
/// `AbortHandle::new` a common name's thousands of other owners' sites are passed over
/// without being attributed. Conservative: anything the fast rules do not settle is
/// `true` and gets attributed.
pub fn may_name(site: &Site, defs: &[Sym], scope: &Scope, family: &[usize]) -> bool {
    let qualifier = site.qualifier.as_deref().filter(|q| !q.is_empty());
    let compat = compatible_candidates(site, defs, scope, qualifier.is_some());
    // Every verdict is among the compatible candidates.
    let mut wanted = family
        .iter()
        .copied()
        .filter(|i| compat.binary_search(i).is_ok())
        .peekable();
    if wanted.peek().is_none() {
        return false;
    }
    let Some(q) = qualifier else {
        return true;
    };
    // A written module, a script module or a bare-name fallback yields only unowned
    // candidates; `Self` depends on the enclosing item. Those are attributed.
    let wanted: Vec<usize> = wanted.collect();
    if wanted.iter().any(|&i| defs[i].owner.is_none()) {
        return true;
    }
    let Some(last) = last_segment(q) else {
        return true;
    };
    if q == "Self" || last == "Self" {
        return true;
    }
    let owned = scope.defs_owned_by(defs).get(last);
    let hits = owned.map_or(&[][..], Vec::as_slice);
    if hits.iter().any(|i| compat.binary_search(i).is_ok()) {
        // The verdict is among the owner's compatible items.
        return wanted.iter().any(|i| hits.contains(i));
    }
    // No compatible item of that owner: a trait item or an unowned one, or nothing.
    let traits = scope.trait_items(defs);
    wanted.iter().any(|i| traits.binary_search(i).is_ok())
}

/// The definitions (indices) a site of this kind, qualified or not, can name.
fn compatible_candidates(site: &Site, defs: &[Sym], scope: &Scope, qualified: bool) -> Rc<[usize]> {
    // In Python and TypeScript `x.f` without a call may read a method (a callback,
    // `obj.close_intelligently`), as `x.f()` may call a field holding a function.
    let compat_kind = if site.kind == "field" && script::is_script_file(&site.file_path) {
        "method_call"
    } else {
        site.kind.as_str()
    };
    scope.compatible_defs(defs, compat_kind, qualified)
}

/// What the steps of [`attribute`] read: the site, definitions, scope and crate.
struct AtSite<'a> {
    site: &'a Site,
    defs: &'a [Sym],
    scope: &'a Scope,
    homes: &'a [Vec<String>],
    crate_name: &'a str,
}

impl<'a> AtSite<'a> {
    /// The context for one site; its crate is the first segment of its enclosing symbol.
    fn new(site: &'a Site, defs: &'a [Sym], scope: &'a Scope) -> Self {
        let homes = scope.homes(defs);
        let crate_name = crate_of(site);
        AtSite {
            site,
            defs,
            scope,
            homes,
            crate_name,
        }
    }

    /// A definition's parent path: the module or type that holds it.
    fn name_home(&self, i: usize) -> &'a [String] {
        let homes = self.homes;
        &homes[i]
    }

    /// A definition's parent path less its owner: the module that holds the owner.
    fn owner_home(&self, i: usize) -> &'a [String] {
        let h = &self.homes[i];
        &h[..h.len().saturating_sub(1)]
    }

    /// The candidates among `compat` that no type or trait owns.
    fn unowned(&self, compat: &[usize]) -> Vec<usize> {
        compat
            .iter()
            .copied()
            .filter(|&i| self.defs[i].owner.is_none())
            .collect()
    }

    /// The verdict a written path `q` gives, or `None` to decide as for a bare name.
    fn by_written_path(&self, q: &str, compat: &[usize]) -> Option<Attribution> {
        // Items owned by a type or trait are reached only through that owner; a path
        // that does not end in it (`crate::Anchored`) means something else.
        let segs = segments(q);
        // `std::fs::create_dir` is the standard library's, whatever this crate defines.
        if segs
            .first()
            .is_some_and(|s| matches!(*s, "std" | "core" | "alloc") && *s != self.crate_name)
        {
            return Some(Attribution::Excluded);
        }
        if q != "Self"
            && script::is_script_file(&self.site.file_path)
            && let Some(verdict) = self.script_module(&segs, compat)
        {
            return Some(verdict);
        }
        if q != "Self"
            && segs.last() != Some(&"Self")
            && let Some(verdict) = self.written_module(q, compat)
        {
            return Some(verdict);
        }
        let last = *segs.last().unwrap_or(&q);
        let relative_only = segs
            .iter()
            .all(|s| matches!(*s, "crate" | "self" | "super"));
        if relative_only {
            return None;
        }
        self.by_owner(q, &segs, last, compat)
    }

    /// Python and TypeScript: the candidates a qualifier naming a project module holds.
    fn script_module(&self, segs: &[&str], compat: &[usize]) -> Option<Attribution> {
        // `click.BOOL`, `types.IntRange`, `from .types import X`, `from '../x'`.
        let unowned = self.unowned(compat);
        let via = script::module_holds(segs, self.defs, &unowned, self.scope);
        match via.len() {
            0 => None,
            1 => Some(Attribution::Resolved(via[0], Strength::Path)),
            _ => Some(Attribution::Open(via)),
        }
    }

    /// The one unowned candidate the module a written path leads to holds, if one.
    fn written_module(&self, q: &str, compat: &[usize]) -> Option<Attribution> {
        // Only unowned candidates can be held by a module: none, no module to work out.
        let unowned = self.unowned(compat);
        if unowned.is_empty() {
            return None;
        }
        let (module, suffix) = import_target(q, &self.site.file_path, self.crate_name);
        let via = through_module(
            &module,
            &suffix,
            &self.scope.name_imports,
            self.scope,
            self.crate_name,
            &|i| self.name_home(i),
            &unowned,
            2,
        );
        if via.len() == 1 {
            return Some(Attribution::Resolved(via[0], Strength::Path));
        }
        None
    }

    /// The verdict the owner a path ends in gives, or `None` to decide as for a bare name.
    fn by_owner(
        &self,
        q: &str,
        segs: &[&str],
        last: &str,
        compat: &[usize],
    ) -> Option<Attribution> {
        let owners: Vec<&str> = if last == "Self" {
            self_owners(&self.site.enclosing_symbol)
        } else {
            vec![last]
        };
        // Definitions owned by (or nested in) one of `owners`, in definition order.
        let owned = self.scope.defs_owned_by(self.defs);
        let mut hits: Vec<usize> = owners
            .iter()
            .filter_map(|o| owned.get(*o))
            .flatten()
            .copied()
            .filter(|i| compat.binary_search(i).is_ok())
            .collect();
        hits.sort_unstable();
        hits.dedup();
        match hits.len() {
            1 => Some(Attribution::Resolved(hits[0], Strength::Path)),
            // A module path (`regex_automata::X`, lowercase) that leads nowhere
            // known may be a glob re-export: decide below as for a bare name.
            // In Python and TypeScript only when the path starts from a package on
            // the way to a candidate (`os.path.join` is not this project's `join`).
            0 if self.site.kind != "method_call"
                && last.starts_with(|c: char| c.is_lowercase())
                && (!script::is_script_file(&self.site.file_path)
                    || segs
                        .first()
                        .is_some_and(|f| script::on_the_way(f, self.defs, compat))) =>
            {
                None
            }
            0 => Some(self.through_trait(compat)),
            _ => Some(self.among_owners(q, segs, last, hits)),
        }
    }

    /// The trait items among `compat`, which a receiver of any type can reach.
    fn through_trait(&self, compat: &[usize]) -> Attribution {
        // A receiver of another type, `Self` inside a trait impl, or a generic parameter
        // (`T::Output`) can still reach a trait's item.
        let via_trait: Vec<usize> = self
            .scope
            .trait_items(self.defs)
            .iter()
            .copied()
            .filter(|i| compat.binary_search(i).is_ok())
            .collect();
        match via_trait.len() {
            0 => Attribution::Excluded,
            1 => Attribution::Resolved(via_trait[0], Strength::NameOnly),
            _ => Attribution::Open(via_trait),
        }
    }

    /// Several owners share the name: told apart by path, imports, then the site's file.
    fn among_owners(&self, q: &str, segs: &[&str], last: &str, hits: Vec<usize>) -> Attribution {
        // A longer written path, then what the file imports under that name, then the
        // owner's own file.
        let (site, defs) = (self.site, self.defs);
        let longer: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&i| segs.len() > 1 && path_leads_to(q, &parent_path(&defs[i])))
            .collect();
        if longer.len() == 1 {
            return Attribution::Resolved(longer[0], Strength::Path);
        }
        // The owner as this file imports it, resolved exactly; then the
        // owner defined in the site's own module.
        if let Some(paths) = self
            .scope
            .owner_imports
            .get(last)
            .and_then(|m| m.get(&site.file_path))
            && let Some(verdict) = self.owner_as_imported(last, paths, &hits)
        {
            return verdict;
        }
        let site_module = module_of_file(self.crate_name, &site.file_path);
        let in_module: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&i| self.owner_home(i) == site_module)
            .collect();
        if in_module.len() == 1 {
            return Attribution::Resolved(in_module[0], Strength::Scope);
        }
        if let Some(paths) = self
            .scope
            .owner_imports
            .get(last)
            .and_then(|m| m.get(&site.file_path))
        {
            let imported: Vec<usize> = hits
                .iter()
                .copied()
                .filter(|&i| {
                    let mut owner_path = parent_path(&defs[i]);
                    owner_path.pop();
                    paths.iter().any(|p| path_leads_to(p, &owner_path))
                })
                .collect();
            if imported.len() == 1 {
                return Attribution::Resolved(imported[0], Strength::Scope);
            }
        }
        let local: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&i| defs[i].file_path == site.file_path)
            .collect();
        if local.len() == 1 {
            return Attribution::Resolved(local[0], Strength::Scope);
        }
        Attribution::Open(hits)
    }

    /// The one owner the file's imports of it lead to, exactly or through re-exports.
    fn owner_as_imported(
        &self,
        last: &str,
        paths: &[String],
        hits: &[usize],
    ) -> Option<Attribution> {
        let (site, crate_name) = (self.site, self.crate_name);
        let exact: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&i| {
                paths
                    .iter()
                    .any(|p| absolute_module(p, &site.file_path, crate_name) == self.owner_home(i))
            })
            .collect();
        if exact.len() == 1 {
            return Some(Attribution::Resolved(exact[0], Strength::Scope));
        }
        // Through the re-exports of the module the file imports it from.
        if let Some(owner_uses) = self.scope.owner_imports.get(last) {
            let mut via: Vec<usize> = Vec::new();
            for p in paths {
                let module = absolute_module(p, &site.file_path, crate_name);
                for i in through_module(
                    &module,
                    &[],
                    owner_uses,
                    self.scope,
                    crate_name,
                    &|i| self.owner_home(i),
                    hits,
                    2,
                ) {
                    if !via.contains(&i) {
                        via.push(i);
                    }
                }
            }
            if via.len() == 1 {
                return Some(Attribution::Resolved(via[0], Strength::Scope));
            }
        }
        None
    }

    /// A bare name (or one behind crate/self/super): what is in scope in this file.
    fn by_scope(&self, qualified: bool, compat: Vec<usize>) -> Attribution {
        let (site, defs) = (self.site, self.defs);
        // Behind a path, owned items (variants, methods) are out: they need their owner.
        let compat: Vec<usize> = if qualified {
            compat
                .into_iter()
                .filter(|&i| defs[i].owner.is_none())
                .collect()
        } else {
            compat
        };
        if compat.is_empty() {
            return Attribution::Excluded;
        }
        // A bare name is an unowned item unless a `use` brings an owned one (a variant, an
        // associated item) into scope by a path ending in its owner.
        let compat: Vec<usize> = if !qualified && compat.iter().any(|&i| defs[i].owner.is_none()) {
            self.unowned_or_imported(compat)
        } else {
            compat
        };
        let here: Vec<usize> = compat
            .iter()
            .copied()
            .filter(|&i| defs[i].file_path == site.file_path)
            .collect();
        if here.len() == 1 && site.kind != "method_call" && site.kind != "field" {
            return Attribution::Resolved(here[0], Strength::Scope);
        }
        if script::is_script_file(&site.file_path)
            && let Some(paths) = self.scope.name_imports.get(&site.file_path)
            && let Some(verdict) = self.script_imports(paths, &compat)
        {
            return verdict;
        }
        if let Some(paths) = self.scope.name_imports.get(&site.file_path)
            && let Some(verdict) = self.through_uses(paths, &compat)
        {
            return verdict;
        }
        match compat.len() {
            1 => Attribution::Resolved(compat[0], Strength::NameOnly),
            _ => Attribution::Open(compat),
        }
    }

    /// The unowned candidates, and the owned ones a `use` in the file names by their owner.
    fn unowned_or_imported(&self, compat: Vec<usize>) -> Vec<usize> {
        // The last segment of each of the file's `use` paths, split once per site (not
        // once per candidate: a common name has hundreds).
        let imported: Vec<&str> = self
            .scope
            .name_imports
            .get(&self.site.file_path)
            .map(|ps| ps.iter().filter_map(|p| last_segment(p)).collect())
            .unwrap_or_default();
        compat
            .into_iter()
            .filter(|&i| match self.defs[i].owner.as_deref() {
                None => true,
                Some(o) => imported.contains(&o),
            })
            .collect()
    }

    /// The one candidate a Python or TypeScript file imports the name from.
    fn script_imports(&self, paths: &[String], compat: &[usize]) -> Option<Attribution> {
        // What the file imports the name from (`from .core import X`, `import { X }
        // from './x'`), following re-exports.
        let mut via: Vec<usize> = Vec::new();
        for p in paths {
            for i in script::module_holds(&segments(p), self.defs, compat, self.scope) {
                if !via.contains(&i) {
                    via.push(i);
                }
            }
        }
        if via.len() == 1 {
            return Some(Attribution::Resolved(via[0], Strength::Scope));
        }
        None
    }

    /// The one candidate the file's `use`s of the name lead to.
    fn through_uses(&self, paths: &[String], compat: &[usize]) -> Option<Attribution> {
        let (site, crate_name) = (self.site, self.crate_name);
        // What the file's `use` leads to, following re-exports.
        let mut via: Vec<usize> = Vec::new();
        for p in paths {
            let (module, suffix) = import_target(p, &site.file_path, crate_name);
            for i in through_module(
                &module,
                &suffix,
                &self.scope.name_imports,
                self.scope,
                crate_name,
                &|i| self.name_home(i),
                compat,
                2,
            ) {
                if !via.contains(&i) {
                    via.push(i);
                }
            }
        }
        if via.len() == 1 {
            return Some(Attribution::Resolved(via[0], Strength::Scope));
        }
        let named: Vec<Vec<&str>> = paths.iter().map(|p| named_segments(p)).collect();
        let imported: Vec<usize> = compat
            .iter()
            .copied()
            .filter(|&i| {
                let home = self.name_home(i);
                named.iter().any(|n| segments_lead_to(n, home))
            })
            .collect();
        if imported.len() == 1 {
            return Some(Attribution::Resolved(imported[0], Strength::Scope));
        }
        // A `use` that does not name an owner imports an unowned item.
        let unowned = self.unowned(compat);
        if unowned.len() == 1 && !paths.is_empty() {
            return Some(Attribution::Resolved(unowned[0], Strength::Scope));
        }
        None
    }
}

/// The imports of `name` per file, from the `use` sites among `sites`.
pub fn imports_by_file(sites: &[Site]) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for s in sites.iter().filter(|s| s.kind == "use") {
        if let Some(q) = &s.qualifier {
            out.entry(s.file_path.clone()).or_default().push(q.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::def;

    fn site(file: &str, kind: &str, qualifier: Option<&str>, enclosing: &str) -> Site {
        Site {
            file_path: file.into(),
            line: 1,
            column: 1,
            kind: kind.into(),
            qualifier: qualifier.map(Into::into),
            enclosing_symbol: enclosing.into(),
            line_text: None,
        }
    }

    #[test]
    fn a_call_may_name_a_value_that_holds_what_is_called() {
        // `const AjaxError: AjaxErrorCtor = ..; new AjaxError(..)`, `const F: fn() = f; F()`
        for kind in ["const", "static", "variable", "function", "class"] {
            assert!(compatible("call", false, kind), "{kind}");
            assert!(compatible("call", true, kind), "{kind}");
        }
        // a call names no type-only definition, no module and no macro
        for kind in ["interface", "type_alias", "trait", "module", "macro"] {
            assert!(!compatible("call", false, kind), "{kind}");
        }
    }

    #[test]
    fn written_paths_and_receiver_types_pick_the_owner() {
        let defs = crate::testing::circle_and_square_new();
        let scope = Scope::default();
        let a = |s: Site| attribute(&s, &defs, &scope);
        assert_eq!(
            a(site("src/lib.rs", "call", Some("Circle"), "k::f")),
            Attribution::Resolved(0, Strength::Path)
        );
        assert_eq!(
            a(site("src/lib.rs", "call", Some("shapes::Square"), "k::f")),
            Attribution::Resolved(1, Strength::Path)
        );
        assert_eq!(
            a(site("src/lib.rs", "call", Some("Vec"), "k::f")),
            Attribution::Excluded
        );
        assert_eq!(
            a(site(
                "src/shapes.rs",
                "call",
                Some("Self"),
                "k::shapes::Square::both"
            )),
            Attribution::Resolved(1, Strength::Path)
        );
        assert_eq!(
            a(site("src/lib.rs", "method_call", None, "k::f")),
            Attribution::Open(vec![0, 1])
        );
        // A plain call `new(..)` cannot reach a method.
        assert_eq!(
            a(site("src/lib.rs", "call", None, "k::f")),
            Attribution::Excluded
        );
    }

    #[test]
    fn may_name_is_false_only_where_attribution_names_none_of_the_family() {
        let [circle, square] = crate::testing::circle_and_square_new();
        let defs = [
            circle,
            square,
            def("k::Shape::new", "method", Some("Shape"), "src/lib.rs"),
            def("k::util::new", "function", None, "src/util.rs"),
            def(
                "k::other::Circle::new",
                "method",
                Some("Circle"),
                "src/other.rs",
            ),
        ];
        let mut scope = Scope::default();
        scope.trait_owners.insert("Shape".into());
        scope
            .name_imports
            .insert("src/main.rs".into(), vec!["crate::util".into()]);
        let qualifiers = [
            None,
            Some("Circle"),
            Some("shapes::Square"),
            Some("other::Circle"),
            Some("Self"),
            Some("Shape"),
            Some("util"),
            Some("crate::util"),
            Some("crate"),
            Some("Vec"),
            Some("std::fs"),
            Some("T"),
        ];
        let mut rejected = 0;
        for q in qualifiers {
            for kind in ["call", "method_call", "field", "use", "type"] {
                for file in ["src/lib.rs", "src/shapes.rs", "src/main.rs"] {
                    for enclosing in ["k::f", "k::shapes::Square::both", "k::Shape::g"] {
                        let s = site(file, kind, q, enclosing);
                        let named = match attribute(&s, &defs, &scope) {
                            Attribution::Resolved(i, _) => vec![i],
                            Attribution::Open(set) => set,
                            Attribution::Excluded => vec![],
                        };
                        for i in 0..defs.len() {
                            let may = may_name(&s, &defs, &scope, &[i]);
                            assert!(may || !named.contains(&i), "{s:?} names {i}");
                            rejected += usize::from(!may);
                        }
                    }
                }
            }
        }
        // `Circle::new(..)` is passed over when asked about `Square::new`.
        let circle = site("src/lib.rs", "call", Some("Circle"), "k::f");
        assert!(!may_name(&circle, &defs, &scope, &[1]));
        assert!(may_name(&circle, &defs, &scope, &[0]));
        assert!(rejected > 100, "{rejected}");
    }

    #[test]
    fn a_bare_sites_kept_verdict_is_per_file_kind_and_crate() {
        let defs = [
            def("k::a::run", "function", None, "src/a.rs"),
            def("k::b::run", "function", None, "src/b.rs"),
            def("k::b::Job::run", "method", Some("Job"), "src/b.rs"),
            def("j::run", "function", None, "src/a.rs"),
        ];
        let scope = || {
            let mut scope = Scope::default();
            scope
                .name_imports
                .insert("src/c.rs".into(), vec!["crate::b".into()]);
            scope
        };
        let kept = scope();
        let mut sites = Vec::new();
        for file in ["src/a.rs", "src/b.rs", "src/c.rs", "src/d.py"] {
            for kind in ["call", "method_call", "type", "field"] {
                for enclosing in ["k::m::f", "j::m::f", "k::b::Job::g"] {
                    sites.push(site(file, kind, None, enclosing));
                }
            }
        }
        // Asked in any order, a kept verdict is the one a fresh scope works out.
        for s in sites.iter().chain(sites.iter().rev()) {
            assert_eq!(
                attribute(s, &defs, &kept),
                attribute(s, &defs, &scope()),
                "{s:?}"
            );
        }
        let verdicts: HashSet<String> = sites
            .iter()
            .map(|s| format!("{:?}", attribute(s, &defs, &kept)))
            .collect();
        assert!(verdicts.len() >= 4, "{verdicts:?}");
    }

    #[test]
    fn standard_library_paths_never_reach_the_crates_own_items() {
        let defs = [def("k::fs::create_dir", "function", None, "src/fs.rs")];
        let scope = Scope::default();
        let a = |s: Site| attribute(&s, &defs, &scope);
        assert_eq!(
            a(site(
                "src/fs.rs",
                "call",
                Some("std::fs"),
                "k::fs::create_dir"
            )),
            Attribution::Excluded
        );
        assert_eq!(
            a(site("src/fs.rs", "call", Some("crate::fs"), "k::fs::user")),
            Attribution::Resolved(0, Strength::Path)
        );
    }

    #[test]
    fn bare_names_resolve_through_the_file_and_its_imports() {
        let defs = [
            def("k::a::State", "struct", None, "src/a.rs"),
            def("k::b::State", "enum", None, "src/b.rs"),
            def("k::c::Kind::State", "variant", Some("Kind"), "src/c.rs"),
        ];
        let mut scope = Scope::default();
        scope
            .name_imports
            .insert("src/user.rs".into(), vec!["crate::b".into()]);
        let a = |s: Site| attribute(&s, &defs, &scope);
        assert_eq!(
            a(site("src/a.rs", "type", None, "k::a::f")),
            Attribution::Resolved(0, Strength::Scope)
        );
        assert_eq!(
            a(site("src/user.rs", "type", None, "k::user::f")),
            Attribution::Resolved(1, Strength::Scope)
        );
        assert_eq!(
            a(site("src/other.rs", "type", None, "k::other::f")),
            Attribution::Open(vec![0, 1])
        );
        // A variant is never a type; `Kind::State` is the variant.
        assert_eq!(
            a(site("src/other.rs", "path", Some("Kind"), "k::other::f")),
            Attribution::Resolved(2, Strength::Path)
        );
    }

    #[test]
    fn same_named_owners_are_told_apart_by_what_the_file_imports() {
        let defs = [
            def(
                "k::nfa::thompson::compiler::Config::which",
                "method",
                Some("Config"),
                "src/nfa/thompson/compiler.rs",
            ),
            def(
                "k::meta::regex::Config::which",
                "method",
                Some("Config"),
                "src/meta/regex.rs",
            ),
        ];
        let mut scope = Scope::default();
        scope
            .owner_imports
            .entry("Config".into())
            .or_default()
            .insert(
                "src/dfa/dense.rs".into(),
                vec!["crate::nfa::thompson".into()],
            );
        let s = site(
            "src/dfa/dense.rs",
            "method_call",
            Some("Config"),
            "k::dfa::dense::build",
        );
        assert_eq!(
            attribute(&s, &defs, &scope),
            Attribution::Resolved(0, Strength::Scope)
        );
        let s = site(
            "src/meta/regex.rs",
            "method_call",
            Some("Config"),
            "k::meta::regex::x",
        );
        assert_eq!(
            attribute(&s, &defs, &scope),
            Attribution::Resolved(1, Strength::Scope)
        );
        let s = site("src/elsewhere.rs", "method_call", Some("Config"), "k::e::x");
        assert_eq!(attribute(&s, &defs, &scope), Attribution::Open(vec![0, 1]));
    }

    #[test]
    fn trait_methods_stay_reachable_from_other_receivers() {
        let defs = [def("k::Shape::area", "method", Some("Shape"), "src/s.rs")];
        let s = site("src/lib.rs", "method_call", Some("Circle"), "k::f");
        assert_eq!(
            attribute(&s, &defs, &Scope::default()),
            Attribution::Excluded
        );
        // A scope memoizes what it learns from the definitions: a new one for new facts.
        let mut scope = Scope::default();
        scope.trait_owners.insert("Shape".into());
        assert_eq!(
            attribute(&s, &defs, &scope),
            Attribution::Resolved(0, Strength::NameOnly)
        );
    }

    #[test]
    fn modules_of_files() {
        assert_eq!(module_of_file("k", "src/lib.rs"), ["k"]);
        assert_eq!(
            module_of_file("k", "src/nfa/thompson/mod.rs"),
            ["k", "nfa", "thompson"]
        );
        assert_eq!(
            module_of_file("k", "src/nfa/thompson/nfa.rs"),
            ["k", "nfa", "thompson", "nfa"]
        );
        assert_eq!(
            module_of_file("k", "tests/dfa/api.rs"),
            ["k", "tests", "dfa", "api"]
        );
        assert_eq!(
            absolute_module("super::x", "src/a/b.rs", "k"),
            ["k", "a", "x"]
        );
        assert_eq!(
            absolute_module("crate::util", "src/a/b.rs", "k"),
            ["k", "util"]
        );
        assert_eq!(
            absolute_module("self::nfa", "src/nfa/thompson/mod.rs", "k"),
            ["k", "nfa", "thompson", "nfa"]
        );
    }

    #[test]
    fn paths_through_reexports_reach_the_definition() {
        let defs = [
            def(
                "k::nfa::thompson::nfa::State",
                "enum",
                None,
                "src/nfa/thompson/nfa.rs",
            ),
            def(
                "k::nfa::thompson::builder::State",
                "enum",
                None,
                "src/nfa/thompson/builder.rs",
            ),
            def(
                "k::util::search::Anchored",
                "enum",
                None,
                "src/util/search.rs",
            ),
            def(
                "k::dfa::start::StartKind::Anchored",
                "variant",
                Some("StartKind"),
                "src/dfa/start.rs",
            ),
        ];
        // A scope memoizes facts about one definition list: one scope per list.
        let scope = || {
            let mut scope = Scope::default();
            scope
                .name_imports
                .insert("src/nfa/thompson/mod.rs".into(), vec!["self::nfa".into()]);
            scope
                .name_imports
                .insert("src/lib.rs".into(), vec!["crate::util::search".into()]);
            scope
        };
        let s = site(
            "src/dfa/onepass.rs",
            "path",
            Some("thompson"),
            "k::dfa::onepass::f",
        );
        assert_eq!(
            attribute(&s, &defs, &scope()),
            Attribution::Resolved(0, Strength::Path)
        );
        let s = site("src/dfa/regex.rs", "use", Some("crate"), "k::dfa::regex");
        assert_eq!(
            attribute(&s, &defs[2..], &scope()),
            Attribution::Resolved(0, Strength::Path)
        );
    }

    #[test]
    fn python_and_typescript_qualifiers_name_modules_by_file_path() {
        let defs = [
            def(
                "click::src::click::types::BOOL",
                "const",
                None,
                "src/click/types.py",
            ),
            def(
                "click::src::click::core::BOOL",
                "const",
                None,
                "src/click/core.py",
            ),
            def(
                "click::src::click::core::Option::BOOL",
                "field",
                Some("Option"),
                "src/click/core.py",
            ),
        ];
        let mut scope = Scope::default();
        // `from .types import BOOL as BOOL` in the package's `__init__.py`.
        scope.name_imports.insert(
            "src/click/__init__.py".into(),
            vec!["src::click::types".into()],
        );
        scope
            .name_imports
            .insert("tests/test_x.py".into(), vec!["click::core".into()]);
        let a = |s: Site| attribute(&s, &defs, &scope);
        // `click.BOOL` goes through the package's re-export.
        assert_eq!(
            a(site(
                "tests/test_a.py",
                "path",
                Some("click"),
                "click::tests::test_a::t"
            )),
            Attribution::Resolved(0, Strength::Path)
        );
        // `types.BOOL` after `from . import types`, and the re-export line itself.
        assert_eq!(
            a(site(
                "src/click/decorators.py",
                "path",
                Some("src::click::types"),
                "click::src::click::decorators::f"
            )),
            Attribution::Resolved(0, Strength::Path)
        );
        assert_eq!(
            a(site(
                "src/click/__init__.py",
                "use",
                Some("src::click::types"),
                "click::src::click"
            )),
            Attribution::Resolved(0, Strength::Path)
        );
        // A bare name imported from a module (`from click.core import BOOL`).
        assert_eq!(
            a(site(
                "tests/test_x.py",
                "path",
                None,
                "click::tests::test_x::t"
            )),
            Attribution::Resolved(1, Strength::Scope)
        );
        // TypeScript: `import { BOOL } from '../click/core'`, resolved by the extractor.
        let ts = [def(
            "rx::src::internal::Observable::Observable",
            "class",
            None,
            "src/internal/Observable.ts",
        )];
        let s = site(
            "src/internal/operators/map.ts",
            "use",
            Some("src::internal::Observable"),
            "rx::src::internal::operators::map",
        );
        assert_eq!(
            attribute(&s, &ts, &Scope::default()),
            Attribution::Resolved(0, Strength::Path)
        );
    }

    #[test]
    fn written_paths_follow_reexports() {
        assert!(path_leads_to(
            "crate::nfa::thompson",
            &["k", "nfa", "thompson", "compiler"]
        ));
        assert!(!path_leads_to(
            "crate::meta",
            &["k", "nfa", "thompson", "compiler"]
        ));
        assert!(!path_leads_to("super", &["k", "nfa"]));
    }
}
