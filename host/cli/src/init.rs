//! `scryer init --client claude-code|cursor|codex [--project] [--dry-run]`: writes or
//! merges scryer's MCP server entry into a client's configuration.
//!
//! Other entries stay as they were: JSON keeps its key order (a small ordered value
//! type, so the workspace's serde_json needs no `preserve_order`) and its indent unit;
//! TOML goes through toml_edit, which keeps comments and layout. A file that does not
//! parse is never rewritten. A change first copies the file to `<file>.bak`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::ValueEnum;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// The MCP clients `init` and `doctor` know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Client {
    ClaudeCode,
    Cursor,
    Codex,
}

pub(crate) const CLIENTS: [Client; 3] = [Client::ClaudeCode, Client::Cursor, Client::Codex];

/// The name of scryer's entry in every client's server list.
pub(crate) const ENTRY: &str = "scryer";

impl Client {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Cursor => "cursor",
            Client::Codex => "codex",
        }
    }

    /// The configuration file: the user's (under `home`) or the project's (under `cwd`).
    pub(crate) fn config_path(self, project: bool, home: &Path, cwd: &Path) -> PathBuf {
        match (self, project) {
            (Client::ClaudeCode, false) => home.join(".claude.json"),
            (Client::ClaudeCode, true) => cwd.join(".mcp.json"),
            (Client::Cursor, false) => home.join(".cursor").join("mcp.json"),
            (Client::Cursor, true) => cwd.join(".cursor").join("mcp.json"),
            (Client::Codex, false) => codex_home(home).join("config.toml"),
            (Client::Codex, true) => cwd.join(".codex").join("config.toml"),
        }
    }

    fn is_toml(self) -> bool {
        self == Client::Codex
    }

    /// Where the entry sits, for messages.
    pub(crate) fn entry_location(self) -> &'static str {
        if self.is_toml() {
            "[mcp_servers.scryer]"
        } else {
            "mcpServers.scryer"
        }
    }
}

/// Codex reads `$CODEX_HOME` when set, `~/.codex` otherwise.
fn codex_home(home: &Path) -> PathBuf {
    match std::env::var_os("CODEX_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => home.join(".codex"),
    }
}

/// The user's home directory: `$HOME` first, so tests and sandboxes can move it.
pub(crate) fn home_dir() -> Result<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Ok(PathBuf::from(h)),
        _ => dirs::home_dir().context("no home directory: set HOME"),
    }
}

/// The command and arguments a client should run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerEntry {
    pub command: String,
    pub args: Vec<String>,
}

impl ServerEntry {
    /// This binary, by absolute path, serving over stdio.
    pub(crate) fn this_binary() -> Result<ServerEntry> {
        let exe = std::env::current_exe().context("finding the running scryer binary")?;
        let exe = exe.canonicalize().unwrap_or(exe);
        let command = exe
            .to_str()
            .with_context(|| format!("the binary's path {} is not UTF-8", exe.display()))?
            .to_string();
        Ok(ServerEntry {
            command,
            args: vec!["serve".to_string()],
        })
    }
}

// ---------------------------------------------------------------------------------------
// Ordered JSON

