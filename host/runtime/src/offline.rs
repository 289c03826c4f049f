//! Host services for describing plugins outside a server (`scryer plugin add | verify |
//! list`): no database, no projects. A plugin's `describe` needs none of them; any call
//! that reaches one is told the host is offline.

use crate::wit;

/// Answers every host query with "unavailable"; logs go to the host's log.
pub struct OfflineHost;

/// The offline host's answer to a query (its implementation is expanded from the list
/// in `host_functions.rs`).
pub(crate) fn offline<T>() -> Result<T, wit::CallError> {
    Err(wit::CallError::Denied(
        "the host is describing plugins offline: no project, index or documents are available"
            .into(),
    ))
}
