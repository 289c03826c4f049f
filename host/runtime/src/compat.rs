//! What a router built against WIT 0.1–0.3 does not say, filled in the one place it is:
//! those versions have no `describe-traits` and no `answer`, so the host keeps its
//! former knowledge of the first-party tools by name here (their tier, the host
//! parameters their schemas publish, their instructions line), and treats their answers
//! the way it did before 0.4 (the host's notes added to the body, the files the answer
//! names read from its JSON keys), with the SDK's functions a 0.4 router applies
//! itself. Nothing outside this module knows a tool by name.

use scryer_plugin_sdk::answer::{HostNote, MAX_ANSWER_FILES};

use crate::{CallScope, HostServices};

use crate::wit::{
    AnswerContext, CallResult, HostParameter, InstructionsEntry, ToolAnswer, ToolDefinition,
    ToolTier, ToolTraits,
};

/// The tools of the `core` profile before 0.4.
const CORE_TOOLS: &[&str] = &[
    "search_symbols",
    "inspect_symbol",
    "find_references",
    "get_file_outline",
    "get_enclosing_scope",
    "calculate_blast_radius",
];

/// Tools whose answers are large enough that callers tune the budget.
const BUDGET_PARAM_TOOLS: &[&str] = &[
    "find_references",
    "search_symbols",
    "get_file_outline",
    "trace_call_hierarchy",
    "get_crate_outline",
];

/// Tools that do not read the code index but answer about one project.
const PROJECT_PARAM_TOOLS: &[&str] = &["query_adrs", "record_adr", "delete_adr"];

/// Tools whose subject is a project: their `project` carries a description.
const PROJECT_SUBJECT_TOOLS: &[&str] = &[
    "switch_active_project",
    "delete_project",
    "get_indexing_status",
    "get_token_savings_metrics",
];

/// Tools whose answer does not depend on the call's project.
const PROJECTLESS_TOOLS: &[&str] = &["index_workspace", "list_projects"];

/// Tools whose answers report a project's index facts.
const STATUS_TOOLS: &[&str] = &["index_workspace", "get_indexing_status"];

/// (tool, question, how): the server instructions' lines before 0.4.
const GUIDE: &[(&str, &str, &str)] = &[
    (
        "inspect_symbol",
        "what is X",
        "inspect_symbol(symbol): header, snippet, callers, references, ADR invariants",
    ),
    (
        "resolve_definition",
        "what is X",
        "resolve_definition(symbol): where it is defined",
    ),
    (
        "get_type_contract",
        "what is X",
        "get_type_contract(symbol): a type's fields, methods, traits",
    ),
    (
        "search_symbols",
        "find code",
        "search_symbols(query or like_symbol): ranked by name, path, signature, docs",
    ),
    (
        "find_references",
        "who uses X",
        "find_references(symbol): callers, files or sites",
    ),
    (
        "trace_call_hierarchy",
        "who uses X",
        "trace_call_hierarchy(symbol, direction): call chains",
    ),
    (
        "calculate_blast_radius",
        "who uses X",
        "calculate_blast_radius(symbol or file_path): what a change reaches",
    ),
    (
        "get_file_outline",
        "read a file",
        "get_file_outline(file_path): definitions with lines and signatures",
    ),
    (
        "get_enclosing_scope",
        "read a file",
        "get_enclosing_scope(file_path, line): the scope around a line",
    ),
    (
        "get_crate_outline",
        "dependencies",
        "get_crate_outline(crate_name): a locked crate's modules and types",
    ),
    (
        "query_adrs",
        "decisions",
        "query_adrs(query or path): ADRs, learnings, plans",
    ),
    ("record_adr", "decisions", "record_adr"),
    ("delete_adr", "decisions", "delete_adr"),
    ("index_workspace", "projects", "index_workspace(path) first"),
    ("get_indexing_status", "projects", "get_indexing_status"),
    ("list_projects", "projects", "list_projects"),
    ("switch_active_project", "projects", "switch_active_project"),
    ("delete_project", "projects", "delete_project"),
    (
        "get_token_savings_metrics",
        "projects",
        "get_token_savings_metrics: measured usage",
    ),
];

