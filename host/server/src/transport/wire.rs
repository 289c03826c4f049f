//! The JSON-RPC line check every transport applies before rmcp sees a message: a line
//! that is not valid JSON-RPC gets the error it deserves instead of silence (rmcp drops
//! what it cannot parse, and the client would wait forever), and the session goes on.
//!
//! - `-32700` parse error: invalid UTF-8, invalid or truncated JSON, `NaN`, numbers out
//!   of range (`1e400`, a 5,000-digit integer), lone surrogate escapes, and nesting
//!   deeper than serde_json's recursion limit (128 levels, kept on purpose: rmcp parses
//!   with the same limit, so nothing accepted here fails there);
//! - `-32600` invalid request: not an object, a batch, a wrong `jsonrpc`, `id` or
//!   `method`, a line over [`MAX_MESSAGE_BYTES`];
//! - `-32602` invalid params, naming the field: `params` not an object, `tools/call`
//!   without a string `name` or with `arguments` that are not an object.
//!
//! The id is echoed when it can be recovered (from the parsed object, or scanned from
//! the top level of a line that did not parse), else `null`. Used by the stdio relay,
//! the daemon's sessions, `--no-daemon` and HTTP: [`check`] decides, [`guarded`] wraps a
//! byte stream.

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Longest message line accepted; a longer one is answered `-32600` and skipped.
pub const MAX_MESSAGE_BYTES: u64 = 16 << 20;
/// serde_json's nesting limit, which this check keeps (and names in its message).
pub const MAX_NESTING: usize = 128;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one line from a client.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Valid JSON-RPC (or a notification, which is never answered): pass it on.
    Forward,
    /// Answer with this line (a JSON-RPC error response, newline-terminated).
    Answer(Vec<u8>),
    /// A blank line: nothing to do.
    Skip,
}

/// A JSON-RPC error response line.
pub fn error_line(id: Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// Checks one line (with or without its newline).
pub fn check(line: &[u8]) -> Verdict {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Verdict::Skip;
    }
    let text = match std::str::from_utf8(trimmed) {
        Ok(t) => t,
        Err(e) => {
            let id = recover_id(&String::from_utf8_lossy(trimmed));
            let why = format!(
                "parse error: the message is not valid UTF-8 (at byte {}); send UTF-8 JSON",
                e.valid_up_to()
            );
            return Verdict::Answer(error_line(id, PARSE_ERROR, &why));
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Answer(error_line(
                recover_id(text),
                PARSE_ERROR,
                &parse_message(&e),
            ));
        }
    };
    match value {
        Value::Object(m) => check_object(&m),
        Value::Array(_) => Verdict::Answer(error_line(
            Value::Null,
            INVALID_REQUEST,
            "invalid request: batches are not supported; send one JSON-RPC object per line",
        )),
        other => Verdict::Answer(error_line(
            Value::Null,
            INVALID_REQUEST,
            &format!(
                "invalid request: a JSON-RPC message is an object, got {}",
                kind(&other)
            ),
        )),
    }
}

