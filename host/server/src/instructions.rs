//! The server instructions sent at `initialize`: which tool answers which question, and
//! the conventions every answer follows. Built from the tools actually loaded, so it
//! never names a tool the session cannot call; while the built-in routers are still
//! being compiled, from the tools they serve, which a call then waits for.

/// (question, [(tool, how it answers)]), in the order an agent needs them. Each line of
/// the instructions is one question with the loaded tools that answer it.
const GUIDE: &[(&str, &[(&str, &str)])] = &[
    (
        "what is X",
        &[
            (
                "inspect_symbol",
                "inspect_symbol(symbol): header, snippet, callers, references, ADR invariants",
            ),
            (
                "resolve_definition",
                "resolve_definition(symbol): where it is defined",
            ),
            (
                "get_type_contract",
                "get_type_contract(symbol): a type's fields, methods, traits",
            ),
        ],
    ),
    (
        "find code",
        &[(
            "search_symbols",
            "search_symbols(query or like_symbol): ranked by name, path, signature, docs",
        )],
    ),
    (
        "who uses X",
        &[
            (
                "find_references",
                "find_references(symbol): callers, files or sites",
            ),
            (
                "trace_call_hierarchy",
                "trace_call_hierarchy(symbol, direction): call chains",
            ),
            (
                "calculate_blast_radius",
                "calculate_blast_radius(symbol or file_path): what a change reaches",
            ),
        ],
    ),
    (
        "read a file",
        &[
            (
                "get_file_outline",
                "get_file_outline(file_path): definitions with lines and signatures",
            ),
            (
                "get_enclosing_scope",
                "get_enclosing_scope(file_path, line): the scope around a line",
            ),
        ],
    ),
    (
        "dependencies",
        &[(
            "get_crate_outline",
            "get_crate_outline(crate_name): a locked crate's modules and types",
        )],
    ),
    (
        "decisions",
        &[
            (
                "query_adrs",
                "query_adrs(query or path): ADRs, learnings, plans",
            ),
            ("record_adr", "record_adr"),
            ("delete_adr", "delete_adr"),
        ],
    ),
    (
        "projects",
        &[
            ("index_workspace", "index_workspace(path) first"),
            ("get_indexing_status", "get_indexing_status"),
            ("list_projects", "list_projects"),
            ("switch_active_project", "switch_active_project"),
            ("delete_project", "delete_project"),
            (
                "get_token_savings_metrics",
                "get_token_savings_metrics: measured usage",
            ),
        ],
    ),
];

/// Claude Code cuts instructions at 2,048 characters; stay well inside.
#[cfg(test)]
const MAX_CHARS: usize = 1800;

pub fn server_instructions(tools: &[&str]) -> String {
    let mut out = String::from(
        "scryer answers questions about code in indexed projects from a symbol index, in one call each.\n",
    );
    for (question, answers) in GUIDE {
        let present: Vec<&str> = answers
            .iter()
            .filter(|(t, _)| tools.contains(t))
            .map(|(_, how)| *how)
            .collect();
        if !present.is_empty() {
            out.push_str(&format!("- {question}: {}\n", present.join("; ")));
        }
    }
    let others: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !GUIDE.iter().any(|(_, a)| a.iter().any(|(g, _)| g == t)))
        .collect();
    if !others.is_empty() {
        out.push_str("- also: ");
        out.push_str(&others.join(", "));
        out.push('\n');
    }
    out.push_str(
        "Conventions: lines are 1-based. `project` (slug, id or root path), on every tool that takes it, picks \
         the project; otherwise the file_path's project or the session's. Answers fit a token budget: `complete: false` with \
         `next_offset` means more is one call away; `max_tokens` raises the budget, `no_truncate` lifts it. \
         Empty answers say why in `notes`.",
    );
    out
}

/// The line that says the tools are on their way (the routers are being compiled).
pub const ARRIVING: &str = "Tools are arriving: scryer is compiling its routers for this CPU (once, a few seconds); \
     notifications/tools/list_changed follows, and calls made meanwhile wait for them.\n";

/// The instructions while the built-in routers are still being compiled: the built-in
/// tools the session's profile `lists`, and [`ARRIVING`].
pub fn arriving_instructions(lists: impl Fn(&str) -> bool) -> String {
    let tools: Vec<&str> = GUIDE
        .iter()
        .flat_map(|(_, answers)| answers.iter().map(|(t, _)| *t))
        .filter(|t| lists(*t))
        .collect();
    let text = server_instructions(&tools);
    match text.split_once('\n') {
        Some((intro, rest)) => format!("{intro}\n{ARRIVING}{rest}"),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_only_loaded_tools_and_reaches_all_of_them() {
        let tools = ["find_references", "get_file_outline", "my_extra_tool"];
        let text = server_instructions(&tools);
        for t in tools {
            assert!(text.contains(t), "{t} unreachable");
        }
        assert!(!text.contains("index_workspace"));
        assert!(text.len() <= MAX_CHARS);
    }

    #[test]
    fn every_profile_fits_in_the_limit_and_reaches_its_tools() {
        let all: Vec<&str> = GUIDE
            .iter()
            .flat_map(|(_, a)| a.iter().map(|(t, _)| *t))
            .collect();
        assert_eq!(all.len(), 19);
        let text = server_instructions(&all);
        println!("full instructions: {} chars", text.len());
        assert!(text.len() <= MAX_CHARS, "{} chars", text.len());
        for t in &all {
            assert!(text.contains(t), "{t} unreachable");
        }
        let core = server_instructions(crate::contract::CORE_TOOLS);
        println!("core instructions: {} chars", core.len());
        assert!(core.len() <= MAX_CHARS);
        for t in crate::contract::CORE_TOOLS {
            assert!(core.contains(t), "{t} unreachable in core");
        }
        assert!(!core.contains("index_workspace") && !core.contains("query_adrs"));
    }

    #[test]
    fn arriving_instructions_name_the_tools_to_come_and_say_they_are_coming() {
        let all = arriving_instructions(|_| true);
        assert!(
            all.contains(ARRIVING) && all.contains("find_references"),
            "{all}"
        );
        assert!(all.len() <= MAX_CHARS, "{} chars", all.len());
        let core = arriving_instructions(|t| crate::contract::CORE_TOOLS.contains(&t));
        assert!(
            core.contains(ARRIVING) && !core.contains("index_workspace"),
            "{core}"
        );
    }
}
