//! The Rust extractor ([`crate::rust_lang`]) behind the [`Language`] trait.

use super::Language;
use crate::model::FileSymbols;
use crate::rust_lang;

pub struct Rust;

impl Language for Rust {
    fn name(&self) -> &'static str {
        "rust"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &["rs"]
    }

    fn manifest(&self) -> Option<super::Manifest> {
        Some(super::Manifest {
            file_name: "Cargo.toml",
            package_name: crate::indexer::crate_name_of,
        })
    }

    fn project_markers(&self) -> &'static [&'static str] {
        &["Cargo.toml"]
    }

    fn module_path(&self, package: &str, relative_path: &str) -> Vec<String> {
        rust_lang::module_path_for(package, relative_path)
    }

    fn extract(&self, source: &str, module_path: &[String], _path: &str) -> FileSymbols {
        rust_lang::extract(source, module_path)
    }

    fn extract_edited(&self, source: &str, module_path: &[String], path: &str) -> FileSymbols {
        rust_lang::extract_edited(source, module_path, path)
    }
}
