//! Drop folders watched while serving: a component added, replaced or removed takes effect without
//! a restart and the client is told (`notifications/tools/list_changed`, and on a 2026-07-28
//! `subscriptions/listen` stream); nothing is granted without a `NAME.toml`; a broken,
//! half-written, clashing or squatting file is refused alone. See: issue 29.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{
    Fixture, RawServer, command_wasm, hostile_wasm, plain_wasm, probe_wasm, raw_wasm,
};

/// A fixture serving the builtin fs plugin over `data/` (holding `hello.txt`), with an empty
/// drop folder `drop/`; returns it and its `plugins.toml`.
fn fixture(extra: &str) -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    fixture.write("data/hello.txt", "hello\n");
    fixture.mkdir("drop");
    let config = fixture.config(&format!(
        "[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\n\
         mounts = [{{ host = \"data\", mode = \"ro\" }}]\n{extra}\n"
    ));
    (fixture, config)
}

/// Reads messages until `method` arrives, and returns the others read on the way.
async fn until(server: &mut RawServer, method: &str) -> (Value, Vec<Value>) {
    let mut others = Vec::new();
    loop {
        let message = server.recv().await.expect("the server goes on");
        if message["method"] == method {
            return (message, others);
        }
        others.push(message);
    }
}

async fn tool_names(server: &mut RawServer, id: i64) -> Vec<String> {
    let listed = server.request(id, "tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().cloned();
    let tools = tools.unwrap_or_else(|| panic!("tools/list failed: {listed}"));
    tools
        .iter()
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect()
}

fn text_of(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_dropped_component_is_added_granted_replaced_and_removed_while_serving() {
    let (fixture, config) = fixture("");
    let drop = fixture.arg("drop");
    let mut server = RawServer::spawn(&config, &["--plugins", &drop]);
    let init = server.initialize().await;
    assert_eq!(
        init["capabilities"]["tools"]["listChanged"],
        json!(true),
        "{init}"
    );
    assert!(!tool_names(&mut server, 1).await.contains(&"ok".to_owned()));

    // Added: the client is told, then lists the new tools.
    fixture.write("drop/hostile.wasm", std::fs::read(hostile_wasm()).unwrap());
    until(&mut server, "notifications/tools/list_changed").await;
    let names = tool_names(&mut server, 2).await;
    assert!(names.contains(&"ok".to_owned()) && names.contains(&"read_file".to_owned()));
    // No NAME.toml: nothing granted, and the tool says so.
    let hello = fixture.path("data/hello.txt").display().to_string();
    let refused = server.call(3, "read_path", json!({"name": hello})).await;
    assert_eq!(refused["result"]["isError"], json!(true), "{refused}");
    let message = text_of(&refused);
    assert!(message.contains("(granted: none)"), "{message}");

    // A NAME.toml grants a mount and narrows the tools.
    fixture.write(
        "drop/hostile.toml",
        "tools = [\"ok\", \"read_path\", \"sleep\"]\nmounts = [{ host = \"../data\", mode = \"ro\" }]\n",
    );
    until(&mut server, "notifications/tools/list_changed").await;
    let names = tool_names(&mut server, 4).await;
    assert!(names.contains(&"ok".to_owned()) && !names.contains(&"spin".to_owned()));
    let read = server.call(5, "read_path", json!({"name": hello})).await;
    assert_eq!(text_of(&read), "read 6 bytes", "{read}");

    // Replaced by another component while a call runs: the call finishes on its version.
    server
        .send(json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                     "params": {"name": "sleep", "arguments": {"n": 1500}}}))
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    std::fs::remove_file(fixture.path("drop/hostile.toml")).unwrap();
    fixture.write("drop/hostile.wasm", std::fs::read(probe_wasm()).unwrap());
    let (_, read) = until(&mut server, "notifications/tools/list_changed").await;
    let slept = match read.iter().find(|m| m["id"] == json!(6)) {
        Some(response) => response.clone(),
        None => server.response(6).await,
    };
    assert_eq!(text_of(&slept), "slept", "{slept}");
    let names = tool_names(&mut server, 7).await;
    assert!(names.contains(&"write_attempt_ro".to_owned()), "{names:?}");
    assert!(!names.contains(&"ok".to_owned()), "{names:?}");

    // Removed.
    std::fs::remove_file(fixture.path("drop/hostile.wasm")).unwrap();
    until(&mut server, "notifications/tools/list_changed").await;
    let names = tool_names(&mut server, 8).await;
    assert!(!names.contains(&"write_attempt_ro".to_owned()), "{names:?}");
    assert!(names.contains(&"read_file".to_owned()), "{names:?}");
    server.kill().await;
}

