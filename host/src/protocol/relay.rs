//! A plugin's questions to the MCP client (contract 0.2.0's `client`
//! interface: elicitation, sampling, roots), on each protocol revision.
//!
//! - [`PeerClient`], for a 2025-11-25 session: each question becomes a
//!   server-to-client request, answered within the call's time limit. A
//!   client that did not declare the capability gets none: the plugin gets
//!   `unsupported`.
//! - [`StatelessClient`], for a 2026-07-28 request, which forbids
//!   server-to-client requests: it answers from the request's
//!   `inputResponses` and its `requestState` (the answers of earlier
//!   rounds). A question it has no answer to stops the run, and the client
//!   is sent an `input_required` result with the questions and a new
//!   `requestState`, sealed with HMAC-SHA256 ([`StateKey`]) and bound to the
//!   request, so that a tampered or transplanted state is refused. The retry
//!   runs the plugin again, in a fresh instance, with every answer so far. A
//!   question the client did not declare the capability for ends the request
//!   with -32021, as that revision prescribes.

// Sampling and roots are deprecated by the 2026-07-28 revision, which rmcp
// marks; they are part of 2025-11-25, which this relays.
#![allow(deprecated)]

use std::collections::BTreeMap;

use base64::Engine as _;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, ErrorCode, InputRequest,
    InputRequests, InputRequiredResult, InputResponses, RequestStateCodec, SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Value, json};

use crate::protocol::mcp::content_block;
use crate::runtime::call::{ClientAsk, Interruption};
use crate::runtime::contract::{client, v1, v2};

/// The capability a question needs, by its MCP name.
fn needs(question: &client::Question) -> &'static str {
    match question {
        client::Question::Elicit(_) => "elicitation",
        client::Question::Sample(_) => "sampling",
        client::Question::ListRoots => "roots",
    }
}

fn declared(capabilities: &client::ClientCapabilities, question: &client::Question) -> bool {
    match question {
        client::Question::Elicit(_) => capabilities.elicitation,
        client::Question::Sample(_) => capabilities.sampling,
        client::Question::ListRoots => capabilities.roots,
    }
}

/// What the contract says of a client's declared capabilities.
fn capabilities_of(declared: Option<&ClientCapabilities>) -> client::ClientCapabilities {
    client::ClientCapabilities {
        elicitation: declared.is_some_and(|c| c.elicitation.is_some()),
        sampling: declared.is_some_and(|c| c.sampling.is_some()),
        roots: declared.is_some_and(|c| c.roots.is_some()),
    }
}

/// The client of a 2025-11-25 session.
pub struct PeerClient {
    peer: Peer<RoleServer>,
    capabilities: client::ClientCapabilities,
}

impl PeerClient {
    /// The client that sent the request of `cx`.
    pub fn of(cx: &RequestContext<RoleServer>) -> PeerClient {
        PeerClient {
            peer: cx.peer.clone(),
            capabilities: capabilities_of(cx.client_capabilities().as_ref()),
        }
    }

    async fn ask_one(
        &self,
        question: client::Question,
    ) -> Result<client::Reply, client::ClientError> {
        let what = needs(&question);
        if !declared(&self.capabilities, &question) {
            return Err(client::ClientError::Unsupported(format!(
                "the client does not offer {what} (it did not declare the capability)"
            )));
        }
        let request = request_params(&question).map_err(|e| failed(what, e))?;
        let answer = match question {
            client::Question::Elicit(_) => {
                let params: ElicitRequestParams =
                    serde_json::from_value(request).map_err(|e| failed(what, e))?;
                let answer = self.peer.create_elicitation(params).await;
                serde_json::to_value(answer.map_err(|e| failed(what, e))?)
            }
            client::Question::Sample(_) => {
                let params: CreateMessageRequestParams =
                    serde_json::from_value(request).map_err(|e| failed(what, e))?;
                let answer = self.peer.create_message(params).await;
                serde_json::to_value(answer.map_err(|e| failed(what, e))?)
            }
            client::Question::ListRoots => {
                let answer = self.peer.list_roots().await;
                serde_json::to_value(answer.map_err(|e| failed(what, e))?)
            }
        };
        let answer = answer.map_err(|e| failed(what, e))?;
        reply(what, &answer).map_err(|e| failed(what, e))
    }
}

