//! `get_enclosing_scope`: the innermost definition around a line, its parents, and its
//! source, the snippet shortened to the budget; `precision` says whether the language's
//! indexer (precise data) reports the same definition there.

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::host::{Ctx, Host, Sym};
use scryer_plugin_sdk::{ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::lookup::{clip, first_doc_line};

/// Source lines longer than this are cut with `…` in a snippet.
const LINE_CHARS: usize = 200;
/// Lines shown on each side of a line that no definition contains.
const CONTEXT_LINES: u32 = 3;

/// Kinds that enclose code. Fields and variants are parts of their type, not scopes.
fn is_scope(kind: &str) -> bool {
    !matches!(kind, "field" | "variant")
}

/// Lines in a file, counted in host-sized chunks (only for error messages).
fn line_count(host: &(impl Host + ?Sized), file_path: &str) -> ToolResult<u32> {
    let mut total = 0u32;
    loop {
        let chunk = host.read_lines(file_path, total + 1, u32::MAX)?;
        if chunk.is_empty() {
            return Ok(total);
        }
        total += chunk.len() as u32;
    }
}

/// The innermost scope containing `line`: the smallest range, then the deepest name.
fn innermost(symbols: &[Sym], line: u32) -> Option<&Sym> {
    symbols
        .iter()
        .filter(|s| is_scope(&s.kind) && s.start_line <= line && line <= s.end_line)
        .min_by_key(|s| {
            (
                s.end_line - s.start_line,
                std::cmp::Reverse(s.qualified_name.matches("::").count()),
            )
        })
}

/// The module a file's definitions live in: the path of its outermost unowned item.
fn file_module(symbols: &[Sym]) -> Option<String> {
    let top = symbols
        .iter()
        .filter(|s| s.owner.is_none())
        .min_by_key(|s| s.qualified_name.matches("::").count())?;
    let (module, _) = top.qualified_name.rsplit_once("::")?;
    Some(module.to_string())
}

fn brief(s: &Sym) -> Value {
    json!({
        "qualified_name": s.qualified_name,
        "kind": s.kind,
        "start_line": s.start_line,
        "end_line": s.end_line,
    })
}

/// The chain from the file's module to the scope's direct parent: each qualified-name
/// prefix, described by the definition of that name when there is one (in this file,
/// or the owner type elsewhere for a method of an impl block). Outer modules are left
/// out: the first entry's qualified name already spells them.
fn parents(host: &(impl Host + ?Sized), scope: &Sym, symbols: &[Sym]) -> Vec<Value> {
    let segs: Vec<&str> = scope.qualified_name.split("::").collect();
    let mut out = Vec::new();
    for i in 1..segs.len() {
        let prefix = segs[..i].join("::");
        let here = symbols
            .iter()
            .filter(|s| s.qualified_name == prefix)
            .min_by_key(|s| {
                // prefer the one that contains the scope
                !(s.start_line <= scope.start_line && scope.end_line <= s.end_line)
            });
        if let Some(s) = here {
            let mut v = brief(s);
            if s.kind == "module" && s.end_line < scope.start_line {
                // `mod x;` declares a module whose body is another file: the line is noise
                v = json!({"qualified_name": prefix, "kind": "module"});
            }
            out.push(v);
            continue;
        }
        let is_owner = i == segs.len() - 1 && scope.owner.as_deref() == Some(segs[i - 1]);
        let elsewhere = if is_owner {
            host.symbols_by_qualified_name(&prefix)
                .ok()
                .and_then(|v| v.into_iter().find(|s| s.qualified_name == prefix))
        } else {
            None
        };
        out.push(match elsewhere {
            Some(s) => {
                let mut v = brief(&s);
                v["file_path"] = json!(s.file_path);
                v
            }
            None if is_owner => json!({"qualified_name": prefix}),
            None => json!({"qualified_name": prefix, "kind": "module"}),
        });
    }
    let outer_modules = out
        .iter()
        .take_while(|v| v["kind"] == "module" && v.get("start_line").is_none())
        .count();
    out.drain(..outer_modules.saturating_sub(1));
    out
}

fn read_snippet(
    host: &(impl Host + ?Sized),
    file_path: &str,
    start: u32,
    end: u32,
    ctx: &Ctx,
) -> ToolResult<Vec<String>> {
    // A budget of B tokens never shows more than B lines: read no more than that.
    let end = match ctx.budget {
        Some(b) => end.min(start.saturating_add(b)),
        None => end,
    };
    let mut lines = Vec::new();
    let mut at = start;
    while at <= end {
        let chunk = host.read_lines(file_path, at, end)?;
        if chunk.is_empty() {
            break;
        }
        at += chunk.len() as u32;
        lines.extend(chunk.into_iter().map(|l| clip(&l, LINE_CHARS)));
    }
    Ok(lines)
}

pub fn get_enclosing_scope(
    host: &(impl Host + ?Sized),
    args: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let file_path = args.required_str(
        "file_path",
        "the file holding the line, relative to the project root or absolute",
    )?;
    check_text("file_path", &file_path, 4096)?;
    let line = args
        .opt_int("line", i64::MIN, i64::MAX)?
        .ok_or_else(|| ToolError::invalid("`line` is required: the 1-based line to explain"))?;
    let symbols = host.file_symbols(&file_path)?;
    let rel = symbols
        .first()
        .map(|s| s.file_path.clone())
        .unwrap_or_else(|| file_path.clone());
    let in_range = u32::try_from(line).ok().filter(|&l| l >= 1);
    let line = match in_range {
        Some(l) if !host.read_lines(&file_path, l, l)?.is_empty() => l,
        _ => {
            let n = line_count(host, &file_path)?;
            return Err(ToolError::invalid(format!(
                "`line` is {line}, but {rel} has {n} lines; accepted: a line from 1 to {n} (lines are 1-based)"
            )));
        }
    };
    let mut notes = Vec::new();
    if host.file_has_parse_errors(&file_path).unwrap_or(false) {
        notes.push(
            "CAVEAT: the file has syntax errors; its definitions may be incomplete".to_string(),
        );
    }

    let Some(scope) = innermost(&symbols, line) else {
        return file_level(host, ctx, &file_path, &rel, line, &symbols, notes);
    };
    let header = json!({
        "qualified_name": scope.qualified_name,
        "kind": scope.kind,
        "start_line": scope.start_line,
        "end_line": scope.end_line,
        "signature": scope.signature,
        "doc": first_doc_line(scope.docstring.as_deref()),
    });
    // The scope is read from the syntax tree; precise data confirms it when the
    // language's indexer reports the same definition at the same place.
    let (precision, why) = host
        .precise_link(scope)
        .unwrap_or_else(|e| ("heuristic".into(), Some(e.message)));
    // Heuristic with nothing to say why (precise mode off): no label (ADR 0021).
    let precision = match why.filter(|_| precision != "precise") {
        Some(why) => {
            notes.push(format!("precision heuristic: {why}"));
            Some(precision)
        }
        None => (precision == "precise").then_some(precision),
    };
    let chain = parents(host, scope, &symbols);
    let lines = match read_snippet(host, &file_path, scope.start_line, scope.end_line, ctx) {
        Ok(l) => l,
        Err(e) => {
            notes.push(format!(
                "the source could not be read ({}); no snippet",
                e.message
            ));
            Vec::new()
        }
    };
    let scope_lines = (scope.end_line - scope.start_line + 1) as usize;
    // `lean`: for a budget too small for even the header with its parents, the parents
    // and the pointer to a bigger call go first.
    let render_with = |k: usize, lean: bool| -> String {
        let mut v = json!({
            "file_path": rel,
            "line": line,
            "scope": header,
            "parents": if lean { Value::Null } else { json!(chain) },
            "snippet": lines[..k].join("\n"),
            "precision": precision,
            "notes": notes,
        });
        if k < scope_lines && !lines.is_empty() {
            let first_unshown = scope.start_line + k as u32;
            v["snippet_truncated"] = json!(true);
            v["snippet_remaining"] = json!({
                "file_path": rel,
                "start_line": first_unshown,
                "end_line": scope.end_line,
            });
            v["complete"] = json!(false);
            if !lean {
                v["see_also"] = json!(format!(
                    "get_enclosing_scope(file_path: {rel:?}, line: {line}, max_tokens: {}) for more",
                    ctx.budget.unwrap_or(600).saturating_mul(2)
                ));
            }
        }
        to_compact_json(&v)
    };
    let Some(budget) = ctx.budget else {
        return Ok(render_with(lines.len(), false));
    };
    let count = |s: &str| host.count_tokens(s);
    let k = fit_prefix(lines.len(), budget, |k| render_with(k, false), count);
    if k > 0 || lines.is_empty() {
        return Ok(render_with(k, false));
    }
    // Some source beats the parent chain; an answer that fits beats both.
    let lean_k = fit_prefix(lines.len(), budget, |k| render_with(k, true), count);
    if lean_k > 0 || count(&render_with(0, false)) > budget {
        return Ok(render_with(lean_k, true));
    }
    Ok(render_with(0, false))
}

/// A line outside every definition: the file's module, the definitions either side, and
/// the lines around it.
fn file_level(
    host: &(impl Host + ?Sized),
    ctx: &Ctx,
    file_path: &str,
    rel: &str,
    line: u32,
    symbols: &[Sym],
    mut notes: Vec<String>,
) -> ToolResult<String> {
    let module = file_module(symbols);
    let scopes = symbols.iter().filter(|s| is_scope(&s.kind));
    let before = scopes
        .clone()
        .filter(|s| s.end_line < line)
        .max_by_key(|s| (s.end_line, std::cmp::Reverse(s.start_line)));
    let after = scopes
        .filter(|s| s.start_line > line)
        .min_by_key(|s| (s.start_line, std::cmp::Reverse(s.end_line)));
    notes.insert(
        0,
        if symbols.is_empty() {
            format!("{rel} defines nothing indexed (no functions, types or modules); line {line} is file-level")
        } else {
            format!(
                "line {line} is outside every definition in {rel}: file-level code of {} (imports, attributes, doc comments, impl headers or blank lines)",
                module.as_deref().map(|m| format!("module {m}")).unwrap_or_else(|| "the file".into())
            )
        },
    );
    let from = line.saturating_sub(CONTEXT_LINES).max(1);
    let lines = read_snippet(
        host,
        file_path,
        from,
        line + CONTEXT_LINES,
        &Ctx {
            budget: None,
            ..ctx.clone()
        },
    )?;
    let render = |k: usize| -> String {
        to_compact_json(&json!({
            "file_path": rel,
            "line": line,
            "scope": module.as_ref().map(|m| json!({"qualified_name": m, "kind": "module"})),
            "previous": before.map(brief),
            "next": after.map(brief),
            "snippet": lines[..k].join("\n"),
            "snippet_start_line": from,
            "notes": notes,
        }))
    };
    let k = match ctx.budget {
        None => lines.len(),
        Some(b) => fit_prefix(lines.len(), b, &render, |s| host.count_tokens(s)),
    };
    Ok(render(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_host::demo;

    fn call(h: &crate::test_host::MemHost, args: Value, budget: Option<u32>) -> ToolResult<Value> {
        let ctx = Ctx {
            budget,
            ..Ctx::default()
        };
        let out = get_enclosing_scope(h, &Args::from_value(args).unwrap(), &ctx)?;
        Ok(serde_json::from_str(&out).unwrap())
    }

    #[test]
    fn a_line_in_a_method_names_the_method_its_owner_and_module() {
        let h = demo();
        let v = call(
            &h,
            json!({"file_path": "src/shapes.rs", "line": 22}),
            Some(600),
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "file_path": "src/shapes.rs",
                "line": 22,
                "scope": {"qualified_name": "demo::shapes::Circle::area", "kind": "method",
                          "start_line": 21, "end_line": 23, "signature": "fn area(&self) -> f64"},
                "parents": [
                    {"qualified_name": "demo::shapes", "kind": "module"},
                    {"qualified_name": "demo::shapes::Circle", "kind": "struct", "start_line": 9, "end_line": 11},
                ],
                "snippet": "    fn area(&self) -> f64 {\n        crate::util::PI * self.radius * self.radius\n    }",
            })
        );
    }

    #[test]
    fn a_field_line_belongs_to_its_struct() {
        let h = demo();
        let v = call(
            &h,
            json!({"file_path": "src/shapes.rs", "line": 10}),
            Some(600),
        )
        .unwrap();
        assert_eq!(v["scope"]["qualified_name"], "demo::shapes::Circle");
        assert_eq!(v["snippet"], "pub struct Circle {\n    pub radius: f64,\n}");
    }

    #[test]
    fn lines_out_of_range_are_refused_with_the_line_count() {
        let h = demo();
        for bad in [json!(0), json!(-3), json!(45), json!("99")] {
            let e = call(
                &h,
                json!({"file_path": "src/shapes.rs", "line": bad}),
                Some(600),
            )
            .unwrap_err();
            assert_eq!(e.kind, scryer_plugin_sdk::ErrorKind::InvalidArgument);
            assert!(
                e.message.contains("has 44 lines") && e.message.contains("1 to 44"),
                "{}",
                e.message
            );
        }
        let e = call(&h, json!({"file_path": "src/shapes.rs"}), None).unwrap_err();
        assert!(e.message.contains("`line` is required"), "{}", e.message);
        let e = call(&h, json!({"file_path": "src/nope.rs", "line": 1}), None).unwrap_err();
        assert_eq!(e.kind, scryer_plugin_sdk::ErrorKind::NotFound);
    }

    #[test]
    fn a_line_outside_every_definition_gets_the_module_and_neighbours() {
        let h = demo();
        let v = call(
            &h,
            json!({"file_path": "src/shapes.rs", "line": 19}),
            Some(600),
        )
        .unwrap();
        assert_eq!(
            v["scope"],
            json!({"qualified_name": "demo::shapes", "kind": "module"})
        );
        assert_eq!(v["previous"]["qualified_name"], "demo::shapes::Circle::new");
        assert_eq!(v["next"]["qualified_name"], "demo::shapes::Circle::area");
        assert_eq!(v["snippet_start_line"], 16);
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("outside every definition")
        );
    }

    #[test]
    fn a_long_scope_is_cut_to_the_budget_and_says_what_remains() {
        let mut h = demo();
        let mut src = String::from("pub fn long() -> u32 {\n    let mut n = 0;\n");
        for i in 0..80 {
            src.push_str(&format!("    n += step_{i}(n);\n"));
        }
        src.push_str("    n\n}\n");
        h.add_file("src/long.rs", src);
        h.symbols.push(crate::test_host::sym(
            "function",
            "demo::long::long",
            None,
            "src/long.rs",
            (1, 84),
            "pub fn long() -> u32",
        ));
        let full = call(&h, json!({"file_path": "src/long.rs", "line": 50}), None).unwrap();
        assert_eq!(full["snippet"].as_str().unwrap().lines().count(), 84);
        assert!(full.get("snippet_truncated").is_none());
        let budget = 200;
        let ctx = Ctx {
            budget: Some(budget),
            ..Ctx::default()
        };
        let out = get_enclosing_scope(
            &h,
            &Args::from_value(json!({"file_path": "src/long.rs", "line": 50})).unwrap(),
            &ctx,
        )
        .unwrap();
        assert!(h.count_tokens(&out) <= budget, "{out}");
        let cut: Value = serde_json::from_str(&out).unwrap();
        let shown = cut["snippet"].as_str().unwrap().lines().count() as u64;
        assert!((5..84).contains(&shown), "{cut}");
        assert_eq!(cut["snippet_truncated"], true);
        assert_eq!(cut["complete"], false);
        assert_eq!(
            cut["snippet_remaining"],
            json!({"file_path": "src/long.rs", "start_line": 1 + shown, "end_line": 84})
        );
        // The snippet grows with the budget: it is the largest prefix that fits.
        let more = get_enclosing_scope(
            &h,
            &Args::from_value(json!({"file_path": "src/long.rs", "line": 50})).unwrap(),
            &Ctx {
                budget: Some(budget + 40),
                ..Ctx::default()
            },
        )
        .unwrap();
        let more: Value = serde_json::from_str(&more).unwrap();
        assert!(more["snippet"].as_str().unwrap().lines().count() as u64 > shown);

        // Too small for the header with its parents: the parents and see_also go first.
        let lean = get_enclosing_scope(
            &h,
            &Args::from_value(json!({"file_path": "src/long.rs", "line": 50})).unwrap(),
            &Ctx {
                budget: Some(75),
                ..Ctx::default()
            },
        )
        .unwrap();
        assert!(h.count_tokens(&lean) <= 75, "{lean}");
        let lean: Value = serde_json::from_str(&lean).unwrap();
        assert!(
            lean.get("parents").is_none() && lean.get("see_also").is_none(),
            "{lean}"
        );
        assert_eq!(lean["scope"]["qualified_name"], "demo::long::long");
        assert_eq!(lean["snippet_truncated"], true);
    }
}
