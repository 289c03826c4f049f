//! SCIP symbol strings parsed into the `scip` crate's [`Symbol`], the same value its
//! `scip::symbol::parse_symbol` gives, at a fraction of the cost.
//!
//! Hand-written, and why: `scip` 0.10.0's parser (the newest release, and its main
//! branch) formats its whole state with `Debug` (the symbol as a list of `char`s) for the
//! error message of every plain descriptor, before it knows whether there is an error.
//! Parsing tokio's 11,523 precise symbols that way was most of the first precise answer
//! of a new process (docs/learnings/scale.md, stop 48), and answers and stores parse a
//! symbol per occurrence. This parser follows the same grammar, and its tests hold it to
//! the crate's parser as the oracle on hand-picked and generated strings.
//!
//! The grammar (SCIP's `Symbol`): `local <id>`, or `<scheme> <manager> <name> <version>`
//! (each space-terminated, a doubled space an escaped one; `.` an empty field) followed
//! by descriptors: `(param)`, `[TypeParam]`, or a name followed by `/` (package), `.`
//! (term), `#` (type), `:` (meta), `!` (macro) or `(disambiguator).` (method). A name is
//! a run of letters, ASCII digits, `-`, `+`, `$`, `_`, or backtick-quoted with doubled
//! backticks for one.

use protobuf::{MessageField, SpecialFields};
use scip::types::descriptor::Suffix;
use scip::types::{Descriptor, Package, Symbol};

/// `symbol` parsed, or `None` where `scip::symbol::parse_symbol` gives an error.
pub fn parse_symbol(symbol: &str) -> Option<Symbol> {
    if let Some(id) = symbol.strip_prefix("local ") {
        let simple = |c: char| c.is_alphanumeric() || matches!(c, '$' | '+' | '-' | '_');
        if id.is_empty() || !id.chars().all(simple) {
            return None;
        }
        return Some(Symbol {
            scheme: "local".into(),
            package: MessageField::none(),
            descriptors: vec![descriptor(id.into(), Suffix::Local, String::new())],
            special_fields: SpecialFields::default(),
        });
    }
    let mut p = Parser {
        chars: symbol.chars().collect(),
        at: 0,
    };
    let scheme = p.escaped(' ')?;
    let dot = |s: String| if s == "." { String::new() } else { s };
    let manager = dot(p.escaped(' ')?);
    let name = dot(p.escaped(' ')?);
    let version = dot(p.escaped(' ')?);
    let package = if manager.is_empty() && name.is_empty() && version.is_empty() {
        MessageField::none()
    } else {
        MessageField::some(Package {
            manager,
            name,
            version,
            special_fields: SpecialFields::default(),
        })
    };
    let mut descriptors = Vec::new();
    while p.at < p.chars.len() {
        descriptors.push(p.descriptor()?);
    }
    Some(Symbol {
        scheme,
        package,
        descriptors,
        special_fields: SpecialFields::default(),
    })
}

