//! The one tokenizer used for symbols and for queries, so a query word meets the
//! indexed words exactly.
//!
//! A *word* is a run of letters, digits and `_` (anything else separates words). A word
//! gives its parts, split at `_` and at case changes (`HashMapRef` → `hash`, `map`,
//! `ref`; `HTTPServer` → `http`, `server`; `Utf8Error` → `utf8`, `error`), all
//! lower-cased, plus the whole word lower-cased when that differs from its only part.
//!
//! Characters that cannot be part of a search are dropped before words are formed:
//! control characters (NUL included), the non-characters U+FFFE/U+FFFF (and the rest of
//! the Unicode non-characters), and combining marks that do not follow a letter or digit.

/// A word is cut after this many characters (the rest of its run is skipped): nobody
/// searches for a 64-character identifier by more than its start, and it bounds the
/// work per word.
pub const MAX_WORD_CHARS: usize = 64;

/// Only this many distinct terms of a query are searched.
pub const MAX_QUERY_TERMS: usize = 64;

/// Only this prefix of a query is read (cut at a character boundary), so a huge query
/// costs no more than a long one.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// Whether `c` is dropped before tokenizing.
fn is_dropped(c: char) -> bool {
    let cp = c as u32;
    c.is_control()
        // Unicode non-characters: U+FDD0..U+FDEF and the last two code points of every plane.
        || (0xFDD0..=0xFDEF).contains(&cp)
        || cp & 0xFFFE == 0xFFFE
}

/// Combining marks (the common blocks) and zero-width joiners: kept inside a word,
/// dropped when lone.
fn is_combining(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F
        | 0x0483..=0x0489
        | 0x0591..=0x05BD
        | 0x0610..=0x061A
        | 0x064B..=0x065F
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E
        | 0x1AB0..=0x1AFF
        | 0x1DC0..=0x1DFF
        | 0x200C..=0x200D
        | 0x20D0..=0x20FF
        | 0x302A..=0x302F
        | 0x3099..=0x309A
        | 0xFE00..=0xFE0F
        | 0xFE20..=0xFE2F
        | 0xE0100..=0xE01EF)
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Calls `word` with every word of `text`, already cleaned and cut to
/// [`MAX_WORD_CHARS`]. `word` returns `false` to stop early.
fn for_each_word(text: &str, mut word: impl FnMut(&str) -> bool) {
    let mut buf = String::new();
    let mut chars_in_word = 0usize;
    for c in text.chars() {
        if is_dropped(c) {
            continue;
        }
        if is_word_char(c) || (is_combining(c) && chars_in_word > 0) {
            // Past the cut the run still belongs to this word: skip it, do not start a new one.
            if chars_in_word < MAX_WORD_CHARS {
                buf.push(c);
            }
            chars_in_word += 1;
            continue;
        }
        if chars_in_word > 0 {
            let go_on = word(&buf);
            buf.clear();
            chars_in_word = 0;
            if !go_on {
                return;
            }
        }
    }
    if chars_in_word > 0 {
        word(&buf);
    }
}

/// Splits one word at `_` and at case changes; parts keep their original case.
fn parts(word: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<(usize, char)> = piece.char_indices().collect();
        let mut start = 0usize;
        for i in 1..chars.len() {
            let prev = chars[i - 1].1;
            let cur = chars[i].1;
            let next = chars.get(i + 1).map(|&(_, c)| c);
            let lower_to_upper = (prev.is_lowercase() || prev.is_numeric()) && cur.is_uppercase();
            // The last capital of an acronym starts the next word: `HTTPServer` → `HTTP`, `Server`.
            let acronym_end =
                prev.is_uppercase() && cur.is_uppercase() && next.is_some_and(char::is_lowercase);
            if lower_to_upper || acronym_end {
                let at = chars[i].0;
                out.push(&piece[start..at]);
                start = at;
            }
        }
        out.push(&piece[start..]);
    }
    out
}

/// Lower-cased tokens of one word (see the module docs), in order.
fn word_tokens(word: &str, mut emit: impl FnMut(String) -> bool) -> bool {
    let parts = parts(word);
    let whole = word.to_lowercase();
    let mut single_part = None;
    if parts.len() == 1 {
        single_part = Some(parts[0].to_lowercase());
    }
    for p in &parts {
        if !emit(p.to_lowercase()) {
            return false;
        }
    }
    let has_alnum = whole.chars().any(char::is_alphanumeric);
    if has_alnum && single_part.as_deref() != Some(whole.as_str()) {
        return emit(whole);
    }
    true
}

/// Every token of `text`, in order, repeats included (term frequency counts).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| {
        word_tokens(w, |t| {
            out.push(t);
            true
        })
    });
    out
}

