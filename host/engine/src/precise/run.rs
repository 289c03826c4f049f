//! One indexer run: a child process at low CPU priority (`nice`), in its own process
//! group (killed whole at the wall-clock limit), writing its SCIP file into a temporary
//! directory that is removed with the outcome. Its peak memory is sampled from `/proc`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::indexers::{Indexer, PreciseLanguage, invocation};

/// A finished run: the index file (inside `dir`, removed when this is dropped).
pub struct RunOutcome {
    pub dir: tempfile::TempDir,
    pub index_file: PathBuf,
    pub duration: Duration,
    /// The indexer process's peak resident memory (`VmHWM`), when it could be read.
    pub peak_rss_kb: Option<u64>,
}

/// How often the child's memory is sampled while it runs.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);

/// Runs `indexer` on `root`; fails with the end of its stderr when it exits non-zero,
/// writes no index, or outlives `limit`.
pub async fn run_indexer(
    indexer: &Indexer,
    root: &Path,
    project_name: &str,
    limit: Duration,
) -> Result<RunOutcome> {
    let dir = tempfile::Builder::new()
        .prefix("scryer-precise-")
        .tempdir()
        .context("creating a temporary directory for the indexer's output")?;
    let index_file = dir.path().join("index.scip");
    let (args, cwd) = invocation(indexer, root, &index_file, project_name);
    if indexer.language == PreciseLanguage::Rust {
        std::fs::write(
            super::indexers::rust_analyzer_config_path(&index_file),
            super::indexers::rust_analyzer_config(root),
        )
        .context("writing rust-analyzer's configuration for the run")?;
    }
    // scip-typescript's --infer-tsconfig writes tsconfig.json into the project: it goes
    // again after the run, so the user's tree is left as it was.
    let inferred_tsconfig = (indexer.language == PreciseLanguage::TypeScript
        && args.iter().any(|a| a == "--infer-tsconfig"))
    .then(|| root.join("tsconfig.json"));
    let stderr_path = dir.path().join("stderr.log");
    let stderr = std::fs::File::create(&stderr_path)?;
    let mut cmd = low_priority(&args);
    cmd.current_dir(&cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .process_group(0)
        .kill_on_drop(true);
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting `{}`", args.join(" ")))?;
    let pid = child.id();
    let mut peak: Option<u64> = None;
    let status = loop {
        match tokio::time::timeout(SAMPLE_EVERY, child.wait()).await {
            Ok(status) => break status?,
            Err(_) => {
                if let Some(kb) = pid.and_then(vm_hwm_kb) {
                    peak = Some(peak.map_or(kb, |p| p.max(kb)));
                }
                if started.elapsed() > limit {
                    kill_group(pid);
                    let _ = child.wait().await;
                    cleanup_tsconfig(inferred_tsconfig.as_deref());
                    bail!(
                        "`{}` ran longer than the limit of {} s and was stopped (SCRYER_PRECISE_TIMEOUT_S)",
                        indexer.language.program(),
                        limit.as_secs()
                    );
                }
            }
        }
    };
    cleanup_tsconfig(inferred_tsconfig.as_deref());
    let duration = started.elapsed();
    if !status.success() || !index_file.is_file() {
        let tail = what_it_said(
            indexer.language,
            &std::fs::read_to_string(&stderr_path).unwrap_or_default(),
        );
        bail!(
            "`{}` {} ({})",
            args.join(" "),
            if status.success() {
                "wrote no index".to_string()
            } else {
                format!("exited with {status}")
            },
            if tail.is_empty() { "no output" } else { &tail }
        );
    }
    Ok(RunOutcome {
        dir,
        index_file,
        duration,
        peak_rss_kb: peak,
    })
}

/// `nice -n 10 <args>` when `nice` is available, else the command itself.
fn low_priority(args: &[String]) -> tokio::process::Command {
    let nice = ["/usr/bin/nice", "/bin/nice"]
        .into_iter()
        .find(|p| Path::new(p).is_file());
    match nice {
        Some(nice) => {
            let mut c = tokio::process::Command::new(nice);
            c.args(["-n", "10"]).args(args);
            c
        }
        None => {
            let mut c = tokio::process::Command::new(&args[0]);
            c.args(&args[1..]);
            c
        }
    }
}

/// Kills the child's whole process group (rust-analyzer starts cargo and a proc-macro
/// server of its own).
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &format!("-{pid}")])
            .status();
    }
}

fn cleanup_tsconfig(path: Option<&Path>) {
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}

/// `VmHWM` of a process in KiB.
fn vm_hwm_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// What a failed indexer said: the last few non-empty lines of its stderr before any
/// backtrace, at most 600 characters, and what to do where the failure is a known one
/// ([`PreciseLanguage::failure_advice`]). rust-analyzer prints its error and then a
/// stack backtrace, whose last lines are libc's (`__libc_start_main_impl`) and say
/// nothing.
fn what_it_said(language: PreciseLanguage, stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .take_while(|l| !l.trim().eq_ignore_ascii_case("stack backtrace:"))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(4)..].join(" | ");
    let skip = tail.chars().count().saturating_sub(600);
    let mut said: String = tail.chars().skip(skip).collect();
    if let Some(advice) = language.failure_advice(&said) {
        said.push_str("; ");
        said.push_str(advice);
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_indexer_is_quoted_before_its_backtrace_with_what_to_do() {
        let rust_analyzer = "Generating SCIP start...\nError: more than one project\n\n\
            Stack backtrace:\n   0: anyhow::error::<impl anyhow::Error>::msg\n             \
            at /rustc/x/library/std/src/rt.rs:1:1\n  11: __libc_start_main_impl\n  12: <unknown>\n";
        let said = what_it_said(PreciseLanguage::Rust, rust_analyzer);
        assert!(
            said.starts_with("Generating SCIP start... | Error: more than one project; rust-analyzer indexes one Cargo workspace"),
            "{said}"
        );
        assert!(!said.contains("libc"), "{said}");
        // Advice is the language's own: another indexer saying the same gets none.
        let python = what_it_said(PreciseLanguage::Python, "Error: more than one project\n");
        assert_eq!(python, "Error: more than one project");
        // No backtrace: the last four lines, as they were.
        let plain = "a\n\nb\nc\nd\ne\n";
        assert_eq!(what_it_said(PreciseLanguage::Rust, plain), "b | c | d | e");
        assert_eq!(what_it_said(PreciseLanguage::Rust, ""), "");
        assert_eq!(
            what_it_said(PreciseLanguage::Go, &"x".repeat(900)).len(),
            600
        );
    }
}