fn failed(what: &str, error: impl std::fmt::Display) -> client::ClientError {
    client::ClientError::Failed(format!("{what} failed: {error}"))
}

#[async_trait::async_trait]
impl ClientAsk for PeerClient {
    fn capabilities(&self) -> client::ClientCapabilities {
        self.capabilities
    }

    async fn ask(
        &self,
        questions: Vec<(String, client::Question)>,
    ) -> Result<Result<Vec<client::Reply>, client::ClientError>, Interruption> {
        let mut replies = Vec::with_capacity(questions.len());
        for (_, question) in questions {
            match self.ask_one(question).await {
                Ok(reply) => replies.push(reply),
                Err(error) => return Ok(Err(error)),
            }
        }
        Ok(Ok(replies))
    }
}

/// The key that seals `requestState`: from `TOOLCELL_STATE_KEY` (at least
/// 32 bytes, so that every replica of a server accepts the others' states),
/// else random for this process.
pub struct StateKey(RequestStateCodec);

impl StateKey {
    /// The key `TOOLCELL_STATE_KEY` names, or a random one.
    pub fn from_env() -> anyhow::Result<StateKey> {
        let key = match std::env::var("TOOLCELL_STATE_KEY") {
            Ok(key) if key.len() >= 32 => key.into_bytes(),
            Ok(_) => anyhow::bail!("TOOLCELL_STATE_KEY must be at least 32 bytes long"),
            Err(_) => {
                let mut key = vec![0u8; 32];
                getrandom::fill(&mut key)
                    .map_err(|e| anyhow::anyhow!("cannot make a random state key: {e}"))?;
                key
            }
        };
        let codec = RequestStateCodec::try_new(key)
            .map_err(|e| anyhow::anyhow!("cannot use the state key: {e}"))?;
        Ok(StateKey(codec))
    }
}

/// The client of a 2026-07-28 request: the answers it carries.
pub struct StatelessClient {
    capabilities: client::ClientCapabilities,
    answers: InputResponses,
}

/// What a 2026-07-28 request's `requestState` is bound to: its method, the
/// name or URI it is for (length-prefixed, since a URI may hold anything),
/// and its arguments.
pub fn binding(method: &str, name: &str, arguments: &Value) -> Vec<u8> {
    format!("{method}\n{}:{name}\n{arguments}", name.len()).into_bytes()
}

impl StatelessClient {
    /// The client of the request of `cx`, with its `requestState` (checked
    /// against `binding`) and `inputResponses`; -32602 for a state that
    /// fails its check.
    pub fn of(
        cx: &RequestContext<RoleServer>,
        key: &StateKey,
        binding: &[u8],
        state: Option<&str>,
        responses: Option<InputResponses>,
    ) -> Result<StatelessClient, ErrorData> {
        let mut answers: InputResponses = match state {
            Some(state) => key.0.open_json_with(state, binding).map_err(|e| {
                ErrorData::invalid_params(
                    format!("requestState failed its integrity check ({e}); start the request again without it"),
                    None,
                )
            })?,
            None => BTreeMap::new(),
        };
        answers.extend(responses.unwrap_or_default());
        Ok(StatelessClient {
            capabilities: capabilities_of(cx.client_capabilities().as_ref()),
            answers,
        })
    }

    /// What a run that stopped for `interruption` answers: an
    /// `input_required` result with every answer so far sealed into its
    /// state, or -32021 naming the capability.
    pub fn answer(
        &self,
        key: &StateKey,
        binding: &[u8],
        interruption: Interruption,
    ) -> Result<InputRequiredResult, ErrorData> {
        match interruption {
            Interruption::Input(questions) => {
                let mut requests = InputRequests::new();
                for (key, question) in &questions {
                    let request = input_request(question).map_err(|e| {
                        ErrorData::internal_error(format!("cannot ask the client: {e}"), None)
                    })?;
                    requests.insert(key.clone(), request);
                }
                let state = key
                    .0
                    .seal_json_with(&self.answers, &SealOptions::new().associated_data(binding))
                    .map_err(|e| {
                        ErrorData::internal_error(format!("cannot seal the state: {e}"), None)
                    })?;
                Ok(InputRequiredResult::new(Some(requests), Some(state)))
            }
            Interruption::MissingCapability(capability) => Err(ErrorData::new(
                ErrorCode(-32021),
                format!(
                    "this request needs the client's `{capability}` capability, which it did not \
                     declare"
                ),
                Some(json!({"requiredCapabilities": {capability: {}}})),
            )),
        }
    }
}

