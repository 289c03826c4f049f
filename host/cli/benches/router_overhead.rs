//! What running a router as a sandboxed component costs per call, against the same
//! router logic called natively on the same host services and database.
//!
//!   cargo bench -p scryer --bench router_overhead -- [PROJECT_DIR] [SYMBOL] [ITERATIONS]
//!
//! Defaults: the fixture workspace, `describe`, 2000 iterations. Both paths run the
//! same `find_references` (view sites, default budget) in one process, interleaved in
//! rounds so machine noise hits both alike; the report gives medians and the ratio. The
//! native path is `scryer_runtime::native::NativeHost`, the SDK's `Host` over the same
//! `HostServices` the component's imports reach.

use std::path::PathBuf;

#[path = "common/mod.rs"]
mod common;
use std::sync::Arc;
use std::time::{Duration, Instant};

use scryer_plugin_sdk::Router;
use scryer_plugin_sdk::args::Args;
use scryer_plugin_sdk::host::{Ctx, Format};
use scryer_runtime::native::NativeHost;
use scryer_server::SessionOptions;
use serde_json::json;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p95(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 95 / 100).min(v.len() - 1)]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let project = args
        .first()
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("tests/fixtures/workspace"));
    let symbol = args.get(1).cloned().unwrap_or_else(|| "describe".into());
    let iterations: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2000);

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let state = tempfile::tempdir()?;
        let server = common::start_server(state.path()).await?;
        let indexed = server.index_path(&project).await?;
        let session = server.open_session(project.clone(), SessionOptions::default()).await?;
        server.activate(session, &indexed.slug).await?;
        let scope = server.call_scope(session, "navigation").await?;
        let native = NativeHost {
            host: server.host_services(),
            scope,
        };
        let arguments = json!({"symbol": symbol, "view": "sites"});
        let args_text = arguments.to_string();
        let ctx = Ctx {
            budget: Some(1500),
            format: Format::Json,
            project: Some(indexed.slug.clone()),
            ..Ctx::default()
        };

        // Same answer both ways, or the comparison means nothing.
        let wasm_answer = server.call_tool(session, "find_references", arguments.as_object().cloned()).await;
        let native = Arc::new(native);
        let (n2, a2, c2) = (native.clone(), args_text.clone(), ctx.clone());
        let native_answer = tokio::task::spawn_blocking(move || scryer_navigation::Navigation::call(n2.as_ref(), "find_references", &Args::parse(&a2)?, &c2)).await??;
        assert!(!wasm_answer.is_error, "{}", wasm_answer.text);
        assert_eq!(wasm_answer.text, native_answer, "component and native answers differ");

        let (plugin, _) = server.registry().tool("find_references").expect("navigation is loaded");
        let plugin = plugin.clone();
        let call_ctx = scryer_runtime::wit::AnswerContext {
            call: scryer_runtime::wit::CallContext {
                project: native.scope.project.clone(),
                budget_tokens: Some(1500),
                budget_explicit: false,
                format: scryer_runtime::wit::OutputFormat::Json,
            },
            notes: Vec::new(),
        };
        let direct = server.runtime().call(&plugin, native.scope.clone(), "find_references", &args_text, &call_ctx).await?;
        assert_eq!(direct.body, native_answer, "runtime.call and native answers differ");

        let mut wasm_times = Vec::with_capacity(iterations);
        let mut runtime_times = Vec::with_capacity(iterations);
        let mut native_times = Vec::with_capacity(iterations);
        let rounds = 20;
        for _ in 0..rounds {
            for _ in 0..iterations / rounds {
                let t = Instant::now();
                let r = server.call_tool(session, "find_references", arguments.as_object().cloned()).await;
                wasm_times.push(t.elapsed());
                assert!(!r.is_error);
                let t = Instant::now();
                server.runtime().call(&plugin, native.scope.clone(), "find_references", &args_text, &call_ctx).await?;
                runtime_times.push(t.elapsed());
            }
            let (n2, a2, c2) = (native.clone(), args_text.clone(), ctx.clone());
            let batch = tokio::task::spawn_blocking(move || {
                (0..iterations / rounds)
                    .map(|_| {
                        let t = Instant::now();
                        scryer_navigation::Navigation::call(n2.as_ref(), "find_references", &Args::parse(&a2).unwrap(), &c2).unwrap();
                        t.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
            native_times.extend(batch);
        }
        let (wm, rm, nm) = (median(wasm_times.clone()), median(runtime_times.clone()), median(native_times.clone()));
        println!("project {} ({}), find_references {symbol:?} view=sites, {} bytes answer, {iterations} calls each", indexed.slug, indexed.root, wasm_answer.text.len());
        println!("whole host path (Server::call_tool: resolve, budget, component): median {wm:?}  p95 {:?}", p95(wasm_times));
        println!("component only (Runtime::call, fresh store per call):          median {rm:?}  p95 {:?}", p95(runtime_times));
        println!("native (same router logic, same host services):               median {nm:?}  p95 {:?}", p95(native_times));
        println!(
            "sandbox overhead per call: {:?} (component/native {:.2}x); host dispatch adds {:?}",
            rm.saturating_sub(nm),
            rm.as_secs_f64() / nm.as_secs_f64(),
            wm.saturating_sub(rm)
        );
        anyhow::Ok(())
    })
}
