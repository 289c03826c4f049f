//! The loaded plugins and which one answers each tool.

use std::collections::HashMap;
use std::sync::Arc;

use scryer_runtime::Plugin;
use scryer_runtime::wit::ToolDefinition;

pub struct Registry {
    plugins: Vec<Arc<Plugin>>,
    by_tool: HashMap<String, (usize, ToolDefinition)>,
    /// Each tool's input schema, parsed once at load (arguments are coerced by it on
    /// every call).
    schemas: HashMap<String, serde_json::Value>,
    /// Tool names in load order, for tools/list.
    order: Vec<String>,
}

impl Registry {
    /// Fails when two plugins declare the same tool, naming both.
    pub fn new(plugins: Vec<Plugin>) -> Result<Registry, String> {
        let plugins: Vec<Arc<Plugin>> = plugins.into_iter().map(Arc::new).collect();
        let mut by_tool = HashMap::new();
        let mut schemas = HashMap::new();
        let mut order = Vec::new();
        for (i, p) in plugins.iter().enumerate() {
            for t in &p.description.tools {
                if let Some((j, _)) = by_tool.get(&t.name) {
                    let other: &Arc<Plugin> = &plugins[*j];
                    return Err(format!(
                        "tool `{}` is declared by both plugin `{}` and plugin `{}`; remove one of them",
                        t.name,
                        other.name(),
                        p.name()
                    ));
                }
                let schema: serde_json::Value =
                    serde_json::from_str(&t.input_schema).map_err(|e| {
                        format!(
                            "plugin `{}` publishes tool `{}` with a schema that is not JSON: {e}",
                            p.name(),
                            t.name
                        )
                    })?;
                let problems = crate::contract::portability_violations(&schema);
                if !problems.is_empty() {
                    return Err(format!(
                        "plugin `{}` publishes tool `{}` with a schema strict clients reject: {}; \
                         use plain `type` strings and inline `enum`s",
                        p.name(),
                        t.name,
                        problems.join("; ")
                    ));
                }
                by_tool.insert(t.name.clone(), (i, t.clone()));
                schemas.insert(t.name.clone(), schema);
                order.push(t.name.clone());
            }
        }
        Ok(Registry {
            plugins,
            by_tool,
            schemas,
            order,
        })
    }

    /// The parsed input schema of a loaded tool.
    pub fn schema(&self, name: &str) -> Option<&serde_json::Value> {
        self.schemas.get(name)
    }

    pub fn tool(&self, name: &str) -> Option<(&Arc<Plugin>, &ToolDefinition)> {
        self.by_tool.get(name).map(|(i, t)| (&self.plugins[*i], t))
    }

    /// Every tool, in plugin load order.
    pub fn tools(&self) -> impl Iterator<Item = (&Arc<Plugin>, &ToolDefinition)> {
        self.order.iter().filter_map(|n| self.tool(n))
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.order.iter().map(String::as_str).collect()
    }

    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }
}
