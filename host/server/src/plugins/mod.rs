//! The plugins a server runs: which are loaded and which one answers each tool, the
//! plugin sets sessions ask for, candidates run in the shadow of a router, and hot swap
//! of installed plugins while the server runs.
//!
//! - `registry.rs`: the loaded plugins, the tool → plugin table, why a plugin is not
//!   serving.
//! - `profiles.rs`: a session's profile resolved to plugins, loaded on demand (ADR 0030).
//! - `shadow.rs`: shadow runs of a candidate beside the router it would replace (ADR 0030).
//! - `plugin_watch.rs`: the serving process watches the installed plugins (ADR 0010).

pub(crate) mod plugin_watch;
pub(crate) mod profiles;
pub(crate) mod registry;
pub(crate) mod shadow;
