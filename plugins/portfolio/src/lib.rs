//! The portfolio router: what is going on across every registered project. An example
//! third-party plugin, built only against the public WIT (0.2) and the SDK, and loaded
//! as an external plugin (`scryer plugin add portfolio.wasm --grant ...`), never
//! embedded in the host.
//!
//! It reads the project list, README files and text through the host's `catalog`
//! interface and each project's branch, commits and uncommitted files live through `git`
//! (capabilities `catalog-read` and `git-read`). Nothing is cached: every call reads the
//! current state.

use scryer_plugin_sdk::args::{Args, check_text};
use scryer_plugin_sdk::host::{CatalogProject, RepoState, unknown_tool};
use scryer_plugin_sdk::listing::{paginate_for, table};
use scryer_plugin_sdk::{
    Ctx, Format, Host, Router, ToolError, ToolResult, ToolSpec, to_compact_json,
};
use serde_json::{Value, json};

/// A project with a commit this recent, or uncommitted work, is active.
pub const ACTIVE_DAYS: i64 = 30;
const DAY_MS: i64 = 86_400_000;
/// How much of a README `portfolio_context` reads, and shows at most.
const README_READ_BYTES: u32 = 8192;
const README_EXCERPT_CHARS: usize = 800;
const README_NAMES: &[&str] = &[
    "README.md",
    "README",
    "README.markdown",
    "README.rst",
    "README.txt",
    "readme.md",
];

pub struct Portfolio;

impl Router for Portfolio {
    const NAME: &'static str = "portfolio";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn tools() -> Vec<ToolSpec> {
        tools()
    }

    fn call<H: Host + ?Sized>(host: &H, tool: &str, args: &Args, ctx: &Ctx) -> ToolResult<String> {
        call_at(host, tool, args, ctx, now_ms())
    }
}

scryer_plugin_sdk::export_router!(crate::Portfolio);

/// The wall clock (WASI's inside the component). Ages are computed against it.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

fn spec(name: &'static str, description: &'static str, schema: Value, budget: u32) -> ToolSpec {
    ToolSpec {
        reads_index: false,
        // Its answers are about every project, never the call's one.
        host_params: &[],
        ..ToolSpec::query(name, description, schema, budget)
    }
}

pub fn tools() -> Vec<ToolSpec> {
    let offset = json!({"type": "integer", "description": "from a previous answer's next_offset"});
    let offset = || offset.clone();
    vec![
        spec(
            "portfolio_projects",
            "Every registered project with its activity: `active` (a commit in the last 30 days or \
             uncommitted work), `dormant` (a clean tree and no recent commit) or `no-git`; branch, \
             last commit and uncommitted file count, read live from git. Most recent first.",
            json!({"type": "object", "properties": {
                "status": {"type": "string", "enum": ["all", "active", "dormant"], "description": "which projects (default all)"},
                "offset": offset()
            }}),
            1500,
        ),
        spec(
            "portfolio_next",
            "What to pick up next across projects: those with uncommitted work first, then the most \
             recently committed, each with the reason (files changed, branch, last commit). Call at \
             the start of a session to see where work stopped.",
            json!({"type": "object", "properties": {
                "limit": {"type": "integer", "description": "suggestions (1-20, default 5)"},
                "offset": offset()
            }}),
            800,
        ),
        spec(
            "portfolio_context",
            "One project in depth: its README excerpt, branch, recent commits and uncommitted files, \
             read live from git. `name` is a slug, id or root path (default: the session's project).",
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "project slug, id or root path"},
                "commits": {"type": "integer", "description": "recent commits to show (1-50, default 10)"},
                "offset": {"type": "integer", "description": "first uncommitted file to show, from next_offset"}
            }}),
            2000,
        ),
        spec(
            "portfolio_search",
            "Literal, case-insensitive text search across every registered project's files (hidden \
             and .gitignore'd files skipped): project, path, line and the line's text.",
            json!({"type": "object", "properties": {
                "query": {"type": "string", "description": "text to find"},
                "max_results": {"type": "integer", "description": "matches in all (1-200, default 20)"},
                "name": {"type": "string", "description": "only this project (slug, id or root)"},
                "offset": offset()
            }, "required": ["query"]}),
            2000,
        ),
        spec(
            "portfolio_pulse",
            "A few lines on the whole portfolio: how many projects are active, dormant or without \
             git, which have uncommitted work, and the latest commit anywhere.",
            json!({"type": "object", "properties": {}}),
            400,
        ),
    ]
}

