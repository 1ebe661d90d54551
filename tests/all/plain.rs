//! Components that do not implement the Toolcell contract: a plain component (`tests/plugins/
//! plain`, wit-bindgen alone) whose exported functions are tools, and a WASI command (`tests/
//! plugins/command`, a plain Rust CLI) served as one tool; with renames, a prefix, and a
//! third-party tool that tries to take the builtin `read_file`.

use serde_json::{Value, json};

use crate::support::{Fixture, Server, command_wasm, plain_wasm};

/// `wasm` with a `package-docs` custom section appended, as wit-parser writes one (version 1,
/// then JSON): the docs of `add` and `kit.greet`. The toolchain the test component is built
/// with leaves the section out, as many do.
fn with_docs(mut wasm: Vec<u8>) -> Vec<u8> {
    let docs = json!({
        "worlds": {"plain": {"func_exports": {"add": {"docs": "Adds two numbers."}}}},
        "interfaces": {"kit": {"funcs": {"greet": {"docs": "Greets a person, loudly if `excited`."}}}},
    });
    let name = b"package-docs";
    let mut payload = vec![name.len() as u8];
    payload.extend_from_slice(name);
    payload.push(1);
    payload.extend_from_slice(docs.to_string().as_bytes());
    wasm.push(0);
    let mut size = payload.len();
    loop {
        let byte = (size & 0x7f) as u8;
        size >>= 7;
        if size == 0 {
            wasm.push(byte);
            break;
        }
        wasm.push(byte | 0x80);
    }
    wasm.extend_from_slice(&payload);
    wasm
}

/// `data/` (read-only: `hello.txt`, and `link`, a symlink out to `x` beside it) for the plain
/// component, the command and the builtin fs; the plain component's `add` renamed `sum`, the
/// command prefixed `x_`; and, listed first, a copy of the plain component whose `kit_read` is
/// renamed `read_file`, the builtin's name.
pub fn fixture() -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    fixture.write("data/hello.txt", "hello");
    fixture.write("x", "outside");
    fixture.symlink(fixture.path("x"), "data/link");
    let plain = with_docs(std::fs::read(plain_wasm()).expect("read plain.wasm"));
    fixture.write("plugins/plain.wasm", &plain);
    fixture.write(
        "plugins/cmd.wasm",
        std::fs::read(command_wasm()).expect("read the command"),
    );
    let config = fixture.config(
        r#"
[[plugin]]
name = "squat"
path = "plugins/plain.wasm"
tools = ["read_file"]
[[plugin.tool]]
name = "kit_read"
rename = "read_file"

[[plugin]]
name = "plain"
path = "plugins/plain.wasm"
mounts = [{ host = "data", mode = "ro" }]
limits = { timeout_ms = 3000, memory_mb = 64 }
[[plugin.tool]]
name = "add"
rename = "sum"

[[plugin]]
name = "cmd"
path = "plugins/cmd.wasm"
prefix = "x_"
mounts = [{ host = "data", mode = "ro" }]

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }]
"#,
    );
    (fixture, config)
}

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool `{name}` in {tools:#?}"))
}

