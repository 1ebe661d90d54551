//! A plugin cannot hurt the host or another plugin: time, memory and output limits, traps,
//! invalid results, denied capabilities, cancellation, progress and logging.
//!
//! The `hostile` test plugin misbehaves on request; the `raw` one breaks the contract in ways
//! the SDK prevents. Each test shows the bounded outcome and that a healthy call still works.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Fixture, RawServer, Server, cli, hostile_fixture, within};

/// A fixture with only the raw plugin, with `extra` added to its entry.
fn raw_fixture(extra: &str) -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    let config = fixture.config(&fixture.raw(extra));
    (fixture, config)
}

/// The healthy call every test makes after the hostile one.
async fn fs_still_works(server: &Server) {
    let result = server.call("read_file", json!({"path": "hello.txt"})).await;
    assert_eq!(result.ok_text(), "hello\n");
}

#[tokio::test]
async fn a_spinning_call_times_out_and_does_not_block_other_calls() {
    let (_fixture, config) = hostile_fixture("timeout_ms = 1500");
    let server = Server::start(&config).await;

    let spin = server.call("spin", json!({}));
    tokio::pin!(spin);
    // While the guest spins, other calls (to another plugin, and to the same one) are served:
    // the spinning call is still pending when they return.
    let healthy = async {
        fs_still_works(&server).await;
        server.call("ok", json!({})).await.ok_text()
    };
    tokio::select! {
        biased;
        text = healthy => assert_eq!(text, "ok"),
        _ = &mut spin => panic!("the spinning call ended before a healthy call was served"),
    }

    let spun = within("the spinning call to time out", spin).await;
    assert!(
        spun.error_text().contains("timed out after 1500 ms"),
        "{}",
        spun.error_text()
    );
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
}

#[tokio::test]
async fn endless_allocation_hits_the_memory_limit() {
    let (_fixture, config) = hostile_fixture("memory_mb = 32");
    let server = Server::start(&config).await;
    let result = server.call("allocate", json!({})).await;
    let text = result.error_text();
    assert!(text.contains("ran out of memory"), "{text}");
    assert!(text.contains("32 MiB"), "{text}");
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
    fs_still_works(&server).await;
}

#[tokio::test]
async fn endless_recursion_traps() {
    let (_fixture, config) = hostile_fixture("");
    let server = Server::start(&config).await;
    let result = server.call("recurse", json!({"n": 100_000_000})).await;
    assert!(
        result.error_text().contains("crashed"),
        "{}",
        result.error_text()
    );
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
}

#[tokio::test]
async fn a_panic_is_an_error_result_and_the_message_is_logged() {
    let (_fixture, config) = hostile_fixture("");
    let server = Server::start(&config).await;
    let result = server.call("panic", json!({})).await;
    assert!(
        result.error_text().contains("panicked"),
        "{}",
        result.error_text()
    );
    server
        .log()
        .wait_for("the hostile plugin panicked on purpose")
        .await;
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
}

#[tokio::test]
async fn megabytes_of_guest_stdout_are_capped_in_the_log_and_never_reach_the_stream() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    // 4 MB to stdout; `recv` fails the test on any line that is not JSON-RPC.
    let response = server.call(1, "print", json!({"n": 4_000_000})).await;
    assert_eq!(response["result"]["content"][0]["text"], "printed");
    let response = server
        .call(2, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert_eq!(response["result"]["content"][0]["text"], "hello\n");
    let finished = server.finish().await;
    assert!(finished.status.success());
    assert!(
        finished.log.contains("plugin output limit reached"),
        "{}",
        &finished.log[..finished.log.len().min(2000)]
    );
    // The cap is 256 KiB per call, about 2,600 of these lines; all 4 MB would be 40,000.
    let line = "x".repeat(99);
    let logged = finished.log.lines().filter(|l| l.contains(&line)).count();
    assert!((1..3000).contains(&logged), "{logged} output lines logged");
}

#[tokio::test]
async fn a_result_over_the_output_cap_is_refused() {
    let (_fixture, config) = hostile_fixture("max_output_bytes = 1048576");
    let server = Server::start(&config).await;
    let result = server
        .call("big_output", json!({"n": 100 * 1024 * 1024}))
        .await;
    let text = result.error_text();
    assert!(text.contains("over the limit of 1048576 bytes"), "{text}");
    assert!(text.len() < 1000);
    let small = server.call("big_output", json!({"n": 10})).await;
    assert_eq!(small.ok_text(), "y".repeat(10));
}

