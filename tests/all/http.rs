//! MCP over streamable HTTP through the real binary (`scryer serve --http`): the token
//! and Host checks, a whole session (initialize, tools/list, tools/call), two sessions
//! that keep their own active project, and stdio sessions served by the same process.

use serde_json::{Value, json};

use crate::support::fixture_workspace;
use crate::support::http::{HttpServer, post};

#[test]
fn requests_without_the_token_or_naming_another_host_are_refused() {
    let server = HttpServer::start();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})
    .to_string();

    let none = post(&server.addr, &server.addr, None, None, init.as_bytes());
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(none.body.contains("Authorization: Bearer"), "{}", none.body);
    assert!(none.header("www-authenticate").is_some());

    let wrong = post(
        &server.addr,
        &server.addr,
        Some("0123456789abcdef-not-the-token"),
        None,
        init.as_bytes(),
    );
    assert_eq!(wrong.status, 401, "{}", wrong.body);

    // A page on a rebinding name reaches 127.0.0.1 but still sends its own name, with
    // or without the token.
    let port = server.addr.rsplit(':').next().unwrap();
    for token in [Some(server.token.as_str()), None] {
        let foreign = post(
            &server.addr,
            &format!("attacker.example:{port}"),
            token,
            None,
            init.as_bytes(),
        );
        assert_eq!(foreign.status, 403, "{}", foreign.body);
        assert!(foreign.body.contains("DNS-rebinding"), "{}", foreign.body);
        assert!(foreign.body.contains(&server.addr), "{}", foreign.body);
    }

    // The same request with the token and the bound address is served.
    let ok = post(
        &server.addr,
        &format!("localhost:{port}"),
        Some(&server.token),
        None,
        init.as_bytes(),
    );
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.header("mcp-session-id").is_some());
}

