//! Time isolation: no call, plugin or client line can freeze or crash the server.
//!
//! Each test names the class it guards. A call blocked in the kernel (a FIFO), in a WASI clock
//! poll or on a socket ends by its deadline; blocked calls give their slots back when they end
//! or are cancelled; a call cannot hold the descriptors another needs; caps bound what a result
//! and a plugin's tool list may be; a dropped-in plugin cannot take another's tool name; and no
//! line a client sends ends the process or goes unanswered. Timing bounds are generous
//! ("within a few seconds"): the machines are shared.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Fixture, RawServer, Server, cli, hostile_fixture, hostile_wasm, within};

fn mkfifo(path: &std::path::Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The healthy call and the ping every test makes while or after something is stuck.
async fn still_serving(server: &mut RawServer, id: i64) {
    let ping = server.request(id, "ping", json!({})).await;
    assert!(ping.get("result").is_some(), "{ping}");
    let read = server
        .call(id + 1, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert_eq!(read["result"]["content"][0]["text"], "hello\n", "{read}");
}

fn error_text(response: &Value) -> String {
    assert_eq!(
        response["result"]["isError"], true,
        "expected an error result: {response}"
    );
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Class: a plugin opening a FIFO (no writer ever comes), directly, through a symlink, or a
/// socket. `open(2)` of a FIFO blocks in the kernel; the host refuses to open special files at
/// all, so the call fails at once instead of leaving a thread stuck, and the server keeps
/// serving.
#[tokio::test]
async fn a_plugin_cannot_open_a_fifo_or_a_socket() {
    let (fixture, config) = hostile_fixture("timeout_ms = 20000");
    mkfifo(&fixture.path("data/pipe"));
    fixture.symlink("pipe", "data/link-to-pipe");
    let _socket = std::os::unix::net::UnixListener::bind(fixture.path("data/socket"))
        .expect("bind a unix socket");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    for (id, name) in [(1, "pipe"), (2, "link-to-pipe"), (3, "socket")] {
        let started = Instant::now();
        let response = server.call(id, "read_path", json!({"name": name})).await;
        let text = error_text(&response);
        assert!(!text.contains("timed out"), "{name}: {text}");
        assert!(text.contains("not supported"), "{name}: {text}");
        assert!(started.elapsed() < Duration::from_secs(10), "{name}");
    }
    still_serving(&mut server, 10).await;
    assert!(server.finish().await.status.success());
}

/// Class: a guest sleeping in a WASI clock poll for an hour, where epoch interruption never
/// fires because no wasm runs.
#[tokio::test]
async fn an_hour_long_sleep_ends_at_the_deadline() {
    let (_fixture, config) = hostile_fixture("timeout_ms = 1500");
    let server = Server::start(&config).await;
    let started = Instant::now();
    let result = server.call("sleep", json!({"n": 3_600_000})).await;
    assert!(
        result.error_text().contains("timed out after 1500 ms"),
        "{}",
        result.error_text()
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        server
            .call("read_file", json!({"path": "hello.txt"}))
            .await
            .ok_text(),
        "hello\n"
    );
}

/// Class: an HTTP request to a granted host that accepts the connection and never answers.
#[tokio::test]
async fn an_http_server_that_never_answers_does_not_hold_the_call() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    // Accept and keep every connection open, silently.
    let _silent = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let fixture = Fixture::new();
    fixture.write(
        "plugins/hostile.wasm",
        std::fs::read(hostile_wasm()).expect("read hostile.wasm"),
    );
    let config = fixture.config(&format!(
        r#"
[limits]
timeout_ms = 1500

[[plugin]]
name = "hostile"
path = "plugins/hostile.wasm"
network = ["127.0.0.1:{port}"]
"#
    ));
    let server = Server::start(&config).await;
    let started = Instant::now();
    let result = server
        .call(
            "fetch",
            json!({"name": format!("http://127.0.0.1:{port}/")}),
        )
        .await;
    assert!(
        result.error_text().contains("timed out after 1500 ms"),
        "{}",
        result.error_text()
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
}

/// Class: `max_concurrent_calls` calls blocked at once. While they block, pings and
/// `tools/list` are answered; when they time out their slots are given back and a healthy call
/// runs.
#[tokio::test]
async fn blocked_calls_give_their_slots_back_at_the_deadline() {
    let (_fixture, config) = hostile_fixture("timeout_ms = 2000\nmax_concurrent_calls = 2");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    for id in [1, 2] {
        send_hour_long_sleep(&mut server, id).await;
    }
    let ping = server.request(10, "ping", json!({})).await;
    assert!(ping.get("result").is_some(), "{ping}");
    let list = server.request(11, "tools/list", json!({})).await;
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
    );
    for id in [1, 2] {
        let response = server.response(id).await;
        assert!(error_text(&response).contains("timed out"), "{response}");
    }
    still_serving(&mut server, 20).await;
    assert!(server.finish().await.status.success());
}

/// Class: a call holding the call thread the server keeps awake between calls
/// (`host/src/protocol/server/awake.rs`). An hour-long sleeper takes that thread, being the first
/// call after others ended; the calls after it go to other threads and are answered long before
/// its deadline, and closing stdin still ends the server.
#[tokio::test]
async fn a_call_holding_the_awake_thread_holds_up_no_other_call() {
    let (_fixture, config) = hostile_fixture("timeout_ms = 20000");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    still_serving(&mut server, 10).await;
    // Let the thread finish with the last call, so the sleeper is handed to it.
    tokio::time::sleep(Duration::from_millis(100)).await;
    send_hour_long_sleep(&mut server, 1).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    for id in [20, 30, 40] {
        still_serving(&mut server, id).await;
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(server.finish().await.status.success());
}

/// Class: a call waiting for a slot is bounded by its own deadline and says why.
#[tokio::test]
async fn a_call_that_never_gets_a_slot_says_so_at_its_deadline() {
    let (fixture, config) = hostile_fixture("timeout_ms = 1500\nmax_concurrent_calls = 1");
    // The sleeper may take a minute; everything else 1.5 s.
    let mut text = std::fs::read_to_string(&config).expect("read the config");
    text = text.replacen(
        "[[plugin]]\nname = \"fs\"",
        "[[plugin.tool]]\nname = \"sleep\"\nlimits = { timeout_ms = 60000 }\n\n[[plugin]]\nname = \"fs\"",
        1,
    );
    let config = fixture.config(&text);
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    // Once the tools are loaded, the first call takes the slot before the second asks.
    server.request(9, "tools/list", json!({})).await;
    send_hour_long_sleep(&mut server, 1).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waiting = server.call(2, "ok", json!({})).await;
    let text = error_text(&waiting);
    assert!(text.contains("call slots"), "{text}");
    assert!(text.contains("max_concurrent_calls"), "{text}");
    // Closing stdin ends the server even with the sleeper still running.
    assert!(server.finish().await.status.success());
}

/// Class: a plugin capped below the server (`max_concurrent_calls` in its `limits`, as the
/// `execute` builtins are by default). Twenty runaway calls hold two of the server's four slots;
/// another plugin's call still runs at once, and the calls that never got a permit say whose
/// cap they waited for.
#[tokio::test]
async fn runaway_calls_of_a_capped_plugin_leave_the_server_slots_free() {
    let (fixture, config) = hostile_fixture("timeout_ms = 3000\nmax_concurrent_calls = 4");
    let text = std::fs::read_to_string(&config).expect("read the config");
    let text = text.replacen(
        "path = \"plugins/hostile.wasm\"",
        "path = \"plugins/hostile.wasm\"\nlimits = { max_concurrent_calls = 2 }",
        1,
    );
    let config = fixture.config(&text);
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    server.request(99, "tools/list", json!({})).await;
    for id in 1..=20 {
        send_hour_long_sleep(&mut server, id).await;
    }
    let hello = fixture.path("data/hello.txt").display().to_string();
    let read = server.call(50, "read_file", json!({ "path": hello })).await;
    assert_eq!(read["result"]["isError"], json!(false), "{read}");
    assert!(read.to_string().contains("hello"), "{read}");

    let (mut timed_out, mut waited) = (0, 0);
    for id in 1..=20 {
        let text = error_text(&server.response(id).await);
        if text.contains("timed out") {
            timed_out += 1;
        } else {
            assert!(
                text.contains("plugin `hostile` runs at most 2 calls at once"),
                "{text}"
            );
            waited += 1;
        }
    }
    // Two ran until the deadline; a few more may take a permit those free at the very moment
    // their own deadline comes, and time out at once; most never got one.
    assert!(
        timed_out >= 2 && waited >= 12,
        "{timed_out} timed out, {waited} waited"
    );
    still_serving(&mut server, 60).await;
    assert!(server.finish().await.status.success());
}

/// Class: `notifications/cancelled` for blocked calls frees their slots at once, long before
/// their deadline.
#[tokio::test]
async fn cancelling_blocked_calls_frees_their_slots() {
    let (_fixture, config) = hostile_fixture("timeout_ms = 120000\nmax_concurrent_calls = 2");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    for id in [1, 2] {
        send_hour_long_sleep(&mut server, id).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for id in [1, 2] {
        server
            .send(
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": id, "reason": "test"}}),
            )
            .await;
    }
    let started = Instant::now();
    still_serving(&mut server, 10).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the slots came back after {:?}",
        started.elapsed()
    );
    let finished = server.finish().await;
    assert!(finished.status.success());
    for line in finished.stdout_lines {
        let message: Value = serde_json::from_str(&line).expect("json");
        assert!(
            !matches!(message.get("id"), Some(id) if id == 1 || id == 2),
            "a cancelled call was answered: {line}"
        );
    }
}

/// Class: one call holding many handles under a low `RLIMIT_NOFILE` must not make another call
/// fail to open a file. Each call gets a share of the descriptors; past it, the call is stopped
/// with a message naming the limit.
#[cfg(unix)]
#[tokio::test]
async fn a_call_cannot_hold_the_descriptors_another_needs() {
    let (fixture, config) = hostile_fixture("max_concurrent_calls = 4\ntimeout_ms = 20000");
    // The server runs under a soft and hard limit of 256 descriptors, as a shell's
    // `ulimit -n 256` sets them.
    let script = fixture.write(
        "serve.sh",
        format!(
            "ulimit -n 256 && exec {} serve --config {}\n",
            crate::support::bin().display(),
            config.display()
        ),
    );
    let mut server = RawServer::spawn_with(std::path::Path::new("sh"), |command| {
        command.arg(script);
    });
    server.initialize().await;

    // Past the cap: a clear error naming it.
    let greedy = server
        .call(
            1,
            "hold_files",
            json!({"path": "hello.txt", "n": 10_000, "hold_ms": 0}),
        )
        .await;
    let text = error_text(&greedy);
    assert!(text.contains("open handles"), "{text}");
    let cap: u64 = text
        .split_whitespace()
        .find_map(|word| word.parse().ok())
        .expect("the message names the limit");
    assert!((16..=256).contains(&cap), "{text}");

    // Three calls each holding nearly as many as they may, at once: a fourth still reads.
    for id in [2, 3, 4] {
        server
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "hold_files",
                    "arguments": {"path": "hello.txt", "n": cap - 8, "hold_ms": 3000}}}))
            .await;
    }
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let read = server
        .call(5, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert_eq!(read["result"]["content"][0]["text"], "hello\n", "{read}");
    for id in [2, 3, 4] {
        let held = server.response(id).await;
        assert_eq!(
            held["result"]["content"][0]["text"],
            format!("held {}", cap - 8),
            "{held}"
        );
    }
    assert!(server.finish().await.status.success());
}

