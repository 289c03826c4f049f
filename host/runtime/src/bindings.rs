//! Host-side bindings generated from the WIT, and the store every call runs in
//! ([`CallState`]); the glue from each imported WIT interface to [`HostServices`] is
//! expanded from the list in `host_functions.rs`. The generated code is the only place
//! that knows the WIT's Rust shape; everything else uses the re-exports in `crate::wit`.
//!
//! Every released WIT version is linked (ADR 0008):
//!
//! - `v0_5` binds the newest version, `wit/v0.5`. Its Rust types are the host's types,
//!   and its `Host` traits are what [`CallState`] implements.
//! - `v0_4`, `v0_3`, `v0_2` and `v0_1` bind only the *export* of their version (the
//!   `plugin` interface a router exports); every interface they use is mapped onto the
//!   `v0_5` modules with `with`, so an older router is described and called with the
//!   same Rust types.
//!
//! An older component's imports (`scryer:router/index@0.1.0`, ...) are linked with the
//! `v0_5` functions under the older names (see `capabilities::linker_for`): every
//! version only added interfaces and functions, an older component imports a subset of
//! them, and the component model checks types structurally, so the same implementation
//! satisfies all. wasmtime's semver matching cannot do this for us: for 0.x versions
//! only the same minor is compatible.

use wasmtime::component::{InstancePre, ResourceTable};
use wasmtime::{AsContextMut, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::{CallScope, HostServices};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod v0_5 {
    wasmtime::component::bindgen!({
        path: "../../wit/v0.5",
        world: "scryer-host",
    });
}

pub mod v0_4 {
    wasmtime::component::bindgen!({
        path: "../../wit/v0.4",
        world: "scryer-host",
        with: {
            "scryer:router/types@0.4.0": crate::bindings::v0_5::scryer::router::types,
            "scryer:router/index@0.4.0": crate::bindings::v0_5::scryer::router::index,
            "scryer:router/files@0.4.0": crate::bindings::v0_5::scryer::router::files,
            "scryer:router/tokens@0.4.0": crate::bindings::v0_5::scryer::router::tokens,
            "scryer:router/log@0.4.0": crate::bindings::v0_5::scryer::router::log,
            "scryer:router/dependencies@0.4.0": crate::bindings::v0_5::scryer::router::dependencies,
            "scryer:router/search@0.4.0": crate::bindings::v0_5::scryer::router::search,
            "scryer:router/docs@0.4.0": crate::bindings::v0_5::scryer::router::docs,
            "scryer:router/docs-write@0.4.0": crate::bindings::v0_5::scryer::router::docs_write,
            "scryer:router/projects@0.4.0": crate::bindings::v0_5::scryer::router::projects,
            "scryer:router/git@0.4.0": crate::bindings::v0_5::scryer::router::git,
            "scryer:router/catalog@0.4.0": crate::bindings::v0_5::scryer::router::catalog,
        },
    });
}

pub mod v0_3 {
    wasmtime::component::bindgen!({
        path: "../../wit/v0.3",
        world: "router",
        with: {
            "scryer:router/types@0.3.0": crate::bindings::v0_5::scryer::router::types,
            "scryer:router/index@0.3.0": crate::bindings::v0_5::scryer::router::index,
            "scryer:router/files@0.3.0": crate::bindings::v0_5::scryer::router::files,
            "scryer:router/tokens@0.3.0": crate::bindings::v0_5::scryer::router::tokens,
            "scryer:router/log@0.3.0": crate::bindings::v0_5::scryer::router::log,
            "scryer:router/dependencies@0.3.0": crate::bindings::v0_5::scryer::router::dependencies,
            "scryer:router/search@0.3.0": crate::bindings::v0_5::scryer::router::search,
            "scryer:router/docs@0.3.0": crate::bindings::v0_5::scryer::router::docs,
        },
    });
}

pub mod v0_2 {
    wasmtime::component::bindgen!({
        path: "../../wit/v0.2",
        world: "router",
        with: {
            "scryer:router/types@0.2.0": crate::bindings::v0_5::scryer::router::types,
            "scryer:router/index@0.2.0": crate::bindings::v0_5::scryer::router::index,
            "scryer:router/files@0.2.0": crate::bindings::v0_5::scryer::router::files,
            "scryer:router/tokens@0.2.0": crate::bindings::v0_5::scryer::router::tokens,
            "scryer:router/log@0.2.0": crate::bindings::v0_5::scryer::router::log,
            "scryer:router/dependencies@0.2.0": crate::bindings::v0_5::scryer::router::dependencies,
            "scryer:router/search@0.2.0": crate::bindings::v0_5::scryer::router::search,
            "scryer:router/docs@0.2.0": crate::bindings::v0_5::scryer::router::docs,
        },
    });
}

pub mod v0_1 {
    wasmtime::component::bindgen!({
        path: "../../wit/v0.1",
        world: "router",
        with: {
            "scryer:router/types@0.1.0": crate::bindings::v0_5::scryer::router::types,
            "scryer:router/index@0.1.0": crate::bindings::v0_5::scryer::router::index,
            "scryer:router/files@0.1.0": crate::bindings::v0_5::scryer::router::files,
            "scryer:router/tokens@0.1.0": crate::bindings::v0_5::scryer::router::tokens,
            "scryer:router/log@0.1.0": crate::bindings::v0_5::scryer::router::log,
            "scryer:router/dependencies@0.1.0": crate::bindings::v0_5::scryer::router::dependencies,
            "scryer:router/search@0.1.0": crate::bindings::v0_5::scryer::router::search,
            "scryer:router/docs@0.1.0": crate::bindings::v0_5::scryer::router::docs,
        },
    });
}

pub use v0_5::scryer;
use v0_5::scryer::router::types;

/// A released `scryer:router` version this host links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WitVersion {
    V0_1,
    V0_2,
    V0_3,
    V0_4,
    V0_5,
}

