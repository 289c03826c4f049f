use super::*;
use crate::model::{ReferenceKind as RK, SymbolKind as SK};

fn module() -> Vec<String> {
    vec!["c".to_string(), "m".to_string()]
}

type DefRow<'a> = (&'a str, SK, &'a str, Option<&'a str>, u32, u32);
type RefRow<'a> = (&'a str, u32, u32, RK, Option<&'a str>, &'a str);

fn def_rows(fs: &FileSymbols) -> Vec<DefRow<'_>> {
    fs.definitions
        .iter()
        .map(|d| {
            (
                d.name.as_str(),
                d.kind,
                d.qualified_name.as_str(),
                d.owner.as_deref(),
                d.start_line,
                d.end_line,
            )
        })
        .collect()
}

fn ref_rows(fs: &FileSymbols) -> Vec<RefRow<'_>> {
    fs.references
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.line,
                r.column,
                r.kind,
                r.qualifier.as_deref(),
                r.enclosing_symbol.as_str(),
            )
        })
        .collect()
}

fn def<'a>(fs: &'a FileSymbols, qualified_name: &str) -> &'a crate::model::Definition {
    fs.definitions
        .iter()
        .find(|d| d.qualified_name == qualified_name)
        .unwrap_or_else(|| panic!("no definition {qualified_name}"))
}

/// Hand-checked fixture: every line number below was read off this text.
const FIXTURE: &str = r#"//! Crate docs, not attached to items.
use std::collections::{HashMap, hash_map::Entry as MapEntry};
use std::fmt::{self, Display};

/// Adds one.
///
/// Second paragraph.
#[inline]
pub fn helper(x: u32) -> u32 {
    x + 1
}

/// A point.
#[derive(Debug, Clone)]
pub struct Point<T: Display> {
    /// The x coordinate.
    pub x: T,
    y: Option<T>,
}

pub struct Square(pub f64);

pub enum Shape {
    Circle(f64),
    Rect { w: f64, h: f64 },
    Empty = 3,
}

pub trait Area {
    const SIDES: u32;
    type Unit;
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!("{}", self.area())
    }
}

impl Area for Square {
    const SIDES: u32 = 4;
    type Unit = f64;
    fn area(&self) -> f64 {
        self.0 * self.0
    }
}

impl Shape {
    fn weight(&self) -> f64 {
        match self {
            Shape::Circle(r) => r * r,
            Shape::Rect { w, h } => w * h,
            Shape::Empty => 0.0,
        }
    }
}

impl<T: Display> Point<T> {
    pub fn new(x: T) -> Self {
        Point { x, y: None }
    }
    pub fn reset(&mut self, v: T) -> Self {
        self.y = None;
        self.touch();
        Self::new(v)
    }
    fn touch(&self) {}
}

pub const LIMIT: usize = 10;
static COUNTER: u32 = 0;
pub type Map = HashMap<String, Point<u32>>;
union Bits { i: u32, f: f32 }

mod inner {
    pub fn f() {}
}

macro_rules! square {
    ($e:expr) => { helper($e) * $e };
}

fn user() -> u32 {
    let helper = helper(2);
    struct Local;
    let m: MapEntry<'_, u8, u8>;
    inner::f();
    let p = Point::new(COUNTER);
    p.reset(helper).x + square!(helper) + LIMIT as u32
}
"#;

