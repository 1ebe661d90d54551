//! `toolcell serve --http`: Streamable HTTP with rmcp's own HTTP client, and raw requests for
//! the checks a well-behaved client never trips (origin, host, tokens, session deletion).

use std::process::Stdio;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::{Fixture, TIMEOUT, bin, hostile_wasm, within, workspace_root};

const TOKEN: &str = "test-token-0123456789abcdef";

/// A running `toolcell serve --http 127.0.0.1:0`.
struct HttpServer {
    child: Child,
    url: String,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpServer {
    async fn start(config: &std::path::Path, token: Option<&str>, extra: &[&str]) -> HttpServer {
        let mut command = Command::new(bin());
        command
            .current_dir(std::env::temp_dir())
            .env_remove("RUST_LOG")
            .env_remove("TOOLCELL_TOKEN")
            .env("NO_COLOR", "1")
            .env(
                "TOOLCELL_CACHE_DIR",
                workspace_root().join("target").join("test-cache"),
            )
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(token) = token {
            command.env("TOOLCELL_TOKEN", token);
        }
        let mut child = command.spawn().expect("spawn toolcell serve --http");
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (url_tx, url_rx) = tokio::sync::oneshot::channel();
        let sink = log.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            let mut url_tx = Some(url_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("http://")
                    && line.contains("serving MCP over HTTP")
                    && let Some(tx) = url_tx.take()
                {
                    let url: String = line[at..]
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_string();
                    let _ = tx.send(url);
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let url = within("the server to listen", url_rx)
            .await
            .unwrap_or_else(|_| panic!("the server exited before listening"));
        HttpServer { child, url, log }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    async fn client(&self, token: Option<&str>) -> RunningService<RoleClient, ()> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.as_str());
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        within("the HTTP handshake", ().serve(transport))
            .await
            .unwrap_or_else(|e| panic!("HTTP handshake failed: {e}\n{}", self.log()))
    }

    /// A raw POST of `initialize` with the given extra headers.
    async fn post_initialize(&self, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = reqwest::Client::new()
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        });
        within("a raw POST", request.json(&body).send())
            .await
            .expect("the request is sent")
    }

    #[cfg(unix)]
    fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("the server is running").to_string();
        let status = std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("run kill");
        assert!(status.success());
    }

    async fn wait(mut self) -> (std::process::ExitStatus, String) {
        let status = within("the server to exit", self.child.wait())
            .await
            .expect("wait for the server");
        tokio::time::sleep(Duration::from_millis(100)).await;
        (status, self.log())
    }
}

fn fs_fixture() -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    fixture.write("data/hello.txt", "hello over http\n");
    fixture.write(
        "plugins/hostile.wasm",
        std::fs::read(hostile_wasm()).expect("read hostile.wasm"),
    );
    let config = fixture.config(FS_AND_HOSTILE);
    (fixture, config)
}

const FS_AND_HOSTILE: &str = r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }]

[[plugin]]
name = "hostile"
path = "plugins/hostile.wasm"
"#;

async fn read_hello(client: &Peer<RoleClient>) -> String {
    let mut params = CallToolRequestParams::new("read_file");
    params.arguments = Some(
        json!({"path": "hello.txt"})
            .as_object()
            .expect("an object")
            .clone(),
    );
    let result = within("an HTTP call", client.call_tool(params))
        .await
        .expect("the call succeeds");
    let value = serde_json::to_value(&result).expect("serialise");
    assert_ne!(value["isError"], true, "{value}");
    value["content"][0]["text"]
        .as_str()
        .expect("text")
        .to_string()
}

#[tokio::test]
async fn list_and_call_over_http_with_two_sessions() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, Some(TOKEN), &[]).await;
    let first = server.client(Some(TOKEN)).await;
    let second = server.client(Some(TOKEN)).await;
    let tools = within("tools/list", first.list_all_tools())
        .await
        .expect("list tools");
    assert!(tools.iter().any(|t| t.name == "read_file"));
    assert_eq!(read_hello(&first).await, "hello over http\n");
    assert_eq!(read_hello(&second).await, "hello over http\n");
    first.cancel().await.expect("close the first session");
    // The other session is unaffected.
    assert_eq!(read_hello(&second).await, "hello over http\n");
    assert!(!server.log().contains(TOKEN), "the token reached the log");
}

