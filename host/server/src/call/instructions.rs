//! The server instructions sent at `initialize`: which tool answers which question, and
//! the conventions every answer follows. Assembled from the listed tools' own
//! instructions entries (WIT 0.4 `tool-traits`), so it never names a tool the session
//! cannot call and the host keeps no guide of its own.

use scryer_runtime::wit::{ToolTier, ToolTraits};

/// Claude Code cuts instructions at 2,048 characters; stay well inside (the
/// `tool_contract` tests check every built-in profile against it through the binary).
/// What the instructions say while the built-in routers are still being compiled for
/// this engine (ADR 0015): their traits are not known yet, so no tool is named.
pub const ARRIVING: &str = "scryer answers questions about code: definitions, references, call graphs, \
     dependencies and decisions. Tools are arriving: scryer is compiling its routers for this CPU \
     (once, a few seconds); notifications/tools/list_changed follows, and calls made meanwhile wait for them.";

#[cfg(test)]
const MAX_CHARS: usize = 1800;

/// One line per question, core tools first: `- who uses X: find_references(symbol): …;
/// …`, then the tools without an entry, then the conventions.
pub fn server_instructions(tools: &[&ToolTraits]) -> String {
    let mut ordered: Vec<&ToolTraits> = tools.to_vec();
    // Stable: within a tier, the listing order.
    ordered.sort_by_key(|t| t.tier != ToolTier::Core);
    let mut questions: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut others: Vec<&str> = Vec::new();
    for t in &ordered {
        let Some(entry) = &t.instructions else {
            others.push(t.tool.as_str());
            continue;
        };
        match questions.iter_mut().find(|(q, _)| *q == entry.question) {
            Some((_, hows)) => hows.push(entry.how.as_str()),
            None => questions.push((entry.question.as_str(), vec![entry.how.as_str()])),
        }
    }
    let mut out = String::from(
        "scryer answers questions about code in indexed projects from a symbol index, in one call each.\n",
    );
    for (question, hows) in questions {
        out.push_str(&format!("- {question}: {}\n", hows.join("; ")));
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use scryer_runtime::wit::InstructionsEntry;

    fn tool(name: &str, tier: ToolTier, entry: Option<(&str, &str)>) -> ToolTraits {
        ToolTraits {
            tool: name.into(),
            tier,
            host_parameters: Vec::new(),
            instructions: entry.map(|(question, how)| InstructionsEntry {
                question: question.into(),
                how: how.into(),
            }),
        }
    }

    #[test]
    fn questions_group_their_tools_core_first_and_the_rest_are_named() {
        let tools = [
            tool(
                "list_projects",
                ToolTier::Extended,
                Some(("projects", "list_projects")),
            ),
            tool(
                "trace",
                ToolTier::Extended,
                Some(("who uses X", "trace(symbol)")),
            ),
            tool(
                "find_references",
                ToolTier::Core,
                Some(("who uses X", "find_references(symbol)")),
            ),
            tool("my_extra_tool", ToolTier::Extended, None),
        ];
        let refs: Vec<&ToolTraits> = tools.iter().collect();
        let text = server_instructions(&refs);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "- who uses X: find_references(symbol); trace(symbol)"
        );
        assert_eq!(lines[2], "- projects: list_projects");
        assert_eq!(lines[3], "- also: my_extra_tool");
        assert!(!text.contains("index_workspace"));
        assert!(text.len() <= MAX_CHARS);
    }
}
