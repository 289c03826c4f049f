//! Builds the first-party routers for wasm32-wasip2, compiles each to native code with
//! the runtime's own engine configuration, and embeds both deflate-compressed (see src/lib.rs,
//! ADR 0015).

use std::path::PathBuf;

/// (package, plugin name, grant set) of each first-party router. The grant set names
/// `scryer_runtime::Grants::for_set`: `router`, `admin` or `memory`.
const ROUTERS: &[(&str, &str, &str)] = &[
    ("scryer-navigation", "navigation", "router"),
    ("scryer-admin", "admin", "admin"),
    ("scryer-memory", "memory", "memory"),
    ("scryer-graph", "graph", "router"),
    ("scryer-inspect", "inspect", "router"),
    ("scryer-search-router", "search", "router"),
    ("scryer-dependency", "dependency", "router"),
];

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest_dir.join("../..").canonicalize().unwrap();
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    for watched in ["plugins", "wit", "Cargo.lock"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    let target_root =
        scryer_wasm_build::target_dir_from_out_dir(&out_dir).unwrap_or_else(|| out_dir.clone());
    let cargo = PathBuf::from(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    let packages: Vec<&str> = ROUTERS.iter().map(|(p, _, _)| *p).collect();
    let built = scryer_wasm_build::build_components(
        &cargo,
        &workspace,
        &target_root.join("scryer-wasm"),
        &packages,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut table = String::from(
        "/// (plugin name, grant set, deflate-compressed component) of every first-party router.\nstatic COMPRESSED: &[(&str, &str, &[u8])] = &[\n",
    );
    let mut native = String::from(
        "/// (plugin name, engine key, native code) of every first-party router, compiled at\n/// build time by `scryer_runtime::precompiled::compile_ahead` (deflate-compressed).\npub static PRECOMPILED: &[(&str, u64, &[u8])] = &[\n",
    );
    for ((_, name, grants), path) in ROUTERS.iter().zip(built) {
        // The file name carries a hash of the content, so `routers.rs` changes whenever a
        // component does and no compiler cache can keep embedding an older one.
        let bytes = std::fs::read(&path).unwrap();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&bytes, &mut hasher);
        let dest = out_dir.join(format!(
            "{name}-{:016x}.wasm.z",
            std::hash::Hasher::finish(&hasher)
        ));
        let packed = scryer_runtime::precompiled::pack(&bytes)
            .unwrap_or_else(|e| panic!("compressing router {name}: {e}"));
        std::fs::write(&dest, &packed).unwrap();
        table.push_str(&format!(
            "    ({name:?}, {grants:?}, include_bytes!({:?})),\n",
            dest.display().to_string()
        ));
        let (code, key) = scryer_runtime::precompiled::compile_ahead(&bytes)
            .unwrap_or_else(|e| panic!("precompiling router {name}: {e:#}"));
        let code_dest = out_dir.join(format!(
            "{name}-{:016x}.cwasm.z",
            std::hash::Hasher::finish(&hasher)
        ));
        std::fs::write(&code_dest, &code).unwrap();
        native.push_str(&format!(
            "    ({name:?}, {key:#018x}, include_bytes!({:?})),\n",
            code_dest.display().to_string()
        ));
    }
    table.push_str("];\n");
    native.push_str("];\n");
    table.push_str(&native);
    std::fs::write(out_dir.join("routers.rs"), table).unwrap();
}
