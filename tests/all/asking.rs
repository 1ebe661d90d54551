//! A plugin's questions to the client (contract 0.2.0's `client` interface), from the
//! conformance plugin's fixtures: on a 2025-11-25 session as server-to-client requests the
//! test answers (accepted, declined, unsupported; sampling), and on 2026-07-28 requests as
//! `input_required` results whose sealed `requestState` carries the answers from round to
//! round, is refused when tampered with, and is accepted by another server process that shares
//! the key.

use serde_json::{Value, json};

use crate::support::{Fixture, INVALID_PARAMS, PROTOCOL_VERSION, RawServer, bin};

/// The categories that enable the conformance plugin's tools.
const CATEGORIES: &str = "[server]\ncategories = [\"conformance\"]\n";

fn conformance_config() -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new();
    let entry = fixture.conformance("conformance", "");
    let config = fixture.config(&format!("{CATEGORIES}{entry}"));
    (fixture, config)
}

/// A server for `config` whose `requestState` key is `key`.
fn spawn_with_key(config: &std::path::Path, key: &str) -> RawServer {
    RawServer::spawn_with(bin(), |command| {
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env("TOOLCELL_STATE_KEY", key);
    })
}

/// The handshake with `capabilities` declared.
async fn initialize(server: &mut RawServer, capabilities: Value) {
    let response = server
        .request(
            0,
            "initialize",
            json!({"protocolVersion": PROTOCOL_VERSION, "capabilities": capabilities,
                   "clientInfo": {"name": "toolcell-tests", "version": "0"}}),
        )
        .await;
    assert!(response.get("result").is_some(), "{response}");
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

/// Calls `tool` as request `id`, answering each request the server sends meanwhile with
/// `answer(method, params)`; returns the call's response and the methods the server asked.
async fn call_answering(
    server: &mut RawServer,
    id: i64,
    tool: &str,
    arguments: Value,
    answer: impl Fn(&str, &Value) -> Value,
) -> (Value, Vec<String>) {
    server
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                     "params": {"name": tool, "arguments": arguments}}))
        .await;
    let mut asked = Vec::new();
    loop {
        let message = server.recv().await.expect("the server answers");
        if let (Some(method), Some(request_id)) = (message["method"].as_str(), message.get("id")) {
            asked.push(method.to_string());
            let result = answer(method, &message["params"]);
            server
                .send(json!({"jsonrpc": "2.0", "id": request_id, "result": result}))
                .await;
        } else if message.get("id") == Some(&json!(id)) {
            return (message, asked);
        }
    }
}

fn text(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {response}"))
        .to_string()
}