#[test]
fn other_machines_are_reachable_only_when_asked_and_short_tokens_are_refused() {
    let state = tempfile::tempdir().unwrap();
    let out = HttpServer::command(state.path())
        .args(["serve", "--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        e.contains("not a loopback address") && e.contains("--allow-remote"),
        "{e}"
    );
    let out = HttpServer::command(state.path())
        .args(["serve", "--http", "127.0.0.1:0", "--token", "short"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(e.contains("at least 16 characters"), "{e}");
}

#[test]
fn a_session_initializes_lists_tools_and_calls_them() {
    let server = HttpServer::start();
    let ws = fixture_workspace();
    let s = server.session();
    let tools = s.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for expected in [
        "index_workspace",
        "find_references",
        "get_token_savings_metrics",
    ] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    let indexed = s.call_json(
        "index_workspace",
        json!({"path": ws.path().to_str().unwrap()}),
    );
    assert_eq!(indexed["state"], "ready", "{indexed}");
    let outline = s.call_json(
        "get_file_outline",
        json!({"file_path": ws.path().join("src/lib.rs").to_str().unwrap()}),
    );
    assert!(outline.to_string().contains("total_area"), "{outline}");
    let (text, failed) = s.call("get_file_outline", json!({"file_path": "src/nope.rs"}));
    assert!(failed, "an unknown file is an error: {text}");

    // The metrics count that error, as `scryer report` does.
    let mut errors = Value::Null;
    for _ in 0..100 {
        let metrics = s.call_json("get_token_savings_metrics", json!({}));
        let outline = metrics["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tool"] == "get_file_outline")
            .cloned();
        if let Some(t) = outline.filter(|t| t["calls"] == 2) {
            errors = t["errors"].clone();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(errors, 1, "one of two get_file_outline calls failed");
}

#[test]
fn two_sessions_keep_their_own_active_project() {
    let server = HttpServer::start();
    let (wa, wb) = (fixture_workspace(), fixture_workspace());
    let a = server.session();
    let b = server.session();
    assert_ne!(a.id, b.id);
    let pa = a.call_json(
        "index_workspace",
        json!({"path": wa.path().to_str().unwrap()}),
    )["project"]
        .as_str()
        .unwrap()
        .to_string();
    let pb = b.call_json(
        "index_workspace",
        json!({"path": wb.path().to_str().unwrap()}),
    )["project"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(pa, pb);
    a.call_json("switch_active_project", json!({"project": pa}));
    b.call_json("switch_active_project", json!({"project": pb}));
    for _ in 0..2 {
        // Interleaved: neither switch leaks into the other session.
        assert_eq!(a.call_json("get_indexing_status", json!({}))["project"], pa);
        assert_eq!(b.call_json("get_indexing_status", json!({}))["project"], pb);
    }
    let active = |list: &Value| -> Vec<String> {
        list["projects"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["active"] == true)
            .map(|p| p["project"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        active(&a.call_json("list_projects", json!({}))),
        vec![pa.clone()]
    );
    assert_eq!(
        active(&b.call_json("list_projects", json!({}))),
        vec![pb.clone()]
    );

    // Ending a session closes its context; the other one goes on.
    assert!(
        server.status().contains("2 sessions now"),
        "{}",
        server.status()
    );
    let ended = server.end(&a.id);
    assert!(ended.status / 100 == 2, "{} {}", ended.status, ended.body);
    let mut status = String::new();
    for _ in 0..100 {
        status = server.status();
        if status.contains("1 session now") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(status.contains("1 session now"), "{status}");
    assert_eq!(b.call_json("get_indexing_status", json!({}))["project"], pb);
}

#[test]
fn the_http_server_is_the_databases_daemon_for_one_shot_commands() {
    let server = HttpServer::start();
    let ws = fixture_workspace();
    // Wait until the server has loaded (a session answers), then ask it as a daemon.
    let s = server.session();
    let status = HttpServer::command(server.state.path())
        .args(["daemon", "status"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(
        text.contains(&format!("http://{}/mcp", server.addr)),
        "{text}"
    );
    // `scryer index` goes through it (turso lets one process open the database) and the
    // HTTP session sees the result.
    let out = HttpServer::command(server.state.path())
        .args(["index", ws.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = s.call_json("list_projects", json!({}));
    assert_eq!(list["total"], 1, "{list}");

    // A stdio session of `scryer serve` on the same database is served by it too.
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use rmcp::ServiceExt;
        use rmcp::model::CallToolRequestParams;
        use rmcp::transport::TokioChildProcess;
        let mut cmd = tokio::process::Command::from(HttpServer::command(server.state.path()));
        cmd.arg("serve");
        let client = ()
            .serve(TokioChildProcess::new(cmd).unwrap())
            .await
            .expect("a stdio session through the HTTP server's socket");
        let answer = client
            .call_tool(CallToolRequestParams::new("list_projects"))
            .await
            .unwrap();
        let text = answer.content[0].as_text().unwrap().text.clone();
        let list: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(list["total"], 1, "{list}");
        let _ = client.cancel().await;
    });
    let status = server.status();
    assert!(status.contains("sessions 0 now, 1 since start"), "{status}");
}

/// A session whose client went away (its event stream closed and never reopened) stops
/// being counted as open; one that is still there stays counted.
#[test]
fn sessions_whose_client_went_away_are_not_shown_as_open() {
    use std::io::{Read, Write};
    let server = HttpServer::start();
    let gone = server.session();
    let stays = server.session();
    // The client of `gone` opens its event stream, then exits.
    let mut stream = std::net::TcpStream::connect(&server.addr).unwrap();
    write!(
        stream,
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nAuthorization: Bearer {}\r\n\
         Mcp-Session-Id: {}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n",
        server.addr, server.token, gone.id
    )
    .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).unwrap();
    assert!(
        String::from_utf8_lossy(&head).contains("200"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    assert!(
        server.status().contains("2 sessions now"),
        "{}",
        server.status()
    );
    drop(stream);
    let mut status = String::new();
    for _ in 0..120 {
        status = server.status();
        if status.contains("1 session now") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert!(status.contains("1 session now"), "{status}");
    // The other session goes on.
    let (text, is_error) = stays.call("list_projects", json!({}));
    assert!(!is_error, "{text}");
}
