//! Property tests of the bytes a client controls before any tool runs (issue 19, ADR
//! 0025): the JSON-RPC line check over arbitrary bytes and arbitrary JSON, the guarded
//! stream with its input split and joined at arbitrary points, the daemon's handshake
//! line, and argument coercion against arbitrary schemas and values. `PROPTEST_CASES`
//! sets the number of cases (128 by default here; the long run is `PROPTEST_CASES=10000`).

use std::pin::Pin;
use std::task::{Context, Poll};

use proptest::prelude::*;
use scryer_server::contract::coerce_arguments;
use scryer_server::daemon::{Hello, read_line_json};
use scryer_server::wire::{self, Verdict};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, BufReader, ReadBuf};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Arbitrary JSON, nested a few levels.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A JSON-RPC request with each field right, wrong or missing.
fn request() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just(json!("2.0")), json_value()],
        prop::option::of(json_value()),
        prop_oneof![
            Just(json!("tools/call")),
            Just(json!("tools/list")),
            Just(json!("initialize")),
            json_value()
        ],
        prop::option::of(prop_oneof![
            json_value(),
            (
                prop_oneof![Just(json!("search_symbols")), json_value()],
                json_value()
            )
                .prop_map(|(name, arguments)| json!({"name": name, "arguments": arguments})),
        ]),
    )
        .prop_map(|(jsonrpc, id, method, params)| {
            let mut m = Map::new();
            m.insert("jsonrpc".into(), jsonrpc);
            if let Some(id) = id {
                m.insert("id".into(), id);
            }
            m.insert("method".into(), method);
            if let Some(p) = params {
                m.insert("params".into(), p);
            }
            Value::Object(m)
        })
}

/// The verdict on any input is well formed: an answer is one JSON-RPC error line with
/// a known code and a message; a forwarded line parses as a JSON object.
fn assert_well_formed(line: &[u8]) -> Result<(), TestCaseError> {
    match wire::check(line) {
        Verdict::Skip => prop_assert!(line.trim_ascii().is_empty()),
        Verdict::Forward => {
            let v: Value = serde_json::from_slice(line.trim_ascii())
                .map_err(|e| TestCaseError::fail(format!("forwarded unparsable: {e}")))?;
            prop_assert!(v.is_object(), "forwarded a non-object");
        }
        Verdict::Answer(a) => {
            prop_assert!(a.ends_with(b"\n"));
            prop_assert_eq!(a.iter().filter(|b| **b == b'\n').count(), 1);
            let v: Value = serde_json::from_slice(&a).unwrap();
            prop_assert_eq!(&v["jsonrpc"], "2.0");
            let code = v["error"]["code"].as_i64().unwrap();
            prop_assert!(
                [
                    wire::PARSE_ERROR,
                    wire::INVALID_REQUEST,
                    wire::INVALID_PARAMS
                ]
                .contains(&code)
            );
            prop_assert!(!v["error"]["message"].as_str().unwrap().is_empty());
        }
    }
    Ok(())
}