#[async_trait::async_trait]
impl ClientAsk for StatelessClient {
    fn capabilities(&self) -> client::ClientCapabilities {
        self.capabilities
    }

    async fn ask(
        &self,
        questions: Vec<(String, client::Question)>,
    ) -> Result<Result<Vec<client::Reply>, client::ClientError>, Interruption> {
        let mut replies = Vec::with_capacity(questions.len());
        let mut missing = Vec::new();
        for (key, question) in questions {
            let what = needs(&question);
            if !declared(&self.capabilities, &question) {
                return Err(Interruption::MissingCapability(what));
            }
            // An answer that does not decode is asked again.
            if let Some(reply) = self.answers.get(&key).and_then(|a| reply(what, a).ok()) {
                replies.push(reply);
                continue;
            }
            // A question MCP cannot carry is the plugin's error, told now.
            if let Err(error) = input_request(&question) {
                return Ok(Err(failed(what, error)));
            }
            missing.push((key, question));
        }
        if !missing.is_empty() {
            return Err(Interruption::Input(missing));
        }
        Ok(Ok(replies))
    }
}

/// A question as the client is asked it in an `input_required` result.
fn input_request(question: &client::Question) -> Result<InputRequest, String> {
    let method = match question {
        client::Question::Elicit(_) => "elicitation/create",
        client::Question::Sample(_) => "sampling/createMessage",
        client::Question::ListRoots => "roots/list",
    };
    let params = request_params(question)?;
    serde_json::from_value(json!({"method": method, "params": params})).map_err(|e| e.to_string())
}

/// The MCP parameters of a question.
fn request_params(question: &client::Question) -> Result<Value, String> {
    Ok(match question {
        client::Question::Elicit((message, schema)) => {
            let schema: Value =
                serde_json::from_str(schema).map_err(|e| format!("the schema is not JSON: {e}"))?;
            let params = json!({"mode": "form", "message": message, "requestedSchema": schema});
            // Checked as rmcp checks it, so a schema MCP does not allow is
            // the plugin's error, not the client's.
            serde_json::from_value::<ElicitRequestParams>(params.clone())
                .map_err(|e| format!("the schema is not one MCP elicitation allows: {e}"))?;
            params
        }
        client::Question::Sample(request) => {
            serde_json::to_value(sampling_params(request.clone())?).map_err(|e| e.to_string())?
        }
        client::Question::ListRoots => json!({}),
    })
}

/// A plugin's view of the client's answer to a question about `what`.
fn reply(what: &str, answer: &Value) -> Result<client::Reply, String> {
    match what {
        "elicitation" => {
            let action = answer["action"].as_str();
            Ok(client::Reply::Elicit(match action {
                Some("accept") => client::ElicitAnswer::Accept(
                    answer
                        .get("content")
                        .cloned()
                        .unwrap_or_else(|| json!({}))
                        .to_string(),
                ),
                Some("decline") => client::ElicitAnswer::Decline,
                Some("cancel") => client::ElicitAnswer::Cancel,
                other => return Err(format!("the answer's action is {other:?}")),
            }))
        }
        "sampling" => sampling_result(answer).map(client::Reply::Sample),
        _ => {
            let roots = answer["roots"]
                .as_array()
                .ok_or("the answer has no `roots` list")?;
            Ok(client::Reply::ListRoots(
                roots
                    .iter()
                    .filter_map(|root| {
                        Some(client::Root {
                            uri: root["uri"].as_str()?.to_string(),
                            name: root["name"].as_str().map(str::to_string),
                        })
                    })
                    .collect(),
            ))
        }
    }
}

fn role(role: v2::Role) -> &'static str {
    match role {
        v2::Role::User => "user",
        v2::Role::Assistant => "assistant",
    }
}

