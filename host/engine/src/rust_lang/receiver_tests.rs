//! Receiver types in the qualifiers of `MethodCall` and `Field` references
//! (see `extract/receivers.rs` for the rules).

use super::*;
use crate::model::ReferenceKind as RK;

type Row<'a> = (&'a str, u32, RK, Option<&'a str>);

/// The `MethodCall` and `Field` references of `src`, in source order.
fn members(src: &str) -> Vec<(String, u32, RK, Option<String>)> {
    let fs = extract(src, &["c".to_string(), "m".to_string()]);
    assert!(!fs.has_parse_errors, "fixture does not parse");
    fs.references
        .into_iter()
        .filter(|r| matches!(r.kind, RK::MethodCall | RK::Field))
        .map(|r| (r.name, r.line, r.kind, r.qualifier))
        .collect()
}

fn check(src: &str, expected: &[Row<'_>]) {
    let got = members(src);
    let got: Vec<Row<'_>> = got
        .iter()
        .map(|(n, l, k, q)| (n.as_str(), *l, *k, q.as_deref()))
        .collect();
    assert_eq!(got, expected);
}

/// Rule 1 (`self` → `Self`) and rule 4 (fields of the owner struct, declared in this file).
#[test]
fn self_and_self_fields() {
    let src = r#"use std::sync::Arc;
pub struct RangeTrie<T> {
    root: Node,
    states: Vec<State>,
    parent: Option<Box<RangeTrie<T>>>,
    shared: Arc<Inner>,
    value: T,
    next: Box<Self>,
    pub(crate) r#ref: &'static mut Inner,
}
struct Wrapper(Inner, pub &'static str);
impl<T> RangeTrie<T> {
    fn insert(&mut self, x: u8) {
        self.root.add(x);
        self.states.push(x);
        self.parent.take();
        self.shared.lock();
        self.value.get();
        self.next.root.len;
        self.missing.go();
        self.clear();
        let f = || self.clear();
        fn nested() { self.clear(); }
        self.r#ref.read();
    }
}
impl Wrapper {
    fn get(&self) -> usize { self.0.read(); self.1.len() }
}
trait Tr { fn d(&self) { self.go(); } }
fn free() { self.go(); }
impl Later { fn f(self: Box<Self>) { self.inner.run(); } }
struct Later { inner: Engine }
"#;
    check(
        src,
        &[
            // field types: `&`, generics stripped; `Box`/`Arc` unwrapped; `Option` kept
            ("root", 14, RK::Field, Some("Self")),
            ("add", 14, RK::MethodCall, Some("Node")),
            ("states", 15, RK::Field, Some("Self")),
            ("push", 15, RK::MethodCall, Some("Vec")),
            ("parent", 16, RK::Field, Some("Self")),
            ("take", 16, RK::MethodCall, Some("Option")),
            ("shared", 17, RK::Field, Some("Self")),
            ("lock", 17, RK::MethodCall, Some("Inner")),
            // a field of generic-parameter type: unknown
            ("value", 18, RK::Field, Some("Self")),
            ("get", 18, RK::MethodCall, None),
            // `Box<Self>` in the struct is the struct itself; chains follow field types
            ("next", 19, RK::Field, Some("Self")),
            ("root", 19, RK::Field, Some("RangeTrie")),
            ("len", 19, RK::Field, Some("Node")),
            // a field the struct does not declare: unknown
            ("missing", 20, RK::Field, Some("Self")),
            ("go", 20, RK::MethodCall, None),
            ("clear", 21, RK::MethodCall, Some("Self")),
            // closures keep `self`; nested functions have none
            ("clear", 22, RK::MethodCall, Some("Self")),
            ("clear", 23, RK::MethodCall, None),
            ("ref", 24, RK::Field, Some("Self")),
            ("read", 24, RK::MethodCall, Some("Inner")),
            // tuple struct fields by index (the index itself is not a reference)
            ("read", 28, RK::MethodCall, Some("Inner")),
            ("len", 28, RK::MethodCall, Some("str")),
            // trait default methods: `Self`
            ("go", 30, RK::MethodCall, Some("Self")),
            // no `self` outside impl and trait bodies
            ("go", 31, RK::MethodCall, None),
            // the struct may come after the impl
            ("inner", 32, RK::Field, Some("Self")),
            ("run", 32, RK::MethodCall, Some("Engine")),
        ],
    );
}

/// `#[cfg]`-alternative definitions of one struct: fields whose types agree are kept.
#[test]
fn duplicate_struct_definitions() {
    let src = r#"#[cfg(unix)]
struct Io { fd: Fd, poll: Poll }
#[cfg(not(unix))]
struct Io { fd: Handle, poll: Poll }
impl Io {
    fn f(&self) { self.fd.close(); self.poll.wake(); }
}
"#;
    check(
        src,
        &[
            ("fd", 6, RK::Field, Some("Self")),
            ("close", 6, RK::MethodCall, None),
            ("poll", 6, RK::Field, Some("Self")),
            ("wake", 6, RK::MethodCall, Some("Poll")),
        ],
    );
}

/// Rule 2: parameters with declared types, stripped to the last path segment.
#[test]
fn declared_parameter_types() {
    let src = r#"fn typed<T: Clone>(
    cfg: &Config,
    map: &mut HashMap<u8, u8>,
    opt: Option<Foo>,
    handler: Box<dyn Handler + Send>,
    iter: impl Iterator<Item = u8>,
    raw: *const Raw,
    t: T,
    text: &str,
    (a, b): (A, B),
    mut queue: io::Queue,
    arc: std::sync::Arc<Mutex<State>>,
    items: &[Item],
    other: &Self,
    assoc: T::Output,
    r#type: Kind,
) {
    cfg.get(); map.insert(1, 2); opt.take(); handler.handle(); iter.next();
    raw.read(); t.clone(); text.len(); a.go(); queue.pop(); arc.lock(); items.len();
    cfg.name.len(); other.eq(); assoc.go(); r#type.is();
}
"#;
    check(
        src,
        &[
            ("get", 18, RK::MethodCall, Some("Config")),
            ("insert", 18, RK::MethodCall, Some("HashMap")),
            // `Option<Foo>` is an `Option`: only `Box`, `Arc` and `Rc` are looked through
            ("take", 18, RK::MethodCall, Some("Option")),
            ("handle", 18, RK::MethodCall, Some("Handler")),
            ("next", 18, RK::MethodCall, Some("Iterator")),
            ("read", 19, RK::MethodCall, Some("Raw")),
            // generic parameters, destructured bindings and slices: unknown
            ("clone", 19, RK::MethodCall, None),
            ("len", 19, RK::MethodCall, Some("str")),
            ("go", 19, RK::MethodCall, None),
            ("pop", 19, RK::MethodCall, Some("Queue")),
            ("lock", 19, RK::MethodCall, Some("Mutex")),
            ("len", 19, RK::MethodCall, None),
            // `Config` is not defined in this file: its fields are unknown
            ("name", 20, RK::Field, Some("Config")),
            ("len", 20, RK::MethodCall, None),
            ("eq", 20, RK::MethodCall, Some("Self")),
            // associated types of generic parameters: unknown
            ("go", 20, RK::MethodCall, None),
            ("is", 20, RK::MethodCall, Some("Kind")),
        ],
    );
}

/// Rules 2, 3 and 6 for `let`: declared types, constructor calls, shadowing, and bindings
/// whose type is not evident.
#[test]
fn let_bindings_and_shadowing() {
    let src = r#"fn lets() {
    let t: RangeTrie = make();
    t.insert(1);
    let u = RangeTrie::new();
    u.insert(2);
    let v = a::b::Builder::with_capacity(3);
    v.build();
    let w = Point { x: 1 };
    w.norm();
    let d = Config::default();
    d.apply();
    let m = foo::bar();
    m.run();
    let e = Shape::Circle(1.0);
    e.area();
    let r = Shape::Rect { w: 1 };
    r.area();
    let g = Vec::<u8>::new();
    g.push(1);
    let t = make();
    t.insert(3);
    let u: &Other = &x;
    u.insert(4);
    for u in list() { u.insert(5); }
    u.insert(6);
    let c = |k| k.go();
    let c2 = |k: &Key| k.go();
    if let Some(p) = opt() { p.go(); }
    let mut q = Queue::new();
    q.pop();
    let alias = &q;
    alias.pop();
    let copy = q.clone();
    copy.pop();
    let (h, i) = (Queue::new(), 1);
    h.pop();
    let f = File::open(path)?;
    f.read();
    let s = TcpStream::connect(addr).await?;
    s.write();
    let q = q;
    q.pop();
    let shared = Arc::new(Mutex::new(q));
    shared.lock();
    let unknown = Box::new(make());
    unknown.go();
    let again = Arc::clone(&shared);
    again.lock();
    let raw = Box::into_raw(b);
    raw.read();
}
"#;
    check(
        src,
        &[
            ("insert", 3, RK::MethodCall, Some("RangeTrie")),
            ("insert", 5, RK::MethodCall, Some("RangeTrie")),
            // the last segment of a longer path
            ("build", 7, RK::MethodCall, Some("Builder")),
            ("x", 8, RK::Field, Some("Point")),
            ("norm", 9, RK::MethodCall, Some("Point")),
            ("apply", 11, RK::MethodCall, Some("Config")),
            // a lower-case module function: unknown
            ("run", 13, RK::MethodCall, None),
            // enum variants, as calls and as struct expressions, build the enum
            ("area", 15, RK::MethodCall, Some("Shape")),
            ("w", 16, RK::Field, Some("Shape::Rect")),
            ("area", 17, RK::MethodCall, Some("Shape")),
            ("push", 19, RK::MethodCall, Some("Vec")),
            // shadowed by a binding of unknown type
            ("insert", 21, RK::MethodCall, None),
            ("insert", 23, RK::MethodCall, Some("Other")),
            // `for` bindings are unknown, and stay the latest binding of `u`
            ("insert", 24, RK::MethodCall, None),
            ("insert", 25, RK::MethodCall, None),
            // closure parameters: unknown unless typed
            ("go", 26, RK::MethodCall, None),
            ("go", 27, RK::MethodCall, Some("Key")),
            ("go", 28, RK::MethodCall, None),
            ("pop", 30, RK::MethodCall, Some("Queue")),
            // `let a = &b` and `let a = b` carry `b`'s type; a method's result does not
            ("pop", 32, RK::MethodCall, Some("Queue")),
            ("clone", 33, RK::MethodCall, Some("Queue")),
            ("pop", 34, RK::MethodCall, None),
            ("pop", 36, RK::MethodCall, None),
            // `Type::assoc(..)?` and `Type::assoc(..).await` are taken to give `Type`
            ("read", 38, RK::MethodCall, Some("File")),
            ("write", 40, RK::MethodCall, Some("TcpStream")),
            ("pop", 42, RK::MethodCall, Some("Queue")),
            // `Box`, `Arc`, `Rc` constructors are looked through, like declared types
            ("lock", 44, RK::MethodCall, Some("Mutex")),
            ("go", 46, RK::MethodCall, None),
            ("lock", 48, RK::MethodCall, Some("Mutex")),
            ("read", 50, RK::MethodCall, None),
        ],
    );
}