#[test]
fn fixture_definitions() {
    let fs = extract(FIXTURE, &module());
    assert!(!fs.has_parse_errors);
    let expected: Vec<DefRow> = vec![
        ("helper", SK::Function, "c::m::helper", None, 9, 11),
        ("Point", SK::Struct, "c::m::Point", None, 15, 19),
        ("x", SK::Field, "c::m::Point::x", Some("Point"), 17, 17),
        ("y", SK::Field, "c::m::Point::y", Some("Point"), 18, 18),
        ("Square", SK::Struct, "c::m::Square", None, 21, 21),
        ("Shape", SK::Enum, "c::m::Shape", None, 23, 27),
        (
            "Circle",
            SK::Variant,
            "c::m::Shape::Circle",
            Some("Shape"),
            24,
            24,
        ),
        (
            "Rect",
            SK::Variant,
            "c::m::Shape::Rect",
            Some("Shape"),
            25,
            25,
        ),
        (
            "w",
            SK::Field,
            "c::m::Shape::Rect::w",
            Some("Shape"),
            25,
            25,
        ),
        (
            "h",
            SK::Field,
            "c::m::Shape::Rect::h",
            Some("Shape"),
            25,
            25,
        ),
        (
            "Empty",
            SK::Variant,
            "c::m::Shape::Empty",
            Some("Shape"),
            26,
            26,
        ),
        ("Area", SK::Trait, "c::m::Area", None, 29, 36),
        (
            "SIDES",
            SK::Const,
            "c::m::Area::SIDES",
            Some("Area"),
            30,
            30,
        ),
        (
            "Unit",
            SK::TypeAlias,
            "c::m::Area::Unit",
            Some("Area"),
            31,
            31,
        ),
        ("area", SK::Method, "c::m::Area::area", Some("Area"), 32, 32),
        (
            "describe",
            SK::Method,
            "c::m::Area::describe",
            Some("Area"),
            33,
            35,
        ),
        (
            "SIDES",
            SK::Const,
            "c::m::Square::SIDES",
            Some("Square"),
            39,
            39,
        ),
        (
            "Unit",
            SK::TypeAlias,
            "c::m::Square::Unit",
            Some("Square"),
            40,
            40,
        ),
        (
            "area",
            SK::Method,
            "c::m::Square::area",
            Some("Square"),
            41,
            43,
        ),
        (
            "weight",
            SK::Method,
            "c::m::Shape::weight",
            Some("Shape"),
            47,
            53,
        ),
        ("new", SK::Method, "c::m::Point::new", Some("Point"), 57, 59),
        (
            "reset",
            SK::Method,
            "c::m::Point::reset",
            Some("Point"),
            60,
            64,
        ),
        (
            "touch",
            SK::Method,
            "c::m::Point::touch",
            Some("Point"),
            65,
            65,
        ),
        ("LIMIT", SK::Const, "c::m::LIMIT", None, 68, 68),
        ("COUNTER", SK::Static, "c::m::COUNTER", None, 69, 69),
        ("Map", SK::TypeAlias, "c::m::Map", None, 70, 70),
        ("Bits", SK::Union, "c::m::Bits", None, 71, 71),
        ("i", SK::Field, "c::m::Bits::i", Some("Bits"), 71, 71),
        ("f", SK::Field, "c::m::Bits::f", Some("Bits"), 71, 71),
        ("inner", SK::Module, "c::m::inner", None, 73, 75),
        ("f", SK::Function, "c::m::inner::f", None, 74, 74),
        ("square", SK::Macro, "c::m::square", None, 77, 79),
        ("user", SK::Function, "c::m::user", None, 81, 88),
        ("Local", SK::Struct, "c::m::user::Local", None, 83, 83),
    ];
    assert_eq!(def_rows(&fs), expected);

    // Name positions.
    let helper = def(&fs, "c::m::helper");
    assert_eq!((helper.name_line, helper.name_column), (9, 8));
    let reset = def(&fs, "c::m::Point::reset");
    assert_eq!((reset.name_line, reset.name_column), (60, 12));
    let bits_f = def(&fs, "c::m::Bits::f");
    assert_eq!((bits_f.name_line, bits_f.name_column), (71, 22));
}

