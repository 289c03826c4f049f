//! The SDK's [`Host`] over [`HostServices`], without a component: router logic called
//! natively on the host services a component's imports reach (the `router_overhead`
//! benchmark compares the two paths). Expanded from the list of host functions
//! (`scryer_plugin_sdk::scryer_host_functions!`) like the component's `WitHost`, with
//! wasmtime's WIT types converted by the same conversions wit-bindgen's get.

use std::sync::Arc;

use scryer_plugin_sdk::ToolResult;
use scryer_plugin_sdk::host::*;
use scryer_plugin_sdk::host_functions::Convert;

use crate::bindings::scryer::router::{
    catalog, dependencies, docs, git, index, log, projects, search, types,
};
use crate::{CallScope, HostServices};

/// [`Host`] over a host's services, for one call's scope.
pub struct NativeHost {
    pub host: Arc<dyn HostServices>,
    pub scope: CallScope,
}

scryer_plugin_sdk::scryer_host_conversions!();

/// Writes [`NativeHost`] from the list: each `Host` method calls its [`HostServices`]
/// method, with the entry's call arguments when it names them, and converts the answer.
macro_rules! native_host {
    ($(
        interface $iface:ident ($interface:literal) {
            $(
                $(#[$meta:meta])*
                fn $wit:ident ($scope:ident $(, $arg:ident : $wty:ty => $hty:ty)* $(,)?) -> $ret:ty
                    => $svc:ident
                    $(default $default:block)?
                    $(offline $offline:block)?
                    $(#[$guest_meta:meta])*
                    guest fn $method:ident (&$this:ident $(, $guest_arg:ident : $guest_ty:ty)* $(,)?)
                        -> $guest_ret:ty
                        $(=> ($($call:expr),* $(,)?))?
                        $($guest_default:block)?;
            )*
        }
    )*) => {
        impl Host for NativeHost {
            $($(
                native_host!(@forward $this $svc
                    [fn $method(&$this $(, $guest_arg: $guest_ty)*) -> $guest_ret]
                    [$($guest_arg),*] [$($($call),*)?]);
            )*)*
        }
    };

    // The call's arguments are the method's, or the entry's.
    (@forward $this:ident $svc:ident [$($sig:tt)*] [$($arg:ident),*] []) => {
        #[allow(clippy::unused_unit)]
        $($sig)* {
            $this.host.$svc(&$this.scope $(, $arg)*).convert()
        }
    };
    (@forward $this:ident $svc:ident [$($sig:tt)*] [$($arg:ident),*] [$($call:expr),+]) => {
        #[allow(clippy::unused_unit)]
        $($sig)* {
            $this.host.$svc(&$this.scope $(, $call)*).convert()
        }
    };
}

scryer_plugin_sdk::scryer_host_functions!(native_host);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OfflineHost;

    fn offline() -> NativeHost {
        NativeHost {
            host: Arc::new(OfflineHost),
            scope: CallScope {
                plugin: "p".into(),
                project: None,
                session: 0,
                window: Default::default(),
                memo: Default::default(),
            },
        }
    }

    #[test]
    fn the_native_host_asks_the_host_services_and_converts_their_answers() {
        let host = offline();
        // The host's error, with its kind.
        let e = host.symbols_by_name("new").unwrap_err();
        assert_eq!(e.kind, scryer_plugin_sdk::ErrorKind::Denied);
        assert!(e.message.contains("offline"), "{}", e.message);
        // A plain answer, and the host's default for a definition: no precise data.
        assert_eq!(host.count_tokens("12345678"), 2);
        let def = Sym {
            name: "new".into(),
            file_path: "a.rs".into(),
            start_line: 1,
            ..Sym::default()
        };
        let u = host.precise_usages(&def).unwrap();
        assert_eq!((u.precision.as_str(), u.sites.len()), ("heuristic", 0));
        assert_eq!(
            host.precise_link(&def).unwrap(),
            ("heuristic".to_string(), None)
        );
        assert!(host.precise_unread(&def).unwrap().is_empty());
        // Arguments the WIT takes in another shape reach the host.
        assert!(host.references_of_kinds("new", &["use"]).is_err());
        assert!(
            host.search("new", SearchScope::Dependencies, None, 0, 10)
                .is_err()
        );
        assert!(host.insert_decision_row(&DecisionRow::default()).is_err());
        host.log("logged at info");
        let e = host.git_state(None, 1, 1).unwrap_err();
        assert!(e.message.contains("`git`"), "{}", e.message);
    }
}