impl WitVersion {
    /// Oldest first.
    pub const ALL: [WitVersion; 5] = [
        WitVersion::V0_1,
        WitVersion::V0_2,
        WitVersion::V0_3,
        WitVersion::V0_4,
        WitVersion::V0_5,
    ];

    /// The exact version string interfaces are named with (`index@0.1.0`).
    pub fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_1 => "0.1.0",
            WitVersion::V0_2 => "0.2.0",
            WitVersion::V0_3 => "0.3.0",
            WitVersion::V0_4 => "0.4.0",
            WitVersion::V0_5 => "0.5.0",
        }
    }

    /// The released version a component built against `version` links to, by the
    /// component model's semver rule (for 0.x, the same minor; from 1.0, the same
    /// major). `None` for a version this host does not know.
    pub fn compatible_with(version: &str) -> Option<WitVersion> {
        let core = version.split(['-', '+']).next().unwrap_or(version);
        let mut parts = core.split('.').map(|p| p.parse::<u64>().ok());
        let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
            return None;
        };
        Self::ALL.into_iter().find(|v| {
            let mut ours = v.as_str().split('.').map(|p| p.parse::<u64>().unwrap_or(0));
            let (our_major, our_minor) = (ours.next().unwrap_or(0), ours.next().unwrap_or(0));
            if major == 0 {
                our_major == 0 && our_minor == minor
            } else {
                our_major == major
            }
        })
    }

    /// Which version a component exports `plugin` from, read from its export names.
    pub fn of_exports(exports: &[String]) -> Result<WitVersion, String> {
        let supported = match Self::ALL.map(|v| v.as_str()).split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => String::new(),
        };
        let plugin = exports
            .iter()
            .find(|n| n.starts_with("scryer:router/plugin"))
            .ok_or_else(|| {
                format!(
                    "it does not export `scryer:router/plugin` (exports: {}); build it against wit/v0.5 with the SDK's export_router!",
                    if exports.is_empty() { "none".to_string() } else { exports.join(", ") }
                )
            })?;
        let version = plugin.split_once('@').map(|(_, v)| v).ok_or_else(|| {
            format!(
                "it exports `{plugin}` without a version; this host links scryer:router {supported}"
            )
        })?;
        Self::compatible_with(version).ok_or_else(|| {
            format!("it is built against scryer:router@{version}; this host links {supported}")
        })
    }
}