#[test]
fn fixture_references() {
    let fs = extract(FIXTURE, &module());
    let m = "c::m";
    let expected: Vec<RefRow> = vec![
        // use items: groups, `self` skipped, `as` alias skipped (its original name kept)
        ("std", 2, 5, RK::Use, None, m),
        ("collections", 2, 10, RK::Use, Some("std"), m),
        ("HashMap", 2, 24, RK::Use, Some("std::collections"), m),
        ("hash_map", 2, 33, RK::Use, Some("std::collections"), m),
        (
            "Entry",
            2,
            43,
            RK::Use,
            Some("std::collections::hash_map"),
            m,
        ),
        ("std", 3, 5, RK::Use, None, m),
        ("fmt", 3, 10, RK::Use, Some("std"), m),
        ("Display", 3, 22, RK::Use, Some("std::fmt"), m),
        // derives are references to derive macros; attributes sit outside the item
        ("Debug", 14, 10, RK::Macro, None, m),
        ("Clone", 14, 17, RK::Macro, None, m),
        // generic bounds and field types belong to the struct; `T` is a generic parameter
        ("Display", 15, 21, RK::Type, None, "c::m::Point"),
        ("Option", 18, 8, RK::Type, None, "c::m::Point"),
        ("String", 33, 27, RK::Type, None, "c::m::Area::describe"),
        ("format", 34, 9, RK::Macro, None, "c::m::Area::describe"),
        // macro arguments are re-parsed: a real method call, not a token; `self` in a
        // trait method is `Self`
        (
            "area",
            34,
            28,
            RK::MethodCall,
            Some("Self"),
            "c::m::Area::describe",
        ),
        // impl headers belong to the self type
        ("Area", 38, 6, RK::Type, None, "c::m::Square"),
        ("Square", 38, 15, RK::Type, None, "c::m::Square"),
        (
            "SIDES",
            39,
            11,
            RK::Implements,
            Some("Area"),
            "c::m::Square::SIDES",
        ),
        (
            "Unit",
            40,
            10,
            RK::Implements,
            Some("Area"),
            "c::m::Square::Unit",
        ),
        (
            "area",
            41,
            8,
            RK::Implements,
            Some("Area"),
            "c::m::Square::area",
        ),
        ("Shape", 46, 6, RK::Type, None, "c::m::Shape"),
        // patterns: paths are references, bindings (`r`, `w`, `h` values) are locals
        ("Shape", 49, 13, RK::Path, None, "c::m::Shape::weight"),
        (
            "Circle",
            49,
            20,
            RK::Path,
            Some("Shape"),
            "c::m::Shape::weight",
        ),
        ("Shape", 50, 13, RK::Path, None, "c::m::Shape::weight"),
        (
            "Rect",
            50,
            20,
            RK::Path,
            Some("Shape"),
            "c::m::Shape::weight",
        ),
        (
            "w",
            50,
            27,
            RK::Field,
            Some("Shape::Rect"),
            "c::m::Shape::weight",
        ),
        (
            "h",
            50,
            30,
            RK::Field,
            Some("Shape::Rect"),
            "c::m::Shape::weight",
        ),
        ("Shape", 51, 13, RK::Path, None, "c::m::Shape::weight"),
        (
            "Empty",
            51,
            20,
            RK::Path,
            Some("Shape"),
            "c::m::Shape::weight",
        ),
        ("Display", 56, 9, RK::Type, None, "c::m::Point"),
        ("Point", 56, 18, RK::Type, None, "c::m::Point"),
        ("Point", 57, 25, RK::Type, None, "c::m::Point::new"),
        // struct expression: the type as Path, field names as Field qualified by the type
        ("Point", 58, 9, RK::Path, None, "c::m::Point::new"),
        ("x", 58, 17, RK::Field, Some("Point"), "c::m::Point::new"),
        ("y", 58, 20, RK::Field, Some("Point"), "c::m::Point::new"),
        ("None", 58, 23, RK::Path, None, "c::m::Point::new"),
        ("Point", 60, 38, RK::Type, None, "c::m::Point::reset"),
        // members of `self`: qualified by `Self`
        ("y", 61, 14, RK::Field, Some("Self"), "c::m::Point::reset"),
        ("None", 61, 18, RK::Path, None, "c::m::Point::reset"),
        (
            "touch",
            62,
            14,
            RK::MethodCall,
            Some("Self"),
            "c::m::Point::reset",
        ),
        ("Point", 63, 9, RK::Path, None, "c::m::Point::reset"),
        ("new", 63, 15, RK::Call, Some("Self"), "c::m::Point::reset"),
        ("HashMap", 70, 16, RK::Type, None, "c::m::Map"),
        ("String", 70, 24, RK::Type, None, "c::m::Map"),
        ("Point", 70, 32, RK::Type, None, "c::m::Map"),
        // macro_rules transcriber: identifiers, not `$e`
        ("helper", 78, 20, RK::MacroToken, None, "c::m::square"),
        // the call before the shadowing `let helper` binds; later uses are the local
        ("helper", 82, 18, RK::Call, None, "c::m::user"),
        ("MapEntry", 84, 12, RK::Type, None, "c::m::user"),
        ("inner", 85, 5, RK::Path, None, "c::m::user"),
        ("f", 85, 12, RK::Call, Some("inner"), "c::m::user"),
        ("Point", 86, 13, RK::Path, None, "c::m::user"),
        ("new", 86, 20, RK::Call, Some("Point"), "c::m::user"),
        ("COUNTER", 86, 24, RK::Path, None, "c::m::user"),
        // `let p = Point::new(..)`: `p` is a `Point`; what `reset` returns is not evident
        ("reset", 87, 7, RK::MethodCall, Some("Point"), "c::m::user"),
        ("x", 87, 21, RK::Field, None, "c::m::user"),
        ("square", 87, 25, RK::Macro, None, "c::m::user"),
        ("LIMIT", 87, 43, RK::Path, None, "c::m::user"),
    ];
    assert_eq!(ref_rows(&fs), expected);
}

