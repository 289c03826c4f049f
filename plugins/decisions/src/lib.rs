//! Architectural memory as plain Rust: no host, no WIT, no I/O. Routers hand it the
//! documents and database rows they read through the host and get back a ranked corpus.
//!
//! - [`Corpus::build`]: every `.md` directly under `docs/adr`, `docs/learnings` and
//!   `docs/plans` ([`DOC_DIRS`]) plus decision rows whose file is not among them, each
//!   parsed into title, number, status, date, `affected_paths` globs and the decision /
//!   context / consequences sections ([`parse`]).
//! - [`Corpus::search`]: `query_adrs` ranking. BM25F over title ×3, decision ×2, context,
//!   consequences, body and affected paths ×1 ([`bm25`]); +3 when a path-like query word
//!   (one with a `/` or a file extension) is covered by a decision's glob or holds one;
//!   an explicit path ranks by coverage (see [`Corpus::search`]).
//! - [`rank_invariants_for_symbol`]: the decisions that constrain one symbol, for
//!   `inspect_symbol`.
//! - [`write`]: the file name and escaped Markdown of a new record.
//!
//! Glob semantics ([`globs`]): case-insensitive, `*` stays within a directory, and a bare
//! entry `foo/bar` matches `foo/bar` and everything under it.
//!
//! # Using it from another router (e.g. `inspect_symbol`)
//!
//! ```ignore
//! let mut docs = Vec::new();
//! for dir in scryer_decisions::DOC_DIRS {
//!     for d in host.list_documents(dir)? {
//!         docs.push(SourceDoc { path: d.path, text: d.text, modified_ms: d.modified_ms });
//!     }
//! }
//! let rows = host.decision_rows()?.into_iter().map(|r| StoredRow { number: r.number, .. }).collect();
//! let corpus = Corpus::build(docs, rows);
//! let top3: Vec<Invariant> = rank_invariants_for_symbol(&corpus, &symbol, &neighbour_files)
//!     .into_iter().take(3).collect();
//! ```
//!
//! Only the memory router may purge rows whose file was deleted (it holds `docs-write`);
//! a reader passes the rows as they are, and a row whose file is gone simply ranks as a
//! database-only record until the next `query_adrs` purges it.

pub mod bm25;
pub mod date;
pub mod frontmatter;
pub mod globs;
pub mod parse;
pub mod text;
pub mod write;

use bm25::Index;
use globs::{PathGlob, Relation, normalize_path, relate};

/// The directories whose `.md` files make up the corpus, relative to the project root.
pub const DOC_DIRS: [&str; 3] = ["docs/adr", "docs/learnings", "docs/plans"];
/// Where decision records live (and the only place `record_adr` / `delete_adr` write).
pub const ADR_DIR: &str = "docs/adr";
/// The statuses a record may have, in lifecycle order.
pub const STATUSES: [&str; 4] = ["proposed", "accepted", "deprecated", "superseded"];

/// A Markdown file as read from disk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceDoc {
    /// Relative to the project root, e.g. `docs/adr/0001-wit.md`.
    pub path: String,
    pub text: String,
    /// Milliseconds since the Unix epoch.
    pub modified_ms: u64,
}

/// A decision row as stored in the database.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredRow {
    pub number: u32,
    pub title: String,
    pub status: String,
    pub file_path: String,
    /// The whole Markdown document.
    pub text: String,
    /// RFC 3339.
    pub recorded_at: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Adr,
    Learning,
    Plan,
}

impl Kind {
    fn of(path: &str) -> Kind {
        if path.starts_with("docs/learnings/") {
            Kind::Learning
        } else if path.starts_with("docs/plans/") {
            Kind::Plan
        } else {
            Kind::Adr
        }
    }
}

/// Where a record was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Its Markdown file.
    File,
    /// Only a database row: its file was not listed.
    DatabaseOnly,
}

