//! Project administration beyond registering and indexing: the session's active
//! project, deleting a project's index, and measured tool usage.

use scryer_db::ProjectRow;
use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, ProjectStatus, ToolUsage};

use super::{HostImpl, internal};
use crate::indexing::projects::IndexState;

impl HostImpl {
    /// `projects.index-gaps`: what a project's index runs left out, as the note an
    /// answer about it carries.
    pub(super) fn index_gaps_of(&self, selector: &str) -> Result<Option<String>, CallError> {
        let p = self
            .block(self.core.projects.db().project_by_selector(selector))
            .map_err(internal)?
            .ok_or_else(|| CallError::NotFound(self.core.unknown_project_message(selector)))?;
        Ok(skipped_note(&p.slug, &self.core.projects.skipped(p.id)))
    }

    /// The project a selector names (slug, id or root path), or an error listing the
    /// registered ones: never a silent fallback.
    fn selected(&self, selector: &str) -> Result<ProjectRow, CallError> {
        self.block(self.core.projects.db().project_by_selector(selector))
            .map_err(internal)?
            .ok_or_else(|| CallError::NotFound(self.core.unknown_project_message(selector)))
    }

    pub(super) fn admin_switch_active(
        &self,
        scope: &CallScope,
        selector: &str,
    ) -> Result<ProjectStatus, CallError> {
        let p = self.selected(selector)?;
        self.core.set_active_project(scope.session, p.id);
        self.status(scope, &p)
    }

    pub(super) fn admin_delete_project(
        &self,
        scope: &CallScope,
        selector: &str,
    ) -> Result<ProjectStatus, CallError> {
        let p = self.selected(selector)?;
        let state = self.block(self.core.projects.state(&p));
        if matches!(
            state,
            IndexState::Building { .. } | IndexState::Stale { total: 1.., .. }
        ) {
            return Err(CallError::InvalidArgument(format!(
                "project `{}` is being indexed right now; delete it when the run ends (get_indexing_status)",
                p.slug
            )));
        }
        let last = self.status(scope, &p)?;
        if let Some(w) = &self.core.watcher {
            w.unwatch(p.id);
        }
        self.block(self.core.projects.db().delete_project(p.id))
            .map_err(internal)?;
        self.core.projects.forget_index(p.id);
        self.core.forget_project(p.id);
        Ok(last)
    }

    pub(super) fn admin_usage(
        &self,
        _scope: &CallScope,
        project: Option<&str>,
        since_hours: Option<u32>,
    ) -> Result<Vec<ToolUsage>, CallError> {
        let project_id = match project {
            Some(sel) => Some(self.selected(sel)?.id),
            None => None,
        };
        let since_ms =
            since_hours.map(|h| crate::call::telemetry::now_ms() - i64::from(h) * 3_600_000);
        // The same aggregation `scryer report` prints, so the two never disagree.
        let usage = self
            .block(self.core.projects.db().tool_usage(project_id, since_ms))
            .map_err(internal)?;
        Ok(usage
            .into_iter()
            .map(|u| ToolUsage {
                tool: u.tool,
                calls: u.calls,
                errors: u.errors,
                tokens_mean: u.tokens_mean,
                tokens_p95: u.tokens_p95,
                truncated: u.truncated,
                latency_p50_ms: u.latency_p50_ms,
                latency_p95_ms: u.latency_p95_ms,
                followed_up: u.followed_up,
            })
            .collect())
    }
}

/// Most paths one skipped-facts note names.
const MAX_NOTED_PATHS: usize = 10;

/// "skipped: N links leaving the root (…); too large (over 4 MiB), not indexed: …", or
/// `None` when nothing was left out.
fn skipped_note(slug: &str, skipped: &scryer_engine::indexer::Skipped) -> Option<String> {
    let list = |paths: &[String]| {
        let mut shown = paths[..paths.len().min(MAX_NOTED_PATHS)].join(", ");
        if paths.len() > MAX_NOTED_PATHS {
            shown.push_str(&format!(" and {} more", paths.len() - MAX_NOTED_PATHS));
        }
        shown
    };
    let mut parts = Vec::new();
    let links = &skipped.links_leaving_root;
    if !links.is_empty() {
        parts.push(format!(
            "skipped: {} link{} leaving the root ({})",
            links.len(),
            if links.len() == 1 { "" } else { "s" },
            list(links)
        ));
    }
    if !skipped.too_large.is_empty() {
        parts.push(format!(
            "too large (over {} MiB), not indexed: {}",
            scryer_engine::file_limits::MAX_SOURCE_BYTES >> 20,
            list(&skipped.too_large)
        ));
    }
    (!parts.is_empty()).then(|| format!("index facts of `{slug}`: {}", parts.join("; ")))
}
