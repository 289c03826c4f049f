//! BM25 search over symbols.
//!
//! A [`SymbolIndex`] holds one corpus (a project's symbols, or one dependency crate's)
//! in a tantivy index: in memory, or in a directory it maps ([`stored`] keeps one across
//! runs). Each symbol is indexed in five fields, tokenized by
//! [`tokens`] (case and `_` splitting, lower-case), and a query is tokenized the same
//! way and scored as a sum of per-field BM25 terms:
//!
//! | field | contents | boost |
//! |---|---|---|
//! | name | the symbol's name: its parts and the whole name | 3 |
//! | module | the qualified name's segments before the name (`tokio`, `sync`) | 1.5 |
//! | signature | the declaration line | 1 |
//! | docstring | the doc comment | 1 |
//! | kind | `function`, `trait`, ... | 0.5 |
//!
//! Why these weights: the name is what an agent types when it half-remembers a symbol,
//! so a hit there is the strongest evidence. Module segments place a symbol but are
//! shared by every sibling in the module, so they count half as much. Signature and
//! docstring words describe behaviour and are the baseline. The kind only nudges
//! (`trait runtime` prefers the trait among equal names).
//!
//! A query that spells a symbol's whole name (ignoring case, `_` and spaces:
//! `hash map`, `HashMap`, `hash_map`) adds to that symbol a bonus larger than any score
//! the query's words can give a symbol, so exact names rank first; a query that is the
//! name exactly, case included (`Mutex`, not `mutex`), adds that bonus twice, so the
//! case the agent typed decides between `Mutex` the type and `mutex` the method.

mod build;
mod changes;
pub mod stored;
pub mod tokens;

pub use build::SymbolIndexBuilder;

use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::Arc;

use tantivy::collector::{Count, TopDocs};
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery,
};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{Token, TokenStream, Tokenizer, TokenizerManager};
use tantivy::{DocAddress, DocId, DocSet, Index, IndexReader, ReloadPolicy, Searcher, Term};

/// Why a search could not be answered.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum SearchError {
    /// The query (or a filter) cannot be searched; the message says why and what works.
    #[error("{0}")]
    InvalidArgument(String),
    /// The index itself failed (should not happen with an in-memory index).
    #[error("search index: {0}")]
    Index(String),
}

impl From<tantivy::TantivyError> for SearchError {
    fn from(e: tantivy::TantivyError) -> Self {
        SearchError::Index(e.to_string())
    }
}

impl From<std::io::Error> for SearchError {
    fn from(e: std::io::Error) -> Self {
        SearchError::Index(e.to_string())
    }
}

pub type Result<T, E = SearchError> = std::result::Result<T, E>;

/// One symbol to index. `key` is the caller's handle to it (e.g. its position in the
/// caller's list) and comes back in [`Hit::key`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchDoc {
    pub key: u64,
    pub name: String,
    pub qualified_name: String,
    pub signature: String,
    pub docstring: Option<String>,
    pub kind: String,
    /// For dependency symbols: the crate, so a search can be narrowed to it.
    pub crate_name: Option<String>,
    pub crate_version: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub key: u64,
    pub score: f32,
    /// The query terms found in this symbol's fields, lower-case, in query order.
    pub matched_terms: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    pub hits: Vec<Hit>,
    /// Matching symbols in all, before paging.
    pub total: u64,
}

/// A hit of a search over several indexes: `source` is the position of its index in
/// the slice given to [`SymbolIndex::search_many`].
#[derive(Clone, Debug, PartialEq)]
pub struct SourcedHit {
    pub source: usize,
    pub hit: Hit,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ManyPage {
    pub hits: Vec<SourcedHit>,
    pub total: u64,
}

/// Names longer than this are not matched case-exactly (no one types them whole).
const MAX_NAME_BYTES: usize = 256;

/// BM25's `k1` as tantivy uses it: a term's score is below `idf * (1 + K1) * boost`.
const BM25_K1: f32 = 1.2;

/// Memory budget given to the index writer. A one-segment writer never flushes, so
/// this only sizes its first term table (a third of it, capped by tantivy at 2^19
/// entries); the table and the arena grow as a corpus needs. 15 MB gives small crates
/// (most of the 160 tokio locks) a small table instead of the largest one.
const WRITER_MEMORY: usize = 15_000_000;

#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    name: Field,
    module: Field,
    signature: Field,
    docstring: Field,
    kind: Field,
    /// The compact whole name (see [`tokens::compact`]), one token.
    exact: Field,
    /// The name as written, one token.
    exact_case: Field,
    /// The crate's normalised name and `name@version`.
    krate: Field,
}

