//! Words for ranking: lower-case, split at punctuation, `snake_case` and `camelCase`,
//! without stop words, with plurals folded so `references` finds `reference`.

/// Words too common in decision records to tell one from another.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "before", "being", "between", "both", "but", "by", "can", "could", "did",
    "do", "does", "each", "every", "for", "from", "had", "has", "have", "he", "her", "here", "him",
    "his", "how", "if", "in", "into", "is", "it", "its", "just", "may", "more", "most", "must",
    "no", "nor", "not", "of", "off", "on", "once", "only", "onto", "or", "other", "our", "out",
    "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
    "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "why",
    "will", "with", "would", "you", "your",
];

/// The ranking terms of `text`, in order, repeats kept (term frequency counts them).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        for part in split_case(word) {
            let lower = part.to_lowercase();
            if is_term(&lower) {
                out.push(stem(&lower));
            }
        }
    }
    out
}

/// Each distinct term of `text` with the word it came from (lower-case), first
/// occurrence first: for saying which query words matched.
pub fn distinct_terms(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        for part in split_case(word) {
            let lower = part.to_lowercase();
            if is_term(&lower) {
                let term = stem(&lower);
                if !out.iter().any(|(t, _)| *t == term) {
                    out.push((term, lower));
                }
            }
        }
    }
    out
}

fn is_term(lower: &str) -> bool {
    let short = lower.chars().count() < 2 && !lower.chars().all(|c| c.is_ascii_digit());
    !lower.is_empty() && !short && !STOP_WORDS.contains(&lower)
}

/// Splits `camelCase` and `HTTPServer` into their words; digits stay with the letters
/// around them (`blake3`, `wasm32`, `BM25F`).
fn split_case(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        // Not after a digit: `BM25F` must read the same as the `bm25f` a query types.
        let boundary =
            c.is_uppercase() && (prev.is_lowercase() || (prev.is_uppercase() && next_lower));
        if boundary {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    if start < word.len() {
        parts.push(&word[start..]);
    }
    parts
}

/// Folds the common English plural endings; enough for decision records, and the same
/// folding applies to queries and documents alike.
fn stem(w: &str) -> String {
    let n = w.len();
    if !w.is_ascii() || n <= 3 {
        return w.to_string();
    }
    if n > 4 && w.ends_with("ies") {
        return format!("{}y", &w[..n - 3]);
    }
    if ["xes", "ches", "shes", "sses"]
        .iter()
        .any(|s| w.ends_with(s))
    {
        return w[..n - 2].to_string();
    }
    if w.ends_with('s') && !["ss", "us", "is"].iter().any(|s| w.ends_with(s)) {
        return w[..n - 1].to_string();
    }
    w.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers_and_drops_stop_words() {
        assert_eq!(
            terms("find_references of the HTTPServer in blake3"),
            ["find", "reference", "http", "server", "blake3"]
        );
        assert_eq!(terms("DecisionRow"), ["decision", "row"]);
        assert_eq!(terms("Rank with BM25F"), terms("rank with bm25f"));
        assert_eq!(
            terms("indexes policies classes"),
            ["index", "policy", "class"]
        );
        assert_eq!(terms("a I x 7"), ["7"]);
    }

    #[test]
    fn distinct_terms_keep_the_word_they_came_from() {
        assert_eq!(
            distinct_terms("References reference"),
            [("reference".to_string(), "references".to_string())]
        );
    }
}
