//! Builders for routers' native tests over an in-memory [`Host`](crate::host::Host):
//! the index rows a test host hands out, written as briefly as a test reads them.

use crate::host::{Edge, Site, Sym};

/// A definition named by the last segment of `qualified`, on lines 1–2 of `file`.
pub fn def(qualified: &str, kind: &str, owner: Option<&str>, file: &str) -> Sym {
    Sym {
        name: qualified.rsplit("::").next().unwrap_or(qualified).into(),
        kind: kind.into(),
        qualified_name: qualified.into(),
        owner: owner.map(Into::into),
        file_path: file.into(),
        start_line: 1,
        end_line: 2,
        ..Sym::default()
    }
}

/// An edge `from` → `to` written at `file:line` (column 5), `to` as `qualifier::name`
/// or `name`, with the usage kind `site` at the call site.
pub fn edge(kind: &str, from: &str, to: &str, site: &str, file: &str, line: u32) -> Edge {
    let (qualifier, name) = match to.rsplit_once("::") {
        Some((q, n)) => (Some(q.to_string()), n.to_string()),
        None => (None, to.to_string()),
    };
    Edge {
        kind: kind.into(),
        from_symbol: from.into(),
        to_name: name,
        to_qualifier: qualifier,
        site_kind: site.into(),
        file_path: file.into(),
        line,
        column: 5,
    }
}

/// A usage of `name` (paired with it, as test hosts store them) at `file:line`,
/// column 1, without line text.
pub fn site(
    name: &str,
    kind: &str,
    qualifier: Option<&str>,
    enclosing: &str,
    file: &str,
    line: u32,
) -> (String, Site) {
    (
        name.into(),
        Site {
            file_path: file.into(),
            line,
            column: 1,
            kind: kind.into(),
            qualifier: qualifier.map(Into::into),
            enclosing_symbol: enclosing.into(),
            line_text: None,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_path_splits_into_qualifier_and_name() {
        let e = edge("calls", "k::f", "Shape::area", "call", "src/a.rs", 3);
        assert_eq!(
            (e.to_qualifier.as_deref(), e.to_name.as_str()),
            (Some("Shape"), "area")
        );
        let e = edge("calls", "k::f", "area", "method_call", "src/a.rs", 3);
        assert_eq!((e.to_qualifier, e.to_name.as_str()), (None, "area"));
    }
}
