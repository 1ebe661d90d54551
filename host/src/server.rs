//! The MCP server: a hand-written rmcp `ServerHandler` over the [`Toolbox`].
//!
//! [`Server`] lists the enabled tools and routes each `tools/call` to its
//! plugin: it validates the arguments against the tool's input schema, then
//! runs the call on a blocking thread (bounded by `max_concurrent_calls`)
//! with the request's cancellation token and progress token wired to the
//! sandbox. A tool that fails is a result with `isError: true`; an unknown
//! tool is JSON-RPC error -32602. [`serve_stdio`] runs it over stdin/stdout,
//! answering a line that is not JSON with a parse error (-32700) instead of
//! dropping it, and ends when stdin closes.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use anyhow::Result;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc};

use crate::plugin::{CallContext, CallObserver};
use crate::toolbox::Toolbox;

/// The MCP server over a loaded [`Toolbox`].
#[derive(Clone)]
pub struct Server {
    toolbox: Arc<Toolbox>,
    calls: Arc<Semaphore>,
}

impl Server {
    /// A server for `toolbox` that runs at most `max_concurrent_calls` calls at once.
    pub fn new(toolbox: Arc<Toolbox>, max_concurrent_calls: usize) -> Server {
        Server {
            toolbox,
            calls: Arc::new(Semaphore::new(max_concurrent_calls.max(1))),
        }
    }

    /// Runs one call: validation, sandbox, result. Used by `tools/call` and
    /// by `toolcell call`.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        cx: CallContext,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(route) = self.toolbox.get(name).cloned() else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; tools/list shows the tools this server offers"),
                None,
            ));
        };
        let arguments = Value::Object(arguments.unwrap_or_default());
        if let Err(message) = route.spec.validate(&arguments) {
            return Ok(error_result(message));
        }
        let _permit = self
            .calls
            .acquire()
            .await
            .map_err(|_| ErrorData::internal_error("the server is shutting down", None))?;
        let text = arguments.to_string();
        let joined =
            tokio::task::spawn_blocking(move || route.plugin.call(&route.spec, text, &cx)).await;
        Ok(match joined {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => error_result(error.to_string()),
            Err(join) => {
                tracing::error!(tool = name, "call task failed: {join}");
                error_result(format!("`{name}` failed inside the server; see its log"))
            }
        })
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Forwards a call's progress reports as `notifications/progress`.
struct ProgressForwarder {
    tx: mpsc::UnboundedSender<(f64, Option<f64>, Option<String>)>,
}

impl CallObserver for ProgressForwarder {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        // The receiver is gone only once the call has finished.
        let _ = self.tx.send((progress, total, message));
    }

    fn log(&self, _level: crate::plugin::LogLevel, _message: &str) {}
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("toolcell", env!("CARGO_PKG_VERSION")).with_title("Toolcell"),
            )
            .with_instructions(
                "Tools run in sandboxes that can reach only the directories, environment \
                 variables and hosts this server's configuration grants. Paths are absolute, or \
                 relative to the first granted directory.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = self
            .toolbox
            .routes()
            .iter()
            .map(|route| route.spec.mcp.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.toolbox.get(name).map(|route| route.spec.mcp.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = CallContext::default();

        let cancelled = call.cancelled.clone();
        let ct = cx.ct.clone();
        let watcher = tokio::spawn(async move {
            ct.cancelled().await;
            cancelled.store(true, Ordering::Relaxed);
        });

        let mut call = call;
        let mut forwarder = None;
        if let Some(token) = cx.meta.get_progress_token() {
            let (tx, mut rx) = mpsc::unbounded_channel();
            call.observer = Some(Arc::new(ProgressForwarder { tx }));
            let peer = cx.peer.clone();
            forwarder = Some(tokio::spawn(async move {
                while let Some((progress, total, message)) = rx.recv().await {
                    let mut param = ProgressNotificationParam::new(token.clone(), progress);
                    param.total = total;
                    param.message = message;
                    if let Err(error) = peer.notify_progress(param).await {
                        tracing::debug!("cannot send progress: {error}");
                    }
                }
            }));
        }

        let result = self.call(&request.name, request.arguments, call).await;
        watcher.abort();
        if let Some(forwarder) = forwarder {
            // Every sender is gone with the call: let queued reports go out
            // before the response.
            let _ = forwarder.await;
        }
        result.map(CallToolResponse::from)
    }
}

/// Longest line accepted on stdin: a bigger message is refused whole.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// Serves MCP on stdin/stdout until stdin closes.
///
/// rmcp ignores lines that are not JSON; JSON-RPC asks for a parse error, so
/// stdin passes through a filter that answers those itself. Both rmcp's
/// output and those answers go through one writer, a whole line at a time.
pub async fn serve_stdio(server: Server) -> Result<()> {
    let (mut to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (errors_tx, mut errors_rx) = mpsc::unbounded_channel::<Vec<u8>>();

    let reader = tokio::spawn(async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut stdin)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await;
            match read {
                Ok(0) => break,
                Ok(_) => {}
                Err(error) => {
                    tracing::error!("cannot read stdin: {error}");
                    break;
                }
            }
            if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
                // Skip the rest of the oversized line.
                let mut rest = Vec::new();
                if stdin.read_until(b'\n', &mut rest).await.is_err() {
                    break;
                }
                let _ = errors_tx.send(parse_error(&format!(
                    "message longer than {MAX_LINE} bytes"
                )));
                continue;
            }
            let body = line.trim_ascii();
            if body.is_empty() {
                continue;
            }
            if let Err(error) = serde_json::from_slice::<serde::de::IgnoredAny>(body)
                && (error.is_syntax() || error.is_eof())
            {
                tracing::debug!("answering a line that is not JSON: {error}");
                let _ = errors_tx.send(parse_error(&error.to_string()));
                continue;
            }
            if to_rmcp.write_all(body).await.is_err() || to_rmcp.write_all(b"\n").await.is_err() {
                break;
            }
        }
        // Dropping `to_rmcp` closes rmcp's input: the service stops.
    });

    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        let mut rmcp_open = true;
        let mut errors_open = true;
        loop {
            let message = tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => match read {
                    Ok(0) | Err(_) => {
                        rmcp_open = false;
                        continue;
                    }
                    Ok(_) => std::mem::take(&mut line),
                },
                message = errors_rx.recv(), if errors_open => match message {
                    Some(message) => message,
                    None => {
                        errors_open = false;
                        continue;
                    }
                },
                else => return,
            };
            if stdout.write_all(&message).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    });

    let running = server.serve((rmcp_in, rmcp_out)).await?;
    let reason = running.waiting().await;
    tracing::debug!("MCP session ended: {reason:?}");
    reader.abort();
    let _ = writer.await;
    Ok(())
}

fn parse_error(detail: &str) -> Vec<u8> {
    let mut message = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": -32700, "message": format!("Parse error: {detail}") },
    }))
    .unwrap_or_default();
    message.push(b'\n');
    message
}