#[tokio::test]
async fn a_session_client_is_asked_directly() {
    let (_fixture, config) = conformance_config();
    let mut server = RawServer::spawn(&config, &[]);
    initialize(
        &mut server,
        json!({"elicitation": {}, "sampling": {}, "roots": {}}),
    )
    .await;

    let accept = |_: &str, _: &Value| json!({"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}});
    let (accepted, asked) = call_answering(
        &mut server,
        1,
        "test_elicitation",
        json!({"message": "Who are you?"}),
        accept,
    )
    .await;
    assert_eq!(asked, ["elicitation/create"]);
    assert_eq!(
        text(&accepted),
        r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#
    );

    let decline = |_: &str, _: &Value| json!({"action": "decline"});
    let (declined, _) = call_answering(
        &mut server,
        2,
        "test_elicitation",
        json!({"message": "Who are you?"}),
        decline,
    )
    .await;
    assert_eq!(text(&declined), "User response: action=decline");

    let model = |method: &str, params: &Value| {
        assert_eq!(method, "sampling/createMessage");
        assert_eq!(params["maxTokens"], 100);
        json!({"role": "assistant", "content": {"type": "text", "text": "Paris"},
               "model": "test-model", "stopReason": "endTurn"})
    };
    let (sampled, _) = call_answering(
        &mut server,
        3,
        "test_sampling",
        json!({"prompt": "The capital of France?"}),
        model,
    )
    .await;
    assert_eq!(text(&sampled), "LLM response: Paris");
    server.finish().await;
}

#[tokio::test]
async fn a_client_without_the_capability_is_not_asked() {
    let (_fixture, config) = conformance_config();
    let mut server = RawServer::spawn(&config, &[]);
    initialize(&mut server, json!({})).await;
    let (response, asked) = call_answering(
        &mut server,
        1,
        "test_elicitation",
        json!({"message": "Who are you?"}),
        |_, _| json!({}),
    )
    .await;
    assert!(asked.is_empty(), "{asked:?}");
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(
        text(&response).contains("does not offer elicitation"),
        "{response}"
    );
    server.finish().await;
}

/// The `_meta` of a 2026-07-28 request from a client that declares `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "toolcell-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 `tools/call` of `tool` with `extra` parameters.
async fn stateless_call(server: &mut RawServer, id: i64, tool: &str, extra: Value) -> Value {
    let mut params = json!({"name": tool, "arguments": {},
                            "_meta": meta(json!({"elicitation": {}, "sampling": {}, "roots": {}}))});
    if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
        params.extend(extra.clone());
    }
    server.request(id, "tools/call", params).await
}

fn accepted(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn a_stateless_request_is_answered_over_rounds_of_input_required() {
    let (_fixture, config) = conformance_config();
    let mut server = RawServer::spawn(&config, &[]);
    let tool = "test_input_required_result_multi_round";

    let first = stateless_call(&mut server, 1, tool, json!({})).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["step1"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].as_str().expect("a requestState");

    // Round 2 carries step1's answer; the state the server hands back carries it on.
    let second = stateless_call(
        &mut server,
        2,
        tool,
        json!({"inputResponses": {"step1": accepted(json!({"name": "Ada"}))},
               "requestState": state}),
    )
    .await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert!(result["inputRequests"].get("step2").is_some(), "{second}");
    assert!(result["inputRequests"].get("step1").is_none(), "{second}");
    let state = result["requestState"].as_str().expect("a requestState");

    let third = stateless_call(
        &mut server,
        3,
        tool,
        json!({"inputResponses": {"step2": accepted(json!({"color": "teal"}))},
               "requestState": state}),
    )
    .await;
    assert_eq!(third["result"]["resultType"], "complete", "{third}");
    assert_eq!(text(&third), "Ada's favorite color is teal");

    // Several questions in one round, keyed as the plugin named them.
    let several = stateless_call(
        &mut server,
        4,
        "test_input_required_result_multiple_inputs",
        json!({}),
    )
    .await;
    let keys: Vec<&String> = several["result"]["inputRequests"]
        .as_object()
        .unwrap_or_else(|| panic!("input requests: {several}"))
        .keys()
        .collect();
    assert_eq!(keys, ["client_roots", "greeting", "user_name"], "{several}");
    server.finish().await;
}

#[tokio::test]
async fn a_tampered_or_transplanted_state_is_refused() {
    let (_fixture, config) = conformance_config();
    let mut server = RawServer::spawn(&config, &[]);
    let tool = "test_input_required_result_tampered_state";
    let first = stateless_call(&mut server, 1, tool, json!({})).await;
    let state = first["result"]["requestState"]
        .as_str()
        .expect("a requestState")
        .to_string();
    // One character changed in the middle of the state.
    let mut tampered = state.clone().into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ASCII");
    let answer = json!({"confirm": accepted(json!({"ok": "yes"}))});
    let refused = stateless_call(
        &mut server,
        2,
        tool,
        json!({"inputResponses": answer, "requestState": tampered}),
    )
    .await;
    assert_eq!(refused["error"]["code"], INVALID_PARAMS, "{refused}");
    // A state is bound to its request: the same state on another tool is refused too.
    let transplanted = stateless_call(
        &mut server,
        3,
        "test_input_required_result_request_state",
        json!({"inputResponses": answer, "requestState": state}),
    )
    .await;
    assert_eq!(
        transplanted["error"]["code"], INVALID_PARAMS,
        "{transplanted}"
    );
    let honest = stateless_call(
        &mut server,
        4,
        tool,
        json!({"inputResponses": answer, "requestState": state}),
    )
    .await;
    assert_eq!(text(&honest), "confirmed: yes");
    server.finish().await;
}

#[tokio::test]
async fn a_request_state_that_is_not_a_string_is_invalid_params_not_an_unknown_method() {
    let (_fixture, config) = conformance_config();
    let mut server = RawServer::spawn(&config, &[]);
    let tool = "test_input_required_result_tampered_state";
    for (id, state) in [(1, json!(5)), (2, json!({"a": 1})), (3, json!(["x"]))] {
        let refused = stateless_call(&mut server, id, tool, json!({"requestState": state})).await;
        assert_eq!(refused["error"]["code"], INVALID_PARAMS, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("invalid parameters for `tools/call`"),
            "{refused}"
        );
    }
    // A method this server does not know is still -32601.
    let unknown = server
        .request(4, "tools/frobnicate", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    server.finish().await;
}

#[tokio::test]
async fn a_retry_may_land_on_another_process_with_the_same_key() {
    let (_fixture, config) = conformance_config();
    let key = "a key shared by every replica, 32+ bytes long";
    let mut first = spawn_with_key(&config, key);
    let mut second = spawn_with_key(&config, key);
    let mut stranger = spawn_with_key(&config, "another key, also 32 or more bytes");
    let tool = "test_input_required_result_elicitation";

    let round1 = stateless_call(&mut first, 1, tool, json!({})).await;
    let state = round1["result"]["requestState"]
        .as_str()
        .expect("a requestState");
    let retry = json!({"inputResponses": {"user_name": accepted(json!({"name": "Grace"}))},
                       "requestState": state});
    let round2 = stateless_call(&mut second, 1, tool, retry.clone()).await;
    assert_eq!(text(&round2), "Hello, Grace!");
    let refused = stateless_call(&mut stranger, 1, tool, retry).await;
    assert_eq!(refused["error"]["code"], INVALID_PARAMS, "{refused}");
    for server in [first, second, stranger] {
        server.finish().await;
    }
}

#[tokio::test]
async fn a_question_the_client_cannot_answer_fails_a_stateless_request_with_32021() {
    let (_fixture, config) = conformance_config();
    let mut server = RawServer::spawn(&config, &[]);
    let params = json!({"name": "test_missing_capability", "arguments": {},
                        "_meta": meta(json!({"elicitation": {}}))});
    let refused = server.request(1, "tools/call", params).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]
            .get("sampling")
            .is_some(),
        "{refused}"
    );
    // A plugin that asks only what was declared goes on.
    let params = json!({"name": "test_input_required_result_capabilities", "arguments": {},
                        "_meta": meta(json!({"sampling": {}}))});
    let asked = server.request(2, "tools/call", params).await;
    let requests = &asked["result"]["inputRequests"];
    assert_eq!(
        requests["capital_question"]["method"], "sampling/createMessage",
        "{asked}"
    );
    assert!(requests.get("user_name").is_none(), "{asked}");
    server.finish().await;
}
