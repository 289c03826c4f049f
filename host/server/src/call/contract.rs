//! The tool contract the host keeps for every router, first-party or not: which tools a
//! profile lists, which host parameters a tool's published schema shows, whether a
//! schema is portable, and how arguments are coerced to the published types. What a
//! tool is (its tier, the host parameters it publishes) comes from its traits (WIT 0.4
//! `tool-traits`; for older routers `scryer_runtime`'s compatibility path): the host
//! knows no tool by name.
//!
//! Publishing and accepting are separate: a call may send `max_tokens`, `no_truncate`
//! or `project` to any tool (the host reads them in `dispatch`), but the schemas show
//! them only where the tool's traits say they matter, to keep tool definitions small.
//! Any other argument a tool's published schema does not name is reported in the
//! answer's notes, never dropped silently.

use scryer_runtime::profiles::TierFilter;
use scryer_runtime::wit::{HostParameter, ToolDefinition, ToolTier, ToolTraits};
use serde_json::{Map, Value, json};

/// Whether a tool writes or deletes what a project holds, read from its definition: not
/// read-only, and destructive or not idempotent (`record_adr`, `delete_adr`,
/// `delete_project`). Such a call acts only on a project the call or the session named:
/// it never falls back to the session's roots or the only registered project, and such
/// calls run one at a time per project.
pub fn needs_named_project(tool: &ToolDefinition) -> bool {
    let a = &tool.annotations;
    !a.read_only && (a.destructive || !a.idempotent)
}

/// Parameters the host reads for every tool.
pub const HOST_PARAMS: &[&str] = &[
    "max_tokens",
    "no_truncate",
    "project",
    "format",
    crate::call::windowed::USAGE_OFFSET,
];

/// Which tools a session lists (`scryer serve --tools`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Profile {
    /// Every loaded tool.
    #[default]
    Full,
    /// The tools whose tier is `core`.
    Core,
    /// The tools of the named plugins, or the named tools (comma-separated), or one
    /// profile the operator defined; resolved at session open into `Plugins`.
    Named(Vec<String>),
    /// A resolved profile (ADR 0030): the set of plugins the session loads, which of
    /// their tools it lists, and any tools named one by one.
    Plugins {
        /// `core`, a profile's name, or the `--tools` list as given.
        name: String,
        /// Plugin names, with the installed plugins that replace any of them.
        plugins: Vec<String>,
        tier: TierFilter,
        /// Tools named one by one (`--tools find_references,...`).
        tools: Vec<String>,
    },
}

impl Profile {
    /// `core`, `full`, a profile name, or a comma-separated list of plugin or tool names.
    pub fn parse(s: &str) -> Result<Profile, String> {
        let s = s.trim();
        match s {
            "full" | "all" => Ok(Profile::Full),
            "core" => Ok(Profile::Core),
            "" => Err("--tools is empty; accepted: core, full, a profile defined in profiles.toml, or plugin / tool names separated by commas".into()),
            names => Ok(Profile::Named(
                names
                    .split(',')
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .collect(),
            )),
        }
    }

    /// Whether the profile lists the tool with `traits` of `plugin`.
    pub fn lists(&self, plugin: &str, traits: &ToolTraits) -> bool {
        match self {
            Profile::Full => true,
            Profile::Core => traits.tier == ToolTier::Core,
            Profile::Named(names) => names.iter().any(|n| n == plugin || *n == traits.tool),
            Profile::Plugins {
                plugins,
                tier,
                tools,
                ..
            } => {
                let tier_ok = *tier == TierFilter::All || traits.tier == ToolTier::Core;
                (tier_ok && plugins.iter().any(|p| p == plugin)) || tools.contains(&traits.tool)
            }
        }
    }

    /// What an unknown tool's error adds for a session whose profile loads only some
    /// plugins: the tool may be one of a plugin it does not load.
    pub fn unloaded_hint(&self) -> String {
        match self {
            Profile::Plugins { name, plugins, .. } => format!(
                "; this session's profile `{name}` loads only the plugins {}: `--tools full` loads every plugin",
                plugins.join(", ")
            ),
            _ => String::new(),
        }
    }

    /// Why a session with this profile may not call `tool` of `plugin` (None: it may).
    /// A resolved profile answers the tools of its plugins, listed or not, and the
    /// tools it names; the plugins it does not name may not even be loaded.
    pub fn refusal(&self, plugin: &str, tool: &str) -> Option<String> {
        let Profile::Plugins {
            name,
            plugins,
            tools,
            ..
        } = self
        else {
            return None;
        };
        if plugins.iter().any(|p| p == plugin) || tools.iter().any(|t| t == tool) {
            return None;
        }
        let mut named = plugins.clone();
        named.extend(tools.iter().cloned());
        Some(format!(
            "tool `{tool}` is not in this session's profile `{name}` (it answers the tools of {});              `{tool}` belongs to plugin `{plugin}`: serve with `--tools full`, `--tools {plugin}`, or a profile naming `{plugin}` in the configuration directory's profiles.toml",
            named.join(", ")
        ))
    }
}

