//! `index.edges-from` / `index.edges-to`: the stored graph edges of the call's project.

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, Edge};

use super::HostImpl;

impl HostImpl {
    pub(super) fn graph_edges_from(
        &self,
        _scope: &CallScope,
        _qualified_name: &str,
    ) -> Result<Vec<Edge>, CallError> {
        Err(CallError::Internal("edges is not available yet".into()))
    }

    pub(super) fn graph_edges_to(
        &self,
        _scope: &CallScope,
        _name: &str,
    ) -> Result<Vec<Edge>, CallError> {
        Err(CallError::Internal("edges is not available yet".into()))
    }
}