/// The traits of a pre-0.4 tool: a first-party name gets what the host knew of it; any
/// other tool is extended, publishes `project` when it reads the index, and has no
/// instructions line.
pub(crate) fn traits_of(tool: &ToolDefinition) -> ToolTraits {
    let name = tool.name.as_str();
    let mut host_parameters = Vec::new();
    if BUDGET_PARAM_TOOLS.contains(&name) {
        host_parameters.push(HostParameter::Budget);
    }
    if PROJECT_SUBJECT_TOOLS.contains(&name) {
        host_parameters.push(HostParameter::ProjectSubject);
    } else if !PROJECTLESS_TOOLS.contains(&name)
        && (tool.reads_index || PROJECT_PARAM_TOOLS.contains(&name))
    {
        host_parameters.push(HostParameter::Project);
    }
    ToolTraits {
        tool: tool.name.clone(),
        tier: if CORE_TOOLS.contains(&name) {
            ToolTier::Core
        } else {
            ToolTier::Extended
        },
        host_parameters,
        instructions: GUIDE
            .iter()
            .find(|(t, _, _)| *t == name)
            .map(|(_, question, how)| InstructionsEntry {
                question: question.to_string(),
                how: how.to_string(),
            }),
    }
}

/// A pre-0.4 answer as a 0.4 router gives it: the host's notes added to the body (for
/// a status tool, after the index gaps of every project whose root the body names) and
/// the files read from its JSON.
pub(crate) fn answer_of(
    result: CallResult,
    tool: &str,
    context: &AnswerContext,
    host: &dyn HostServices,
    scope: &CallScope,
) -> ToolAnswer {
    let mut notes: Vec<HostNote> = context
        .notes
        .iter()
        .map(|n| HostNote {
            text: n.text.clone(),
            incomplete: n.incomplete,
        })
        .collect();
    if STATUS_TOOLS.contains(&tool) {
        notes.extend(gap_notes(&result.body, host, scope));
    }
    if result.truncated {
        // Before 0.4 the flag reached no one: the answer says it, and claims no
        // `complete` (a JSON object's becomes false).
        notes.push(HostNote {
            text: format!(
                "router `{}` marked this answer truncated: it is not complete",
                scope.plugin
            ),
            incomplete: true,
        });
    }
    let files = scryer_plugin_sdk::answer::files_named_in(&result.body, MAX_ANSWER_FILES);
    ToolAnswer {
        body: scryer_plugin_sdk::answer::with_notes(result.body, &notes),
        truncated: result.truncated,
        files,
    }
}

/// The index gaps of every registered project whose root `body` names, in listing order.
fn gap_notes(body: &str, host: &dyn HostServices, scope: &CallScope) -> Vec<HostNote> {
    let Ok(projects) = host.list_projects(scope) else {
        return Vec::new();
    };
    projects
        .iter()
        .filter(|p| body.contains(&p.root))
        .filter_map(|p| host.index_gaps(scope, &p.root).ok().flatten())
        .map(|text| HostNote {
            text,
            incomplete: true,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wit::ToolAnnotations;

    fn tool(name: &str, reads_index: bool) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: String::new(),
            input_schema: "{}".into(),
            annotations: ToolAnnotations {
                title: None,
                read_only: true,
                destructive: false,
                idempotent: true,
                open_world: false,
            },
            default_budget_tokens: 1000,
            budget_per_item: None,
            reads_index,
        }
    }

    #[test]
    fn first_party_names_keep_their_former_treatment() {
        let t = traits_of(&tool("find_references", true));
        assert_eq!(t.tier, ToolTier::Core);
        assert_eq!(
            t.host_parameters,
            [HostParameter::Budget, HostParameter::Project]
        );
        assert_eq!(t.instructions.unwrap().question, "who uses X");
        let t = traits_of(&tool("index_workspace", false));
        assert!(t.host_parameters.is_empty());
        let t = traits_of(&tool("get_indexing_status", false));
        assert_eq!(t.host_parameters, [HostParameter::ProjectSubject]);
        let t = traits_of(&tool("query_adrs", false));
        assert_eq!(t.host_parameters, [HostParameter::Project]);
    }

    #[test]
    fn any_other_tool_is_extended_and_publishes_project_only_when_it_reads_the_index() {
        let t = traits_of(&tool("echo", false));
        assert_eq!(t.tier, ToolTier::Extended);
        assert!(t.host_parameters.is_empty() && t.instructions.is_none());
        let t = traits_of(&tool("grep_index", true));
        assert_eq!(t.host_parameters, [HostParameter::Project]);
    }
}