/// Class: many tiny content blocks. The number of blocks is capped, and the output cap is
/// measured on the serialized result, not on the raw text.
#[tokio::test]
async fn content_blocks_and_the_serialized_size_are_capped() {
    let (_fixture, config) = hostile_fixture("max_output_bytes = 1048576");
    let server = Server::start(&config).await;
    let many = server.call("blocks", json!({"n": 100_000})).await;
    assert!(
        many.error_text()
            .contains("100000 content blocks, over the limit of 1000"),
        "{}",
        many.error_text()
    );
    assert_eq!(
        server.call("blocks", json!({"n": 10})).await.0["content"]
            .as_array()
            .map(Vec::len),
        Some(10)
    );
    // 300,000 control characters are 300 KB as text and 1.8 MB as JSON.
    let escaped = server.call("escapes", json!({"n": 300_000})).await;
    let text = escaped.error_text();
    assert!(text.contains("over the limit of 1048576 bytes"), "{text}");
    let size: u64 = text
        .split_whitespace()
        .find_map(|word| word.parse().ok())
        .expect("the message says the size");
    assert!(size > 1_800_000, "{text}");
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
}

/// Class: a huge `list-tools` (thousands of tools, a 10 MB description): the plugin is refused
/// with a message naming the cap, and the other plugins serve.
#[tokio::test]
async fn an_oversized_tool_list_refuses_that_plugin_alone() {
    for (config_line, expected) in [
        ("many_tools = \"20000\"", "over the limit of 256 per plugin"),
        (
            "huge_description = \"10485760\"",
            "over the limit of 16384 bytes",
        ),
    ] {
        let fixture = Fixture::new();
        fixture.write("data/hello.txt", "hello\n");
        let config = fixture.config(&format!(
            "{}\n[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nmounts = [{{ host = \"data\", mode = \"ro\" }}]\n",
            fixture.raw(&format!("config = {{ {config_line} }}"))
        ));
        let server = Server::start(&config).await;
        let names = server.tool_names().await;
        assert!(names.contains(&"read_file".to_string()), "{names:?}");
        assert!(!names.contains(&"good".to_string()), "{names:?}");
        server.log().wait_for(expected).await;
        let check = cli(&["check", "--config", config.to_str().expect("utf-8")]).await;
        assert_eq!(check.code(), 1, "{check:?}");
        assert!(check.stderr.contains(expected), "{check:?}");
    }
}

