//! The precise scheduler: one task per daemon takes the project whose run is due, runs
//! the indexer of every language the project has files in (one at a time, `nice`d, with
//! a wall-clock limit, output in a temporary directory), and stores what it wrote.
//! Nothing here blocks a call: answers keep coming from the stored data (or the
//! heuristic) while a run goes.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use scryer_db::{PreciseAttempt, PreciseRunRow, ProjectRow};
use scryer_engine::indexer::{FileStamp, file_stamp};
use scryer_engine::precise::scip_read::{
    LOCAL, ROLE_DEFINITION, ScipDocument, ScipItem, ScipOccurrence, symbol_name,
};
use scryer_engine::precise::{Detection, PreciseLanguage, inputs_digest, read_scip, run_indexer};

use super::{LangState, LangStatus, PreciseService, limits};

/// Keeps the project's row (root and slug) for its runs.
pub(super) fn remember_project(service: &PreciseService, project: &ProjectRow) {
    service.entries().entry(project.id).or_default().project = Some(project.clone());
}

/// The scheduler task: sleeps until a run is due, then runs it.
pub(super) async fn run_loop(service: Arc<PreciseService>) {
    loop {
        let next = {
            let entries = service.entries();
            entries
                .iter()
                .filter(|(_, e)| !e.running)
                .filter_map(|(id, e)| e.due.map(|d| (d, *id)))
                .min()
        };
        let Some((due, project_id)) = next else {
            service.wake.notified().await;
            continue;
        };
        if due > tokio::time::Instant::now() {
            // Woken early by a newer queue entry, or due now.
            let _ = tokio::time::timeout_at(due, service.wake.notified()).await;
            continue;
        }
        let project = {
            let mut entries = service.entries();
            entries.get_mut(&project_id).and_then(|e| {
                e.due = None;
                e.running = true;
                e.project.clone()
            })
        };
        if let Some(project) = project {
            run_project(&service, &project).await;
        }
        if let Some(e) = service.entries().get_mut(&project_id) {
            e.running = false;
            e.ran = true;
        }
    }
}

fn set_state(service: &PreciseService, project_id: i64, status: LangStatus) {
    let mut entries = service.entries();
    let e = entries.entry(project_id).or_default();
    e.languages.insert(status.language, status);
}

/// Runs every present language's indexer for `project`, one after the other.
async fn run_project(service: &Arc<PreciseService>, project: &ProjectRow) {
    let files = match service.db().files(project.id).await {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "precise: reading the project's files failed");
            return;
        }
    };
    let present: BTreeSet<PreciseLanguage> = files
        .values()
        .filter_map(|f| PreciseLanguage::for_file_language(&f.language))
        .collect();
    for language in present {
        let _one_at_a_time = service.run_lock.lock().await;
        let detection =
            tokio::task::spawn_blocking(move || scryer_engine::precise::detect(language))
                .await
                .unwrap_or_else(|e| Detection::Missing {
                    language,
                    reason: format!("looking for the indexer failed: {e}"),
                });
        let indexer = match detection {
            Detection::Found(i) => i,
            Detection::Missing { reason, .. } => {
                set_state(
                    service,
                    project.id,
                    LangStatus {
                        language,
                        state: LangState::Unavailable(reason),
                        indexer: None,
                        indexer_version: None,
                        run: None,
                    },
                );
                continue;
            }
        };
        let status = |state: LangState| LangStatus {
            language,
            state,
            indexer: Some(indexer.command.join(" ")),
            indexer_version: Some(indexer.version.clone()),
            run: None,
        };
        let inputs = inputs_of(project, &files, &indexer).await;
        match due(service, project, language, &inputs).await {
            Due::Run => {}
            Due::Stored => {
                tracing::info!(project = %project.slug, language = language.name(),
                    "precise run not made again: its inputs are those of the stored run");
                set_state(service, project.id, status(LangState::Ready));
                continue;
            }
            Due::Failed(why) => {
                tracing::info!(project = %project.slug, language = language.name(),
                    "precise run not made again: its inputs are those of the last run, which failed");
                set_state(service, project.id, status(LangState::Failed(why)));
                continue;
            }
        }
        set_state(service, project.id, status(LangState::Running));
        let outcome = run_one(service, project, &indexer).await;
        let (state, failure) = match outcome {
            Ok(run) => {
                tracing::info!(project = %project.slug, language = language.name(), files = run.files,
                    occurrences = run.occurrences, ms = run.duration_ms.unwrap_or(0), "precise run stored");
                (LangState::Ready, None)
            }
            Err(e) => {
                let why = format!("{e:#}");
                tracing::warn!(project = %project.slug, language = language.name(), error = %why, "precise run failed");
                (LangState::Failed(why.clone()), Some(why))
            }
        };
        let attempt = PreciseAttempt {
            inputs,
            failure,
            at_unix: unix_now(),
        };
        if let Err(e) = service
            .db()
            .record_precise_attempt(project.id, language.name(), &attempt)
            .await
        {
            tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "precise: keeping the run's inputs failed");
        }
        set_state(service, project.id, status(state));
    }
    prime(service, project).await;
}

