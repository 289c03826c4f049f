//! How a reference's kind is stored: a small integer, not its name (ADR 0042).
//!
//! The kinds are the index engine's closed set (`ReferenceKind`). Stored as codes, a
//! kind costs a row one byte instead of four to eleven, and it fits in the name index
//! (`ref_site_by_name_file_kind`) at a byte an entry: "how many of this name's uses in
//! each file are calls" is then read off the index alone. A kind this list does not
//! know is stored as its text (the column takes both) and read back as it was.

use turso::Value;

/// Every kind the engine extracts; a kind's code is its place here. The first two are
/// the calls (codes 0 and 1 cost a row no byte at all). Append only: a stored code
/// means what it meant when it was written.
const KINDS: [&str; 9] = [
    "call",
    "method_call",
    "field",
    "type",
    "path",
    "use",
    "macro",
    "macro_token",
    "implements",
];

/// The value a reference of `kind` stores.
pub(crate) fn stored(kind: &str) -> Value {
    match KINDS.iter().position(|k| *k == kind) {
        Some(code) => Value::Integer(code as i64),
        None => Value::Text(kind.to_string()),
    }
}

/// The kind a stored value names.
pub(crate) fn read(value: &Value) -> String {
    match value {
        Value::Integer(code) => usize::try_from(*code)
            .ok()
            .and_then(|c| KINDS.get(c))
            .map_or_else(|| format!("kind {code}"), |k| k.to_string()),
        Value::Text(kind) => kind.clone(),
        _ => String::new(),
    }
}

/// Whether `kind` is stored as a code (every kind the engine extracts should be).
pub fn ref_kind_has_code(kind: &str) -> bool {
    KINDS.contains(&kind)
}

/// A set of kinds as bits of a `u64`: bit `code` for a kind stored as a code, the top
/// bit for every other (a file's kinds, `NameUses::kinds`; tested against the kinds a
/// read wants).
pub fn kind_bits<'a>(kinds: impl IntoIterator<Item = &'a str>) -> u64 {
    kinds
        .into_iter()
        .map(|k| bit_of(&stored(k)))
        .fold(0, |a, b| a | b)
}

/// The bit of one stored kind value in [`kind_bits`]' sets.
pub(crate) fn bit_of(value: &Value) -> u64 {
    match value {
        Value::Integer(code) if (0..63).contains(code) => 1 << code,
        _ => 1 << 63,
    }
}

/// Whether a stored value is a call's (`call`, `method_call`).
pub(crate) fn is_call(value: &Value) -> bool {
    matches!(value, Value::Integer(0 | 1))
}

/// The SQL list of the call kinds' stored values, for `kind IN (..)`: written out, so the
/// planner can match the partial index on call references (`ref_site_calls_by_caller`).
pub(crate) const CALLS_SQL: &str = "0, 1";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_set_holds_each_kind_apart_and_every_unknown_kind_together() {
        assert_eq!(kind_bits(["call"]), 1);
        assert_eq!(kind_bits(["use", "implements"]), (1 << 5) | (1 << 8));
        let all = kind_bits(KINDS);
        assert_eq!(all.count_ones() as usize, KINDS.len());
        assert_eq!(kind_bits(["something_new"]), 1 << 63);
        assert_eq!(kind_bits(["x", "y"]), kind_bits(["z"]));
        assert_eq!(all & kind_bits(["x"]), 0);
        for k in KINDS {
            assert_eq!(bit_of(&stored(k)), kind_bits([k]));
        }
    }

    #[test]
    fn every_kind_reads_back_as_it_was_stored() {
        for kind in KINDS.iter().copied().chain(["something_new", ""]) {
            assert_eq!(read(&stored(kind)), kind);
        }
        // The calls are the ones the call list and the check name.
        let calls: Vec<&str> = KINDS
            .iter()
            .copied()
            .filter(|k| is_call(&stored(k)))
            .collect();
        assert_eq!(calls, crate::CALL_SITE_KINDS);
        let listed: Vec<Value> = crate::CALL_SITE_KINDS.iter().map(|k| stored(k)).collect();
        assert_eq!(
            CALLS_SQL,
            listed
                .iter()
                .map(|v| match v {
                    Value::Integer(c) => c.to_string(),
                    _ => unreachable!(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        );
        // The partial index on call references names the same codes.
        assert!(
            crate::edges::CALLS_BY_CALLER.ends_with(&format!("WHERE kind IN ({CALLS_SQL})")),
            "{}",
            crate::edges::CALLS_BY_CALLER
        );
    }
}
