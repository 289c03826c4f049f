//! The first-party router components, compiled for `wasm32-wasip2` by this crate's build
//! script and embedded, so one `scryer` binary carries everything it needs; beside each,
//! its native code compiled at build time with the runtime's engine configuration, so a
//! first start loads it instead of compiling (ADR 0015). Both are embedded
//! deflate-compressed: 23 MB of artifacts take about 8.5 MB of the binary.

include!(concat!(env!("OUT_DIR"), "/routers.rs"));

/// (plugin name, grant set) of every first-party router, in load order.
pub fn names() -> impl Iterator<Item = (&'static str, &'static str)> {
    COMPRESSED.iter().map(|(name, grants, _)| (*name, *grants))
}

/// Whether `name` is a first-party router.
pub fn is_builtin(name: &str) -> bool {
    names().any(|(n, _)| n == name)
}

/// The component bytes of a first-party router by name (decompressed).
pub fn router(name: &str) -> Option<Vec<u8>> {
    COMPRESSED
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, packed)| unpack(packed))
}

/// The component bytes of the first-party router `name`, decompressed: what a start
/// needs only when the router's built-in native code does not fit its engine.
///
/// # Panics
/// When `name` is not a first-party router (callers take names from [`names`]).
pub fn component(name: &str) -> Vec<u8> {
    router(name).unwrap_or_else(|| panic!("`{name}` is not a first-party router"))
}

/// (plugin name, grant set, component bytes) of every first-party router, in load order.
pub fn routers() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    COMPRESSED
        .iter()
        .map(|(name, grants, packed)| (*name, *grants, unpack(packed)))
        .collect()
}

/// The native code compiled at build time for a first-party router, with the key of the
/// engine that compiled it: `(engine key, code)`. The code is deflate-compressed
/// (zlib format), as `scryer_runtime::Precompiled` takes it.
pub fn precompiled(name: &str) -> Option<(u64, &'static [u8])> {
    PRECOMPILED
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, key, code)| (*key, *code))
}

/// Decompresses a component the build script compressed; it is part of this binary, so
/// a failure is a broken build.
fn unpack(packed: &[u8]) -> Vec<u8> {
    inflate(packed).expect("a component built into the binary decompresses")
}

/// The zlib stream `scryer_runtime::precompiled::pack` wrote.
fn inflate(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut out = Vec::with_capacity(packed.len() * 3);
    flate2::read::ZlibDecoder::new(packed).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_router_decompresses_to_a_component_with_its_code() {
        let all = super::routers();
        assert_eq!(all.len(), 7);
        for (name, _, wasm) in all {
            assert_eq!(&wasm[..4], b"\0asm", "{name}");
            let (_, code) = super::precompiled(name).unwrap();
            let native = super::inflate(code).unwrap();
            assert_eq!(&native[..4], b"\x7fELF", "{name}");
            assert!(code.len() < native.len() / 2, "{name} compressed");
        }
    }
}