/// A reader handing out `data` in pieces ending at `cuts` (a cut past the end of
/// `data` is the end: before, it sliced out of bounds, the reader task panicked and the
/// forwarded stream was never closed, which was the hang this test was ignored for).
struct Chunked {
    data: Vec<u8>,
    at: usize,
    cuts: Vec<usize>,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let at = self.at;
        let next = self
            .cuts
            .iter()
            .copied()
            .find(|c| *c > at)
            .unwrap_or(self.data.len())
            .min(self.data.len())
            .min(at + buf.remaining());
        buf.put_slice(&self.data[at..next]);
        self.at = next;
        Poll::Ready(Ok(()))
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// What `guarded` forwards for `data` delivered in pieces, and everything it answers
/// until both sides end (rmcp's side ends here once its input has, as in a session
/// whose client closed its input: the answers still queued must come out, no more).
fn through_guarded(data: Vec<u8>, cuts: Vec<usize>) -> (Vec<u8>, Vec<u8>) {
    runtime().block_on(async move {
        let (answers_w, mut answers_r) = tokio::io::duplex(1 << 20);
        let (mut forwarded, w) = wire::guarded(Chunked { data, at: 0, cuts }, answers_w);
        // Bounded, so a stream the guard fails to close fails the case instead of
        // hanging the suite.
        let limit = std::time::Duration::from_secs(10);
        let mut fwd = Vec::new();
        tokio::time::timeout(limit, forwarded.read_to_end(&mut fwd))
            .await
            .expect("the forwarded stream ends when the input does")
            .unwrap();
        drop((forwarded, w));
        let mut ans = Vec::new();
        tokio::time::timeout(limit, answers_r.read_to_end(&mut ans))
            .await
            .expect("the answers end when both sides have")
            .unwrap();
        (fwd, ans)
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_get_a_well_formed_verdict(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        assert_well_formed(&bytes)?;
    }

    #[test]
    fn any_json_gets_a_well_formed_verdict(v in json_value()) {
        assert_well_formed(v.to_string().as_bytes())?;
    }

    #[test]
    fn any_request_shape_gets_a_well_formed_verdict(v in request()) {
        let line = v.to_string();
        assert_well_formed(line.as_bytes())?;
        // Cut anywhere, the line still gets a verdict (truncated JSON is -32700).
        for cut in [1, line.len() / 2, line.len().saturating_sub(1)] {
            assert_well_formed(&line.as_bytes()[..cut.min(line.len())])?;
        }
    }

    #[test]
    fn splitting_and_joining_the_stream_changes_nothing(
        lines in prop::collection::vec(
            prop_oneof![
                request().prop_map(|v| v.to_string().into_bytes()),
                prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..64),
            ],
            1..12,
        ),
        cuts in prop::collection::vec(0usize..4096, 0..24),
    ) {
        let mut data = Vec::new();
        let mut forwarded = Vec::new();
        let mut answered = Vec::new();
        for l in &lines {
            data.extend_from_slice(l);
            data.push(b'\n');
            match wire::check(l) {
                Verdict::Forward => {
                    forwarded.extend_from_slice(l);
                    forwarded.push(b'\n');
                }
                Verdict::Answer(a) => answered.extend_from_slice(&a),
                Verdict::Skip => {}
            }
        }
        let mut cuts = cuts;
        cuts.sort_unstable();
        let (fwd, ans) = through_guarded(data, cuts);
        prop_assert_eq!(fwd, forwarded);
        prop_assert_eq!(ans, answered);
    }

    #[test]
    fn any_handshake_line_is_read_or_refused_with_a_reason(
        line in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..600),
            json_value().prop_map(|v| v.to_string().into_bytes()),
            (json_value(), json_value()).prop_map(|(op, cwd)| {
                json!({"scryer": 1, "op": op, "cwd": cwd}).to_string().into_bytes()
            }),
        ],
        newline in any::<bool>(),
    ) {
        let mut bytes = line;
        if newline {
            bytes.push(b'\n');
        }
        let result = runtime().block_on(async move {
            let mut reader = BufReader::new(&bytes[..]);
            read_line_json::<Hello, _>(&mut reader).await
        });
        if let Err(e) = result {
            let text = format!("{e:#}");
            prop_assert!(text.contains("handshake"), "{}", text);
        }
    }

    #[test]
    fn coercion_never_panics_and_is_idempotent(
        props in prop::collection::btree_map(
            "[a-z]{1,6}",
            prop_oneof![
                Just("string"), Just("integer"), Just("number"),
                Just("boolean"), Just("array"), Just("object"), Just("weird")
            ],
            0..6,
        ),
        values in prop::collection::btree_map("[a-z]{1,6}", json_value(), 0..8),
    ) {
        let properties: Map<String, Value> = props
            .iter()
            .map(|(k, t)| (k.clone(), json!({"type": t})))
            .collect();
        let schema = json!({"type": "object", "properties": properties});
        let mut args: Map<String, Value> = values.into_iter().collect();
        coerce_arguments(&schema, &mut args);
        let once = args.clone();
        coerce_arguments(&schema, &mut args);
        prop_assert_eq!(once, args);
    }
}

/// A handshake longer than the cap is refused without reading it all into memory.
#[test]
fn an_endless_handshake_line_is_refused() {
    let bytes = vec![b'x'; 8 << 20];
    let result = runtime().block_on(async move {
        let mut reader = BufReader::new(&bytes[..]);
        read_line_json::<Hello, _>(&mut reader).await
    });
    let text = format!("{:#}", result.unwrap_err());
    assert!(text.contains("longer than"), "{text}");
}