#[tokio::test]
async fn missing_and_wrong_tokens_get_401_with_a_challenge() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, Some(TOKEN), &[]).await;
    let missing = server.post_initialize(&[]).await;
    assert_eq!(missing.status(), 401);
    let challenge = missing.headers()["www-authenticate"].to_str().unwrap();
    assert!(challenge.starts_with("Bearer"), "{challenge}");

    let wrong = server
        .post_initialize(&[("authorization", "Bearer not-the-token-at-all")])
        .await;
    assert_eq!(wrong.status(), 401);
    assert!(
        wrong.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );

    let right = server
        .post_initialize(&[("authorization", &format!("Bearer {TOKEN}"))])
        .await;
    assert_eq!(right.status(), 200);
    assert!(!server.log().contains("not-the-token-at-all"));
}

#[tokio::test]
async fn foreign_origin_and_host_get_403() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let evil = server
        .post_initialize(&[("origin", "https://evil.example")])
        .await;
    assert_eq!(evil.status(), 403);
    let rebinding = server.post_initialize(&[("host", "evil.example")]).await;
    assert_eq!(rebinding.status(), 403);
    let local = server
        .post_initialize(&[("origin", "http://localhost:3000")])
        .await;
    assert_eq!(local.status(), 200);
}

#[tokio::test]
async fn deleting_a_session_ends_it() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let response = server.post_initialize(&[]).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .expect("a session id")
        .to_string();
    assert!(session.len() >= 32, "a random session id: {session}");

    let client = reqwest::Client::new();
    let deleted = client
        .delete(&server.url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .expect("DELETE is sent");
    assert_eq!(deleted.status(), 200);
    let after = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
        .send()
        .await
        .expect("POST is sent");
    assert_eq!(after.status(), 404, "the deleted session is gone");
}

#[tokio::test]
async fn two_hundred_concurrent_calls_from_twenty_clients() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, Some(TOKEN), &[]).await;
    let mut clients = Vec::new();
    for _ in 0..20 {
        clients.push(server.client(Some(TOKEN)).await);
    }
    let mut calls = tokio::task::JoinSet::new();
    for client in &clients {
        for _ in 0..10 {
            let peer = client.peer().clone();
            calls.spawn(async move { read_hello(&peer).await });
        }
    }
    let results = within("200 calls", calls.join_all()).await;
    assert_eq!(results.len(), 200);
    assert!(results.iter().all(|text| text == "hello over http\n"));
}

#[cfg(unix)]
#[tokio::test]
async fn sigterm_with_a_call_in_flight_exits_0() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &["--shutdown-grace-ms", "300"]).await;
    let client = server.client(None).await;
    // A call that never ends by itself.
    let spin = tokio::spawn(async move {
        let params = CallToolRequestParams::new("spin");
        let outcome = client.call_tool(params).await;
        (
            outcome.map(|r| serde_json::to_value(r).expect("serialise")),
            client,
        )
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.signal("-TERM");
    let (status, log) = server.wait().await;
    assert!(status.success(), "exit status {status}\n{log}");
    assert!(log.contains("shutting down"), "{log}");
    // The in-flight call got an answer or its connection closed; it did not hang.
    let outcome = tokio::time::timeout(TIMEOUT, spin).await;
    assert!(outcome.is_ok(), "the in-flight call hung after shutdown");
}

#[tokio::test]
async fn a_public_address_without_a_token_is_refused() {
    let (_fixture, config) = fs_fixture();
    let output = Command::new(bin())
        .env_remove("TOOLCELL_TOKEN")
        .args(["serve", "--http", "0.0.0.0:0", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .output();
    let output = within("toolcell to refuse", output).await.expect("run");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
}

#[tokio::test]
async fn progress_over_http() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let response = server.post_initialize(&[]).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let client = reqwest::Client::new();
    let post = |body: Value| {
        client
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body)
            .send()
    };
    post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await
        .expect("initialized");
    let body = within(
        "a streamed call",
        post(json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "progress", "arguments": {"n": 3}, "_meta": {"progressToken": "h"}},
        })),
    )
    .await
    .expect("the call is sent");
    let body = read_body("the streamed call's answer", body).await;
    // Three reports 1 ms apart: the first at once, the last before the result.
    let progress = body.matches("notifications/progress").count();
    assert_eq!(progress, 2, "{body}");
    assert!(body.contains("done 3"), "{body}");
}

/// A raw session: `initialize` and `notifications/initialized` done.
async fn raw_session(server: &HttpServer) -> (reqwest::Client, String) {
    let response = server.post_initialize(&[]).await;
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    let client = reqwest::Client::new();
    raw_post(
        &client,
        server,
        &session,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    (client, session)
}

async fn raw_post(
    client: &reqwest::Client,
    server: &HttpServer,
    session: &str,
    body: Value,
) -> reqwest::Response {
    let request = client
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body)
        .send();
    within("a raw POST", request)
        .await
        .expect("the request is sent")
}