fn parse_message(e: &serde_json::Error) -> String {
    let what = e.to_string();
    if what.contains("recursion limit") {
        format!("parse error: nesting deeper than {MAX_NESTING} levels is not accepted ({what})")
    } else if e.is_eof() {
        format!("parse error: the JSON ends early (truncated message: {what})")
    } else {
        format!("parse error: invalid JSON ({what})")
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn check_object(m: &Map<String, Value>) -> Verdict {
    let id = m.get("id");
    let echo = id
        .filter(|i| i.is_string() || i.is_i64() || i.is_u64())
        .cloned()
        .unwrap_or(Value::Null);
    let invalid = |code: i64, why: String| Verdict::Answer(error_line(echo.clone(), code, &why));
    if m.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid(
            INVALID_REQUEST,
            "invalid request: `jsonrpc` must be \"2.0\"".into(),
        );
    }
    if let Some(i) = id
        && !(i.is_string() || i.is_i64() || i.is_u64())
    {
        return invalid(
            INVALID_REQUEST,
            format!(
                "invalid request: `id` must be a string or an integer, got {}",
                kind(i)
            ),
        );
    }
    let Some(method) = m.get("method") else {
        // A response to a server request, or nothing at all.
        return if id.is_some() && (m.contains_key("result") || m.contains_key("error")) {
            Verdict::Forward
        } else {
            invalid(
                INVALID_REQUEST,
                "invalid request: a message needs `method` (a request or notification) or `id` with `result` or `error` (a response)".into(),
            )
        };
    };
    let Some(method) = method.as_str() else {
        return invalid(
            INVALID_REQUEST,
            format!(
                "invalid request: `method` must be a string, got {}",
                kind(method)
            ),
        );
    };
    if id.is_none() {
        // A notification is never answered, not even with an error.
        return Verdict::Forward;
    }
    match params_problem(method, m.get("params")) {
        Some(why) => invalid(
            INVALID_PARAMS,
            format!("invalid params for {method}: {why}"),
        ),
        None => Verdict::Forward,
    }
}

/// What is wrong with a request's `params`, if anything this check knows about.
fn params_problem(method: &str, params: Option<&Value>) -> Option<String> {
    let params = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(p),
        Some(other) => return Some(format!("`params` must be an object, got {}", kind(other))),
    };
    if method != "tools/call" {
        return None;
    }
    let Some(p) = params else {
        return Some("`params` is required: {\"name\": <tool>, \"arguments\": {…}}".into());
    };
    match p.get("name") {
        Some(Value::String(n)) if !n.is_empty() => {}
        None | Some(Value::Null) => {
            return Some("`params.name` is required: the tool's name (a string)".into());
        }
        Some(other) => {
            return Some(format!(
                "`params.name` must be the tool's name (a string), got {}",
                kind(other)
            ));
        }
    }
    match p.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(other) => Some(format!(
            "`params.arguments` must be an object of named arguments, got {}",
            kind(other)
        )),
    }
}