/// Reads what precise answers hold in memory (the project's SCIP symbols and
/// occurrences) once its data is there, so the first call that needs it does not: on
/// tokio that read was most of a session's first `find_references` (about 180 ms of
/// 205). A call arriving meanwhile waits for this read instead of making its own
/// (`HeldCache`). On a blocking thread: building the held data is CPU work.
async fn prime(service: &Arc<PreciseService>, project: &ProjectRow) {
    let ready = service
        .entries()
        .get(&project.id)
        .is_some_and(|e| e.languages.values().any(|l| l.state == LangState::Ready));
    if !ready {
        return;
    }
    let (service, id) = (service.clone(), project.id);
    let handle = tokio::runtime::Handle::current();
    let started = std::time::Instant::now();
    let held = tokio::task::spawn_blocking(move || {
        handle.block_on(service.held(id)).map(|held| held.prime())
    })
    .await;
    match held {
        Ok(Ok(symbols)) => tracing::debug!(project = %project.slug, symbols,
            ms = started.elapsed().as_millis() as u64, "precise data primed"),
        Ok(Err(e)) => {
            tracing::warn!(project = %project.slug, error = %format!("{e:#}"), "precise: holding the data failed")
        }
        Err(e) => {
            tracing::warn!(project = %project.slug, error = %e, "precise: holding the data failed")
        }
    }
}

/// Whether a language's indexer is run, given its last run (ADR 0055).
#[derive(Debug, PartialEq, Eq)]
enum Due {
    Run,
    /// The stored run read these inputs: it is what a run would store again.
    Stored,
    /// The last run read these inputs and failed, recently: why, for the status.
    Failed(String),
}

/// What the run about to start reads ([`inputs_digest`]), from the index's files of the
/// indexer's language.
async fn inputs_of(
    project: &ProjectRow,
    files: &HashMap<String, scryer_db::FileRow>,
    indexer: &scryer_engine::precise::Indexer,
) -> String {
    let langs = indexer.language.file_languages();
    let sources: Vec<(String, String)> = files
        .values()
        .filter(|f| langs.contains(&f.language.as_str()))
        .map(|f| (f.path.clone(), f.content_hash.clone()))
        .collect();
    let (root, indexer) = (project.root.clone(), indexer.clone());
    tokio::task::spawn_blocking(move || {
        inputs_digest(
            Path::new(&root),
            &indexer,
            sources.iter().map(|(p, h)| (p.as_str(), h.as_str())),
        )
    })
    .await
    .unwrap_or_default()
}

/// Compares `inputs` with the last run's: the same inputs give the same index, or the
/// same failure (kept for [`limits::FAILED_RUN_KEPT`]: a failure can come from outside
/// the inputs, an indexer's missing toolchain component or an overloaded machine).
async fn due(
    service: &PreciseService,
    project: &ProjectRow,
    language: PreciseLanguage,
    inputs: &str,
) -> Due {
    let db = service.db();
    let last = db
        .precise_attempt(project.id, language.name())
        .await
        .ok()
        .flatten();
    let stored = db
        .precise_runs(project.id)
        .await
        .unwrap_or_default()
        .into_iter()
        .any(|r| r.language == language.name() && r.complete && r.source == "run");
    due_after(language, last.as_ref(), inputs, stored, unix_now())
}

