//! Receipts: what the operator approved, bound to the exact bytes approved.
//!
//! `scryer plugin add` records one per installed plugin inside that plugin's policy entry,
//! so the sha256 of the wasm is bound to the grants beside it. At load the bytes are hashed
//! again; different bytes are refused until they are added (approved) again.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The sha256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What was approved: the bytes (by hash) and what they declared at the time.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// sha256 of the approved wasm, lowercase hex.
    pub sha256: String,
    /// The version the plugin described itself as.
    pub version: String,
    /// The `scryer:router` WIT version it was built against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wit: Option<String>,
    /// Capabilities its imports need (read from the component, not from a manifest).
    #[serde(default)]
    pub needs: Vec<String>,
    /// The tools it declared.
    #[serde(default)]
    pub tools: Vec<String>,
    /// When it was approved, seconds since the Unix epoch.
    #[serde(default)]
    pub approved_at: u64,
}

impl Receipt {
    /// Checks `bytes` against the approved hash; the error says both hashes and what to do.
    pub fn check(&self, name: &str, bytes: &[u8]) -> Result<(), String> {
        let actual = sha256_hex(bytes);
        if actual.eq_ignore_ascii_case(self.sha256.trim()) {
            Ok(())
        } else {
            Err(format!(
                "the bytes of plugin `{name}` no longer match its receipt (sha256 {actual}, approved {}); \
                 they changed after `scryer plugin add`. Approve the new bytes with `scryer plugin add <file>`",
                self.sha256
            ))
        }
    }
}

/// Seconds since the Unix epoch, for `approved_at`.
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt_for(bytes: &[u8]) -> Receipt {
        Receipt {
            sha256: sha256_hex(bytes),
            version: "1.0.0".into(),
            wit: Some("0.1.0".into()),
            needs: vec!["tokens".into()],
            tools: vec!["ok".into()],
            approved_at: 1,
        }
    }

    #[test]
    fn the_approved_bytes_pass_and_any_other_bytes_are_refused_naming_both_hashes() {
        let r = receipt_for(b"approved");
        assert!(r.check("p", b"approved").is_ok());
        let e = r.check("p", b"approved!").unwrap_err();
        assert!(
            e.contains(&sha256_hex(b"approved!")) && e.contains(&r.sha256),
            "{e}"
        );
        assert!(e.contains("scryer plugin add"), "{e}");
    }

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
