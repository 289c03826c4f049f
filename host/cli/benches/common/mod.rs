//! What the benchmarks share: a server with the embedded routers on a scratch database.

use std::path::Path;
use std::time::Duration;

use scryer_runtime::{Grants, Limits};
use scryer_server::{ComponentBytes, PluginSource, Server, ServerConfig};

/// Starts a server whose database and compile cache live in `dir`, without a watcher.
pub async fn start_server(dir: &Path) -> anyhow::Result<Server> {
    let plugins = scryer_builtin_plugins::names()
        .map(|(name, grant_set)| PluginSource {
            label: name.to_string(),
            wasm: ComponentBytes::Deferred(scryer_builtin_plugins::component),
            grants: Grants::for_set(grant_set).expect("built-in routers name a known grant set"),
            precompiled: scryer_builtin_plugins::precompiled(name)
                .map(|(engine, code)| scryer_runtime::Precompiled { engine, code }),
        })
        .collect();
    Server::start(ServerConfig {
        db_path: dir.join("index.db"),
        compile_cache: Some(dir.join("compiled")),
        limits: Limits::default(),
        plugins,
        first_query_wait: Duration::from_secs(60),
        watch_files: false,
    })
    .await
}