fn due_after(
    language: PreciseLanguage,
    last: Option<&PreciseAttempt>,
    inputs: &str,
    stored: bool,
    now_unix: i64,
) -> Due {
    let Some(last) = last.filter(|l| !inputs.is_empty() && l.inputs == inputs) else {
        return Due::Run;
    };
    let kept = limits::FAILED_RUN_KEPT.as_secs() as i64;
    match &last.failure {
        None if stored => Due::Stored,
        None => Due::Run,
        Some(why) if now_unix.saturating_sub(last.at_unix) < kept => Due::Failed(format!(
            "{why} (not run again: the last run read the same files and settings {} s ago; \
             it runs again when one of them changes, or {} min after it failed; to run it \
             now, touch one of the root files it reads: {})",
            now_unix.saturating_sub(last.at_unix),
            kept / 60,
            language.root_inputs().join(", ")
        )),
        Some(_) => Due::Run,
    }
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// One indexer run and its ingest.
async fn run_one(
    service: &Arc<PreciseService>,
    project: &ProjectRow,
    indexer: &scryer_engine::precise::Indexer,
) -> Result<PreciseRunRow> {
    let root = Path::new(&project.root).to_path_buf();
    // Every covered file as the run starts: its occurrences describe that content.
    let langs = indexer.language.file_languages();
    let paths: Vec<String> = service
        .db()
        .files(project.id)
        .await?
        .into_values()
        .filter(|f| langs.contains(&f.language.as_str()))
        .map(|f| f.path)
        .collect();
    let stamps = stamp_files(&root, paths).await;
    let outcome = run_indexer(indexer, &root, &project.slug, limits::run_timeout()).await?;
    let hashes = hash_unchanged(&root, stamps).await;
    let run = PreciseRunRow {
        language: indexer.language.name().into(),
        tool: indexer.language.program().into(),
        version: indexer.version.clone(),
        source: "run".into(),
        finished_at: None,
        duration_ms: Some(outcome.duration.as_millis() as i64),
        peak_rss_kb: outcome.peak_rss_kb.map(|k| k as i64),
        files: 0,
        occurrences: 0,
        complete: false,
    };
    let stored = ingest(
        service,
        project,
        &outcome.index_file,
        run,
        Some(indexer.language),
        hashes,
    )
    .await?;
    drop(outcome);
    Ok(stored)
}

/// What a file is stored as when it changed while the indexer ran: no content hashes to
/// it, so the file reads as edited since the run and is answered by the heuristic until
/// the next run.
const CHANGED_DURING_RUN: &str = "changed while the indexer ran";

/// The stamp (size, modification time) of each of `paths` (relative to `root`) as a run
/// starts. Only `lstat`s: the files are read once the indexer has succeeded
/// ([`hash_unchanged`]). Reading and hashing them first cost every run, failed ones
/// too, the whole tree: on the monorepo, 17,238 files read at each process's start,
/// about a quarter of a session's CPU, before rust-analyzer failed in a second
/// (docs/learnings/scale.md, stop 44).
async fn stamp_files(root: &Path, paths: Vec<String>) -> Vec<(String, FileStamp)> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        paths
            .into_iter()
            .filter_map(|p| Some((p.clone(), file_stamp(&root.join(&p))?)))
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// The content hash of each stamped file whose stamp has not moved since the run
/// started (the content the indexer read), and [`CHANGED_DURING_RUN`] for the others.
/// The stamp is taken again after the read, so an edit while hashing is caught too.
async fn hash_unchanged(root: &Path, stamps: Vec<(String, FileStamp)>) -> HashMap<String, String> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        stamps
            .into_iter()
            .map(|(p, at_start)| {
                let path = root.join(&p);
                let unchanged = || file_stamp(&path) == Some(at_start);
                let hash = match unchanged().then(|| std::fs::read(&path)) {
                    Some(Ok(bytes)) if unchanged() => scryer_engine::indexer::content_hash(&bytes),
                    _ => CHANGED_DURING_RUN.to_string(),
                };
                (p, hash)
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// The language an index's tool writes.
fn language_of_tool(tool: &str) -> Option<PreciseLanguage> {
    match tool {
        "rust-analyzer" => Some(PreciseLanguage::Rust),
        "scip-python" => Some(PreciseLanguage::Python),
        "scip-typescript" => Some(PreciseLanguage::TypeScript),
        "scip-go" => Some(PreciseLanguage::Go),
        _ => None,
    }
}

/// Stores the SCIP file at `index` for `project`, streaming its documents. Each file is
/// stored with its hash from `hashes` (taken when the run started) or, for a file not
/// hashed then (an import), its hash on disk now. Documents outside the project or of
/// another language are skipped.
pub(crate) async fn ingest(
    service: &Arc<PreciseService>,
    project: &ProjectRow,
    index: &Path,
    mut run: PreciseRunRow,
    language: Option<PreciseLanguage>,
    hashes: HashMap<String, String>,
) -> Result<PreciseRunRow> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<ScipItem>(4);
    let path = index.to_path_buf();
    let reader = tokio::task::spawn_blocking(move || {
        read_scip(&path, |item| {
            tx.blocking_send(item)
                .map_err(|_| anyhow::anyhow!("the writer stopped"))
        })
    });
    // The first item is the metadata: it names the tool (and so the language of an import).
    let first = rx.recv().await;
    let mut pending_doc = None;
    match first {
        Some(ScipItem::Metadata(m)) => {
            if run.tool.is_empty() {
                run.tool = m.tool_name.clone();
                run.version = m.tool_version.clone();
            }
            if language.is_none() {
                let l = language_of_tool(&m.tool_name).with_context(|| {
                    format!(
                        "the index was written by `{}`, which scryer does not know; it reads indexes of rust-analyzer, scip-python, scip-typescript and scip-go",
                        m.tool_name
                    )
                })?;
                run.language = l.name().into();
            }
        }
        Some(ScipItem::Document(d)) => pending_doc = Some(d),
        None => {}
    }
    if run.language.is_empty() {
        anyhow::bail!("the index has no metadata naming its indexer");
    }
    let lang = PreciseLanguage::named(&run.language).context("unknown language")?;
    let root = Path::new(&project.root).to_path_buf();
    let mut writer = service.db().precise_begin(project.id, run).await?;
    let mut stored_paths: std::collections::HashSet<String> = Default::default();
    let mut store = async |d: ScipDocument| -> Result<()> {
        let Some(rel) = document_path(&d.path) else {
            return Ok(());
        };
        let is_lang = scryer_engine::lang::language_for(&rel)
            .is_some_and(|l| lang.file_languages().contains(&l.name()));
        if !is_lang {
            return Ok(());
        }
        let hash = match hashes.get(&rel) {
            Some(h) => h.clone(),
            // An import: the index was built elsewhere, from content scryer never saw.
            // The file's hash now is stored only when the index's definitions still sit
            // on their names in it; otherwise the file is left out (answered by the
            // heuristic, as a file added since the run).
            None => match std::fs::read(root.join(&rel)) {
                Ok(bytes) if written_from(&String::from_utf8_lossy(&bytes), &d.occurrences) => {
                    scryer_engine::indexer::content_hash(&bytes)
                }
                _ => return Ok(()),
            },
        };
        stored_paths.insert(rel.clone());
        writer.add_document(rel, hash, d.occurrences).await
    };
    if let Some(d) = pending_doc {
        store(d).await?;
    }
    while let Some(item) = rx.recv().await {
        if let ScipItem::Document(d) = item {
            store(d).await?;
        }
    }
    reader.await.context("the index reader panicked")??;
    // A file the indexer saw but reported nothing for (code its build configuration
    // leaves out, e.g. inactive `cfg`) is covered all the same: the compiler's view of it
    // at that content is "no usages", not "unknown".
    let mut unseen: Vec<(&String, &String)> = hashes
        .iter()
        .filter(|(p, _)| !stored_paths.contains(*p))
        .collect();
    unseen.sort();
    for (path, hash) in unseen {
        writer
            .add_document(path.clone(), hash.clone(), Vec::new())
            .await?;
    }
    let stored = writer.finish().await?;
    service.bump();
    service.forget(project.id);
    Ok(stored)
}

/// Whether `text` is (very likely) the content a document's occurrences were written
/// from: at least 9 in 10 of its global definitions whose name is an identifier read that
/// name at their position (indexers place some definitions on other text: a module's at
/// its first line, a macro's items at the call). A line added or removed above them moves
/// them all. An edit that moves no definition (code appended at the end) is not seen.
fn written_from(text: &str, occurrences: &[ScipOccurrence]) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    let (mut checked, mut read) = (0usize, 0usize);
    for o in occurrences {
        // Namespaces and meta descriptors (a module, `__init__:`) sit on no name.
        if o.roles & ROLE_DEFINITION == 0
            || o.symbol == LOCAL
            || o.symbol.ends_with(':')
            || o.symbol.ends_with('/')
        {
            continue;
        }
        let Some(name) = symbol_name(&o.symbol) else {
            continue;
        };
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        checked += 1;
        let at = (o.column as usize).saturating_sub(1);
        let line = lines
            .get((o.line as usize).saturating_sub(1))
            .copied()
            .unwrap_or("");
        let by_bytes = line.get(at..).is_some_and(|t| t.starts_with(&name));
        if by_bytes || line.chars().skip(at).collect::<String>().starts_with(&name) {
            read += 1;
        }
    }
    checked == 0 || read * 10 >= checked * 9
}

/// A document's path as the index stores paths: relative, `/`-separated, inside the root.
fn document_path(raw: &str) -> Option<String> {
    let p = raw.trim_start_matches("./");
    if p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c == "..") {
        return None;
    }
    Some(p.to_string())
}

