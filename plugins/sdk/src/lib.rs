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
pub mod host_functions;
pub mod listing;
pub mod names;
pub mod resolve;
pub mod testing;

pub use host::{Ctx, Format, Host, HostParam, Router, Tier, ToolSpec};

/// The bindings generated from `wit/v0.5` (world `scryer-host`, the union of every
/// interface; a component imports only what its logic calls). Components built with
/// this SDK need a host that links WIT 0.5; the host still links 0.1 to 0.4
/// components. The crate's `wit` folder is that version (a link to `wit/v0.5` in the
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

/// A field of [`compact_object`]: a value, or a list whose items are already compact
/// JSON (an answer's rows, rendered once and reused by every candidate a budget fit
/// renders).
pub enum Field<'a> {
    Value(serde_json::Value),
    Rendered(Vec<&'a str>),
}

/// The object of `fields` as [`to_compact_json`] writes it (keys in order, nulls and
/// empty lists left out) without rendering the [`Field::Rendered`] lists again. Keys
/// must be distinct.
pub fn compact_object(fields: Vec<(&str, Field<'_>)>) -> String {
    // The keys in the order a `serde_json::Map` keeps them (sorted, or as inserted
    // when a build enables `preserve_order`), so the bytes are `to_compact_json`'s.
    let mut order = serde_json::Map::new();
    for (i, (key, _)) in fields.iter().enumerate() {
        order.insert(key.to_string(), serde_json::Value::from(i));
    }
    let mut fields: Vec<Option<(&str, Field<'_>)>> = fields.into_iter().map(Some).collect();
    let mut out = String::from("{");
    for i in order.values().filter_map(serde_json::Value::as_u64) {
        let Some((key, field)) = fields[i as usize].take() else {
            continue;
        };
        let value = match field {
            Field::Value(v) => {
                let v = strip_empty(v);
                if is_empty(&v) {
                    continue;
                }
                serde_json::to_string(&v).unwrap_or_else(|_| "null".into())
            }
            Field::Rendered(items) if items.is_empty() => continue,
            Field::Rendered(items) => format!("[{}]", items.join(",")),
        };
        if out.len() > 1 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push(':');
        out.push_str(&value);
    }
    out.push('}');
    out
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
    #[test]
    fn a_compact_object_is_the_compact_json_of_the_same_fields() {
        use serde_json::json;
        let rows = [
            super::to_compact_json(&json!({"b": 1, "a": null, "c": []})),
            super::to_compact_json(&json!({"x": "y\"z"})),
        ];
        let whole = json!({
            "zeta": "last",
            "rows": [{"b": 1, "a": null, "c": []}, {"x": "y\"z"}],
            "none": [],
            "empty": null,
            "alpha": {"k": [1, null], "e": {}},
            "n": 0,
        });
        let spliced = super::compact_object(vec![
            ("zeta", super::Field::Value(json!("last"))),
            (
                "rows",
                super::Field::Rendered(rows.iter().map(String::as_str).collect()),
            ),
            ("none", super::Field::Rendered(Vec::new())),
            ("empty", super::Field::Value(json!(null))),
            (
                "alpha",
                super::Field::Value(json!({"k": [1, null], "e": {}})),
            ),
            ("n", super::Field::Value(json!(0))),
        ]);
        assert_eq!(spliced, super::to_compact_json(&whole));
        assert_eq!(super::compact_object(vec![]), "{}");
    }

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