/// The whole body of `response`, read within [`TIMEOUT`]: an SSE stream's
/// keep-alive comments would keep a plain read waiting for ever.
async fn read_body(what: &str, response: reqwest::Response) -> String {
    within(what, response.text()).await.expect("read the body")
}

/// Sets the session's log level to `warning` (ids 2 and 3), then calls the `log` tool, which
/// logs `name` at warning and a debug line, and checks the call's answer.
async fn log_at_warning(client: &reqwest::Client, server: &HttpServer, session: &str, name: &str) {
    let set = raw_post(
        client,
        server,
        session,
        json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "warning"}}),
    )
    .await;
    assert!(set.status().is_success());
    // The status comes before the answer: a call sent before the answer is
    // read may run before the level is set (the server runs requests side by
    // side), and then it logs nothing.
    let answer = read_body("the answer to logging/setLevel", set).await;
    assert!(answer.contains(r#""result""#), "{answer}");
    let call = raw_post(
        client,
        server,
        session,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "log", "arguments": {"name": name}}}),
    )
    .await;
    let body = read_body("the answer to the log call", call).await;
    assert!(body.contains("logged"), "{body}");
}

#[tokio::test]
async fn logging_over_http() {
    let (_fixture, config) = fs_fixture();
    logging_reaches_the_get_stream(&config).await;
}

#[tokio::test]
async fn logging_over_http_while_plugins_load() {
    // The session, its GET stream and the log level are set up while a
    // plugin is still loading (its list-tools spins for 3 s); the call waits
    // for the tools, and its log message must still reach the GET stream.
    let (fixture, _) = fs_fixture();
    let slow = fixture.slow_loading(3000);
    let config = fixture.config(&format!("{FS_AND_HOSTILE}{slow}"));
    logging_reaches_the_get_stream(&config).await;
}

async fn logging_reaches_the_get_stream(config: &std::path::Path) {
    let server = HttpServer::start(config, None, &[]).await;
    let (client, session) = raw_session(&server).await;
    // Log messages are not tied to a request: they come on the session's GET stream.
    let mut stream = within(
        "the GET stream",
        client
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send(),
    )
    .await
    .expect("GET is sent");
    assert!(stream.status().is_success(), "{}", stream.status());
    log_at_warning(&client, &server, &session, "over http").await;
    let events = within("a log message on the GET stream", async {
        let mut events = String::new();
        while !events.contains("over http") {
            let chunk = stream.chunk().await.expect("read the GET stream");
            let chunk = chunk.expect("the GET stream stays open");
            events.push_str(&String::from_utf8_lossy(&chunk));
        }
        events
    })
    .await;
    assert!(events.contains("notifications/message"), "{events}");
    assert!(events.contains(r#""level":"warning""#), "{events}");
    assert!(!events.contains("a debug line"), "{events}");
}

#[tokio::test]
async fn cancellation_over_http_stops_the_guest() {
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let (client, session) = raw_session(&server).await;
    let url = server.url.clone();
    let call_client = client.clone();
    let call_session = session.clone();
    // 100,000 steps of 1 ms, each logged: far longer than the test.
    let call = tokio::spawn(async move {
        call_client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &call_session)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                          "params": {"name": "progress", "arguments": {"n": 100000}}}))
            .send()
            .await
    });
    let steps = |log: &str| log.matches("step ").count();
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while steps(&server.log()) < 5 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the call never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    raw_post(
        &client,
        &server,
        &session,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 9, "reason": "test"}}),
    )
    .await;
    let after_cancel = steps_once_stopped(&server).await;
    assert!(after_cancel < 100_000);
    call.abort();
}

#[cfg(unix)]
#[tokio::test]
async fn initialize_is_answered_while_plugins_are_still_loading() {
    // The raw plugin's list-tools spins for 5 minutes: the server must listen
    // and answer `initialize` long before that, and still stop on SIGTERM.
    let (fixture, _) = fs_fixture();
    let slow = fixture.slow_loading(300_000);
    let config = fixture.config(&format!("{FS_AND_HOSTILE}{slow}"));
    let server = HttpServer::start(&config, None, &[]).await;
    let response = server.post_initialize(&[]).await;
    assert_eq!(response.status(), 200, "{}", server.log());
    server.signal("-TERM");
    let (status, log) = server.wait().await;
    assert!(status.success(), "exit: {status}\n{log}");
    assert!(
        !log.contains("tools loaded"),
        "loading finished, so the test proved nothing:\n{log}"
    );
}

