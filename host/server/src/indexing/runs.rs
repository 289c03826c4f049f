//! The index runs going on, by project: the project manager starts and observes them,
//! the dependency worker gives way to them. Kept apart so both can hold it without
//! knowing each other.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use scryer_engine::indexer::Progress;
use tokio::sync::{Mutex, MutexGuard, watch};

/// One project's run: its progress, and a receiver that turns `true` when it ends.
pub(crate) struct Run {
    pub(crate) progress: Arc<Progress>,
    pub(crate) finished: watch::Receiver<bool>,
}

/// The latest run of each project (a finished one stays until the next starts).
#[derive(Default)]
pub(crate) struct Runs(Mutex<HashMap<i64, Run>>);

impl Runs {
    pub(crate) async fn lock(&self) -> MutexGuard<'_, HashMap<i64, Run>> {
        self.0.lock().await
    }

    /// Waits up to `limit` for the project's run to end; whether it did (or none runs).
    pub(crate) async fn wait_idle(&self, project_id: i64, limit: Duration) -> bool {
        let rx = {
            let runs = self.lock().await;
            match runs.get(&project_id) {
                Some(run) => run.finished.clone(),
                None => return true,
            }
        };
        wait_finished(rx, limit).await
    }
}

/// Waits up to `limit` for a run's end; whether it ended.
pub async fn wait_finished(mut rx: watch::Receiver<bool>, limit: Duration) -> bool {
    if *rx.borrow() {
        return true;
    }
    tokio::time::timeout(limit, rx.wait_for(|done| *done))
        .await
        .is_ok()
}
