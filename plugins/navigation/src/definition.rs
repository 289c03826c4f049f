//! `resolve_definition`: where a written symbol is defined.
//!
//! One definition is answered as `definition`; several (different qualified names) as
//! `ambiguous` with a ranked page of `definitions`. A name the workspace does not
//! define is looked up in the locked dependency crates. An answer without a definition
//! says why in `notice`.

use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::attribution::file_matches;
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::host::{Ctx, Host};
use scryer_plugin_sdk::{ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::lookup::{self, Detail, Found, PAGE, SymbolQuery};

pub fn resolve_definition(
    host: &(impl Host + ?Sized),
    args: &Args,
    ctx: &Ctx,
) -> ToolResult<String> {
    let q = lookup::parse_symbol(
        args,
        "the symbol to locate: a name (`spawn`), `Type::method`, `crate::path::name` or `a.b.name`",
    )?;
    let mut q = q;
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;
    let project = ctx.project.clone().unwrap_or_else(|| "this project".into());
    let mut notes: Vec<String> = Vec::new();
    if let Some(line) = args.opt_int("line", 1, i64::from(u32::MAX))? {
        let Some(fp) = q.file_path.take() else {
            return Err(ToolError::invalid(
                "`line` needs `file_path`: the file where the symbol is written on that line",
            ));
        };
        match precise_target(host, &fp, line as u32, &q.name) {
            Ok(found) => return Ok(render(host, ctx, &q, &found, offset, notes, "precise")),
            // The usage's file does not narrow a lookup by name.
            Err(why) => notes.push(format!(
                "precision heuristic: {why}; answered by name instead of by the site at {fp}:{line}"
            )),
        }
    }
    let ws = lookup::workspace(host, &q)?;

    let narrowed: Vec<Found> = match &q.file_path {
        Some(fp) => ws
            .workspace
            .iter()
            .filter(|f| file_matches(&f.sym.file_path, fp))
            .cloned()
            .collect(),
        None => ws.workspace.clone(),
    };
    if narrowed.is_empty() && !ws.workspace.is_empty() {
        // Defined here, just not in the file asked about: say where instead.
        let others: Vec<_> = ws.workspace.iter().map(|f| f.sym.clone()).collect();
        let body = json!({
            "symbol": q.text,
            "precision": "heuristic",
            "notice": format!(
                "`{}` is defined {} time(s), none in {}: {}",
                q.text,
                others.len(),
                q.file_path.as_deref().unwrap_or(""),
                lookup::locations(&others, 5)
            ),
            "candidates": ws.workspace.iter().take(PAGE).map(|f| lookup::found_json(f, Detail::NoDocs)).collect::<Vec<_>>(),
        });
        return Ok(fit_plain(host, ctx, body));
    }

    let mut found = narrowed;
    if found.is_empty() {
        let deps = lookup::dependencies(host, &q);
        notes.extend(deps.notes.iter().cloned());
        found = match &q.file_path {
            Some(fp) => deps
                .found
                .into_iter()
                .filter(|f| file_matches(&f.sym.file_path, fp))
                .collect(),
            None => deps.found,
        };
        if found.is_empty() {
            let mut body = json!({
                "symbol": q.text,
                "precision": "heuristic",
                "notice": lookup::unknown_name_reason(host, &q, &project, &ws.same_name, &deps.notes),
            });
            if !ws.same_name.is_empty() {
                let others: Vec<Found> = ws
                    .same_name
                    .iter()
                    .take(PAGE)
                    .map(|s| Found {
                        sym: s.clone(),
                        matched: lookup::Match::Name,
                        krate: None,
                    })
                    .collect();
                body["candidates"] = json!(
                    others
                        .iter()
                        .map(|f| lookup::found_json(f, Detail::NoDocs))
                        .collect::<Vec<_>>()
                );
            }
            if !notes.is_empty() {
                body["notes"] = json!(notes);
            }
            return Ok(fit_plain(host, ctx, body));
        }
        if let Some((krate, version)) = &found[0].krate {
            notes.push(format!(
                "not defined in {project}: found in the locked dependency {krate} {version} (file paths are absolute, in the cargo registry)"
            ));
        }
    }
    let label = link_precision(host, &found[..found.len().min(PAGE)]);
    Ok(render(host, ctx, &q, &found, offset, notes, label))
}

/// The definitions precise data gives for the site of `name` on `line` of `file_path`,
/// or why it cannot.
fn precise_target(
    host: &(impl Host + ?Sized),
    file_path: &str,
    line: u32,
    name: &str,
) -> Result<Vec<Found>, String> {
    let t = host
        .precise_definitions_at(file_path, line, name)
        .map_err(|e| format!("precise data could not be read: {}", e.message))?;
    if t.precision != "precise" || t.definitions.is_empty() {
        return Err(t
            .note
            .unwrap_or_else(|| "no precise data for that site".into()));
    }
    Ok(t.definitions
        .into_iter()
        .map(|sym| Found {
            sym,
            matched: lookup::Match::Exact,
            krate: None,
        })
        .collect())
}

/// `precise` when precise data confirms every answered workspace definition, `mixed`
/// when some, `heuristic` when none.
fn link_precision(host: &(impl Host + ?Sized), found: &[Found]) -> &'static str {
    let linked = found
        .iter()
        .filter(|f| {
            f.krate.is_none()
                && host
                    .precise_link(&f.sym)
                    .is_ok_and(|(label, _)| label == "precise")
        })
        .count();
    match linked {
        0 => "heuristic",
        n if n == found.len() => "precise",
        _ => "mixed",
    }
}

