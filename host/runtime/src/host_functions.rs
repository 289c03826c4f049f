//! The runtime's side of the one list of host functions: the list lives in the SDK
//! (`scryer_plugin_sdk::scryer_host_functions!`, beside the router's side of each entry,
//! ADR 0037), and `host_functions!` here expands the host's side of it into
//!
//! - the [`HostServices`] trait (the host's seam, implemented for real by the server),
//! - the forwarders from each WIT interface's generated `Host` trait to it (`CallState`,
//!   every call timed by `in_host`),
//! - the offline host's implementation ([`OfflineHost`]: describing plugins, no database).
//!
//! The runtime's `native` module expands the same list once more, into the SDK's `Host`
//! over [`HostServices`].
//!
//! Adding a host function: its WIT, one entry in the list, and the server's
//! implementation (`docs/dev/add-a-host-function.md`). The compiler then names every
//! host that lacks it.
//!
//! The host's side of an entry reads `fn <wit name>(<scope>, <arg>: <WIT type> => <host
//! type>, ..) -> <result> => <HostServices method> [default { .. }] [offline { .. }]`.
//! The first name in the parentheses is what the call's [`CallScope`] is called in the
//! bodies. A WIT argument reaches the host method through [`Pass`] (`String` as `&str`,
//! `Vec<String>` as `&[String]`, ...). Without `offline`, the offline host answers with
//! its default when there is one, else that it is offline.
//!
//! Hand-written with `macro_rules!` rather than generated from the WIT by a build script:
//! the host method's name, its argument types and the defaults are the host's choices,
//! not the WIT's, and a list of forty entries reads better than a generator.

use crate::bindings::CallState;
use crate::bindings::scryer::router::{
    catalog, dependencies, docs, docs_write, files, git, index, log, projects, search, tokens,
};
use crate::offline::{OfflineHost, offline};
use crate::{CallScope, wit};

/// How a WIT argument (owned, as the generated bindings hand it) reaches a host method.
pub trait Pass<'a, T> {
    fn pass(&'a self) -> T;
}

impl<'a> Pass<'a, &'a str> for String {
    fn pass(&'a self) -> &'a str {
        self
    }
}

impl<'a> Pass<'a, &'a [String]> for Vec<String> {
    fn pass(&'a self) -> &'a [String] {
        self
    }
}

impl<'a> Pass<'a, &'a [wit::DefinitionRef]> for Vec<wit::DefinitionRef> {
    fn pass(&'a self) -> &'a [wit::DefinitionRef] {
        self
    }
}

impl<'a> Pass<'a, Option<&'a str>> for Option<String> {
    fn pass(&'a self) -> Option<&'a str> {
        self.as_deref()
    }
}

impl<'a> Pass<'a, &'a wit::DecisionRow> for wit::DecisionRow {
    fn pass(&'a self) -> &'a wit::DecisionRow {
        self
    }
}

/// Plain values pass as they are.
macro_rules! pass_copies {
    ($($t:ty),*) => {
        $(impl<'a> Pass<'a, $t> for $t {
            fn pass(&'a self) -> $t {
                *self
            }
        })*
    };
}

pass_copies!(u32, bool, Option<u32>, wit::SearchScope, wit::Level);

macro_rules! host_functions {
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
        /// What the host offers routers through the imported WIT interfaces. Implemented
        /// by the server over the database and the index engine. Called on a blocking
        /// thread from inside a router call, so implementations may block. Expanded from
        /// the list in `host_functions.rs`.
        pub trait HostServices: Send + Sync + 'static {
            $($(
                host_functions!(@method [$(#[$meta])*]
                    [fn $svc(&self, $scope: &CallScope $(, $arg: $hty)*) -> $ret]
                    $($default)?);
            )*)*
        }

        $(
            impl $iface::Host for CallState {
                $(
                    #[allow(clippy::unused_unit)]
                    fn $wit(&mut self $(, $arg: $wty)*) -> $ret {
                        self.in_host(|host, $scope| host.$svc($scope $(, Pass::pass(&$arg))*))
                    }
                )*
            }
        )*

        /// Answers every host query with "offline"; logs go to the host's log.
        impl HostServices for OfflineHost {
            $($(
                host_functions!(@offline
                    [fn $svc(&self, $scope: &CallScope $(, $arg: $hty)*) -> $ret]
                    [$($offline)?] [$($default)?]);
            )*)*
        }
    };

    // A trait method, with its default body when it has one.
    (@method [$($meta:tt)*] [$($sig:tt)*] $default:block) => {
        $($meta)*
        #[allow(unused_variables, clippy::unused_unit)]
        $($sig)* $default
    };
    (@method [$($meta:tt)*] [$($sig:tt)*]) => {
        $($meta)*
        #[allow(clippy::unused_unit)]
        $($sig)*;
    };

    // The offline host: its own answer, else the trait's default, else "offline".
    (@offline [$($sig:tt)*] [$offline:block] [$($default:tt)*]) => {
        #[allow(unused_variables, clippy::unused_unit)]
        $($sig)* $offline
    };
    (@offline [$($sig:tt)*] [] [$default:block]) => {};
    (@offline [$($sig:tt)*] [] []) => {
        #[allow(unused_variables)]
        $($sig)* {
            offline()
        }
    };
}

scryer_plugin_sdk::scryer_host_functions!(host_functions);

fn unavailable(interface: &str) -> wit::CallError {
    wit::CallError::Internal(format!(
        "this host does not serve the `{interface}` interface"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> CallScope {
        CallScope {
            plugin: "p".into(),
            project: None,
            session: 0,
            window: Default::default(),
            memo: Default::default(),
        }
    }

    #[test]
    fn the_offline_host_answers_from_the_list() {
        let (host, s) = (OfflineHost, scope());
        // No entry of its own and no default: offline.
        let e = host.symbols_by_name(&s, "new").unwrap_err();
        assert!(
            matches!(&e, wit::CallError::Denied(m) if m.contains("offline")),
            "{e:?}"
        );
        assert!(host.read_lines(&s, "a.rs", 1, 2).is_err());
        // Its own answer: a token estimate, not an error.
        assert_eq!(host.count_tokens(&s, "12345678"), 2);
        // The trait's default where the list has one: precise data is absent, not offline.
        let u = host.precise_usages(&s, "a.rs", 1, "new").unwrap();
        assert_eq!((u.precision.as_str(), u.sites.len()), ("heuristic", 0));
        assert_eq!(host.index_gaps(&s, "p").unwrap(), None);
        let e = host.git_state(&s, None, 1, 1).unwrap_err();
        assert!(
            matches!(&e, wit::CallError::Internal(m) if m.contains("`git`")),
            "{e:?}"
        );
    }

    #[test]
    fn arguments_pass_as_the_host_methods_take_them() {
        let (name, kinds, krate) = ("new".to_string(), vec!["use".to_string()], Some("c".into()));
        let as_str: &str = Pass::pass(&name);
        let as_slice: &[String] = Pass::pass(&kinds);
        let as_option: Option<&str> = Pass::pass(&krate);
        assert_eq!(
            (as_str, as_slice, as_option),
            ("new", &kinds[..], Some("c"))
        );
        let copied: Option<u32> = Pass::pass(&Some(7u32));
        assert_eq!(copied, Some(7));
    }
}
