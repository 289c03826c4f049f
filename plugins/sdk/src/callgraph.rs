//! One hop in the stored graph, with targets tied to definitions.
//!
//! The host stores edges as written: the source is exact (the symbol the site sits in),
//! the target is a name with the path written before it. [`CallGraph`] ties targets to
//! definitions with the same attribution references get (see [`crate::attribution`]),
//! and caches what it looks up, since a traversal meets the same names again and again.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ToolResult;
use crate::attribution::{
    NameIndex, SCOPE_SITE_KINDS, ScopeLookups, Tie, distinct_definitions, edge_site, owner_files,
};
use crate::host::{Edge, Host, PreciseUsages, Site, Sym};
use crate::resolve::{Attribution, Strength};

/// Edges a call hierarchy follows: calls, and constructions (`Foo { .. }`, `Foo(..)`),
/// which is how a type is "called".
pub const CALL_KINDS: &[&str] = &["calls", "instantiates"];
/// Edges a change travels along: everything that depends on the target's shape.
pub const IMPACT_KINDS: &[&str] = &["calls", "implements", "instantiates", "reexports"];

/// What an outgoing edge leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A definition in the project. `Tie::Open` when it is the trait item a call on a
    /// receiver of unknown type reaches (an implementation may be what runs).
    Def(Sym, Tie),
    /// Several same-named definitions; nothing written decides between them.
    Open(Vec<Sym>),
    /// Nothing in the project: the standard library, a dependency, or another type's
    /// member of the same name.
    External,
}

/// The edges that reach one definition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Incoming {
    pub links: Vec<(Edge, Tie)>,
    /// Member uses on receivers of unknown type in files that never name the owner:
    /// left out as most likely other types' members.
    pub unrelated: Vec<Edge>,
    /// Where the links come from.
    pub provenance: Provenance,
}

/// Where one lookup's edges come from: the language's own indexer (precise data) or the
/// heuristic, and what precise data could not say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// `precise`, `mixed` (files edited or added since the precise run answered by the
    /// heuristic) or `heuristic` (no precise data for the definition: `note`).
    pub precision: String,
    /// Files answered by the heuristic although their language has precise data.
    pub fallback_files: Vec<String>,
    /// Edge sites of the name the indexer left unresolved (answered by the heuristic).
    pub unresolved: usize,
    pub note: Option<String>,
}

impl Provenance {
    fn heuristic(note: Option<String>) -> Provenance {
        Provenance {
            precision: "heuristic".into(),
            note,
            ..Default::default()
        }
    }
}

/// A name's distinct definitions and usage sites, as read.
type NameRows = Rc<(Vec<Sym>, Vec<Site>)>;

/// A name and a list of edge kinds, as the key of what is kept per traversal.
fn kinds_key(name: &str, kinds: &[&str]) -> (String, Vec<String>) {
    (
        name.to_string(),
        kinds.iter().map(|k| k.to_string()).collect(),
    )
}

/// A name, whether its index holds every usage site, and the lookups its scope took.
type FocusKey = (String, bool, (Vec<String>, Vec<String>));

pub struct CallGraph<'h, H: Host + ?Sized> {
    host: &'h H,
    /// A name's distinct definitions and usage sites, as read.
    read: HashMap<String, NameRows>,
    /// A name's distinct definitions and its scope's sites ([`CallGraph::scope_rows`]).
    scope_read: HashMap<String, NameRows>,
    /// Indices around a focus, by name and the lookups their scope took: foci whose
    /// scopes are equal share one index.
    focused: HashMap<FocusKey, Rc<NameIndex>>,
    /// Indices for attributing a call's target ([`NameIndex::load_if_defined`]).
    defined: HashMap<String, Rc<NameIndex>>,
    symbols: HashMap<String, Option<Sym>>,
    /// A name's edges of some kinds (attributed per focus, or matched to precise sites).
    edges: HashMap<(String, Vec<String>), Rc<Vec<Edge>>>,
    /// The same edges seen as sites, for attribution.
    edge_sites: HashMap<(String, Vec<String>), Rc<Vec<Site>>>,
    owner_files: HashMap<String, Option<Rc<HashSet<String>>>>,
}

