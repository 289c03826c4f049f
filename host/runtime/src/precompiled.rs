//! Router code compiled at build time: how the first-party routers' native code is made
//! (by `host/builtin-plugins`' build script) and when a running engine may use it.
//!
//! The build script compiles each component with an engine built by
//! [`crate::engine_config`], the one function the runtime builds its own engine with, and
//! records that engine's compatibility hash ([`engine_key`]). At start the runtime uses
//! the embedded code only when its own engine's key is the same (same wasmtime, same
//! compiler flags and CPU features, same tunables and wasm features); otherwise, or when
//! `SCRYER_PRECOMPILED=off`, the component is compiled like an installed plugin, through
//! the compile cache (ADR 0015).
//!
//! The code is kept deflate-compressed ([`pack`], [`unpack`]): the seven routers'
//! 16.8 MB of native code take about 6 MB in the binary, and each is decompressed on the
//! thread that loads it, right before the deserialize copies it anyway.

use std::hash::{Hash, Hasher};

use anyhow::{Context, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::Limits;

/// Native code for one component, compiled ahead of time, and the key of the engine that
/// compiled it.
#[derive(Clone, Copy, Debug)]
pub struct Precompiled {
    /// [`engine_key`] of the engine that compiled `code`.
    pub engine: u64,
    /// What `Engine::precompile_component` produced for the component, compressed by
    /// [`pack`] (as [`compile_ahead`] returns it).
    pub code: &'static [u8],
}

/// The variable that turns embedded code off: the built-in routers are then compiled
/// (once, into the compile cache) as if the code did not match this engine.
pub const ENV_PRECOMPILED: &str = "SCRYER_PRECOMPILED";

/// Whether `SCRYER_PRECOMPILED` turns embedded code off (`off`, `0`, `false`, `no`).
pub fn disabled_by_env() -> bool {
    std::env::var(ENV_PRECOMPILED).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "0" | "false" | "no"
        )
    })
}

/// A stable digest of the engine's precompile-compatibility hash: equal for two engines
/// exactly when code compiled by one may be loaded by the other. `DefaultHasher::new()`
/// has fixed keys, so the build script and the binary, built by one toolchain from one
/// wasmtime, compute the same number.
pub fn engine_key(engine: &Engine) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    h.finish()
}

/// Compresses an artifact to embed (zlib format, best compression: the build pays a
/// few seconds once, decompressing is as fast at any level).
pub fn pack(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write as _;
    let mut out = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    out.write_all(bytes)?;
    out.finish()
}

/// The bytes [`pack`] compressed; an error for a stream that is damaged or cut.
pub fn unpack(packed: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut out = Vec::with_capacity(packed.len() * 3);
    flate2::read::ZlibDecoder::new(packed).read_to_end(&mut out)?;
    Ok(out)
}

/// Compiles `wasm` as the runtime's engine would (the build script's side): the native
/// code, compressed by [`pack`], and the key of the engine that made it.
pub fn compile_ahead(wasm: &[u8]) -> Result<(Vec<u8>, u64)> {
    let engine = Engine::new(&crate::engine_config(&Limits::default()))?;
    let code = engine
        .precompile_component(wasm)
        .map_err(anyhow::Error::from)
        .context("precompiling component")?;
    let code = pack(&code).context("compressing the code")?;
    Ok((code, engine_key(&engine)))
}

/// Why embedded code was not used.
#[derive(Debug)]
pub(crate) enum NotUsed {
    /// Compiled by an engine with another key (another CPU, another configuration).
    OtherEngine,
    /// `SCRYER_PRECOMPILED=off`.
    Disabled,
    /// The key matched but wasmtime refused the code.
    Refused(String),
}

impl std::fmt::Display for NotUsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotUsed::OtherEngine => f.write_str(
                "it was compiled for another engine (another CPU or configuration than this build's)",
            ),
            NotUsed::Disabled => write!(f, "{ENV_PRECOMPILED}=off"),
            NotUsed::Refused(why) => write!(f, "wasmtime refused it: {why}"),
        }
    }
}

/// Whether `engine` may load `p` (the key check alone, nothing deserialized).
pub(crate) fn usable(engine: &Engine, p: &Precompiled) -> Result<(), NotUsed> {
    if disabled_by_env() {
        return Err(NotUsed::Disabled);
    }
    if engine_key(engine) != p.engine {
        return Err(NotUsed::OtherEngine);
    }
    Ok(())
}

/// The component from embedded code, when `engine` may load it.
pub(crate) fn load(engine: &Engine, p: &Precompiled) -> Result<Component, NotUsed> {
    usable(engine, p)?;
    let code = unpack(p.code)
        .map_err(|e| NotUsed::Refused(format!("the embedded code does not decompress: {e}")))?;
    // SAFETY: `Component::deserialize` runs the native code it is given, so it must be
    // code wasmtime produced, unmodified. `code` is decompressed (zlib checks its checksum)
    // from `p.code`, a static inside this binary: the
    // build script compiled it from the component embedded beside it with an engine
    // built by the same `engine_config`, and it is as trusted as the host's own machine
    // code (anyone who can change it can change the binary). The key check above makes
    // sure this engine was configured as that one was, and `deserialize` checks the
    // artifact's header, wasmtime version, target, flags, tunables and features again,
    // refusing (not running) anything that does not match.
    unsafe { Component::deserialize(engine, &code) }.map_err(|e| NotUsed::Refused(format!("{e:#}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component, `(component)` in the binary format: the magic, the
    /// component-model version (0x0d) and layer (1).
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    fn runtime_engine() -> Engine {
        Engine::new(&crate::engine_config(&Limits::default())).unwrap()
    }

    fn leak(code: Vec<u8>) -> &'static [u8] {
        Box::leak(code.into_boxed_slice())
    }

    #[test]
    fn code_compiled_ahead_loads_into_the_runtime_engine() {
        let wasm = EMPTY_COMPONENT;
        let (code, key) = compile_ahead(wasm).unwrap();
        let engine = runtime_engine();
        assert_eq!(
            key,
            engine_key(&engine),
            "the build's engine is the runtime's"
        );
        let p = Precompiled {
            engine: key,
            code: leak(code),
        };
        load(&engine, &p).unwrap();
    }

    #[test]
    fn another_engine_key_is_not_used_and_damaged_code_is_refused() {
        let wasm = EMPTY_COMPONENT;
        let (code, key) = compile_ahead(wasm).unwrap();
        let engine = runtime_engine();
        let other = Precompiled {
            engine: key ^ 1,
            code: leak(code.clone()),
        };
        assert!(matches!(load(&engine, &other), Err(NotUsed::OtherEngine)));
        // A cut compressed stream is refused (it does not decompress, or what it gives
        // is not whole code).
        let mut cut = code.clone();
        cut.truncate(cut.len() / 2);
        let damaged = Precompiled {
            engine: key,
            code: leak(cut),
        };
        assert!(matches!(load(&engine, &damaged), Err(NotUsed::Refused(_))));
        // Cut code, compressed whole, decompresses and wasmtime refuses it.
        let mut raw = unpack(&code).unwrap();
        raw.truncate(raw.len() / 2);
        let cut_code = Precompiled {
            engine: key,
            code: leak(pack(&raw).unwrap()),
        };
        let Err(NotUsed::Refused(why)) = load(&engine, &cut_code) else {
            panic!("cut code must be refused");
        };
        assert!(!why.contains("does not decompress"), "{why}");
    }
}
