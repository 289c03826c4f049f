//! A Rust trait item's family in rust-analyzer's SCIP data: the trait item and the items
//! of the impls that implement it (ADR 0031).
//!
//! rust-analyzer writes an impl's item as a symbol of its own,
//! `…/impl#[SelfType][Trait]item().`, and no relationship to the trait item
//! (`…/Trait#item().`). A call on a concrete type is an occurrence of the impl's item, a
//! call through a generic bound or `dyn Trait` one of the trait item, and a path to an
//! associated type (`Self::Out`, `T::Out`) is always the trait item's. Its references
//! (the truth an agent compares with) are the family's:
//! - a trait item's usages are every member's usages, and the members' definitions;
//! - an impl's associated type answers for its trait item (nothing names the impl's own);
//! - an impl's method or constant keeps its own usages (a call on that type).
//!
//! Members are found by their symbols' text (the trait's name and the item descriptor)
//! in the trait's package; a trait name that more than one trait of the package has
//! with that item is left alone (nothing tells their impls apart).

use std::collections::HashMap;

use scip::types::Descriptor;
use scip::types::descriptor::Suffix;

use super::symbols::Symbols;

/// The symbols each family pattern can match, by the name that pattern's own check
/// insists on, built once per precise generation (one parse of every Rust symbol). A
/// family is then a few look-ups and pattern checks over their candidates instead of up
/// to five scans of every symbol: about 1 ms per definition on tokio, paid by the first
/// call that weighs each of a common name's definitions.
///
/// Architecture invariant: each list holds, in id order, every symbol the check after
/// its pattern could accept, so a look-up answers exactly what the scan did.
#[derive(Debug, Default)]
pub struct Index {
    /// Types no impl holds, by name ([`Parsed::names_type`]).
    types: HashMap<String, Vec<usize>>,
    /// Impl blocks, by their self type's name before any `<` ([`Parsed::impl_block`]).
    impl_blocks: HashMap<String, Vec<usize>>,
    /// Impls' items, by the bare name of the trait implemented ([`Parsed::implemented`]).
    impl_items: HashMap<String, Vec<usize>>,
    /// Trait items, by their owner's name ([`Parsed::trait_item`]).
    trait_items: HashMap<String, Vec<usize>>,
}

impl Index {
    pub fn new(symbols: &Symbols) -> Index {
        let mut index = Index::default();
        for (at, (_, symbol)) in symbols.rows().iter().enumerate() {
            let Some(p) = Parsed::of(symbol) else {
                continue;
            };
            if let Some(last) = p.descriptors.last()
                && p.names_type(&last.name)
            {
                index.types.entry(last.name.clone()).or_default().push(at);
            }
            if let Some((_, self_ty)) = p.impl_block() {
                let bare = self_ty.split('<').next().unwrap_or_default();
                index.impl_blocks.entry(bare.into()).or_default().push(at);
            }
            if let Some((t, _)) = p.implemented() {
                index.impl_items.entry(t).or_default().push(at);
            }
            if let Some((owner, _)) = p.trait_item() {
                index.trait_items.entry(owner.into()).or_default().push(at);
            }
        }
        index
    }
}

/// The held symbols and their [`Index`], which the family look-ups read together.
#[derive(Clone, Copy)]
pub struct Lookup<'a> {
    pub symbols: &'a Symbols,
    pub index: &'a Index,
}

/// The candidates under `key` in one of the index's maps (none when absent).
fn under<'a>(map: &'a HashMap<String, Vec<usize>>, key: &str) -> &'a [usize] {
    map.get(key).map_or(&[], Vec::as_slice)
}

/// The other members of `symbol`'s family (ids), the trait item first when `symbol` is
/// an impl's associated type; empty when `symbol` is no trait item or impl assoc type.
pub fn members(symbols: Lookup, symbol: &str) -> Vec<i64> {
    let Some(parsed) = Parsed::of(symbol) else {
        return Vec::new();
    };
    if let Some((trait_name, item)) = parsed.implemented() {
        // Only an associated type answers for its trait item.
        if item.suffix.enum_value_or_default() != Suffix::Type {
            return Vec::new();
        }
        let Some((trait_id, trait_symbol)) =
            single_trait_item(symbols, &parsed.package, &trait_name, item)
        else {
            return Vec::new();
        };
        let mut out = vec![trait_id];
        out.extend(
            impls_of(symbols, &trait_symbol)
                .into_iter()
                .filter(|(_, s)| s != symbol)
                .map(|(id, _)| id),
        );
        return out;
    }
    let Some((owner, item)) = parsed.trait_item() else {
        return Vec::new();
    };
    // A field or variant (`Type#field.`) has no impls: the cheap answer first.
    let impls = impls_of(symbols, symbol);
    if impls.is_empty()
        || single_trait_item(symbols, &parsed.package, owner, item).is_none_or(|(_, s)| s != symbol)
    {
        return Vec::new();
    }
    impls.into_iter().map(|(id, _)| id).collect()
}

