//! A SCIP index read one document at a time.
//!
//! An `Index` message is a metadata field (1), repeated documents (2) and repeated
//! external symbols (3). Parsing it whole (`Index::parse_from_reader`) holds every
//! document at once (tens of MB for tokio); here protobuf's stream reader walks the
//! top-level fields and parses each document as the `scip` crate's `Document`, hands it
//! on and drops it. Local symbols (`local N`) are left out: they name a function's
//! locals, never a definition scryer answers about.

use std::path::Path;

use anyhow::{Context, Result};
use protobuf::CodedInputStream;
use scip::types::{Document, Metadata};

/// What the index says about who wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScipMetadata {
    pub tool_name: String,
    pub tool_version: String,
    /// `file://` URI of the indexed root.
    pub project_root: String,
}

/// One occurrence, 1-based lines and columns (columns as the indexer counts them), in
/// the shape the database stores it: `roles` are SCIP `SymbolRole` bits (1 definition,
/// 2 import, 4 write, 8 read, ...), `enclosing` the enclosing definition's start and end
/// line when given.
pub use scryer_db::PreciseOccurrenceRow as ScipOccurrence;

/// The symbol every local occurrence is stored under.
pub const LOCAL: &str = "local";

pub const ROLE_DEFINITION: i32 = 1;
pub const ROLE_IMPORT: i32 = 2;
pub const ROLE_WRITE: i32 = 4;

/// One document: its path relative to the project root and its global occurrences.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScipDocument {
    pub path: String,
    pub occurrences: Vec<ScipOccurrence>,
}

/// What the reader hands on, in file order.
#[derive(Debug)]
pub enum ScipItem {
    Metadata(ScipMetadata),
    Document(ScipDocument),
}

/// Reads `path`, calling `each` for the metadata and every document in turn; stops at
/// the first error `each` returns. Blocking: run it on a blocking thread.
pub fn read_scip(path: &Path, mut each: impl FnMut(ScipItem) -> Result<()>) -> Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    let mut input = CodedInputStream::new(&mut reader);
    let bad = |e: protobuf::Error| anyhow::anyhow!("{} is not a SCIP index: {e}", path.display());
    while let Some(tag) = input.read_raw_tag_or_eof().map_err(bad)? {
        match tag {
            // field 1, length-delimited: metadata
            10 => {
                let m: Metadata = input.read_message().map_err(bad)?;
                let tool = m.tool_info.as_ref();
                each(ScipItem::Metadata(ScipMetadata {
                    tool_name: tool.map(|t| t.name.clone()).unwrap_or_default(),
                    tool_version: tool.map(|t| t.version.clone()).unwrap_or_default(),
                    project_root: m.project_root.clone(),
                }))?;
            }
            // field 2, length-delimited: one document
            18 => {
                let d: Document = input.read_message().map_err(bad)?;
                each(ScipItem::Document(document(d)))?;
            }
            other => {
                let wire = protobuf::rt::WireType::new(other & 7)
                    .with_context(|| format!("{}: bad wire type in tag {other}", path.display()))?;
                input.skip_field(wire).map_err(bad)?;
            }
        }
    }
    Ok(())
}

fn document(d: Document) -> ScipDocument {
    let occurrences = d
        .occurrences
        .into_iter()
        .filter(|o| !o.symbol.is_empty())
        .filter_map(|mut o| {
            if scip::symbol::is_local_symbol(&o.symbol) {
                o.symbol = LOCAL.into();
            }
            let (line, column, end_line, end_column) = match o.range[..] {
                [l, c, ec] => (l, c, l, ec),
                [l, c, el, ec] => (l, c, el, ec),
                _ => return None,
            };
            let enclosing = match o.enclosing_range[..] {
                [l, _, _] => Some((l as u32 + 1, l as u32 + 1)),
                [l, _, el, _] => Some((l as u32 + 1, el as u32 + 1)),
                _ => None,
            };
            Some(ScipOccurrence {
                symbol: o.symbol,
                line: line as u32 + 1,
                column: column as u32 + 1,
                end_line: end_line as u32 + 1,
                end_column: end_column as u32 + 1,
                roles: o.symbol_roles,
                enclosing,
            })
        })
        .collect();
    ScipDocument {
        path: d.relative_path,
        occurrences,
    }
}

/// The name a SCIP symbol's last descriptor gives it (`spawn` in
/// `rust-analyzer cargo tokio 1.0 runtime/Runtime#spawn().`), when it parses.
pub fn symbol_name(symbol: &str) -> Option<String> {
    let parsed = super::symbol::parse_symbol(symbol)?;
    parsed.descriptors.last().map(|d| d.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use protobuf::Message;
    use scip::types::{Index, Occurrence, ToolInfo};

    fn occurrence(symbol: &str, range: &[i32], roles: i32) -> Occurrence {
        let mut o = Occurrence::new();
        o.symbol = symbol.into();
        o.range = range.to_vec();
        o.symbol_roles = roles;
        o
    }

    #[test]
    fn documents_stream_in_order_without_locals() {
        let mut index = Index::new();
        let mut meta = Metadata::new();
        let mut tool = ToolInfo::new();
        tool.name = "rust-analyzer".into();
        tool.version = "1.95.0".into();
        meta.tool_info = Some(tool).into();
        index.metadata = Some(meta).into();
        let sym = "rust-analyzer cargo demo 0.1.0 util/describe().";
        for (path, occs) in [
            (
                "src/util.rs",
                vec![
                    occurrence(sym, &[5, 7, 15], 1),
                    occurrence("local 3", &[6, 4, 5], 0),
                ],
            ),
            ("src/lib.rs", vec![occurrence(sym, &[2, 4, 3, 12], 0)]),
        ] {
            let mut d = Document::new();
            d.relative_path = path.into();
            d.occurrences = occs;
            index.documents.push(d);
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("index.scip");
        std::fs::write(&file, index.write_to_bytes().unwrap()).unwrap();

        let mut seen = Vec::new();
        read_scip(&file, |item| {
            seen.push(item);
            Ok(())
        })
        .unwrap();
        let ScipItem::Metadata(m) = &seen[0] else {
            panic!("{seen:?}")
        };
        assert_eq!(
            (m.tool_name.as_str(), m.tool_version.as_str()),
            ("rust-analyzer", "1.95.0")
        );
        let docs: Vec<&ScipDocument> = seen
            .iter()
            .filter_map(|i| match i {
                ScipItem::Document(d) => Some(d),
                _ => None,
            })
            .collect();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].path, "src/util.rs");
        assert_eq!(docs[0].occurrences.len(), 2);
        assert_eq!(
            docs[0].occurrences[1].symbol, LOCAL,
            "locals keep only their place"
        );
        let def = &docs[0].occurrences[0];
        assert_eq!(
            (def.line, def.column, def.end_column, def.roles),
            (6, 8, 16, 1)
        );
        let r = &docs[1].occurrences[0];
        assert_eq!((r.line, r.column, r.end_line, r.end_column), (3, 5, 4, 13));
        assert_eq!(symbol_name(sym).as_deref(), Some("describe"));
    }

    #[test]
    fn a_file_that_is_not_scip_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.scip");
        std::fs::write(&file, b"\xff\xff\xff\xff not protobuf").unwrap();
        let e = read_scip(&file, |_| Ok(())).unwrap_err();
        assert!(format!("{e:#}").contains("not a SCIP index"), "{e:#}");
    }
}