/// A router component linked and ready to instantiate, for the WIT version it exports.
#[derive(Clone)]
pub(crate) enum RouterPre {
    V0_1(v0_1::RouterPre<CallState>),
    V0_2(v0_2::RouterPre<CallState>),
    V0_3(v0_3::RouterPre<CallState>),
    V0_4(v0_4::ScryerHostPre<CallState>),
    V0_5(v0_5::ScryerHostPre<CallState>),
}

/// One instance of a router component.
pub(crate) enum RouterInstance {
    V0_1(v0_1::Router),
    V0_2(v0_2::Router),
    V0_3(v0_3::Router),
    V0_4(v0_4::ScryerHost),
    V0_5(v0_5::ScryerHost),
}

impl RouterPre {
    pub(crate) fn new(version: WitVersion, pre: InstancePre<CallState>) -> wasmtime::Result<Self> {
        Ok(match version {
            WitVersion::V0_1 => RouterPre::V0_1(v0_1::RouterPre::new(pre)?),
            WitVersion::V0_2 => RouterPre::V0_2(v0_2::RouterPre::new(pre)?),
            WitVersion::V0_3 => RouterPre::V0_3(v0_3::RouterPre::new(pre)?),
            WitVersion::V0_4 => RouterPre::V0_4(v0_4::ScryerHostPre::new(pre)?),
            WitVersion::V0_5 => RouterPre::V0_5(v0_5::ScryerHostPre::new(pre)?),
        })
    }

    pub(crate) fn instantiate(
        &self,
        store: &mut Store<CallState>,
    ) -> wasmtime::Result<RouterInstance> {
        Ok(match self {
            RouterPre::V0_1(pre) => RouterInstance::V0_1(pre.instantiate(store)?),
            RouterPre::V0_2(pre) => RouterInstance::V0_2(pre.instantiate(store)?),
            RouterPre::V0_3(pre) => RouterInstance::V0_3(pre.instantiate(store)?),
            RouterPre::V0_4(pre) => RouterInstance::V0_4(pre.instantiate(store)?),
            RouterPre::V0_5(pre) => RouterInstance::V0_5(pre.instantiate(store)?),
        })
    }
}

impl RouterInstance {
    pub(crate) fn describe(
        &self,
        store: impl AsContextMut<Data = CallState>,
    ) -> wasmtime::Result<types::PluginDescription> {
        match self {
            RouterInstance::V0_1(i) => i.scryer_router_plugin().call_describe(store),
            RouterInstance::V0_2(i) => i.scryer_router_plugin().call_describe(store),
            RouterInstance::V0_3(i) => i.scryer_router_plugin().call_describe(store),
            RouterInstance::V0_4(i) => i.scryer_router_plugin().call_describe(store),
            RouterInstance::V0_5(i) => i.scryer_router_plugin().call_describe(store),
        }
    }

    /// Each tool's traits: a 0.4 router says them, an older one gets the host's former
    /// knowledge of it (`compat`).
    pub(crate) fn describe_traits(
        &self,
        store: impl AsContextMut<Data = CallState>,
        description: &types::PluginDescription,
    ) -> wasmtime::Result<Vec<types::ToolTraits>> {
        match self {
            RouterInstance::V0_4(i) => i.scryer_router_plugin().call_describe_traits(store),
            RouterInstance::V0_5(i) => i.scryer_router_plugin().call_describe_traits(store),
            _ => Ok(description
                .tools
                .iter()
                .map(crate::compat::traits_of)
                .collect()),
        }
    }