/// The top-level `"id"` of a line that did not parse, when it is a plain integer or a
/// string without escapes, scanned up to where the line breaks.
fn recover_id(text: &str) -> Value {
    let bytes = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let Some(end) = string_end(bytes, i) else {
                    return Value::Null;
                };
                if depth == 1 && &bytes[i..=end] == b"\"id\"" {
                    let rest = text[end + 1..].trim_start();
                    if let Some(value) = rest.strip_prefix(':') {
                        return id_value(value.trim_start());
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Value::Null
}

/// Index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn id_value(s: &str) -> Value {
    if let Some(body) = s.strip_prefix('"') {
        return match body.find('"') {
            Some(end) if !body[..end].contains('\\') => Value::String(body[..end].to_string()),
            _ => Value::Null,
        };
    }
    let digits: String = s
        .chars()
        .enumerate()
        .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
        .map(|(_, c)| c)
        .collect();
    let after = s[digits.len()..].trim_start();
    match digits.parse::<i64>() {
        Ok(n) if after.is_empty() || after.starts_with([',', '}']) => Value::from(n),
        _ => Value::Null,
    }
}

/// Wraps a client's byte stream: lines that pass [`check`] reach the returned stream
/// (for rmcp), the others are answered on `writer` directly; rmcp's own lines and those
/// answers are written whole, one at a time.
pub fn guarded<R, W>(
    reader: R,
    writer: W,
) -> (
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (from_rmcp, mut to_rmcp) = tokio::io::split(ours);
    let (answers, mut answered) = tokio::sync::mpsc::channel::<Vec<u8>>(64);
    tokio::spawn(async move {
        let mut reader = BufReader::new(reader);
        loop {
            let line = match read_message(&mut reader).await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            let sent = match line {
                Line::TooLong => answers.send(too_long()).await.is_ok(),
                Line::Message(mut line) => match check(&line) {
                    Verdict::Forward => {
                        if !line.ends_with(b"\n") {
                            line.push(b'\n');
                        }
                        to_rmcp.write_all(&line).await.is_ok()
                    }
                    Verdict::Answer(a) => answers.send(a).await.is_ok(),
                    Verdict::Skip => true,
                },
            };
            if !sent {
                break;
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut writer = writer;
        let mut line = Vec::new();
        let mut answers_open = true;
        loop {
            let out = tokio::select! {
                n = from_rmcp.read_until(b'\n', &mut line) => match n {
                    Ok(0) | Err(_) => {
                        // rmcp's side ended (after the input did): the answers queued
                        // before it still go out, or the client's last bad lines
                        // would go unanswered.
                        while let Ok(a) = answered.try_recv() {
                            if writer.write_all(&a).await.is_err() {
                                break;
                            }
                        }
                        let _ = writer.flush().await;
                        break;
                    }
                    Ok(_) => std::mem::take(&mut line),
                },
                a = answered.recv(), if answers_open => match a {
                    Some(a) => a,
                    None => { answers_open = false; continue; }
                },
            };
            if writer.write_all(&out).await.is_err() || writer.flush().await.is_err() {
                break;
            }
        }
        let _ = writer.shutdown().await;
    });
    tokio::io::split(theirs)
}

/// One line read from a client, or the fact that it was too long.
pub enum Line {
    Message(Vec<u8>),
    TooLong,
}

/// The error for a line over [`MAX_MESSAGE_BYTES`].
pub fn too_long() -> Vec<u8> {
    error_line(
        Value::Null,
        INVALID_REQUEST,
        &format!(
            "invalid request: a message is at most {} MiB",
            MAX_MESSAGE_BYTES >> 20
        ),
    )
}

/// Reads one line of at most [`MAX_MESSAGE_BYTES`]; a longer one is read to its end and
/// dropped. `None` at the end of the stream.
pub async fn read_message<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let n = (&mut *reader)
        .take(MAX_MESSAGE_BYTES + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if line.len() as u64 <= MAX_MESSAGE_BYTES || line.ends_with(b"\n") {
        return Ok(Some(Line::Message(line)));
    }
    // Discard the rest of the line, a buffer at a time.
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            break;
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                break;
            }
            None => {
                let len = buf.len();
                reader.consume(len);
            }
        }
    }
    Ok(Some(Line::TooLong))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Value {
        match check(line.as_bytes()) {
            Verdict::Answer(a) => serde_json::from_slice(&a).unwrap(),
            other => panic!("{line:?} was not answered: {other:?}"),
        }
    }

    #[test]
    fn invalid_json_of_every_shape_is_a_parse_error() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let digits = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\",\"params\":{{\"n\":{}}}}}",
            "9".repeat(5000)
        );
        for (line, id) in [
            (deep.as_str(), Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}"#,
                json!(1),
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":1e400}}"#,
                json!(2),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s3","method":"ping","params":{"x":"\ud800"}}"#,
                json!("s3"),
            ),
            (digits.as_str(), json!(4)),
            (r#"{"jsonrpc":"2.0","id":5,"method":"tools/ca"#, json!(5)),
            (
                r#"{"jsonrpc":"2.0","params":{"id":9},"method":"#,
                Value::Null,
            ),
        ] {
            let a = answer(line);
            assert_eq!(a["error"]["code"], PARSE_ERROR, "{line:.60}: {a}");
            assert_eq!(a["id"], id, "{line:.60}: {a}");
        }
        assert!(
            answer(&deep)["error"]["message"]
                .as_str()
                .unwrap()
                .contains("128")
        );
        let bad_utf8 =
            b"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}";
        let Verdict::Answer(a) = check(bad_utf8) else {
            panic!()
        };
        let a: Value = serde_json::from_slice(&a).unwrap();
        assert_eq!(
            (a["error"]["code"].clone(), a["id"].clone()),
            (json!(PARSE_ERROR), json!(6))
        );
    }

    #[test]
    fn wrong_shapes_are_invalid_requests_and_params_name_the_field() {
        for line in [
            "[]",
            "42",
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
        ] {
            assert_eq!(answer(line)["error"]["code"], INVALID_REQUEST, "{line}");
        }
        for (line, field) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
                "params.arguments",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"a"}}"#,
                "params.arguments",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
                "params.name",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
                "params",
            ),
        ] {
            let a = answer(line);
            assert_eq!(a["error"]["code"], INVALID_PARAMS, "{line}");
            assert!(
                a["error"]["message"].as_str().unwrap().contains(field),
                "{a}"
            );
        }
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"r","result":{}}"#,
        ] {
            assert_eq!(check(ok.as_bytes()), Verdict::Forward, "{ok}");
        }
        assert_eq!(check(b"  \r\n"), Verdict::Skip);
    }
}
