//! The router's native unit tests' fixture over the SDK's in-memory host: the demo
//! workspace's files, definitions and usage sites. Edges and dependency symbols are
//! missing until a test sets them, like a host that lacks them.

use scryer_plugin_sdk::host::{Edge, Facts, Site, Sym};
pub use scryer_plugin_sdk::testing::MemHost;

pub fn sym(
    kind: &str,
    qualified: &str,
    owner: Option<&str>,
    file: &str,
    lines: (u32, u32),
    signature: &str,
) -> Sym {
    Sym {
        name: qualified.rsplit("::").next().unwrap_or(qualified).into(),
        kind: kind.into(),
        qualified_name: qualified.into(),
        owner: owner.map(Into::into),
        file_path: file.into(),
        start_line: lines.0,
        end_line: lines.1,
        signature: signature.into(),
        docstring: None,
    }
}

pub fn site(file: &str, line: u32, kind: &str, qualifier: Option<&str>, enclosing: &str) -> Site {
    Site {
        file_path: file.into(),
        line,
        column: 1,
        kind: kind.into(),
        qualifier: qualifier.map(Into::into),
        enclosing_symbol: enclosing.into(),
        line_text: None,
    }
}

/// The fixture workspace of the end-to-end tests (`tests/fixtures/workspace`, crate
/// `demo`), as the Rust extractor indexes it: its files, definitions and the usage sites
/// the contract and scope logic reads.
pub fn demo() -> MemHost {
    let mut h = MemHost::default()
        .lacking("edges")
        .lacking("dependencies")
        .with_file("src/lib.rs", LIB)
        .with_file("src/shapes.rs", SHAPES)
        .with_file("src/util.rs", UTIL);
    h.facts = Some(Facts {
        files: 3,
        parse_failures: 0,
        symbols: 17,
        references: 40,
        indexed_at: Some("2025-01-01T00:00:00Z".into()),
    });
    let s = "src/shapes.rs";
    let mut symbols = vec![
        sym(
            "module",
            "demo::shapes",
            None,
            "src/lib.rs",
            (3, 3),
            "pub mod shapes;",
        ),
        sym(
            "module",
            "demo::util",
            None,
            "src/lib.rs",
            (4, 4),
            "pub mod util;",
        ),
        sym(
            "function",
            "demo::total_area",
            None,
            "src/lib.rs",
            (9, 11),
            "pub fn total_area(shapes: &[Box<dyn Shape>]) -> f64",
        ),
        sym(
            "function",
            "demo::unit_circle",
            None,
            "src/lib.rs",
            (13, 15),
            "pub fn unit_circle() -> Circle",
        ),
        sym(
            "function",
            "demo::report",
            None,
            "src/lib.rs",
            (17, 20),
            "pub fn report() -> String",
        ),
        sym(
            "trait",
            "demo::shapes::Shape",
            None,
            s,
            (4, 6),
            "pub trait Shape",
        ),
        sym(
            "method",
            "demo::shapes::Shape::area",
            Some("Shape"),
            s,
            (5, 5),
            "fn area(&self) -> f64",
        ),
        sym(
            "struct",
            "demo::shapes::Circle",
            None,
            s,
            (9, 11),
            "pub struct Circle",
        ),
        sym(
            "field",
            "demo::shapes::Circle::radius",
            Some("Circle"),
            s,
            (10, 10),
            "pub radius: f64",
        ),
        sym(
            "method",
            "demo::shapes::Circle::new",
            Some("Circle"),
            s,
            (15, 17),
            "pub fn new(radius: f64) -> Circle",
        ),
        sym(
            "method",
            "demo::shapes::Circle::area",
            Some("Circle"),
            s,
            (21, 23),
            "fn area(&self) -> f64",
        ),
        sym(
            "struct",
            "demo::shapes::Square",
            None,
            s,
            (26, 28),
            "pub struct Square",
        ),
        sym(
            "field",
            "demo::shapes::Square::side",
            Some("Square"),
            s,
            (27, 27),
            "pub side: f64",
        ),
        sym(
            "method",
            "demo::shapes::Square::new",
            Some("Square"),
            s,
            (31, 33),
            "pub fn new(side: f64) -> Self",
        ),
        sym(
            "method",
            "demo::shapes::Square::area",
            Some("Square"),
            s,
            (37, 39),
            "fn area(&self) -> f64",
        ),
        sym(
            "function",
            "demo::shapes::both",
            None,
            s,
            (42, 44),
            "pub fn both() -> (Circle, Square)",
        ),
        sym(
            "const",
            "demo::util::PI",
            None,
            "src/util.rs",
            (3, 3),
            "pub const PI: f64 = 3.14159",
        ),
        sym(
            "function",
            "demo::util::describe",
            None,
            "src/util.rs",
            (6, 8),
            "pub fn describe(area: f64) -> String",
        ),
        sym(
            "function",
            "demo::util::twice",
            None,
            "src/util.rs",
            (10, 12),
            "pub fn twice() -> String",
        ),
        sym(
            "function",
            "demo::util::tick",
            None,
            "src/util.rs",
            (14, 16),
            "pub fn tick(n: u32) -> u32",
        ),
        sym(
            "function",
            "demo::util::count_up",
            None,
            "src/util.rs",
            (18, 33),
            "pub fn count_up() -> u32",
        ),
    ];
    for d in &mut symbols {
        d.docstring = match d.qualified_name.as_str() {
            "demo::total_area" => Some("Sums the areas of all shapes.".into()),
            "demo::shapes::Shape" => Some("Anything with an area.".into()),
            "demo::shapes::Circle" => Some("A circle.".into()),
            "demo::shapes::Circle::new" => Some("Makes a circle.".into()),
            "demo::util::describe" => Some("Formats an area for people.".into()),
            _ => None,
        };
    }
    h.symbols = symbols;
    // Type names as the extractor records them: impl headers belong to the self type.
    for (name, line, kind, enclosing) in [
        ("Shape", 20, "type", "demo::shapes::Circle"),
        ("Circle", 20, "type", "demo::shapes::Circle"),
        ("Circle", 13, "type", "demo::shapes::Circle"),
        ("Circle", 15, "type", "demo::shapes::Circle::new"),
        ("Circle", 16, "path", "demo::shapes::Circle::new"),
        ("Shape", 36, "type", "demo::shapes::Square"),
        ("Square", 36, "type", "demo::shapes::Square"),
        ("Square", 30, "type", "demo::shapes::Square"),
        ("Square", 32, "path", "demo::shapes::Square::new"),
        ("Circle", 42, "type", "demo::shapes::both"),
        ("Square", 42, "type", "demo::shapes::both"),
    ] {
        h.add_site(name, site(s, line, kind, None, enclosing));
    }
    h.add_site(
        "area",
        site(
            s,
            21,
            "implements",
            Some("Shape"),
            "demo::shapes::Circle::area",
        ),
    );
    h.add_site(
        "area",
        site(
            s,
            37,
            "implements",
            Some("Shape"),
            "demo::shapes::Square::area",
        ),
    );
    h.add_site(
        "area",
        site("src/lib.rs", 10, "method_call", None, "demo::total_area"),
    );
    h.add_site(
        "Shape",
        site("src/lib.rs", 6, "use", Some("shapes"), "demo"),
    );
    h.add_site(
        "Shape",
        site("src/lib.rs", 9, "type", None, "demo::total_area"),
    );
    h.add_site(
        "Circle",
        site("src/lib.rs", 6, "use", Some("shapes"), "demo"),
    );
    h.add_site(
        "Circle",
        site("src/lib.rs", 13, "type", None, "demo::unit_circle"),
    );
    h.add_site(
        "describe",
        site("src/lib.rs", 19, "call", Some("util"), "demo::report"),
    );
    h
}

/// The `implements` edges the host will store for the fixture's impl headers.
pub fn demo_edges() -> Vec<Edge> {
    ["Circle", "Square"]
        .iter()
        .zip([20, 36])
        .map(|(ty, line)| Edge {
            kind: "implements".into(),
            from_symbol: format!("demo::shapes::{ty}"),
            to_name: "Shape".into(),
            to_qualifier: None,
            site_kind: "type".into(),
            file_path: "src/shapes.rs".into(),
            line,
            column: 6,
        })
        .collect()
}

// Copies of tests/fixtures/workspace/src/*.rs (the line numbers above refer to them).
// The fixture workspace's sources, read as the end-to-end suites read them.
pub const LIB: &str = include_str!("../../../tests/fixtures/workspace/src/lib.rs");
pub const SHAPES: &str = include_str!("../../../tests/fixtures/workspace/src/shapes.rs");
pub const UTIL: &str = include_str!("../../../tests/fixtures/workspace/src/util.rs");
