//! Host-side bindings generated from `wit/v0.1`, and the glue from each imported WIT
//! interface to [`HostServices`]. The generated code is the only place that knows the
//! WIT's Rust shape; everything else uses the re-exports in `crate::wit`.

use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::{CallScope, HostServices};
use std::sync::Arc;

wasmtime::component::bindgen!({
    path: "../../wit/v0.1",
    world: "scryer-host",
});

use scryer::router::{
    dependencies, docs, docs_write, files, index, log, projects, search, tokens, types,
};

/// Everything one call's store holds. Built fresh for every call, so nothing a router
/// does survives into the next call.
pub struct CallState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: wasmtime::StoreLimits,
    pub(crate) host: Arc<dyn HostServices>,
    pub(crate) scope: CallScope,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl types::Host for CallState {}

impl index::Host for CallState {
    fn symbols_by_name(&mut self, name: String) -> Result<Vec<index::Symbol>, types::CallError> {
        self.host.symbols_by_name(&self.scope, &name)
    }

    fn symbols_by_qualified_name(
        &mut self,
        qualified_name: String,
    ) -> Result<Vec<index::Symbol>, types::CallError> {
        self.host
            .symbols_by_qualified_name(&self.scope, &qualified_name)
    }

    fn references_to_name(
        &mut self,
        name: String,
        with_line_text: bool,
    ) -> Result<Vec<index::ReferenceSite>, types::CallError> {
        self.host
            .references_to_name(&self.scope, &name, with_line_text)
    }

    fn file_symbols(&mut self, file_path: String) -> Result<Vec<index::Symbol>, types::CallError> {
        self.host.file_symbols(&self.scope, &file_path)
    }

    fn file_has_parse_errors(&mut self, file_path: String) -> Result<bool, types::CallError> {
        self.host.file_has_parse_errors(&self.scope, &file_path)
    }

    fn facts(&mut self) -> Result<index::IndexFacts, types::CallError> {
        self.host.index_facts(&self.scope)
    }

    fn edges_from(&mut self, qualified_name: String) -> Result<Vec<index::Edge>, types::CallError> {
        self.host.edges_from(&self.scope, &qualified_name)
    }

    fn edges_to(&mut self, name: String) -> Result<Vec<index::Edge>, types::CallError> {
        self.host.edges_to(&self.scope, &name)
    }
}

impl dependencies::Host for CallState {
    fn locked_crates(&mut self) -> Result<Vec<dependencies::LockedCrate>, types::CallError> {
        self.host.locked_crates(&self.scope)
    }

    fn crate_symbols(
        &mut self,
        crate_name: String,
        version: Option<String>,
    ) -> Result<Vec<dependencies::DependencySymbol>, types::CallError> {
        self.host
            .crate_symbols(&self.scope, &crate_name, version.as_deref())
    }

    fn symbols_by_name(
        &mut self,
        name: String,
        crate_name: Option<String>,
    ) -> Result<Vec<dependencies::DependencySymbol>, types::CallError> {
        self.host
            .dependency_symbols_by_name(&self.scope, &name, crate_name.as_deref())
    }
}

impl search::Host for CallState {
    fn query(
        &mut self,
        query: String,
        scope: search::SearchScope,
        crate_name: Option<String>,
        offset: u32,
        limit: u32,
    ) -> Result<search::SearchPage, types::CallError> {
        self.host.search(
            &self.scope,
            &query,
            scope,
            crate_name.as_deref(),
            offset,
            limit,
        )
    }
}

impl docs::Host for CallState {
    fn list_documents(&mut self, dir: String) -> Result<Vec<docs::Document>, types::CallError> {
        self.host.list_documents(&self.scope, &dir)
    }

    fn decision_rows(&mut self) -> Result<Vec<docs::DecisionRow>, types::CallError> {
        self.host.decision_rows(&self.scope)
    }
}

impl docs_write::Host for CallState {
    fn insert_decision_row(&mut self, row: docs::DecisionRow) -> Result<(), types::CallError> {
        self.host.insert_decision_row(&self.scope, row)
    }

    fn delete_decision_rows(&mut self, number: u32) -> Result<u32, types::CallError> {
        self.host.delete_decision_rows(&self.scope, number)
    }

    fn create_decision_file(
        &mut self,
        file_name: String,
        text: String,
    ) -> Result<(), types::CallError> {
        self.host
            .create_decision_file(&self.scope, &file_name, &text)
    }

    fn delete_decision_file(&mut self, file_name: String) -> Result<(), types::CallError> {
        self.host.delete_decision_file(&self.scope, &file_name)
    }
}

impl files::Host for CallState {
    fn read_lines(
        &mut self,
        file_path: String,
        start_line: u32,
        end_line: u32,
    ) -> Result<Vec<String>, types::CallError> {
        self.host
            .read_lines(&self.scope, &file_path, start_line, end_line)
    }
}

impl tokens::Host for CallState {
    fn count(&mut self, text: String) -> u32 {
        self.host.count_tokens(&text)
    }
}

impl log::Host for CallState {
    fn log(&mut self, level: log::Level, message: String) {
        self.host.log(&self.scope, level, &message)
    }
}

impl projects::Host for CallState {
    fn list_all(&mut self) -> Result<Vec<projects::ProjectStatus>, types::CallError> {
        self.host.list_projects(&self.scope)
    }

    fn index_workspace(
        &mut self,
        path: String,
        wait_ms: u32,
    ) -> Result<projects::ProjectStatus, types::CallError> {
        self.host.index_workspace(&self.scope, &path, wait_ms)
    }

    fn status(&mut self, project: String) -> Result<projects::ProjectStatus, types::CallError> {
        self.host.project_status(&self.scope, &project)
    }

    fn switch_active(
        &mut self,
        project: String,
    ) -> Result<projects::ProjectStatus, types::CallError> {
        self.host.switch_active_project(&self.scope, &project)
    }

    fn delete(&mut self, project: String) -> Result<projects::ProjectStatus, types::CallError> {
        self.host.delete_project(&self.scope, &project)
    }

    fn usage(
        &mut self,
        project: Option<String>,
        since_hours: Option<u32>,
    ) -> Result<Vec<projects::ToolUsage>, types::CallError> {
        self.host
            .usage(&self.scope, project.as_deref(), since_hours)
    }
}