fn render(
    host: &(impl Host + ?Sized),
    ctx: &Ctx,
    q: &SymbolQuery,
    found: &[Found],
    offset: usize,
    mut notes: Vec<String>,
    precision: &str,
) -> String {
    let distinct: std::collections::BTreeSet<&str> = found
        .iter()
        .map(|f| f.sym.qualified_name.as_str())
        .collect();
    if found.len() == 1 {
        let body = |detail: Detail| {
            to_compact_json(&json!({
                "symbol": q.text,
                "definition": lookup::found_json(&found[0], detail),
                "precision": precision,
                "notes": notes,
            }))
        };
        return fit_detail(host, ctx, body);
    }
    let ambiguous = distinct.len() > 1;
    if !ambiguous {
        notes.push(format!(
            "{} definitions share the qualified name {} (cfg or platform variants of one item)",
            found.len(),
            found[0].sym.qualified_name
        ));
    } else {
        notes.push(format!(
            "`{}` names {} definitions, most likely first; pass a longer path (`Type::name`, a qualified_name below) or file_path to pick one",
            q.text,
            distinct.len()
        ));
    }
    let offset = offset.min(found.len());
    let page = &found[offset..(offset + PAGE).min(found.len())];
    let body = |k: usize, detail: Detail| -> String {
        let next = offset + k;
        let cut = next < found.len();
        let mut v = json!({
            "symbol": q.text,
            "ambiguous": ambiguous,
            "candidate_count": found.len(),
            "definitions": page[..k].iter().map(|f| lookup::found_json(f, detail)).collect::<Vec<_>>(),
            "precision": precision,
            "notes": notes,
        });
        if offset > 0 {
            v["offset"] = json!(offset);
        }
        if cut {
            v["complete"] = json!(false);
            v["next_offset"] = json!(next);
            v["see_also"] = json!(format!(
                "resolve_definition(symbol: {:?}, offset: {next}) for the next candidates",
                q.text
            ));
        }
        to_compact_json(&v)
    };
    let Some(budget) = ctx.budget else {
        return body(page.len(), Detail::Full);
    };
    let count = |s: &str| host.count_tokens(s);
    for detail in [Detail::Full, Detail::NoDocs] {
        let b = body(page.len(), detail);
        if count(&b) <= budget {
            return b;
        }
    }
    let k = fit_prefix(page.len(), budget, |k| body(k, Detail::NoDocs), count);
    if k > 0 {
        return body(k, Detail::NoDocs);
    }
    let k = fit_prefix(page.len(), budget, |k| body(k, Detail::Bare), count);
    body(k.max(1).min(page.len()), Detail::Bare)
}

/// The most detailed rendering that fits the budget (the host cuts anything still over).
fn fit_detail(host: &(impl Host + ?Sized), ctx: &Ctx, body: impl Fn(Detail) -> String) -> String {
    let Some(budget) = ctx.budget else {
        return body(Detail::Full);
    };
    for detail in [Detail::Full, Detail::NoDocs] {
        let b = body(detail);
        if host.count_tokens(&b) <= budget {
            return b;
        }
    }
    body(Detail::Bare)
}

