//! The fixture `fixture.py`, checked by hand: every definition and every reference.

use super::Python;
use crate::lang::Language;
use crate::lang::test_rows::{def_rows, ref_rows};
use crate::model::{FileSymbols, ReferenceKind as RK, SymbolKind as SK};

const FIXTURE: &str = include_str!("fixture.py");
const M: &str = "proj::pkg::sub::shapes";

fn extract() -> FileSymbols {
    let module = Python.module_path("proj", "pkg/sub/shapes.py");
    Python.extract(FIXTURE, &module, "pkg/sub/shapes.py")
}

#[test]
fn module_paths() {
    assert_eq!(
        Python.module_path("proj", "a/b/c.py"),
        ["proj", "a", "b", "c"]
    );
    assert_eq!(
        Python.module_path("proj", "a/b/__init__.py"),
        ["proj", "a", "b"]
    );
    assert_eq!(Python.module_path("proj", "__init__.py"), ["proj"]);
    assert_eq!(
        Python.module_path("proj", "stubs/x.pyi"),
        ["proj", "stubs", "x"]
    );
}

#[test]
fn definitions() {
    let f = extract();
    assert!(!f.has_parse_errors);
    let got = def_rows(&f, M);
    let expected = vec![
        ("MAX_SIZE", SK::Const, "::MAX_SIZE", None, (6, 6, 6, 1)),
        ("Shape", SK::Class, "::Shape", None, (11, 31, 11, 7)),
        (
            "area",
            SK::Method,
            "::Shape::area",
            Some("Shape"),
            (19, 23, 19, 9),
        ),
        (
            "compute",
            SK::Method,
            "::Shape::compute",
            Some("Shape"),
            (26, 27, 26, 9),
        ),
        (
            "Inner",
            SK::Class,
            "::Shape::Inner",
            Some("Shape"),
            (29, 31, 29, 11),
        ),
        (
            "run",
            SK::Method,
            "::Shape::Inner::run",
            Some("Inner"),
            (30, 31, 30, 13),
        ),
        ("main", SK::Function, "::main", None, (34, 39, 34, 11)),
        (
            "local",
            SK::Function,
            "::main::local",
            None,
            (35, 36, 35, 9),
        ),
    ];
    assert_eq!(got, expected);

    let by_name = |n: &str| f.definitions.iter().find(|d| d.name == n).unwrap();
    assert_eq!(by_name("MAX_SIZE").signature, "MAX_SIZE: int = 10");
    assert_eq!(
        by_name("Shape").signature,
        "class Shape(Base, metaclass=Meta)"
    );
    assert_eq!(
        by_name("Shape").docstring.as_deref(),
        Some("A shape.\n\nWith details.")
    );
    assert_eq!(
        by_name("area").signature,
        "def area(self, scale: float = 1.0) -> float"
    );
    assert_eq!(by_name("area").docstring.as_deref(), Some("Area."));
    assert_eq!(by_name("Inner").signature, "class Inner");
    assert_eq!(
        by_name("main").signature,
        "async def main(argv: list[Shape]) -> None"
    );
    assert_eq!(by_name("main").docstring, None);
}

