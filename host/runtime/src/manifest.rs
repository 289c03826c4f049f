//! The optional manifest an author ships beside a plugin (`<name>.toml` next to
//! `<name>.wasm`): what the plugin says it is and needs, for operators to read before
//! approving it.
//!
//! The component's imports are authoritative: a manifest that claims fewer capabilities
//! than the imports need is an error naming the difference, since an operator approving
//! the manifest would be approving less than the plugin uses.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::capabilities::{Capability, Grants};
use crate::{Requirements, wit};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    /// The `scryer:router` WIT version it was built against.
    #[serde(default)]
    pub wit: Option<String>,
    /// Tool names, when the author lists them.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Capability names (`index-read`, `tokens`, ...).
    #[serde(default)]
    pub capabilities: Vec<String>,
}

/// The manifest path for a plugin file: `dir/x.wasm` → `dir/x.toml`.
pub fn path_beside(wasm: &Path) -> PathBuf {
    wasm.with_extension("toml")
}

impl Manifest {
    /// Reads the manifest beside `wasm`, if there is one.
    pub fn read_beside(wasm: &Path) -> Result<Option<Manifest>, String> {
        let path = path_beside(wasm);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("reading manifest {}: {e}", path.display())),
        };
        Manifest::parse(&text)
            .map(Some)
            .map_err(|e| format!("manifest {}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Manifest, String> {
        let m: Manifest = toml::from_str(text).map_err(|e| e.to_string())?;
        Grants::parse_list(&m.capabilities.join(","))?;
        Ok(m)
    }

    /// Checks the manifest against what the component really is. Errors name every
    /// difference; the returned notes are harmless over-claims worth showing.
    pub fn check(
        &self,
        requirements: &Requirements,
        description: &wit::PluginDescription,
    ) -> Result<Vec<String>, String> {
        let declared = Grants::parse_list(&self.capabilities.join(","))?;
        let mut problems = Vec::new();
        let missing = declared.missing(&requirements.needs);
        if !missing.is_empty() {
            problems.push(format!(
                "its imports need capabilities the manifest does not declare: {} (imports are what get linked; declare them)",
                missing.names().join(", ")
            ));
        }
        if self.name != description.name {
            problems.push(format!(
                "the manifest names it `{}` but the plugin describes itself as `{}`",
                self.name, description.name
            ));
        }
        if self.version != description.version {
            problems.push(format!(
                "the manifest says version {} but the plugin describes itself as {}",
                self.version, description.version
            ));
        }
        if let (Some(said), Some(real)) = (&self.wit, &requirements.wit_version)
            && said != real
        {
            problems.push(format!(
                "the manifest says WIT {said} but the component is built against {real}"
            ));
        }
        if let Some(tools) = &self.tools {
            let mut said: Vec<&str> = tools.iter().map(String::as_str).collect();
            let mut real: Vec<&str> = description.tools.iter().map(|t| t.name.as_str()).collect();
            said.sort_unstable();
            real.sort_unstable();
            if said != real {
                problems.push(format!(
                    "the manifest lists tools [{}] but the plugin declares [{}]",
                    said.join(", "),
                    real.join(", ")
                ));
            }
        }
        if !problems.is_empty() {
            return Err(format!(
                "manifest of `{}` does not match the component: {}",
                self.name,
                problems.join("; ")
            ));
        }
        let unused: Vec<&str> = requirements
            .needs
            .missing(&declared)
            .iter()
            .map(Capability::name)
            .collect();
        Ok(if unused.is_empty() {
            Vec::new()
        } else {
            vec![format!(
                "the manifest declares {} but the component does not import it; it will not be granted",
                unused.join(", ")
            )]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn description(name: &str, version: &str, tools: &[&str]) -> wit::PluginDescription {
        wit::PluginDescription {
            name: name.into(),
            version: version.into(),
            tools: tools
                .iter()
                .map(|t| wit::ToolDefinition {
                    name: (*t).into(),
                    description: String::new(),
                    input_schema: "{}".into(),
                    annotations: wit::ToolAnnotations {
                        title: None,
                        read_only: true,
                        destructive: false,
                        idempotent: true,
                        open_world: false,
                    },
                    default_budget_tokens: 100,
                    budget_per_item: None,
                    reads_index: false,
                })
                .collect(),
        }
    }

    fn needs(imports: &[&str]) -> Requirements {
        let imports: Vec<String> = imports.iter().map(|s| s.to_string()).collect();
        Requirements::from_imports(&imports, &["scryer:router/plugin@0.1.0".into()])
    }

    #[test]
    fn a_manifest_claiming_less_than_the_imports_is_refused_naming_the_difference() {
        let m = Manifest::parse("name = \"p\"\nversion = \"1.0.0\"\ncapabilities = [\"tokens\"]\n")
            .unwrap();
        let req = needs(&["scryer:router/tokens@0.1.0", "scryer:router/index@0.1.0"]);
        let e = m
            .check(&req, &description("p", "1.0.0", &["t"]))
            .unwrap_err();
        assert!(e.contains("index-read") && !e.contains("tokens,"), "{e}");
    }

    #[test]
    fn a_matching_manifest_passes_and_an_over_claim_is_a_note() {
        let m = Manifest::parse(
            "name = \"p\"\nversion = \"1.0.0\"\nwit = \"0.1.0\"\ntools = [\"b\", \"a\"]\ncapabilities = [\"tokens\", \"log\"]\n",
        )
        .unwrap();
        let req = needs(&["scryer:router/tokens@0.1.0", "wasi:io/streams@0.2.6"]);
        let notes = m
            .check(&req, &description("p", "1.0.0", &["a", "b"]))
            .unwrap();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("log"), "{notes:?}");
    }

    #[test]
    fn name_version_wit_and_tool_differences_are_all_named() {
        let m = Manifest::parse(
            "name = \"p\"\nversion = \"1.0.0\"\nwit = \"0.2.0\"\ntools = [\"a\"]\n",
        )
        .unwrap();
        let e = m
            .check(&needs(&[]), &description("q", "2.0.0", &["a", "b"]))
            .unwrap_err();
        for part in ["`q`", "2.0.0", "WIT 0.2.0", "[a, b]"] {
            assert!(e.contains(part), "{part} missing in {e}");
        }
    }

    #[test]
    fn unknown_fields_and_capabilities_are_rejected() {
        assert!(Manifest::parse("name = \"p\"\nversion = \"1\"\ngrants = []\n").is_err());
        let e = Manifest::parse("name = \"p\"\nversion = \"1\"\ncapabilities = [\"net\"]\n")
            .unwrap_err();
        assert!(e.contains("\"net\"") && e.contains("index-read"), "{e}");
    }
}