/// Rule 5: receivers that are constructor calls or struct expressions themselves.
#[test]
fn constructor_receivers() {
    let src = r#"fn chains<T: Default>() {
    RangeTrie::new().insert(1);
    Point { x: 1 }.norm();
    a::b::Kind::create().run();
    foo::bar().run();
    Shape::Rect { w: 1 }.area();
    (Point { x: 1 }).norm();
    T::default().go();
    <Vec<u8>>::new().len();
    Builder::new().name("x").build();
    Builder::new::<u8>().name("y");
    Point { x: 1 }.x;
}
impl Point {
    fn g() { Self::new().go(); Self { x: 1 }.norm(); Self::Variant(2).go(); }
}
"#;
    check(
        src,
        &[
            ("insert", 2, RK::MethodCall, Some("RangeTrie")),
            ("x", 3, RK::Field, Some("Point")),
            ("norm", 3, RK::MethodCall, Some("Point")),
            ("run", 4, RK::MethodCall, Some("Kind")),
            ("run", 5, RK::MethodCall, None),
            ("w", 6, RK::Field, Some("Shape::Rect")),
            ("area", 6, RK::MethodCall, Some("Shape")),
            ("x", 7, RK::Field, Some("Point")),
            ("norm", 7, RK::MethodCall, Some("Point")),
            // a generic parameter's associated function: unknown
            ("go", 8, RK::MethodCall, None),
            ("len", 9, RK::MethodCall, Some("Vec")),
            // only the first call of a chain is evident
            ("name", 10, RK::MethodCall, Some("Builder")),
            ("build", 10, RK::MethodCall, None),
            ("name", 11, RK::MethodCall, Some("Builder")),
            // struct literal field (qualified by the struct path), then a field access
            ("x", 12, RK::Field, Some("Point")),
            ("x", 12, RK::Field, Some("Point")),
            ("go", 15, RK::MethodCall, Some("Self")),
            ("x", 15, RK::Field, Some("Self")),
            ("norm", 15, RK::MethodCall, Some("Self")),
            ("go", 15, RK::MethodCall, Some("Self")),
        ],
    );
}

