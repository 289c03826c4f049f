//! `query_adrs`: the corpus ranked for a query and/or a path, or listed newest first.

use scryer_decisions::globs::normalize_path;
use scryer_decisions::{Corpus, Decision, Kind, Origin, Query, Ranking, STATUSES};
use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::budget::fit_prefix;
use scryer_plugin_sdk::{Ctx, Host, ToolError, ToolResult, to_compact_json};
use serde_json::{Value, json};

use crate::corpus::load;

const DEFAULT_LIMIT: i64 = 10;
const MAX_LIMIT: i64 = 50;
const EXCERPT_CHARS: usize = 200;
/// Globs shown per hit; the rest are counted.
const MAX_PATHS_SHOWN: usize = 5;

/// A path argument as a project-relative path: absolute paths must lie inside the root.
pub fn relative_path(raw: &str, root: Option<&str>, arg: &str) -> ToolResult<String> {
    let mut p = raw
        .trim()
        .strip_prefix("file://")
        .unwrap_or(raw.trim())
        .to_string();
    if p.starts_with('/') {
        let inside = root.and_then(|r| {
            let r = r.trim_end_matches('/');
            p.strip_prefix(r)
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        });
        match inside {
            Some(rest) => p = rest.to_string(),
            None => {
                return Err(ToolError::invalid(format!(
                    "`{arg}` {raw:?} is outside the project root{}; pass a path relative to the root",
                    root.map(|r| format!(" {r}")).unwrap_or_default()
                )));
            }
        }
    }
    normalize_path(&p).ok_or_else(|| {
        ToolError::invalid(format!(
            "`{arg}` {raw:?} is not a path inside the project (empty, or climbing out with `..`)"
        ))
    })
}

fn hit_json(d: &Decision, score: Option<f64>, reasons: &[String]) -> Value {
    let paths: Vec<&str> = d
        .affected_paths
        .iter()
        .take(MAX_PATHS_SHOWN)
        .map(|g| g.raw.as_str())
        .collect();
    let more = d.affected_paths.len().saturating_sub(MAX_PATHS_SHOWN);
    json!({
        "number": d.number,
        "title": d.title,
        "status": d.status,
        "date": d.date,
        "path": d.path,
        "kind": match d.kind { Kind::Adr => None, Kind::Learning => Some("learning"), Kind::Plan => Some("plan") },
        "stored_only": (d.origin == Origin::DatabaseOnly).then_some(true),
        "score": score,
        "match_reasons": reasons,
        "affected_paths": paths,
        "more_affected_paths": (more > 0).then_some(more),
        "excerpt": d.excerpt(EXCERPT_CHARS),
    })
}

fn corpus_summary(c: &Corpus) -> String {
    let count = |k: Kind| c.decisions.iter().filter(|d| d.kind == k).count();
    format!(
        "{} decision records, {} learnings, {} plans",
        count(Kind::Adr),
        count(Kind::Learning),
        count(Kind::Plan)
    )
}

/// Why the page is empty, in words the agent can act on.
fn empty_notes(
    corpus: &Corpus,
    r: &Ranking,
    text: Option<&str>,
    path: Option<&str>,
    status: Option<&str>,
    project: &str,
) -> Vec<String> {
    if corpus.decisions.is_empty() {
        return vec![format!(
            "project `{project}` has no .md files in docs/adr, docs/learnings or docs/plans and no recorded decision; record one with record_adr"
        )];
    }
    if r.matched == 0 {
        let mut notes = Vec::new();
        if let Some(t) = text {
            if r.words.is_empty() && r.path_words.is_empty() {
                notes.push(format!(
                    "the query {t:?} has no searchable words (only stop words or punctuation); use words such as a component, a technology or a path"
                ));
            } else {
                notes.push(format!(
                    "no document matches {t:?} (searched {}); try other words, or call query_adrs without a query to list them all",
                    corpus_summary(corpus)
                ));
            }
        }
        if let Some(p) = path {
            let with_globs = corpus
                .decisions
                .iter()
                .filter(|d| !d.affected_paths.is_empty())
                .count();
            notes.push(format!(
                "no affected_paths glob covers {p} or lies under it ({with_globs} of {} documents declare affected_paths)",
                corpus.decisions.len()
            ));
        }
        return notes;
    }
    let Some(s) = status else { return Vec::new() };
    let present: Vec<String> = r
        .matched_statuses
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    vec![format!(
        "{} document(s) match, none with status `{s}` (statuses among them: {})",
        r.matched,
        present.join(", ")
    )]
}

pub fn query_adrs<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let text = args.opt_str("query")?;
    if let Some(t) = &text {
        check_text("query", &t.replace(['\n', '\t', '\r'], " "), 2000)?;
    }
    let path = match args.opt_str("path")? {
        Some(p) => {
            check_text("path", &p, 4096)?;
            Some(relative_path(&p, ctx.project_root.as_deref(), "path")?)
        }
        None => None,
    };
    let status = args.opt_choice("status", &STATUSES, &[])?;
    let limit = args
        .opt_int("limit", 1, MAX_LIMIT)?
        .unwrap_or(DEFAULT_LIMIT) as usize;
    let offset = args.opt_int("offset", 0, i64::from(u32::MAX))?.unwrap_or(0) as usize;

    let loaded = load(host)?;
    let corpus = &loaded.corpus;
    let ranking = corpus.search(&Query {
        text: text.as_deref(),
        path: path.as_deref(),
        status,
    });
    let scored = text.is_some() || path.is_some();
    let total = ranking.hits.len();
    let page_end = offset.saturating_add(limit).min(total);
    let page = if offset < total {
        &ranking.hits[offset..page_end]
    } else {
        &[][..]
    };
    let items: Vec<Value> = page
        .iter()
        .map(|h| {
            hit_json(
                &corpus.decisions[h.doc],
                scored.then_some(h.score),
                &h.reasons,
            )
        })
        .collect();

    let mut notes = loaded.notes.clone();
    if total == 0 {
        let project = ctx.project.as_deref().unwrap_or("this project");
        notes.extend(empty_notes(
            corpus,
            &ranking,
            text.as_deref(),
            path.as_deref(),
            status,
            project,
        ));
    } else if offset >= total {
        notes.push(format!(
            "offset {offset} is past the last of {total} hits; use an offset below {total}"
        ));
    }

    let render = |k: usize| -> String {
        let next = offset + k;
        let cut = next < total;
        let mut body = json!({
            "query": text,
            "path": path,
            "status": status,
            "total": total,
            "offset": (offset > 0).then_some(offset),
            "returned": k,
            "items": &items[..k],
            "complete": !cut,
            "notes": notes,
        });
        if cut {
            body["next_offset"] = json!(next);
            let mut call = Vec::new();
            if let Some(t) = &text {
                call.push(format!("query: {t:?}"));
            }
            if let Some(p) = &path {
                call.push(format!("path: {p:?}"));
            }
            if let Some(s) = status {
                call.push(format!("status: {s:?}"));
            }
            call.push(format!("offset: {next}"));
            body["see_also"] = json!(format!("query_adrs({}) for the rest", call.join(", ")));
        }
        to_compact_json(&body)
    };
    let shown = match ctx.budget {
        Some(budget) => fit_prefix(items.len(), budget, render, |s| host.count_tokens(s)),
        None => items.len(),
    };
    Ok(render(shown))
}
