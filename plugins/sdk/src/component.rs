//! The WIT glue, compiled only for `wasm32`: the generated bindings (`crate::wit`), the
//! [`WitHost`] that forwards [`Host`] calls to the WIT imports, and what
//! [`export_router!`](crate::export_router) expands to.
//!
//! Architecture invariant: router logic is generic over `H: Host` (never `&dyn Host` on
//! the component path). Monomorphising keeps a component's imports to the interfaces
//! its logic really calls; a vtable would reference every import, and the host refuses
//! a component that imports an interface it was not granted.

use crate::host::*;
use crate::host_functions::Convert;
use crate::wit::scryer::router::{
    catalog, dependencies, docs, docs_write, files, git, index, log, projects, search, tokens,
    types,
};
use crate::{ErrorKind, ToolError, ToolResult};

pub fn from_wit(e: types::CallError) -> ToolError {
    e.convert()
}

pub fn to_wit(e: ToolError) -> types::CallError {
    match e.kind {
        ErrorKind::InvalidArgument => types::CallError::InvalidArgument(e.message),
        ErrorKind::NotFound => types::CallError::NotFound(e.message),
        ErrorKind::Denied => types::CallError::Denied(e.message),
        ErrorKind::Internal => types::CallError::Internal(e.message),
    }
}

crate::scryer_host_conversions!();

/// [`Host`] over the WIT imports.
pub struct WitHost;

/// Writes [`WitHost`] from the list of host functions
/// ([`scryer_host_functions!`](crate::scryer_host_functions)): each `Host` method calls
/// its WIT import, with the entry's call arguments when it names them, and converts the
/// answer.
macro_rules! wit_host {
    ($(
        interface $iface:ident ($interface:literal) {
            $(
                $(#[$meta:meta])*
                fn $wit:ident ($scope:ident $(, $arg:ident : $wty:ty => $hty:ty)* $(,)?) -> $ret:ty
                    => $svc:ident
                    $(default $default:block)?
                    $(offline $offline:block)?
                    $(#[$guest_meta:meta])*
                    guest fn $method:ident (&$this:ident $(, $guest_arg:ident : $guest_ty:ty)* $(,)?)
                        -> $guest_ret:ty
                        $(=> ($($call:expr),* $(,)?))?
                        $($guest_default:block)?;
            )*
        }
    )*) => {
        impl Host for WitHost {
            $($(
                wit_host!(@forward $iface::$wit
                    [fn $method(&$this $(, $guest_arg: $guest_ty)*) -> $guest_ret]
                    [$($guest_arg),*] [$($($call),*)?]);
            )*)*
        }
    };

    // The call's arguments are the method's, or the entry's.
    (@forward $iface:ident::$wit:ident [$($sig:tt)*] [$($arg:ident),*] []) => {
        #[allow(clippy::unused_unit)]
        $($sig)* {
            $iface::$wit($($arg),*).convert()
        }
    };
    (@forward $iface:ident::$wit:ident [$($sig:tt)*] [$($arg:ident),*] [$($call:expr),+]) => {
        #[allow(clippy::unused_unit)]
        $($sig)* {
            $iface::$wit($($call),*).convert()
        }
    };
}

crate::scryer_host_functions!(wit_host);

/// `describe`, for [`export_router!`](crate::export_router).
pub fn describe<R: Router>() -> types::PluginDescription {
    types::PluginDescription {
        name: R::NAME.into(),
        version: R::VERSION.into(),
        tools: R::tools()
            .into_iter()
            .map(|t| types::ToolDefinition {
                name: t.name.into(),
                description: t.description.into(),
                input_schema: t.schema.to_string(),
                annotations: types::ToolAnnotations {
                    title: None,
                    read_only: t.read_only,
                    destructive: t.destructive,
                    idempotent: t.idempotent,
                    open_world: false,
                },
                default_budget_tokens: t.default_budget,
                budget_per_item: t.budget_per_item.map(|(argument, tokens_per_item)| {
                    types::ItemBudget {
                        argument: argument.into(),
                        tokens_per_item,
                    }
                }),
                reads_index: t.reads_index,
            })
            .collect(),
    }
}

/// `describe-traits`, for [`export_router!`](crate::export_router).
pub fn describe_traits<R: Router>() -> Vec<types::ToolTraits> {
    R::tools()
        .into_iter()
        .map(|t| types::ToolTraits {
            tool: t.name.into(),
            tier: match t.tier {
                Tier::Core => types::ToolTier::Core,
                Tier::Extended => types::ToolTier::Extended,
            },
            host_parameters: t
                .host_params
                .iter()
                .map(|p| match p {
                    HostParam::Budget => types::HostParameter::Budget,
                    HostParam::Project => types::HostParameter::Project,
                    HostParam::ProjectSubject => types::HostParameter::ProjectSubject,
                })
                .collect(),
            instructions: t.guide.map(|(question, how)| types::InstructionsEntry {
                question: question.into(),
                how: how.into(),
            }),
        })
        .collect()
}

/// `answer`, for [`export_router!`](crate::export_router): the router's answer with the
/// host's notes in it, and the files it is about.
pub fn answer<R: Router>(
    tool: String,
    arguments: String,
    context: types::AnswerContext,
) -> Result<types::ToolAnswer, types::CallError> {
    let types::AnswerContext {
        call: context,
        notes,
    } = context;
    let result = call::<R>(tool.clone(), arguments, context)?;
    let files = R::answer_files(&tool, &result.body);
    let notes: Vec<crate::answer::HostNote> = notes
        .into_iter()
        .map(|n| crate::answer::HostNote {
            text: n.text,
            incomplete: n.incomplete,
        })
        .collect();
    Ok(types::ToolAnswer {
        body: crate::answer::with_notes(result.body, &notes),
        truncated: result.truncated,
        files,
    })
}

/// `call`, for [`export_router!`](crate::export_router).
pub fn call<R: Router>(
    tool: String,
    arguments: String,
    context: types::CallContext,
) -> Result<types::CallResult, types::CallError> {
    let ctx = Ctx {
        budget: context.budget_tokens,
        budget_explicit: context.budget_explicit,
        format: match context.format {
            types::OutputFormat::Json => Format::Json,
            types::OutputFormat::Text => Format::Text,
        },
        project: context.project.as_ref().map(|p| p.slug.clone()),
        project_root: context.project.map(|p| p.root),
    };
    let args = crate::args::Args::parse(&arguments).map_err(to_wit)?;
    let body = R::call(&WitHost, &tool, &args, &ctx).map_err(to_wit)?;
    let truncated = body.contains("\"next_offset\"") || body.contains("TRUNCATED");
    Ok(types::CallResult { body, truncated })
}