/// The impl blocks whose self type is the type `symbol` (`…/impl#[T]`,
/// `…/impl#[T][Trait]`, `…/impl#[`T<S>`][..]`): rust-analyzer writes each `Self` in them
/// as an occurrence of the block, so their occurrences are the type's `Self` uses. When
/// the package has more than one type of that name, only blocks in the type's module.
pub fn impl_blocks(symbols: Lookup, symbol: &str) -> Vec<i64> {
    let Some(parsed) = Parsed::of(symbol) else {
        return Vec::new();
    };
    let [.., ty] = &parsed.descriptors[..] else {
        return Vec::new();
    };
    if ty.suffix.enum_value_or_default() != Suffix::Type
        || parsed.descriptors.iter().any(|d| d.name == "impl")
    {
        return Vec::new();
    }
    let name = ty.name.as_str();
    let module = &parsed.descriptors[..parsed.descriptors.len() - 1];
    let same_named = symbols
        .symbols
        .like_among(
            &format!("{} %{name}#", parsed.package),
            under(&symbols.index.types, name),
        )
        .iter()
        .filter(|(_, s)| Parsed::of(s).is_some_and(|p| p.names_type(name)))
        .count();
    let mut out = Vec::new();
    for pattern in [
        format!("{} %impl#[{name}]%", parsed.package),
        format!("{} %impl#[`{name}<%", parsed.package),
    ] {
        let among = under(&symbols.index.impl_blocks, name);
        for (id, s) in symbols.symbols.like_among(&pattern, among) {
            let Some(p) = Parsed::of(&s) else { continue };
            let Some((at, self_ty)) = p.impl_block() else {
                continue;
            };
            let bare = self_ty.split('<').next().unwrap_or_default();
            let in_module = same_path(&p.descriptors[..at], module);
            if bare == name && (same_named <= 1 || in_module) && !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// The impl items implementing the trait item `trait_symbol`, in its package.
fn impls_of(symbols: Lookup, trait_symbol: &str) -> Vec<(i64, String)> {
    let Some(parsed) = Parsed::of(trait_symbol) else {
        return Vec::new();
    };
    let Some((owner, item)) = parsed.trait_item() else {
        return Vec::new();
    };
    let tail = item_text(trait_symbol, owner);
    let mut found = Vec::new();
    // A generic trait is written with its arguments, in backticks: [`From<u8>`].
    for pattern in [
        format!("{} %][{owner}]{tail}", parsed.package),
        format!("{} %][`{owner}<%]{tail}", parsed.package),
    ] {
        let among = under(&symbols.index.impl_items, owner);
        for (id, s) in symbols.symbols.like_among(&pattern, among) {
            let implements = Parsed::of(&s)
                .and_then(|p| p.implemented().map(|(t, i)| t == owner && same(i, item)))
                .unwrap_or(false);
            if implements && !found.iter().any(|(f, _)| *f == id) {
                found.push((id, s));
            }
        }
    }
    found
}

/// The package's one trait item `owner#item` (id, symbol); none when there are none or
/// several (two traits of one name in different modules).
fn single_trait_item(
    symbols: Lookup,
    package: &str,
    owner: &str,
    item: &Descriptor,
) -> Option<(i64, String)> {
    let mut found = Vec::new();
    let tail = format!("{owner}#{}", descriptor_text(item));
    for pattern in [format!("{package} {tail}"), format!("{package} %/{tail}")] {
        let among = under(&symbols.index.trait_items, owner);
        for (id, s) in symbols.symbols.like_among(&pattern, among) {
            let exact = Parsed::of(&s)
                .and_then(|p| p.trait_item().map(|(o, i)| o == owner && same(i, item)))
                .unwrap_or(false);
            if exact && !found.iter().any(|(f, _)| *f == id) {
                found.push((id, s));
            }
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// A SCIP symbol of rust-analyzer's, split into its package (`scheme manager name
/// version`) and descriptors.
struct Parsed {
    package: String,
    descriptors: Vec<Descriptor>,
}

impl Parsed {
    fn of(symbol: &str) -> Option<Parsed> {
        if !symbol.starts_with("rust-analyzer ") {
            return None;
        }
        let parsed = scryer_engine::precise::symbol::parse_symbol(symbol)?;
        let package: Vec<&str> = symbol.splitn(5, ' ').take(4).collect();
        Some(Parsed {
            package: package.join(" "),
            descriptors: parsed.descriptors,
        })
    }

    /// `impl#[Self][Trait]item`: (the trait's name without path or arguments, item).
    fn implemented(&self) -> Option<(String, &Descriptor)> {
        let [.., imp, _self_ty, tr, item] = &self.descriptors[..] else {
            return None;
        };
        let is_impl = imp.name == "impl" && imp.suffix.enum_value_or_default() == Suffix::Type;
        let params = [_self_ty, tr]
            .iter()
            .all(|d| d.suffix.enum_value_or_default() == Suffix::TypeParameter);
        if !is_impl || !params || !is_item(item) {
            return None;
        }
        let bare = tr.name.split('<').next().unwrap_or_default();
        let bare = bare.rsplit("::").next().unwrap_or_default().trim();
        Some((bare.to_string(), item))
    }

    /// `…/impl#[Self]` or `…/impl#[Self][Trait]`: (where `impl` is among the
    /// descriptors, the self type as written).
    fn impl_block(&self) -> Option<(usize, &str)> {
        let d = &self.descriptors;
        let is_param = |x: &Descriptor| x.suffix.enum_value_or_default() == Suffix::TypeParameter;
        let at = d
            .iter()
            .rposition(|x| x.name == "impl" && x.suffix.enum_value_or_default() == Suffix::Type)?;
        let params = &d[at + 1..];
        (matches!(params.len(), 1 | 2) && params.iter().all(is_param))
            .then(|| (at, params[0].name.as_str()))
    }

    /// Whether this is a type named `name` that no impl holds (a struct, enum, trait,
    /// union or type alias).
    fn names_type(&self, name: &str) -> bool {
        self.descriptors
            .last()
            .is_some_and(|l| l.name == name && l.suffix.enum_value_or_default() == Suffix::Type)
            && !self.descriptors.iter().any(|d| d.name == "impl")
    }

    /// `Trait#item`: (the owner's name, item), the owner a type that is no impl.
    fn trait_item(&self) -> Option<(&str, &Descriptor)> {
        let [.., owner, item] = &self.descriptors[..] else {
            return None;
        };
        let owner_is_type = owner.suffix.enum_value_or_default() == Suffix::Type;
        if !owner_is_type || owner.name == "impl" || !is_item(item) {
            return None;
        }
        Some((owner.name.as_str(), item))
    }
}

fn same_path(a: &[Descriptor], b: &[Descriptor]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

fn is_item(d: &Descriptor) -> bool {
    matches!(
        d.suffix.enum_value_or_default(),
        Suffix::Method | Suffix::Type | Suffix::Term
    )
}

fn same(a: &Descriptor, b: &Descriptor) -> bool {
    a.name == b.name && a.suffix == b.suffix && a.disambiguator == b.disambiguator
}

/// The text after `owner#` in `symbol` (the item descriptor as written).
fn item_text<'a>(symbol: &'a str, owner: &str) -> &'a str {
    let marker = format!("{owner}#");
    symbol
        .rfind(&marker)
        .map_or("", |at| &symbol[at + marker.len()..])
}

/// An item descriptor as SCIP writes it (`name().`, `Name#`, `NAME.`).
fn descriptor_text(d: &Descriptor) -> String {
    let name = if d.name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        d.name.clone()
    } else {
        format!("`{}`", d.name)
    };
    match d.suffix.enum_value_or_default() {
        Suffix::Method => format!("{name}({}).", d.disambiguator),
        Suffix::Type => format!("{name}#"),
        _ => format!("{name}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "rust-analyzer cargo demo 0.1.0";

    /// An index that offers every symbol under every key in `keys`: the look-ups then
    /// check each pattern against all symbols, as the scans before the index did.
    fn scanning(symbols: &Symbols, keys: &[&str]) -> Index {
        let all: Vec<usize> = (0..symbols.rows().len()).collect();
        let every = || -> HashMap<String, Vec<usize>> {
            keys.iter().map(|k| (k.to_string(), all.clone())).collect()
        };
        Index {
            types: every(),
            impl_blocks: every(),
            impl_items: every(),
            trait_items: every(),
        }
    }

    #[test]
    fn the_index_finds_what_scanning_every_symbol_finds() {
        let texts = [
            "io/AsyncWrite#",
            "io/AsyncWrite#poll_write().",
            "io/AsyncWrite#Out#",
            "io/impl#[`&mut T`][AsyncWrite]poll_write().",
            "net/impl#[Stream][AsyncWrite]poll_write().",
            "net/impl#[Stream][AsyncWrite]Out#",
            "net/impl#[File][AsyncWrite]Out#",
            "net/Stream#",
            "net/impl#[Stream]",
            "net/impl#[Stream][AsyncWrite]",
            "net/impl#[`Tasks<S>`][`AsRef<Self>`]",
            "net/Tasks#",
            "other/Stream#",
            "other/impl#[Stream]",
            "conv/impl#[S][`From<u8>`]from().",
            "conv/impl#[T][`From<u16>`]from().",
            "conv/From#from().",
            "conv/Into#into().",
            "two/a/Read#read().",
            "two/b/Read#read().",
            "two/impl#[S][Read]read().",
        ];
        let symbols = Symbols::new(
            texts
                .iter()
                .enumerate()
                .map(|(i, t)| (i as i64 + 1, format!("{P} {t}")))
                .collect(),
        );
        let index = Index::new(&symbols);
        let keys = [
            "AsyncWrite",
            "Stream",
            "File",
            "Tasks",
            "`Tasks",
            "T",
            "S",
            "From",
            "Into",
            "Read",
            "Out",
        ];
        let scan = scanning(&symbols, &keys);
        let fast = Lookup {
            symbols: &symbols,
            index: &index,
        };
        let slow = Lookup {
            symbols: &symbols,
            index: &scan,
        };
        let mut found = 0;
        for (_, s) in symbols.rows() {
            assert_eq!(members(fast, s), members(slow, s), "members of {s}");
            assert_eq!(
                impl_blocks(fast, s),
                impl_blocks(slow, s),
                "impl blocks of {s}"
            );
            found += members(fast, s).len() + impl_blocks(fast, s).len();
        }
        // Not vacuous: the trait items and types above have families.
        assert!(found >= 8, "{found}");
        assert_eq!(
            members(fast, &format!("{P} io/AsyncWrite#poll_write().")),
            [4, 5]
        );
        assert_eq!(impl_blocks(fast, &format!("{P} net/Stream#")), [9, 10]);
    }

    #[test]
    fn impl_items_and_trait_items_are_told_apart() {
        let imp = Parsed::of(&format!("{P} io/impl#[`&mut T`][AsyncWrite]poll_write().")).unwrap();
        let (t, item) = imp.implemented().unwrap();
        assert_eq!(
            (t.as_str(), item.name.as_str()),
            ("AsyncWrite", "poll_write")
        );
        assert!(imp.trait_item().is_none());
        let generic = Parsed::of(&format!("{P} s/impl#[S][`TryFrom<net::S>`]Error#")).unwrap();
        assert_eq!(generic.implemented().unwrap().0, "TryFrom");
        let inherent = Parsed::of(&format!("{P} s/impl#[S]from_std().")).unwrap();
        assert!(inherent.implemented().is_none() && inherent.trait_item().is_none());
        let tr = Parsed::of(&format!("{P} io/AsyncWrite#poll_write().")).unwrap();
        let (o, item) = tr.trait_item().unwrap();
        assert_eq!(
            (o, descriptor_text(item).as_str()),
            ("AsyncWrite", "poll_write().")
        );
        assert_eq!(
            item_text(&format!("{P} io/AsyncWrite#poll_write()."), "AsyncWrite"),
            "poll_write()."
        );
        assert!(Parsed::of("scip-python python demo 0 mod/f().").is_none());
        let block = Parsed::of(&format!("{P} net/impl#[`Tasks<S>`][`AsRef<Self>`]")).unwrap();
        assert_eq!(block.impl_block(), Some((1, "Tasks<S>")));
        assert_eq!(
            Parsed::of(&format!("{P} net/impl#[Stream]"))
                .unwrap()
                .impl_block(),
            Some((1, "Stream"))
        );
        assert!(
            Parsed::of(&format!("{P} net/impl#[Stream]f()."))
                .unwrap()
                .impl_block()
                .is_none()
        );
        assert!(
            Parsed::of(&format!("{P} net/Stream#"))
                .unwrap()
                .names_type("Stream")
        );
    }
}
