//! What one indexer run reads, as one digest: the scheduler compares it with the last
//! run's and does not run an indexer again over the same inputs (ADR 0055).

use std::path::Path;

use super::Indexer;

/// A digest of what `indexer` reads in the project at `root`: the language's source
/// files (`files`: path and content hash as the tree-sitter index holds them, in any
/// order), the root files it reads besides them ([`super::PreciseLanguage::root_inputs`]:
/// present or not, size and modification time), the indexer's command and version, and
/// how this build stores a run ([`scryer_db::PRECISE_STORE_LAYOUT`]).
///
/// Sources by their stored hashes, not read again: the index is what the precise data is
/// checked against (a file whose hash moved reads as edited since the run), and reading
/// 17,000 files to learn nothing changed is the cost this saves. The root files are not
/// in the index, so they go by their stamps.
pub fn inputs_digest<'a>(
    root: &Path,
    indexer: &Indexer,
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let mut h = blake3::Hasher::new();
    let mut field = |bytes: &[u8]| {
        h.update(&(bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    // How this build stores a run: a run an earlier build stored is not the run this
    // one would store.
    field(&scryer_db::PRECISE_STORE_LAYOUT.to_le_bytes());
    field(indexer.language.name().as_bytes());
    field(indexer.version.as_bytes());
    for part in &indexer.command {
        field(part.as_bytes());
    }
    for name in indexer.language.root_inputs() {
        field(name.as_bytes());
        let stamp = match std::fs::metadata(root.join(name)) {
            Ok(m) => {
                let modified = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{} {modified}", m.len())
            }
            Err(_) => "absent".to_string(),
        };
        field(stamp.as_bytes());
    }
    let mut files: Vec<(&str, &str)> = files.into_iter().collect();
    files.sort_unstable();
    field(&(files.len() as u64).to_le_bytes());
    for (path, hash) in files {
        field(path.as_bytes());
        field(hash.as_bytes());
    }
    h.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::precise::PreciseLanguage;

    fn rust_analyzer(version: &str) -> Indexer {
        Indexer {
            language: PreciseLanguage::Rust,
            command: vec!["rust-analyzer".into()],
            version: version.into(),
        }
    }

    #[test]
    fn the_digest_moves_with_a_source_a_root_file_or_the_indexer_and_not_with_order() {
        let dir = tempfile::tempdir().unwrap();
        let ra = rust_analyzer("1.0");
        let files = [("src/lib.rs", "h1"), ("src/a.rs", "h2")];
        let base = inputs_digest(dir.path(), &ra, files);
        // The same files in another order, and a file of no root input: the same.
        std::fs::write(dir.path().join("README.md"), "x").unwrap();
        assert_eq!(inputs_digest(dir.path(), &ra, [files[1], files[0]]), base);
        // A source's hash, a source more, the indexer's version: another digest.
        assert_ne!(
            inputs_digest(dir.path(), &ra, [files[0], ("src/a.rs", "h3")]),
            base
        );
        assert_ne!(
            inputs_digest(dir.path(), &ra, [files[0], files[1], ("src/b.rs", "h4")]),
            base
        );
        assert_ne!(
            inputs_digest(dir.path(), &rust_analyzer("1.1"), files),
            base
        );
        // A root file the indexer reads appears, then changes size.
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\n").unwrap();
        let with_manifest = inputs_digest(dir.path(), &ra, files);
        assert_ne!(with_manifest, base);
        assert_eq!(inputs_digest(dir.path(), &ra, files), with_manifest);
        std::fs::write(dir.path().join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
        assert_ne!(inputs_digest(dir.path(), &ra, files), with_manifest);
        // Field boundaries count: moving a byte from a path to its hash is another input.
        assert_ne!(
            inputs_digest(dir.path(), &ra, [("ab", "c")]),
            inputs_digest(dir.path(), &ra, [("a", "bc")])
        );
    }
}