/// One document of the corpus.
#[derive(Clone, Debug)]
pub struct Decision {
    pub path: String,
    pub kind: Kind,
    pub origin: Origin,
    pub number: Option<u32>,
    pub title: String,
    /// Lower-case; one of [`STATUSES`] when recognised.
    pub status: Option<String>,
    pub date: Option<String>,
    pub affected_paths: Vec<PathGlob>,
    pub decision: String,
    pub context: String,
    pub consequences: String,
    pub body: String,
    /// For "newest first": the frontmatter date, else the row's time, else the mtime.
    pub recency_ms: i64,
    /// What could not be read.
    pub warnings: Vec<String>,
}

impl Decision {
    /// The file name, for a record directly inside `docs/adr`.
    pub fn adr_file_name(&self) -> Option<&str> {
        self.path
            .strip_prefix(ADR_DIR)
            .and_then(|r| r.strip_prefix('/'))
            .filter(|n| !n.contains('/'))
    }

    /// The first words of the decision (else the context, else the body), one line, at
    /// most `max_chars` characters.
    pub fn excerpt(&self, max_chars: usize) -> String {
        let source = [&self.decision, &self.context, &self.body]
            .into_iter()
            .find(|s| !s.trim().is_empty())
            .map(|s| parse::one_line(s))
            .unwrap_or_default();
        if source.chars().count() <= max_chars {
            return source;
        }
        let cut: String = source.chars().take(max_chars).collect();
        let at = cut
            .rfind(' ')
            .filter(|&i| i > max_chars / 2)
            .unwrap_or(cut.len());
        format!("{}…", cut[..at].trim_end_matches([',', ';', ':', '.']))
    }

    fn fields(&self) -> [Vec<String>; 6] {
        let paths: String = self
            .affected_paths
            .iter()
            .map(|g| g.raw.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        [
            text::terms(&self.title),
            text::terms(&self.decision),
            text::terms(&self.context),
            text::terms(&self.consequences),
            text::terms(&self.body),
            text::terms(&paths),
        ]
    }
}

/// The number a file name starts with: `0007-x.md`, `adr-0007-x.md`.
pub fn number_in_file_name(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("adr-")
        .or_else(|| lower.strip_prefix("adr_"))
        .unwrap_or(&lower);
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse::<u32>().ok().filter(|n| *n > 0)
}

/// The parsed corpus of one project.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub decisions: Vec<Decision>,
    /// The highest record number anywhere: `docs/adr` file names and frontmatter, and
    /// every row (including rows shadowed by their file).
    pub max_number: u32,
    index: Index,
}

fn decision_from(
    path: String,
    text: &str,
    origin: Origin,
    fallback_ms: i64,
    row: Option<&StoredRow>,
) -> Decision {
    let p = parse::parse_document(text);
    let kind = Kind::of(&path);
    let file_name = path.rsplit('/').next().unwrap_or(&path).to_string();
    let number = p
        .number
        .or_else(|| {
            (kind == Kind::Adr)
                .then(|| number_in_file_name(&file_name))
                .flatten()
        })
        .or(row.map(|r| r.number));
    let title = p
        .title
        .or_else(|| {
            row.map(|r| parse::one_line(&r.title))
                .filter(|t| !t.is_empty())
        })
        .unwrap_or_else(|| file_name.trim_end_matches(".md").to_string());
    let status = p
        .status
        .or_else(|| row.and_then(|r| parse::normalize_status(&r.status)));
    let recency_ms = p
        .date
        .as_deref()
        .and_then(date::parse_ms)
        .unwrap_or(fallback_ms);
    Decision {
        path,
        kind,
        origin,
        number,
        title,
        status,
        date: p.date,
        affected_paths: p.affected_paths,
        decision: p.decision,
        context: p.context,
        consequences: p.consequences,
        body: p.body,
        recency_ms,
        warnings: p.warnings,
    }
}

/// What [`Corpus::search`] is asked.
#[derive(Clone, Debug, Default)]
pub struct Query<'a> {
    /// Free text; words with a `/` or an extension are also read as paths.
    pub text: Option<&'a str>,
    /// A project-relative path to rank by coverage.
    pub path: Option<&'a str>,
    /// Keep only records with this status.
    pub status: Option<&'a str>,
}