#[tokio::test]
async fn broken_half_written_clashing_and_squatting_files_are_refused_alone() {
    let (fixture, config) = fixture("");
    let hostile = std::fs::read(hostile_wasm()).unwrap();
    fixture.write("drop/garbage.wasm", b"\0asm this is not a component at all");
    fixture.write("drop/hostile.wasm", &hostile);
    fixture.write("drop/hostile2.wasm", &hostile);
    fixture.write("drop/raw.wasm", std::fs::read(raw_wasm()).unwrap());
    fixture.write("drop/raw.toml", "config = { extra_tool = \"read_file\" }\n");
    fixture.write("drop/Bad Name.wasm", &hostile);
    let drop = fixture.arg("drop");
    let mut server = RawServer::spawn(&config, &["--plugins", &drop]);
    server.initialize().await;
    let names = tool_names(&mut server, 1).await;
    assert_eq!(names.iter().filter(|n| *n == "ok").count(), 1, "{names:?}");
    assert_eq!(names.iter().filter(|n| *n == "read_file").count(), 1);
    assert!(names.contains(&"good".to_owned()), "{names:?}");
    let log = server.log();
    let text = log.wait_for("garbage").await;
    let garbage = text.lines().find(|line| line.contains("garbage")).unwrap();
    assert!(garbage.contains("ERROR"), "{garbage}");
    log.wait_for("tool `ok` of plugin `hostile2` is refused: plugin `hostile` already serves")
        .await;
    log.wait_for("tool `read_file` of plugin `raw` is refused")
        .await;
    log.wait_for("Bad Name.wasm: (file name): invalid plugin name")
        .await;
    let read = server
        .call(2, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert_eq!(text_of(&read), "hello\n", "{read}");

    // Half written: the first half, a pause past a look, then the rest.
    let probe = std::fs::read(probe_wasm()).unwrap();
    let (first, rest) = probe.split_at(probe.len() / 2);
    fixture.write("drop/probe.wasm", first);
    tokio::time::sleep(Duration::from_millis(350)).await;
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(fixture.path("drop/probe.wasm"))
            .unwrap();
        file.write_all(rest).unwrap();
    }
    until(&mut server, "notifications/tools/list_changed").await;
    let names = tool_names(&mut server, 3).await;
    assert!(names.contains(&"write_attempt_ro".to_owned()), "{names:?}");
    let text = server.log().text();
    let probe_errors: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("ERROR") && line.contains("probe"))
        // Its `print` and `env` clash with the hostile plugin's: refused alone, as expected.
        .filter(|line| !line.contains("already serves a tool of that name"))
        .collect();
    assert!(probe_errors.is_empty(), "{probe_errors:#?}");
    server.kill().await;
}

#[tokio::test]
async fn plugins_toml_edited_while_serving_reloads_and_a_bad_edit_keeps_serving() {
    let (fixture, config) = fixture("");
    fixture.write(
        "plugins/hostile.wasm",
        std::fs::read(hostile_wasm()).unwrap(),
    );
    let hostile = "[[plugin]]\nname = \"hostile\"\npath = \"plugins/hostile.wasm\"\n";
    let base = std::fs::read_to_string(&config).unwrap();
    let mut server = RawServer::spawn(&config, &["--watch"]);
    let init = server.initialize().await;
    assert_eq!(init["capabilities"]["tools"]["listChanged"], json!(true));
    assert!(!tool_names(&mut server, 1).await.contains(&"ok".to_owned()));

    std::fs::write(&config, format!("{base}\n{hostile}tools = [\"ok\"]\n")).unwrap();
    until(&mut server, "notifications/tools/list_changed").await;
    let names = tool_names(&mut server, 2).await;
    assert!(names.contains(&"ok".to_owned()) && !names.contains(&"spin".to_owned()));

    std::fs::write(&config, format!("{base}\n{hostile}tools = 7\n")).unwrap();
    server
        .log()
        .wait_for("not reloaded, the previous configuration keeps serving")
        .await;
    server.log().wait_for("tools: expected an array").await;
    let ok = server.call(3, "ok", json!({})).await;
    assert_eq!(text_of(&ok), "ok", "{ok}");
    server.kill().await;
}

