//! The fixture `fixture.ts`, checked by hand: every definition and every reference.

use super::{JavaScript, TypeScript};
use crate::lang::Language;
use crate::lang::test_rows::{RefRow, def_rows, ref_rows};
use crate::model::{FileSymbols, ReferenceKind as RK, SymbolKind as SK};

const FIXTURE: &str = include_str!("fixture.ts");
const M: &str = "proj::src::shapes";

fn extract() -> FileSymbols {
    let module = TypeScript.module_path("proj", "src/shapes.ts");
    TypeScript.extract(FIXTURE, &module, "src/shapes.ts")
}

#[test]
fn module_paths() {
    let mp = |p: &str| TypeScript.module_path("proj", p);
    assert_eq!(mp("src/a/b.ts"), ["proj", "src", "a", "b"]);
    assert_eq!(mp("src/a/index.tsx"), ["proj", "src", "a"]);
    assert_eq!(mp("types/x.d.ts"), ["proj", "types", "x"]);
    assert_eq!(
        JavaScript.module_path("proj", "lib/util.mjs"),
        ["proj", "lib", "util"]
    );
}

#[test]
fn definitions() {
    let f = extract();
    assert!(!f.has_parse_errors);
    let got = def_rows(&f, M);
    let expected = vec![
        ("Shape", SK::Interface, "::Shape", None, (6, 9, 6, 18)),
        ("Id", SK::TypeAlias, "::Id", None, (11, 11, 11, 13)),
        ("Color", SK::Enum, "::Color", None, (13, 16, 13, 13)),
        (
            "Red",
            SK::Variant,
            "::Color::Red",
            Some("Color"),
            (14, 14, 14, 3),
        ),
        (
            "Green",
            SK::Variant,
            "::Color::Green",
            Some("Color"),
            (15, 15, 15, 3),
        ),
        ("LIMIT", SK::Const, "::LIMIT", None, (18, 18, 18, 14)),
        ("Square", SK::Class, "::Square", None, (20, 32, 20, 14)),
        (
            "size",
            SK::Field,
            "::Square::size",
            Some("Square"),
            (21, 21, 21, 3),
        ),
        (
            "constructor",
            SK::Method,
            "::Square::constructor",
            Some("Square"),
            (23, 26, 23, 3),
        ),
        (
            "area",
            SK::Method,
            "::Square::area",
            Some("Square"),
            (28, 31, 28, 3),
        ),
        ("make", SK::Function, "::make", None, (34, 38, 34, 17)),
        ("double", SK::Function, "::double", None, (40, 40, 40, 7)),
    ];
    assert_eq!(got, expected);
    let sig = |n: &str| {
        let d = f.definitions.iter().find(|d| d.name == n).unwrap();
        (d.signature.as_str(), d.docstring.as_deref())
    };
    assert_eq!(
        sig("Shape"),
        ("export interface Shape<T>", Some("The shape of things."))
    );
    assert_eq!(sig("Id"), ("export type Id = string | Shape<number>", None));
    assert_eq!(sig("LIMIT"), ("export const LIMIT = 10", None));
    assert_eq!(
        sig("Square").0,
        "export class Square extends Base implements Shape<Id>"
    );
    assert_eq!(sig("area").0, "area(): number");
    assert_eq!(sig("make").0, "export function make(n: number): Square");
    assert_eq!(sig("double").0, "const double = (x: number)");
}