/// One ranked record.
#[derive(Clone, Debug)]
pub struct Hit {
    /// Index into [`Corpus::decisions`].
    pub doc: usize,
    pub score: f64,
    pub reasons: Vec<String>,
}

/// The answer to a [`Query`], with what is needed to explain an empty one.
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// Ordered best first (newest first when nothing was asked).
    pub hits: Vec<Hit>,
    /// Records that matched before the status filter.
    pub matched: usize,
    /// Statuses among those, with counts (`none` for records without one).
    pub matched_statuses: Vec<(String, usize)>,
    /// The query's searchable words (lower-case, stop words left out).
    pub words: Vec<String>,
    /// The query words read as paths.
    pub path_words: Vec<String>,
}

/// Whether a query word reads as a path: it has a `/`, or ends in an extension
/// (`lib.rs`, `router.wit`).
fn path_like(word: &str) -> bool {
    if word.contains('/') {
        return true;
    }
    match word.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=8).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

impl Corpus {
    /// Parses `docs` (files under [`DOC_DIRS`]) and adds each row whose file is not among
    /// them as a database-only record (the file wins when both exist).
    pub fn build(docs: Vec<SourceDoc>, rows: Vec<StoredRow>) -> Corpus {
        let mut decisions: Vec<Decision> = docs
            .iter()
            .map(|d| {
                decision_from(
                    d.path.clone(),
                    &d.text,
                    Origin::File,
                    d.modified_ms as i64,
                    None,
                )
            })
            .collect();
        let mut max_number = 0;
        for (doc, d) in docs.iter().zip(&decisions) {
            if d.kind == Kind::Adr {
                let from_name = number_in_file_name(doc.path.rsplit('/').next().unwrap_or(""));
                max_number = max_number
                    .max(from_name.unwrap_or(0))
                    .max(d.number.unwrap_or(0));
            }
        }
        for r in &rows {
            max_number = max_number.max(r.number);
            if docs.iter().any(|d| d.path == r.file_path) {
                continue;
            }
            let ms = date::parse_ms(&r.recorded_at).unwrap_or(0);
            let mut d = decision_from(
                r.file_path.clone(),
                &r.text,
                Origin::DatabaseOnly,
                ms,
                Some(r),
            );
            // The row's number is the one it was recorded under, whatever its text says.
            d.number = Some(r.number);
            d.kind = Kind::Adr;
            decisions.push(d);
        }
        let index = Index::new(decisions.iter().map(Decision::fields).collect());
        Corpus {
            decisions,
            max_number,
            index,
        }
    }