/// Macro bodies re-parsed as code get receiver types; token-level references do not.
#[test]
fn receivers_inside_macros() {
    let src = r#"struct S { buf: Buffer }
impl S {
    fn f(&self, t: Trie) {
        assert_eq!(t.len(), self.buf.len());
        tokio::select! { _ = t.wait() => {} }
        my_dsl!(t => t.pop());
        let v = vec![t.first()];
    }
}
"#;
    let fs = extract(src, &["c".to_string(), "m".to_string()]);
    let rows: Vec<(&str, u32, RK, Option<&str>)> = fs
        .references
        .iter()
        .filter(|r| matches!(r.kind, RK::MethodCall | RK::Field | RK::MacroToken))
        .map(|r| (r.name.as_str(), r.line, r.kind, r.qualifier.as_deref()))
        .collect();
    assert_eq!(
        rows,
        vec![
            ("len", 4, RK::MethodCall, Some("Trie")),
            ("buf", 4, RK::Field, Some("Self")),
            ("len", 4, RK::MethodCall, Some("Buffer")),
            // bodies that are not expressions or statements: tokens, unqualified
            ("wait", 5, RK::MacroToken, None),
            ("pop", 6, RK::MacroToken, None),
            ("first", 7, RK::MethodCall, Some("Trie")),
        ]
    );
}

