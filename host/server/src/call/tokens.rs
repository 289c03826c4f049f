//! Token counting: cl100k_base, loaded once.
//!
//! Routers count through the host (the `tokens` WIT interface) so that what they fit
//! and what the host measures are the same number. Counting is on every call's path
//! (budget fitting renders and counts an answer several times): `bpe-openai` counts
//! what tiktoken counts, several times faster (the test below holds them equal).
//!
//! The text is split into pieces here rather than by `bpe-openai`'s own splitter, with
//! the same patterns, for two reasons measured on answers (docs/learnings/latency.md,
//! stop 30): its regex takes a search cache from a shared pool once per piece, and on
//! any thread but the pool's first that is a locked slow path (6% of a traced call);
//! and an answer's pieces repeat (`"file_path"`, `":"`, the same paths), so each
//! thread keeps the counts of pieces it has seen instead of encoding them again.
//!
//! A whole answer is counted twice as a rule: by its router, fitting it (through the
//! host), and by the host enforcing the budget on the same text. The last texts counted
//! are kept with their counts, so the second count is a comparison (docs/learnings/
//! scale.md, stop 45: counting was 13% of the daemon's CPU under load, a third of it the
//! host's second count).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::{LazyLock, Mutex};

use bpe_openai::Tokenizer;
use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

/// Loads the tokenizer; call at start-up so no request pays for it.
pub fn warm_up() {
    bpe();
    LazyLock::force(&SPLIT);
}

fn bpe() -> &'static Tokenizer {
    bpe_openai::cl100k_base()
}

/// cl100k's pre-tokenization, as `bpe-openai` 0.3 writes it: tiktoken's pattern with
/// its negative look-ahead `\s+(?!\S)` rewritten as a second pattern whose match
/// drops its last character (`bpe_openai::cl100k_base`).
static SPLIT: LazyLock<Regex> = LazyLock::new(|| {
    let words = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$";
    Regex::new_many(&[words, "\\s+\\s", "\\s+"]).expect("cl100k's split patterns")
});

/// The pattern (by index in [`SPLIT`]) whose match ends in one look-ahead character.
const LOOKAHEAD_PATTERN: usize = 1;

/// Pieces a thread keeps the counts of; past it the memo starts again (the pieces
/// that repeat come back at once). Every thread that counts keeps its own, so it stays
/// small: under 1 MB a thread.
const PIECES_KEPT: usize = 10_000;

/// Longest piece whose count is kept (longer ones rarely repeat).
const PIECE_KEPT_BYTES: usize = 64;

/// Whole texts kept with their counts: the answers of the calls in flight (a router's
/// last count and the host's come a few milliseconds apart).
const TEXTS_KEPT: usize = 32;

/// Texts shorter than this are counted again (a comparison saves nothing); longer ones
/// than the second are not kept (at most `TEXTS_KEPT` × 256 KiB held).
const TEXT_KEPT_BYTES: std::ops::Range<usize> = 512..256 * 1024;

thread_local! {
    static CACHE: RefCell<Cache> = RefCell::new(SPLIT.create_cache());
    static PIECES: RefCell<foldhash::HashMap<Box<str>, u32>> = RefCell::new(Default::default());
}

/// The last whole texts counted, newest last: (hash, text, count).
static TEXTS: Mutex<VecDeque<(u64, Box<str>, u32)>> = Mutex::new(VecDeque::new());

/// The texts' hasher: fixed, so equal texts hash equal on every thread.
static TEXT_HASH: LazyLock<foldhash::quality::FixedState> = LazyLock::new(Default::default);

/// `text`'s cl100k token count.
pub fn count(text: &str) -> u32 {
    if !TEXT_KEPT_BYTES.contains(&text.len()) {
        return count_pieces(text);
    }
    let hash = TEXT_HASH.hash_one(text);
    let kept = |texts: &VecDeque<(u64, Box<str>, u32)>| {
        texts
            .iter()
            .rev()
            .find(|(h, t, _)| *h == hash && **t == *text)
            .map(|&(_, _, n)| n)
    };
    if let Some(n) = kept(&TEXTS.lock().unwrap_or_else(|p| p.into_inner())) {
        tracing::trace!(target: "scryer::tokens", bytes = text.len(), kept = true, "counted");
        return n;
    }
    let n = count_pieces(text);
    tracing::trace!(target: "scryer::tokens", bytes = text.len(), kept = false, "counted");
    let mut texts = TEXTS.lock().unwrap_or_else(|p| p.into_inner());
    if texts.len() >= TEXTS_KEPT {
        texts.pop_front();
    }
    texts.push_back((hash, text.into(), n));
    n
}

