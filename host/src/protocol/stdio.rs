//! MCP over stdin and stdout, one JSON-RPC message per line.
//!
//! [`serve_stdio`] runs a [`Server`] until stdin closes. Its transport
//! differs from rmcp's own line transport in what a careless client cannot
//! do to it:
//! - A line that is not JSON gets a parse error (-32700), and well-formed
//!   JSON that is not a message an invalid-request error (-32600), with the
//!   request's id when it has one; notifications it does not know are
//!   ignored. No line ends the session; only the end of stdin does.
//! - Notifications and responses that arrive before the session has started
//!   (before `initialize`) are dropped: rmcp would end the session on them.
//! - Replies to bad lines are never written from inside `receive`, which
//!   rmcp may drop midway when another event wins its `select!`: each is
//!   handed whole to a task of its own that writes it (or kept for the next
//!   `receive` until one of a bounded number of such tasks may start), so
//!   none is lost and no line is written in part. Lines are written whole
//!   under a lock on stdout.
//!
//! When stdin and stdout are pipes (as MCP clients start servers) they are
//! read and written on the runtime's reactor, not through blocking threads.

use anyhow::Result;
use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, JsonRpcRequest,
    ProtocolVersion,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{RoleServer, ServiceExt};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use std::borrow::Cow;
use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Semaphore};

use crate::limits::{MAX_STDIO_LINE, PENDING_REPLIES};
use crate::protocol::server::Server;

/// Serves MCP on stdin/stdout until stdin closes.
pub async fn serve_stdio(server: Server) -> Result<()> {
    let (input, output) = rmcp::transport::stdio_pipes();
    let transport = StdioTransport {
        input: BufReader::new(input),
        line: Vec::new(),
        output: Arc::new(Mutex::new(output)),
        replies: Arc::new(Semaphore::new(PENDING_REPLIES)),
        reply: None,
        started: false,
        skipping: false,
    };
    match server.serve(transport).await {
        Ok(running) => {
            let reason = running.waiting().await;
            tracing::debug!("MCP session ended: {reason:?}");
            Ok(())
        }
        // A client that goes away before the handshake is a normal end.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(during)) => {
            tracing::info!("stdin closed before the session started ({during})");
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

/// Writes `line` (which ends with a newline) whole.
async fn write_line(
    output: &Mutex<rmcp::transport::StdioWriter>,
    line: &[u8],
) -> std::io::Result<()> {
    let mut output = output.lock().await;
    output.write_all(line).await?;
    output.flush().await
}

struct StdioTransport {
    input: BufReader<rmcp::transport::StdioReader>,
    /// The line being read; it survives a `receive` that rmcp drops midway.
    line: Vec<u8>,
    output: Arc<Mutex<rmcp::transport::StdioWriter>>,
    /// Room for error replies being written.
    replies: Arc<Semaphore>,
    /// An error reply not yet handed to a writing task; it goes before
    /// anything else is read.
    reply: Option<Vec<u8>>,
    /// Whether rmcp has been handed a request that starts the session.
    started: bool,
    /// Whether the rest of an oversized line is being skipped (it survives
    /// a `receive` that rmcp drops midway, like `line`).
    skipping: bool,
}

impl StdioTransport {
    /// Reads one line into `self.line`; `Ok(false)` at the end of input.
    /// Cancel-safe: a partial line stays in `self.line`.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            if self.skipping {
                // The rest of an oversized line is dropped as it arrives,
                // never held: a line of any length costs one buffer.
                let buffer = self.input.fill_buf().await?;
                let (used, ended) = match buffer.iter().position(|&b| b == b'\n') {
                    Some(newline) => (newline + 1, true),
                    None => (buffer.len(), buffer.is_empty()),
                };
                self.input.consume(used);
                if ended {
                    self.skipping = false;
                    self.reply = Some(json_rpc_error(
                        Value::Null,
                        -32700,
                        &format!("Parse error: message longer than {MAX_STDIO_LINE} bytes"),
                    ));
                    return Ok(true);
                }
                continue;
            }
            let room = (MAX_STDIO_LINE + 1).saturating_sub(self.line.len());
            let read = (&mut self.input)
                .take(room as u64)
                .read_until(b'\n', &mut self.line)
                .await?;
            if read == 0 {
                // The end of input; a last line may lack its newline.
                return Ok(!self.line.is_empty());
            }
            if self.line.last() == Some(&b'\n') {
                return Ok(true);
            }
            if self.line.len() > MAX_STDIO_LINE {
                // Skip the rest of the oversized line, then refuse it.
                self.line = Vec::new();
                self.skipping = true;
            }
        }
    }

    /// Hands the pending error reply, if any, to a task that writes it.
    /// Cancel-safe: the reply stays pending until a task has it.
    async fn flush_reply(&mut self) -> bool {
        if self.reply.is_none() {
            return true;
        }
        let Ok(room) = Arc::clone(&self.replies).acquire_owned().await else {
            return false;
        };
        if let Some(mut reply) = self.reply.take() {
            reply.push(b'\n');
            let output = Arc::clone(&self.output);
            tokio::spawn(async move {
                let _room = room;
                if let Err(error) = write_line(&output, &reply).await {
                    tracing::debug!("cannot write an error reply: {error}");
                }
            });
        }
        true
    }

    /// What to do with a message that parsed: pass it on, or drop it when
    /// it would end a session that has not started.
    fn admit(&mut self, message: &ClientJsonRpcMessage) -> bool {
        if self.started {
            return true;
        }
        match message {
            JsonRpcMessage::Request(request) => {
                self.started = starts_session(&request.request);
                true
            }
            other => {
                let kind = match other {
                    JsonRpcMessage::Notification(_) => "notification",
                    _ => "response",
                };
                tracing::debug!("ignoring a {kind} sent before initialize");
                false
            }
        }
    }

    /// The reply to a line that is not a message, if it needs one.
    fn refuse(body: &[u8], error: &serde_json::Error) -> Option<Vec<u8>> {
        if error.is_syntax() || error.is_eof() {
            tracing::debug!("answering a line that is not JSON: {error}");
            return Some(json_rpc_error(
                Value::Null,
                -32700,
                &format!("Parse error: {error}"),
            ));
        }
        let value: Value = serde_json::from_slice(body).unwrap_or_default();
        let id = value.get("id").cloned();
        if id.is_none() && value.get("method").is_some() {
            tracing::debug!("ignoring a notification this server does not know: {error}");
            return None;
        }
        tracing::debug!("answering a message that is not a valid request: {error}");
        Some(json_rpc_error(
            id.unwrap_or(Value::Null),
            -32600,
            &format!("Invalid request: {error}"),
        ))
    }
}