/// Class: two dropped-in plugins offering a tool of the same name (`shared`). The later
/// plugin's clashing tool is refused with an error naming both; everything else serves, and
/// `check` fails.
#[tokio::test]
async fn a_clashing_tool_name_is_refused_and_the_rest_serve() {
    let fixture = Fixture::new();
    fixture.write("data/hello.txt", "hello\n");
    let config = fixture.config(&format!(
        "[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nmounts = [{{ host = \"data\", mode = \"ro\" }}]\n{}\n[[plugin]]\nname = \"later\"\npath = \"plugins/raw.wasm\"\nconfig = {{ extra_tool = \"shared\" }}\ntools = [\"shared\"]\n",
        fixture.raw("config = { extra_tool = \"shared\" }")
    ));
    let server = Server::start(&config).await;
    let names = server.tool_names().await;
    assert!(names.contains(&"good".to_string()), "{names:?}");
    assert_eq!(names.iter().filter(|n| *n == "shared").count(), 1);
    assert_eq!(
        server
            .call("read_file", json!({"path": "hello.txt"}))
            .await
            .ok_text(),
        "hello\n"
    );
    let log = server
        .log()
        .wait_for("tool `shared` of plugin `later` is refused")
        .await;
    assert!(log.contains("plugin `raw` already serves"), "{log}");
    assert!(log.contains("ERROR"), "{log}");
    let check = cli(&["check", "--config", config.to_str().expect("utf-8")]).await;
    assert_eq!(check.code(), 1, "{check:?}");
    assert!(
        check.stderr.contains("plugin `raw` already serves"),
        "{check:?}"
    );
}