impl Fields {
    /// The scored fields with their boosts (see the crate docs for why).
    fn weighted(&self) -> [(Field, f32); 5] {
        [
            (self.name, 3.0),
            (self.module, 1.5),
            (self.signature, 1.0),
            (self.docstring, 1.0),
            (self.kind, 0.5),
        ]
    }
}

/// The name the scored fields' tokenizer, [`Words`], is registered under.
const WORDS: &str = "scryer_words";

/// [`tokens::tokenize`] as a tantivy tokenizer. tantivy's pre-tokenized values are
/// carried through the document as JSON and parsed back: a fifth of the time it took
/// to index tokio's 160 locked crates (docs/learnings/memory.md, 2026-12-01 evening).
#[derive(Clone, Default)]
struct Words;

struct WordStream {
    words: std::vec::IntoIter<String>,
    token: Token,
}

impl Tokenizer for Words {
    type TokenStream<'a> = WordStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream {
        WordStream {
            words: tokens::tokenize(text).into_iter(),
            token: Token::default(),
        }
    }
}

impl TokenStream for WordStream {
    fn advance(&mut self) -> bool {
        let Some(word) = self.words.next() else {
            return false;
        };
        // Offsets and positions are not indexed (no phrase queries, nothing stored).
        self.token.position = self.token.position.wrapping_add(1);
        self.token.offset_from = 0;
        self.token.offset_to = word.len();
        self.token.text = word;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

/// tantivy's tokenizers (`raw` among them) and [`Words`].
fn tokenizers() -> TokenizerManager {
    let manager = TokenizerManager::default();
    manager.register(WORDS, Words);
    manager
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    // Frequencies are kept for BM25, positions are not (no phrase queries).
    let scored = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(WORDS)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    // Each value is one term, as given.
    let filter = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_index_option(IndexRecordOption::Basic)
            .set_fieldnorms(false),
    );
    let fields = Fields {
        key: b.add_u64_field("key", FAST),
        name: b.add_text_field("name", scored.clone()),
        module: b.add_text_field("module", scored.clone()),
        signature: b.add_text_field("signature", scored.clone()),
        docstring: b.add_text_field("docstring", scored.clone()),
        kind: b.add_text_field("kind", scored),
        exact: b.add_text_field("exact", filter.clone()),
        exact_case: b.add_text_field("exact_case", filter.clone()),
        krate: b.add_text_field("crate", filter),
    };
    (b.build(), fields)
}

/// A crate name as compared: lower-case, `-` and `_` equivalent.
pub fn normalize_crate_name(name: &str) -> String {
    name.trim().to_lowercase().replace('-', "_")
}

/// The qualified name's part before the symbol's own name (`tokio::sync` for
/// `tokio::sync::Mutex`), or all of it when it does not end with the name.
fn module_part<'a>(qualified_name: &'a str, name: &str) -> &'a str {
    match qualified_name.strip_suffix(name) {
        Some(prefix) if !name.is_empty() => prefix,
        _ => qualified_name,
    }
}

/// A BM25 index over one corpus of symbols. Immutable once built: a corpus that changes
/// is indexed again, or, for a few changed documents, seen through
/// [`SymbolIndex::with_changes`].
pub struct SymbolIndex {
    /// One tantivy index, or (after [`SymbolIndex::with_changes`]) several searched as one.
    parts: Vec<Part>,
    fields: Fields,
    /// Documents searched: every part's, less the hidden ones.
    docs: u64,
}

/// One tantivy index of a [`SymbolIndex`] and the documents of it left out.
#[derive(Clone)]
struct Part {
    // Kept so the searcher's segments stay alive with the reader.
    _reader: IndexReader,
    searcher: Searcher,
    hidden: Option<Arc<changes::Hidden>>,
}

/// A hit before paging: where it is, and its key (ties are listed by key).
struct Candidate {
    score: f32,
    source: usize,
    part: usize,
    address: DocAddress,
    key: u64,
}

impl std::fmt::Debug for SymbolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolIndex")
            .field("docs", &self.docs)
            .finish()
    }
}

/// A query ready to run: its distinct terms and its compact form.
struct Prepared {
    terms: Vec<String>,
    exact: Option<String>,
    /// The trimmed query when it could be a name as written.
    exact_case: Option<String>,
}