/// The distinct terms of a query, in order of first appearance: at most
/// [`MAX_QUERY_TERMS`], read from at most [`MAX_QUERY_BYTES`] of it.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for_each_word(query_prefix(query), |w| {
        word_tokens(w, |t| {
            if !out.contains(&t) {
                out.push(t);
            }
            out.len() < MAX_QUERY_TERMS
        })
    });
    out
}

/// The words of `text` joined without separators and lower-cased, `_` removed:
/// `HashMapRef`, `hash_map_ref` and `hash map ref` all give `hashmapref`. Used to
/// recognise a query that spells a symbol's whole name.
pub fn compact(text: &str) -> String {
    let mut out = String::new();
    for_each_word(text, |w| {
        out.extend(w.chars().filter(|&c| c != '_').flat_map(char::to_lowercase));
        // A compact key this long matches no identifier anyone types; stop reading.
        out.len() <= 4 * MAX_WORD_CHARS
    });
    out
}

/// The part of a query that is read.
pub fn query_prefix(query: &str) -> &str {
    if query.len() <= MAX_QUERY_BYTES {
        return query;
    }
    let mut end = MAX_QUERY_BYTES;
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    &query[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_on_case_and_underscores_and_keep_the_whole_name() {
        assert_eq!(tokenize("HashMapRef"), ["hash", "map", "ref", "hashmapref"]);
        assert_eq!(tokenize("hash_map"), ["hash", "map", "hash_map"]);
        assert_eq!(tokenize("HTTPServer"), ["http", "server", "httpserver"]);
        assert_eq!(tokenize("Utf8Error"), ["utf8", "error", "utf8error"]);
        assert_eq!(tokenize("spawn"), ["spawn"]);
        assert_eq!(tokenize("_private"), ["private", "_private"]);
        assert_eq!(tokenize("MAX_LEN"), ["max", "len", "max_len"]);
    }

    #[test]
    fn punctuation_separates_words() {
        assert_eq!(
            tokenize("tokio::sync::Mutex<T>"),
            ["tokio", "sync", "mutex", "t"]
        );
        assert_eq!(
            tokenize("fn spawn(f: F) -> JoinHandle"),
            ["fn", "spawn", "f", "f", "join", "handle", "joinhandle"]
        );
        assert!(tokenize("::<>() -> &'_").is_empty());
    }

    #[test]
    fn bad_characters_are_dropped() {
        assert_eq!(tokenize("Hash\0Map"), ["hash", "map", "hashmap"]);
        assert_eq!(tokenize("a\u{FFFE}b\u{FFFF}"), ["ab"]);
        // A lone combining mark is dropped; one after a letter stays part of the word.
        assert!(tokenize("\u{0301}\u{0301}").is_empty());
        assert_eq!(tokenize(" \u{0301}cafe"), ["cafe"]);
        assert_eq!(tokenize("cafe\u{0301}"), ["cafe\u{0301}"]);
        assert!(query_terms("\u{1}\u{7f}\u{9f}").is_empty());
    }

    #[test]
    fn non_latin_words_are_words() {
        assert_eq!(tokenize("größe Ärger"), ["größe", "ärger"]);
        assert_eq!(tokenize("数据库"), ["数据库"]);
    }

    #[test]
    fn long_words_are_cut_and_queries_capped() {
        let long = "a".repeat(1000);
        let toks = tokenize(&format!("{long} b"));
        assert_eq!(toks, ["a".repeat(MAX_WORD_CHARS), "b".to_string()]);

        let many: String = (0..500).map(|i| format!("w{i} ")).collect();
        let terms = query_terms(&many);
        assert_eq!(terms.len(), MAX_QUERY_TERMS);
        assert_eq!(terms[0], "w0");
        assert_eq!(terms[63], "w63");
        // Repeats count once.
        assert_eq!(query_terms("map Map MAP map_x"), ["map", "x", "map_x"]);
    }

    #[test]
    fn query_prefix_cuts_at_a_char_boundary() {
        let q = "é".repeat(MAX_QUERY_BYTES); // two bytes each
        let p = query_prefix(&q);
        assert!(p.len() <= MAX_QUERY_BYTES && p.len() >= MAX_QUERY_BYTES - 1);
        assert_eq!(query_prefix("short"), "short");
    }

    #[test]
    fn compact_ignores_case_separators_and_underscores() {
        assert_eq!(compact("HashMapRef"), "hashmapref");
        assert_eq!(compact("hash map ref"), "hashmapref");
        assert_eq!(compact("hash_map_ref"), "hashmapref");
        assert_eq!(compact("::"), "");
    }
}
