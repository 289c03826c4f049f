//! Host services for describing plugins outside a server (`scryer plugin add | verify |
//! list`): no database, no projects. A plugin's `describe` needs none of them; any call
//! that reaches one is told the host is offline.

use crate::{CallScope, HostServices, wit};

/// Answers every host query with "unavailable"; logs go to the host's log.
pub struct OfflineHost;

fn offline<T>() -> Result<T, wit::CallError> {
    Err(wit::CallError::Denied(
        "the host is describing plugins offline: no project, index or documents are available"
            .into(),
    ))
}

impl HostServices for OfflineHost {
    fn symbols_by_name(&self, _: &CallScope, _: &str) -> Result<Vec<wit::Symbol>, wit::CallError> {
        offline()
    }
    fn symbols_by_qualified_name(
        &self,
        _: &CallScope,
        _: &str,
    ) -> Result<Vec<wit::Symbol>, wit::CallError> {
        offline()
    }
    fn references_to_name(
        &self,
        _: &CallScope,
        _: &str,
        _: bool,
    ) -> Result<Vec<wit::ReferenceSite>, wit::CallError> {
        offline()
    }
    fn references_of_kinds(
        &self,
        _: &CallScope,
        _: &str,
        _: &[String],
    ) -> Result<Vec<wit::ReferenceSite>, wit::CallError> {
        offline()
    }
    fn files_naming(&self, _: &CallScope, _: &[String]) -> Result<Vec<String>, wit::CallError> {
        offline()
    }
    fn file_symbols(&self, _: &CallScope, _: &str) -> Result<Vec<wit::Symbol>, wit::CallError> {
        offline()
    }
    fn file_has_parse_errors(&self, _: &CallScope, _: &str) -> Result<bool, wit::CallError> {
        offline()
    }
    fn index_facts(&self, _: &CallScope) -> Result<wit::IndexFacts, wit::CallError> {
        offline()
    }
    fn read_lines(
        &self,
        _: &CallScope,
        _: &str,
        _: u32,
        _: u32,
    ) -> Result<Vec<String>, wit::CallError> {
        offline()
    }
    /// An estimate (a token per four bytes): describing a plugin never fits a budget.
    fn count_tokens(&self, text: &str) -> u32 {
        u32::try_from(text.len().div_ceil(4)).unwrap_or(u32::MAX)
    }
    fn log(&self, scope: &CallScope, level: wit::Level, message: &str) {
        let plugin = &*scope.plugin;
        match level {
            wit::Level::Debug => tracing::debug!(%plugin, "{message}"),
            wit::Level::Info => tracing::info!(%plugin, "{message}"),
            wit::Level::Warn => tracing::warn!(%plugin, "{message}"),
            wit::Level::Error => tracing::error!(%plugin, "{message}"),
        }
    }
    fn list_projects(&self, _: &CallScope) -> Result<Vec<wit::ProjectStatus>, wit::CallError> {
        offline()
    }
    fn index_workspace(
        &self,
        _: &CallScope,
        _: &str,
        _: u32,
    ) -> Result<wit::ProjectStatus, wit::CallError> {
        offline()
    }
    fn project_status(&self, _: &CallScope, _: &str) -> Result<wit::ProjectStatus, wit::CallError> {
        offline()
    }
    fn edges_from(&self, _: &CallScope, _: &str) -> Result<Vec<wit::Edge>, wit::CallError> {
        offline()
    }
    fn edges_to(&self, _: &CallScope, _: &str) -> Result<Vec<wit::Edge>, wit::CallError> {
        offline()
    }
    fn locked_crates(&self, _: &CallScope) -> Result<Vec<wit::LockedCrate>, wit::CallError> {
        offline()
    }
    fn crate_symbols(
        &self,
        _: &CallScope,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<wit::DependencySymbol>, wit::CallError> {
        offline()
    }
    fn dependency_symbols_by_name(
        &self,
        _: &CallScope,
        _: &str,
        _: Option<&str>,
    ) -> Result<Vec<wit::DependencySymbol>, wit::CallError> {
        offline()
    }
    fn search(
        &self,
        _: &CallScope,
        _: &str,
        _: wit::SearchScope,
        _: Option<&str>,
        _: u32,
        _: u32,
    ) -> Result<wit::SearchPage, wit::CallError> {
        offline()
    }
    fn list_documents(&self, _: &CallScope, _: &str) -> Result<Vec<wit::Document>, wit::CallError> {
        offline()
    }
    fn decision_rows(&self, _: &CallScope) -> Result<Vec<wit::DecisionRow>, wit::CallError> {
        offline()
    }
    fn insert_decision_row(
        &self,
        _: &CallScope,
        _: wit::DecisionRow,
    ) -> Result<(), wit::CallError> {
        offline()
    }
    fn delete_decision_rows(&self, _: &CallScope, _: u32) -> Result<u32, wit::CallError> {
        offline()
    }
    fn create_decision_file(&self, _: &CallScope, _: &str, _: &str) -> Result<(), wit::CallError> {
        offline()
    }
    fn delete_decision_file(&self, _: &CallScope, _: &str) -> Result<(), wit::CallError> {
        offline()
    }
    fn switch_active_project(
        &self,
        _: &CallScope,
        _: &str,
    ) -> Result<wit::ProjectStatus, wit::CallError> {
        offline()
    }
    fn delete_project(&self, _: &CallScope, _: &str) -> Result<wit::ProjectStatus, wit::CallError> {
        offline()
    }
    fn usage(
        &self,
        _: &CallScope,
        _: Option<&str>,
        _: Option<u32>,
    ) -> Result<Vec<wit::ToolUsage>, wit::CallError> {
        offline()
    }
}
