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
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::{RoleServer, ServiceExt};
use serde_json::Value;
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
            match serde_json::from_slice::<ClientJsonRpcMessage>(body) {
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