/// `text`'s count, piece by piece.
fn count_pieces(text: &str) -> u32 {
    let bpe = &bpe().bpe;
    CACHE.with_borrow_mut(|cache| {
        PIECES.with_borrow_mut(|pieces| {
            let mut total = 0u32;
            let mut at = 0;
            while at < text.len() {
                let input = Input::new(&text[at..]).anchored(Anchored::Yes);
                let Some(m) = SPLIT.search_with(cache, &input) else {
                    break;
                };
                let mut end = at + m.end();
                if m.pattern().as_usize() == LOOKAHEAD_PATTERN {
                    let last = text[at..end].chars().next_back().map_or(0, char::len_utf8);
                    end -= last;
                }
                let piece = &text[at..end];
                total += piece_count(bpe, pieces, piece);
                at = end;
            }
            total
        })
    })
}

/// One piece's token count, from the thread's memo when it was seen.
fn piece_count(
    bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding,
    pieces: &mut foldhash::HashMap<Box<str>, u32>,
    piece: &str,
) -> u32 {
    if piece.len() > PIECE_KEPT_BYTES {
        return bpe.count(piece.as_bytes()) as u32;
    }
    if let Some(&n) = pieces.get(piece) {
        return n;
    }
    let n = bpe.count(piece.as_bytes()) as u32;
    if pieces.len() >= PIECES_KEPT {
        pieces.clear();
    }
    pieces.insert(piece.into(), n);
    n
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn counts_stay_right_when_the_piece_memo_fills_and_starts_again() {
        let reference = tiktoken_rs::cl100k_base().unwrap();
        let tiktoken = |t: &str| reference.encode_ordinary(t).len() as u32;
        let words: Vec<String> = (0..super::PIECES_KEPT + 5_000)
            .map(|i| format!(" w{i:x}q"))
            .collect();
        let text = words.concat();
        assert_eq!(super::count(&text), tiktoken(&text));
        let again = words[..100].concat();
        assert_eq!(super::count(&again), tiktoken(&again));
        assert!(super::PIECES.with_borrow(|p| p.len()) <= super::PIECES_KEPT);
    }

    #[test]
    fn a_text_counted_again_gets_its_kept_count_and_a_changed_one_its_own() {
        let reference = tiktoken_rs::cl100k_base().unwrap();
        let tiktoken = |t: &str| reference.encode_ordinary(t).len() as u32;
        let text: String = (0..200).map(|i| format!("{{\"line\":{i}}},")).collect();
        assert!(super::TEXT_KEPT_BYTES.contains(&text.len()));
        let n = super::count(&text);
        assert_eq!(n, tiktoken(&text));
        let kept = |t: &str| {
            super::TEXTS
                .lock()
                .unwrap()
                .iter()
                .any(|(_, k, c)| &**k == t && *c == n)
        };
        assert!(kept(&text), "the text is kept with its count");
        assert_eq!(super::count(&text), n);
        // Same length, one byte changed: counted on its own, not taken for the kept one.
        let changed = text.replacen("\"line\":7}", "\"line\":7 ", 1);
        assert_eq!(changed.len(), text.len());
        assert_eq!(super::count(&changed), tiktoken(&changed));
        assert_ne!(tiktoken(&changed), n);
        // Past the cap a text is counted, not kept.
        let long = "word ".repeat(super::TEXT_KEPT_BYTES.end / 5 + 1);
        assert_eq!(super::count(&long), tiktoken(&long));
        assert!(
            !super::TEXTS
                .lock()
                .unwrap()
                .iter()
                .any(|(_, k, _)| **k == *long)
        );
    }

    #[test]
    fn counts_cl100k_tokens() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
        assert!(super::count(&"find_references ".repeat(100)) >= 200);
    }

    /// Every source and document file of this repository, whole and line by line, plus
    /// the shapes answers take (compact JSON, aligned text, non-ASCII, trailing spaces):
    /// the same count as tiktoken's cl100k_base.
    #[test]
    fn counts_what_tiktoken_counts() {
        let reference = tiktoken_rs::cl100k_base().unwrap();
        let tiktoken = |t: &str| reference.encode_ordinary(t).len() as u32;
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut texts: Vec<String> = vec![
            r#"{"symbol":"Semaphore::new","items":[{"file_path":"src/a.rs","line":3}],"complete":true}"#.into(),
            "fn main() {\n    let x = 1;   \n\n\n    \t\r\n}\n  ".into(),
            "naïve café — 東京 ✓ 🙂 'll 've 're 123456789 x\u{a0}y\u{2028}z".into(),
            "   leading and trailing   ".into(),
            "\n\n\n".into(),
        ];
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                let name = entry.file_name().to_string_lossy().to_string();
                if path.is_dir() {
                    if !name.starts_with('.') && name != "target" {
                        stack.push(path);
                    }
                } else if [".rs", ".md", ".wit", ".toml"]
                    .iter()
                    .any(|ext| name.ends_with(ext))
                    && let Ok(text) = std::fs::read_to_string(&path)
                {
                    texts.push(text);
                }
            }
        }
        assert!(texts.len() > 100, "read {} files", texts.len());
        let mut checked = 0;
        for text in &texts {
            assert_eq!(super::count(text), tiktoken(text), "{text:.200}");
            for line in text.lines() {
                assert_eq!(super::count(line), tiktoken(line), "{line:?}");
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked} lines");
    }
}
