//! The `docs` and `docs-write` interfaces: the project's Markdown decisions, learnings
//! and plans, and decision rows in the database.

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, DecisionRow, Document};

use super::HostImpl;

impl HostImpl {
    pub(super) fn docs_list(
        &self,
        _scope: &CallScope,
        _dir: &str,
    ) -> Result<Vec<Document>, CallError> {
        Err(CallError::Internal("docs is not available yet".into()))
    }

    pub(super) fn docs_decision_rows(
        &self,
        _scope: &CallScope,
    ) -> Result<Vec<DecisionRow>, CallError> {
        Err(CallError::Internal("docs is not available yet".into()))
    }

    pub(super) fn docs_insert_decision_row(
        &self,
        _scope: &CallScope,
        _row: DecisionRow,
    ) -> Result<(), CallError> {
        Err(CallError::Internal("docs is not available yet".into()))
    }

    pub(super) fn docs_delete_decision_rows(
        &self,
        _scope: &CallScope,
        _number: u32,
    ) -> Result<u32, CallError> {
        Err(CallError::Internal("docs is not available yet".into()))
    }

    pub(super) fn docs_create_decision_file(
        &self,
        _scope: &CallScope,
        _file_name: &str,
        _text: &str,
    ) -> Result<(), CallError> {
        Err(CallError::Internal("docs is not available yet".into()))
    }

    pub(super) fn docs_delete_decision_file(
        &self,
        _scope: &CallScope,
        _file_name: &str,
    ) -> Result<(), CallError> {
        Err(CallError::Internal("docs is not available yet".into()))
    }
}