#[test]
fn references() {
    let f = extract();
    let got = ref_rows(&f, M);
    let expected = vec![
        ("os", RK::Use, 2, 8, None, ""),
        ("path", RK::Use, 2, 11, Some("os"), ""),
        // `from .sibling import helper as h` in pkg/sub/shapes.py: `.` is `pkg.sub`.
        ("sibling", RK::Use, 3, 7, Some("pkg::sub"), ""),
        ("helper", RK::Use, 3, 22, Some("pkg::sub::sibling"), ""),
        ("core", RK::Use, 4, 8, Some("pkg"), ""),
        ("Base", RK::Use, 4, 20, Some("pkg::core"), ""),
        ("int", RK::Type, 6, 11, None, ""),
        // Decorators are calls, enclosed by the scope the decorated item is in.
        ("dataclass", RK::Call, 10, 2, None, ""),
        ("Base", RK::Type, 11, 13, None, "::Shape"),
        ("Meta", RK::Path, 11, 29, None, "::Shape"),
        ("float", RK::Type, 19, 27, None, "::Shape::area"),
        ("float", RK::Type, 19, 43, None, "::Shape::area"),
        // `total` and `scale` are locals; `self.x` is qualified `Self`.
        ("width", RK::Field, 21, 22, Some("Self"), "::Shape::area"),
        (
            "check",
            RK::MethodCall,
            22,
            14,
            Some("Self"),
            "::Shape::area",
        ),
        ("Shape", RK::Path, 23, 16, None, "::Shape::area"),
        (
            "compute",
            RK::MethodCall,
            23,
            22,
            Some("Shape"),
            "::Shape::area",
        ),
        ("MAX_SIZE", RK::Path, 23, 37, None, "::Shape::area"),
        ("staticmethod", RK::Call, 25, 6, None, "::Shape"),
        // A static method's first parameter is not `self`.
        ("helper", RK::Call, 27, 16, None, "::Shape::compute"),
        ("os", RK::Path, 27, 28, None, "::Shape::compute"),
        ("path", RK::Path, 27, 31, Some("os"), "::Shape::compute"),
        (
            "join",
            RK::Call,
            27,
            36,
            Some("os::path"),
            "::Shape::compute",
        ),
        // The comprehension variable `v` is local.
        (
            "items",
            RK::Field,
            31,
            37,
            Some("Self"),
            "::Shape::Inner::run",
        ),
        ("list", RK::Type, 34, 22, None, "::main"),
        ("Shape", RK::Type, 34, 27, None, "::main"),
        // `n` is `local`'s parameter, `argv` a local of the enclosing function.
        ("len", RK::Call, 36, 20, None, "::main::local"),
        ("Shape", RK::Call, 37, 9, None, "::main"),
        ("area", RK::MethodCall, 38, 7, None, "::main"),
        // `local(1)` calls a local binding: not a reference.
        ("print", RK::Call, 39, 5, None, "::main"),
        ("default_name", RK::Path, 39, 21, None, "::main"),
        ("undefined", RK::Path, 39, 35, None, "::main"),
    ];
    assert_eq!(got, expected);
}

#[test]
fn init_files_import_relative_to_their_own_package() {
    let src = "from . import a\nfrom .. import b\n";
    let module = Python.module_path("proj", "x/y/__init__.py");
    let f = Python.extract(src, &module, "x/y/__init__.py");
    let uses: Vec<_> = f
        .references
        .iter()
        .map(|r| (r.name.as_str(), r.qualifier.as_deref()))
        .collect();
    assert_eq!(uses, [("a", Some("x::y")), ("b", Some("x"))]);
}

#[test]
fn module_level_code_and_syntax_errors() {
    let src = "import json as j\nLIMIT = 3\nvalue = j.loads(LIMIT)\nfor k in value:\n    print(k)\nwith open(value) as fh:\n    pass\ndef broken(:\n";
    let module = Python.module_path("proj", "m.py");
    let f = Python.extract(src, &module, "m.py");
    assert!(f.has_parse_errors);
    assert!(
        f.definitions
            .iter()
            .any(|d| d.name == "LIMIT" && d.kind == SK::Const)
    );
    let loads = f.references.iter().find(|r| r.name == "loads").unwrap();
    assert_eq!(
        (loads.kind, loads.qualifier.as_deref()),
        (RK::Call, Some("json"))
    );
    assert_eq!(loads.enclosing_symbol, "proj::m");
    // `k` is a loop target, not a reference; it is read at module level, though.
    assert!(!f.references.iter().any(|r| r.name == "k" && r.line == 4));
    // Nor is a `with .. as` target.
    let line6: Vec<_> = f
        .references
        .iter()
        .filter(|r| r.line == 6)
        .map(|r| (r.name.as_str(), r.kind))
        .collect();
    assert_eq!(line6, [("open", RK::Call), ("value", RK::Path)]);
}

/// (name, kind, qualifier) of every reference on `line`.
fn on_line(f: &FileSymbols, line: u32) -> Vec<(&str, RK, Option<&str>)> {
    f.references
        .iter()
        .filter(|r| r.line == line)
        .map(|r| (r.name.as_str(), r.kind, r.qualifier.as_deref()))
        .collect()
}