/// Answers `tool` as of `now_ms` (tests pass a fixed time).
pub fn call_at<H: Host + ?Sized>(
    host: &H,
    tool: &str,
    args: &Args,
    ctx: &Ctx,
    now_ms: i64,
) -> ToolResult<String> {
    match tool {
        "portfolio_projects" => projects(host, args, ctx, now_ms),
        "portfolio_next" => next(host, args, ctx, now_ms),
        "portfolio_context" => context(host, args, ctx, now_ms),
        "portfolio_search" => search(host, args, ctx),
        "portfolio_pulse" => pulse(host, ctx, now_ms),
        other => Err(unknown_tool::<Portfolio>(other)),
    }
}

// ---- the survey every overview tool starts from ----

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activity {
    Active,
    Dormant,
    NoGit,
}

impl Activity {
    fn name(self) -> &'static str {
        match self {
            Activity::Active => "active",
            Activity::Dormant => "dormant",
            Activity::NoGit => "no-git",
        }
    }
}

struct Surveyed {
    project: CatalogProject,
    /// `Ok(None)`: not a git work tree. `Err`: git could not be read (the message).
    git: Result<Option<RepoState>, String>,
}

impl Surveyed {
    fn repo(&self) -> Option<&RepoState> {
        self.git.as_ref().ok().and_then(Option::as_ref)
    }

    fn last_commit_ms(&self) -> Option<i64> {
        self.repo().and_then(|r| r.last_commit_ms)
    }

    fn uncommitted(&self) -> u32 {
        self.repo().map_or(0, |r| r.changes_total)
    }

    fn activity(&self, now_ms: i64) -> Activity {
        match self.repo() {
            None => Activity::NoGit,
            Some(r) if r.changes_total > 0 => Activity::Active,
            Some(r) => match r.last_commit_ms {
                Some(t) if now_ms - t <= ACTIVE_DAYS * DAY_MS => Activity::Active,
                _ => Activity::Dormant,
            },
        }
    }
}

/// Every project with its git state (`commits` newest commits each), most recent
/// activity first; projects git cannot read keep their error instead of failing the
/// call.
fn survey<H: Host + ?Sized>(host: &H, commits: u32) -> ToolResult<Vec<Surveyed>> {
    let mut out: Vec<Surveyed> = host
        .catalog_projects()?
        .into_iter()
        .map(|project| {
            let git = host
                .git_state(Some(&project.slug), commits, 0)
                .map_err(|e| e.message);
            Surveyed { project, git }
        })
        .collect();
    // Newest commit first; projects without one after, by slug.
    out.sort_by(|a, b| {
        b.last_commit_ms()
            .cmp(&a.last_commit_ms())
            .then_with(|| a.project.slug.cmp(&b.project.slug))
    });
    Ok(out)
}

fn no_projects_note() -> String {
    "no projects are registered: index_workspace(path) registers one".into()
}

/// `3h ago`, `12d ago`: coarse ages read better than timestamps in a listing.
pub fn age(now_ms: i64, then_ms: i64) -> String {
    let mins = (now_ms - then_ms).max(0) / 60_000;
    match mins {
        0 => "just now".into(),
        1..=59 => format!("{mins}m ago"),
        60..=2879 => format!("{}h ago", mins / 60),
        _ => format!("{}d ago", mins / 1440),
    }
}

/// A UTC timestamp (`2026-11-30T03:51Z`) from milliseconds since the epoch.
pub fn utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn git_fields(s: &Surveyed, now_ms: i64, item: &mut serde_json::Map<String, Value>) {
    match &s.git {
        Err(e) => {
            item.insert("git_error".into(), json!(e));
        }
        Ok(None) => {}
        Ok(Some(r)) => {
            item.insert("branch".into(), json!(r.branch));
            if let Some(t) = r.last_commit_ms {
                item.insert("last_commit".into(), json!(utc(t)));
                item.insert("last_commit_age".into(), json!(age(now_ms, t)));
            }
            if r.changes_total > 0 {
                item.insert("uncommitted".into(), json!(r.changes_total));
            }
        }
    }
}

