//! A record: many rows of one kind kept as one postcard blob, led by a layout number.
//! postcard does not name fields, so a record of another layout could decode into wrong
//! values; a reader gives the layout it reads, and a record of another is not read (the
//! caller falls back to the rows the record repeats). Used by the names' records
//! (`dense.rs`) and the precise occurrences per file (`precise.rs`).

use anyhow::Result;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A record's bytes: `layout`, then the rows.
pub(crate) fn encode<T: Serialize>(layout: u32, rows: &[T]) -> Result<Vec<u8>> {
    Ok(postcard::to_allocvec(&(layout, rows))?)
}

/// The rows of a record of `layout`, or why it does not read: another layout, or bytes
/// that are not a whole record of this one.
pub(crate) fn decode<T: DeserializeOwned>(layout: u32, bytes: &[u8]) -> Result<Vec<T>, String> {
    let (found, rest): (u32, &[u8]) =
        postcard::take_from_bytes(bytes).map_err(|e| e.to_string())?;
    if found != layout {
        return Err(format!("layout {found}, this build reads {layout}"));
    }
    match postcard::take_from_bytes::<Vec<T>>(rest) {
        Ok((rows, [])) => Ok(rows),
        Ok((_, left)) => Err(format!("{} bytes after the rows", left.len())),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_only_whole_and_of_its_layout() {
        let rows = [(1i64, 2u32), (300, 4)];
        let bytes = encode(7, &rows).unwrap();
        assert_eq!(decode::<(i64, u32)>(7, &bytes).unwrap(), rows);
        assert!(
            decode::<(i64, u32)>(8, &bytes)
                .unwrap_err()
                .contains("layout 7")
        );
        assert!(decode::<(i64, u32)>(7, &bytes[..bytes.len() - 1]).is_err());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(
            decode::<(i64, u32)>(7, &longer)
                .unwrap_err()
                .contains("1 bytes after")
        );
    }
}