/// Class: a third party listed before the builtin it imitates. Builtin tool names are
/// reserved whatever the order, served (`read_file`) or not (`write_file`, with no writable
/// mount): the squatter's tool is refused, the builtin's serves, and `check` fails.
#[tokio::test]
async fn a_third_party_listed_first_cannot_take_a_builtin_tool_name() {
    for squatted in ["read_file", "write_file"] {
        let fixture = Fixture::new();
        fixture.write("data/hello.txt", "hello\n");
        let config = fixture.config(&format!(
            "{}\n[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nmounts = [{{ host = \"data\", mode = \"ro\" }}]\n",
            fixture.raw(&format!("config = {{ extra_tool = \"{squatted}\" }}"))
        ));
        let server = Server::start(&config).await;
        let names = server.tool_names().await;
        assert!(names.contains(&"good".to_string()), "{names:?}");
        assert!(
            names.iter().filter(|n| *n == "read_file").count() == 1,
            "{names:?}"
        );
        assert!(!names.contains(&"write_file".to_string()), "{names:?}");
        assert_eq!(
            server
                .call("read_file", json!({"path": "hello.txt"}))
                .await
                .ok_text(),
            "hello\n"
        );
        let expected = format!(
            "tool `{squatted}` of plugin `raw` is refused: `{squatted}` is the name of a tool of \
             the builtin plugin `fs`"
        );
        server.log().wait_for(&expected).await;
        let check = cli(&["check", "--config", config.to_str().expect("utf-8")]).await;
        assert_eq!(check.code(), 1, "{check:?}");
        assert!(check.stderr.contains(&expected), "{check:?}");
    }
}