#[tokio::test]
async fn a_listen_stream_is_told_the_tools_changed() {
    let (fixture, config) = fixture("");
    let drop = fixture.arg("drop");
    let mut server = RawServer::spawn(&config, &["--plugins", &drop]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "toolcell-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let listed = server
        .request(1, "tools/list", json!({"_meta": meta}))
        .await;
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    server
        .send(
            json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
                     "params": {"_meta": meta,
                                "notifications": {"toolsListChanged": true}}}),
        )
        .await;
    let (ack, _) = until(&mut server, "notifications/subscriptions/acknowledged").await;
    assert!(ack.to_string().contains("toolsListChanged"), "{ack}");
    fixture.write("drop/hostile.wasm", std::fs::read(hostile_wasm()).unwrap());
    let (changed, _) = until(&mut server, "notifications/tools/list_changed").await;
    assert!(changed.to_string().contains("subscriptionId"), "{changed}");
    server.kill().await;
}

/// The other two kinds of component serve from a drop folder too: a plain component (its exported
/// functions) and a WASI command (one tool named after the file), and the command is granted a
/// folder by its `NAME.toml` and nothing without it.
#[tokio::test]
async fn a_plain_component_and_a_command_dropped_in_serve_as_tools() {
    let (fixture, config) = fixture("");
    let drop = fixture.arg("drop");
    let mut server = RawServer::spawn(&config, &["--plugins", &drop]);
    server.initialize().await;
    fixture.write("drop/kit.wasm", std::fs::read(plain_wasm()).unwrap());
    fixture.write("drop/cmd.wasm", std::fs::read(command_wasm()).unwrap());
    // Both files may land in one reload or in two: wait until both kinds are listed.
    let mut id = 1;
    let names = loop {
        until(&mut server, "notifications/tools/list_changed").await;
        id += 1;
        let names = tool_names(&mut server, id).await;
        if names.contains(&"add".to_owned()) && names.contains(&"cmd".to_owned()) {
            break names;
        }
    };
    assert!(names.contains(&"kit_greet".to_owned()), "{names:?}");

    let sum = server.call(100, "add", json!({"a": 2, "b": 40})).await;
    assert_eq!(
        sum["result"]["structuredContent"]["result"],
        json!(42),
        "{sum}"
    );

    // The command without a NAME.toml sees no folder: its read of hello.txt fails inside.
    let hello = fixture.path("data/hello.txt").display().to_string();
    let ran = server
        .call(101, "cmd", json!({"args": [hello], "stdin": "hi"}))
        .await;
    let stdout = ran["result"]["structuredContent"]["stdout"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(stdout.contains("stdin: hi"), "{ran}");
    assert!(stdout.contains(&format!("{hello}: error:")), "{ran}");

    // Granted the folder by cmd.toml: the same read succeeds.
    fixture.write(
        "drop/cmd.toml",
        "mounts = [{ host = \"../data\", mode = \"ro\" }]\n",
    );
    // The tool list is the same, so no notice: ask until the reload has happened (bounded).
    let mut stdout = String::new();
    for id in 102..162 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let ran = server.call(id, "cmd", json!({"args": [hello]})).await;
        stdout = ran["result"]["structuredContent"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if !stdout.contains(&format!("{hello}: error:")) {
            break;
        }
    }
    assert!(stdout.contains(&format!("{hello}: hello")), "{stdout}");
    server.kill().await;
}