#[tokio::test]
async fn deleting_twice_or_an_unknown_session_gets_404() {
    // See: DELETE answered 202 to every request, so the Python SDK logged
    // "Session termination failed: 202" on every close.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let (client, session) = raw_session(&server).await;
    let delete = |session: String| {
        let request = client
            .delete(&server.url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send();
        async move { within("a DELETE", request).await.expect("DELETE is sent") }
    };
    assert_eq!(delete(session.clone()).await.status(), 200);
    assert_eq!(delete(session).await.status(), 404, "already ended");
    let unknown = "00000000-0000-4000-8000-000000000000".to_string();
    assert_eq!(delete(unknown).await.status(), 404);
    let without_id = within("a DELETE", client.delete(&server.url).send())
        .await
        .expect("DELETE is sent");
    assert_eq!(without_id.status(), 400);
}

/// One server-sent event.
#[derive(Debug)]
struct Event {
    id: Option<String>,
    retry: Option<String>,
    data: String,
}

impl Event {
    fn message(&self) -> Option<Value> {
        serde_json::from_str(&self.data).ok()
    }

    /// The `progress` of a progress notification.
    fn progress(&self) -> Option<u64> {
        let message = self.message()?;
        (message["method"] == "notifications/progress")
            .then(|| message["params"]["progress"].as_f64())
            .flatten()
            .map(|progress| progress as u64)
    }

    /// The text of a tool result.
    fn result_text(&self) -> Option<String> {
        let message = self.message()?;
        message["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_string)
    }
}

/// Reads server-sent events from a streamed response as they arrive.
struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    fn new(response: reqwest::Response) -> Events {
        assert_eq!(response.status(), 200);
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event; `None` when the stream ends. Fails the test after
    /// [`TIMEOUT`] with no event, however many keep-alive comments came.
    async fn next(&mut self) -> Option<Event> {
        within("an SSE event", self.next_unbounded()).await
    }

    async fn next_unbounded(&mut self) -> Option<Event> {
        loop {
            while let Some(at) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..at + 2).collect();
                let (mut id, mut retry, mut data) = (None, None, None::<String>);
                for line in block.lines() {
                    let (field, value) = line.split_once(':').unwrap_or((line, ""));
                    let value = value.strip_prefix(' ').unwrap_or(value).to_string();
                    match field {
                        "id" => id = Some(value),
                        "retry" => retry = Some(value),
                        "data" => data = Some(data.map_or(value.clone(), |d| d + "\n" + &value)),
                        // A comment (`:`), the keep-alive.
                        _ => {}
                    }
                }
                if id.is_some() || retry.is_some() || data.is_some() {
                    return Some(Event {
                        id,
                        retry,
                        data: data.unwrap_or_default(),
                    });
                }
            }
            let chunk = self.response.chunk().await.expect("read the stream")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Every event until the stream ends.
    async fn rest(mut self) -> Vec<Event> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }
}

/// Starts the `progress` tool (`n` steps) on `session`'s own connection,
/// reads its first two progress notifications, and drops the connection.
/// Returns the id of the last event read and its progress.
async fn start_progress_and_drop(server: &HttpServer, session: &str, n: u64) -> (String, u64) {
    // A client of its own, so that dropping the response closes the connection.
    let client = reqwest::Client::new();
    let response = raw_post(
        &client,
        server,
        session,
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
               "params": {"name": "progress", "arguments": {"n": n},
                          "_meta": {"progressToken": "resume"}}}),
    )
    .await;
    let mut events = Events::new(response);
    let priming = events.next().await.expect("a priming event");
    assert!(priming.data.is_empty(), "{priming:?}");
    assert_eq!(priming.retry.as_deref(), Some("3000"));
    let mut last = None;
    for _ in 0..2 {
        let event = events.next().await.expect("a progress notification");
        let progress = event.progress().expect("a progress notification");
        last = Some((event.id.expect("events have ids"), progress));
    }
    drop(events);
    drop(client);
    let (id, progress) = last.expect("two events read");
    assert!(progress < n, "the call was still running");
    (id, progress)
}

/// The `<n>` of an event id `<stream>/<n>`: how many of the stream's events
/// come up to and including this one.
fn position(id: &str) -> u64 {
    id.rsplit_once('/')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or_else(|| panic!("an event id `<stream>/<n>`: {id}"))
}