    /// Every record ordered newest first (by date, then number, then path).
    fn newest_first(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.decisions.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&self.decisions[a], &self.decisions[b]);
            y.recency_ms
                .cmp(&x.recency_ms)
                .then(y.number.cmp(&x.number))
                .then(x.path.cmp(&y.path))
        });
        order
    }

    /// Ranks the corpus for `q`.
    ///
    /// - No text and no path: every record, newest first.
    /// - Text: BM25F over the fields, plus 3 when a path-like word is covered by one of
    ///   the record's globs (directly or through a directory above it) or holds one.
    /// - Path: 5 when a glob covers the path itself, 3 when it covers a directory above
    ///   it or the path is a directory holding a glob, plus 0.2 per literal segment of
    ///   that glob (at most 1), so an exact-file record beats a crate-wide one.
    ///
    /// Only records with a positive score are hits; the status filter applies last.
    pub fn search(&self, q: &Query<'_>) -> Ranking {
        let mut ranking = Ranking::default();
        let text = q.text.map(str::trim).filter(|t| !t.is_empty());
        let path = q.path.and_then(normalize_path);
        let mut hits: Vec<Hit> = Vec::new();
        if text.is_none() && path.is_none() {
            hits = self
                .newest_first()
                .into_iter()
                .map(|doc| Hit {
                    doc,
                    score: 0.0,
                    reasons: Vec::new(),
                })
                .collect();
        } else {
            let terms = text.map(text::distinct_terms).unwrap_or_default();
            let term_list: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();
            ranking.words = terms.iter().map(|(_, w)| w.clone()).collect();
            ranking.path_words = text
                .map(|t| {
                    t.split(|c: char| c.is_whitespace() || c == ',')
                        .map(|w| w.trim_matches(|c: char| "'\"`()[]{}<>;:!?".contains(c)))
                        .map(|w| w.trim_end_matches('.'))
                        .filter(|w| path_like(w))
                        .filter_map(normalize_path)
                        .collect()
                })
                .unwrap_or_default();
            for (doc, d) in self.decisions.iter().enumerate() {
                let scored = self.index.score(doc, &term_list);
                let mut score = scored.score;
                let mut reasons: Vec<String> = scored
                    .matched
                    .iter()
                    .map(|(field, ts)| {
                        let words: Vec<&str> = ts
                            .iter()
                            .map(|t| {
                                terms
                                    .iter()
                                    .find(|(term, _)| term == t)
                                    .map_or(t.as_str(), |(_, w)| w.as_str())
                            })
                            .collect();
                        format!("{}: {}", field.name(), words.join(", "))
                    })
                    .collect();
                if let Some((word, rel, glob)) = ranking
                    .path_words
                    .iter()
                    .find_map(|w| relate(&d.affected_paths, w).map(|(r, g)| (w, r, g)))
                {
                    score += 3.0;
                    reasons.push(relation_reason(&rel, glob, word));
                }
                if let Some(p) = &path
                    && let Some((rel, glob)) = relate(&d.affected_paths, p)
                {
                    score += match rel {
                        Relation::Covers => 5.0,
                        Relation::Ancestor(_) | Relation::Holds => 3.0,
                    } + glob.specificity();
                    reasons.push(relation_reason(&rel, glob, p));
                }
                if score > 0.0 {
                    hits.push(Hit {
                        doc,
                        score: round2(score),
                        reasons,
                    });
                }
            }
            hits.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
                    .then(
                        self.decisions[b.doc]
                            .recency_ms
                            .cmp(&self.decisions[a.doc].recency_ms),
                    )
                    .then(self.decisions[a.doc].path.cmp(&self.decisions[b.doc].path))
            });
        }
        ranking.matched = hits.len();
        for h in &hits {
            let s = self.decisions[h.doc]
                .status
                .clone()
                .unwrap_or_else(|| "none".into());
            match ranking.matched_statuses.iter_mut().find(|(k, _)| *k == s) {
                Some((_, n)) => *n += 1,
                None => ranking.matched_statuses.push((s, 1)),
            }
        }
        if let Some(status) = q.status {
            hits.retain(|h| self.decisions[h.doc].status.as_deref() == Some(status));
        }
        ranking.hits = hits;
        ranking
    }
}

fn relation_reason(rel: &Relation, glob: &PathGlob, path: &str) -> String {
    match rel {
        Relation::Covers => format!("affected_path '{}' covers {path}", glob.raw),
        Relation::Ancestor(dir) => {
            format!("affected_path '{}' covers {dir}, above {path}", glob.raw)
        }
        Relation::Holds => format!("{path} holds affected_path '{}'", glob.raw),
    }
}

/// The symbol [`rank_invariants_for_symbol`] is asked about.
#[derive(Clone, Copy, Debug, Default)]
pub struct SymbolInfo<'a> {
    pub name: &'a str,
    /// `crate::module::Type::name` (or `module.name` in other languages).
    pub qualified_name: &'a str,
    /// Project-relative path of its definition.
    pub file_path: &'a str,
    pub docstring: Option<&'a str>,
}

/// A decision that constrains a symbol.
#[derive(Clone, Debug, PartialEq)]
pub struct Invariant {
    pub number: Option<u32>,
    pub title: String,
    /// The record's file, relative to the project root.
    pub file_path: String,
    /// Why it applies, e.g. `affected_path 'host/db/**' covers host/db/src/lib.rs; text: schema`.
    pub reason: String,
    /// Rounded to two decimals.
    pub score: f64,
}