#[test]
fn docstrings() {
    let src = r#"/** Block doc
 * second line */
#[doc = "attr doc"]
// a plain comment is skipped
pub struct A;

//! inner docs do not attach
fn no_doc() {}

/// Outer one
//// four slashes: not a doc
///Outer two
#[cfg(test)]
fn two() {}

/// Stale doc
struct B;
fn after_b() {}

enum E {
    /// Variant doc
    #[default]
    V,
}
"#;
    let fs = extract(src, &module());
    let doc = |qn: &str| def(&fs, qn).docstring.clone();
    assert_eq!(
        doc("c::m::A").as_deref(),
        Some("Block doc\nsecond line\nattr doc")
    );
    assert_eq!(doc("c::m::no_doc"), None);
    assert_eq!(doc("c::m::two").as_deref(), Some("Outer one\nOuter two"));
    assert_eq!(doc("c::m::B").as_deref(), Some("Stale doc"));
    assert_eq!(doc("c::m::after_b"), None);
    assert_eq!(doc("c::m::E::V").as_deref(), Some("Variant doc"));
    // the fixture: `///` lines with an attribute in between, and a field doc
    let fs = extract(FIXTURE, &module());
    assert_eq!(
        def(&fs, "c::m::helper").docstring.as_deref(),
        Some("Adds one.\n\nSecond paragraph.")
    );
    assert_eq!(
        def(&fs, "c::m::Point::x").docstring.as_deref(),
        Some("The x coordinate.")
    );
    assert_eq!(def(&fs, "c::m::Point::y").docstring, None);
    // attributes and doc comments are outside the item's extent
    assert_eq!(def(&fs, "c::m::helper").start_line, 9);
}

#[test]
fn signatures() {
    let src = r#"pub(crate) async fn multi<T>(
    a: T,
    b: &str,
) -> Result<(), String>
where
    T: Clone,
{
    todo!()
}
pub struct Tuple(pub u8, String);
pub const N: usize = 3;
pub static mut S: [u8; 2] = [0; 2];
type Alias<T> = Vec<T>;
pub enum E<T> where T: Copy { V(T), W { x: T } }
pub trait Tr: Clone + Send { fn req(&self) -> u8; }
mod m;
macro_rules! mac { () => {} }
extern "C" { fn ext(x: i32) -> i32; }
"#;
    let fs = extract(src, &module());
    let sigs: Vec<(&str, &str)> = fs
        .definitions
        .iter()
        .map(|d| (d.qualified_name.as_str(), d.signature.as_str()))
        .collect();
    assert_eq!(
        sigs,
        vec![
            (
                "c::m::multi",
                "pub(crate) async fn multi<T>( a: T, b: &str, ) -> Result<(), String> where T: Clone,"
            ),
            ("c::m::Tuple", "pub struct Tuple(pub u8, String)"),
            ("c::m::N", "pub const N: usize"),
            ("c::m::S", "pub static mut S: [u8; 2]"),
            ("c::m::Alias", "type Alias<T> = Vec<T>"),
            ("c::m::E", "pub enum E<T> where T: Copy"),
            ("c::m::E::V", "V(T)"),
            ("c::m::E::W", "W { x: T }"),
            ("c::m::E::W::x", "x: T"),
            ("c::m::Tr", "pub trait Tr: Clone + Send"),
            ("c::m::Tr::req", "fn req(&self) -> u8"),
            ("c::m::m", "mod m"),
            ("c::m::mac", "macro_rules! mac"),
            ("c::m::ext", "fn ext(x: i32) -> i32"),
        ]
    );
    assert_eq!(def(&fs, "c::m::multi").kind, SK::Function);
    assert_eq!(def(&fs, "c::m::Tr::req").kind, SK::Method);
    assert_eq!(def(&fs, "c::m::ext").kind, SK::Function);
    assert_eq!(
        (
            def(&fs, "c::m::multi").start_line,
            def(&fs, "c::m::multi").end_line
        ),
        (1, 9)
    );
}

const MACRO_ITEMS: &str = r#"cfg_rt! {
    /// Spawns a task.
    pub fn spawn<F>(future: F) -> JoinHandle<F::Output> {
        spawn_inner(future)
    }

    pub struct Runtime { handle: Handle }
}

impl Runtime {
    cfg_rt! {
        pub fn block_on(&self) { self.handle.enter(); }
    }
}