#[tokio::test]
async fn environment_and_sockets_are_denied() {
    let (_fixture, config) = hostile_fixture("");
    let server = Server::start_with_env(&config, &[("TOOLCELL_SECRET", "hunter2")]).await;
    let result = server.call("env", json!({"name": "TOOLCELL_SECRET"})).await;
    assert!(result.error_text().contains("not set"));
    let all = server.call("env_all", json!({})).await;
    assert_eq!(all.ok_text(), "", "the guest sees no variables at all");

    let socket = server.call("socket", json!({"name": "127.0.0.1:9"})).await;
    assert!(
        socket.error_text().contains("connect failed"),
        "{}",
        socket.error_text()
    );
    assert_eq!(server.call("ok", json!({})).await.ok_text(), "ok");
}

#[tokio::test]
async fn contract_violations_are_error_results() {
    let (_fixture, config) = raw_fixture("");
    let server = Server::start(&config).await;
    let utf8 = server.call("bad_utf8", json!({})).await;
    assert!(utf8.error_text().contains("utf-8"), "{}", utf8.error_text());
    let json = server.call("bad_json", json!({})).await;
    assert!(
        json.error_text()
            .contains("structured content is not valid JSON"),
        "{}",
        json.error_text()
    );
    assert_eq!(server.call("good", json!({})).await.ok_text(), "good");
}

#[tokio::test]
async fn a_tool_whose_schema_is_not_json_schema_is_refused_and_check_names_it() {
    // Schemas are compiled on first use: the call is refused with the reason,
    // the plugin's other tools work, and `toolcell check` finds it up front.
    let (_fixture, config) = raw_fixture("config = { bad_schema = \"yes\" }");
    let server = Server::start(&config).await;
    let refused = server.call("bad_schema", json!({"x": 1})).await;
    assert!(
        refused
            .error_text()
            .contains("the input schema of `bad_schema` is not a valid JSON Schema"),
        "{}",
        refused.error_text()
    );
    assert_eq!(server.call("good", json!({})).await.ok_text(), "good");

    let check = cli(&["check", "--config", config.to_str().expect("utf-8 path")]).await;
    assert_eq!(check.code(), 1, "{}", check.stderr);
    assert!(
        check
            .stderr
            .contains("plugin `raw`: the input schema of `bad_schema` is not a valid JSON Schema"),
        "{}",
        check.stderr
    );
}

#[tokio::test]
async fn a_plugin_whose_list_tools_traps_is_skipped() {
    let (fixture, _) = hostile_fixture("");
    let raw = fixture.raw("config = { trap_in_list = \"yes\" }");
    let config = fixture.config(&format!(
        r#"{raw}
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{{ host = "data", mode = "ro" }}]
"#
    ));
    let server = Server::start(&config).await;
    assert!(server.tool_names().await.contains(&"read_file".to_string()));
    assert!(!server.tool_names().await.contains(&"good".to_string()));
    fs_still_works(&server).await;
    server
        .log()
        .wait_for("plugin `raw` failed to list its tools")
        .await;

    let check = cli(&["check", "--config", config.to_str().expect("utf-8 path")]).await;
    assert_eq!(check.code(), 1);
    assert!(
        check.stderr.contains("plugin `raw` did not load"),
        "{}",
        check.stderr
    );
}

#[tokio::test]
async fn an_invalid_descriptor_fails_the_plugin_with_the_tool_named() {
    let (_fixture, config) = raw_fixture("config = { bad_descriptor = \"yes\" }");
    let check = cli(&["check", "--config", config.to_str().expect("utf-8 path")]).await;
    assert_eq!(check.code(), 1);
    assert!(
        check.stderr.contains("invalid tool `has spaces`"),
        "{}",
        check.stderr
    );
}

#[tokio::test]
async fn per_tool_limits_override_the_plugin_limits() {
    let (fixture, _) = hostile_fixture("");
    let config = fixture.config(
        r#"
[limits]
timeout_ms = 20000

[[plugin]]
name = "hostile"
path = "plugins/hostile.wasm"

[[plugin.tool]]
name = "spin"
limits = { timeout_ms = 300 }
"#,
    );
    let server = Server::start(&config).await;
    let result = server.call("spin", json!({})).await;
    assert!(
        result.error_text().contains("timed out after 300 ms"),
        "{}",
        result.error_text()
    );
}

/// Progress notifications received for `token`, in order.
fn progress_values(messages: &[Value], token: &str) -> Vec<f64> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter(|m| m["params"]["progressToken"] == token)
        .map(|m| {
            m["params"]["progress"]
                .as_f64()
                .expect("progress is a number")
        })
        .collect()
}

