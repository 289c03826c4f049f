//! Crate names and versions as Cargo compares them.

use scryer_plugin_sdk::names::edit_distance;
pub use scryer_plugin_sdk::names::same_crate;

fn normalize(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

/// Up to `max` of `names` close to `wanted`, closest first: one a prefix of the other,
/// or at most a third of the name's length (and at least two) edits away.
pub fn closest<'a>(
    wanted: &str,
    names: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let w = normalize(wanted);
    let allowed = (w.chars().count() / 3).max(2);
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter_map(|name| {
            let n = normalize(name);
            let d = edit_distance(&w, &n);
            let prefix = n.starts_with(&w) || w.starts_with(&n);
            (prefix || d <= allowed).then_some((d, name))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(max).map(|(_, n)| n).collect()
}

/// Orders versions by their numeric parts (`1.0.10` after `1.0.9`); a pre-release
/// (`1.0.0-beta`) comes before its release.
pub fn version_key(version: &str) -> (Vec<u64>, bool, String) {
    let (core, pre) = match version.split_once(['-', '+']) {
        Some((core, _)) => (core, version.contains('-')),
        None => (version, false),
    };
    let numbers = core
        .split('.')
        .map(|p| p.parse::<u64>().unwrap_or(0))
        .collect();
    (numbers, !pre, version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_compare_like_cargo() {
        assert!(same_crate("serde-json", "Serde_JSON"));
        assert!(!same_crate("serde", "serde_json"));
    }

    #[test]
    fn closest_prefers_few_edits_and_prefixes() {
        let locked = ["hex", "hashbrown", "serde", "serde_json", "itoa"];
        assert_eq!(closest("hexx", locked, 5), ["hex"]);
        assert_eq!(closest("serd", locked, 5), ["serde", "serde_json"]);
        assert_eq!(closest("Serde-Jsn", locked, 5), ["serde_json", "serde"]);
        assert!(closest("tokio", locked, 5).is_empty());
        assert_eq!(closest("itao", locked, 1), ["itoa"]);
    }

    #[test]
    fn versions_order_numerically_with_pre_releases_first() {
        let mut v = vec!["1.0.10", "1.0.9", "1.0.10-beta.1", "0.4.3"];
        v.sort_by_key(|s| version_key(s));
        assert_eq!(v, ["0.4.3", "1.0.9", "1.0.10-beta.1", "1.0.10"]);
    }
}