/// Class: notifications and responses sent before `initialize` must not end the process.
#[tokio::test]
async fn lines_before_initialize_do_not_end_the_session() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    server
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 3}}),
        )
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "id": 99, "result": {}}))
        .await;
    server
        .send(json!({"jsonrpc": "2.0", "id": 98, "error": {"code": -1, "message": "x"}}))
        .await;
    let ping = server.request(5, "ping", json!({})).await;
    assert!(ping.get("result").is_some(), "{ping}");
    server.initialize().await;
    still_serving(&mut server, 10).await;
    let finished = server.finish().await;
    assert!(finished.status.success(), "{}", finished.log);
}

/// Class: a burst of pipelined lines, valid and invalid, written without waiting: every request
/// with an id gets exactly one answer, and every invalid line its JSON-RPC error.
#[tokio::test]
async fn every_pipelined_line_is_answered_exactly_once() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let mut burst = String::new();
    let mut expected_ids = Vec::new();
    let mut parse_errors = 0;
    for i in 0..1000i64 {
        let line = match i % 4 {
            0 => json!({"jsonrpc": "2.0", "id": i, "method": "ping"}).to_string(),
            1 => json!({"id": i, "method": "ping"}).to_string(),
            2 => json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "ok", "arguments": {}}})
            .to_string(),
            _ => {
                parse_errors += 1;
                continue_line(i)
            }
        };
        if i % 4 != 3 {
            expected_ids.push(i);
        }
        burst.push_str(&line);
        burst.push('\n');
    }
    server.send_raw(burst.as_bytes()).await;
    let mut answered = std::collections::HashMap::<i64, usize>::new();
    let mut nulls = 0;
    while answered.values().sum::<usize>() < expected_ids.len() || nulls < parse_errors {
        let message = within("the burst's answers", server.recv())
            .await
            .expect("the stream is open");
        match message.get("id") {
            Some(Value::Number(id)) => {
                *answered
                    .entry(id.as_i64().expect("integer id"))
                    .or_default() += 1;
                if id.as_i64().expect("integer id") % 4 == 1 {
                    assert_eq!(message["error"]["code"], -32600, "{message}");
                }
            }
            Some(Value::Null) => {
                assert_eq!(message["error"]["code"], -32700, "{message}");
                nulls += 1;
            }
            _ => {}
        }
    }
    for id in &expected_ids {
        assert_eq!(answered.get(id), Some(&1), "request {id}");
    }
    assert_eq!(nulls, parse_errors);
    let finished = server.finish().await;
    assert!(finished.status.success());
}

/// A line that is not JSON.
fn continue_line(i: i64) -> String {
    format!("{{\"jsonrpc\": \"2.0\", \"id\": {i}, oops")
}

/// Sends, without waiting for its answer, a call `id` that sleeps for an hour.
async fn send_hour_long_sleep(server: &mut RawServer, id: i64) {
    server
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "sleep", "arguments": {"n": 3_600_000}}}))
        .await;
}
