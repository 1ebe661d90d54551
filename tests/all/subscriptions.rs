//! Followed resources are bounded: per connection (`max_subscriptions`) and per process
//! (`max_followed_resources`), one read per resource however many follow it, fewer reads of a
//! resource that cannot be served, and an abandoned HTTP session that the server keeps notifying
//! still expires. See: issue 28, item 2.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::support::{Fixture, INVALID_PARAMS, RawServer, bin, within, workspace_root};

/// A fixture with the fs plugin over `data/`, five small files in it, and `limits` as the
/// top-level `[limits]` table's lines.
fn fixture(limits: &str, plugin_limits: &str) -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    for n in 0..5 {
        fixture.write(&format!("data/{n}.txt"), format!("file {n}\n"));
    }
    let config = fixture.config(&format!(
        "[limits]\n{limits}\n[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\n\
         mounts = [{{ host = \"data\", mode = \"ro\" }}]\n{plugin_limits}\n"
    ));
    (fixture, config)
}

fn uri(fixture: &Fixture, n: usize) -> String {
    format!(
        "file://{}",
        fixture.path(&format!("data/{n}.txt")).display()
    )
}

/// The `_meta` of a 2026-07-28 request.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "toolcell-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn error_of(response: &Value) -> (i64, String) {
    let code = response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"));
    let message = response["error"]["message"].as_str().unwrap_or_default();
    (code, message.to_string())
}

/// Opens a `subscriptions/listen` stream with request id `id` for `uris` and returns the
/// acknowledgment.
async fn listen(server: &mut RawServer, id: i64, uris: &[String]) -> Value {
    server
        .send(
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                     "params": {"_meta": stateless_meta(),
                                "notifications": {"resourceSubscriptions": uris}}}),
        )
        .await;
    loop {
        let message = server.recv().await.expect("the server goes on");
        if message["method"] == "notifications/subscriptions/acknowledged" {
            return message;
        }
    }
}

#[tokio::test]
async fn a_connection_past_max_subscriptions_is_refused_subscribe_and_stream_alike() {
    let (fixture, config) = fixture("max_subscriptions = 2", "");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    for n in 0..2 {
        let subscribed = server
            .request(
                n as i64 + 1,
                "resources/subscribe",
                json!({"uri": uri(&fixture, n)}),
            )
            .await;
        assert!(subscribed.get("result").is_some(), "{subscribed}");
    }
    // Subscribing again to one it follows costs nothing.
    let again = server
        .request(3, "resources/subscribe", json!({"uri": uri(&fixture, 0)}))
        .await;
    assert!(again.get("result").is_some(), "{again}");

    let refused = server
        .request(4, "resources/subscribe", json!({"uri": uri(&fixture, 2)}))
        .await;
    let (code, message) = error_of(&refused);
    assert_eq!(code, i64::from(INVALID_PARAMS), "{refused}");
    assert!(
        message.contains("this connection already follows 2 resources")
            && message.contains("max_subscriptions"),
        "{refused}"
    );

    // A subscriptions/listen stream on the same connection counts against the same cap: it is
    // acknowledged, then refused.
    listen(&mut server, 5, &[uri(&fixture, 3)]).await;
    let refused = server.response(5).await;
    let (code, message) = error_of(&refused);
    assert_eq!(code, i64::from(INVALID_PARAMS), "{refused}");
    assert!(message.contains("max_subscriptions"), "{refused}");

    // Unsubscribing gives the place back.
    let unsubscribed = server
        .request(6, "resources/unsubscribe", json!({"uri": uri(&fixture, 0)}))
        .await;
    assert!(unsubscribed.get("result").is_some(), "{unsubscribed}");
    let subscribed = server
        .request(7, "resources/subscribe", json!({"uri": uri(&fixture, 2)}))
        .await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    server.finish().await;
}

#[tokio::test]
async fn the_server_past_max_followed_resources_is_refused_but_shares_one_it_follows() {
    let (fixture, config) = fixture("max_subscriptions = 10\nmax_followed_resources = 2", "");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    for n in 0..2 {
        let subscribed = server
            .request(
                n as i64 + 1,
                "resources/subscribe",
                json!({"uri": uri(&fixture, n)}),
            )
            .await;
        assert!(subscribed.get("result").is_some(), "{subscribed}");
    }
    let refused = server
        .request(3, "resources/subscribe", json!({"uri": uri(&fixture, 2)}))
        .await;
    let (code, message) = error_of(&refused);
    assert_eq!(code, i64::from(INVALID_PARAMS), "{refused}");
    assert!(
        message.contains("the server already follows 2 distinct resources")
            && message.contains("max_followed_resources"),
        "{refused}"
    );

    // A stream for a resource the server already follows shares its watcher: no new distinct
    // resource, so it is not refused, and both followers hear of a change.
    let acknowledged = listen(&mut server, 4, &[uri(&fixture, 0)]).await;
    assert_eq!(
        acknowledged["params"]["notifications"]["resourceSubscriptions"],
        json!([uri(&fixture, 0)]),
        "{acknowledged}"
    );
    let mut heard = (false, false);
    let mut changes = 0;
    while !(heard.0 && heard.1) {
        tokio::select! {
            message = server.recv() => {
                let message = message.expect("the server goes on");
                assert!(message.get("error").is_none(), "{message}");
                if message["method"] == "notifications/resources/updated" {
                    assert_eq!(message["params"]["uri"], uri(&fixture, 0), "{message}");
                    // The stream's notifications carry its request id in `_meta`; the
                    // session's do not.
                    if message["params"].get("_meta").is_some() {
                        heard.1 = true;
                    } else {
                        heard.0 = true;
                    }
                }
            }
            () = tokio::time::sleep(Duration::from_secs(3)) => {
                changes += 1;
                assert!(changes < 10, "no update for both followers");
                fixture.write("data/0.txt", format!("change {changes}\n"));
            }
        }
    }
    server.kill().await;
}

