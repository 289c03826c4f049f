//! Project administration beyond registering and indexing: the session's active
//! project, deleting a project's index, and measured tool usage.

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, ProjectStatus, ToolUsage};

use super::HostImpl;

impl HostImpl {
    pub(super) fn admin_switch_active(
        &self,
        _scope: &CallScope,
        _project: &str,
    ) -> Result<ProjectStatus, CallError> {
        Err(CallError::Internal("switch is not available yet".into()))
    }

    pub(super) fn admin_delete_project(
        &self,
        _scope: &CallScope,
        _project: &str,
    ) -> Result<ProjectStatus, CallError> {
        Err(CallError::Internal("delete is not available yet".into()))
    }

    pub(super) fn admin_usage(
        &self,
        _scope: &CallScope,
        _project: Option<&str>,
        _since_hours: Option<u32>,
    ) -> Result<Vec<ToolUsage>, CallError> {
        Err(CallError::Internal("usage is not available yet".into()))
    }
}
