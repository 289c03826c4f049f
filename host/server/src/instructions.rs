//! The server instructions sent at `initialize`: which tool answers which question, and
//! the conventions every answer follows. Built from the tools actually loaded, so it
//! never names a tool the session cannot call.

/// (tool, when to use it), in the order an agent needs them.
const GUIDE: &[(&str, &str)] = &[
    (
        "index_workspace",
        "index_workspace(path) registers and indexes a project (once; re-runs are incremental)",
    ),
    (
        "get_indexing_status",
        "get_indexing_status shows ready / building progress",
    ),
    ("list_projects", "list_projects lists registered projects"),
    (
        "find_references",
        "find_references(symbol) answers who uses or calls X: view callers (default), files or sites",
    ),
    (
        "get_file_outline",
        "get_file_outline(file_path) shows what a file defines, with line ranges and signatures",
    ),
];

/// Claude Code cuts instructions at 2,048 characters; stay well inside.
#[cfg(test)]
const MAX_CHARS: usize = 1800;

pub fn server_instructions(tools: &[&str]) -> String {
    let mut out = String::from(
        "scryer answers questions about code in indexed projects from a symbol index, in one call each.\n",
    );
    for (tool, line) in GUIDE {
        if tools.contains(tool) {
            out.push_str("- ");
            out.push_str(line);
            out.push('\n');
        }
    }
    let others: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| !GUIDE.iter().any(|(g, _)| g == t))
        .collect();
    if !others.is_empty() {
        out.push_str("- also: ");
        out.push_str(&others.join(", "));
        out.push('\n');
    }
    out.push_str(
        "Conventions: lines are 1-based. `project` (slug, id or root path) picks a project; otherwise the \
         file_path's project or the session's. Answers fit a token budget: `complete: false` with \
         `next_offset` means more is one call away; `max_tokens` raises the budget, `no_truncate` lifts it. \
         Empty answers say why in `notes`.",
    );
    out
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
    fn every_first_party_tool_fits_in_the_limit() {
        let all: Vec<&str> = GUIDE.iter().map(|(t, _)| *t).collect();
        let text = server_instructions(&all);
        println!("instructions: {} chars", text.len());
        assert!(text.len() <= MAX_CHARS, "{} chars", text.len());
    }
}