cfg_not_rt!(
    pub(crate) fn fallback() {}
);

cfg_if::cfg_if! {
    if #[cfg(unix)] {
        mod unix;
    } else {
        mod other;
    }
}
"#;

#[test]
fn items_inside_item_macros() {
    let fs = extract(MACRO_ITEMS, &module());
    assert!(!fs.has_parse_errors);
    let expected: Vec<DefRow> = vec![
        ("spawn", SK::Function, "c::m::spawn", None, 3, 5),
        ("Runtime", SK::Struct, "c::m::Runtime", None, 7, 7),
        (
            "handle",
            SK::Field,
            "c::m::Runtime::handle",
            Some("Runtime"),
            7,
            7,
        ),
        (
            "block_on",
            SK::Method,
            "c::m::Runtime::block_on",
            Some("Runtime"),
            12,
            12,
        ),
        ("fallback", SK::Function, "c::m::fallback", None, 17, 17),
        ("unix", SK::Module, "c::m::unix", None, 22, 22),
        ("other", SK::Module, "c::m::other", None, 24, 24),
    ];
    assert_eq!(def_rows(&fs), expected);
    let spawn = def(&fs, "c::m::spawn");
    assert_eq!((spawn.name_line, spawn.name_column), (3, 12));
    assert_eq!(spawn.docstring.as_deref(), Some("Spawns a task."));
    assert_eq!(
        spawn.signature,
        "pub fn spawn<F>(future: F) -> JoinHandle<F::Output>"
    );
    let handle = def(&fs, "c::m::Runtime::handle");
    assert_eq!((handle.name_line, handle.name_column), (7, 26));

    let expected: Vec<RefRow> = vec![
        ("cfg_rt", 1, 1, RK::Macro, None, "c::m"),
        ("JoinHandle", 3, 35, RK::Type, None, "c::m::spawn"),
        ("Output", 3, 49, RK::Type, Some("F"), "c::m::spawn"),
        ("spawn_inner", 4, 9, RK::Call, None, "c::m::spawn"),
        ("Handle", 7, 34, RK::Type, None, "c::m::Runtime"),
        ("Runtime", 10, 6, RK::Type, None, "c::m::Runtime"),
        ("cfg_rt", 11, 5, RK::Macro, None, "c::m::Runtime"),
        // `self.handle` is a `Handle`: the field type of `Runtime`, itself defined in a macro
        (
            "handle",
            12,
            39,
            RK::Field,
            Some("Self"),
            "c::m::Runtime::block_on",
        ),
        (
            "enter",
            12,
            46,
            RK::MethodCall,
            Some("Handle"),
            "c::m::Runtime::block_on",
        ),
        ("cfg_not_rt", 16, 1, RK::Macro, None, "c::m"),
        ("cfg_if", 20, 1, RK::Path, None, "c::m"),
        ("cfg_if", 20, 9, RK::Macro, Some("cfg_if"), "c::m"),
    ];
    assert_eq!(ref_rows(&fs), expected);
}

#[test]
fn macro_arguments_and_tokens() {
    let src = r#"fn t() {
    let local = 1;
    assert_eq!(compute(local), LIMIT);
    assert!(matches!(value(), Shape::Empty if local > 0));
    my_dsl!(local => compute, a::b::c);
    println!("{x}", x = local);
    let v = vec![make(); COUNT];
    cfg!(feature = "x");
}
"#;
    let fs = extract(src, &module());
    let t = "c::m::t";
    let expected: Vec<RefRow> = vec![
        // arguments that parse as expressions are indexed as code; `local` is a local
        ("assert_eq", 3, 5, RK::Macro, None, t),
        ("compute", 3, 16, RK::Call, None, t),
        ("LIMIT", 3, 32, RK::Path, None, t),
        // `matches!(.., pat if cond)` is not an expression list: identifier tokens
        ("assert", 4, 5, RK::Macro, None, t),
        ("matches", 4, 13, RK::Macro, None, t),
        ("value", 4, 22, RK::MacroToken, None, t),
        ("Shape", 4, 31, RK::MacroToken, None, t),
        ("Empty", 4, 38, RK::MacroToken, Some("Shape"), t),
        ("my_dsl", 5, 5, RK::Macro, None, t),
        ("compute", 5, 22, RK::MacroToken, None, t),
        ("a", 5, 31, RK::MacroToken, None, t),
        ("b", 5, 34, RK::MacroToken, Some("a"), t),
        ("c", 5, 37, RK::MacroToken, Some("a::b"), t),
        // named format arguments are not references
        ("println", 6, 5, RK::Macro, None, t),
        ("vec", 7, 13, RK::Macro, None, t),
        ("make", 7, 18, RK::MacroToken, None, t),
        ("COUNT", 7, 26, RK::MacroToken, None, t),
        // cfg! predicates are not code
        ("cfg", 8, 5, RK::Macro, None, t),
    ];
    assert_eq!(ref_rows(&fs), expected);
}