/// The `sampling/createMessage` parameters of a plugin's request.
fn sampling_params(request: client::SamplingRequest) -> Result<CreateMessageRequestParams, String> {
    let mut messages = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        let content = match message.content {
            text @ v1::Content::Text(_) => text,
            media @ (v1::Content::Image(_) | v1::Content::Audio(_)) => media,
            _ => return Err("sampling messages hold text, images or sounds only".to_string()),
        };
        let content = serde_json::to_value(content_block(content)?).map_err(|e| e.to_string())?;
        messages.push(json!({"role": role(message.role), "content": content}));
    }
    let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
    if let Some(system) = request.system_prompt {
        params["systemPrompt"] = Value::String(system);
    }
    let mut preferences = serde_json::Map::new();
    if !request.model_hints.is_empty() {
        let hints: Vec<Value> = request
            .model_hints
            .into_iter()
            .map(|name| json!({"name": name}))
            .collect();
        preferences.insert("hints".into(), Value::Array(hints));
    }
    for (key, value) in [
        ("costPriority", request.cost_priority),
        ("speedPriority", request.speed_priority),
        ("intelligencePriority", request.intelligence_priority),
    ] {
        if let Some(value) = value.filter(|v| (0.0..=1.0).contains(v)) {
            preferences.insert(key.into(), json!(value));
        }
    }
    if !preferences.is_empty() {
        params["modelPreferences"] = Value::Object(preferences);
    }
    serde_json::from_value(params).map_err(|e| format!("the request is malformed: {e}"))
}

/// A plugin's view of the client model's answer (JSON of `CreateMessageResult`).
fn sampling_result(answer: &Value) -> Result<client::SamplingResult, String> {
    let text = |key: &str| answer[key].as_str().map(str::to_string);
    let content = &answer["content"];
    let media = || -> Result<v1::Media, String> {
        let data = content["data"].as_str().unwrap_or_default();
        Ok(v1::Media {
            data: base64::engine::general_purpose::STANDARD
                .decode(data)
                .map_err(|e| format!("the answer's data is not base64: {e}"))?,
            mime_type: content["mimeType"].as_str().unwrap_or_default().to_string(),
        })
    };
    let content = match content["type"].as_str() {
        Some("text") => v1::Content::Text(content["text"].as_str().unwrap_or_default().into()),
        Some("image") => v1::Content::Image(media()?),
        Some("audio") => v1::Content::Audio(media()?),
        other => return Err(format!("the answer has content of type {other:?}")),
    };
    Ok(client::SamplingResult {
        role: if answer["role"] == "user" {
            v2::Role::User
        } else {
            v2::Role::Assistant
        },
        content,
        model: text("model").unwrap_or_default(),
        stop_reason: text("stopReason"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampling_request_becomes_create_message_params() {
        let params = sampling_params(client::SamplingRequest {
            messages: vec![client::SamplingMessage {
                role: v2::Role::User,
                content: v1::Content::Text("What is the capital of France?".into()),
            }],
            system_prompt: Some("Be brief.".into()),
            max_tokens: 100,
            model_hints: vec!["claude".into()],
            cost_priority: Some(0.2),
            speed_priority: None,
            intelligence_priority: Some(7.0),
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let json = serde_json::to_value(params).unwrap_or_default();
        assert_eq!(json["maxTokens"], 100);
        assert_eq!(json["systemPrompt"], "Be brief.");
        assert_eq!(
            json["messages"][0]["content"]["text"],
            "What is the capital of France?"
        );
        assert_eq!(json["modelPreferences"]["hints"][0]["name"], "claude");
        // Out of range: left out rather than sent.
        assert!(
            json["modelPreferences"]
                .get("intelligencePriority")
                .is_none()
        );
    }

    #[test]
    fn a_sampling_answer_becomes_a_result() {
        let answer = json!({"role": "assistant", "model": "m1", "stopReason": "endTurn",
                            "content": {"type": "text", "text": "Paris"}});
        let result = sampling_result(&answer).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(result.model, "m1");
        assert_eq!(result.stop_reason.as_deref(), Some("endTurn"));
        assert!(matches!(result.content, v1::Content::Text(ref t) if t == "Paris"));
        let odd = json!({"role": "assistant", "model": "m", "content": {"type": "tool_use"}});
        assert!(sampling_result(&odd).is_err());
    }
}