fn git_summary(s: &Surveyed, now_ms: i64) -> String {
    match &s.git {
        Err(e) => format!("git unreadable: {e}"),
        Ok(None) => "not a git repository".into(),
        Ok(Some(r)) => {
            let mut parts = vec![r.branch.clone().unwrap_or_else(|| "detached HEAD".into())];
            match r.last_commit_ms {
                Some(t) => parts.push(format!("last commit {}", age(now_ms, t))),
                None => parts.push("no commits".into()),
            }
            if r.changes_total > 0 {
                parts.push(format!("{} uncommitted", r.changes_total));
            }
            parts.join(", ")
        }
    }
}

// ---- portfolio_projects ----

fn projects<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx, now_ms: i64) -> ToolResult<String> {
    let status = args
        .opt_choice(
            "status",
            &["all", "active", "dormant"],
            &[("inactive", "dormant")],
        )?
        .unwrap_or("all");
    let offset = args.offset()?;
    let all = survey(host, 0)?;
    let registered = all.len();
    let shown: Vec<Surveyed> = all
        .into_iter()
        .filter(|s| status == "all" || s.activity(now_ms).name() == status)
        .collect();
    let mut notes = Vec::new();
    if registered == 0 {
        notes.push(no_projects_note());
    } else if shown.is_empty() {
        notes.push(format!(
            "none of the {registered} projects is {status} (active: a commit in the last {ACTIVE_DAYS} days or uncommitted work); status: \"all\" lists them all"
        ));
    }
    let see_args = if status == "all" {
        String::new()
    } else {
        format!("status: \"{status}\"")
    };
    Ok(paginate_for(
        host,
        ctx,
        &shown,
        offset,
        |page_items, page| {
            let see_also = page.see_also("portfolio_projects", &see_args);
            match ctx.format {
                Format::Text => {
                    let rows: Vec<Vec<String>> = page_items
                        .iter()
                        .map(|s| {
                            vec![
                                s.project.slug.clone(),
                                s.activity(now_ms).name().to_string(),
                                git_summary(s, now_ms),
                            ]
                        })
                        .collect();
                    let mut out = page.header(
                        "portfolio_projects",
                        status,
                        &format!("{} project(s)", page.total),
                        true,
                    );
                    for n in notes.iter().chain(
                        page.empty_note("projects")
                            .as_ref()
                            .filter(|_| notes.is_empty()),
                    ) {
                        out.push_str(&format!("\nnote: {n}"));
                    }
                    if !rows.is_empty() {
                        out.push('\n');
                        out.push_str(&table(&rows));
                    }
                    out
                }
                Format::Json => {
                    let items: Vec<Value> = page_items
                        .iter()
                        .map(|s| {
                            let mut item = serde_json::Map::new();
                            item.insert("project".into(), json!(s.project.slug));
                            item.insert("status".into(), json!(s.activity(now_ms).name()));
                            git_fields(s, now_ms, &mut item);
                            item.insert("root".into(), json!(s.project.root));
                            Value::Object(item)
                        })
                        .collect();
                    let mut body = json!({"projects": items, "notes": notes});
                    page.mark(&mut body, &see_also, true);
                    to_compact_json(&body)
                }
            }
        },
    ))
}

// ---- portfolio_next ----

