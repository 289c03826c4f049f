//! The fixture `fixture.go`, checked by hand: every definition and every reference.

use super::Go;
use crate::lang::Language;
use crate::lang::test_rows::{def_rows, ref_rows};
use crate::model::{FileSymbols, ReferenceKind as RK, SymbolKind as SK};

const FIXTURE: &str = include_str!("fixture.go");
const M: &str = "proj::pkg::geo";

fn extract() -> FileSymbols {
    let module = Go.module_path("proj", "pkg/geo/point.go");
    Go.extract(FIXTURE, &module, "pkg/geo/point.go")
}

#[test]
fn module_paths() {
    assert_eq!(
        Go.module_path("proj", "pkg/geo/point.go"),
        ["proj", "pkg", "geo"]
    );
    assert_eq!(Go.module_path("proj", "main.go"), ["proj"]);
}

#[test]
fn definitions() {
    let f = extract();
    assert!(!f.has_parse_errors);
    let got = def_rows(&f, M);
    let expected = vec![
        ("Max", SK::Const, "::Max", None, (10, 10, 10, 7)),
        ("registry", SK::Static, "::registry", None, (12, 12, 12, 5)),
        ("Point", SK::Struct, "::Point", None, (16, 19, 16, 6)),
        ("X", SK::Field, "::Point::X", Some("Point"), (17, 17, 17, 2)),
        ("Y", SK::Field, "::Point::Y", Some("Point"), (17, 17, 17, 5)),
        (
            "Tag",
            SK::Field,
            "::Point::Tag",
            Some("Point"),
            (18, 18, 18, 2),
        ),
        ("Shape", SK::Interface, "::Shape", None, (21, 23, 21, 6)),
        (
            "Area",
            SK::Method,
            "::Shape::Area",
            Some("Shape"),
            (22, 22, 22, 2),
        ),
        ("ID", SK::TypeAlias, "::ID", None, (25, 25, 25, 6)),
        (
            "Move",
            SK::Method,
            "::Point::Move",
            Some("Point"),
            (28, 32, 28, 17),
        ),
        ("Run", SK::Function, "::Run", None, (34, 42, 34, 6)),
    ];
    assert_eq!(got, expected);
    let sig = |n: &str| {
        let d = f.definitions.iter().find(|d| d.name == n).unwrap();
        (d.signature.as_str(), d.docstring.as_deref())
    };
    assert_eq!(sig("Max"), ("const Max = 10", Some("Max is the limit.")));
    assert_eq!(
        sig("Point"),
        (
            "type Point struct",
            Some("Point is a point.\nIt has two coordinates.")
        )
    );
    assert_eq!(sig("Shape").0, "type Shape interface");
    assert_eq!(sig("ID").0, "type ID = string");
    assert_eq!(
        sig("Move"),
        (
            "func (p *Point) Move(dx int) Point",
            Some("Move moves the point.")
        )
    );
    assert_eq!(sig("Run").0, "func Run[T any](items []T) error");
}

#[test]
fn references() {
    let f = extract();
    let got = ref_rows(&f, M);
    let expected = vec![
        // Imports: the last path segment, qualified by the rest.
        ("fmt", RK::Use, 4, 3, None, ""),
        ("strings", RK::Use, 5, 7, None, ""),
        ("http", RK::Use, 6, 7, Some("net"), ""),
        // Predeclared types (`string`, `int`, `float64`, `error`, `any`) are left out.
        ("Request", RK::Type, 18, 13, Some("http"), "::Point"),
        ("Point", RK::Type, 28, 10, None, "::Point::Move"),
        ("Point", RK::Type, 28, 30, None, "::Point::Move"),
        // `p` is the receiver: qualified by its type.
        ("X", RK::Field, 29, 4, Some("Point"), "::Point::Move"),
        (
            "check",
            RK::MethodCall,
            30,
            4,
            Some("Point"),
            "::Point::Move",
        ),
        ("Point", RK::Type, 31, 9, None, "::Point::Move"),
        // Keys of a struct literal are fields of its type.
        ("X", RK::Field, 31, 15, Some("Point"), "::Point::Move"),
        ("X", RK::Field, 31, 20, Some("Point"), "::Point::Move"),
        ("Y", RK::Field, 31, 23, Some("Point"), "::Point::Move"),
        ("Max", RK::Path, 31, 26, None, "::Point::Move"),
        // `T` is a type parameter; `q`, `it`, `items` are locals.
        ("Point", RK::Type, 35, 8, None, "::Run"),
        ("Move", RK::MethodCall, 36, 4, None, "::Run"),
        ("Println", RK::Call, 37, 6, Some("fmt"), "::Run"),
        ("ToUpper", RK::Call, 37, 18, Some("str"), "::Run"),
        ("registry", RK::Path, 37, 32, None, "::Run"),
        ("helper", RK::Call, 39, 3, None, "::Run"),
    ];
    assert_eq!(got, expected);
}
