//! One tool call, from arguments to the answer sent back: which project it is about,
//! its arguments checked against the tool contract, its budget, the router run, and the
//! host's last word on the answer.
//!
//! - `dispatch.rs`: what one `tools/call` means and how it is run (the pipeline itself).
//! - `session.rs`: which project a call is about (the per-session context cascade).
//! - `contract.rs`: the tool contract kept for every router (profiles, host parameters,
//!   schema portability, argument coercion).
//! - `paths.rs`: an agent's path inside a project, or a clear refusal.
//! - `windowed.rs`: a common name's usages a window at a time (ADR 0024).
//! - `budget.rs` and `tokens.rs`: answer size, counted in cl100k tokens.
//! - `instructions.rs`: the server instructions sent at `initialize`.
//! - `telemetry.rs`: one usage row per call.

pub(crate) mod budget;
pub mod contract;
pub(crate) mod dispatch;
pub(crate) mod instructions;
pub(crate) mod paths;
pub(crate) mod session;
pub mod telemetry;
pub mod tokens;
pub(crate) mod windowed;