/// Rules 3 and 5 hold only for functions named like constructors (and tuple
/// variants): `NFA::config()` returns a `Config`, not an `NFA`.
#[test]
fn only_constructor_names_give_their_type() {
    let src = r#"fn f() {
    NFA::config().which_captures(1);
    let c = NFA::compiler();
    c.build();
    let t = Trie::with_capacity(4);
    t.insert(1);
    File::open(p)?.read(b);
    Kind::Leaf(1).go();
}
"#;
    check(
        src,
        &[
            ("which_captures", 2, RK::MethodCall, None),
            ("build", 4, RK::MethodCall, None),
            ("insert", 6, RK::MethodCall, Some("Trie")),
            ("read", 7, RK::MethodCall, Some("File")),
            ("go", 8, RK::MethodCall, Some("Kind")),
        ],
    );
}

/// `Pin` is looked through like `Box`: a method called on `Pin::new(&mut x)` or on a
/// `Pin<&mut T>` reaches `T`'s (or a trait's) method.
#[test]
fn pins_are_looked_through() {
    let src = r#"fn f(w: Pin<&mut Writer>, inner: Inner) {
    w.poll_write(1);
    Pin::new(&mut inner).poll_flush(2);
}
"#;
    check(
        src,
        &[
            ("poll_write", 2, RK::MethodCall, Some("Writer")),
            ("poll_flush", 3, RK::MethodCall, Some("Inner")),
        ],
    );
}