#[tokio::test]
async fn progress_reports_become_notifications_when_asked_for() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let response = server
        .request(
            1,
            "tools/call",
            json!({"name": "progress", "arguments": {"n": 5}, "_meta": {"progressToken": "p1"}}),
        )
        .await;
    assert_eq!(response["result"]["content"][0]["text"], "done 5");
    // Five reports within a few milliseconds: the first goes out at once, the
    // last (held back by the throttle) before the result.
    let values = progress_values(&server.received, "p1");
    assert_eq!(values.first(), Some(&1.0), "{values:?}");
    assert_eq!(values.last(), Some(&5.0), "{values:?}");
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let first = server
        .received
        .iter()
        .find(|m| m["method"] == "notifications/progress")
        .expect("a progress notification");
    assert_eq!(first["params"]["total"], 5.0);
    assert_eq!(first["params"]["message"], "working");

    // Without a token, no progress notifications.
    server.received.clear();
    let response = server.call(2, "progress", json!({"n": 3})).await;
    assert_eq!(response["result"]["content"][0]["text"], "done 3");
    assert!(
        server
            .received
            .iter()
            .all(|m| m["method"] != "notifications/progress"),
        "{:?}",
        server.received
    );
    server.finish().await;
}

#[tokio::test]
async fn cancelling_a_call_stops_the_guest_and_sends_no_response() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    // 100,000 steps of 1 ms: far longer than the test.
    server
        .send(json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "progress", "arguments": {"n": 100000}, "_meta": {"progressToken": "c"}},
        }))
        .await;
    // Wait until it is running.
    loop {
        let message = server.recv().await.expect("the stream is open");
        let is_progress = message["method"] == "notifications/progress";
        server.received.push(message);
        if is_progress {
            break;
        }
    }
    server
        .send(json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 7, "reason": "test"},
        }))
        .await;
    // Notifications already in flight may still arrive before this ping's answer; none may
    // arrive after it once the guest has had time to stop.
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.request(100, "ping", json!({})).await;
    server.received.clear();
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.request(101, "ping", json!({})).await;
    let late = progress_values(&server.received, "c");
    assert!(late.is_empty(), "progress after cancellation: {late:?}");

    // The server is still healthy, and the cancelled request never got a response.
    let response = server
        .call(8, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert_eq!(response["result"]["content"][0]["text"], "hello\n");
    let finished = server.finish().await;
    assert!(finished.status.success());
    for line in finished.stdout_lines {
        let message: Value = serde_json::from_str(&line).expect("json");
        assert_ne!(
            message.get("id"),
            Some(&json!(7)),
            "a response to the cancelled call: {line}"
        );
    }
}

#[tokio::test]
async fn plugin_logs_become_notifications_at_the_level_the_client_set() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    let init = server.initialize().await;
    assert!(init["capabilities"]["logging"].is_object(), "{init}");

    // Before logging/setLevel: nothing is sent.
    server.call(1, "log", json!({"name": "before"})).await;
    assert!(
        server
            .received
            .iter()
            .all(|m| m["method"] != "notifications/message"),
        "{:?}",
        server.received
    );

    let set = server
        .request(2, "logging/setLevel", json!({"level": "warning"}))
        .await;
    assert!(set.get("result").is_some(), "{set}");
    server.received.clear();
    server.call(3, "log", json!({"name": "careful now"})).await;
    let messages: Vec<&Value> = server
        .received
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect();
    assert_eq!(
        messages.len(),
        1,
        "only the warning, not the debug line: {messages:?}"
    );
    assert_eq!(messages[0]["params"]["level"], "warning");
    assert_eq!(messages[0]["params"]["data"]["message"], "careful now");
    assert_eq!(messages[0]["params"]["data"]["tool"], "log");
    let finished = server.finish().await;
    // Every log call is also a tracing event on stderr.
    assert!(finished.log.contains("careful now"));
}

