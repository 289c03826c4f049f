//! `index.edges-from` / `index.edges-to`: the stored graph edges of the call's project.

use scryer_db::EdgeRow;
use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, Edge};

use super::{HostImpl, internal};

fn edge(e: EdgeRow) -> Edge {
    Edge {
        kind: e.kind,
        from_symbol: e.from_symbol,
        to_name: e.to_name,
        to_qualifier: e.to_qualifier,
        site_kind: e.site_kind,
        file_path: e.file_path,
        line: e.line,
        column: e.column,
    }
}

impl HostImpl {
    pub(super) fn graph_edges_from(
        &self,
        scope: &CallScope,
        qualified_name: &str,
    ) -> Result<Vec<Edge>, CallError> {
        let p = self.project(scope)?;
        let rows = self
            .block(self.core.projects.db().edges_from(
                p.id,
                qualified_name,
                scryer_engine::lang::call_edge_kind,
            ))
            .map_err(internal)?;
        Ok(rows.into_iter().map(edge).collect())
    }

    pub(super) fn graph_edges_to(
        &self,
        scope: &CallScope,
        name: &str,
    ) -> Result<Vec<Edge>, CallError> {
        let p = self.project(scope)?;
        // A common name's edges are handed a window at a time (ADR 0024), sized by its
        // definitions (ADR 0029), and only the window is read (ADR 0042).
        self.know_definitions(scope, p.id, name)?;
        let (read, window) = self
            .block(self.core.projects.edge_window(p.id, name, |total| {
                scope
                    .window
                    .take(name, scryer_runtime::window::EDGES, total)
            }))
            .map_err(internal)?;
        Ok(read[window].iter().cloned().map(edge).collect())
    }
}