/// `scryer precise import`: stores a SCIP file built elsewhere for `project`, under the
/// same one-at-a-time rule as runs.
pub async fn import(
    service: &Arc<PreciseService>,
    project: &ProjectRow,
    index: &Path,
) -> Result<PreciseRunRow> {
    if !index.is_file() {
        anyhow::bail!(
            "{} is not a file; pass the path of a SCIP index (index.scip)",
            index.display()
        );
    }
    let _one_at_a_time = service.run_lock.lock().await;
    let run = PreciseRunRow {
        language: String::new(),
        tool: String::new(),
        version: String::new(),
        source: "import".into(),
        finished_at: None,
        duration_ms: None,
        peak_rss_kb: None,
        files: 0,
        occurrences: 0,
        complete: false,
    };
    let stored = ingest(service, project, index, run, None, HashMap::new()).await?;
    remember_project(service, project);
    if let Some(lang) = PreciseLanguage::named(&stored.language) {
        set_state(
            service,
            project.id,
            LangStatus {
                language: lang,
                state: LangState::Ready,
                indexer: Some(stored.tool.clone()),
                indexer_version: Some(stored.version.clone()),
                run: None,
            },
        );
    }
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_over_the_inputs_of_the_last_is_not_made_again() {
        let attempt = |inputs: &str, failure: Option<&str>, at_unix: i64| PreciseAttempt {
            inputs: inputs.into(),
            failure: failure.map(str::to_string),
            at_unix,
        };
        let kept = limits::FAILED_RUN_KEPT.as_secs() as i64;
        let stored = attempt("d1", None, 1_000);
        assert_eq!(
            due_after(PreciseLanguage::Rust, None, "d1", true, 2_000),
            Due::Run
        );
        assert_eq!(
            due_after(PreciseLanguage::Rust, Some(&stored), "d1", true, 2_000),
            Due::Stored
        );
        // Other inputs, or the stored run gone (deleted, or replaced by an import).
        assert_eq!(
            due_after(PreciseLanguage::Rust, Some(&stored), "d2", true, 2_000),
            Due::Run
        );
        assert_eq!(
            due_after(PreciseLanguage::Rust, Some(&stored), "d1", false, 2_000),
            Due::Run
        );
        // Inputs that could not be worked out never match.
        assert_eq!(
            due_after(
                PreciseLanguage::Rust,
                Some(&attempt("", None, 1_000)),
                "",
                true,
                2_000
            ),
            Due::Run
        );
        let failed = attempt("d1", Some("more than one project"), 1_000);
        match due_after(
            PreciseLanguage::Rust,
            Some(&failed),
            "d1",
            false,
            1_000 + kept - 1,
        ) {
            Due::Failed(why) => assert!(
                why.starts_with("more than one project (not run again")
                    && why.contains("60 min")
                    && why.contains("touch one of the root files it reads: Cargo.toml, Cargo.lock"),
                "{why}"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            due_after(
                PreciseLanguage::Rust,
                Some(&failed),
                "d1",
                false,
                1_000 + kept
            ),
            Due::Run
        );
        assert_eq!(
            due_after(PreciseLanguage::Rust, Some(&failed), "d2", false, 1_001),
            Due::Run
        );
    }

    #[test]
    fn an_index_applies_to_the_text_its_definitions_sit_on() {
        let def = |symbol: &str, line: u32, column: u32| ScipOccurrence {
            symbol: symbol.into(),
            line,
            column,
            end_line: line,
            end_column: column,
            roles: ROLE_DEFINITION,
            enclosing: None,
        };
        let occurrences = [
            def("scip-python python shop 0 `shop.pricing`/__init__:", 1, 1),
            def("scip-python python shop 0 `shop.pricing`/with_tax().", 1, 5),
            def("scip-python python shop 0 `shop.pricing`/Cart#", 4, 7),
        ];
        let text = "def with_tax(amount):\n    return amount\n\nclass Cart:\n    pass\n";
        assert!(written_from(text, &occurrences));
        // Code appended at the end moves nothing: not seen.
        assert!(written_from(&format!("{text}\nX = 1\n"), &occurrences));
        // A line added above moves every definition: another text.
        assert!(!written_from(&format!("import os\n{text}"), &occurrences));
    }

    #[test]
    fn document_paths_stay_inside_the_root() {
        assert_eq!(document_path("src/lib.rs").as_deref(), Some("src/lib.rs"));
        assert_eq!(document_path("./a.py").as_deref(), Some("a.py"));
        assert_eq!(document_path("../x.rs"), None);
        assert_eq!(document_path("/etc/passwd"), None);
        assert_eq!(
            language_of_tool("scip-python"),
            Some(PreciseLanguage::Python)
        );
    }

    /// A run's files are hashed after the indexer, as the indexer read them: a file that
    /// changed or went while it ran is stored as changed, so it reads as edited since.
    #[tokio::test]
    async fn files_are_hashed_after_the_run_and_one_edited_meanwhile_reads_as_changed() {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [
            ("kept.rs", "fn a() {}\n"),
            ("edited.rs", "fn b() {}\n"),
            ("gone.rs", "fn c() {}\n"),
        ] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let paths = ["kept.rs", "edited.rs", "gone.rs", "never.rs"]
            .map(String::from)
            .to_vec();
        let stamps = stamp_files(dir.path(), paths).await;
        assert_eq!(
            stamps.len(),
            3,
            "a file missing at the start is not stamped"
        );
        // While the indexer runs: one file edited (its size changes), one removed.
        std::fs::write(dir.path().join("edited.rs"), "fn b() { let x = 1; }\n").unwrap();
        std::fs::remove_file(dir.path().join("gone.rs")).unwrap();
        let hashes = hash_unchanged(dir.path(), stamps).await;
        assert_eq!(
            hashes["kept.rs"],
            scryer_engine::indexer::content_hash(b"fn a() {}\n")
        );
        assert_eq!(hashes["edited.rs"], CHANGED_DURING_RUN);
        assert_eq!(hashes["gone.rs"], CHANGED_DURING_RUN);
        assert!(!hashes.contains_key("never.rs"));
    }
}