/// Class: progress floods. A copy reports every 64 KiB; the client gets a few notifications per
/// second, always ending with the last report.
#[tokio::test]
async fn progress_of_a_large_copy_is_throttled() {
    let fixture = Fixture::new();
    let size: usize = 48 << 20;
    fixture.write("data/big.bin", vec![7u8; size]);
    let config = fixture.config(
        r#"
[server]
categories = ["read", "write"]

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "rw" }]
"#,
    );
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let started = std::time::Instant::now();
    let response = server
        .request(
            1,
            "tools/call",
            json!({"name": "copy_file", "arguments": {"source": "big.bin", "destination": "copy.bin"},
                "_meta": {"progressToken": "copy"}}),
        )
        .await;
    let elapsed = started.elapsed().as_secs_f64();
    assert_eq!(response["result"]["isError"], false, "{response}");
    let values = progress_values(&server.received, "copy");
    // 768 reports of 64 KiB; at most four a second (plus the first and the last) reach the
    // client.
    let allowed = (elapsed * 4.0).ceil() as usize + 2;
    assert!(
        !values.is_empty() && values.len() <= allowed,
        "{} notifications in {elapsed:.2} s: {values:?}",
        values.len()
    );
    assert_eq!(values.last(), Some(&(size as f64)), "{values:?}");
    server.finish().await;
}

/// The CPU time process `pid` has used so far, in clock ticks (utime + stime of
/// `/proc/PID/stat`, all threads).
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // The command name may hold spaces: count fields after its closing parenthesis.
    let rest = &stat[stat.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 here.
    fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime")
}

