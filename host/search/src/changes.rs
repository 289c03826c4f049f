//! An index with some documents left out: how a project's kept index answers after an
//! edit without being built again ([`crate::SymbolIndex::with_changes`]).
//!
//! The documents of the edited files are *hidden* in the kept index (found by their
//! keys, once, when the changes are applied) and the files' current documents sit in a
//! small index beside it. A search runs over both parts, each with its hidden documents
//! excluded, and scores with the statistics of what is left ([`Stats`]): documents
//! counted without the hidden ones, a term's document frequency less the hidden
//! documents holding it, a field's tokens less theirs. So a hit scores as it would in an
//! index built again from the current rows, and ties are listed by key in both
//! (`search_many`), as an index built in key order lists them.
//!
//! Exact but for one thing: a hidden document's tokens are counted from its field norm,
//! which tantivy stores exactly up to 40 tokens and rounded above (a docstring of 60
//! words may count as 56). That moves the field's average length by a few tokens in
//! millions; a hit's score can then differ from a rebuild's in its last bits.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use tantivy::index::SegmentId;
use tantivy::query::{
    Bm25StatisticsProvider, EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, Searcher, SegmentReader, TERMINATED, Term};

use crate::{Fields, Part, Result};

/// The documents of one part that are left out, and what they held.
#[derive(Debug)]
pub(crate) struct Hidden {
    /// The key ranges hidden, half-open, as given (kept to hide more later).
    pub ranges: Vec<Range<u64>>,
    /// Per segment: its hidden documents, ascending. Segments with none are absent.
    docs: HashMap<SegmentId, Vec<DocId>>,
    /// Hidden documents in all.
    pub count: u64,
    /// Per scored field: the tokens the hidden documents held (from their field norms).
    tokens: HashMap<Field, u64>,
}

impl Hidden {
    /// The documents of `searcher` whose key lies in one of `ranges`; `None` if no
    /// document does.
    pub fn find(
        searcher: &Searcher,
        fields: &Fields,
        ranges: Vec<Range<u64>>,
    ) -> Result<Option<Arc<Hidden>>> {
        let mut sorted = ranges.clone();
        sorted.sort_by_key(|r| r.start);
        let inside = |key: u64| {
            // The last range starting at or before `key`, or any earlier one reaching it
            // (ranges may overlap: check back while they could).
            let at = sorted.partition_point(|r| r.start <= key);
            sorted[..at].iter().rev().any(|r| r.contains(&key))
        };
        let mut docs = HashMap::new();
        let mut count = 0u64;
        let mut tokens: HashMap<Field, u64> = HashMap::new();
        for reader in searcher.segment_readers() {
            let keys = reader.fast_fields().u64("key")?;
            // A kept index's segments each hold a run of keys (rows are added in key
            // order), so most hold none of an edit's files: their bounds say so without a
            // look at each document.
            let (low, high) = (keys.min_value(), keys.max_value());
            if !sorted.iter().any(|r| r.start <= high && low < r.end) {
                continue;
            }
            let hidden: Vec<DocId> = (0..reader.max_doc())
                .filter(|&d| keys.first(d).is_some_and(inside))
                .collect();
            if hidden.is_empty() {
                continue;
            }
            for (field, _) in fields.weighted() {
                let norms = reader.get_fieldnorms_reader(field)?;
                let sum: u64 = hidden.iter().map(|&d| u64::from(norms.fieldnorm(d))).sum();
                *tokens.entry(field).or_default() += sum;
            }
            count += hidden.len() as u64;
            docs.insert(reader.segment_id(), hidden);
        }
        Ok((count > 0).then(|| {
            Arc::new(Hidden {
                ranges,
                docs,
                count,
                tokens,
            })
        }))
    }

    /// Hidden documents of `reader`'s segment that hold `term`.
    fn doc_freq(&self, reader: &SegmentReader, term: &Term) -> tantivy::Result<u64> {
        let Some(hidden) = self.docs.get(&reader.segment_id()) else {
            return Ok(0);
        };
        let inverted = reader.inverted_index(term.field())?;
        let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? else {
            return Ok(0);
        };
        let mut n = 0;
        for &d in hidden {
            let mut at = postings.doc();
            if at < d {
                at = postings.seek(d);
            }
            if at == d {
                n += 1;
            }
        }
        Ok(n)
    }

    /// The query matching exactly the hidden documents, to exclude them.
    pub fn query(self: &Arc<Self>) -> Box<dyn Query> {
        Box::new(HiddenQuery(self.clone()))
    }
}

/// BM25 statistics of a [`crate::SymbolIndex`]'s parts without their hidden documents.
pub(crate) struct Stats<'a> {
    pub parts: &'a [Part],
}

impl Bm25StatisticsProvider for Stats<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut total = 0u64;
        for part in self.parts {
            total += part.searcher.total_num_tokens(field)?;
            if let Some(h) = &part.hidden {
                total = total.saturating_sub(h.tokens.get(&field).copied().unwrap_or(0));
            }
        }
        Ok(total)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        let mut total = 0u64;
        for part in self.parts {
            total += Bm25StatisticsProvider::total_num_docs(&part.searcher)?;
            total -= part.hidden.as_ref().map_or(0, |h| h.count);
        }
        Ok(total)
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut total = 0u64;
        for part in self.parts {
            total += part.searcher.doc_freq(term)?;
            if let Some(h) = &part.hidden {
                for reader in part.searcher.segment_readers() {
                    total -= h.doc_freq(reader, term)?;
                }
            }
        }
        Ok(total)
    }
}

/// Matches a part's hidden documents (with no score of its own: it only excludes).
#[derive(Clone, Debug)]
struct HiddenQuery(Arc<Hidden>);

impl Query for HiddenQuery {
    fn weight(&self, _scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(HiddenWeight(self.0.clone())))
    }
}

struct HiddenWeight(Arc<Hidden>);

impl Weight for HiddenWeight {
    fn scorer(&self, reader: &SegmentReader, _boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(match self.0.docs.get(&reader.segment_id()) {
            Some(docs) => Box::new(Listed {
                docs: docs.clone(),
                at: 0,
            }),
            None => Box::new(EmptyScorer),
        })
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let hidden = self
            .0
            .docs
            .get(&reader.segment_id())
            .is_some_and(|d| d.binary_search(&doc).is_ok());
        Ok(Explanation::new(
            if hidden { "hidden" } else { "not hidden" },
            0.0,
        ))
    }
}

/// A segment's hidden documents as a doc set. (tantivy's own list doc set is test-only.)
struct Listed {
    docs: Vec<DocId>,
    at: usize,
}

impl DocSet for Listed {
    fn advance(&mut self) -> DocId {
        self.at = (self.at + 1).min(self.docs.len());
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        self.at += self.docs[self.at.min(self.docs.len())..].partition_point(|&d| d < target);
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.docs.get(self.at).copied().unwrap_or(TERMINATED)
    }

    fn size_hint(&self) -> u32 {
        (self.docs.len() - self.at.min(self.docs.len())) as u32
    }
}

impl Scorer for Listed {
    fn score(&mut self) -> Score {
        0.0
    }
}