#[test]
fn attributes_inside_token_trees_read_as_attributes() {
    // A `macro_rules!` transcriber and an unparsed invocation body are tokens; an attribute
    // there names what a parsed attribute names: `cfg` keys are configuration, not
    // references; `derive` names derive macros; another path is an attribute macro.
    let src = r#"macro_rules! gated {
    ($($item:item)*) => {
        $(
            #[cfg(any(feature = "net", all(unix, feature = "fs")))]
            #[cfg_attr(docsrs, doc(cfg(feature = "net")))]
            #[derive(Debug, Clone)]
            #[tracing::instrument]
            $item
        )*
    }
}
"#;
    let fs = extract(src, &module());
    let g = "c::m::gated";
    let expected: Vec<RefRow> = vec![
        ("Debug", 6, 22, RK::Macro, None, g),
        ("Clone", 6, 29, RK::Macro, None, g),
        ("instrument", 7, 24, RK::Macro, Some("tracing"), g),
    ];
    assert_eq!(ref_rows(&fs), expected);
}

#[test]
fn locals_are_not_references() {
    let src = r#"fn f(param: u32, (a, b): (u8, u8), Wrapper { inner }: Wrapper) -> u32 {
    let closure = |c: u32| c + param + GLOBAL;
    for (i, item) in list().iter().enumerate() { consume(i, item, a, b, inner); }
    if let Some(found) = lookup() { found; }
    while let Some(next) = pop() { next; }
    match param { 0 => zero(), n => n }
    let Some(z) = maybe() else { return 0 };
    closure(z)
}
"#;
    let fs = extract(src, &module());
    let rows: Vec<(&str, u32, u32, RK, Option<&str>)> = fs
        .references
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.line,
                r.column,
                r.kind,
                r.qualifier.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("Wrapper", 1, 36, RK::Path, None),
            ("inner", 1, 46, RK::Field, Some("Wrapper")),
            ("Wrapper", 1, 55, RK::Type, None),
            ("GLOBAL", 2, 40, RK::Path, None),
            ("list", 3, 22, RK::Call, None),
            ("iter", 3, 29, RK::MethodCall, None),
            ("enumerate", 3, 36, RK::MethodCall, None),
            ("consume", 3, 50, RK::Call, None),
            ("Some", 4, 12, RK::Path, None),
            ("lookup", 4, 26, RK::Call, None),
            ("Some", 5, 15, RK::Path, None),
            ("pop", 5, 28, RK::Call, None),
            ("zero", 6, 24, RK::Call, None),
            ("Some", 7, 9, RK::Path, None),
            ("maybe", 7, 19, RK::Call, None),
        ]
    );
    assert!(
        fs.references
            .iter()
            .all(|r| r.enclosing_symbol == "c::m::f")
    );
}

#[test]
fn paths_generics_and_qualifiers() {
    let src = r#"fn g<T: Iterator<Item = u32>>(it: T) -> Vec<u32> where T: Clone {
    let s = <T as Iterator>::next;
    let v = Vec::<u8>::with_capacity(3);
    crate::util::go();
    super::up::go();
    it.collect::<Vec<_>>()
}
"#;
    let fs = extract(src, &module());
    let rows: Vec<(&str, u32, u32, RK, Option<&str>)> = fs
        .references
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.line,
                r.column,
                r.kind,
                r.qualifier.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("Iterator", 1, 9, RK::Type, None),
            ("Item", 1, 18, RK::Type, Some("Iterator")),
            ("Vec", 1, 41, RK::Type, None),
            ("Clone", 1, 59, RK::Type, None),
            ("Iterator", 2, 19, RK::Type, None),
            ("next", 2, 30, RK::Path, Some("Iterator")),
            ("Vec", 3, 13, RK::Path, None),
            ("with_capacity", 3, 24, RK::Call, Some("Vec")),
            ("util", 4, 12, RK::Path, Some("crate")),
            ("go", 4, 18, RK::Call, Some("crate::util")),
            ("up", 5, 12, RK::Path, Some("super")),
            ("go", 5, 16, RK::Call, Some("super::up")),
            ("collect", 6, 8, RK::MethodCall, None),
            ("Vec", 6, 18, RK::Type, None),
        ]
    );
}

