//! `get_file_outline`: the definitions of one file as a tree, fitted to the budget by
//! shedding detail first (docstrings, then signatures) and only then items.

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::{ToolResult, to_compact_json};
use serde_json::{Value, json};

use scryer_plugin_sdk::host::{Ctx, Format, Host, Sym};

const TYPE_KINDS: [&str; 7] = [
    "struct",
    "enum",
    "union",
    "trait",
    "type_alias",
    "class",
    "interface",
];

struct Node<'a> {
    sym: &'a Sym,
    children: Vec<Node<'a>>,
}

/// Nests each symbol under its parent: the innermost symbol that contains it and whose
/// qualified name prefixes it (fields, variants, inline modules, trait items), or the
/// type in this file that owns it (methods of `impl Type` blocks).
fn build_tree(symbols: &[Sym]) -> Vec<Node<'_>> {
    let mut order: Vec<usize> = (0..symbols.len()).collect();
    order.sort_by_key(|&i| {
        (
            symbols[i].start_line,
            std::cmp::Reverse(symbols[i].end_line),
        )
    });
    let parent_of = |i: usize| -> Option<usize> {
        let s = &symbols[i];
        let contained = order
            .iter()
            .copied()
            .filter(|&p| {
                let ps = &symbols[p];
                p != i
                    && ps.start_line <= s.start_line
                    && s.end_line <= ps.end_line
                    && s.qualified_name
                        .starts_with(&format!("{}::", ps.qualified_name))
            })
            .min_by_key(|&p| symbols[p].end_line - symbols[p].start_line);
        contained.or_else(|| {
            let owner = s.owner.as_deref()?;
            order.iter().copied().find(|&p| {
                let ps = &symbols[p];
                p != i
                    && ps.name == owner
                    && TYPE_KINDS.contains(&ps.kind.as_str())
                    && s.qualified_name == format!("{}::{}", ps.qualified_name, s.name)
            })
        })
    };
    let parents: Vec<Option<usize>> = (0..symbols.len()).map(parent_of).collect();
    fn build<'a>(
        at: Option<usize>,
        order: &[usize],
        parents: &[Option<usize>],
        symbols: &'a [Sym],
    ) -> Vec<Node<'a>> {
        let mut kids: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| parents[i] == at)
            .collect();
        // Inside a type: fields and variants first, then methods, each in source
        // order (methods come from impl blocks anywhere). At top level: source order.
        kids.sort_by_key(|&i| {
            (
                at.is_some() && matches!(symbols[i].kind.as_str(), "method" | "function"),
                symbols[i].start_line,
            )
        });
        kids.into_iter()
            .map(|i| Node {
                sym: &symbols[i],
                children: build(Some(i), order, parents, symbols),
            })
            .collect()
    }
    build(None, &order, &parents, symbols)
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Detail {
    Full,
    NoDocs,
    Names,
}

fn node_json(n: &Node<'_>, detail: Detail) -> Value {
    let doc = n
        .sym
        .docstring
        .as_deref()
        .and_then(|d| d.lines().find(|l| !l.trim().is_empty()))
        .map(str::trim);
    json!({
        "name": n.sym.name,
        "kind": n.sym.kind,
        "line": n.sym.start_line,
        "end_line": n.sym.end_line,
        "signature": if detail < Detail::Names { Some(&n.sym.signature) } else { None },
        "doc": if detail == Detail::Full { doc } else { None },
        "children": n.children.iter().map(|c| node_json(c, detail)).collect::<Vec<_>>(),
    })
}

fn node_text(n: &Node<'_>, depth: usize, detail: Detail, out: &mut String) {
    out.push('\n');
    out.push_str(&"  ".repeat(depth));
    out.push_str(&format!(
        "{}-{} {} ",
        n.sym.start_line, n.sym.end_line, n.sym.kind
    ));
    if detail < Detail::Names {
        out.push_str(&n.sym.signature);
    } else {
        out.push_str(&n.sym.name);
    }
    if detail == Detail::Full
        && let Some(d) = n.sym.docstring.as_deref().and_then(|d| d.lines().next())
    {
        out.push_str(" — ");
        out.push_str(d.trim());
    }
    for c in &n.children {
        node_text(c, depth + 1, detail, out);
    }
}

