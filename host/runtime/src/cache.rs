//! The compiled-code cache: components compiled by cranelift, serialized to disk.
//!
//! Compiling a router takes tens of milliseconds (seconds in a debug build); loading a
//! serialized one takes well under one. An entry is keyed by the wasm's sha256, the
//! engine's precompile-compatibility hash and the host version, so a changed plugin, a
//! changed engine configuration or a new host never reuses old code. Each entry starts
//! with the sha256 of its payload: a corrupted or truncated file fails that check and is
//! recompiled, never handed to `Component::deserialize`.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

/// Where a component came from on this load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from code compiled at build time and embedded in the binary; the cache
    /// was not used.
    Embedded,
    /// Loaded from a valid cache entry.
    Hit,
    /// No entry: compiled and stored.
    Miss,
    /// An entry existed but failed its checksum or would not deserialize: recompiled.
    Rejected,
    /// No cache directory configured: compiled in memory.
    Disabled,
}

#[derive(Clone, Debug)]
pub struct CompileCache {
    dir: PathBuf,
}

const MAGIC: &[u8; 8] = b"SCRYERC1";

impl CompileCache {
    /// Opens (creating, private to the user) the cache directory.
    pub fn open(dir: impl Into<PathBuf>) -> Result<CompileCache> {
        let dir = dir.into();
        fs::create_dir_all(&dir)
            .with_context(|| format!("creating compile cache {}", dir.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
                .with_context(|| format!("making {} private", dir.display()))?;
        }
        Ok(CompileCache { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry path for these wasm bytes under this engine.
    pub fn entry_path(&self, engine: &Engine, wasm: &[u8]) -> PathBuf {
        self.dir.join(format!("{}.cwasm", cache_key(engine, wasm)))
    }

    /// Loads the compiled component for `wasm`, compiling and storing it when needed.
    pub fn load(&self, engine: &Engine, wasm: &[u8]) -> Result<(Component, CacheOutcome)> {
        let path = self.entry_path(engine, wasm);
        let mut outcome = CacheOutcome::Miss;
        if let Ok(bytes) = fs::read(&path) {
            match verified_payload(&bytes) {
                Some(payload) => {
                    // SAFETY: the payload is code this host serialized with this engine
                    // configuration (the key covers the compatibility hash), and its
                    // checksum matched, so it is byte-for-byte what we wrote.
                    match unsafe { Component::deserialize(engine, payload) } {
                        Ok(component) => return Ok((component, CacheOutcome::Hit)),
                        Err(e) => {
                            tracing::warn!(path = %path.display(), error = %e, "compile cache entry refused; recompiling");
                            outcome = CacheOutcome::Rejected;
                        }
                    }
                }
                None => {
                    tracing::warn!(path = %path.display(), "compile cache entry failed its checksum; recompiling");
                    outcome = CacheOutcome::Rejected;
                }
            }
        }
        let component = Component::new(engine, wasm)
            .map_err(|e| anyhow::Error::from(e).context("compiling component"))?;
        if let Err(e) = self.store(&path, &component) {
            tracing::warn!(path = %path.display(), error = %e, "could not write compile cache entry");
        }
        Ok((component, outcome))
    }

    fn store(&self, path: &Path, component: &Component) -> Result<()> {
        let payload = component.serialize()?;
        let digest = Sha256::digest(&payload);
        // Write to a temporary name and rename, so a reader never sees half a file.
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(MAGIC)?;
            f.write_all(&digest)?;
            f.write_all(&payload)?;
            f.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        Ok(())
    }
}

/// The payload of an entry whose header and checksum are intact.
fn verified_payload(bytes: &[u8]) -> Option<&[u8]> {
    let rest = bytes.strip_prefix(MAGIC)?;
    if rest.len() < 32 {
        return None;
    }
    let (digest, payload) = rest.split_at(32);
    (Sha256::digest(payload).as_slice() == digest).then_some(payload)
}

/// sha256 over the wasm, the engine's compatibility hash and the host version.
pub fn cache_key(engine: &Engine, wasm: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(Sha256::digest(wasm));
    h.update(crate::precompiled::engine_key(engine).to_le_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_catches_any_flipped_byte() {
        let payload = b"compiled code".to_vec();
        let mut entry = MAGIC.to_vec();
        entry.extend_from_slice(&Sha256::digest(&payload));
        entry.extend_from_slice(&payload);
        assert_eq!(verified_payload(&entry), Some(&payload[..]));
        for i in 0..entry.len() {
            let mut bad = entry.clone();
            bad[i] ^= 0x40;
            assert_eq!(
                verified_payload(&bad),
                None,
                "flip at byte {i} went unnoticed"
            );
        }
        assert_eq!(verified_payload(&entry[..20]), None);
    }
}
