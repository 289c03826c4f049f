//! Token counting: cl100k_base, loaded once.
//!
//! Routers count through the host (the `tokens` WIT interface) so that what they fit
//! and what the host measures are the same number.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

static BPE: OnceLock<CoreBPE> = OnceLock::new();

/// Loads the tokenizer (~80 ms); call at start-up so no request pays for it.
pub fn warm_up() {
    bpe();
}

fn bpe() -> &'static CoreBPE {
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("cl100k_base is embedded in tiktoken-rs"))
}

pub fn count(text: &str) -> u32 {
    bpe().encode_ordinary(text).len() as u32
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_cl100k_tokens() {
        assert_eq!(super::count(""), 0);
        assert_eq!(super::count("hello world"), 2);
        assert!(super::count(&"find_references ".repeat(100)) >= 200);
    }
}