/// An answer without definitions: its candidate list is short (one page) and shrinks
/// to fit.
fn fit_plain(host: &(impl Host + ?Sized), ctx: &Ctx, body: Value) -> String {
    let full = to_compact_json(&body);
    let (Some(budget), Some(cands)) = (ctx.budget, body["candidates"].as_array()) else {
        return full;
    };
    let n = cands.len();
    let render = |k: usize| {
        let mut b = body.clone();
        b["candidates"] = json!(cands[..k]);
        to_compact_json(&b)
    };
    let k = fit_prefix(n, budget, render, |s| host.count_tokens(s));
    render(k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_host::{demo, sym};
    use scryer_plugin_sdk::host::DepSym;

    fn call(h: &crate::test_host::MemHost, args: Value) -> Value {
        let ctx = Ctx {
            budget: Some(1000),
            project: Some("demo".into()),
            ..Ctx::default()
        };
        let out = resolve_definition(h, &Args::from_value(args).unwrap(), &ctx).unwrap();
        serde_json::from_str(&out).unwrap()
    }

    #[test]
    fn a_unique_name_answers_with_its_location_signature_and_doc() {
        let h = demo();
        let v = call(&h, json!({"symbol": "describe"}));
        assert_eq!(
            v,
            json!({"symbol": "describe", "precision": "heuristic", "definition": {
                "qualified_name": "demo::util::describe", "kind": "function",
                "file_path": "src/util.rs", "start_line": 6, "end_line": 8,
                "signature": "pub fn describe(area: f64) -> String",
                "doc": "Formats an area for people."}})
        );
        let v = call(&h, json!({"symbol": "crate::util::describe"}));
        assert_eq!(v["definition"]["start_line"], 6);
        let v = call(&h, json!({"symbol": "demo.shapes.Circle"}));
        assert_eq!(v["definition"]["qualified_name"], "demo::shapes::Circle");
    }

    #[test]
    fn a_shared_name_is_ambiguous_and_a_path_or_file_picks_one() {
        let h = demo();
        let v = call(&h, json!({"symbol": "area"}));
        assert_eq!(v["ambiguous"], true);
        assert_eq!(v["candidate_count"], 3);
        let names: Vec<&str> = v["definitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["qualified_name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "demo::shapes::Shape::area",
                "demo::shapes::Circle::area",
                "demo::shapes::Square::area"
            ]
        );
        let one = call(&h, json!({"symbol": "Square::area"}));
        assert_eq!(one["definition"]["start_line"], 37);
        let in_file = call(&h, json!({"symbol": "describe", "file_path": "src/lib.rs"}));
        let notice = in_file["notice"].as_str().unwrap();
        assert!(
            notice.contains("none in src/lib.rs") && notice.contains("src/util.rs:6"),
            "{notice}"
        );
    }

    #[test]
    fn more_candidates_than_a_page_are_paged() {
        let mut h = demo();
        for i in 0..12 {
            h.symbols.push(sym(
                "function",
                &format!("demo::m{i:02}::run"),
                None,
                "src/lib.rs",
                (1, 1),
                "fn run()",
            ));
        }
        let v = call(&h, json!({"symbol": "run"}));
        assert_eq!(v["candidate_count"], 12);
        assert_eq!(v["definitions"].as_array().unwrap().len(), 10);
        assert_eq!(v["next_offset"], 10);
        assert_eq!(v["complete"], false);
        let rest = call(&h, json!({"symbol": "run", "offset": 10}));
        assert_eq!(rest["definitions"].as_array().unwrap().len(), 2);
        assert!(rest.get("next_offset").is_none());
    }

    #[test]
    fn unknown_names_say_so_and_dependency_errors_are_notes() {
        let h = demo();
        let v = call(&h, json!({"symbol": "ZzzNothing"}));
        let notice = v["notice"].as_str().unwrap();
        assert!(notice.starts_with("unknown name"), "{notice}");
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("dependency index could not be searched"),
            "{v}"
        );
        let other = call(&h, json!({"symbol": "Triangle::area"}));
        assert!(
            other["notice"]
                .as_str()
                .unwrap()
                .contains("no definition matches `Triangle::area`"),
            "{other}"
        );
        assert_eq!(other["candidates"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn dependencies_answer_what_the_workspace_does_not_define() {
        let mut h = demo();
        let dep = |qn: &str| DepSym {
            crate_name: "tokio".into(),
            crate_version: "1.47.1".into(),
            symbol: sym(
                "struct",
                qn,
                None,
                "/reg/tokio-1.47.1/src/sync/mutex.rs",
                (120, 140),
                "pub struct Mutex<T: ?Sized>",
            ),
        };
        h.deps = vec![
            dep("tokio::sync::mutex::Mutex"),
            dep("tokio::loom::std::mutex::Mutex"),
        ];
        h.missing.remove("dependencies");
        let v = call(&h, json!({"symbol": "tokio::sync::Mutex"}));
        assert_eq!(
            v["definition"]["qualified_name"], "tokio::sync::mutex::Mutex",
            "{v}"
        );
        assert_eq!(v["definition"]["crate"], "tokio");
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("locked dependency tokio 1.47.1")
        );
        // No path in the crate matches: the bare name within the crate.
        let v = call(&h, json!({"symbol": "tokio::nowhere::Mutex"}));
        assert_eq!(v["candidate_count"], 2, "{v}");
        assert!(
            v["notes"][0]
                .as_str()
                .unwrap()
                .contains("no definition in crate `tokio`")
        );
    }

    #[test]
    fn a_tight_budget_sheds_docs_before_candidates() {
        let h = demo();
        let ctx = Ctx {
            budget: Some(120),
            ..Ctx::default()
        };
        let out = resolve_definition(
            &h,
            &Args::from_value(json!({"symbol": "new"})).unwrap(),
            &ctx,
        )
        .unwrap();
        assert!(h.count_tokens(&out) <= 120, "{out}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(!v["definitions"].as_array().unwrap().is_empty(), "{v}");
        // The docs went first.
        assert!(!out.contains("\"doc\""), "{out}");
        let roomy = resolve_definition(
            &h,
            &Args::from_value(json!({"symbol": "new"})).unwrap(),
            &Ctx::default(),
        )
        .unwrap();
        assert!(roomy.contains("\"doc\""), "{roomy}");
    }
}
