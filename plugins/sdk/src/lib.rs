//! Helpers for writing scryer router plugins (guest side).
//!
//! A router receives its arguments as a JSON object and answers with a body that must
//! fit a token budget. This crate holds what every router needs for that and nothing
//! tied to the WIT bindings, so router logic built on it also runs natively (tests,
//! benchmarks):
//!
//! - [`args::Args`]: typed access to arguments, lenient in what it accepts (`"12"` for a
//!   number, `"true"` for a boolean, `null` for absent) and precise in its errors;
//! - [`budget::fit_prefix`]: the largest prefix of a list whose rendering fits a budget;
//! - [`listing`]: list answers — paging by `offset` with `complete`/`next_offset`/
//!   `see_also` written one way, fitted with the host's token counter
//!   ([`listing::paginate_for`]), and the text format's header and aligned rows;
//! - [`ToolError`]: an error kind and a message that names what was wrong and what is
//!   accepted.

pub mod answer;
pub mod args;
pub mod attribution;
pub mod budget;
pub mod callgraph;
pub mod host;
pub mod listing;
pub mod names;
pub mod resolve;
pub mod testing;

pub use host::{Ctx, Format, Host, HostParam, Router, Tier, ToolSpec};

/// The bindings generated from `wit/v0.4` (world `scryer-host`, the union of every
/// interface; a component imports only what its logic calls). Components built with
/// this SDK need a host that links WIT 0.4; the host still links 0.1, 0.2 and 0.3
/// components. The crate's `wit` folder is that version (a link to `wit/v0.4` in the
/// scryer tree; `cargo package` copies it in, so the packaged SDK needs no tree).
#[cfg(target_arch = "wasm32")]
pub mod wit {
    wit_bindgen::generate!({
        path: "wit",
        world: "scryer-host",
        pub_export_macro: true,
        export_macro_name: "export_plugin",
        default_bindings_module: "scryer_plugin_sdk::wit",
    });
}

#[cfg(target_arch = "wasm32")]
pub mod component;

/// Makes a [`Router`] the component's `plugin` export. Put it at the crate root of the
/// router: `scryer_plugin_sdk::export_router!(Navigation);`. Natively it expands to
/// nothing, so the same crate builds and tests on the host.
#[macro_export]
macro_rules! export_router {
    ($router:ty) => {
        #[cfg(target_arch = "wasm32")]
        mod __scryer_component {
            use super::*;
            pub struct Component;
            impl $crate::wit::exports::scryer::router::plugin::Guest for Component {
                fn describe() -> $crate::wit::scryer::router::types::PluginDescription {
                    $crate::component::describe::<$router>()
                }
                fn call(
                    tool: String,
                    arguments: String,
                    context: $crate::wit::scryer::router::types::CallContext,
                ) -> Result<
                    $crate::wit::scryer::router::types::CallResult,
                    $crate::wit::scryer::router::types::CallError,
                > {
                    $crate::component::call::<$router>(tool, arguments, context)
                }
                fn describe_traits() -> Vec<$crate::wit::scryer::router::types::ToolTraits> {
                    $crate::component::describe_traits::<$router>()
                }
                fn answer(
                    tool: String,
                    arguments: String,
                    context: $crate::wit::scryer::router::types::AnswerContext,
                ) -> Result<
                    $crate::wit::scryer::router::types::ToolAnswer,
                    $crate::wit::scryer::router::types::CallError,
                > {
                    $crate::component::answer::<$router>(tool, arguments, context)
                }
            }
            $crate::wit::export_plugin!(Component with_types_in $crate::wit);
        }
    };
}

/// The kinds of error a tool reports; they map one-to-one onto the WIT `call-error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidArgument,
    NotFound,
    Denied,
    Internal,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ToolError {
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError {
            kind: ErrorKind::InvalidArgument,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> ToolError {
        ToolError {
            kind: ErrorKind::NotFound,
            message: message.into(),
        }
    }

    pub fn internal(message: impl Into<String>) -> ToolError {
        ToolError {
            kind: ErrorKind::Internal,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolError {}

pub type ToolResult<T> = Result<T, ToolError>;

/// Compact JSON without nulls: the shape every answer uses.
pub fn to_compact_json(value: &serde_json::Value) -> String {
    serde_json::to_string(&strip_empty(value.clone())).unwrap_or_else(|_| "{}".into())
}

/// Removes nulls, empty arrays and empty objects from a JSON value, recursively.
/// Answers never carry them: an absent field already says "nothing here".
pub fn strip_empty(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, strip_empty(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_empty).collect()),
        other => other,
    }
}

fn is_empty(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => true,
        serde_json::Value::Array(a) => a.is_empty(),
        serde_json::Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Conversions between [`ToolError`] and a component's generated WIT `call-error`
/// (`from_wit`, `to_wit`). Invoke in the component module after `wit_bindgen::generate!`
/// with the generated type in scope: `scryer_plugin_sdk::call_error_conversions!(CallError);`
#[macro_export]
macro_rules! call_error_conversions {
    ($call_error:ident) => {
        #[allow(dead_code)]
        fn from_wit(e: $call_error) -> $crate::ToolError {
            match e {
                $call_error::InvalidArgument(m) => $crate::ToolError::invalid(m),
                $call_error::NotFound(m) => $crate::ToolError::not_found(m),
                $call_error::Denied(m) => $crate::ToolError {
                    kind: $crate::ErrorKind::Denied,
                    message: m,
                },
                $call_error::Internal(m) => $crate::ToolError::internal(m),
            }
        }

        fn to_wit(e: $crate::ToolError) -> $call_error {
            match e.kind {
                $crate::ErrorKind::InvalidArgument => $call_error::InvalidArgument(e.message),
                $crate::ErrorKind::NotFound => $call_error::NotFound(e.message),
                $crate::ErrorKind::Denied => $call_error::Denied(e.message),
                $crate::ErrorKind::Internal => $call_error::Internal(e.message),
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn compact_json_drops_nulls_and_empties_but_keeps_zero_and_false() {
        let v = json!({"a": null, "b": [], "c": {}, "d": 0, "e": false, "f": [{"g": null, "h": 1}], "i": ""});
        assert_eq!(
            to_compact_json(&v),
            r#"{"d":0,"e":false,"f":[{"h":1}],"i":""}"#
        );
    }
}
