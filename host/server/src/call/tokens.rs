//! Token counting: cl100k_base, loaded once.
//!
//! Routers count through the host (the `tokens` WIT interface) so that what they fit
//! and what the host measures are the same number. Counting is on every call's path
//! (budget fitting renders and counts an answer several times): `bpe-openai` counts
//! what tiktoken counts, several times faster (the test below holds them equal).

use bpe_openai::Tokenizer;

/// Loads the tokenizer; call at start-up so no request pays for it.
pub fn warm_up() {
    bpe();
}

fn bpe() -> &'static Tokenizer {
    bpe_openai::cl100k_base()
}

pub fn count(text: &str) -> u32 {
    bpe().count(text) as u32
}

#[cfg(test)]
mod tests {
    use std::path::Path;

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