#[test]
fn parse_errors_are_flagged() {
    assert!(!extract("fn ok() {}\n", &module()).has_parse_errors);
    // a MISSING `}`
    let fs = extract("struct Broken {\n    x: u32\n", &module());
    assert!(fs.has_parse_errors);
    assert_eq!(def(&fs, "c::m::Broken::x").kind, SK::Field);
    // an ERROR node
    assert!(extract("fn f( {\n}\nfn g() {}\n", &module()).has_parse_errors);
    // errors inside a macro body that falls back to tokens do not count
    assert!(!extract("m! { fn () => struct }\n", &module()).has_parse_errors);
}

#[test]
fn non_ascii_columns_count_chars() {
    let src = "fn f() { let s = \"héé\"; go(); }\n";
    let fs = extract(src, &module());
    let go = fs.references.iter().find(|r| r.name == "go").unwrap();
    assert_eq!((go.line, go.column), (1, 25));
}

#[test]
fn extract_from_several_threads() {
    let reference = extract(FIXTURE, &module());
    let handles: Vec<_> = (0..4)
        .map(|_| std::thread::spawn(|| extract(FIXTURE, &module())))
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), reference);
    }
}

#[test]
fn module_paths() {
    let mp = |p: &str| module_path_for("regex_automata", p).join("::");
    assert_eq!(mp("src/lib.rs"), "regex_automata");
    assert_eq!(mp("src/main.rs"), "regex_automata");
    assert_eq!(mp("src/util/iter.rs"), "regex_automata::util::iter");
    assert_eq!(mp("src/util/mod.rs"), "regex_automata::util");
    assert_eq!(mp("src/util/main.rs"), "regex_automata::util::main");
    assert_eq!(mp("src/bin/foo.rs"), "regex_automata::bin::foo");
    assert_eq!(mp("src/bin/foo/main.rs"), "regex_automata::bin::foo");
    assert_eq!(mp("tests/foo.rs"), "regex_automata::tests::foo");
    assert_eq!(mp("tests/it/main.rs"), "regex_automata::tests::it");
    assert_eq!(mp("tests/it/mod.rs"), "regex_automata::tests::it");
    assert_eq!(mp("benches/x.rs"), "regex_automata::benches::x");
    assert_eq!(
        mp("examples/my-example.rs"),
        "regex_automata::examples::my_example"
    );
    assert_eq!(mp("build.rs"), "regex_automata::build");
    assert_eq!(mp("./src\\util\\iter.rs"), "regex_automata::util::iter");
}