#[test]
fn references() {
    let f = extract();
    let expected: Vec<RefRow<'_>> = vec![
        // Imports: the imported name, qualified by the module specifier.
        ("readFile", RK::Use, 1, 10, Some("fs"), ""),
        ("Stats", RK::Use, 1, 26, Some("fs"), ""),
        ("Default", RK::Use, 3, 8, Some("src::default"), ""),
        // `T` is a type parameter; `number` a predefined type.
        ("Shape", RK::Type, 11, 27, None, "::Id"),
        ("Base", RK::Type, 20, 29, None, "::Square"),
        ("Shape", RK::Type, 20, 45, None, "::Square"),
        ("Id", RK::Type, 20, 51, None, "::Square"),
        ("LIMIT", RK::Path, 21, 18, None, "::Square"),
        (
            "size",
            RK::Field,
            25,
            10,
            Some("Self"),
            "::Square::constructor",
        ),
        ("size", RK::Field, 29, 20, Some("Self"), "::Square::area"),
        (
            "scale",
            RK::MethodCall,
            30,
            17,
            Some("Self"),
            "::Square::area",
        ),
        ("Color", RK::Path, 30, 28, None, "::Square::area"),
        ("Red", RK::Field, 30, 34, Some("Color"), "::Square::area"),
        ("Square", RK::Type, 34, 34, None, "::make"),
        ("Square", RK::Call, 35, 18, None, "::make"),
        // `sq` is a local: no qualifier.
        ("area", RK::MethodCall, 36, 6, None, "::make"),
        ("helper", RK::Call, 37, 10, None, "::make"),
        ("path", RK::Path, 37, 21, None, "::make"),
        // `path` is `import * as path from "node:path"`: a member of that module.
        ("join", RK::Call, 37, 26, Some("node:path"), "::make"),
    ];
    assert_eq!(ref_rows(&f, M), expected);
}

