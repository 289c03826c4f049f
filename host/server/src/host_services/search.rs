//! The `search` interface: BM25 over the call's project (or its locked crates).

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, SearchPage, SearchScope};

use super::HostImpl;

impl HostImpl {
    pub(super) fn search_symbols(
        &self,
        _scope: &CallScope,
        _query: &str,
        _level: SearchScope,
        _crate_name: Option<&str>,
        _offset: u32,
        _limit: u32,
    ) -> Result<SearchPage, CallError> {
        Err(CallError::Internal("search is not available yet".into()))
    }
}
