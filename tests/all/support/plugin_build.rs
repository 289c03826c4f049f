//! Plugin authoring support: `scryer plugin new` projects built the way their README
//! says (`cargo build --target wasm32-wasip2 --release`), in one target directory shared
//! by every test of a target dir, so only the first build compiles the SDK's
//! dependencies; `scryer plugin` commands against a configuration directory.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{scryer_bin, shared_compile_cache};

/// Where generated plugins are built (beside the shared compile cache).
pub fn template_target_dir() -> PathBuf {
    shared_compile_cache()
        .parent()
        .unwrap()
        .join("scryer-plugin-template")
}

/// `scryer plugin new <name> --dir <dir>`; returns the project folder.
pub fn new_plugin(name: &str, dir: &Path) -> PathBuf {
    let out = Command::new(scryer_bin())
        .args(["plugin", "new", name, "--dir"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scryer plugin new failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.to_path_buf()
}

/// Runs `cargo <args>` in `project` as its README says, into the shared target dir.
pub fn cargo(project: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(project)
        .args(args)
        .arg("--target-dir")
        .arg(template_target_dir());
    scryer_wasm_build::scrub_outer_env(&mut cmd);
    cmd.output().unwrap()
}

/// Builds `project` for wasm32-wasip2 (release) and copies the component to `dest`.
pub fn build_plugin(project: &Path, crate_name: &str, dest: &Path) -> PathBuf {
    // The built component lands at a path named by the crate only, in a target dir every
    // test run of this target dir shares (other suites, other checkouts building at the
    // same time): hold a lock from the build to the copy, or another build of a crate
    // of the same name can replace the file in between.
    let _lock = lock_template_dir("build");
    let out = cargo(
        project,
        &["build", "--target", "wasm32-wasip2", "--release"],
    );
    assert!(
        out.status.success(),
        "building {} failed:\n{}",
        project.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let built = template_target_dir()
        .join("wasm32-wasip2/release")
        .join(format!("{crate_name}.wasm"));
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::copy(&built, dest).unwrap_or_else(|e| panic!("{}: {e}", built.display()));
    dest.to_path_buf()
}

/// An exclusive lock named `what` in [`template_target_dir`], held until dropped: every
/// test run on this target dir shares that directory.
pub fn lock_template_dir(what: &str) -> std::fs::File {
    let dir = template_target_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(".{what}.lock"));
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    file.lock()
        .unwrap_or_else(|e| panic!("locking {}: {e}", path.display()));
    file
}

/// Replaces `from` by `to` in `file`, which must contain it.
pub fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.contains(from),
        "{} does not contain {from:?}",
        file.display()
    );
    std::fs::write(file, text.replacen(from, to, 1)).unwrap();
}