#[test]
fn javascript_with_jsx() {
    let src = "import React from 'react';\n\
/** Renders. */\n\
export default function App({ items }) {\n\
  const list = items.map((it) => <Row key={it} />);\n\
  return <Layout.Main>{list}</Layout.Main>;\n\
}\n\
export const handler = function () { return App({}); };\n";
    let module = JavaScript.module_path("proj", "web/app.jsx");
    let f = JavaScript.extract(src, &module, "web/app.jsx");
    assert!(!f.has_parse_errors);
    let defs: Vec<_> = f
        .definitions
        .iter()
        .map(|d| {
            (
                d.name.as_str(),
                d.kind,
                d.qualified_name.as_str(),
                d.start_line,
                d.docstring.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        defs,
        [
            (
                "App",
                SK::Function,
                "proj::web::app::App",
                3,
                Some("Renders.")
            ),
            ("handler", SK::Function, "proj::web::app::handler", 7, None),
        ]
    );
    let expected: Vec<RefRow<'_>> = vec![
        ("React", RK::Use, 1, 8, Some("react"), ""),
        // `items`, `list` and `it` are locals. (`\` line continuations drop the indentation.)
        ("map", RK::MethodCall, 4, 20, None, "::App"),
        ("Row", RK::Call, 4, 33, None, "::App"),
        ("Layout", RK::Path, 5, 9, None, "::App"),
        ("Main", RK::Call, 5, 16, Some("Layout"), "::App"),
        ("App", RK::Call, 7, 45, None, "::handler"),
    ];
    assert_eq!(ref_rows(&f, "proj::web::app"), expected);
}

#[test]
fn nested_functions_and_this_calls() {
    let src = "class A {\n  run() {\n    function inner() { return 1; }\n    return this.go(inner());\n  }\n}\n";
    let module = TypeScript.module_path("proj", "a.tsx");
    let f = TypeScript.extract(src, &module, "a.tsx");
    let names: Vec<_> = f
        .definitions
        .iter()
        .map(|d| (d.qualified_name.as_str(), d.kind))
        .collect();
    assert_eq!(
        names,
        [
            ("proj::a::A", SK::Class),
            ("proj::a::A::run", SK::Method),
            ("proj::a::A::run::inner", SK::Function),
        ]
    );
    let expected: Vec<RefRow<'_>> = vec![("go", RK::MethodCall, 4, 17, Some("Self"), "::A::run")];
    assert_eq!(ref_rows(&f, "proj::a"), expected);
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
    let module = TypeScript.module_path("proj", path);
    TypeScript.extract(src, &module, path)
}

#[test]
fn a_member_of_a_class_prototype_is_the_class_member() {
    // `C.prototype` holds what C's instances share: `C.prototype.m` names C's `m`.
    let src = "\
export class Scheduler { cold(): number { return 1; } }
const f = Scheduler.prototype.cold;
type Cold = typeof Scheduler.prototype.cold;
";
    let f = extract_at(src, "src/testing.ts");
    assert_eq!(
        on_line(&f, 2),
        [
            ("Scheduler", RK::Path, None),
            ("prototype", RK::Field, Some("Scheduler")),
            ("cold", RK::Field, Some("Scheduler")),
        ]
    );
    assert_eq!(on_line(&f, 3), on_line(&f, 2), "in a type query too");
}

#[test]
fn import_and_export_specifiers_name_the_module_they_come_from() {
    let src = "\
import { Observable } from '../Observable';
import { map as mapOp, filter } from './map.js';
import { x } from 'rxjs';
import Default from './util/index';
export { concat } from './concat';
export { merge as mergeWith } from '../merge';
export * as ops from './ops';
";
    let f = extract_at(src, "src/internal/operators/zip.ts");
    assert_eq!(
        on_line(&f, 1),
        [("Observable", RK::Use, Some("src::internal::Observable"))]
    );
    assert_eq!(
        on_line(&f, 2),
        [
            ("map", RK::Use, Some("src::internal::operators::map")),
            ("filter", RK::Use, Some("src::internal::operators::map")),
        ]
    );
    // A package specifier stays as written.
    assert_eq!(on_line(&f, 3), [("x", RK::Use, Some("rxjs"))]);
    assert_eq!(
        on_line(&f, 4),
        [("Default", RK::Use, Some("src::internal::operators::util"))]
    );
    assert_eq!(
        on_line(&f, 5),
        [("concat", RK::Use, Some("src::internal::operators::concat"))]
    );
    assert_eq!(
        on_line(&f, 6),
        [("merge", RK::Use, Some("src::internal::merge"))]
    );
    assert!(on_line(&f, 7).is_empty());
}

#[test]
fn names_read_through_a_namespace_import_are_qualified_by_its_module() {
    let src = "\
import * as ns from './lib';
export function f(v: ns.Options): ns.Result {
  return ns.run(v, ns.LIMIT);
}
";
    let f = extract_at(src, "src/a.ts");
    assert_eq!(on_line(&f, 1), []);
    assert_eq!(
        on_line(&f, 2),
        [
            ("Options", RK::Type, Some("src::lib")),
            ("Result", RK::Type, Some("src::lib"))
        ]
    );
    assert_eq!(
        on_line(&f, 3),
        [
            ("ns", RK::Path, None),
            ("run", RK::Call, Some("src::lib")),
            ("ns", RK::Path, None),
            ("LIMIT", RK::Path, Some("src::lib")),
        ]
    );
}

#[test]
fn uses_of_a_renamed_import_are_references_of_the_original_name() {
    let src = "\
const early = Sym;
import { iterator as Sym } from '../symbol/iterator';
export function f(x: any) {
  return x[Sym]() + g(Sym);
}
function g(Sym: number) { return Sym; }
";
    let f = extract_at(src, "src/util/isIterable.ts");
    // Imports are hoisted: a use before the import line is the import's too.
    assert_eq!(on_line(&f, 1), [("iterator", RK::Path, None)]);
    assert_eq!(
        on_line(&f, 2),
        [("iterator", RK::Use, Some("src::symbol::iterator"))]
    );
    assert_eq!(
        on_line(&f, 4),
        [
            ("iterator", RK::Path, None),
            ("g", RK::Call, None),
            ("iterator", RK::Path, None)
        ]
    );
    // A parameter of that name is a local: not a reference.
    assert!(on_line(&f, 6).is_empty());
}
