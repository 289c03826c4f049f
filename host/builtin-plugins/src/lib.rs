//! The first-party router components, compiled for `wasm32-wasip2` by this crate's build
//! script and embedded, so one `scryer` binary carries everything it needs.

include!(concat!(env!("OUT_DIR"), "/routers.rs"));

/// The component bytes of a first-party router by name.
pub fn router(name: &str) -> Option<&'static [u8]> {
    ROUTERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, b)| *b)
}
