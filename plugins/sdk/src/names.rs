//! Crate names as Cargo compares them, and the edit distance the routers' "did you
//! mean" suggestions rank names by: one definition for every router.

/// Cargo treats `-` and `_` in crate names alike, and agents vary the case.
pub fn same_crate(a: &str, b: &str) -> bool {
    a.replace('-', "_")
        .eq_ignore_ascii_case(&b.replace('-', "_"))
}

/// The Levenshtein distance between `a` and `b`, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_names_compare_as_cargo_does_and_distances_count_edits() {
        assert!(same_crate("serde-json", "Serde_JSON"));
        assert!(!same_crate("serde", "serde_json"));
        assert_eq!(edit_distance("tokio", "tokio"), 0);
        assert_eq!(edit_distance("tokio", "tokoi"), 2);
        assert_eq!(edit_distance("serde", "serde_json"), 5);
        assert_eq!(edit_distance("", "ab"), 2);
    }
}
