//! HTTP test support: `scryer serve --http 127.0.0.1:0` on its own database, run
//! directory and plugin home, and a small HTTP/1.1 client speaking MCP's streamable
//! HTTP (JSON or SSE answers, chunked bodies) with control over every header.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{scryer_bin, shared_compile_cache};

/// A running `scryer serve --http`; killed when dropped.
pub struct HttpServer {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    pub token: String,
    pub state: tempfile::TempDir,
}

impl HttpServer {
    /// Starts the server with a generated token (read from its stderr).
    pub fn start() -> HttpServer {
        let state = tempfile::Builder::new()
            .prefix("scryer-http-")
            .tempdir()
            .unwrap();
        let mut child = Self::command(state.path())
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawning scryer serve --http");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        // Reads stderr to the end so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let (mut addr, mut token) = (None, None);
        while addr.is_none() || token.is_none() {
            let line = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("scryer serve --http printed its address and token");
            if let Some(rest) = line.split("http://").nth(1) {
                addr = rest.split('/').next().map(str::to_string);
            }
            if let Some(rest) = line.split("Bearer ").nth(1) {
                token = rest.split('`').next().map(str::to_string);
            }
        }
        HttpServer {
            child,
            addr: addr.unwrap(),
            token: token.unwrap(),
            state,
        }
    }

    /// `scryer --db <state>/index.db --compile-cache <shared>` with this test's own run
    /// directory and plugin home.
    pub fn command(state: &std::path::Path) -> Command {
        let mut cmd = Command::new(scryer_bin());
        cmd.arg("--db")
            .arg(state.join("index.db"))
            .arg("--compile-cache")
            .arg(shared_compile_cache())
            .env("SCRYER_RUN_DIR", state.join("run"))
            .env("SCRYER_CONFIG_DIR", state.join("config"))
            .env("SCRYER_LOG", "warn")
            .env_remove("SCRYER_HTTP_TOKEN")
            .current_dir(state);
        cmd
    }

    /// A request with the right Host and token.
    pub fn post(&self, session: Option<&str>, body: &Value) -> HttpResponse {
        post(
            &self.addr,
            &self.addr,
            Some(&self.token),
            session,
            body.to_string().as_bytes(),
        )
    }

    /// An MCP session: initialize, then `notifications/initialized`.
    pub fn session(&self) -> McpHttpSession<'_> {
        let init = self.post(
            None,
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                "protocolVersion":"2025-06-18","capabilities":{},
                "clientInfo":{"name":"scryer-http-test","version":"1"}}}),
        );
        assert_eq!(init.status, 200, "initialize: {}", init.body);
        let id = init
            .header("mcp-session-id")
            .expect("the initialize answer names the session")
            .to_string();
        let result = init.message(0);
        assert_eq!(result["result"]["serverInfo"]["name"], "scryer", "{result}");
        let done = self.post(
            Some(&id),
            &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        );
        assert!(
            done.status / 100 == 2,
            "initialized: {} {}",
            done.status,
            done.body
        );
        McpHttpSession {
            server: self,
            id,
            next: 1.into(),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    /// `scryer daemon status` of this server's database: its stdout.
    pub fn status(&self) -> String {
        let out = Self::command(self.state.path())
            .args(["daemon", "status"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Ends an MCP session (`DELETE /mcp`).
    pub fn end(&self, session: &str) -> HttpResponse {
        request(
            "DELETE",
            &self.addr,
            &self.addr,
            Some(&self.token),
            Some(session),
            b"",
        )
    }
}

/// One MCP session over HTTP.
pub struct McpHttpSession<'a> {
    server: &'a HttpServer,
    pub id: String,
    next: std::cell::Cell<u64>,
}

impl McpHttpSession<'_> {
    /// A JSON-RPC request in this session; its answer message.
    pub fn request(&self, method: &str, params: Value) -> Value {
        let id = self.next.get();
        self.next.set(id + 1);
        let r = self.server.post(
            Some(&self.id),
            &json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}),
        );
        assert_eq!(r.status, 200, "{method}: {}", r.body);
        r.message(id)
    }

    /// `tools/call`: the answer text and whether it is an error.
    pub fn call(&self, tool: &str, args: Value) -> (String, bool) {
        let m = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let result = &m["result"];
        assert!(result.is_object(), "{tool}: {m}");
        let text = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        (text, result["isError"].as_bool().unwrap_or(false))
    }

    /// `tools/call` that must answer JSON without error.
    pub fn call_json(&self, tool: &str, args: Value) -> Value {
        let (text, is_error) = self.call(tool, args);
        assert!(!is_error, "{tool} failed: {text}");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{tool}: {e}: {text}"))
    }
}

pub struct HttpResponse {
    pub status: u16,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message answering request `id`, from a JSON body or an SSE stream.
    pub fn message(&self, id: u64) -> Value {
        let candidates: Vec<Value> = if self
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"))
        {
            self.body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect()
        } else {
            serde_json::from_str(&self.body).into_iter().collect()
        };
        candidates
            .into_iter()
            .find(|m: &Value| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to request {id} in: {}", self.body))
    }
}

/// One POST to `/mcp` on `addr`, with `Host: host`, then the connection closes.
pub fn post(
    addr: &str,
    host: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &[u8],
) -> HttpResponse {
    request("POST", addr, host, token, session, body)
}

/// One request to `/mcp` on `addr`, with `Host: host`, then the connection closes.
pub fn request(
    method: &str,
    addr: &str,
    host: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &[u8],
) -> HttpResponse {
    let mut head = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if let Some(s) = session {
        head.push_str(&format!(
            "Mcp-Session-Id: {s}\r\nMcp-Protocol-Version: 2025-06-18\r\n"
        ));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> HttpResponse {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("an HTTP response head");
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    HttpResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
            .expect("a chunk size");
        rest = &rest[eol + 2..];
        if size == 0 {
            break;
        }
        out.extend_from_slice(&rest[..size.min(rest.len())]);
        rest = &rest[(size + 2).min(rest.len())..];
    }
    out
}
