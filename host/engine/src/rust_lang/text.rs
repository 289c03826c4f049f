//! Text helpers for the Rust extractor: signatures, doc comments, word lists.

/// Signatures are capped at this many characters.
const SIGNATURE_CAP: usize = 300;

/// Collapse whitespace runs to one space, trim, drop a trailing `;`, `=` or `{`,
/// and cap the length.
pub(super) fn signature(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(SIGNATURE_CAP + 8));
    let mut pending_space = false;
    let mut chars = 0usize;
    for c in raw.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        out.push(c);
        chars += 1;
        if chars >= SIGNATURE_CAP + 2 {
            break;
        }
    }
    loop {
        let trimmed = out.trim_end();
        let trimmed = trimmed
            .strip_suffix(';')
            .or_else(|| trimmed.strip_suffix('='))
            .or_else(|| trimmed.strip_suffix('{'))
            .unwrap_or(trimmed);
        if trimmed.len() == out.len() {
            break;
        }
        let len = trimmed.trim_end().len();
        out.truncate(len);
    }
    if let Some((idx, _)) = out.char_indices().nth(SIGNATURE_CAP) {
        out.truncate(idx);
    }
    out
}

/// The text of a `///` comment's `doc` node: trailing newline and one leading space removed.
pub(super) fn line_doc(doc: &str) -> String {
    let doc = doc.trim_end_matches(['\n', '\r']);
    doc.strip_prefix(' ').unwrap_or(doc).to_string()
}

/// The text of a `/** .. */` comment's `doc` node: leading `*` decorations removed per line,
/// blank first and last lines dropped.
pub(super) fn block_doc(doc: &str) -> String {
    let mut lines: Vec<&str> = doc
        .lines()
        .map(|line| {
            let t = line.trim_start();
            let t = t.strip_prefix('*').unwrap_or(t);
            t.strip_prefix(' ').unwrap_or(t).trim_end()
        })
        .collect();
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

/// The value of a string literal as written in `#[doc = ".."]`, escapes resolved and one
/// leading space removed (`///` desugars to `#[doc = " .."]`).
pub(super) fn doc_attr_value(literal: &str) -> Option<String> {
    let value = if let Some(raw) = literal.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let body = raw.get(hashes..raw.len().checked_sub(hashes)?)?;
        body.strip_prefix('"')?.strip_suffix('"')?.to_string()
    } else {
        unescape(literal.strip_prefix('"')?.strip_suffix('"')?)
    };
    Some(match value.strip_prefix(' ') {
        Some(rest) => rest.to_string(),
        None => value,
    })
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\n') => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// `r#name` → `name`.
pub(super) fn strip_raw(name: &str) -> &str {
    name.strip_prefix("r#").unwrap_or(name)
}

/// Built-in scalar and string types, never references.
pub(super) fn is_primitive(name: &str) -> bool {
    matches!(
        name,
        "bool"
            | "char"
            | "str"
            | "u8"
            | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
            | "f16"
            | "f32"
            | "f64"
            | "f128"
    )
}

/// Keywords that can show up as identifier tokens inside macro token trees.
pub(super) fn is_keyword(name: &str) -> bool {
    matches!(
        name,
        "as" | "break"
            | "const"
            | "continue"
            | "crate"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "fn"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
            | "async"
            | "await"
            | "dyn"
            | "abstract"
            | "become"
            | "box"
            | "do"
            | "final"
            | "macro"
            | "override"
            | "priv"
            | "typeof"
            | "unsized"
            | "virtual"
            | "yield"
            | "try"
            | "gen"
            | "macro_rules"
            | "_"
    )
}

/// Built-in macros whose arguments are not code (configuration predicates, text, file
/// names): their bodies yield no references.
pub(super) fn is_opaque_macro(name: &str) -> bool {
    matches!(
        name,
        "cfg"
            | "stringify"
            | "include"
            | "include_str"
            | "include_bytes"
            | "env"
            | "option_env"
            | "concat_idents"
            | "compile_error"
            | "module_path"
            | "file"
            | "line"
            | "column"
    )
}

/// Attributes built into the compiler or tools: not references to anything in a crate.
pub(super) fn is_builtin_attribute(name: &str) -> bool {
    matches!(
        name,
        "cfg"
            | "cfg_attr"
            | "derive"
            | "doc"
            | "allow"
            | "warn"
            | "deny"
            | "forbid"
            | "expect"
            | "inline"
            | "cold"
            | "must_use"
            | "deprecated"
            | "test"
            | "bench"
            | "ignore"
            | "should_panic"
            | "repr"
            | "non_exhaustive"
            | "path"
            | "macro_use"
            | "macro_export"
            | "automatically_derived"
            | "no_mangle"
            | "link"
            | "link_name"
            | "link_section"
            | "link_ordinal"
            | "export_name"
            | "used"
            | "track_caller"
            | "target_feature"
            | "proc_macro"
            | "proc_macro_derive"
            | "proc_macro_attribute"
            | "global_allocator"
            | "feature"
            | "no_std"
            | "no_core"
            | "no_main"
            | "no_implicit_prelude"
            | "recursion_limit"
            | "type_length_limit"
            | "crate_type"
            | "crate_name"
            | "windows_subsystem"
            | "unsafe"
            | "naked"
            | "coverage"
            | "instruction_set"
            | "debugger_visualizer"
            | "collapse_debuginfo"
            | "may_dangle"
            | "no_link"
            | "optimize"
            | "register_tool"
            | "test_runner"
            | "reexport_test_harness_main"
            | "unstable"
            | "stable"
            | "rustc_const_unstable"
            | "rustc_const_stable"
            | "const_trait"
            | "do_not_recommend"
            | "on_unimplemented"
            | "panic_handler"
            | "lang"
            | "thread_local"
            | "linkage"
            | "ffi_const"
            | "ffi_pure"
            | "allow_internal_unstable"
            | "allow_internal_unsafe"
            | "rustfmt"
            | "clippy"
            | "diagnostic"
            | "rustdoc"
            | "rust_analyzer"
            | "miri"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_collapses_and_trims() {
        assert_eq!(
            signature("pub fn  f(\n    x: u32,\n) -> u32 "),
            "pub fn f( x: u32, ) -> u32"
        );
        assert_eq!(signature("pub const N: usize ="), "pub const N: usize");
        assert_eq!(signature("struct S(u32);"), "struct S(u32)");
        let long = format!("fn f({})", "a".repeat(400));
        assert_eq!(signature(&long).chars().count(), 300);
    }

    #[test]
    fn doc_attribute_values() {
        assert_eq!(
            doc_attr_value(r#"" Hello \"x\"""#).as_deref(),
            Some("Hello \"x\"")
        );
        assert_eq!(doc_attr_value(r##"r#"raw"#"##).as_deref(), Some("raw"));
        assert_eq!(block_doc("*\n * One\n * Two\n "), "One\nTwo");
        assert_eq!(line_doc(" Hi\n"), "Hi");
    }
}