/// Checks what a resumed stream carries after `last`: events numbered on
/// from there without a gap (`contiguous`), progress rising from above
/// `seen` to `n`, and the result, last.
fn check_resumed(events: &[Event], last: &str, seen: u64, n: u64, contiguous: bool) {
    let priming = &events[0];
    assert!(priming.data.is_empty(), "{priming:?}");
    assert_eq!(priming.id.as_deref(), Some(last));
    let positions: Vec<u64> = events[1..]
        .iter()
        .map(|event| position(event.id.as_deref().expect("an id")))
        .collect();
    assert!(
        positions.windows(2).all(|pair| pair[0] < pair[1]),
        "{positions:?}"
    );
    if contiguous {
        let expected: Vec<u64> = (position(last) + 1..).take(positions.len()).collect();
        assert_eq!(positions, expected, "every event after the last one read");
    }
    let progress: Vec<u64> = events.iter().filter_map(Event::progress).collect();
    assert!(
        progress.windows(2).all(|pair| pair[0] < pair[1]),
        "{progress:?}"
    );
    assert!(
        progress.first().is_some_and(|first| *first > seen),
        "{progress:?}"
    );
    assert_eq!(progress.last(), Some(&n), "the last report");
    let result = events.last().expect("events");
    assert_eq!(
        result.result_text(),
        Some(format!("done {n}")),
        "{result:?}"
    );
}

async fn resume(server: &HttpServer, session: &str, last_event_id: &str) -> Events {
    let response = within(
        "a GET with Last-Event-ID",
        reqwest::Client::new()
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
            .send(),
    )
    .await
    .expect("GET is sent");
    Events::new(response)
}

async fn wait_for_log(server: &HttpServer, what: &str, seen: impl Fn(&str) -> bool) {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while !seen(&server.log()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}:\n{}",
            server.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The server started with a debug line when an SSE stream ends.
async fn start_with_stream_ends(config: &std::path::Path) -> HttpServer {
    HttpServer::start(config, None, &["--log-level", "info,toolcell=debug"]).await
}

/// Waits until the stream of `event_id` has ended: its response is sent.
async fn wait_for_stream_end(server: &HttpServer, event_id: &str) {
    let stream = event_id.rsplit_once('/').expect("<key>/<n>").0;
    wait_for_log(server, "the call's stream to end", |log| {
        log.lines()
            .any(|line| line.contains("SSE stream ended") && line.contains(stream))
    })
    .await;
}

#[tokio::test]
async fn a_dropped_stream_resumes_with_every_event_and_the_result() {
    // See: a POST stream dropped mid-call and resumed with Last-Event-ID got
    // an empty stream, and the result was never delivered (rmcp forgets a
    // request's stream once its response is sent).
    let (_fixture, config) = fs_fixture();
    let server = start_with_stream_ends(&config).await;
    let (_client, session) = raw_session(&server).await;
    let (last, seen) = start_progress_and_drop(&server, &session, 1000).await;
    // The response is sent while no one is connected.
    wait_for_stream_end(&server, &last).await;
    let events = resume(&server, &session, &last).await.rest().await;
    check_resumed(&events, &last, seen, 1000, true);
}

#[tokio::test]
async fn a_resumed_stream_gets_at_most_what_a_log_keeps_and_the_result() {
    // See: with many progress notifications while disconnected, a resume
    // skipped 1,163 events and never got the result. A log keeps a stream's
    // last 1,024 events, the result among them: a call that reports every
    // step of 2,000 while the client is away overflows it.
    let (_fixture, config) = fs_fixture();
    let server = start_with_stream_ends(&config).await;
    let (_client, session) = raw_session(&server).await;
    let (last, seen) = start_progress_and_drop(&server, &session, 2000).await;
    wait_for_stream_end(&server, &last).await;
    let events = resume(&server, &session, &last).await.rest().await;
    assert!(events.len() <= 1 + 1024, "{} events", events.len());
    check_resumed(&events, &last, seen, 2000, false);
}

#[tokio::test]
async fn a_stream_resumed_mid_call_goes_on_live() {
    // The live side of resumption: the client comes back while the call
    // runs, gets what it missed, then the rest as it is sent.
    let (_fixture, config) = fs_fixture();
    let server = start_with_stream_ends(&config).await;
    let (_client, session) = raw_session(&server).await;
    let (last, seen) = start_progress_and_drop(&server, &session, 1000).await;
    let events = resume(&server, &session, &last).await.rest().await;
    check_resumed(&events, &last, seen, 1000, true);
}

#[tokio::test]
async fn another_session_cannot_resume_a_stream() {
    // Event ids are not enough: a stream's events go only to the session
    // that made the request.
    let (_fixture, config) = fs_fixture();
    let server = start_with_stream_ends(&config).await;
    let (_client, owner) = raw_session(&server).await;
    let (_other_client, other) = raw_session(&server).await;
    let (last, seen) = start_progress_and_drop(&server, &owner, 300).await;
    wait_for_stream_end(&server, &last).await;
    let stolen = resume(&server, &other, &last).await.rest().await;
    assert!(
        stolen.iter().all(|event| event.message().is_none()),
        "{stolen:?}"
    );
    let events = resume(&server, &owner, &last).await.rest().await;
    check_resumed(&events, &last, seen, 300, true);
}

/// The `_meta` a 2026-07-28 request carries instead of a session.
/// A 2026-07-28 `tools/call` of the `progress` tool with `n` steps, sessionless.
async fn stateless_progress_call(client: &reqwest::Client, url: &str, n: u64) -> reqwest::Response {
    within(
        "a stateless call",
        client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "progress")
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                          "params": {"name": "progress", "arguments": {"n": n},
                                     "_meta": stateless_meta()}}))
            .send(),
    )
    .await
    .expect("POST is sent")
}

