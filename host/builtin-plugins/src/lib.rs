//! The first-party router components, compiled for `wasm32-wasip2` by this crate's build
//! script and embedded, so one `scryer` binary carries everything it needs; beside each,
//! its native code compiled at build time with the runtime's engine configuration, so a
//! first start loads it instead of compiling (ADR 0015).

include!(concat!(env!("OUT_DIR"), "/routers.rs"));

/// The component bytes of a first-party router by name.
pub fn router(name: &str) -> Option<&'static [u8]> {
    ROUTERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, b)| *b)
}

/// The native code compiled at build time for a first-party router, with the key of the
/// engine that compiled it: `(engine key, code)`.
pub fn precompiled(name: &str) -> Option<(u64, &'static [u8])> {
    PRECOMPILED
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, key, code)| (*key, *code))
}
