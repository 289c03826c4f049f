//! The `dependencies` interface: crates the call's project locks, indexed once into the
//! shared dependency index.

use scryer_runtime::CallScope;
use scryer_runtime::wit::{CallError, DependencySymbol, LockedCrate};

use super::HostImpl;

impl HostImpl {
    pub(super) fn deps_locked_crates(
        &self,
        _scope: &CallScope,
    ) -> Result<Vec<LockedCrate>, CallError> {
        Err(CallError::Internal(
            "dependencies is not available yet".into(),
        ))
    }

    pub(super) fn deps_crate_symbols(
        &self,
        _scope: &CallScope,
        _crate_name: &str,
        _version: Option<&str>,
    ) -> Result<Vec<DependencySymbol>, CallError> {
        Err(CallError::Internal(
            "dependencies is not available yet".into(),
        ))
    }

    pub(super) fn deps_symbols_by_name(
        &self,
        _scope: &CallScope,
        _name: &str,
        _crate_name: Option<&str>,
    ) -> Result<Vec<DependencySymbol>, CallError> {
        Err(CallError::Internal(
            "dependencies is not available yet".into(),
        ))
    }
}