fn prepare(query: &str) -> Result<Prepared> {
    let terms = tokens::query_terms(query);
    if terms.is_empty() {
        let shown: String = query.chars().filter(|c| !c.is_control()).take(60).collect();
        return Err(SearchError::InvalidArgument(format!(
            "query {shown:?} has no searchable term: search words are runs of letters, digits or `_` \
             (e.g. `spawn blocking`, `HashMap`, `read_to_string`); punctuation, control characters \
             and lone combining marks are ignored"
        )));
    }
    let compact = tokens::compact(tokens::query_prefix(query));
    // A compact form longer than any word cannot be a name (and would make a huge term).
    let exact =
        (!compact.is_empty() && compact.len() <= 4 * tokens::MAX_WORD_CHARS).then_some(compact);
    let trimmed = query.trim();
    let exact_case =
        (exact.is_some() && trimmed.len() <= MAX_NAME_BYTES).then(|| trimmed.to_string());
    Ok(Prepared {
        terms,
        exact,
        exact_case,
    })
}

/// Checks that `query` has a searchable term, with the error a search would give.
pub fn check_query(query: &str) -> Result<()> {
    prepare(query).map(|_| ())
}

impl SymbolIndex {
    fn from_index(index: Index, fields: Fields) -> Result<SymbolIndex> {
        // Searches tokenize queries themselves; registered so nothing tantivy does with
        // the schema meets an unknown tokenizer.
        index.tokenizers().register(WORDS, Words);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let searcher = reader.searcher();
        Ok(SymbolIndex {
            docs: searcher.num_docs(),
            parts: vec![Part {
                _reader: reader,
                searcher,
                hidden: None,
            }],
            fields,
        })
    }

    /// This index with the documents whose keys lie in `hidden` left out and `current`'s
    /// added, searched as one index built from what is left would be (see [`changes`]):
    /// after an edit, the edited files' documents are hidden and their new ones are in
    /// `current`. The index is shared, not copied; finding the hidden documents reads each
    /// segment's keys once (a few ms for the 741k documents of a 7M-line project).
    pub fn with_changes(&self, hidden: &[Range<u64>], current: SymbolIndex) -> Result<SymbolIndex> {
        let mut parts = Vec::with_capacity(self.parts.len() + current.parts.len());
        let mut docs = current.docs;
        for part in &self.parts {
            let mut ranges = part
                .hidden
                .as_ref()
                .map(|h| h.ranges.clone())
                .unwrap_or_default();
            ranges.extend(hidden.iter().cloned());
            let hidden = changes::Hidden::find(&part.searcher, &self.fields, ranges)?;
            docs += part.searcher.num_docs() - hidden.as_ref().map_or(0, |h| h.count);
            parts.push(Part {
                hidden,
                ..part.clone()
            });
        }
        parts.extend(current.parts);
        Ok(SymbolIndex {
            parts,
            fields: self.fields,
            docs,
        })
    }