    /// One call: `answer` on a 0.4 router; `call` on an older one, whose answer then
    /// gets the host's notes and its files the way it did before 0.4 (`compat`).
    pub(crate) fn answer(
        &self,
        mut store: impl AsContextMut<Data = CallState>,
        tool: &str,
        arguments: &str,
        context: &types::AnswerContext,
    ) -> wasmtime::Result<Result<types::ToolAnswer, types::CallError>> {
        let call = &context.call;
        let result = match self {
            RouterInstance::V0_1(i) => i
                .scryer_router_plugin()
                .call_call(&mut store, tool, arguments, call),
            RouterInstance::V0_2(i) => i
                .scryer_router_plugin()
                .call_call(&mut store, tool, arguments, call),
            RouterInstance::V0_3(i) => i
                .scryer_router_plugin()
                .call_call(&mut store, tool, arguments, call),
            RouterInstance::V0_4(i) => {
                return i
                    .scryer_router_plugin()
                    .call_answer(store, tool, arguments, context);
            }
            RouterInstance::V0_5(i) => {
                return i
                    .scryer_router_plugin()
                    .call_answer(store, tool, arguments, context);
            }
        };
        let state = store.as_context_mut();
        let state = state.data();
        Ok(result?.map(|r| crate::compat::answer_of(r, tool, context, &*state.host, &state.scope)))
    }
}

/// Everything one call's store holds. Built fresh for every call, so nothing a router
/// does survives into the next call.
pub struct CallState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: wasmtime::StoreLimits,
    pub(crate) host: Arc<dyn HostServices>,
    pub(crate) scope: CallScope,
    /// Time spent in host calls so far: it does not count against the router's CPU
    /// deadline (a host call may wait, e.g. for a search index still being built).
    pub(crate) host_time: Duration,
}

impl CallState {
    /// Runs one host call, adding its time to [`CallState::host_time`].
    pub(crate) fn in_host<R, F: FnOnce(&dyn HostServices, &CallScope) -> R>(
        &mut self,
        call: F,
    ) -> R {
        let started = Instant::now();
        let result = call(&*self.host, &self.scope);
        let took = started.elapsed();
        self.host_time += took;
        // The closure's type names the import it serves (`...::references_to_name::{{closure}}`).
        tracing::trace!(target: "scryer::host_call", call = std::any::type_name::<F>(), us = took.as_micros() as u64);
        result
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for CallState {}

#[cfg(test)]
mod tests {
    use super::WitVersion;

    #[test]
    fn versions_match_by_the_component_model_semver_rule() {
        assert_eq!(WitVersion::compatible_with("0.1.0"), Some(WitVersion::V0_1));
        assert_eq!(WitVersion::compatible_with("0.1.7"), Some(WitVersion::V0_1));
        assert_eq!(WitVersion::compatible_with("0.2.0"), Some(WitVersion::V0_2));
        assert_eq!(
            WitVersion::compatible_with("0.2.1-rc1"),
            Some(WitVersion::V0_2)
        );
        assert_eq!(WitVersion::compatible_with("0.3.0"), Some(WitVersion::V0_3));
        assert_eq!(WitVersion::compatible_with("0.4.0"), Some(WitVersion::V0_4));
        assert_eq!(WitVersion::compatible_with("0.5.0"), Some(WitVersion::V0_5));
        assert_eq!(WitVersion::compatible_with("0.6.0"), None);
        assert_eq!(WitVersion::compatible_with("1.1.0"), None);
        assert_eq!(WitVersion::compatible_with("x"), None);
    }

    #[test]
    fn the_plugin_export_decides_the_version_and_unknown_ones_are_named() {
        let exports = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            WitVersion::of_exports(&exports(&["scryer:router/plugin@0.1.0"])),
            Ok(WitVersion::V0_1)
        );
        assert_eq!(
            WitVersion::of_exports(&exports(&["scryer:router/plugin@0.2.0"])),
            Ok(WitVersion::V0_2)
        );
        assert_eq!(
            WitVersion::of_exports(&exports(&["scryer:router/plugin@0.3.0"])),
            Ok(WitVersion::V0_3)
        );
        assert_eq!(
            WitVersion::of_exports(&exports(&["scryer:router/plugin@0.4.0"])),
            Ok(WitVersion::V0_4)
        );
        let e = WitVersion::of_exports(&exports(&["scryer:router/plugin@0.9.0"])).unwrap_err();
        assert!(
            e.contains("0.9.0") && e.contains("0.1.0, 0.2.0, 0.3.0, 0.4.0 and 0.5.0"),
            "{e}"
        );
        let e = WitVersion::of_exports(&exports(&["wasi:cli/run@0.2.0"])).unwrap_err();
        assert!(e.contains("does not export `scryer:router/plugin`"), "{e}");
    }
}