fn next<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx, now_ms: i64) -> ToolResult<String> {
    let limit = args.opt_int("limit", 1, 20)?.unwrap_or(5) as usize;
    let offset = args.offset()?;
    let see_args = format!("limit: {limit}");
    let all = survey(host, 1)?;
    let registered = all.len();
    let mut picks: Vec<&Surveyed> = all
        .iter()
        .filter(|s| s.activity(now_ms) == Activity::Active)
        .collect();
    // Uncommitted work first (an unfinished change is the likeliest next step), then the
    // most recent commit; the survey's order breaks ties.
    picks.sort_by_key(|s| std::cmp::Reverse(s.uncommitted() > 0));
    let total = picks.len();
    picks.truncate(limit);
    let mut notes = Vec::new();
    if registered == 0 {
        notes.push(no_projects_note());
    } else if picks.is_empty() {
        notes.push(format!(
            "none of the {registered} projects has uncommitted work or a commit in the last {ACTIVE_DAYS} days; portfolio_projects(status: \"dormant\") lists them"
        ));
    }
    let reason = |s: &Surveyed| -> String {
        let Some(r) = s.repo() else {
            return String::new();
        };
        let mut parts = Vec::new();
        if r.changes_total > 0 {
            let untracked = if r.untracked_total > 0 {
                format!(" ({} untracked)", r.untracked_total)
            } else {
                String::new()
            };
            parts.push(format!(
                "{} uncommitted file(s){untracked} on {}",
                r.changes_total,
                r.branch.as_deref().unwrap_or("a detached HEAD")
            ));
        }
        if let Some(c) = r.commits.first() {
            parts.push(format!(
                "last commit {}: {}",
                age(now_ms, c.time_ms),
                c.subject
            ));
        }
        parts.join("; ")
    };
    let items: Vec<(String, String)> = picks
        .iter()
        .map(|s| (s.project.slug.clone(), reason(s)))
        .collect();
    Ok(paginate_for(
        host,
        ctx,
        &items,
        offset,
        |shown, page| match ctx.format {
            Format::Text => {
                let mut out = page.header(
                    "portfolio_next",
                    "",
                    &format!("{total} active project(s)"),
                    true,
                );
                for n in &notes {
                    out.push_str(&format!("\nnote: {n}"));
                }
                for (i, (slug, why)) in shown.iter().enumerate() {
                    out.push_str(&format!("\n{}. {slug}: {why}", page.offset + i + 1));
                }
                out
            }
            Format::Json => {
                let list: Vec<Value> = shown
                    .iter()
                    .map(|(slug, why)| json!({"project": slug, "why": why}))
                    .collect();
                let mut body = json!({"next": list, "active_projects": total, "notes": notes});
                page.mark(&mut body, &page.see_also("portfolio_next", &see_args), true);
                to_compact_json(&body)
            }
        },
    ))
}

// ---- portfolio_context ----

/// The opening paragraphs of a README, at most `max` characters, cut at a paragraph
/// (or, for one long paragraph, a word) boundary; badge and HTML-only lines dropped.
pub fn readme_excerpt(text: &str, max: usize) -> String {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| {
            let t = l.trim();
            !(t.starts_with("[![") || t.starts_with("<") || t.starts_with("!["))
        })
        .collect();
    let clean = kept.join("\n");
    let clean = clean.trim();
    if clean.chars().count() <= max {
        return clean.to_string();
    }
    let mut out = String::new();
    for para in clean.split("\n\n") {
        let sep = if out.is_empty() { 0 } else { 2 };
        if out.chars().count() + sep + para.chars().count() > max {
            break;
        }
        if sep > 0 {
            out.push_str("\n\n");
        }
        out.push_str(para);
    }
    if out.is_empty() {
        let head: String = clean.chars().take(max).collect();
        let cut = head.rfind(char::is_whitespace).unwrap_or(head.len());
        out = head[..cut].trim_end().to_string();
    }
    out.push_str(" …");
    out
}

