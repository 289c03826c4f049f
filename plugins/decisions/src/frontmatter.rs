//! YAML frontmatter read into gray_matter's `Pod` from yaml-rust2's event stream, with
//! alias expansion bounded.
//!
//! yaml-rust2's loader copies an anchored node at every alias, so ten levels of ten
//! aliases (a few hundred bytes) expand to 10^10 nodes and the parse never finishes: an
//! ADR file in a checkout stalled the memory router until its CPU deadline. Here an
//! alias is copied only while the copies stay under [`MAX_ALIAS_NODES`]; past that it
//! reads as empty and the document carries a warning, so the rest of its frontmatter
//! (title, number, status) is still read and every other ADR still indexes.

use std::collections::HashMap;

use gray_matter::Pod;
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;
use yaml_rust2::yaml::{Hash, Yaml};

/// Most nodes that aliases may add to one document's frontmatter, all aliases together.
/// Real frontmatter uses none; a few shared lists stay far below.
pub const MAX_ALIAS_NODES: u64 = 10_000;

/// The first YAML document of `matter`, and a warning when it had to be cut or is not
/// valid YAML (then no data: the document reads as plain Markdown).
pub fn read(matter: &str) -> (Option<Pod>, Option<String>) {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(matter);
    loop {
        match parser.next_token() {
            Ok((Event::StreamEnd | Event::DocumentEnd, _)) => break,
            Ok((ev, _)) => b.on_event(ev),
            Err(e) => {
                return (
                    None,
                    Some(format!(
                        "frontmatter is not valid YAML ({e}); read as plain Markdown"
                    )),
                );
            }
        }
    }
    let warning = b.cut.then(|| {
        format!(
            "frontmatter aliases expand past {MAX_ALIAS_NODES} nodes; aliases past that read as empty"
        )
    });
    (b.root.map(Into::into), warning)
}

/// A collection being read: its contents, anchor, node count, and a mapping's pending key.
struct Open {
    node: Yaml,
    anchor: usize,
    size: u64,
    key: Option<Yaml>,
}

#[derive(Default)]
struct Builder {
    stack: Vec<Open>,
    /// Each anchored node with its size in nodes.
    anchors: HashMap<usize, (Yaml, u64)>,
    root: Option<Yaml>,
    /// Nodes added by aliases so far.
    copied: u64,
    cut: bool,
}

impl Builder {
    fn on_event(&mut self, ev: Event) {
        match ev {
            Event::SequenceStart(anchor, _) => self.open(Yaml::Array(Vec::new()), anchor),
            Event::MappingStart(anchor, _) => self.open(Yaml::Hash(Hash::new()), anchor),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(o) = self.stack.pop() {
                    self.insert(o.node, o.anchor, o.size);
                }
            }
            Event::Scalar(v, style, anchor, _) => {
                let node = if style == TScalarStyle::Plain {
                    Yaml::from_str(&v)
                } else {
                    Yaml::String(v)
                };
                self.insert(node, anchor, 1);
            }
            Event::Alias(id) => {
                let (node, size) = match self.anchors.get(&id) {
                    Some((node, size)) if self.copied + size <= MAX_ALIAS_NODES => {
                        self.copied += size;
                        (node.clone(), *size)
                    }
                    Some(_) => {
                        self.cut = true;
                        (Yaml::Null, 1)
                    }
                    None => (Yaml::Null, 1),
                };
                self.insert(node, 0, size);
            }
            _ => {}
        }
    }

    fn open(&mut self, node: Yaml, anchor: usize) {
        self.stack.push(Open {
            node,
            anchor,
            size: 1,
            key: None,
        });
    }

    /// Places a finished node in the collection being read (or as the root).
    fn insert(&mut self, node: Yaml, anchor: usize, size: u64) {
        if anchor > 0 {
            self.anchors.insert(anchor, (node.clone(), size));
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root.get_or_insert(node);
            return;
        };
        parent.size = parent.size.saturating_add(size);
        match &mut parent.node {
            Yaml::Array(items) => items.push(node),
            Yaml::Hash(map) => match parent.key.take() {
                None => parent.key = Some(node),
                // A repeated key keeps its last value.
                Some(key) => {
                    map.insert(key, node);
                }
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(pod: &Pod, key: &str) -> Option<Pod> {
        match pod {
            Pod::Hash(m) => m.get(key).cloned(),
            _ => None,
        }
    }

    #[test]
    fn ordinary_frontmatter_reads_as_gray_matter_reads_it() {
        let text = "number: 7\ntitle: \"A: title\"\nstatus: accepted\naffected_paths:\n  - src/**\n  - 'docs/*.md'\nratio: 0.5\nflag: true\n";
        let (pod, warning) = read(text);
        assert!(warning.is_none(), "{warning:?}");
        let pod = pod.unwrap();
        let theirs =
            <gray_matter::engine::YAML as gray_matter::engine::Engine>::parse(text).unwrap();
        assert_eq!(pod, theirs);
        assert_eq!(field(&pod, "number"), Some(Pod::Integer(7)));
    }

    #[test]
    fn aliases_are_copied_within_the_limit() {
        let (pod, warning) = read("base: &b [x, y]\ncopy: *b\n");
        assert!(warning.is_none());
        let pod = pod.unwrap();
        assert_eq!(field(&pod, "copy"), field(&pod, "base"));
    }

    #[test]
    fn an_alias_bomb_is_cut_with_a_warning_and_the_rest_is_read() {
        let mut yaml = String::from("title: bomb\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            yaml.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                [prev.as_str(); 10].join(", ")
            ));
        }
        yaml.push_str("status: accepted\n");
        let (pod, warning) = read(&yaml);
        assert!(warning.unwrap().contains("aliases expand past"));
        let pod = pod.unwrap();
        assert_eq!(field(&pod, "title"), Some(Pod::String("bomb".into())));
        assert_eq!(field(&pod, "status"), Some(Pod::String("accepted".into())));
    }

    #[test]
    fn invalid_yaml_is_a_warning_and_no_data() {
        let (pod, warning) = read("title: [unclosed\n");
        assert!(pod.is_none());
        assert!(warning.unwrap().contains("not valid YAML"));
    }
}