/// The lines of `log` that report a failed read of a followed resource.
fn failed_reads(log: &str) -> usize {
    log.lines()
        .filter(|line| line.contains("cannot read a followed resource"))
        .count()
}

/// A followed file that cannot be served (over the output cap) is not read again until it
/// changes: one failed read while it stays as it is, another once its size changes.
#[tokio::test]
async fn a_followed_file_over_the_output_cap_is_read_again_only_when_it_changes() {
    let (fixture, config) = fixture("", "limits = { max_output_bytes = 400 }");
    let mut server = RawServer::spawn(&config, &["--log-level", "debug"]);
    server.initialize().await;
    let subscribed = server
        .request(1, "resources/subscribe", json!({"uri": uri(&fixture, 0)}))
        .await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    // Now every read fails the output cap.
    fixture.write("data/0.txt", "x".repeat(4096));
    // Read every 2 s, it would fail 4 or 5 times in 9 s; left alone until it changes, once.
    tokio::time::sleep(Duration::from_secs(9)).await;
    let failed = failed_reads(&server.log().text());
    assert_eq!(failed, 1, "failed reads:\n{}", server.log().text());
    // A change of size: read (and failed) again.
    fixture.write("data/0.txt", "y".repeat(5000));
    within("a read of the changed file", async {
        while failed_reads(&server.log().text()) < 2 {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    server.kill().await;
}

/// A `toolcell serve --http 127.0.0.1:0` with `extra` arguments, and its URL.
async fn http_server(config: &std::path::Path, extra: &[&str]) -> (Child, String) {
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
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().expect("spawn toolcell serve --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
    let url = within("the server to listen", async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("serving MCP over HTTP")
                && let Some(at) = line.find("http://")
            {
                return line[at..].split_whitespace().next().unwrap().to_string();
            }
        }
        panic!("the server exited before listening");
    })
    .await;
    // Keep draining stderr so the server never blocks on it.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

/// A POST in session `session` (none for `initialize`); returns the status, the session id
/// header and the JSON-RPC messages of the body (JSON or SSE).
async fn post(url: &str, session: Option<&str>, body: Value) -> (u16, Option<String>, Vec<Value>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = within("a POST", request.json(&body).send())
        .await
        .expect("the request is sent");
    let status = response.status().as_u16();
    let id = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let text = if body.get("id").is_some() && status == 200 {
        within("the response body", response.text()).await.unwrap()
    } else {
        String::new()
    };
    let messages = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(text.starts_with('{').then_some(text.as_str()))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect();
    (status, id, messages)
}

/// Starts a session: `initialize`, then `notifications/initialized`.
async fn session(url: &str) -> String {
    let (status, id, _) = post(
        url,
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await;
    assert_eq!(status, 200);
    let id = id.expect("a session id");
    post(
        url,
        Some(&id),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    id
}

async fn subscribe(url: &str, session: &str, uri: &str) -> Value {
    let (status, _, messages) = post(
        url,
        Some(session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
               "params": {"uri": uri}}),
    )
    .await;
    assert_eq!(status, 200, "{messages:?}");
    messages
        .into_iter()
        .find(|m| m["id"] == 2)
        .expect("an answer")
}

#[tokio::test]
async fn an_abandoned_session_that_the_server_keeps_notifying_still_expires() {
    let (fixture, config) = fixture("max_followed_resources = 1", "");
    let (mut child, url) = http_server(&config, &["--session-idle-secs", "2"]).await;
    let abandoned = session(&url).await;
    let subscribed = subscribe(&url, &abandoned, &uri(&fixture, 0)).await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    // The server follows one resource, the most it may.
    let other = session(&url).await;
    let refused = subscribe(&url, &other, &uri(&fixture, 1)).await;
    assert!(
        error_of(&refused).1.contains("max_followed_resources"),
        "{refused}"
    );

    // The resource changes every second, so the server keeps sending the abandoned session
    // notifications; its client sends nothing and reads nothing. Every change of the file
    // but the first comes after the session's idle time has started.
    for n in 0..8 {
        fixture.write("data/0.txt", format!("change {n}\n"));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let (status, _, _) = post(
        &url,
        Some(&abandoned),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    )
    .await;
    assert_eq!(status, 404, "the abandoned session has ended");

    // Its follow went with it: another session may follow a resource now.
    let fresh = session(&url).await;
    let subscribed = subscribe(&url, &fresh, &uri(&fixture, 1)).await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    let _ = child.kill().await;
}