/// A lone weak text match must not be stretched to the full 3 points: text scores are
/// divided by the best one, but never by less than this.
const TEXT_NORM_FLOOR: f64 = 3.0;
/// Below this an invariant is noise.
const MIN_INVARIANT_SCORE: f64 = 0.5;

/// The decision records (`docs/adr` and rows, not learnings or plans) that bear on
/// `symbol`, best first. Scoring, per record:
///
/// - +5 when an `affected_paths` glob covers the symbol's file, else +3 when one covers a
///   directory above it;
/// - else +2 when one covers the file of a 1-hop neighbour (`neighbour_files`: the
///   files of its callers, callees, implemented traits, instantiated types);
/// - +0.2 per literal path segment of the glob that matched (at most +1), so an
///   exact-file record beats a crate-wide one;
/// - plus a BM25F match of the symbol's name words, module path and docstring against
///   the record, normalised to 0..3 (the best match in the corpus gets 3).
///
/// Records scoring under 0.5 are left out. `inspect_symbol` shows the first three.
pub fn rank_invariants_for_symbol(
    corpus: &Corpus,
    symbol: &SymbolInfo<'_>,
    neighbour_files: &[String],
) -> Vec<Invariant> {
    let file = normalize_path(symbol.file_path).unwrap_or_default();
    let module: Vec<&str> = symbol
        .qualified_name
        .split("::")
        .flat_map(|s| s.split('.'))
        .collect();
    let module_path = module[..module.len().saturating_sub(1)].join(" ");
    let query = format!(
        "{} {} {}",
        symbol.name,
        module_path,
        symbol.docstring.unwrap_or("")
    );
    let terms = text::distinct_terms(&query);
    let term_list: Vec<String> = terms.iter().map(|(t, _)| t.clone()).collect();
    let adrs: Vec<usize> = (0..corpus.decisions.len())
        .filter(|&i| corpus.decisions[i].kind == Kind::Adr)
        .collect();
    let text_scores: Vec<bm25::Scored> = adrs
        .iter()
        .map(|&i| corpus.index.score(i, &term_list))
        .collect();
    let best = text_scores
        .iter()
        .map(|s| s.score)
        .fold(0.0, f64::max)
        .max(TEXT_NORM_FLOOR);
    let neighbours: Vec<String> = neighbour_files
        .iter()
        .filter_map(|n| normalize_path(n))
        .filter(|n| *n != file)
        .collect();
    let mut out = Vec::new();
    for (&i, scored) in adrs.iter().zip(&text_scores) {
        let d = &corpus.decisions[i];
        let mut score = 0.0;
        let mut reasons = Vec::new();
        let own = (!file.is_empty())
            .then(|| relate(&d.affected_paths, &file))
            .flatten()
            .filter(|(r, _)| *r != Relation::Holds);
        if let Some((rel, glob)) = own {
            score += if rel == Relation::Covers { 5.0 } else { 3.0 } + glob.specificity();
            reasons.push(relation_reason(&rel, glob, &file));
        } else if let Some((n, glob)) = neighbours.iter().find_map(|n| {
            relate(&d.affected_paths, n)
                .filter(|(r, _)| *r != Relation::Holds)
                .map(|(_, g)| (n, g))
        }) {
            score += 2.0 + glob.specificity();
            reasons.push(format!("affected_path '{}' covers neighbour {n}", glob.raw));
        }
        if scored.score > 0.0 {
            score += 3.0 * scored.score / best;
            // In query order: the symbol's own name words first.
            let words: Vec<&str> = terms
                .iter()
                .filter(|(t, _)| scored.matched.iter().any(|(_, ts)| ts.contains(t)))
                .map(|(_, w)| w.as_str())
                .collect();
            reasons.push(format!("text: {}", words.join(", ")));
        }
        if score >= MIN_INVARIANT_SCORE {
            out.push(Invariant {
                number: d.number,
                title: d.title.clone(),
                file_path: d.path.clone(),
                reason: reasons.join("; "),
                score: round2(score),
            });
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.number.cmp(&b.number)));
    out
}

#[cfg(test)]
mod tests;