/// Whether a tool is marked for clients to load up front (`_meta["anthropic/alwaysLoad"]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AlwaysLoad {
    /// The core tools carry the mark.
    #[default]
    Core,
    None,
}

impl AlwaysLoad {
    pub fn parse(s: &str) -> Result<AlwaysLoad, String> {
        match s.trim() {
            "core" => Ok(AlwaysLoad::Core),
            "none" => Ok(AlwaysLoad::None),
            other => Err(format!("--always-load is {other:?}; accepted: core, none")),
        }
    }

    pub fn marks(self, traits: &ToolTraits) -> bool {
        self == AlwaysLoad::Core && traits.tier == ToolTier::Core
    }
}

/// The budget of a call that sets none (and whose session sets none): the tool's
/// default, or for a batched call of a tool that declares a per-item budget, that much
/// per item (never less than the default).
pub fn default_budget(tool: &ToolDefinition, args: &Map<String, Value>) -> u32 {
    if let Some(per) = &tool.budget_per_item
        && let Some(Value::Array(items)) = args.get(&per.argument)
        && items.len() > 1
    {
        let n = items.len().min(1000) as u32;
        return tool
            .default_budget_tokens
            .max(per.tokens_per_item.saturating_mul(n));
    }
    tool.default_budget_tokens
}

/// The schema a client sees for a tool: the router's, minus host parameters the tool
/// does not publish, plus those its traits name: `max_tokens` / `no_truncate` for
/// `budget`, `project` for `project` (its type) and `project-subject` (described).
pub fn publish_schema(traits: &ToolTraits, schema: &Value) -> Value {
    let mut schema = schema.clone();
    let Some(obj) = schema.as_object_mut() else {
        return schema;
    };
    let props = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(props) = props.as_object_mut() else {
        return schema;
    };
    let publishes = |p: HostParameter| traits.host_parameters.contains(&p);
    let budget = publishes(HostParameter::Budget);
    let subject = publishes(HostParameter::ProjectSubject);
    let project = subject || publishes(HostParameter::Project);
    props.remove("format");
    if !budget {
        props.remove("max_tokens");
        props.remove("no_truncate");
    }
    if !project {
        props.remove("project");
    }
    if budget {
        props
            .entry("max_tokens")
            .or_insert_with(|| json!({"type": "integer", "description": "token budget"}));
        props
            .entry("no_truncate")
            .or_insert_with(|| json!({"type": "boolean", "description": "ignore the budget"}));
    }
    if project {
        // The server instructions say what `project` takes; the tools about a project
        // say it again, the rest only publish its type (tool definitions stay small).
        let spec = if subject {
            json!({"type": "string", "description": "slug, id or root path"})
        } else {
            json!({"type": "string"})
        };
        props.entry("project").or_insert(spec);
    }
    if let Some(Value::Array(required)) = obj.get_mut("required") {
        required.retain(|r| r.as_str().is_none_or(|r| !HOST_PARAMS.contains(&r)));
        if required.is_empty() {
            obj.remove("required");
        }
    }
    schema
}

/// The arguments of a call that `published` (a tool's published schema) does not name
/// and the host does not read: they reach the router but mean nothing to it.
pub fn unknown_arguments(published: &Value, args: &Map<String, Value>) -> Vec<String> {
    let props = published.get("properties").and_then(Value::as_object);
    args.keys()
        .filter(|k| !HOST_PARAMS.contains(&k.as_str()))
        .filter(|k| props.is_none_or(|p| !p.contains_key(k.as_str())))
        .cloned()
        .collect()
}

/// The note an answer carries for arguments its tool does not know: which were
/// ignored and which the tool accepts.
pub fn unknown_arguments_note(tool: &str, published: &Value, unknown: &[String]) -> String {
    let accepted: Vec<&str> = published
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let shown: Vec<String> = unknown
        .iter()
        .take(10)
        .map(|u| format!("`{}`", u.chars().take(60).collect::<String>()))
        .collect();
    format!(
        "ignored unknown argument{} {}: {tool} accepts {}",
        if unknown.len() == 1 { "" } else { "s" },
        shown.join(", "),
        if accepted.is_empty() {
            "no arguments".to_string()
        } else {
            accepted.join(", ")
        }
    )
}