fn context<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx, now_ms: i64) -> ToolResult<String> {
    let name = match args.opt_str("name")? {
        Some(n) => n,
        None => ctx.project.clone().ok_or_else(|| {
            ToolError::invalid(
                "`name` is required here (no session project): a project slug, id or root path; portfolio_projects lists them",
            )
        })?,
    };
    check_text("name", &name, 4096)?;
    let commit_limit = args.opt_int("commits", 1, 50)?.unwrap_or(10) as u32;
    let offset = args.offset()?;
    let catalog = host.catalog_projects()?;
    let project = catalog
        .iter()
        .find(|p| p.slug == name || p.id.to_string() == name || p.root == name)
        .ok_or_else(|| {
            let known: Vec<&str> = catalog.iter().map(|p| p.slug.as_str()).collect();
            ToolError::not_found(if known.is_empty() {
                format!("no project `{name}`: no projects are registered (index_workspace(path) registers one)")
            } else {
                format!("no project `{name}`; registered: {}", known.join(", "))
            })
        })?;
    let slug = project.slug.as_str();
    let mut notes = Vec::new();
    let mut readme = None;
    for file in README_NAMES {
        if let Some(text) = host.read_text(slug, file, README_READ_BYTES)? {
            readme = Some((file, readme_excerpt(&text, README_EXCERPT_CHARS)));
            break;
        }
    }
    if readme.is_none() {
        notes.push(format!(
            "no README at the root of {slug} ({})",
            README_NAMES.join(", ")
        ));
    }
    let repo = host.git_state(Some(slug), commit_limit, 500)?;
    let (commits, changes) = match &repo {
        Some(r) => (r.commits.clone(), r.changes.clone()),
        None => {
            notes.push(format!(
                "{} is not a git repository: no commits or uncommitted files",
                project.root
            ));
            (Vec::new(), Vec::new())
        }
    };
    if let Some(r) = &repo {
        if r.changes_total as usize > changes.len() {
            notes.push(format!(
                "{} changed files in all; the host lists the first {}",
                r.changes_total,
                changes.len()
            ));
        }
        if r.changes_total == 0 {
            notes.push("the working tree is clean".into());
        }
    }
    let see_args = format!("name: \"{slug}\"");
    Ok(paginate_for(host, ctx, &changes, offset, |shown, page| {
        let see_also = page.see_also("portfolio_context", &see_args);
        match ctx.format {
            Format::Text => {
                let branch = repo
                    .as_ref()
                    .map(|r| r.branch.clone().unwrap_or_else(|| "detached HEAD".into()))
                    .unwrap_or_else(|| "no git".into());
                let mut out = page.header(
                    "portfolio_context",
                    slug,
                    &format!("{branch}, {} commit(s), uncommitted files", commits.len()),
                    true,
                );
                for n in &notes {
                    out.push_str(&format!("\nnote: {n}"));
                }
                if let Some((file, excerpt)) = &readme {
                    out.push_str(&format!("\n{file}:\n{excerpt}"));
                }
                for c in &commits {
                    out.push_str(&format!(
                        "\ncommit {} {} {}: {}",
                        &c.hash[..c.hash.len().min(10)],
                        age(now_ms, c.time_ms),
                        c.author,
                        c.subject
                    ));
                }
                for f in shown {
                    let staged = if f.staged { " (staged)" } else { "" };
                    out.push_str(&format!("\n{} {}{staged}", f.change, f.path));
                }
                out
            }
            Format::Json => {
                let commits: Vec<Value> = commits
                    .iter()
                    .map(|c| {
                        json!({"hash": &c.hash[..c.hash.len().min(12)], "age": age(now_ms, c.time_ms),
                               "author": c.author, "subject": c.subject})
                    })
                    .collect();
                let files: Vec<Value> = shown
                    .iter()
                    .map(|f| json!({"path": f.path, "change": f.change, "staged": f.staged.then_some(true)}))
                    .collect();
                let mut body = json!({
                    "project": slug,
                    "root": project.root,
                    "index_state": project.state,
                    "readme": readme.as_ref().map(|(f, e)| json!({"file": f, "excerpt": e})),
                    "branch": repo.as_ref().and_then(|r| r.branch.clone()),
                    "head": repo.as_ref().and_then(|r| r.head.clone()),
                    "last_commit": repo.as_ref().and_then(|r| r.last_commit_ms).map(utc),
                    "commits": commits,
                    "uncommitted": files,
                    "untracked": repo.as_ref().map(|r| r.untracked_total).filter(|n| *n > 0),
                    "notes": notes,
                });
                page.mark(&mut body, &see_also, true);
                to_compact_json(&body)
            }
        }
    }))
}

// ---- portfolio_search ----

struct Hit {
    project: String,
    path: String,
    line: u32,
    text: String,
}