/// A JSON value whose objects keep their key order (serde_json's `Value` sorts keys
/// unless the workspace-wide `preserve_order` feature is on).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub(crate) fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// Sets `key`, in place when present, appended otherwise.
    fn set(entries: &mut Vec<(String, Json)>, key: &str, value: Json) {
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => entries.push((key.to_string(), value)),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Number(_) => "a number",
            Json::String(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_none<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
                Json::deserialize(d)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
                Ok(Json::Number(n.into()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(n)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::String(s.to_string()))
            }
            fn visit_string<E>(self, s: String) -> Result<Json, E> {
                Ok(Json::String(s))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = seq.next_element()? {
                    out.push(v);
                }
                Ok(Json::Array(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Json>()? {
                    // A repeated key: the last one wins, as in serde_json and JavaScript.
                    Json::set(&mut out, &k, v);
                }
                Ok(Json::Object(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    seq.serialize_element(i)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// The indent unit of a pretty-printed file (the first indented line's leading
/// whitespace), two spaces when there is none.
fn indent_unit(text: &str) -> String {
    text.lines()
        .skip(1)
        .map(|l| {
            let trimmed = l.trim_start_matches([' ', '\t']);
            &l[..l.len() - trimmed.len()]
        })
        .find(|ws| !ws.is_empty())
        .unwrap_or("  ")
        .to_string()
}

fn to_pretty(value: &Json, indent: &str) -> String {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    value
        .serialize(&mut ser)
        .expect("an ordered JSON value always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Line and column (1-based) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

fn refuse(path: &Path, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: {what}; nothing was changed. Fix the file (or move it away to start a new one) and run `scryer init` again",
        path.display()
    )
}

/// Parses a JSON client configuration, refusing what cannot be merged into.
pub(crate) fn parse_json_config(path: &Path, text: &str) -> Result<Json> {
    if text.trim().is_empty() {
        return Ok(Json::Object(Vec::new()));
    }
    let value: Json = serde_json::from_str(text).map_err(|e| {
        refuse(
            path,
            &format!(
                "not valid JSON at line {}, column {} ({e})",
                e.line(),
                e.column()
            ),
        )
    })?;
    match &value {
        Json::Object(_) => {}
        other => {
            return Err(refuse(
                path,
                &format!("the top level is {}, not an object", other.kind()),
            ));
        }
    }
    match value.get("mcpServers") {
        None | Some(Json::Object(_)) => Ok(value),
        Some(other) => Err(refuse(
            path,
            &format!("`mcpServers` is {}, not an object", other.kind()),
        )),
    }
}

/// The JSON entry's fields for a client (Claude Code records the transport type).
fn json_entry_fields(client: Client, entry: &ServerEntry) -> Vec<(String, Json)> {
    let mut fields = Vec::new();
    if client == Client::ClaudeCode {
        fields.push(("type".to_string(), Json::String("stdio".into())));
    }
    fields.push(("command".to_string(), Json::String(entry.command.clone())));
    fields.push((
        "args".to_string(),
        Json::Array(entry.args.iter().cloned().map(Json::String).collect()),
    ));
    fields
}

/// What a merge did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Unchanged,
    Added,
    /// The entry existed; these fields changed (`field: old -> new`).
    Updated(Vec<String>),
}

/// Merges scryer's entry into JSON text. Returns the new text and what changed; keeps
/// every other key, and any extra field of an existing scryer entry (`env`, ...).
pub(crate) fn merge_json(
    client: Client,
    path: &Path,
    text: &str,
    entry: &ServerEntry,
) -> Result<(String, Change)> {
    let mut root = parse_json_config(path, text)?;
    let Json::Object(top) = &mut root else {
        unreachable!("parse_json_config accepts objects only")
    };
    if !top.iter().any(|(k, _)| k == "mcpServers") {
        top.push(("mcpServers".to_string(), Json::Object(Vec::new())));
    }
    let Some((_, Json::Object(servers))) = top.iter_mut().find(|(k, _)| k == "mcpServers") else {
        unreachable!("mcpServers is an object")
    };
    let wanted = json_entry_fields(client, entry);
    let change = match servers.iter_mut().find(|(k, _)| k == ENTRY) {
        Some((_, Json::Object(fields))) => {
            let mut changed = Vec::new();
            for (k, v) in wanted {
                let old = fields.iter().find(|(f, _)| *f == k).map(|(_, v)| v.clone());
                if old.as_ref() != Some(&v) {
                    changed.push(format!(
                        "{k}: {} -> {}",
                        old.map_or("(none)".to_string(), |o| compact(&o)),
                        compact(&v)
                    ));
                    Json::set(fields, &k, v);
                }
            }
            if changed.is_empty() {
                Change::Unchanged
            } else {
                Change::Updated(changed)
            }
        }
        Some((_, other)) => {
            let was = other.kind();
            *other = Json::Object(wanted);
            Change::Updated(vec![format!("entry: {was} -> a server entry")])
        }
        None => {
            servers.push((ENTRY.to_string(), Json::Object(wanted)));
            Change::Added
        }
    };
    if change == Change::Unchanged {
        return Ok((text.to_string(), change));
    }
    let mut out = to_pretty(&root, &indent_unit(text));
    // Keep the file's final newline (a new file gets one).
    if text.is_empty() || text.ends_with('\n') {
        out.push('\n');
    }
    Ok((out, change))
}

fn compact(v: &Json) -> String {
    serde_json::to_string(v).expect("an ordered JSON value always serializes")
}

// ---------------------------------------------------------------------------------------
// TOML (Codex)

/// Parses a TOML client configuration, refusing what cannot be merged into.
pub(crate) fn parse_toml_config(path: &Path, text: &str) -> Result<toml_edit::DocumentMut> {
    let doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let at = e
            .span()
            .map(|s| {
                let (l, c) = line_col(text, s.start);
                format!(" at line {l}, column {c}")
            })
            .unwrap_or_default();
        let msg = e.message().trim().to_string();
        refuse(path, &format!("not valid TOML{at} ({msg})"))
    })?;
    match doc.get("mcp_servers") {
        None => {}
        Some(item) if item.is_table_like() => {
            if let Some(entry) = item.get(ENTRY)
                && !entry.is_table_like()
            {
                return Err(refuse(
                    path,
                    &format!(
                        "`mcp_servers.{ENTRY}` is a {}, not a table",
                        entry.type_name()
                    ),
                ));
            }
        }
        Some(item) => {
            return Err(refuse(
                path,
                &format!("`mcp_servers` is a {}, not a table", item.type_name()),
            ));
        }
    }
    Ok(doc)
}

/// Merges scryer's entry into Codex's TOML text, keeping comments, order and the
/// entry's other keys (`env`, `startup_timeout_sec`, ...).
pub(crate) fn merge_toml(path: &Path, text: &str, entry: &ServerEntry) -> Result<(String, Change)> {
    use toml_edit::{Array, Item, Table, Value, value};
    let mut doc = parse_toml_config(path, text)?;
    if doc.get("mcp_servers").is_none() {
        // An implicit parent: the file gets `[mcp_servers.scryer]`, not an empty
        // `[mcp_servers]` header.
        let mut t = Table::new();
        t.set_implicit(true);
        doc.insert("mcp_servers", Item::Table(t));
    }
    let servers = doc["mcp_servers"]
        .as_table_like_mut()
        .expect("checked to be a table");
    let added = servers.get(ENTRY).is_none();
    if added {
        servers.insert(ENTRY, Item::Table(Table::new()));
    }
    let server = servers
        .get_mut(ENTRY)
        .and_then(Item::as_table_like_mut)
        .expect("checked to be a table");
    let mut changed = Vec::new();
    let old_command = server
        .get("command")
        .and_then(Item::as_str)
        .map(str::to_string);
    if old_command.as_deref() != Some(entry.command.as_str()) {
        changed.push(format!(
            "command: {} -> {:?}",
            old_command.map_or("(none)".to_string(), |c| format!("{c:?}")),
            entry.command
        ));
        server.insert("command", value(entry.command.clone()));
    }
    let old_args: Option<Vec<String>> = server.get("args").and_then(Item::as_array).map(|a| {
        a.iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect()
    });
    if old_args.as_ref() != Some(&entry.args) {
        changed.push(format!(
            "args: {} -> {:?}",
            old_args.map_or("(none)".to_string(), |a| format!("{a:?}")),
            entry.args
        ));
        let args: Array = entry.args.iter().map(|a| Value::from(a.as_str())).collect();
        server.insert("args", value(args));
    }
    let change = if added {
        Change::Added
    } else if changed.is_empty() {
        Change::Unchanged
    } else {
        Change::Updated(changed)
    };
    if change == Change::Unchanged {
        return Ok((text.to_string(), change));
    }
    Ok((doc.to_string(), change))
}

// ---------------------------------------------------------------------------------------
// The command

pub(crate) struct InitArgs {
    pub client: Client,
    pub project: bool,
    pub dry_run: bool,
}

/// Writes `text` to `path` through a temporary file and a rename, keeping the old
/// file's permissions (`~/.claude.json` holds credentials and is often 0600).
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent directory", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().map_or_else(
        || "config".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let tmp = dir.join(format!(".{name}.scryer-{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("replacing {}", path.display())
    })
}

pub(crate) fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".bak");
    PathBuf::from(name)
}

pub(crate) fn run(args: InitArgs) -> Result<()> {
    let home = home_dir()?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let path = args.client.config_path(args.project, &home, &cwd);
    let entry = ServerEntry::this_binary()?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let text = existing.as_deref().unwrap_or("");
    let (new_text, change) = if args.client.is_toml() {
        merge_toml(&path, text, &entry)?
    } else {
        merge_json(args.client, &path, text, &entry)?
    };
    let client = args.client.name();
    let at = args.client.entry_location();
    let mut report = String::new();
    match &change {
        Change::Unchanged => {
            writeln!(
                report,
                "{client}: {} already has {at} running {} serve; nothing changed",
                path.display(),
                entry.command
            )?;
            print!("{report}");
            return Ok(());
        }
        Change::Added => writeln!(
            report,
            "{client}: {} {at} in {}: command {:?}, args {:?}",
            if args.dry_run { "would add" } else { "added" },
            path.display(),
            entry.command,
            entry.args
        )?,
        Change::Updated(fields) => {
            writeln!(
                report,
                "{client}: {} {at} in {}:",
                if args.dry_run {
                    "would update"
                } else {
                    "updated"
                },
                path.display()
            )?;
            for f in fields {
                writeln!(report, "  {f}")?;
            }
        }
    }
    if args.dry_run {
        writeln!(report, "dry run: nothing written. The file would read:")?;
        report.push_str(&new_text);
        print!("{report}");
        return Ok(());
    }
    match existing {
        Some(old) => {
            let bak = backup_path(&path);
            std::fs::write(&bak, old)
                .with_context(|| format!("writing backup {}", bak.display()))?;
            writeln!(report, "backup of the previous file: {}", bak.display())?;
        }
        None => writeln!(
            report,
            "created {} (there was no file to back up)",
            path.display()
        )?,
    }
    write_atomically(&path, &new_text)?;
    if args.client == Client::Codex && args.project {
        writeln!(
            report,
            "note: Codex reads a project's .codex/config.toml only when the project is trusted"
        )?;
    }
    if args.client == Client::ClaudeCode && args.project {
        writeln!(
            report,
            "note: Claude Code keeps a project's .mcp.json servers pending approval: start `claude` here and approve scryer (or in /mcp); `claude -p` runs without it until then"
        )?;
    }
    writeln!(
        report,
        "restart {client} (or reload its MCP servers) to pick it up; `scryer doctor` checks the entry"
    )?;
    print!("{report}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ServerEntry {
        ServerEntry {
            command: "/opt/bin/scryer".into(),
            args: vec!["serve".into()],
        }
    }

    #[test]
    fn json_merge_keeps_order_indent_and_foreign_entries() {
        let text = "{\n    \"zeta\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    },\n    \"alpha\": [1.5, null, true]\n}\n";
        let (out, change) =
            merge_json(Client::Cursor, Path::new("m.json"), text, &entry()).unwrap();
        assert_eq!(change, Change::Added);
        // Key order as written (zeta before alpha), four-space indent kept.
        let zeta = out.find("\"zeta\"").unwrap();
        let alpha = out.find("\"alpha\"").unwrap();
        assert!(zeta < alpha, "{out}");
        assert!(out.contains("\n    \"zeta\": 1,"), "{out}");
        assert!(
            out.contains("\"other\": {\n            \"command\": \"x\""),
            "{out}"
        );
        assert!(out.ends_with("}\n"));
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["mcpServers"]["scryer"]["command"], "/opt/bin/scryer");
        assert_eq!(parsed["mcpServers"]["scryer"]["args"][0], "serve");
        assert!(parsed["mcpServers"]["scryer"].get("type").is_none());
        // Merging again changes nothing, byte for byte.
        let (again, change) =
            merge_json(Client::Cursor, Path::new("m.json"), &out, &entry()).unwrap();
        assert_eq!(change, Change::Unchanged);
        assert_eq!(again, out);
    }

    #[test]
    fn json_update_names_the_changed_fields_and_keeps_extra_ones() {
        let text = r#"{"mcpServers": {"scryer": {"type": "stdio", "command": "/old/scryer", "args": ["serve"], "env": {"SCRYER_LOG": "info"}}}}"#;
        let (out, change) = merge_json(
            Client::ClaudeCode,
            Path::new(".claude.json"),
            text,
            &entry(),
        )
        .unwrap();
        let Change::Updated(fields) = change else {
            panic!("expected an update")
        };
        assert_eq!(
            fields,
            vec![r#"command: "/old/scryer" -> "/opt/bin/scryer""#]
        );
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed["mcpServers"]["scryer"]["env"]["SCRYER_LOG"], "info");
        // No final newline before, none after.
        assert!(out.ends_with('}'));
    }

    #[test]
    fn claude_code_entries_name_the_stdio_transport() {
        let (out, _) = merge_json(Client::ClaudeCode, Path::new("x"), "", &entry()).unwrap();
        assert_eq!(
            out,
            "{\n  \"mcpServers\": {\n    \"scryer\": {\n      \"type\": \"stdio\",\n      \"command\": \"/opt/bin/scryer\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}\n"
        );
    }

    #[test]
    fn malformed_json_is_refused_with_its_line() {
        let text = "{\n  \"mcpServers\": {\n    \"a\": 1,\n  }\n}\n";
        let e = merge_json(
            Client::Cursor,
            Path::new("/h/.cursor/mcp.json"),
            text,
            &entry(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/h/.cursor/mcp.json") && e.contains("line 4"),
            "{e}"
        );
        assert!(
            e.contains("nothing was changed") && e.contains("Fix the file"),
            "{e}"
        );
        for (bad, why) in [
            ("[1, 2]", "top level is an array"),
            (r#"{"mcpServers": []}"#, "`mcpServers` is an array"),
        ] {
            let e = merge_json(Client::Cursor, Path::new("f"), bad, &entry())
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn toml_merge_keeps_comments_and_other_servers() {
        let text =
            "# my settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\" # keep me\n";
        let (out, change) = merge_toml(Path::new("config.toml"), text, &entry()).unwrap();
        assert_eq!(change, Change::Added);
        assert!(out.starts_with(text), "{out}");
        assert!(
            out.ends_with(
                "[mcp_servers.scryer]\ncommand = \"/opt/bin/scryer\"\nargs = [\"serve\"]\n"
            ),
            "{out}"
        );
        let parsed: toml::Table = out.parse().unwrap();
        assert_eq!(
            parsed["mcp_servers"]["scryer"]["args"][0].as_str(),
            Some("serve")
        );
        let (again, change) = merge_toml(Path::new("config.toml"), &out, &entry()).unwrap();
        assert_eq!(change, Change::Unchanged);
        assert_eq!(again, out);
        // An empty file gets only the entry's own header.
        let (fresh, _) = merge_toml(Path::new("c"), "", &entry()).unwrap();
        assert_eq!(
            fresh,
            "[mcp_servers.scryer]\ncommand = \"/opt/bin/scryer\"\nargs = [\"serve\"]\n"
        );
    }

    #[test]
    fn toml_update_keeps_the_entrys_other_keys() {
        let text = "[mcp_servers.scryer]\ncommand = \"/old\"\nargs = [\"serve\"]\nstartup_timeout_sec = 30\n";
        let (out, change) = merge_toml(Path::new("c"), text, &entry()).unwrap();
        assert_eq!(
            change,
            Change::Updated(vec![r#"command: "/old" -> "/opt/bin/scryer""#.into()])
        );
        assert!(out.contains("startup_timeout_sec = 30"), "{out}");
    }

    #[test]
    fn malformed_toml_is_refused_with_its_line() {
        let e = merge_toml(
            Path::new("/h/.codex/config.toml"),
            "a = 1\nb = = 2\n",
            &entry(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/h/.codex/config.toml") && e.contains("line 2"),
            "{e}"
        );
        let e = merge_toml(Path::new("c"), "mcp_servers = 3\n", &entry())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`mcp_servers` is a integer") || e.contains("`mcp_servers` is a"),
            "{e}"
        );
        let e = merge_toml(Path::new("c"), "[mcp_servers]\nscryer = \"x\"\n", &entry())
            .unwrap_err()
            .to_string();
        assert!(e.contains("`mcp_servers.scryer`"), "{e}");
    }

    #[test]
    fn config_paths_per_client_and_scope() {
        let (h, p) = (Path::new("/h"), Path::new("/p"));
        assert_eq!(
            Client::ClaudeCode.config_path(false, h, p),
            Path::new("/h/.claude.json")
        );
        assert_eq!(
            Client::ClaudeCode.config_path(true, h, p),
            Path::new("/p/.mcp.json")
        );
        assert_eq!(
            Client::Cursor.config_path(false, h, p),
            Path::new("/h/.cursor/mcp.json")
        );
        assert_eq!(
            Client::Cursor.config_path(true, h, p),
            Path::new("/p/.cursor/mcp.json")
        );
        assert_eq!(
            Client::Codex.config_path(true, h, p),
            Path::new("/p/.codex/config.toml")
        );
        assert_eq!(
            backup_path(Path::new("/h/.claude.json")),
            Path::new("/h/.claude.json.bak")
        );
    }

    #[test]
    fn line_and_column_of_an_offset() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }
}