fn count_nodes(nodes: &[Node<'_>]) -> usize {
    nodes.iter().map(|n| 1 + count_nodes(&n.children)).sum()
}

pub fn get_file_outline(host: &(impl Host + ?Sized), args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let file_path = args.required_str(
        "file_path",
        "the file to outline, relative to the project root or absolute",
    )?;
    check_text("file_path", &file_path, 4096)?;
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    let symbols = host.file_symbols(&file_path)?;
    let parse_errors = host.file_has_parse_errors(&file_path)?;
    let tree = build_tree(&symbols);
    let total_top = tree.len();
    let offset = offset.min(total_top);
    let page = &tree[offset..];

    let mut notes = Vec::new();
    if symbols.is_empty() {
        notes.push(format!(
            "{file_path} is indexed but defines nothing (no functions, types or modules)"
        ));
    }
    if parse_errors {
        notes.push("CAVEAT: the file has syntax errors; the outline may miss items".to_string());
    }

    let render = |k: usize, detail: Detail| -> String {
        let shown = &page[..k];
        let cut = offset + k < total_top;
        let mut ns = notes.clone();
        match detail {
            Detail::Full => {}
            Detail::NoDocs => {
                ns.push("docstrings omitted to fit the budget (raise max_tokens for them)".into())
            }
            Detail::Names => ns.push(
                "signatures and docstrings omitted to fit the budget (raise max_tokens for them)"
                    .into(),
            ),
        }
        match ctx.format {
            Format::Json => {
                let mut body = json!({
                    "file_path": file_path,
                    "total_symbols": symbols.len(),
                    "symbols": shown.iter().map(|n| node_json(n, detail)).collect::<Vec<_>>(),
                    "complete": !cut && !parse_errors,
                    "notes": ns,
                });
                if offset > 0 {
                    body["offset"] = json!(offset);
                }
                if cut {
                    body["next_offset"] = json!(offset + k);
                    body["see_also"] = json!(format!(
                        "get_file_outline(file_path: {file_path:?}, offset: {}) for the rest",
                        offset + k
                    ));
                }
                to_compact_json(&body)
            }
            Format::Text => {
                let mut out = format!(
                    "get_file_outline {file_path}: {} symbols ({} shown) | {}",
                    symbols.len(),
                    count_nodes(shown),
                    if cut {
                        format!("TRUNCATED: call again with offset={}", offset + k)
                    } else if parse_errors {
                        "partial".into()
                    } else {
                        "complete".into()
                    }
                );
                for n in &ns {
                    out.push_str(&format!("\nnote: {n}"));
                }
                for n in shown {
                    node_text(n, 0, detail, &mut out);
                }
                out
            }
        }
    };
    let Some(budget) = ctx.budget else {
        return Ok(render(page.len(), Detail::Full));
    };
    let count = |s: &str| host.count_tokens(s);
    for detail in [Detail::Full, Detail::NoDocs] {
        let body = render(page.len(), detail);
        if count(&body) <= budget {
            return Ok(body);
        }
    }
    let k = fit_prefix(page.len(), budget, |k| render(k, Detail::Names), count);
    Ok(render(k.max(1).min(page.len()), Detail::Names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, kind: &str, qn: &str, owner: Option<&str>, start: u32, end: u32) -> Sym {
        Sym {
            name: name.into(),
            kind: kind.into(),
            qualified_name: qn.into(),
            owner: owner.map(Into::into),
            file_path: "a.py".into(),
            start_line: start,
            end_line: end,
            signature: String::new(),
            docstring: None,
        }
    }

    #[test]
    fn top_level_items_keep_source_order_and_types_list_fields_before_methods() {
        let symbols = vec![
            sym("helper", "function", "p::a::helper", None, 1, 3),
            sym("Greeter", "class", "p::a::Greeter", None, 6, 12),
            sym(
                "greet",
                "method",
                "p::a::Greeter::greet",
                Some("Greeter"),
                7,
                8,
            ),
            sym(
                "name",
                "field",
                "p::a::Greeter::name",
                Some("Greeter"),
                10,
                10,
            ),
        ];
        let tree = build_tree(&symbols);
        let top: Vec<&str> = tree.iter().map(|n| n.sym.name.as_str()).collect();
        assert_eq!(top, ["helper", "Greeter"]);
        let kids: Vec<&str> = tree[1]
            .children
            .iter()
            .map(|n| n.sym.name.as_str())
            .collect();
        assert_eq!(kids, ["name", "greet"]);
    }
}