/// Robustness and speed over the tokio sources in the cargo registry:
/// `cargo test -p scryer-engine --release --lib -- --ignored tokio_corpus --nocapture`.
#[test]
#[ignore]
fn tokio_corpus() {
    fn rs_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                rs_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let home = std::env::var("HOME").unwrap();
    let registry = std::path::Path::new(&home).join(".cargo/registry/src");
    let mut crate_roots = Vec::new();
    for index in std::fs::read_dir(&registry).unwrap().flatten() {
        for krate in std::fs::read_dir(index.path()).unwrap().flatten() {
            if krate.file_name().to_string_lossy().starts_with("tokio-1.") {
                crate_roots.push(krate.path());
            }
        }
    }
    assert!(
        !crate_roots.is_empty(),
        "no tokio-1.* in {}",
        registry.display()
    );
    let root = &crate_roots[0];
    let mut files = Vec::new();
    rs_files(&root.join("src"), &mut files);
    files.sort();
    let sources: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().to_string();
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    let lines: usize = sources.iter().map(|(_, s)| s.lines().count()).sum();
    let mut by_kind = std::collections::BTreeMap::<&str, usize>::new();
    let mut ref_kinds = std::collections::BTreeMap::<&str, usize>::new();
    let (mut defs, mut refs, mut errors) = (0usize, 0usize, 0usize);
    let mut slowest = (std::time::Duration::ZERO, String::new(), 0usize);
    // references with a qualifier, by kind (receiver types for `method_call`)
    let mut qualified = std::collections::BTreeMap::<&str, usize>::new();
    extract::receivers::take_stats();
    let started = std::time::Instant::now();
    for (rel, src) in &sources {
        let t = std::time::Instant::now();
        let fs = extract(src, &module_path_for("tokio", rel));
        let dt = t.elapsed();
        if dt > slowest.0 {
            slowest = (dt, rel.clone(), src.lines().count());
        }
        for d in &fs.definitions {
            *by_kind.entry(d.kind.as_str()).or_default() += 1;
        }
        for r in &fs.references {
            *ref_kinds.entry(r.kind.as_str()).or_default() += 1;
            if r.qualifier.is_some() {
                *qualified.entry(r.kind.as_str()).or_default() += 1;
            }
        }
        defs += fs.definitions.len();
        refs += fs.references.len();
        errors += usize::from(fs.has_parse_errors);
    }
    let total = started.elapsed();
    println!(
        "{}: {} files, {lines} lines, {defs} definitions, {refs} references, \
         {errors} files with parse errors, total {total:?}; slowest {} ({} lines) {:?}",
        root.display(),
        sources.len(),
        slowest.1,
        slowest.2,
        slowest.0
    );
    println!("definitions by kind: {by_kind:?}\nreferences by kind: {ref_kinds:?}");
    println!("qualified references by kind: {qualified:?}");
    println!("receiver types by reference kind and rule:");
    for ((kind, rule), n) in extract::receivers::take_stats() {
        println!("  {kind:<12} {:<24} {n}", rule.as_str());
    }
    assert!(defs > 1000 && refs > 10_000);

    // One big file: every tokio source concatenated (~100k lines), then a ~5,000-line slice.
    let big: String = sources
        .iter()
        .map(|(_, s)| s.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let t = std::time::Instant::now();
    let fs = extract(&big, &module_path_for("tokio", "src/lib.rs"));
    println!(
        "all sources as one file: {} lines, {} definitions, {} references, {:?}",
        big.lines().count(),
        fs.definitions.len(),
        fs.references.len(),
        t.elapsed()
    );
    let five_k: String = big.lines().take(5000).collect::<Vec<_>>().join("\n");
    let t = std::time::Instant::now();
    let fs = extract(&five_k, &module_path_for("tokio", "src/lib.rs"));
    println!(
        "first 5000 lines as one file: {} definitions, {} references, {:?}",
        fs.definitions.len(),
        fs.references.len(),
        t.elapsed()
    );
}

#[test]
fn an_edited_file_reparsed_from_its_kept_tree_extracts_as_from_scratch() {
    let path = "src/edited_fixture.rs";
    let edits = [
        FIXTURE.to_string(),
        // a line inserted near the top: every later position moves
        FIXTURE.replacen("use std::fmt", "// added\nuse std::fmt", 1),
        // an item renamed in the middle
        FIXTURE.replacen("fn user()", "fn renamed_user()", 1),
        // a line added at the top and one at the end (two edits at once)
        format!("// top\n{FIXTURE}\nfn appended() {{}}\n"),
        FIXTURE.to_string(),
        // a tail cut off, then the whole text back
        FIXTURE[..FIXTURE.len() / 2].to_string(),
        FIXTURE.to_string(),
        String::new(),
        FIXTURE.to_string(),
    ];
    for (i, text) in edits.iter().enumerate() {
        assert_eq!(
            extract_edited(text, &module(), path),
            extract(text, &module()),
            "edit {i}"
        );
    }
}

#[test]
fn edits_between_two_texts_are_one_per_changed_run_of_lines() {
    let e = edits_between("ab\ncd\nef", "ab\nXYZ\nef");
    assert_eq!(e.len(), 1);
    assert_eq!(
        (e[0].start_byte, e[0].old_end_byte, e[0].new_end_byte),
        (3, 6, 7)
    );
    assert_eq!(e[0].start_position, Point::new(1, 0));
    assert_eq!(e[0].old_end_position, Point::new(2, 0));
    assert_eq!(e[0].new_end_position, Point::new(2, 0));
    assert!(edits_between("abc", "abc").is_empty());
    // A line added at the top and one at the end: two edits, the second in the
    // coordinates the first left.
    let e = edits_between("a\nb\n", "top\na\nb\nend\n");
    let spans: Vec<_> = e
        .iter()
        .map(|e| (e.start_byte, e.old_end_byte, e.new_end_byte))
        .collect();
    assert_eq!(spans, [(0, 0, 4), (8, 8, 12)]);
    assert_eq!(e[1].start_position, Point::new(3, 0));
    assert_eq!(e[1].new_end_position, Point::new(4, 0));
}
