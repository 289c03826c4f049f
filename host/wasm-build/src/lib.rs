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
    ensure_target_installed();
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

/// Adds the wasm target to the active toolchain when its standard library is missing.
///
/// `rust-toolchain.toml` lists the target, but rustup only honours that list when it
/// installs the toolchain itself: a machine whose `1.95.0` toolchain was already there
/// (seen here: a link to `stable`) has no wasm standard library, and every router build
/// fails with "can't find crate for `core`". Best effort: when rustup is absent or fails,
/// the build below reports the error.
fn ensure_target_installed() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let print = |what: &str| -> Option<PathBuf> {
        let out = Command::new(&rustc)
            .args(["--print", what, "--target", TARGET])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    };
    let Some(libdir) = print("target-libdir") else {
        return;
    };
    if libdir.is_dir() {
        return;
    }
    // Name the toolchain by its real directory: a linked toolchain (`1.95.0` -> `stable`)
    // takes components only under the name it links to.
    let toolchain = print("sysroot").and_then(|sysroot| {
        sysroot
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    });
    let mut cmd = Command::new("rustup");
    cmd.args(["target", "add", TARGET]);
    if let Some(toolchain) = &toolchain {
        cmd.args(["--toolchain", toolchain]);
    }
    match cmd.output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => println!(
            "cargo:warning=rustup target add {TARGET} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("cargo:warning={TARGET} is not installed and rustup did not run: {e}"),
    }
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
