//! Builds workspace crates as `wasm32-wasip2` components, for build scripts (the embedded
//! first-party routers) and tests (sandbox fixtures).
//!
//! Runs a nested `cargo build` with its own target directory, so it never waits on the
//! outer build's lock, and with the outer build's compiler flags removed, since those
//! are for the host, not for wasm.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const TARGET: &str = "wasm32-wasip2";
/// The cargo profile plugins are built with (see the workspace Cargo.toml).
pub const PROFILE: &str = "plugin";

/// Environment the outer cargo sets that must not leak into a nested build (it would
/// build for the host, or into the outer target dir).
const SCRUBBED_ENV: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];

/// Removes from `cmd` the environment of the outer cargo build, for a nested cargo
/// invocation (a build script's or a test's).
pub fn scrub_outer_env(cmd: &mut Command) {
    for var in SCRUBBED_ENV {
        cmd.env_remove(var);
    }
}

/// Builds `packages` (package names in the workspace at `workspace_root`) for wasm and
/// returns the path of each component, in the order given.
pub fn build_components(
    cargo: &Path,
    workspace_root: &Path,
    target_dir: &Path,
    packages: &[&str],
) -> Result<Vec<PathBuf>, String> {
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_root)
        .arg("build")
        .arg("--target")
        .arg(TARGET)
        .arg("--profile")
        .arg(PROFILE)
        .arg("--target-dir")
        .arg(target_dir);
    for p in packages {
        cmd.arg("-p").arg(p);
    }
    scrub_outer_env(&mut cmd);
    let output = cmd
        .output()
        .map_err(|e| format!("running {} build for {TARGET}: {e}", cargo.display()))?;
    if !output.status.success() {
        return Err(format!(
            "building {} for {TARGET} failed (is the target installed? rust-toolchain.toml lists it):\n{}",
            packages.join(", "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let dir = target_dir.join(TARGET).join(PROFILE);
    packages
        .iter()
        .map(|p| {
            let path = dir.join(format!("{}.wasm", p.replace('-', "_")));
            if path.is_file() {
                Ok(path)
            } else {
                Err(format!("{} was not produced", path.display()))
            }
        })
        .collect()
}

/// The cargo target directory a build script runs under, from its `OUT_DIR`
/// (`<target>/<profile>/build/<pkg>-<hash>/out`).
pub fn target_dir_from_out_dir(out_dir: &Path) -> Option<PathBuf> {
    let build = out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))?;
    Some(build.parent()?.parent()?.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_target_dir_above_out_dir() {
        let out = Path::new("/t/target/debug/build/scryer-builtin-plugins-abc/out");
        assert_eq!(
            target_dir_from_out_dir(out),
            Some(PathBuf::from("/t/target"))
        );
        assert_eq!(target_dir_from_out_dir(Path::new("/nowhere")), None);
    }
}