fn stateless_meta() -> Value {
    json!({
        "progressToken": "p",
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

#[tokio::test]
async fn the_stateless_revision_does_not_advertise_resumption() {
    // The other half of the resumption rule: 2026-07-28 has no sessions and
    // no resumption, so its streams must carry no event ids and no retry
    // hint, and GET with Last-Event-ID is refused.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let client = reqwest::Client::new();
    let response = stateless_progress_call(&client, &server.url, 3).await;
    assert!(response.headers().get("mcp-session-id").is_none());
    let events = Events::new(response).rest().await;
    let progress: Vec<u64> = events.iter().filter_map(Event::progress).collect();
    assert_eq!(progress.last(), Some(&3), "{events:?}");
    assert_eq!(
        events.last().and_then(Event::result_text).as_deref(),
        Some("done 3")
    );
    assert!(
        events
            .iter()
            .all(|event| event.id.is_none() && event.retry.is_none()),
        "{events:?}"
    );
    let get = within(
        "a stateless GET",
        client
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("last-event-id", "0")
            .send(),
    )
    .await
    .expect("GET is sent");
    assert_eq!(get.status(), 405);
}

#[tokio::test]
async fn a_dropped_stateless_stream_cancels_its_call() {
    // 2026-07-28: a broken response stream loses its request, and the client
    // sends it again; the server stops the call rather than run it for no one.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let client = reqwest::Client::new();
    let response = stateless_progress_call(&client, &server.url, 100000).await;
    let mut events = Events::new(response);
    for _ in 0..2 {
        let event = events.next().await.expect("a progress notification");
        assert!(
            event.progress().is_some() && event.id.is_none(),
            "{event:?}"
        );
    }
    drop(events);
    drop(client);
    let after_drop = steps_once_stopped(&server).await;
    assert!(after_drop < 100_000);
}

#[tokio::test]
async fn a_dropped_get_stream_resumes_with_the_log_messages_it_missed() {
    // The session's GET stream advertises resumption too (rmcp's own cache
    // handled this case; the logs that replaced it must as well): what is
    // sent on it while the client is away arrives when it comes back.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let (client, session) = raw_session(&server).await;
    let get = || {
        let request = reqwest::Client::new()
            .get(&server.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send();
        async move { Events::new(within("a GET", request).await.expect("GET is sent")) }
    };
    let mut stream = get().await;
    let priming = stream.next().await.expect("a priming event");
    let last = priming.id.expect("an event id");
    drop(stream);

    log_at_warning(&client, &server, &session, "while away").await;

    let mut resumed = resume(&server, &session, &last).await;
    let priming = resumed.next().await.expect("a priming event");
    assert_eq!(priming.id.as_deref(), Some(last.as_str()));
    let message = resumed.next().await.expect("the missed log message");
    let message = message.message().expect("a JSON-RPC message");
    assert_eq!(message["method"], "notifications/message", "{message}");
    assert_eq!(
        message["params"]["data"]["message"], "while away",
        "{message}"
    );
}

/// How many `step` lines the server has logged (the `progress` tool logs
/// one a millisecond) once no more come for half a second; fails the test if
/// they are still coming after [`TIMEOUT`] (a loaded machine may take a
/// while to stop a guest, but it must).
async fn steps_once_stopped(server: &HttpServer) -> usize {
    let steps = || server.log().matches("step ").count();
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    let mut last = steps();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = steps();
        if now == last {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the guest kept running: {now} steps"
        );
        last = now;
    }
}

/// The `host:port` the server listens on.
fn authority(server: &HttpServer) -> String {
    let rest = server.url.strip_prefix("http://").expect("an http URL");
    rest.split('/').next().expect("host:port").to_string()
}

/// What a connection reads until the server closes it: `Some(text)` at EOF
/// (or a reset, which loses any unread text), `None` if it stays open.
async fn until_closed(stream: &mut tokio::net::TcpStream) -> Option<String> {
    use tokio::io::AsyncReadExt;
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(TIMEOUT, stream.read(&mut buffer)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(String::from_utf8_lossy(&read).into_owned()),
            Ok(Ok(n)) => read.extend_from_slice(&buffer[..n]),
        }
    }
}

/// Opens a TCP connection to the server and sends `bytes`.
async fn connect(server: &HttpServer, bytes: &[u8]) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = within(
        "a connection",
        tokio::net::TcpStream::connect(authority(server)),
    )
    .await
    .expect("connect");
    stream.write_all(bytes).await.expect("write");
    stream
}

/// An `initialize` that succeeds, retried while the server is still closing
/// connections it has been told about.
async fn initialize_eventually(server: &HttpServer) -> reqwest::Response {
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    loop {
        let sent = reqwest::Client::new()
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .json(&json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}},
            }))
            .send()
            .await;
        match sent {
            Ok(response) if response.status() == 200 => return response,
            other => assert!(
                tokio::time::Instant::now() < deadline,
                "initialize kept failing: {other:?}\n{}",
                server.log()
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn sessions_past_the_cap_get_503_with_retry_after() {
    // See: issue "Bounded everywhere", item 3: 4,000 `initialize` without
    // DELETE took the server from 34 to 255 MB.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &["--max-sessions", "3"]).await;
    let mut sessions = Vec::new();
    for _ in 0..3 {
        let response = server.post_initialize(&[]).await;
        assert_eq!(response.status(), 200);
        sessions.push(
            response.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_string(),
        );
    }
    let refused = server.post_initialize(&[]).await;
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "30");
    assert!(refused.headers().get("mcp-session-id").is_none());
    assert!(
        read_body("the refusal", refused)
            .await
            .contains("--max-sessions")
    );
    // Sessionless 2026-07-28 requests are not counted.
    let stateless = stateless_progress_call(&reqwest::Client::new(), &server.url, 1).await;
    assert_eq!(stateless.status(), 200);
    // The sessions that exist still work, and ending one makes room.
    let client = reqwest::Client::new();
    let ping = raw_post(
        &client,
        &server,
        &sessions[0],
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await;
    assert_eq!(ping.status(), 200);
    let deleted = client
        .delete(&server.url)
        .header("mcp-session-id", &sessions[0])
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("DELETE is sent");
    assert_eq!(deleted.status(), 200);
    assert_eq!(server.post_initialize(&[]).await.status(), 200);
}

#[tokio::test]
async fn an_abandoned_session_expires_and_frees_its_place() {
    // See: issue "Bounded everywhere", item 3: a session nobody ends must go.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(
        &config,
        None,
        &["--max-sessions", "1", "--session-idle-secs", "1"],
    )
    .await;
    let (client, session) = raw_session(&server).await;
    assert_eq!(server.post_initialize(&[]).await.status(), 503, "full");
    wait_for_log(&server, "the idle session to end", |log| {
        log.contains("ending an HTTP session idle")
    })
    .await;
    let after = raw_post(
        &client,
        &server,
        &session,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await;
    assert_eq!(after.status(), 404, "the idle session is gone");
    assert_eq!(
        server.post_initialize(&[]).await.status(),
        200,
        "its place is free"
    );
}

#[tokio::test]
async fn a_session_with_a_connected_stream_is_not_idle() {
    // The other side of expiry: a client that keeps its GET stream open is
    // there, even when it sends nothing.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &["--session-idle-secs", "1"]).await;
    let (client, session) = raw_session(&server).await;
    let get = client
        .get(&server.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send();
    let mut stream = Events::new(within("a GET", get).await.expect("GET is sent"));
    stream.next().await.expect("a priming event");
    // Two idle limits and more pass with the stream connected.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !server.log().contains("ending an HTTP session idle"),
        "{}",
        server.log()
    );
    let ping = raw_post(
        &client,
        &server,
        &session,
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await;
    assert_eq!(ping.status(), 200);
}

#[tokio::test]
async fn connections_past_the_caps_are_refused_and_the_server_recovers() {
    // See: issue "Bounded everywhere", item 4: 20,000 idle connections took
    // the server to its descriptor limit and a real `initialize` timed out.
    let (_fixture, config) = fs_fixture();
    for (flag, cap) in [("--max-connections", 4), ("--max-connections-per-ip", 3)] {
        let cap_text = cap.to_string();
        let server = HttpServer::start(&config, None, &[flag, &cap_text]).await;
        let mut idle = Vec::new();
        for _ in 0..cap {
            idle.push(connect(&server, b"").await);
        }
        // Each idle connection is accepted and holds its place.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut extra = connect(&server, b"").await;
        let answer = until_closed(&mut extra)
            .await
            .unwrap_or_else(|| panic!("{flag}: the extra connection stayed open"));
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 503"),
            "{flag}: {answer}"
        );
        drop(idle);
        let response = initialize_eventually(&server).await;
        assert_eq!(response.status(), 200, "{flag}");
    }
}

#[tokio::test]
async fn a_connection_that_never_finishes_its_headers_is_closed() {
    // See: issue "Bounded everywhere", item 4: connections that never
    // finished their headers stayed open indefinitely (slow-loris).
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, Some(TOKEN), &["--header-timeout-ms", "300"]).await;
    let mut half = connect(
        &server,
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-",
    )
    .await;
    let mut silent = connect(&server, b"").await;
    assert!(until_closed(&mut half).await.is_some(), "half a head");
    assert!(until_closed(&mut silent).await.is_some(), "nothing sent");
    // Real clients are still served.
    let right = server
        .post_initialize(&[("authorization", &format!("Bearer {TOKEN}"))])
        .await;
    assert_eq!(right.status(), 200);
}

#[tokio::test]
async fn a_body_that_never_completes_gets_408_and_the_connection_closes() {
    // See: issue "Bounded everywhere", item 4: request bodies had no read timeout.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &["--body-timeout-ms", "300"]).await;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
        authority(&server)
    );
    let mut stream = connect(&server, head.as_bytes()).await;
    let answer = until_closed(&mut stream)
        .await
        .expect("the connection is closed");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("--body-timeout-ms"), "{answer}");
}