impl<'h, H: Host + ?Sized> CallGraph<'h, H> {
    pub fn new(host: &'h H) -> Self {
        CallGraph {
            host,
            read: HashMap::new(),
            scope_read: HashMap::new(),
            focused: HashMap::new(),
            defined: HashMap::new(),
            symbols: HashMap::new(),
            edges: HashMap::new(),
            edge_sites: HashMap::new(),
            owner_files: HashMap::new(),
        }
    }

    pub fn host(&self) -> &'h H {
        self.host
    }

    /// A name's definitions, sites and scope, built around `focus` (a qualified name).
    pub fn names(&mut self, name: &str, focus: Option<&str>) -> ToolResult<Rc<NameIndex>> {
        match focus {
            Some(f) => self.focused(name, f, true),
            None => {
                if let Some(n) = self.defined.get(name) {
                    return Ok(n.clone());
                }
                let n = Rc::new(NameIndex::load_if_defined(self.host, name)?);
                self.defined.insert(name.to_string(), n.clone());
                Ok(n)
            }
        }
    }

    /// A name's distinct definitions and usage sites, read once per traversal.
    fn read(&mut self, name: &str) -> ToolResult<NameRows> {
        if let Some(r) = self.read.get(name) {
            return Ok(r.clone());
        }
        let defs = distinct_definitions(self.host.symbols_by_name(name)?);
        let sites = self.host.references_to_name(name, false)?;
        let r = Rc::new((defs, sites));
        self.read.insert(name.to_string(), r.clone());
        Ok(r)
    }

    /// A name's distinct definitions and only the sites its scope is built from (`use`
    /// and `implements`): all that attributing edges to it needs. A common name's
    /// thousands of other usages are not read for a traversal.
    fn scope_rows(&mut self, name: &str) -> ToolResult<NameRows> {
        if let Some(r) = self.scope_read.get(name) {
            return Ok(r.clone());
        }
        // From what the traversal already holds (a call target's index, the name's
        // every site), else read: an index from `names` would also build a scope.
        let r = if let Some(n) = self.defined.get(name) {
            Rc::new((n.defs.clone(), n.sites.clone()))
        } else if let Some(whole) = self.read.get(name) {
            let sites = whole
                .1
                .iter()
                .filter(|s| SCOPE_SITE_KINDS.contains(&s.kind.as_str()))
                .cloned()
                .collect();
            Rc::new((whole.0.clone(), sites))
        } else {
            let defs = distinct_definitions(self.host.symbols_by_name(name)?);
            let sites = if defs.is_empty() {
                Vec::new()
            } else {
                self.host.references_of_kinds(name, SCOPE_SITE_KINDS)?
            };
            Rc::new((defs, sites))
        };
        self.scope_read.insert(name.to_string(), r.clone());
        Ok(r)
    }

    /// [`NameIndex::load`] around `focus`, shared with the foci whose scope is the same;
    /// with every usage site of the name (`whole`) or only its scope's. A traversal asks
    /// about several definitions of a common name: the same sites, the same scope (its
    /// memo keeps what their attributions share).
    fn focused(&mut self, name: &str, focus: &str, whole: bool) -> ToolResult<Rc<NameIndex>> {
        let read = if whole {
            self.read(name)?
        } else {
            self.scope_rows(name)?
        };
        let (defs, sites) = &*read;
        let focus: Vec<usize> = (0..defs.len())
            .filter(|&i| defs[i].qualified_name == focus)
            .collect();
        let lookups = ScopeLookups::around(defs, &focus, sites);
        let key = (name.to_string(), whole, lookups.key());
        if let Some(f) = self.focused.get(&key) {
            return Ok(f.clone());
        }
        let index = Rc::new(NameIndex::from_parts(
            self.host,
            name,
            defs.clone(),
            sites.clone(),
            &lookups,
        )?);
        self.focused.insert(key, index.clone());
        Ok(index)
    }

    /// The edges of `kinds` to `name` seen as sites, made once per traversal.
    fn edge_sites(&mut self, name: &str, kinds: &[&str]) -> ToolResult<Rc<Vec<Site>>> {
        let key = kinds_key(name, kinds);
        if let Some(s) = self.edge_sites.get(&key) {
            return Ok(s.clone());
        }
        let sites: Rc<Vec<Site>> =
            Rc::new(self.edges_of(name, kinds)?.iter().map(edge_site).collect());
        self.edge_sites.insert(key, sites.clone());
        Ok(sites)
    }

    /// The definition with exactly this qualified name (the first of cfg variants).
    pub fn symbol(&mut self, qualified_name: &str) -> ToolResult<Option<Sym>> {
        if let Some(s) = self.symbols.get(qualified_name) {
            return Ok(s.clone());
        }
        let found = self
            .host
            .symbols_by_qualified_name(qualified_name)?
            .into_iter()
            .find(|d| d.qualified_name == qualified_name);
        self.symbols
            .insert(qualified_name.to_string(), found.clone());
        Ok(found)
    }

    fn owner_files(&mut self, def: &Sym) -> ToolResult<Option<Rc<HashSet<String>>>> {
        if let Some(f) = self.owner_files.get(&def.qualified_name) {
            return Ok(f.clone());
        }
        let f = owner_files(self.host, def)?.map(Rc::new);
        self.owner_files
            .insert(def.qualified_name.clone(), f.clone());
        Ok(f)
    }

    /// The edges of `kinds` whose target is `def`, each with how firmly it is tied.
    pub fn incoming(&mut self, def: &Sym, kinds: &[&str]) -> ToolResult<Incoming> {
        let read = self.scope_rows(&def.name)?;
        let Some(target) = read
            .0
            .iter()
            .find(|d| d.qualified_name == def.qualified_name)
        else {
            // A module: a path through it is not a use of an item.
            return Ok(Incoming::default());
        };
        let precise = self
            .host
            .precise_usages(target)
            .unwrap_or_else(|e| PreciseUsages::unreadable(&e));
        let (unresolved, unread) = if precise.available() {
            (
                self.host.precise_unresolved(target).unwrap_or_default(),
                self.host.precise_unread(target).unwrap_or_default(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        // Precise data that answers for every site (no file fell back, nothing left
        // unresolved or unread): the heuristic's links would all be dropped, so its
        // attribution — most of a traversal's time — is not worked out.
        if precise.available()
            && precise.fallback_files.is_empty()
            && unresolved.is_empty()
            && unread.is_empty()
        {
            let edges = self.edges_of(&def.name, kinds)?;
            return Ok(precise_incoming(
                &edges,
                Incoming::default(),
                &precise,
                (&[], &[]),
            ));
        }
        if !precise.available() {
            let heuristic = self.heuristic_incoming(def, kinds, |_| true)?;
            return Ok(Incoming {
                provenance: Provenance::heuristic(precise.note),
                ..heuristic
            });
        }
        // Precise data leaves the heuristic only the edges in files that fell back and
        // at sites left unresolved or unread: only those are attributed.
        let fallback = fallback_files(&precise);
        let left = places(unresolved.iter().chain(&unread));
        let heuristic = self.heuristic_incoming(def, kinds, |e| {
            fallback.contains(e.file_path.as_str()) || left.contains(&at(e))
        })?;
        let edges = self.edges_of(&def.name, kinds)?;
        Ok(precise_incoming(
            &edges,
            heuristic,
            &precise,
            (&unresolved, &unread),
        ))
    }

    /// The heuristic's incoming edges of `def` among the name's edges of `kinds` that
    /// `keep` admits, each site attributed among the name's definitions. Only the sites
    /// that may name `def` are attributed ([`NameIndex::may_name`]): asked about one
    /// `new`, the other owners' `X::new` calls are passed over.
    fn heuristic_incoming(
        &mut self,
        def: &Sym,
        kinds: &[&str],
        keep: impl Fn(&Edge) -> bool,
    ) -> ToolResult<Incoming> {
        let names = self.focused(&def.name, &def.qualified_name, false)?;
        let edges = self.edges_of(&def.name, kinds)?;
        let Some(c) = names.position(&def.qualified_name) else {
            return Ok(Incoming::default());
        };
        let files = self.owner_files(&names.defs[c])?;
        let sites = self.edge_sites(&def.name, kinds)?;
        let usages = names.usages_kept(c, &sites, files.as_deref(), |k, _| keep(&edges[k]));
        Ok(Incoming {
            links: usages
                .tied
                .into_iter()
                .map(|(k, tie)| (edges[k].clone(), tie))
                .collect(),
            unrelated: usages
                .unrelated
                .into_iter()
                .map(|k| edges[k].clone())
                .collect(),
            provenance: Provenance::default(),
        })
    }

    /// The edges of `kinds` to `name`, read once per traversal.
    fn edges_of(&mut self, name: &str, kinds: &[&str]) -> ToolResult<Rc<Vec<Edge>>> {
        let key = kinds_key(name, kinds);
        if let Some(e) = self.edges.get(&key) {
            return Ok(e.clone());
        }
        let edges: Rc<Vec<Edge>> = Rc::new(
            self.host
                .edges_to(name)?
                .into_iter()
                .filter(|e| kinds.contains(&e.kind.as_str()))
                .collect(),
        );
        self.edges.insert(key, edges.clone());
        Ok(edges)
    }

    /// The edges of `kinds` that start in `qualified_name`, each with what it leads to.
    pub fn outgoing(
        &mut self,
        qualified_name: &str,
        kinds: &[&str],
    ) -> ToolResult<Vec<(Edge, Target)>> {
        let edges: Vec<Edge> = self
            .host
            .edges_from(qualified_name)?
            .into_iter()
            .filter(|e| kinds.contains(&e.kind.as_str()))
            .collect();
        let mut out = Vec::with_capacity(edges.len());
        for e in edges {
            let t = self.target(&e)?;
            out.push((e, t));
        }
        Ok(out)
    }

    /// The definition an edge's written target is.
    pub fn target(&mut self, e: &Edge) -> ToolResult<Target> {
        let names = self.names(&e.to_name, None)?;
        if names.defs.is_empty() {
            return Ok(Target::External);
        }
        let site = edge_site(e);
        // A member used on a receiver of unknown type, in a file that never names its
        // owner, is most likely another type's member (`v.push(..)` on a Vec).
        let blind =
            site.qualifier.is_none() && matches!(site.kind.as_str(), "method_call" | "field");
        let plausible = |g: &mut Self, d: &Sym| -> ToolResult<bool> {
            if !blind {
                return Ok(true);
            }
            Ok(g.owner_files(d)?
                .is_none_or(|f| f.contains(&site.file_path)))
        };
        match names.attribute(&site) {
            Attribution::Resolved(i, strength) => {
                let d = &names.defs[i];
                if strength == Strength::NameOnly && !plausible(self, d)? {
                    return Ok(Target::External);
                }
                let tie = if strength == Strength::NameOnly {
                    Tie::NameOnly
                } else {
                    Tie::Exact
                };
                Ok(Target::Def(d.clone(), tie))
            }
            Attribution::Open(set) => {
                let mut left = Vec::new();
                for i in set {
                    if plausible(self, &names.defs[i])? {
                        left.push(i);
                    }
                }
                match left.len() {
                    0 => Ok(Target::External),
                    1 => Ok(Target::Def(names.defs[left[0]].clone(), Tie::NameOnly)),
                    _ => Ok(match trait_item_of(&names, &left) {
                        Some(t) => Target::Def(names.defs[t].clone(), Tie::Open),
                        None => Target::Open(left.iter().map(|&i| names.defs[i].clone()).collect()),
                    }),
                }
            }
            Attribution::Excluded => Ok(Target::External),
        }
    }
}

/// Where an edge is written.
fn at(e: &Edge) -> (&str, u32, u32) {
    (e.file_path.as_str(), e.line, e.column)
}

/// The files whose precise data does not apply (edited or added since the run).
fn fallback_files(precise: &PreciseUsages) -> HashSet<&str> {
    precise
        .fallback_files
        .iter()
        .map(|(f, _)| f.as_str())
        .collect()
}

/// Where each site is written.
fn places<'s>(sites: impl IntoIterator<Item = &'s Site>) -> HashSet<(&'s str, u32, u32)> {
    sites.into_iter().map(Site::place).collect()
}

/// The edges precise data ties to the definition: in files whose precise data applies,
/// an edge whose site is one of the definition's precise usages (on the same line: the
/// column when it matches, else the line, since indexers count columns differently);
/// elsewhere (files edited since the run, sites the indexer left unresolved) the
/// heuristic's links.
fn precise_incoming(
    edges: &[Edge],
    heuristic: Incoming,
    precise: &PreciseUsages,
    (unresolved, unread): (&[Site], &[Site]),
) -> Incoming {
    let fallback = fallback_files(precise);
    let left = places(unresolved);
    let heuristic_answers =
        |e: &Edge| fallback.contains(e.file_path.as_str()) || left.contains(&at(e));
    let unread = places(unread);
    // At a site the indexer read but left unresolved, an open tie (a guess between
    // same-named definitions) is not taken; in files that fell back and in code the
    // indexer did not read, the heuristic answers alone.
    let heuristic_takes = |e: &Edge, tie: Tie| {
        fallback.contains(e.file_path.as_str())
            || unread.contains(&at(e))
            || (left.contains(&at(e)) && tie.answers_unresolved())
    };
    let mut lines: HashMap<(&str, u32), HashSet<u32>> = HashMap::new();
    for s in &precise.sites {
        lines
            .entry((s.file_path.as_str(), s.line))
            .or_default()
            .insert(s.column);
    }
    // A line's edges match by column when any does, else all of them do.
    let column_matches: HashSet<(&str, u32)> = edges
        .iter()
        .filter(|e| {
            lines
                .get(&(e.file_path.as_str(), e.line))
                .is_some_and(|c| c.contains(&e.column))
        })
        .map(|e| (e.file_path.as_str(), e.line))
        .collect();
    let precise_site = |e: &Edge| match lines.get(&(e.file_path.as_str(), e.line)) {
        Some(columns) => {
            columns.contains(&e.column) || !column_matches.contains(&(e.file_path.as_str(), e.line))
        }
        None => false,
    };
    let mut links: Vec<(Edge, Tie)> = heuristic
        .links
        .into_iter()
        .filter(|(e, tie)| heuristic_takes(e, *tie))
        .collect();
    links.extend(
        edges
            .iter()
            .filter(|e| !heuristic_answers(e) && precise_site(e))
            .map(|e| (e.clone(), Tie::Exact)),
    );
    links.sort_by(|(a, _), (b, _)| {
        (&a.file_path, a.line, a.column).cmp(&(&b.file_path, b.line, b.column))
    });
    let mut fallback_files: Vec<String> = fallback.iter().map(|f| f.to_string()).collect();
    fallback_files.sort();
    Incoming {
        links,
        unrelated: heuristic
            .unrelated
            .into_iter()
            .filter(|e| heuristic_answers(e))
            .collect(),
        provenance: Provenance {
            precision: precise.precision.clone(),
            fallback_files,
            unresolved: edges.iter().filter(|e| left.contains(&at(e))).count(),
            note: None,
        },
    }
}

/// Among same-named candidates, the trait item all the others implement, if any: a call
/// that could reach any of them is a call of the trait's operation.
fn trait_item_of(names: &NameIndex, set: &[usize]) -> Option<usize> {
    let implementors: HashMap<&str, &str> = names
        .sites
        .iter()
        .filter(|s| s.kind == "implements")
        .filter_map(|s| Some((s.enclosing_symbol.as_str(), s.qualifier.as_deref()?)))
        .collect();
    let traits: Vec<usize> = set
        .iter()
        .copied()
        .filter(|&i| {
            names.defs[i]
                .owner
                .as_deref()
                .is_some_and(|o| names.scope.trait_owners.contains(o))
        })
        .collect();
    let [t] = traits.as_slice() else {
        return None;
    };
    let owner = names.defs[*t].owner.as_deref()?;
    set.iter()
        .all(|&i| {
            i == *t || implementors.get(names.defs[i].qualified_name.as_str()) == Some(&owner)
        })
        .then_some(*t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Site;
    use crate::testing::{MemHost, def};

    fn edge(kind: &str, from: &str, to: &str, q: Option<&str>, site: &str, file: &str) -> Edge {
        Edge {
            kind: kind.into(),
            from_symbol: from.into(),
            to_name: to.into(),
            to_qualifier: q.map(Into::into),
            site_kind: site.into(),
            file_path: file.into(),
            line: 1,
            column: 1,
        }
    }

    #[test]
    fn at_unresolved_sites_only_ties_that_decide_are_taken() {
        let at = |line: u32, file: &str| Edge {
            line,
            ..edge("call", "k::f", "total", None, "method_call", file)
        };
        let site = |line: u32, file: &str| Site {
            file_path: file.into(),
            line,
            column: 1,
            ..Site::default()
        };
        // a.py:1 precise; a.py:2 and a.py:3 unresolved (one tied by name, one open);
        // b.py fell back: its open tie stays, as in a heuristic answer.
        let edges = vec![at(1, "a.py"), at(2, "a.py"), at(3, "a.py"), at(1, "b.py")];
        let heuristic = Incoming {
            links: vec![
                (at(2, "a.py"), Tie::NameOnly),
                (at(3, "a.py"), Tie::Open),
                (at(1, "b.py"), Tie::Open),
            ],
            unrelated: Vec::new(),
            provenance: Provenance::default(),
        };
        let precise = PreciseUsages {
            precision: "mixed".into(),
            sites: vec![site(1, "a.py")],
            fallback_files: vec![("b.py".into(), "edited since the precise run".into())],
            note: None,
        };
        let unresolved = [site(2, "a.py"), site(3, "a.py")];
        let inc = precise_incoming(&edges, heuristic.clone(), &precise, (&unresolved, &[]));
        let kept: Vec<(&str, u32, Tie)> = inc
            .links
            .iter()
            .map(|(e, t)| (e.file_path.as_str(), e.line, *t))
            .collect();
        assert_eq!(
            kept,
            [
                ("a.py", 1, Tie::Exact),
                ("a.py", 2, Tie::NameOnly),
                ("b.py", 1, Tie::Open)
            ]
        );
        assert_eq!(inc.provenance.unresolved, 2);
        assert_eq!(inc.provenance.fallback_files, ["b.py"]);
        // a.py:3 in code the indexer did not read: its open tie is taken, as in b.py.
        let inc = precise_incoming(
            &edges,
            heuristic.clone(),
            &precise,
            (&unresolved, &unresolved[1..]),
        );
        assert!(
            inc.links
                .iter()
                .any(|(e, t)| e.line == 3 && *t == Tie::Open)
        );
        // Nothing fell back, unresolved or unread: the heuristic's links change nothing,
        // which is why `incoming` skips its attribution there.
        let whole = PreciseUsages {
            precision: "precise".into(),
            fallback_files: Vec::new(),
            ..precise
        };
        let with = precise_incoming(&edges, heuristic, &whole, (&[], &[]));
        let without = precise_incoming(&edges, Incoming::default(), &whole, (&[], &[]));
        let lines = |i: &Incoming| {
            i.links
                .iter()
                .map(|(e, t)| (e.file_path.clone(), e.line, *t))
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(&with), [("a.py".to_string(), 1, Tie::Exact)]);
        assert_eq!(lines(&with), lines(&without));
        assert!(with.unrelated.is_empty() && without.unrelated.is_empty());
    }

    fn shapes() -> MemHost {
        let implements = |owner: &str| {
            (
                "area".to_string(),
                Site {
                    file_path: "src/s.rs".into(),
                    line: 1,
                    column: 1,
                    kind: "implements".into(),
                    qualifier: Some("Shape".into()),
                    enclosing_symbol: format!("k::{owner}::area"),
                    line_text: None,
                },
            )
        };
        let named = |name: &str, file: &str| {
            (
                name.to_string(),
                Site {
                    file_path: file.into(),
                    kind: "type".into(),
                    enclosing_symbol: "k::x".into(),
                    ..Site::default()
                },
            )
        };
        MemHost {
            symbols: vec![
                def("k::Shape", "trait", None, "src/s.rs"),
                def("k::Shape::area", "method", Some("Shape"), "src/s.rs"),
                def("k::Circle::area", "method", Some("Circle"), "src/s.rs"),
                def("k::Square::area", "method", Some("Square"), "src/s.rs"),
                def("k::Circle::new", "method", Some("Circle"), "src/s.rs"),
                def("k::total", "function", None, "src/lib.rs"),
                def("k::len", "method", Some("Buf"), "src/buf.rs"),
            ],
            edges: vec![
                edge(
                    "calls",
                    "k::total",
                    "area",
                    None,
                    "method_call",
                    "src/lib.rs",
                ),
                edge(
                    "calls",
                    "k::total",
                    "new",
                    Some("Circle"),
                    "call",
                    "src/lib.rs",
                ),
                edge(
                    "calls",
                    "k::total",
                    "push",
                    None,
                    "method_call",
                    "src/lib.rs",
                ),
                edge(
                    "calls",
                    "k::total",
                    "len",
                    None,
                    "method_call",
                    "src/lib.rs",
                ),
                edge("implements", "k::Circle", "Shape", None, "type", "src/s.rs"),
            ],
            sites: vec![
                implements("Circle"),
                implements("Square"),
                named("Shape", "src/lib.rs"),
                named("Circle", "src/lib.rs"),
            ],
            ..MemHost::default()
        }
    }

    #[test]
    fn outgoing_edges_lead_to_definitions_trait_items_or_nothing() {
        let host = shapes();
        let mut g = CallGraph::new(&host);
        let out = g.outgoing("k::total", CALL_KINDS).unwrap();
        let shown: Vec<(String, String)> = out
            .iter()
            .map(|(e, t)| {
                let t = match t {
                    Target::Def(d, tie) => format!("{} {tie:?}", d.qualified_name),
                    Target::Open(c) => format!("open {}", c.len()),
                    Target::External => "external".into(),
                };
                (e.to_name.clone(), t)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("area".into(), "k::Shape::area Open".into()),
                ("new".into(), "k::Circle::new Exact".into()),
                ("push".into(), "external".into()),
                // `Buf::len` is the only `len`, but lib.rs never names `Buf`.
                ("len".into(), "external".into()),
            ]
        );
        // Implements edges are not calls.
        assert!(g.outgoing("k::Circle", CALL_KINDS).unwrap().is_empty());
        assert_eq!(g.outgoing("k::Circle", IMPACT_KINDS).unwrap().len(), 1);
    }

    #[test]
    fn incoming_edges_are_tied_to_the_definition_asked_about() {
        let host = shapes();
        let mut g = CallGraph::new(&host);
        let new = g.symbol("k::Circle::new").unwrap().unwrap();
        let inc = g.incoming(&new, CALL_KINDS).unwrap();
        assert_eq!(inc.links.len(), 1);
        assert_eq!(inc.links[0].0.from_symbol, "k::total");
        assert_eq!(inc.links[0].1, Tie::Exact);
        // `x.area()` in lib.rs could be Circle's (lib.rs names Circle), not Square's.
        let area = g.symbol("k::Circle::area").unwrap().unwrap();
        let inc = g.incoming(&area, CALL_KINDS).unwrap();
        assert_eq!(inc.links.len(), 1);
        assert_eq!(inc.links[0].1, Tie::Open);
        let area = g.symbol("k::Square::area").unwrap().unwrap();
        let inc = g.incoming(&area, CALL_KINDS).unwrap();
        assert!(inc.links.is_empty());
        assert_eq!(inc.unrelated.len(), 1);
        assert_eq!(inc.unrelated[0].from_symbol, "k::total");
        let shape = g.symbol("k::Shape").unwrap().unwrap();
        assert!(g.incoming(&shape, CALL_KINDS).unwrap().links.is_empty());
        let inc = g.incoming(&shape, IMPACT_KINDS).unwrap();
        assert_eq!(inc.links[0].0.from_symbol, "k::Circle");
        assert!(g.symbol("k::nothing").unwrap().is_none());
    }

    /// A [`MemHost`] noting which names' sites and edges are read.
    struct Counting<'a> {
        mem: &'a MemHost,
        reads: std::cell::RefCell<Vec<String>>,
    }

    impl Host for Counting<'_> {
        fn symbols_by_name(&self, name: &str) -> ToolResult<Vec<Sym>> {
            self.mem.symbols_by_name(name)
        }
        fn symbols_by_qualified_name(&self, q: &str) -> ToolResult<Vec<Sym>> {
            self.mem.symbols_by_qualified_name(q)
        }
        fn references_to_name(&self, name: &str, t: bool) -> ToolResult<Vec<Site>> {
            self.reads.borrow_mut().push(format!("sites {name}"));
            self.mem.references_to_name(name, t)
        }
        fn edges_to(&self, name: &str) -> ToolResult<Vec<Edge>> {
            self.reads.borrow_mut().push(format!("edges {name}"));
            self.mem.edges_to(name)
        }
    }

    #[test]
    fn definitions_of_one_name_share_its_sites_scope_and_attributions() {
        let mem = shapes();
        let host = Counting {
            mem: &mem,
            reads: Default::default(),
        };
        let mut shared = CallGraph::new(&host);
        let names = ["k::Circle::area", "k::Square::area", "k::Shape::area"];
        let mut answers = Vec::new();
        for q in names {
            let d = shared.symbol(q).unwrap().unwrap();
            answers.push(shared.incoming(&d, CALL_KINDS).unwrap());
        }
        // One read of `area`'s sites and one of its edges for the three definitions:
        // their scopes look up the same owners.
        let area: Vec<String> = host
            .reads
            .borrow()
            .iter()
            .filter(|r| r.ends_with(" area"))
            .cloned()
            .collect();
        assert_eq!(area, ["sites area", "edges area"]);
        // Each answer is the one a graph asked about that definition alone gives.
        for (q, shared_answer) in names.iter().zip(&answers) {
            let mut alone = CallGraph::new(&mem);
            let d = alone.symbol(q).unwrap().unwrap();
            assert_eq!(
                &alone.incoming(&d, CALL_KINDS).unwrap(),
                shared_answer,
                "{q}"
            );
        }
        assert_eq!(answers[0].links.len(), 1);
        assert_eq!(answers[1].unrelated.len(), 1);
    }
}
