//! Node kinds and fields by number: [`NodeExt`], what every extractor asks a node.
//!
//! tree-sitter's by-name calls redo a look-up on every node. `Node::child_by_field_name`
//! finds the field's id by comparing the name with the grammar's field names one after
//! another (`strncmp`), and `Node::kind` measures and checks the kind's C string. The
//! extractors ask both of nearly every node: in a profile of the Rust extractor over 1,500
//! of the monorepo's files they were 15 % of the walk's samples (9.6 % field names, 5.2 %
//! kinds; docs/learnings/scale.md, stop 46). Here each grammar's kind names and field ids
//! are read once per process, and a node's are found by number.
//!
//! Each grammar's tables are kept for the life of the process (a few kilobytes each, one
//! per grammar ever parsed: five today), so a kind's name can be `&'static str`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;

use tree_sitter::{Language, Node};

/// What extractors ask a node, answered from its grammar's [`Tables`].
pub trait NodeExt<'t> {
    /// [`Node::child_by_field_name`], found by the field's id.
    fn field(&self, name: &str) -> Option<Node<'t>>;
    /// [`Node::kind`], read from a table.
    fn kind_str(&self) -> &'t str;
}

impl<'t> NodeExt<'t> for Node<'t> {
    #[inline]
    fn field(&self, name: &str) -> Option<Node<'t>> {
        let id = *tables(&self.language()).fields.get(name)?;
        self.child_by_field_id(id)
    }

    #[inline]
    fn kind_str(&self) -> &'t str {
        match tables(&self.language())
            .kinds
            .get(usize::from(self.kind_id()))
        {
            Some(kind) => kind,
            // The built-in `ERROR` kind's id is past the grammar's own.
            None => self.kind(),
        }
    }
}

/// One grammar's names, read once.
struct Tables {
    /// Kind names by kind id ([`Node::kind_id`]).
    kinds: Vec<Box<str>>,
    /// Field ids by name.
    fields: HashMap<Box<str>, u16, foldhash::fast::FixedState>,
}

impl Tables {
    fn read(language: &Language) -> Tables {
        let kinds = (0..language.node_kind_count())
            .map(|id| {
                u16::try_from(id)
                    .ok()
                    .and_then(|id| language.node_kind_for_id(id))
                    .unwrap_or("")
                    .into()
            })
            .collect();
        let fields = (1..=language.field_count())
            .filter_map(|id| {
                let id = u16::try_from(id).ok()?;
                Some((language.field_name_for_id(id)?.into(), id))
            })
            .collect();
        Tables { kinds, fields }
    }
}

/// Every grammar's tables, made by the first thread to meet it.
static GRAMMARS: Mutex<Vec<(Language, &'static Tables)>> = Mutex::new(Vec::new());

thread_local! {
    /// The grammars this thread has met, so a look-up takes no lock.
    static MET: RefCell<Vec<(Language, &'static Tables)>> = const { RefCell::new(Vec::new()) };
}

fn tables(language: &Language) -> &'static Tables {
    MET.with(|met| {
        if let Some((_, tables)) = met.borrow().iter().find(|(l, _)| l == language) {
            return *tables;
        }
        let tables = {
            let mut all = GRAMMARS.lock().unwrap_or_else(|p| p.into_inner());
            match all.iter().find(|(l, _)| l == language) {
                Some((_, tables)) => *tables,
                None => {
                    let tables: &'static Tables = Box::leak(Box::new(Tables::read(language)));
                    all.push((language.clone(), tables));
                    tables
                }
            }
        };
        met.borrow_mut().push((language.clone(), tables));
        tables
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every node of a file in each grammar, by the tables and by tree-sitter's names.
    #[test]
    fn kinds_and_fields_by_number_are_tree_sitters_by_name() {
        let samples: [(Language, &str); 5] = [
            (
                tree_sitter_rust::LANGUAGE.into(),
                "/// d\nimpl<T: Clone> S<T> { fn f(&self) -> u8 { let x: u8 = self.a.b(1); match x { 0 => 1, _ => x } } }\nfn g( { oops",
            ),
            (
                tree_sitter_python::LANGUAGE.into(),
                "class A(B):\n    def f(self, x: int = 1) -> int:\n        return [y for y in x if y]\n",
            ),
            (
                tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
                "class A<T> extends B implements C { f(x: T): number { return x as number; } }",
            ),
            (
                tree_sitter_typescript::LANGUAGE_TSX.into(),
                "const a = <div id={x}>{f(y)}</div>; function g<T,>(t: T) { return t }",
            ),
            (
                tree_sitter_go::LANGUAGE.into(),
                "package p\nfunc (r *R) F(x int) (int, error) { return x.y(z), nil }\n",
            ),
        ];
        let mut errors = 0;
        for (language, source) in samples {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&language).unwrap();
            let tree = parser.parse(source, None).unwrap();
            let names: Vec<&str> = (1..=language.field_count() as u16)
                .filter_map(|id| language.field_name_for_id(id))
                .collect();
            assert!(names.len() > 10, "{names:?}");
            let mut cursor = tree.walk();
            let (mut nodes, mut with_fields) = (0, 0);
            loop {
                let node = cursor.node();
                nodes += 1;
                assert_eq!(node.kind_str(), node.kind());
                errors += usize::from(node.is_error());
                for name in names.iter().copied().chain(["no_such_field"]) {
                    assert_eq!(node.field(name), node.child_by_field_name(name), "{name}");
                    with_fields += usize::from(node.field(name).is_some());
                }
                if cursor.goto_first_child() || cursor.goto_next_sibling() {
                    continue;
                }
                while cursor.goto_parent() && !cursor.goto_next_sibling() {}
                if cursor.node() == tree.root_node() {
                    break;
                }
            }
            assert!(nodes > 20 && with_fields > 5, "{nodes} {with_fields}");
        }
        // The Rust sample's syntax error has a kind past the grammar's own ids.
        assert!(errors > 0);
    }
}
