//! Opens a database file the way the server starts on it, for timing the start check
//! (ADR 0025; docs/learnings/reliability.md): `open` is `Db::open` alone, `check` is
//! `Db::open_or_set_aside` (the open plus `PRAGMA quick_check`). Prints each step's time.
//!
//! `cargo run --workspace --example start_check -- check|open PATH` (a damaged file is
//! set aside by `check`, as the server would).

use std::time::Instant;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(mode), Some(path)) = (args.next(), args.next()) else {
        anyhow::bail!("usage: start_check open|check PATH");
    };
    let path = std::path::PathBuf::from(path);
    let started = Instant::now();
    match mode.as_str() {
        "open" => drop(scryer_db::Db::open(&path).await?),
        "check" => {
            let (_db, aside) = scryer_db::Db::open_or_set_aside(&path).await?;
            if let Some(a) = aside {
                println!("{}", a.message(&path));
            }
        }
        other => anyhow::bail!("unknown mode {other:?}; accepted: open, check"),
    }
    println!("{mode}: {:.1} ms", started.elapsed().as_secs_f64() * 1e3);
    Ok(())
}