fn extract_at(src: &str, path: &str) -> FileSymbols {
    let module = Python.module_path("proj", path);
    Python.extract(src, &module, path)
}

#[test]
fn names_read_through_an_imported_module_are_qualified_by_that_module() {
    let src = "\
import click
import pkg.fmt as fm
from . import types
from .. import util as u

x = click.BOOL
y = types.IntRange(0, 3)
z = fm.FORCED_WIDTH + u.helper()
w = types.sub.Deep
";
    let f = extract_at(src, "src/pkg/core.py");
    assert_eq!(
        on_line(&f, 6),
        [("click", RK::Path, None), ("BOOL", RK::Path, Some("click"))]
    );
    assert_eq!(
        on_line(&f, 7),
        [
            ("types", RK::Path, None),
            ("IntRange", RK::Call, Some("src::pkg::types"))
        ]
    );
    assert_eq!(
        on_line(&f, 8),
        [
            ("fm", RK::Path, None),
            ("FORCED_WIDTH", RK::Path, Some("pkg::fmt")),
            ("u", RK::Path, None),
            ("helper", RK::Call, Some("src::util")),
        ]
    );
    // A chain keeps the module it starts from.
    assert_eq!(
        on_line(&f, 9),
        [
            ("types", RK::Path, None),
            ("sub", RK::Path, Some("src::pkg::types")),
            ("Deep", RK::Path, Some("src::pkg::types::sub")),
        ]
    );
}

#[test]
fn an_attribute_of_a_module_level_variable_is_no_module_path() {
    // `param` is a value the module assigns: `param.convert` is an attribute of an
    // unknown value (tied by name), not a name in a module called `param`; a class
    // keeps qualifying its attributes.
    let src = "\
import click

param: click.Path[str] = click.Path()
param.convert(None)

class Box:
    pass

Box.make()
";
    let f = extract_at(src, "src/pkg/core.py");
    assert_eq!(
        on_line(&f, 4),
        [("param", RK::Path, None), ("convert", RK::MethodCall, None)]
    );
    assert_eq!(
        on_line(&f, 9),
        [
            ("Box", RK::Path, None),
            ("make", RK::MethodCall, Some("Box"))
        ]
    );
}

#[test]
fn function_local_imports_bind_names_that_are_references() {
    let src = "\
def run():
    from .core import Command
    import pkg.types as t
    cmd = Command()
    return t.Choice(cmd)

def other(Command):
    return Command
";
    let f = extract_at(src, "pkg/cli.py");
    assert_eq!(
        on_line(&f, 2),
        [
            ("core", RK::Use, Some("pkg")),
            ("Command", RK::Use, Some("pkg::core"))
        ]
    );
    // `cmd` is a local; `Command` is what the import bound, so a reference.
    assert_eq!(on_line(&f, 4), [("Command", RK::Call, None)]);
    assert_eq!(
        on_line(&f, 5),
        [
            ("t", RK::Path, None),
            ("Choice", RK::Call, Some("pkg::types"))
        ]
    );
    // A parameter of the same name in another function stays local.
    assert!(on_line(&f, 8).is_empty());
}

#[test]
fn parenthesised_and_aliased_from_imports_are_uses_of_each_name() {
    let src =
        "from .core import (\n    Command,\n    Group as G,\n)\nimport json as j\nj.loads(G)\n";
    let f = extract_at(src, "pkg/x.py");
    assert_eq!(
        f.references
            .iter()
            .filter(|r| r.kind == RK::Use)
            .map(|r| (r.name.as_str(), r.line, r.qualifier.as_deref()))
            .collect::<Vec<_>>(),
        [
            ("core", 1, Some("pkg")),
            ("Command", 2, Some("pkg::core")),
            ("Group", 3, Some("pkg::core")),
            ("json", 5, None),
        ]
    );
    // `j` is `json`: the qualifier is the module, not the alias.
    assert_eq!(
        on_line(&f, 6),
        [
            ("j", RK::Path, None),
            ("loads", RK::Call, Some("json")),
            ("G", RK::Path, None)
        ]
    );
}
