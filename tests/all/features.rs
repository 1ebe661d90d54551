//! Contract 0.2.0 beside tools: resources, resource templates, prompts and completions, served
//! from a plugin (the conformance fixtures, built against the SDK) on both protocol revisions,
//! declared only when a loaded plugin offers them, and a 0.1.0 plugin still served beside it.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::{Fixture, INVALID_PARAMS, RawServer};

/// The categories that enable the conformance plugin's tools and the fs plugin's.
const CATEGORIES: &str = "[server]\ncategories = [\"read\", \"conformance\"]\n";

/// A fixture serving the conformance plugin (as `conformance`) with `extra` lines in its entry.
fn conformance_config(extra: &str) -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    let entry = fixture.conformance("conformance", extra);
    let config = fixture.config(&format!("{CATEGORIES}{entry}"));
    (fixture, config)
}

/// The `_meta` of a 2026-07-28 request, which carries no session.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "toolcell-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn result(response: &Value) -> &Value {
    response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result: {response}"))
}

fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error: {response}"))
}

#[tokio::test]
async fn a_0_2_plugin_serves_resources_prompts_and_completions() {
    let (_fixture, config) = conformance_config("");
    let mut server = RawServer::spawn(&config, &[]);
    let init = server.initialize().await;
    let capabilities = &init["capabilities"];
    for declared in ["tools", "logging", "resources", "prompts", "completions"] {
        assert!(capabilities.get(declared).is_some(), "{declared}: {init}");
    }

    let listed = server.request(1, "resources/list", json!({})).await;
    let uris: Vec<&str> = result(&listed)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(uris.contains(&"test://static-text"), "{listed}");
    assert!(uris.contains(&"test://static-binary"), "{listed}");

    let templates = server
        .request(2, "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        result(&templates)["resourceTemplates"][0]["uriTemplate"],
        "test://template/{id}/data",
        "{templates}"
    );

    let text = server
        .request(3, "resources/read", json!({"uri": "test://static-text"}))
        .await;
    let contents = &result(&text)["contents"][0];
    assert_eq!(contents["uri"], "test://static-text", "{text}");
    assert!(
        !contents["text"].as_str().unwrap_or_default().is_empty(),
        "{text}"
    );

    let binary = server
        .request(4, "resources/read", json!({"uri": "test://static-binary"}))
        .await;
    let blob = result(&binary)["contents"][0]["blob"]
        .as_str()
        .unwrap_or_else(|| panic!("a blob: {binary}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .expect("the blob is base64");
    assert!(!bytes.is_empty());

    // A template's variable reaches the plugin, which reads by it.
    let templated = server
        .request(
            5,
            "resources/read",
            json!({"uri": "test://template/4711/data"}),
        )
        .await;
    let contents = &result(&templated)["contents"][0];
    assert_eq!(contents["uri"], "test://template/4711/data", "{templated}");
    assert!(contents.to_string().contains("4711"), "{templated}");

    // 2025-11-25 says -32002 for a resource that does not exist, with the URI as data.
    let missing = "test://nonexistent-resource-for-conformance-testing";
    let absent = server
        .request(6, "resources/read", json!({"uri": missing}))
        .await;
    assert_eq!(error_code(&absent), -32002, "{absent}");
    assert_eq!(absent["error"]["data"]["uri"], missing, "{absent}");

    let prompts = server.request(7, "prompts/list", json!({})).await;
    let names: Vec<&str> = result(&prompts)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    for name in ["test_simple_prompt", "test_prompt_with_arguments"] {
        assert!(names.contains(&name), "{prompts}");
    }

    let got = server
        .request(
            8,
            "prompts/get",
            json!({"name": "test_prompt_with_arguments",
                   "arguments": {"arg1": "alpha-value", "arg2": "beta-value"}}),
        )
        .await;
    let message = result(&got)["messages"][0].to_string();
    assert!(
        message.contains("alpha-value") && message.contains("beta-value"),
        "{got}"
    );

    // A required argument left out, an unknown prompt: invalid params, before any plugin runs.
    let missing_argument = server
        .request(
            9,
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg2": "b"}}),
        )
        .await;
    assert_eq!(error_code(&missing_argument), INVALID_PARAMS as i64);
    assert!(
        missing_argument["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("arg1"),
        "{missing_argument}"
    );
    let unknown = server
        .request(10, "prompts/get", json!({"name": "no_such_prompt"}))
        .await;
    assert_eq!(error_code(&unknown), INVALID_PARAMS as i64, "{unknown}");

    let completed = server
        .request(
            11,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": ""}}),
        )
        .await;
    assert!(
        result(&completed)["completion"]["values"].is_array(),
        "{completed}"
    );

    let finished = server.finish().await;
    assert!(finished.status.success(), "{}", finished.log);
}

#[tokio::test]
async fn the_stateless_revision_serves_them_and_discover_declares_them() {
    let (_fixture, config) = conformance_config("");
    let mut server = RawServer::spawn(&config, &[]);
    let discovered = server
        .request(1, "server/discover", json!({"_meta": stateless_meta()}))
        .await;
    let capabilities = &result(&discovered)["capabilities"];
    for declared in ["tools", "resources", "prompts", "completions"] {
        assert!(
            capabilities.get(declared).is_some(),
            "{declared}: {discovered}"
        );
    }

    let read = server
        .request(
            2,
            "resources/read",
            json!({"uri": "test://static-text", "_meta": stateless_meta()}),
        )
        .await;
    assert_eq!(result(&read)["resultType"], "complete", "{read}");
    assert_eq!(result(&read)["contents"][0]["uri"], "test://static-text");

    // 2026-07-28 says -32602, with the URI as data.
    let missing = "test://nonexistent-resource-for-conformance-testing";
    let absent = server
        .request(
            3,
            "resources/read",
            json!({"uri": missing, "_meta": stateless_meta()}),
        )
        .await;
    assert_eq!(error_code(&absent), INVALID_PARAMS as i64, "{absent}");
    assert_eq!(absent["error"]["data"]["uri"], missing, "{absent}");

    let prompt = server
        .request(
            4,
            "prompts/get",
            json!({"name": "test_simple_prompt", "_meta": stateless_meta()}),
        )
        .await;
    assert_eq!(result(&prompt)["resultType"], "complete", "{prompt}");
    assert!(result(&prompt)["messages"][0]["content"]["text"].is_string());

    let finished = server.finish().await;
    assert!(finished.status.success(), "{}", finished.log);
}

#[tokio::test]
async fn without_such_plugins_nothing_more_is_declared() {
    // probe is built with the SDK (it exports the 0.2.0 interfaces and lists nothing in them);
    // raw is built from the 0.1.0 WIT and exports `tools` alone.
    let fixture = Fixture::new();
    let probe = fixture.probe();
    let raw = fixture.raw("");
    let config = fixture.config(&format!(
        "[[plugin]]\nname = \"probe\"\npath = \"{probe}\"\n{raw}"
    ));
    let mut server = RawServer::spawn(&config, &[]);
    let init = server.initialize().await;
    let capabilities = &init["capabilities"];
    for undeclared in ["resources", "prompts", "completions"] {
        assert!(
            capabilities.get(undeclared).is_none(),
            "{undeclared}: {init}"
        );
    }
    for (id, method) in [(1, "prompts/list"), (2, "resources/list")] {
        let response = server.request(id, method, json!({})).await;
        assert_eq!(error_code(&response), -32601, "{method}: {response}");
    }
    server.finish().await;
}

#[tokio::test]
async fn a_0_1_plugin_is_served_beside_a_0_2_plugin() {
    // The raw plugin is built from the 0.1.0 WIT with raw bindings: it exports `tools` alone.
    let fixture = Fixture::new();
    let raw = fixture.raw("");
    let conformance = fixture.conformance("conformance", "");
    let config = fixture.config(&format!("{CATEGORIES}{raw}{conformance}"));
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let listed = server.request(1, "tools/list", json!({})).await;
    let names: Vec<&str> = result(&listed)["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"good") && names.contains(&"test_simple_text"),
        "{names:?}"
    );
    let called = server.call(2, "good", json!({})).await;
    assert_eq!(result(&called)["isError"], false, "{called}");
    let prompts = server.request(3, "prompts/list", json!({})).await;
    assert!(result(&prompts)["prompts"].is_array(), "{prompts}");
    server.finish().await;
}

#[tokio::test]
async fn a_second_plugin_cannot_take_a_served_resource_or_prompt() {
    let fixture = Fixture::new();
    let first = fixture.conformance("first", "");
    let second = fixture.conformance("second", "");
    let config = fixture.config(&format!("{CATEGORIES}{first}{second}"));
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let listed = server.request(1, "resources/list", json!({})).await;
    let static_text = result(&listed)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["uri"] == "test://static-text")
        .count();
    assert_eq!(static_text, 1, "{listed}");
    let finished = server.finish().await;
    for refused in [
        "resource `test://static-text` of plugin `second` is refused: plugin `first` already serves it",
        "resource template `test://template/{id}/data` of plugin `second` is refused",
        "prompt `test_simple_prompt` of plugin `second` is refused",
    ] {
        assert!(
            finished.log.contains(refused),
            "{refused}\n{}",
            finished.log
        );
    }
}

#[tokio::test]
async fn a_read_over_the_output_cap_is_an_error_and_the_server_goes_on() {
    let (_fixture, config) = conformance_config("limits = { max_output_bytes = 64 }");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let read = server
        .request(1, "resources/read", json!({"uri": "test://static-binary"}))
        .await;
    let message = read["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("over the limit of 64 bytes"), "{read}");
    let prompts = server.request(2, "prompts/list", json!({})).await;
    assert!(result(&prompts)["prompts"].is_array(), "{prompts}");
    server.finish().await;
}

/// A fixture serving the builtin fs plugin with `data/` mounted read-only, holding a text file,
/// a PNG and a folder; `secret.txt` beside `data/` and `data-evil/` (a sibling sharing its
/// prefix) are outside every mount, and `data/out` is a symlink to the secret.
fn fs_resources_fixture() -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    fixture.write("data/notes.txt", "first line\nsecond line\n");
    fixture.write("data/pixel.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    fixture.write("data/sub/deep.md", "# deep\n");
    fixture.write("secret.txt", "the secret\n");
    fixture.write("data-evil/loot.txt", "the loot\n");
    fixture.symlink(fixture.path("secret.txt"), "data/out");
    let config = fixture.config(
        "[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nmounts = [{ host = \"data\", mode = \"ro\" }]\n",
    );
    (fixture, config)
}

fn file_uri(path: &std::path::Path) -> String {
    format!("file://{}", path.display())
}

#[tokio::test]
async fn the_fs_plugin_serves_files_as_resources() {
    let (fixture, config) = fs_resources_fixture();
    let mut server = RawServer::spawn(&config, &[]);
    let init = server.initialize().await;
    assert!(init["capabilities"].get("resources").is_some(), "{init}");
    assert!(init["capabilities"].get("completions").is_some(), "{init}");

    let templates = server
        .request(1, "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        result(&templates)["resourceTemplates"][0]["uriTemplate"],
        "file:///{+path}"
    );

    let notes = file_uri(&fixture.path("data/notes.txt"));
    let text = server
        .request(2, "resources/read", json!({"uri": notes}))
        .await;
    let contents = &result(&text)["contents"][0];
    assert_eq!(contents["uri"], notes, "{text}");
    assert_eq!(contents["text"], "first line\nsecond line\n", "{text}");
    assert_eq!(contents["mimeType"], "text/plain", "{text}");

    let pixel = file_uri(&fixture.path("data/pixel.png"));
    let binary = server
        .request(3, "resources/read", json!({"uri": pixel}))
        .await;
    let contents = &result(&binary)["contents"][0];
    assert_eq!(contents["mimeType"], "image/png", "{binary}");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(contents["blob"].as_str().unwrap_or_default())
        .expect("base64");
    assert_eq!(bytes, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");

    // The files at the top of the mount are listed; the folder's are not.
    let listed = server.request(4, "resources/list", json!({})).await;
    let uris: Vec<&str> = result(&listed)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(
        uris.contains(&notes.as_str()) && uris.contains(&pixel.as_str()),
        "{listed}"
    );
    assert!(!uris.iter().any(|uri| uri.ends_with("deep.md")), "{listed}");

    // The template's `path` completes from the folder typed so far.
    let typed = format!("{}/", fixture.path("data").display());
    let typed = typed.trim_start_matches('/');
    let completed = server
        .request(
            5,
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "file:///{+path}"},
                   "argument": {"name": "path", "value": format!("{typed}s")}}),
        )
        .await;
    assert_eq!(
        result(&completed)["completion"]["values"],
        json!([format!("{typed}sub/")]),
        "{completed}"
    );
    server.finish().await;
}

#[tokio::test]
async fn a_resource_read_cannot_leave_the_mounts() {
    let (fixture, config) = fs_resources_fixture();
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let data = fixture.path("data");
    let escapes = [
        // `..` out of the mount, plainly and percent-encoded.
        format!("file://{}/../secret.txt", data.display()),
        format!("file://{}/%2E%2E/secret.txt", data.display()),
        // An absolute path outside every mount.
        file_uri(&fixture.path("secret.txt")),
        "file:///etc/passwd".to_string(),
        // A symlink inside the mount that points out of it.
        file_uri(&fixture.path("data/out")),
        // A sibling that shares the mount's prefix.
        file_uri(&fixture.path("data-evil/loot.txt")),
    ];
    for (id, uri) in (1..).zip(&escapes) {
        let read = server
            .request(id, "resources/read", json!({"uri": uri}))
            .await;
        let text = read.to_string();
        assert!(read.get("error").is_some(), "{uri}: {read}");
        assert!(
            !text.contains("the secret") && !text.contains("the loot"),
            "{uri}: {read}"
        );
    }
    // And the server goes on serving.
    let notes = file_uri(&fixture.path("data/notes.txt"));
    let read = server
        .request(99, "resources/read", json!({"uri": notes}))
        .await;
    assert!(result(&read)["contents"][0]["text"].is_string(), "{read}");
    server.finish().await;
}

#[tokio::test]
async fn a_subscribed_resource_is_followed_until_unsubscribed() {
    let (fixture, config) = fs_resources_fixture();
    let mut server = RawServer::spawn(&config, &[]);
    let init = server.initialize().await;
    assert_eq!(
        init["capabilities"]["resources"]["subscribe"], true,
        "{init}"
    );
    let notes = file_uri(&fixture.path("data/notes.txt"));
    let subscribed = server
        .request(1, "resources/subscribe", json!({"uri": notes}))
        .await;
    assert!(subscribed.get("result").is_some(), "{subscribed}");

    // The server reads the resource again every 2 seconds; a change is notified.
    fixture.write("data/notes.txt", "changed\n");
    let updated = loop {
        let message = server.recv().await.expect("the server goes on");
        if message["method"] == "notifications/resources/updated" {
            break message;
        }
    };
    assert_eq!(updated["params"]["uri"], notes, "{updated}");

    let unsubscribed = server
        .request(2, "resources/unsubscribe", json!({"uri": notes}))
        .await;
    assert!(unsubscribed.get("result").is_some(), "{unsubscribed}");
    // A resource nothing serves cannot be followed.
    let missing = file_uri(&fixture.path("data/missing.txt"));
    let refused = server
        .request(3, "resources/subscribe", json!({"uri": missing}))
        .await;
    assert_eq!(error_code(&refused), -32002, "{refused}");
    server.finish().await;
}

#[tokio::test]
async fn a_stateless_client_listens_for_resource_updates() {
    let (fixture, config) = fs_resources_fixture();
    let mut server = RawServer::spawn(&config, &[]);
    let notes = file_uri(&fixture.path("data/notes.txt"));
    // A client discovers first, which waits for the plugins to load.
    let discovered = server
        .request(0, "server/discover", json!({"_meta": stateless_meta()}))
        .await;
    assert_eq!(
        result(&discovered)["capabilities"]["resources"]["subscribe"],
        true,
        "{discovered}"
    );
    server
        .send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
                     "params": {"_meta": stateless_meta(),
                                "notifications": {"resourceSubscriptions": [notes]}}}),
        )
        .await;
    let acknowledged = server.recv().await.expect("an acknowledgment");
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["resourceSubscriptions"],
        json!([notes]),
        "{acknowledged}"
    );
    // The server reads each resource when the stream opens, after the acknowledgment, and
    // again every 2 seconds: the file changes until an update comes, so that a change is
    // certain to fall after that first read.
    let mut changes = 0;
    let updated = loop {
        tokio::select! {
            message = server.recv() => {
                let message = message.expect("the stream goes on");
                if message["method"] == "notifications/resources/updated" {
                    break message;
                }
            }
            () = tokio::time::sleep(std::time::Duration::from_secs(3)) => {
                changes += 1;
                fixture.write("data/notes.txt", format!("change {changes}\n"));
            }
        }
    };
    assert_eq!(updated["params"]["uri"], notes, "{updated}");
    server.finish().await;
}
