//! The end-to-end suites, one test binary with a module per feature (as wasmtime's
//! `tests/all`): every module drives the real `scryer` binary (over stdio with rmcp's
//! client, over HTTP with the small client in `support::http`), and `support` is the
//! code they share. One binary links once instead of once per feature; run one feature
//! with `cargo test -p scryer --test all -- <feature>::`.
//!
//! The tests of every module run on threads of this one process: a test passes any
//! environment to the commands it starts (see `support::daemon::DaemonEnv`), never sets
//! it on this process.

mod support;

mod client_setup;
mod common_names;
mod compile_cache;
mod crash_recovery;
mod crash_storm;
mod daemon;
mod end_to_end;
mod first_contact;
mod full_disk;
mod graph_tools;
mod hostile_calls;
mod hot_swap;
mod http;
mod memory;
mod navigation_tools;
mod plugin_platform;
mod plugin_template;
mod portfolio;
mod precise;
mod sandbox;
mod script_references;
mod search_tools;
mod security;
mod shadow;
mod tool_contract;