#[tokio::test]
async fn the_replay_budget_drops_the_oldest_ended_streams_first() {
    // See: issue "Bounded everywhere", item 3: each session kept up to 64
    // finished streams for 60 s (64 one-MB results: +69.5 MB per session).
    let (fixture, config) = fs_fixture();
    fixture.write("data/big.txt", "a".repeat(600 * 1024));
    let server = HttpServer::start(
        &config,
        None,
        &[
            "--replay-budget-mb",
            "1",
            "--log-level",
            "info,toolcell=debug",
        ],
    )
    .await;
    let (client, session) = raw_session(&server).await;
    let (last, _) = start_progress_and_drop(&server, &session, 300).await;
    wait_for_stream_end(&server, &last).await;
    // Two 600 KB results, read in full: with the progress stream's events
    // they are over 1 MiB, so the ended streams go, oldest first.
    for id in [20, 21] {
        let body = raw_post(
            &client,
            &server,
            &session,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": "read_file", "arguments": {"path": "big.txt"}}}),
        )
        .await;
        let body = read_body("the read_file result", body).await;
        assert!(body.contains("aaaa"), "the file was read");
    }
    wait_for_log(&server, "the budget to drop a stream", |log| {
        log.contains("the replay budget is spent")
    })
    .await;
    // The documented answer for a stream no longer kept: an empty stream.
    let resumed = resume(&server, &session, &last).await.rest().await;
    assert!(
        resumed.iter().all(|event| event.message().is_none()),
        "{resumed:?}"
    );
}

#[tokio::test]
async fn a_removed_method_without_mcp_name_is_method_not_found() {
    // See: issue "Bounded everywhere", item 7: on 2026-07-28,
    // `resources/subscribe` without `Mcp-Name` got -32020, not -32601.
    let (_fixture, config) = fs_fixture();
    let server = HttpServer::start(&config, None, &[]).await;
    let response = within(
        "a removed method",
        reqwest::Client::new()
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "resources/subscribe")
            .json(
                &json!({"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe",
                          "params": {"uri": "file:///x", "_meta": stateless_meta()}}),
            )
            .send(),
    )
    .await
    .expect("POST is sent");
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.expect("a JSON-RPC error");
    assert_eq!(body["error"]["code"], -32601, "{body}");
    assert_eq!(body["id"], 4, "{body}");
}