/// What keeps a schema from being portable (empty when it is). One definition serves
/// the host (refusing a plugin at load) and routers' own tests: the SDK's.
pub use scryer_plugin_sdk::host::schema_problems as portability_violations;

/// Coerces `args` to the types `schema` publishes, the way agents mean them: `"12"` for
/// an integer, `"true"` for a boolean, a bare string for an array, `null` for an absent
/// optional. A value that cannot mean the published type is left for the router, whose
/// error names the argument and what it accepts.
pub fn coerce_arguments(schema: &Value, args: &mut Map<String, Value>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    args.retain(|_, v| !v.is_null());
    for (name, spec) in props {
        let Some(value) = args.get_mut(name) else {
            continue;
        };
        let Some(ty) = spec.get("type").and_then(Value::as_str) else {
            continue;
        };
        let coerced = match (ty, &*value) {
            ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
            ("integer", Value::Number(n)) if n.as_i64().is_none() => n
                .as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| Value::from(f as i64)),
            ("number", Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Value::from),
            ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => Some(Value::Bool(true)),
                "false" | "0" | "no" => Some(Value::Bool(false)),
                _ => None,
            },
            ("array", Value::String(s)) => {
                // A JSON array sent as a string, or one bare item.
                match serde_json::from_str::<Value>(s) {
                    Ok(Value::Array(items)) => Some(Value::Array(items)),
                    _ => Some(Value::Array(vec![Value::String(s.clone())])),
                }
            }
            _ => None,
        };
        if let Some(c) = coerced {
            *value = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traits(tool: &str, tier: ToolTier, params: &[HostParameter]) -> ToolTraits {
        ToolTraits {
            tool: tool.into(),
            tier,
            host_parameters: params.to_vec(),
            instructions: None,
        }
    }

    fn budget_and_project(tool: &str) -> ToolTraits {
        traits(
            tool,
            ToolTier::Core,
            &[HostParameter::Budget, HostParameter::Project],
        )
    }

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "symbol": {"type": "string"},
                "limit": {"type": "integer"},
                "exact": {"type": "boolean"},
                "include": {"type": "array", "items": {"type": "string"}},
                "view": {"type": "string", "enum": ["a", "b"]},
                "max_tokens": {"type": "integer"},
                "project": {"type": "string"}
            },
            "required": ["symbol", "project"]
        })
    }

    #[test]
    fn unknown_arguments_are_named_with_the_accepted_ones() {
        let published = publish_schema(&budget_and_project("find_references"), &schema());
        let args =
            json!({"symbol": "x", "symbl": "y", "project": "p", "format": "text", "max_tokens": 5});
        let unknown = unknown_arguments(&published, args.as_object().unwrap());
        assert_eq!(unknown, ["symbl"]);
        let note = unknown_arguments_note("find_references", &published, &unknown);
        assert!(
            note.starts_with("ignored unknown argument `symbl`: find_references accepts "),
            "{note}"
        );
        assert!(
            note.contains("symbol") && note.contains("project"),
            "{note}"
        );
        let none = json!({"symbol": "x"});
        assert!(unknown_arguments(&published, none.as_object().unwrap()).is_empty());
    }

    #[test]
    fn host_parameters_are_published_only_where_they_matter() {
        let p = publish_schema(
            &traits(
                "get_enclosing_scope",
                ToolTier::Core,
                &[HostParameter::Project],
            ),
            &schema(),
        );
        let props = p["properties"].as_object().unwrap();
        assert!(!props.contains_key("max_tokens"));
        assert!(props.contains_key("project"), "it reads the index");
        assert_eq!(p["required"], json!(["symbol"]));

        let p = publish_schema(&budget_and_project("find_references"), &schema());
        assert!(p["properties"]["no_truncate"].is_object());
        assert!(p["properties"]["max_tokens"].is_object());
        assert!(p["properties"]["project"].is_object());
        let p = publish_schema(
            &traits("index_workspace", ToolTier::Extended, &[]),
            &schema(),
        );
        assert!(p["properties"].get("project").is_none());

        let p = publish_schema(
            &traits(
                "switch_active_project",
                ToolTier::Extended,
                &[HostParameter::ProjectSubject],
            ),
            &json!({"type": "object"}),
        );
        assert_eq!(
            p["properties"]["project"]["description"],
            "slug, id or root path"
        );
        let p = publish_schema(&budget_and_project("x"), &json!({"type": "object"}));
        assert!(p["properties"]["project"].get("description").is_none());
    }

    #[test]
    fn non_portable_keywords_and_type_arrays_are_found() {
        assert!(portability_violations(&schema()).is_empty());
        let bad = json!({
            "type": "object",
            "$defs": {},
            "properties": {
                "format": {"type": ["string", "null"]},
                "n": {"type": "integer", "minimum": 1},
                "r": {"$ref": "#/$defs/x"}
            }
        });
        let v = portability_violations(&bad);
        assert_eq!(v.len(), 4, "{v:?}");
        assert!(v.iter().any(|m| m.contains("/properties/format/type")));
        assert!(
            !v.iter()
                .any(|m| m == "/properties/format: `format` is not portable"),
            "a property named `format` is data"
        );
    }

    #[test]
    fn arguments_are_coerced_to_the_published_types() {
        let mut args = json!({
            "symbol": "s", "limit": "5", "exact": "true", "include": "snippet",
            "view": 3, "project": null
        })
        .as_object()
        .unwrap()
        .clone();
        coerce_arguments(&schema(), &mut args);
        assert_eq!(
            Value::Object(args),
            json!({"symbol": "s", "limit": 5, "exact": true, "include": ["snippet"], "view": 3})
        );

        let mut args = json!({"limit": "abc", "include": "[\"a\",\"b\"]", "exact": "maybe"})
            .as_object()
            .unwrap()
            .clone();
        coerce_arguments(&schema(), &mut args);
        assert_eq!(
            args["limit"], "abc",
            "left for the router to refuse by name"
        );
        assert_eq!(args["include"], json!(["a", "b"]));
        assert_eq!(args["exact"], "maybe");
    }

    #[test]
    fn a_batched_call_gets_its_budget_per_item() {
        use scryer_runtime::wit::{ItemBudget, ToolAnnotations};
        let tool = |per: Option<ItemBudget>| ToolDefinition {
            name: "t".into(),
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
            budget_per_item: per,
            reads_index: true,
        };
        let per = || {
            Some(ItemBudget {
                argument: "symbols".into(),
                tokens_per_item: 500,
            })
        };
        let args = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            default_budget(&tool(per()), &args(json!({"symbols": ["a", "b", "c"]}))),
            1500
        );
        assert_eq!(
            default_budget(&tool(per()), &args(json!({"symbols": ["a", "b"]}))),
            1000
        );
        assert_eq!(
            default_budget(&tool(per()), &args(json!({"symbol": "a"}))),
            1000
        );
        assert_eq!(
            default_budget(&tool(None), &args(json!({"symbols": ["a", "b", "c"]}))),
            1000
        );
    }

    #[test]
    fn profiles_parse_and_list() {
        assert_eq!(Profile::parse("core").unwrap(), Profile::Core);
        assert!(Profile::parse(" ").is_err());
        let named = Profile::parse("navigation, search_symbols").unwrap();
        let core = |t: &str| traits(t, ToolTier::Core, &[]);
        let extended = |t: &str| traits(t, ToolTier::Extended, &[]);
        assert!(named.lists("navigation", &core("find_references")));
        assert!(named.lists("search", &core("search_symbols")));
        assert!(!named.lists("graph", &extended("trace_call_hierarchy")));
        assert!(Profile::Core.lists("inspect", &core("inspect_symbol")));
        assert!(!Profile::Core.lists("admin", &extended("list_projects")));
        assert!(AlwaysLoad::Core.marks(&core("find_references")));
        assert!(!AlwaysLoad::Core.marks(&extended("list_projects")));
        assert!(!AlwaysLoad::None.marks(&core("find_references")));
        assert!(AlwaysLoad::parse("all").is_err());
    }

    #[test]
    fn a_resolved_profile_lists_its_plugins_tools_by_tier_and_refuses_other_plugins() {
        let core = |t: &str| traits(t, ToolTier::Core, &[]);
        let extended = |t: &str| traits(t, ToolTier::Extended, &[]);
        let p = Profile::Plugins {
            name: "lean".into(),
            plugins: vec!["navigation".into()],
            tier: TierFilter::Core,
            tools: vec!["list_projects".into()],
        };
        assert!(p.lists("navigation", &core("find_references")));
        assert!(!p.lists("navigation", &extended("get_type_contract")));
        assert!(p.lists("admin", &extended("list_projects")));
        assert!(!p.lists("search", &core("search_symbols")));
        assert_eq!(p.refusal("navigation", "get_type_contract"), None);
        assert_eq!(p.refusal("admin", "list_projects"), None);
        let why = p.refusal("search", "search_symbols").unwrap();
        assert!(
            why.contains("profile `lean`")
                && why.contains("belongs to plugin `search`")
                && why.contains("--tools full"),
            "{why}"
        );
        assert_eq!(Profile::Full.refusal("search", "search_symbols"), None);
    }
}