/// Class: host work done for a guest outliving its call. `git_status` on a repository that
/// tracks a file at every level of a deep directory chain makes the host's `stat-paths` walk
/// a quadratic number of path components on several threads. The call is answered at its
/// deadline, and the host's threads stop with it: the server's CPU time barely moves once the
/// answer is in (before, they went on for many seconds).
#[cfg(target_os = "linux")]
#[tokio::test]
async fn host_work_for_a_call_stops_at_its_deadline() {
    const DEPTH: usize = 1500;
    let fixture = Fixture::new();
    let repo = fixture.path("data");
    let mut level = repo.clone();
    for i in 0..DEPTH {
        level.push("d");
        std::fs::create_dir_all(&level).expect("mkdir");
        std::fs::write(level.join("f"), i.to_string()).expect("write");
    }
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", &repo)
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    // Executable bits cannot be seen in the sandbox; with them off, the status asks the host
    // for every tracked file's stat in one call.
    git(&["config", "core.filemode", "false"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "deep"]);
    let config = fixture.config(
        r#"
[[plugin]]
name = "git"
path = "builtin:git"
mounts = [{ host = "data", mode = "ro" }]
limits = { timeout_ms = 300 }
"#,
    );
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let pid = server.pid().expect("the server runs");
    // Without untracked files the status waits for the stats, and the deadline ends it. With
    // them, its search for untracked files (which runs while the host stats) holds a directory
    // per level and usually stops at the handle limit first; on a loaded machine the deadline
    // can come first. The stats stop with the call either way, which is what is checked.
    for (id, arguments, endings) in [
        (
            1,
            json!({"repo": ".", "untracked": false}),
            &["timed out"][..],
        ),
        (2, json!({"repo": "."}), &["open handles", "timed out"][..]),
    ] {
        let response = server.call(id, "git_status", arguments).await;
        let after_answer = cpu_ticks(pid);
        let text = response["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(response["result"]["isError"], true, "{response}");
        assert!(
            endings.iter().any(|ending| text.contains(ending)),
            "{response}"
        );
        tokio::time::sleep(Duration::from_secs(3)).await;
        let burnt = cpu_ticks(pid) - after_answer;
        // 100 ticks a second: threads still walking would burn well over a second of CPU in
        // these three seconds.
        assert!(
            burnt < 50,
            "the server used {burnt} ticks of CPU in the 3 s after answer {id}"
        );
    }
    server.finish().await;
}

/// A call holds one `pending-stats` (`toolcell:files@0.2.0`) at a time: a plugin that starts a
/// second before finishing the first ends its call with an error that says why, and the server
/// keeps serving.
#[tokio::test]
async fn a_call_holds_one_background_stat_at_a_time() {
    let (_fixture, config) = hostile_fixture("");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let one = server
        .call(1, "start_stats", json!({"path": ".", "n": 1, "hold_ms": 0}))
        .await;
    assert_eq!(one["result"]["content"][0]["text"], "answered 10", "{one}");
    let two = server
        .call(2, "start_stats", json!({"path": ".", "n": 2, "hold_ms": 0}))
        .await;
    assert_eq!(two["result"]["isError"], true, "{two}");
    let text = two["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("at most 1 pending-stats"), "{text}");
    let again = server
        .call(3, "start_stats", json!({"path": ".", "n": 1, "hold_ms": 0}))
        .await;
    assert_eq!(
        again["result"]["content"][0]["text"], "answered 10",
        "{again}"
    );
    assert!(server.finish().await.status.success());
}

/// The hostile plugin's checksum of `bytes` (its `read_start` tool).
fn checksum(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0u64, |sum, byte| {
        sum.wrapping_mul(31).wrapping_add(u64::from(*byte))
    })
}

/// Class: host memory held for a guest's reads. `read-file` (`toolcell:files@0.3.0`, through the
/// SDK's `Directory::read_file`) reads at most 8 MiB in one call, into the guest's memory: the
/// SDK reads a bigger file's rest 64 KiB a call and gets every byte; a name that is a symlink, a
/// directory or a FIFO is an error (promptly: nothing blocks); and with 8 MiB of memory, an 8 MiB
/// answer that cannot be copied into the guest ends the call with the memory error while the
/// server goes on serving.
#[tokio::test]
async fn file_reads_in_one_call_are_bounded_by_the_plugins_memory() {
    let text = |response: &Value| {
        response["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let args = |name: &str, limit: u64| json!({"name": name, "limit": limit});
    let big: Vec<u8> = (0..20u32 << 20).map(|i| (i % 253) as u8).collect();
    let hello = format!("6 true {}", checksum(b"hello\n"));

    let (fixture, config) = hostile_fixture("memory_mb = 64\ntimeout_ms = 10000");
    fixture.write("data/big", &big);
    fixture.write("data/sub/file", "x");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("hello.txt", fixture.path("data/link")).expect("a symlink");
        crate::fs::mkfifo(&fixture.path("data/pipe"));
    }
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let eight = 8 << 20;
    let cases = [
        (
            args("big", 30 << 20),
            format!("{} true {}", big.len(), checksum(&big)),
        ),
        (
            args("big", eight),
            format!("{eight} false {}", checksum(&big[..eight as usize])),
        ),
        (args("hello.txt", 100), hello.clone()),
        (
            args("hello.txt", 6),
            format!("6 false {}", checksum(b"hello\n")),
        ),
    ];
    for (id, (arguments, expected)) in (1..).zip(cases) {
        let response = server.call(id, "read_start", arguments).await;
        assert_eq!(text(&response), expected, "{response}");
    }
    let refused: &[&str] = if cfg!(unix) {
        &["sub", "link", "pipe", "../data/hello.txt"]
    } else {
        &["sub", "../data/hello.txt"]
    };
    for (id, name) in (10..).zip(refused) {
        let response = server.call(id, "read_start", args(name, 100)).await;
        assert_eq!(response["result"]["isError"], true, "{name}: {response}");
        assert!(!text(&response).contains("timed out"), "{name}: {response}");
    }
    assert!(server.finish().await.status.success());

    let (fixture, config) = hostile_fixture("memory_mb = 8");
    fixture.write("data/big", &big);
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let response = server.call(1, "read_start", args("big", eight)).await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(text(&response).contains("ran out of memory"), "{response}");
    let response = server.call(2, "read_start", args("hello.txt", 100)).await;
    assert_eq!(text(&response), hello, "{response}");
    assert!(server.finish().await.status.success());
}

/// Class: directory listings held in host memory for a guest. A plugin starts 100 listings
/// of a 20,000-entry directory and holds them all: the host reads each one a buffer at a
/// time as the guest asks, so the server's peak RSS grows by a few MiB, not by the 100 whole
/// listings (about 2 MB each) that reading them up front would hold.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn held_directory_listings_cost_the_host_a_buffer_each() {
    const MIB: u64 = 1024 * 1024;
    let (fixture, config) = hostile_fixture("");
    let big = fixture.path("data/big");
    std::fs::create_dir_all(&big).expect("mkdir");
    for i in 0..20_000 {
        std::fs::write(
            big.join(format!("an-entry-with-a-longish-name-{i:05}.txt")),
            "",
        )
        .expect("write");
    }
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    // A first call loads and instantiates the plugin, so its cost is not counted.
    let warm = server
        .call(
            1,
            "hold_listings",
            json!({"path": "big", "n": 1, "hold_ms": 0}),
        )
        .await;
    assert_eq!(warm["result"]["content"][0]["text"], "held 1", "{warm}");
    let pid = server.pid().expect("the server runs");
    let before = crate::support::peak_rss(pid);
    let held = server
        .call(
            2,
            "hold_listings",
            json!({"path": "big", "n": 100, "hold_ms": 500}),
        )
        .await;
    assert_eq!(held["result"]["content"][0]["text"], "held 100", "{held}");
    let grown = crate::support::peak_rss(pid).saturating_sub(before);
    assert!(
        grown < 48 * MIB,
        "peak RSS grew by {} MiB for 100 held listings",
        grown / MIB
    );
    assert!(server.finish().await.status.success());
}
