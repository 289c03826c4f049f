//! What the navigation logic needs from the host, as a trait, so the same logic runs
//! inside the component (over the WIT imports) and natively (tests, benchmarks).

use scryer_plugin_sdk::ToolResult;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sym {
    pub name: String,
    pub kind: String,
    pub qualified_name: String,
    pub owner: Option<String>,
    pub file_path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub docstring: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub file_path: String,
    pub line: u32,
    pub column: u32,
    pub kind: String,
    pub qualifier: Option<String>,
    pub enclosing_symbol: String,
    pub line_text: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    pub files: u32,
    pub parse_failures: u32,
    pub symbols: u32,
    pub references: u32,
    pub indexed_at: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Text,
}

/// The call's context, as the logic needs it.
#[derive(Clone, Debug)]
pub struct Ctx {
    /// `None`: the caller asked for no truncation.
    pub budget: Option<u32>,
    pub format: Format,
    /// The project's slug, for messages.
    pub project: Option<String>,
}

pub trait IndexHost {
    fn symbols_by_name(&self, name: &str) -> ToolResult<Vec<Sym>>;
    fn references_to_name(&self, name: &str, with_line_text: bool) -> ToolResult<Vec<Site>>;
    fn file_symbols(&self, file_path: &str) -> ToolResult<Vec<Sym>>;
    fn file_has_parse_errors(&self, file_path: &str) -> ToolResult<bool>;
    fn index_facts(&self) -> ToolResult<Facts>;
    fn count_tokens(&self, text: &str) -> u32;
}