fn descriptor(name: String, suffix: Suffix, disambiguator: String) -> Descriptor {
    Descriptor {
        name,
        disambiguator,
        suffix: suffix.into(),
        special_fields: SpecialFields::default(),
    }
}

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn current(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// Consumes `c`, or fails.
    fn expect(&mut self, c: char) -> Option<()> {
        (self.current()? == c).then(|| self.at += 1)
    }

    /// Characters up to a lone `end` (consumed); a doubled `end` is one of them. Running
    /// off the end fails.
    fn escaped(&mut self, end: char) -> Option<String> {
        let mut out = String::new();
        while let Some(c) = self.current() {
            self.at += 1;
            if c == end {
                if self.current()? != end {
                    return Some(out);
                }
                self.at += 1;
            }
            out.push(c);
        }
        None
    }

    /// A backtick-quoted name, or a non-empty run of name characters.
    fn name(&mut self) -> Option<String> {
        if self.current()? == '`' {
            self.at += 1;
            return self.escaped('`');
        }
        let start = self.at;
        while let Some(c) = self.current() {
            if !(c.is_alphabetic() || c.is_ascii_digit() || matches!(c, '-' | '+' | '$' | '_')) {
                break;
            }
            self.at += 1;
        }
        (self.at > start).then(|| self.chars[start..self.at].iter().collect())
    }

    fn descriptor(&mut self) -> Option<Descriptor> {
        match self.current()? {
            '(' => {
                self.at += 1;
                let name = self.name()?;
                self.expect(')')?;
                Some(descriptor(name, Suffix::Parameter, String::new()))
            }
            '[' => {
                self.at += 1;
                let name = self.name()?;
                self.expect(']')?;
                Some(descriptor(name, Suffix::TypeParameter, String::new()))
            }
            _ => {
                let name = self.name()?;
                let suffix = self.current()?;
                self.at += 1;
                let simple = |suffix| Some(descriptor(name.clone(), suffix, String::new()));
                match suffix {
                    '(' => {
                        let disambiguator = match self.current()? {
                            ')' => String::new(),
                            _ => self.name()?,
                        };
                        self.expect(')')?;
                        self.expect('.')?;
                        Some(descriptor(name, Suffix::Method, disambiguator))
                    }
                    '/' => simple(Suffix::Package),
                    '.' => simple(Suffix::Term),
                    '#' => simple(Suffix::Type),
                    ':' => simple(Suffix::Meta),
                    '!' => simple(Suffix::Macro),
                    _ => None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_the_crate(s: &str) {
        assert_eq!(parse_symbol(s), scip::symbol::parse_symbol(s).ok(), "{s:?}");
    }

    #[test]
    fn symbols_parse_as_the_scip_crate_parses_them() {
        for s in [
            "rust-analyzer cargo tokio 1.0.0 runtime/Runtime#spawn().",
            "rust-analyzer cargo tokio 1.0.0 io/impl#[File][AsyncWrite]poll_write().",
            "rust-analyzer cargo tokio 1.0.0 io/impl#[`Tasks<S>`][AsyncWrite]poll_write().",
            "rust-analyzer cargo std . macros/println!",
            "rust-analyzer cargo a 0.1.0 MyType#new(test).",
            "rust-analyzer cargo a 0.1.0 MyType#new(+1).",
            "lsif-java maven package 1.0.0 java/io/File#Entry.method(+1).(param)[TypeParam]",
            "scip-python python click 8.1.7 `click.core`/Context#invoke().",
            "scip-python python click 8.1.7 `a``b`/x.",
            "scip-typescript npm rxjs 7.8.1 `internal/operators/map.ts`/map().",
            "scip-ctags . . . foo.",
            "a b c d `e f`.",
            "a  b c d e f.",
            "a b  c d e. f.",
            "meta . . . x:",
            "go gomod example.com/m v1 `example.com/m/pkg`/Type#Method().",
            "rust-analyzer cargo é 1 ünï/ŧype#",
            "local 12",
            "local a_b$",
            "local ",
            "local a b",
            "local é",
            "",
            "a",
            "a b c d",
            "a b c d ",
            "a b c d x",
            "a b c d x;",
            "a b c d x(",
            "a b c d x(y",
            "a b c d x(y)",
            "a b c d (p",
            "a b c d [T",
            "a b c d `unterminated",
            "a b c d ``.",
            "a b c d x().y#z/",
            "a b c d 1.",
            "a b c d ٣.",
        ] {
            same_as_the_crate(s);
        }
    }

    const HEADS: &[&str] = &[
        "rust-analyzer cargo c 1 ",
        "scip-python python click . ",
        "a  b c d e ",
        ". . . . ",
        "",
    ];
    const NAMES: &[&str] = &["a", "Zz", "1", "é", "٣", "_$+-", "`x y`", "`a``b`", "``"];
    const SUFFIXES: &[&str] = &["/", ".", "#", ":", "!", "().", "(a).", "(+1).", "()"];
    const NOISE: &[&str] = &[
        " ", "  ", ".", "#", "(", ")", "[", "]", "`", ";", "<", "(p)", "[T]", "(`a b`)", "local ",
    ];

    /// A head, then pieces: mostly a name and a suffix, sometimes noise.
    fn strings() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let piece = prop_oneof![
            3 => (prop::sample::select(NAMES), prop::sample::select(SUFFIXES))
                .prop_map(|(n, s)| format!("{n}{s}")),
            1 => prop::sample::select(NOISE).prop_map(str::to_string),
        ];
        (
            prop::sample::select(HEADS),
            prop::collection::vec(piece, 0..6),
        )
            .prop_map(|(head, pieces)| format!("{head}{}", pieces.concat()))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]
        /// Strings drawn from the grammar's pieces with noise mixed in, many of them
        /// not symbols at all: each parses to the crate's value, or fails where it fails.
        #[test]
        fn generated_strings_parse_as_the_scip_crate_parses_them(s in strings()) {
            proptest::prop_assert_eq!(parse_symbol(&s), scip::symbol::parse_symbol(&s).ok());
        }
    }

    /// The generated strings exercise both sides: many symbols, many failures.
    #[test]
    fn the_generated_strings_are_symbols_and_not() {
        use proptest::strategy::{Strategy, ValueTree};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let parsed = (0..2_000)
            .filter(|_| {
                let s = strings().new_tree(&mut runner).unwrap().current();
                parse_symbol(&s).is_some()
            })
            .count();
        assert!((400..1_600).contains(&parsed), "{parsed} of 2,000 parsed");
    }
}
