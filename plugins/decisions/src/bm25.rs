//! BM25F over a decision's fields: each field's term frequency is length-normalised
//! against that field's average, weighted, and summed before saturation (Robertson &
//! Zaragoza's simple BM25F), so a word in the title counts three times a word in the body
//! without a long body drowning a short title.

use std::collections::HashMap;

/// The fields ranked, in the order of [`WEIGHTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Title,
    Decision,
    Context,
    Consequences,
    Body,
    AffectedPaths,
}

pub const FIELDS: [Field; 6] = [
    Field::Title,
    Field::Decision,
    Field::Context,
    Field::Consequences,
    Field::Body,
    Field::AffectedPaths,
];

/// Title ×3, decision ×2, everything else ×1.
pub const WEIGHTS: [f64; 6] = [3.0, 2.0, 1.0, 1.0, 1.0, 1.0];

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::Title => "title",
            Field::Decision => "decision",
            Field::Context => "context",
            Field::Consequences => "consequences",
            Field::Body => "body",
            Field::AffectedPaths => "affected_paths",
        }
    }
}

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Term statistics of a set of documents, each given as its six fields' terms.
#[derive(Clone, Debug, Default)]
pub struct Index {
    tf: Vec<[HashMap<String, u32>; 6]>,
    len: Vec<[u32; 6]>,
    avg_len: [f64; 6],
    df: HashMap<String, u32>,
}

/// One document's score and, per field, the query terms it matched.
#[derive(Clone, Debug, Default)]
pub struct Scored {
    pub score: f64,
    pub matched: Vec<(Field, Vec<String>)>,
}

impl Index {
    pub fn new(docs: Vec<[Vec<String>; 6]>) -> Index {
        let mut idx = Index::default();
        let mut total = [0f64; 6];
        for fields in docs {
            let mut tf: [HashMap<String, u32>; 6] = Default::default();
            let mut len = [0u32; 6];
            let mut seen: Vec<&String> = Vec::new();
            for (i, terms) in fields.iter().enumerate() {
                len[i] = terms.len() as u32;
                total[i] += terms.len() as f64;
                for t in terms {
                    *tf[i].entry(t.clone()).or_default() += 1;
                }
            }
            for map in &tf {
                for t in map.keys() {
                    if !seen.contains(&t) {
                        seen.push(t);
                    }
                }
            }
            for t in seen {
                *idx.df.entry(t.clone()).or_default() += 1;
            }
            idx.tf.push(tf);
            idx.len.push(len);
        }
        let n = idx.tf.len().max(1) as f64;
        for (i, t) in total.iter().enumerate() {
            idx.avg_len[i] = t / n;
        }
        idx
    }

    pub fn len(&self) -> usize {
        self.tf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tf.is_empty()
    }

    fn idf(&self, term: &str) -> f64 {
        let n = self.tf.len() as f64;
        let df = f64::from(*self.df.get(term).unwrap_or(&0));
        (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
    }

    /// The BM25F score of document `doc` for the distinct `terms`.
    pub fn score(&self, doc: usize, terms: &[String]) -> Scored {
        let mut out = Scored::default();
        for term in terms {
            let mut weighted = 0.0;
            for (i, field) in FIELDS.iter().enumerate() {
                let Some(&tf) = self.tf[doc][i].get(term) else {
                    continue;
                };
                let norm = if self.avg_len[i] > 0.0 {
                    1.0 - B + B * f64::from(self.len[doc][i]) / self.avg_len[i]
                } else {
                    1.0
                };
                weighted += WEIGHTS[i] * f64::from(tf) / norm;
                match out.matched.iter_mut().find(|(f, _)| f == field) {
                    Some((_, ts)) => ts.push(term.clone()),
                    None => out.matched.push((*field, vec![term.clone()])),
                }
            }
            if weighted > 0.0 {
                out.score += self.idf(term) * weighted / (K1 + weighted);
            }
        }
        out.matched
            .sort_by_key(|(f, _)| FIELDS.iter().position(|x| x == f));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(title: &str, body: &str) -> [Vec<String>; 6] {
        let t = |s: &str| crate::text::terms(s);
        [t(title), vec![], vec![], vec![], t(body), vec![]]
    }

    #[test]
    fn a_title_match_outranks_the_same_word_in_a_body() {
        let idx = Index::new(vec![
            doc("sandbox limits", "memory caps"),
            doc("other", "sandbox mentioned once"),
            doc("unrelated", "nothing here"),
        ]);
        let q = vec!["sandbox".to_string()];
        let a = idx.score(0, &q);
        let b = idx.score(1, &q);
        assert!(a.score > b.score, "{} vs {}", a.score, b.score);
        assert_eq!(a.matched, vec![(Field::Title, q.clone())]);
        assert_eq!(idx.score(2, &q).score, 0.0);
    }

    #[test]
    fn rare_terms_weigh_more_than_common_ones() {
        let idx = Index::new(vec![
            doc("", "common rare"),
            doc("", "common"),
            doc("", "common"),
        ]);
        let common = idx.score(0, &["common".to_string()]).score;
        let rare = idx.score(0, &["rare".to_string()]).score;
        assert!(rare > common * 2.0, "{rare} vs {common}");
    }
}