/// Parses one line as rmcp would, faster for `tools/call`.
///
/// rmcp's `ClientRequest` is an untagged union that tries its requests one
/// after another, and `tools/call` is the fourteenth: each line of a call
/// cost thirteen failed attempts, each formatting an error message. So a line
/// whose keys make it a request (as rmcp tells messages apart: `method` and
/// `id`, no `result` or `error`) and whose method is `tools/call` is read as
/// that request directly. Anything else, and a `tools/call` line that does
/// not read that way, takes rmcp's own path, so every error is rmcp's.
fn parse(body: &[u8]) -> Result<ClientJsonRpcMessage, serde_json::Error> {
    match tool_call(body) {
        Some(call) => Ok(call),
        None => serde_json::from_slice(body),
    }
}

/// `body` read as a `tools/call` request, if its keys and method make it
/// one and it reads as one (see [`parse`]).
fn tool_call(body: &[u8]) -> Option<ClientJsonRpcMessage> {
    let head = serde_json::from_slice::<Head>(body).ok()?;
    if head.method.as_deref() != Some("tools/call") || !head.id || head.result || head.error {
        return None;
    }
    let call = serde_json::from_slice::<JsonRpcRequest<CallToolRequest>>(body).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest::new(
        call.id,
        ClientRequest::from(call.request),
    )))
}

/// The keys of a line that [`parse`] looks at, read without keeping values.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    id: bool,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// A key that is there, whatever its value (`null` too).
fn present<'de, D: Deserializer<'de>>(value: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(value)?;
    Ok(true)
}

/// Whether rmcp leaves its handshake loop for this request: `initialize`,
/// or a 2026-07-28 stateless request whose `_meta` is complete and names a
/// version it supports. (Pings and `server/discover` are answered inside the
/// loop, and so is an incomplete or unsupported request, with an error.)
fn starts_session(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::InitializeRequest(_) => true,
        ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => false,
        other => {
            let meta = other.get_meta();
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta
                    .protocol_version()
                    .is_some_and(|version| ProtocolVersion::KNOWN_VERSIONS.contains(&version))
        }
    }
}

impl rmcp::transport::Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        let output = Arc::clone(&self.output);
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            write_line(&output, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.flush_reply().await {
                return None;
            }
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(error) => {
                    tracing::error!("cannot read stdin: {error}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let body = line.trim_ascii();
            if body.is_empty() {
                continue;
            }
            match parse(body) {
                Ok(message) if self.admit(&message) => return Some(message),
                Ok(_) => {}
                Err(error) => self.reply = Self::refuse(body, &error),
            }
        }
    }

    async fn close(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn json_rpc_error(id: Value, code: i32, message: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What rmcp itself makes of `line`, as JSON (its error as text).
    fn by_rmcp(line: &str) -> Result<Value, String> {
        serde_json::from_str::<ClientJsonRpcMessage>(line)
            .map(|message| serde_json::to_value(message).unwrap_or_default())
            .map_err(|error| error.to_string())
    }

    fn by_parse(line: &str) -> Result<Value, String> {
        parse(line.as_bytes())
            .map(|message| serde_json::to_value(message).unwrap_or_default())
            .map_err(|error| error.to_string())
    }

    #[test]
    fn a_tool_call_reads_as_rmcp_reads_it() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}"#,
            r#"{"id":"x-1","params":{"arguments":{"n":1.5,"deep":{"list":[1,null,"s"]}},"name":"t"},"method":"tools/call","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":3,"io.example/x":{"y":true}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","task":{"ttl":1000}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"t\u00e9"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"extra":1}"#,
        ];
        for line in lines {
            let expected = by_rmcp(line);
            assert!(expected.is_ok(), "rmcp refuses {line}: {expected:?}");
            assert_eq!(by_parse(line), expected, "{line}");
            // Read by the shortcut, not by rmcp's path.
            let Some(JsonRpcMessage::Request(request)) = tool_call(line.as_bytes()) else {
                panic!("{line} is not read as a tool call");
            };
            assert!(
                matches!(request.request, ClientRequest::CallToolRequest(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn other_lines_and_bad_calls_fail_or_pass_as_with_rmcp() {
        let lines = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"error":null}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}"#,
        ];
        for line in lines {
            assert_eq!(by_parse(line), by_rmcp(line), "{line}");
            if by_rmcp(line).is_err() {
                assert!(tool_call(line.as_bytes()).is_none(), "{line}");
            }
        }
    }
}