fn search<H: Host + ?Sized>(host: &H, args: &Args, ctx: &Ctx) -> ToolResult<String> {
    let query = args.required_str("query", "the text to look for in every project's files")?;
    check_text("query", &query, 200)?;
    let max = args.opt_int("max_results", 1, 200)?.unwrap_or(20) as u32;
    let only = args.opt_str("name")?;
    let offset = args.offset()?;
    let catalog = host.catalog_projects()?;
    let targets: Vec<&CatalogProject> = match &only {
        Some(n) => {
            let p = catalog
                .iter()
                .find(|p| &p.slug == n || &p.id.to_string() == n || &p.root == n)
                .ok_or_else(|| {
                    let known: Vec<&str> = catalog.iter().map(|p| p.slug.as_str()).collect();
                    ToolError::not_found(format!(
                        "no project `{n}`; registered: {}",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ))
                })?;
            vec![p]
        }
        None => catalog.iter().collect(),
    };
    let mut hits = Vec::new();
    let mut files = 0u32;
    let mut stopped = false;
    let mut notes = Vec::new();
    for p in &targets {
        let left = max - hits.len() as u32;
        if left == 0 {
            stopped = true;
            break;
        }
        match host.grep(&p.slug, &query, left) {
            Ok(found) => {
                files += found.files_searched;
                stopped |= found.stopped_early;
                hits.extend(found.matches.into_iter().map(|m| Hit {
                    project: p.slug.clone(),
                    path: m.path,
                    line: m.line,
                    text: m.text,
                }));
            }
            // One unreadable project does not hide the others' matches.
            Err(e) => notes.push(format!("{}: {}", p.slug, e.message)),
        }
    }
    if targets.is_empty() {
        notes.push(no_projects_note());
    } else if hits.is_empty() {
        notes.push(format!(
            "no line contains {query:?} in {} project(s) ({files} text files searched)",
            targets.len()
        ));
    }
    if stopped {
        notes.push(format!(
            "the search stopped at {max} matches or the host's file/time cap; raise max_results or narrow with name"
        ));
    }
    let see_args = format!("query: {query:?}");
    Ok(paginate_for(host, ctx, &hits, offset, |shown, page| {
        let see_also = page.see_also("portfolio_search", &see_args);
        match ctx.format {
            Format::Text => {
                let mut out = page.header(
                    "portfolio_search",
                    &format!("{query:?}"),
                    &format!("{} match(es) in {} project(s)", hits.len(), targets.len()),
                    !stopped,
                );
                for n in &notes {
                    out.push_str(&format!("\nnote: {n}"));
                }
                for h in shown {
                    out.push_str(&format!(
                        "\n{}:{}:{}  {}",
                        h.project, h.path, h.line, h.text
                    ));
                }
                out
            }
            Format::Json => {
                let list: Vec<Value> = shown
                    .iter()
                    .map(|h| json!({"project": h.project, "path": h.path, "line": h.line, "text": h.text}))
                    .collect();
                let mut body = json!({"query": query, "matches": list, "files_searched": files, "notes": notes});
                page.mark(&mut body, &see_also, !stopped);
                to_compact_json(&body)
            }
        }
    }))
}

// ---- portfolio_pulse ----

fn pulse<H: Host + ?Sized>(host: &H, ctx: &Ctx, now_ms: i64) -> ToolResult<String> {
    let all = survey(host, 1)?;
    let count = |a: Activity| all.iter().filter(|s| s.activity(now_ms) == a).count();
    let (active, dormant, no_git) = (
        count(Activity::Active),
        count(Activity::Dormant),
        count(Activity::NoGit),
    );
    let mut dirty: Vec<&Surveyed> = all.iter().filter(|s| s.uncommitted() > 0).collect();
    dirty.sort_by_key(|s| std::cmp::Reverse(s.uncommitted()));
    // The survey is sorted newest commit first.
    let latest = all.iter().find_map(|s| {
        let c = s.repo()?.commits.first()?;
        Some((s.project.slug.as_str(), c))
    });
    let mut lines = vec![format!(
        "{} project(s): {active} active, {dormant} dormant, {no_git} without git",
        all.len()
    )];
    if all.is_empty() {
        lines.push(no_projects_note());
    }
    if !dirty.is_empty() {
        let named: Vec<String> = dirty
            .iter()
            .take(5)
            .map(|s| format!("{} ({})", s.project.slug, s.uncommitted()))
            .collect();
        let more = dirty.len().saturating_sub(5);
        lines.push(format!(
            "uncommitted work in {}: {}{}",
            dirty.len(),
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    } else if !all.is_empty() {
        lines.push("no uncommitted work anywhere".into());
    }
    if let Some((slug, c)) = latest {
        lines.push(format!(
            "latest commit: {slug}, {}: {}",
            age(now_ms, c.time_ms),
            c.subject
        ));
    }
    let body = match ctx.format {
        Format::Text => format!(
            "portfolio_pulse: {} | complete\n{}",
            lines[0],
            lines[1..].join("\n")
        ),
        Format::Json => to_compact_json(&json!({
            "projects": all.len(),
            "active": active,
            "dormant": dormant,
            "no_git": no_git,
            "uncommitted_projects": dirty.len(),
            "summary": lines.join("\n"),
            "complete": true,
        })),
    };
    Ok(body.trim_end().to_string())
}

#[cfg(test)]
mod tests;
