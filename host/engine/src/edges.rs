//! Graph edges of one file: the extractor's own (implementations, constructions,
//! re-exports) plus calls, which every language records as `call` / `method_call`
//! references and which are derived here once for all of them.

use crate::model::{Edge, EdgeKind, FileSymbols, ReferenceKind};

/// Every edge of an extracted file, in source order.
///
/// A plain call whose name starts with an upper-case letter constructs a tuple struct,
/// a variant or a class (`Some(x)`, `Point(1, 2)`, `Parser()`), except in Go, where an
/// upper-case name is merely exported.
pub fn file_edges(language: &str, file: &FileSymbols) -> Vec<Edge> {
    let mut edges = file.edges.clone();
    for r in &file.references {
        let kind = match r.kind {
            ReferenceKind::Call if language != "go" && starts_upper(&r.name) => {
                EdgeKind::Instantiates
            }
            ReferenceKind::Call | ReferenceKind::MethodCall => EdgeKind::Calls,
            _ => continue,
        };
        edges.push(Edge::at(kind, &r.enclosing_symbol, r));
    }
    edges.sort_by_key(|e| (e.line, e.column));
    edges
}

fn starts_upper(name: &str) -> bool {
    name.chars().next().is_some_and(char::is_uppercase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rust_lang;

    fn rows(
        language: &str,
        fs: &FileSymbols,
    ) -> Vec<(String, String, String, Option<String>, u32)> {
        file_edges(language, fs)
            .into_iter()
            .map(|e| {
                (
                    e.kind.as_str().to_string(),
                    e.from_symbol,
                    e.to_name,
                    e.to_qualifier,
                    e.line,
                )
            })
            .collect()
    }

    fn s(x: &str) -> String {
        x.to_string()
    }

    #[test]
    fn rust_edges_cover_calls_implementations_constructions_and_reexports() {
        let src = "\
pub use inner::{Shape, area};
use std::fmt;
pub struct Point { x: i32 }
pub struct Wrap(i32);
impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, \"p\") }
}
fn make() -> Point {
    let w = Wrap(1);
    helper(w.0);
    Point { x: 2 }.shift()
}
";
        let fs = rust_lang::extract(src, &[s("demo")]);
        let got = rows("rust", &fs);
        let want = vec![
            (s("reexports"), s("demo"), s("Shape"), Some(s("inner")), 1),
            (s("reexports"), s("demo"), s("area"), Some(s("inner")), 1),
            (
                s("implements"),
                s("demo::Point"),
                s("Display"),
                Some(s("fmt")),
                5,
            ),
            (s("instantiates"), s("demo::make"), s("Wrap"), None, 9),
            (s("calls"), s("demo::make"), s("helper"), None, 10),
            (s("instantiates"), s("demo::make"), s("Point"), None, 11),
            (
                s("calls"),
                s("demo::make"),
                s("shift"),
                Some(s("Point")),
                11,
            ),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn private_uses_are_not_reexports_and_go_calls_stay_calls() {
        let fs = rust_lang::extract("use a::B;\nfn f() { B::new(); }\n", &[s("demo")]);
        let got = rows("rust", &fs);
        assert_eq!(
            got,
            vec![(s("calls"), s("demo::f"), s("new"), Some(s("B")), 2)]
        );

        let mut go = FileSymbols::default();
        go.references.push(crate::model::Reference {
            name: s("NewServer"),
            kind: ReferenceKind::Call,
            line: 3,
            column: 2,
            qualifier: None,
            enclosing_symbol: s("main::run"),
        });
        assert_eq!(rows("go", &go)[0].0, "calls");
        assert_eq!(rows("python", &go)[0].0, "instantiates");
    }
}