    /// The BM25 statistics searches score with: the parts' less their hidden documents.
    fn stats(&self) -> changes::Stats<'_> {
        changes::Stats { parts: &self.parts }
    }

    /// Opens an index that [`SymbolIndexBuilder::in_directory`] wrote to `dir`. Fails if
    /// there is none or it was written with another schema (by another version of this
    /// crate).
    pub fn open(dir: &std::path::Path) -> Result<SymbolIndex> {
        let index = Index::open_in_dir(dir)?;
        let (schema, fields) = schema();
        if index.schema() != schema {
            return Err(SearchError::Index(format!(
                "the index in {} was written with another schema",
                dir.display()
            )));
        }
        SymbolIndex::from_index(index, fields)
    }

    /// Indexes `docs`. An empty corpus gives an index that matches nothing.
    pub fn build(docs: impl IntoIterator<Item = SearchDoc>) -> Result<SymbolIndex> {
        let mut builder = SymbolIndexBuilder::new()?;
        for d in docs {
            builder.add(d)?;
        }
        builder.finish()
    }

    /// Symbols indexed.
    pub fn len(&self) -> u64 {
        self.docs
    }

    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Bytes of the index's files: in memory for an index built by [`SymbolIndexBuilder::new`],
    /// on disk (mapped as read) for one in a directory.
    pub fn memory_bytes(&self) -> Result<u64> {
        let mut bytes = 0;
        for part in &self.parts {
            bytes += part.searcher.space_usage()?.total().get_bytes();
        }
        Ok(bytes)
    }

    /// Symbols matching `query`, best first: `limit` hits from `offset`, and the total.
    /// `crate_filter` keeps only symbols of that crate (case-insensitive, `-` = `_`,
    /// or `name@version`).
    pub fn search(
        &self,
        query: &str,
        crate_filter: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<Page> {
        let many = Self::search_many(&[self], query, crate_filter, offset, limit)?;
        Ok(Page {
            hits: many.hits.into_iter().map(|h| h.hit).collect(),
            total: many.total,
        })
    }

    /// [`SymbolIndex::search`] over several indexes at once, merged by score. The
    /// exact-name bonus is the same for all of them, so an exact name ranks first across
    /// the merge too. (Each index's BM25 statistics are its own, so scores from
    /// different indexes are comparable only roughly.)
    pub fn search_many(
        indexes: &[&SymbolIndex],
        query: &str,
        crate_filter: Option<&str>,
        offset: usize,
        limit: usize,
    ) -> Result<ManyPage> {
        let prepared = prepare(query)?;
        let crate_filter = match crate_filter.map(normalize_crate_name) {
            Some(c) if c.is_empty() => {
                return Err(SearchError::InvalidArgument(
                    "crate_name is empty: pass a crate name such as `serde` or `tokio-util`".into(),
                ));
            }
            other => other,
        };
        let mut bonus = 0f32;
        for idx in indexes {
            bonus = bonus.max(idx.score_bound(&prepared.terms)?);
        }
        // Strictly above any sum of word scores, with room for f32 rounding.
        let bonus = bonus * 1.001 + 0.01;

        let wanted = offset.saturating_add(limit);
        let mut total = 0u64;
        let mut candidates: Vec<Candidate> = Vec::new();
        for (source, idx) in indexes.iter().enumerate() {
            if idx.is_empty() {
                continue;
            }
            let stats = idx.stats();
            for (part_no, part) in idx.parts.iter().enumerate() {
                let mut q = idx.query(&prepared, crate_filter.as_deref(), bonus);
                if let Some(hidden) = &part.hidden {
                    // Excluding adds nothing to a hit's score.
                    q = Box::new(BooleanQuery::new(vec![
                        (Occur::Must, q),
                        (Occur::MustNot, hidden.query()),
                    ]));
                }
                // Never ask tantivy for more than the part holds: it sizes its heap by the limit.
                let fetch =
                    wanted.min(usize::try_from(part.searcher.num_docs()).unwrap_or(usize::MAX));
                if fetch == 0 {
                    total += part.searcher.search(&q, &Count)? as u64;
                    continue;
                }
                let (count, top) = part.searcher.search_with_statistics_provider(
                    &q,
                    &(Count, TopDocs::with_limit(fetch).order_by_score()),
                    &stats,
                )?;
                total += count as u64;
                candidates.extend(top.into_iter().map(|(score, address)| Candidate {
                    score,
                    source,
                    part: part_no,
                    address,
                    key: 0,
                }));
            }
        }
        // Ties are listed by key: in an index built in key order (every index here),
        // that is the order the documents were added, and it holds across parts.
        Self::read_keys(indexes, &mut candidates)?;
        candidates.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.source.cmp(&b.source))
                .then(a.key.cmp(&b.key))
        });
        let page: Vec<Candidate> = candidates.into_iter().skip(offset).take(limit).collect();

        // Matched terms, looked up per index, part and segment in doc order.
        let mut by_segment: BTreeMap<(usize, usize, u32), Vec<DocId>> = BTreeMap::new();
        for c in &page {
            by_segment
                .entry((c.source, c.part, c.address.segment_ord))
                .or_default()
                .push(c.address.doc_id);
        }
        let mut matched: HashMap<(usize, usize, DocAddress), Vec<String>> = HashMap::new();
        for ((source, part, segment_ord), mut docs) in by_segment {
            docs.sort_unstable();
            docs.dedup();
            let idx = indexes[source];
            for (doc, terms) in idx.describe(part, segment_ord, &docs, &prepared.terms)? {
                matched.insert((source, part, DocAddress::new(segment_ord, doc)), terms);
            }
        }
        let hits = page
            .into_iter()
            .map(|c| SourcedHit {
                source: c.source,
                hit: Hit {
                    key: c.key,
                    score: c.score,
                    matched_terms: matched
                        .remove(&(c.source, c.part, c.address))
                        .unwrap_or_default(),
                },
            })
            .collect();
        Ok(ManyPage { hits, total })
    }

    /// An upper bound of the score the query's words can give any symbol here: each
    /// term's BM25 is below `idf * (1 + k1)`, times its field's boost.
    fn score_bound(&self, terms: &[String]) -> Result<f32> {
        if self.docs == 0 {
            return Ok(0.0);
        }
        let n = self.docs as f32;
        let stats = self.stats();
        let mut bound = 0f32;
        for t in terms {
            for (field, boost) in self.fields.weighted() {
                let df = stats.doc_freq(&Term::from_field_text(field, t))?;
                if df == 0 {
                    continue;
                }
                let df = df as f32;
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                bound += boost * idf * (1.0 + BM25_K1);
            }
        }
        Ok(bound)
    }

    fn query(&self, prepared: &Prepared, crate_filter: Option<&str>, bonus: f32) -> Box<dyn Query> {
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &prepared.terms {
            for (field, boost) in self.fields.weighted() {
                let term = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(term), boost)),
                ));
            }
        }
        // Tiers: a word-only score stays below `bonus`, an exact name scores from `bonus`
        // and below `2 * bonus`, a case-exact name from `2 * bonus` (it matches both).
        let exact_fields = [
            (self.fields.exact, &prepared.exact),
            (self.fields.exact_case, &prepared.exact_case),
        ];
        for (field, text) in exact_fields {
            if let Some(text) = text {
                let term =
                    TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic);
                should.push((
                    Occur::Should,
                    Box::new(ConstScoreQuery::new(Box::new(term), bonus)),
                ));
            }
        }
        let words: Box<dyn Query> = Box::new(BooleanQuery::new(should));
        match crate_filter {
            None => words,
            Some(c) => {
                let term = TermQuery::new(
                    Term::from_field_text(self.fields.krate, c),
                    IndexRecordOption::Basic,
                );
                // A filter: it must match but adds nothing to the score.
                Box::new(BooleanQuery::new(vec![
                    (
                        Occur::Must,
                        Box::new(ConstScoreQuery::new(Box::new(term), 0.0)),
                    ),
                    (Occur::Must, words),
                ]))
            }
        }
    }

    /// Fills in each candidate's key, read per index, part and segment.
    fn read_keys(indexes: &[&SymbolIndex], candidates: &mut [Candidate]) -> Result<()> {
        let mut by_segment: BTreeMap<(usize, usize, u32), Vec<usize>> = BTreeMap::new();
        for (i, c) in candidates.iter().enumerate() {
            by_segment
                .entry((c.source, c.part, c.address.segment_ord))
                .or_default()
                .push(i);
        }
        for ((source, part, segment_ord), at) in by_segment {
            let reader = indexes[source].parts[part]
                .searcher
                .segment_reader(segment_ord);
            let keys = reader.fast_fields().u64("key")?;
            for i in at {
                candidates[i].key = keys.first(candidates[i].address.doc_id).unwrap_or_default();
            }
        }
        Ok(())
    }

    /// For docs (ascending) of one segment of part `part`: which query terms they hold.
    fn describe(
        &self,
        part: usize,
        segment_ord: u32,
        docs: &[DocId],
        terms: &[String],
    ) -> Result<Vec<(DocId, Vec<String>)>> {
        let reader = self.parts[part].searcher.segment_reader(segment_ord);
        // matched[i][j]: doc i holds term j in some field.
        let mut matched = vec![vec![false; terms.len()]; docs.len()];
        for (j, t) in terms.iter().enumerate() {
            for (field, _) in self.fields.weighted() {
                let inverted = reader.inverted_index(field)?;
                let Some(mut postings) = inverted
                    .read_postings(&Term::from_field_text(field, t), IndexRecordOption::Basic)?
                else {
                    continue;
                };
                for (i, &d) in docs.iter().enumerate() {
                    let mut at = postings.doc();
                    if at < d {
                        at = postings.seek(d);
                    }
                    if at == d {
                        matched[i][j] = true;
                    }
                }
            }
        }
        Ok(docs
            .iter()
            .zip(matched)
            .map(|(&d, m)| {
                let terms = terms
                    .iter()
                    .zip(m)
                    .filter(|(_, hit)| *hit)
                    .map(|(t, _)| t.clone())
                    .collect();
                (d, terms)
            })
            .collect())
    }
}

#[cfg(test)]
mod tests;
