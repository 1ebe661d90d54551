//! A plugin's questions to the MCP client (contract 0.2.0's `client`
//! interface: elicitation, sampling, roots), relayed as server-to-client
//! requests of a 2025-11-25 session.
//!
//! A client that did not declare the capability, and a 2026-07-28 request
//! (which forbids server-to-client requests and asks through
//! `input_required` results instead, which Toolcell does not implement yet),
//! get `unsupported` back: an error value the plugin can handle, never a
//! trap. A request to the client ends with the call's deadline, like the
//! rest of the call.

// Sampling and roots are deprecated by the 2026-07-28 revision, which rmcp
// marks; they are part of 2025-11-25, which this relays.
#![allow(deprecated)]

use base64::Engine as _;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, ElicitRequestParams, ElicitationAction,
    ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::contract::{client, v1, v2};
use crate::features::content_block;
use crate::plugin::ClientAsk;

/// The client of one request.
pub struct PeerClient {
    peer: Peer<RoleServer>,
    capabilities: Option<ClientCapabilities>,
    /// Why requests cannot be relayed at all, if they cannot.
    refused: Option<String>,
}

impl PeerClient {
    /// The client that sent the request of `cx`.
    pub fn of(cx: &RequestContext<RoleServer>) -> PeerClient {
        let stateless = cx
            .protocol_version()
            .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28);
        PeerClient {
            peer: cx.peer.clone(),
            capabilities: cx.client_capabilities(),
            refused: stateless.then(|| {
                "this request uses MCP 2026-07-28, which asks the client through \
                 `input_required` results; Toolcell does not relay those yet"
                    .to_string()
            }),
        }
    }

    /// Whether requests for `what` may be sent: the revision allows them
    /// and the client declared `declared`.
    fn check(&self, what: &str, declared: bool) -> Result<(), client::ClientError> {
        if let Some(reason) = &self.refused {
            return Err(client::ClientError::Unsupported(format!(
                "{what}: {reason}"
            )));
        }
        if !declared {
            return Err(client::ClientError::Unsupported(format!(
                "the client does not offer {what} (it did not declare the capability)"
            )));
        }
        Ok(())
    }
}

fn failed(what: &str, error: impl std::fmt::Display) -> client::ClientError {
    client::ClientError::Failed(format!("{what} failed: {error}"))
}

#[async_trait::async_trait]
impl ClientAsk for PeerClient {
    async fn elicit(
        &self,
        message: String,
        schema: String,
    ) -> Result<client::ElicitAnswer, client::ClientError> {
        let declared = self
            .capabilities
            .as_ref()
            .is_some_and(|c| c.elicitation.is_some());
        self.check("elicitation", declared)?;
        let schema: Value = serde_json::from_str(&schema)
            .map_err(|e| failed("elicitation", format!("the schema is not JSON: {e}")))?;
        let params: ElicitRequestParams = serde_json::from_value(
            json!({"mode": "form", "message": message, "requestedSchema": schema}),
        )
        .map_err(|e| {
            failed(
                "elicitation",
                format!("the schema is not one MCP elicitation allows: {e}"),
            )
        })?;
        let answer = self
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| failed("elicitation", e))?;
        Ok(match answer.action {
            ElicitationAction::Accept => client::ElicitAnswer::Accept(
                answer
                    .content
                    .unwrap_or_else(|| Value::Object(Default::default()))
                    .to_string(),
            ),
            ElicitationAction::Decline => client::ElicitAnswer::Decline,
            _ => client::ElicitAnswer::Cancel,
        })
    }

    async fn sample(
        &self,
        request: client::SamplingRequest,
    ) -> Result<client::SamplingResult, client::ClientError> {
        let declared = self
            .capabilities
            .as_ref()
            .is_some_and(|c| c.sampling.is_some());
        self.check("sampling", declared)?;
        let params = sampling_params(request).map_err(|e| failed("sampling", e))?;
        let answer = self
            .peer
            .create_message(params)
            .await
            .map_err(|e| failed("sampling", e))?;
        let answer = serde_json::to_value(answer).map_err(|e| failed("sampling", e))?;
        sampling_result(&answer).map_err(|e| failed("sampling", e))
    }

    async fn list_roots(&self) -> Result<Vec<client::Root>, client::ClientError> {
        let declared = self
            .capabilities
            .as_ref()
            .is_some_and(|c| c.roots.is_some());
        self.check("roots", declared)?;
        let listed = self
            .peer
            .list_roots()
            .await
            .map_err(|e| failed("roots/list", e))?;
        Ok(listed
            .roots
            .into_iter()
            .map(|root| client::Root {
                uri: root.uri,
                name: root.name,
            })
            .collect())
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
