//! Graph edges of one file: the extractor's own (implementations, constructions,
//! re-exports) plus calls, which every language records as `call` / `method_call`
//! references. Only the extractor's own are stored; the database reads the call
//! references as edges with the same rule ([`crate::lang::call_edge_kind`], ADR 0013).

use crate::model::{Edge, EdgeKind, FileSymbols, ReferenceKind};

/// Every edge of an extracted file, in source order: what a graph read of the stored
/// file gives.
pub fn file_edges(language: &str, file: &FileSymbols) -> Vec<Edge> {
    let mut edges = file.edges.clone();
    for r in &file.references {
        if !matches!(r.kind, ReferenceKind::Call | ReferenceKind::MethodCall) {
            continue;
        }
        let kind = match crate::lang::call_edge_kind(language, r.kind.as_str(), &r.name) {
            "instantiates" => EdgeKind::Instantiates,
            _ => EdgeKind::Calls,
        };
        edges.push(Edge::at(kind, &r.enclosing_symbol, r));
    }
    edges.sort_by_key(|e| (e.line, e.column));
    edges
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