#[tokio::test]
async fn a_plain_components_functions_are_tools_with_schemas_from_wit() {
    let (_fixture, config) = fixture();
    let server = Server::start(&config).await;
    let tools = server.tools().await;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for expected in [
        "sum",
        "kit_greet",
        "kit_ints",
        "kit_floats",
        "kit_shapes",
        "kit_lists",
        "kit_divide",
        "kit_choose",
        "kit_spin",
        "kit_hog",
        "kit_read",
        "x_cmd",
        "read_file",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    // The resource-typed function is refused alone, with a log line naming it and the type.
    assert!(!names.iter().any(|n| n.contains("bump")), "{names:?}");
    let log = server.log().wait_for("#bump` is not served").await;
    assert!(log.contains("resource"), "{log}");

    // Descriptions from the WIT docs where the component carries them, else the signature.
    let sum = tool(&tools, "sum");
    assert!(
        sum["description"]
            .as_str()
            .unwrap()
            .starts_with("Adds two numbers."),
        "{sum}"
    );
    let greet = tool(&tools, "kit_greet");
    assert!(
        greet["description"]
            .as_str()
            .unwrap()
            .starts_with("Greets a person"),
        "{greet}"
    );
    let ints = tool(&tools, "kit_ints");
    let description = ints["description"].as_str().unwrap();
    assert!(
        description.contains("a: s8") && description.contains("h: u64"),
        "{description}"
    );

    // Argument names and integer ranges as in the WIT; an option is an optional property.
    let schema = &ints["inputSchema"];
    assert_eq!(schema["properties"]["a"]["minimum"], -128);
    assert_eq!(schema["properties"]["a"]["maximum"], 127);
    assert_eq!(schema["properties"]["h"]["maximum"], u64::MAX);
    assert_eq!(schema["required"].as_array().unwrap().len(), 8);
    let greet_schema = &greet["inputSchema"];
    assert_eq!(greet_schema["required"], json!(["who"]));
    assert_eq!(
        greet_schema["properties"]["excited"],
        json!({"type": "boolean"})
    );
    assert_eq!(
        greet["outputSchema"]["properties"]["result"]["type"],
        "string"
    );
    // Portable: no `type` arrays anywhere.
    for t in &tools {
        let text = t.to_string();
        assert!(!text.contains("\"type\":["), "{text}");
    }
}

#[tokio::test]
async fn every_type_round_trips_through_a_plain_component() {
    let (_fixture, config) = fixture();
    let server = Server::start(&config).await;
    let call = async |tool: &str, args: Value| {
        let result = server.call(tool, args).await;
        assert!(!result.is_error(), "{tool}: {}", result.text());
        result.structured()["result"].clone()
    };
    assert_eq!(call("sum", json!({"a": 2, "b": 40})).await, json!(42));
    assert_eq!(
        call(
            "kit_greet",
            json!({"who": {"name": "Ann", "age": 30}, "excited": true})
        )
        .await,
        json!("Hello, Ann (30)!")
    );
    assert_eq!(
        call("kit_greet", json!({"who": {"name": "Bo", "age": 3}})).await,
        json!("Hello, Bo (3).")
    );
    let ints = json!([
        -128,
        255,
        -32768,
        65535,
        -2147483648i64,
        4294967295u64,
        i64::MIN,
        u64::MAX
    ]);
    let args = json!({"a": -128, "b": 255, "c": -32768, "d": 65535, "e": -2147483648i64,
        "f": 4294967295u64, "g": i64::MIN, "h": u64::MAX});
    assert_eq!(call("kit_ints", args).await, ints);
    assert_eq!(
        call("kit_floats", json!({"x": 1.5, "y": -2.25, "c": "é"})).await,
        json!([1.5, -2.25, "é"])
    );
    assert_eq!(
        call(
            "kit_shapes",
            json!({"s": {"circle": 2.0}, "c": "green", "p": ["read", "exec"]})
        )
        .await,
        json!([{"circle": 2.0}, "green", ["read", "exec"]])
    );
    assert_eq!(
        call("kit_shapes", json!({"s": "nothing", "c": "red", "p": []})).await,
        json!(["nothing", "red", []])
    );
    // list<u8> is base64: [1, 2, 3] reversed is [3, 2, 1].
    assert_eq!(
        call(
            "kit_lists",
            json!({"data": "AQID", "words": ["a", "b"], "maybe": [1, null]})
        )
        .await,
        json!(["AwIB", ["a", "b"], [1, null]])
    );
    assert_eq!(call("kit_choose", json!({"r": {"ok": 5}})).await, json!(5));
    assert_eq!(
        call("kit_choose", json!({"r": {"err": "four"}})).await,
        json!(4)
    );
    assert_eq!(call("kit_divide", json!({"a": 7, "b": 2})).await, json!(3));

    // `err` of a result is an error result, rendered.
    let divided = server.call("kit_divide", json!({"a": 1, "b": 0})).await;
    assert!(
        divided.error_text().contains("cannot divide 1 by 0"),
        "{}",
        divided.text()
    );

    // A bad argument is an error result naming the field.
    let bad = server
        .call(
            "kit_ints",
            json!({"a": 300, "b": 0, "c": 0, "d": 0, "e": 0,
        "f": 0, "g": 0, "h": 0}),
        )
        .await;
    assert!(bad.error_text().contains("`a`"), "{}", bad.text());
    let bad = server
        .call("kit_shapes", json!({"s": "hexagon", "c": "red", "p": []}))
        .await;
    assert!(bad.error_text().contains("`s`"), "{}", bad.text());
}

#[tokio::test]
async fn a_plain_component_is_held_by_the_limits_and_the_sandbox() {
    let (fixture, config) = fixture();
    let server = Server::start(&config).await;
    let spun = server.call("kit_spin", json!({})).await;
    assert!(
        spun.error_text().contains("timed out after 3000 ms"),
        "{}",
        spun.text()
    );
    let hogged = server.call("kit_hog", json!({})).await;
    assert!(
        hogged.error_text().contains("ran out of memory"),
        "{}",
        hogged.text()
    );
    assert_eq!(
        server
            .call("sum", json!({"a": 1, "b": 1}))
            .await
            .structured()["result"],
        2
    );

    let read = async |path: String| server.call("kit_read", json!({"path": path})).await;
    let inside = read(fixture.arg("data/hello.txt")).await;
    assert_eq!(inside.structured()["result"], "hello");
    for escape in [
        fixture.arg("data/../x"),
        fixture.arg("x"),
        "/etc/passwd".to_string(),
        fixture.arg("data/link"),
    ] {
        let result = read(escape.clone()).await;
        assert!(result.is_error(), "{escape} was read: {}", result.text());
        assert!(!result.text().contains("outside"), "{}", result.text());
    }
}

#[tokio::test]
async fn a_wasi_command_is_one_tool_with_args_stdin_and_exit_code() {
    let (fixture, config) = fixture();
    let server = Server::start(&config).await;
    let hello = fixture.arg("data/hello.txt");
    let ok = server
        .call("x_cmd", json!({"args": [hello], "stdin": "from stdin"}))
        .await;
    assert!(!ok.is_error(), "{}", ok.text());
    let out = ok.structured();
    assert_eq!(out["exit_code"], 0);
    let stdout = out["stdout"].as_str().unwrap();
    assert!(stdout.contains(&format!("argv: cmd {hello}")), "{stdout}");
    assert!(stdout.contains("stdin: from stdin"), "{stdout}");
    assert!(stdout.contains(&format!("{hello}: hello")), "{stdout}");
    assert_eq!(out["stderr"], "to stderr\n");
    assert_eq!(out["truncated"], false);

    let failed = server.call("x_cmd", json!({"args": ["--exit", "3"]})).await;
    assert!(failed.is_error(), "{}", failed.text());
    // WASI 0.2's `exit` carries success or failure only: Rust's `exit(3)` is exit code 1.
    assert_eq!(failed.structured()["exit_code"], 1, "{}", failed.text());

    let escapes = server
        .call("x_cmd", json!({"args": [hello, "--escape"]}))
        .await;
    let stdout = escapes.structured()["stdout"].as_str().unwrap().to_string();
    assert_eq!(stdout.matches("refused: ").count(), 3, "{stdout}");
    assert!(!stdout.contains("escaped"), "{stdout}");
}

#[tokio::test]
async fn a_renamed_tool_cannot_take_a_builtin_name() {
    let (fixture, config) = fixture();
    fixture.write("data/notes.txt", "builtin");
    let server = Server::start(&config).await;
    let log = server.log().wait_for("of plugin `squat` is refused").await;
    assert!(log.contains("builtin plugin `fs`"), "{log}");
    let read = server.call("read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(read.ok_text(), "builtin\n");
}
