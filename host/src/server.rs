//! The MCP server: a hand-written rmcp `ServerHandler` over the [`Toolbox`].
//!
//! [`Server`] lists the enabled tools and routes each `tools/call` to its
//! plugin: it validates the arguments against the tool's input schema, then
//! runs the call (at most `max_concurrent_calls` at once) as a task on the
//! async runtime, with the request's cancellation token and progress token
//! wired to the sandbox. A tool that fails is a result with `isError: true`;
//! an unknown tool is JSON-RPC error -32602. [`serve_stdio`] runs it over stdin/stdout
//! with a line transport of its own, which answers a line that is not JSON
//! with a parse error (-32700) instead of dropping it, and ends when stdin
//! closes.

// MCP logging (`logging/setLevel`, `notifications/message`) is part of the
// 2025-11-25 revision this server implements; rmcp marks it deprecated
// because a later revision drops it.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ServerCapabilities, ServerConfig, SetLevelRequestParams, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Semaphore, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::plugin::{CallContext, CallObserver, LogLevel};
use crate::toolbox::Toolbox;

/// The MCP server over a loaded [`Toolbox`].
///
/// One `Server` serves one MCP session: the log level the client sets with
/// `logging/setLevel` is per session.
#[derive(Clone)]
pub struct Server {
    /// The tools; `None` while the plugins are still loading.
    toolbox: watch::Receiver<Option<Arc<Toolbox>>>,
    calls: Arc<Semaphore>,
    /// Calls running now, across sessions.
    in_flight: Arc<AtomicUsize>,
    /// Fired on shutdown: running calls are interrupted, new ones refused.
    stopping: CancellationToken,
    /// The lowest level sent as `notifications/message` (a [`rank`]); 0
    /// means the client has not asked for log messages.
    log_level: Arc<AtomicU8>,
    /// Fired when the session ends.
    closed: CancellationToken,
}

impl Server {
    /// A server for `toolbox` that runs at most `max_concurrent_calls` calls at once.
    pub fn new(toolbox: Arc<Toolbox>, max_concurrent_calls: usize) -> Server {
        let (_, toolbox) = watch::channel(Some(toolbox));
        Server::with(toolbox, max_concurrent_calls)
    }

    /// A server whose tools are still loading: it answers `initialize` at
    /// once (over stdio and HTTP alike), and requests that need the tools
    /// wait until [`Loading::ready`] is called. If the [`Loading`] is
    /// dropped instead, they fail.
    pub fn loading(max_concurrent_calls: usize) -> (Server, Loading) {
        let (tx, rx) = watch::channel(None);
        (Server::with(rx, max_concurrent_calls), Loading(tx))
    }

    fn with(toolbox: watch::Receiver<Option<Arc<Toolbox>>>, max_concurrent_calls: usize) -> Server {
        let stopping = CancellationToken::new();
        Server {
            toolbox,
            calls: Arc::new(Semaphore::new(max_concurrent_calls.max(1))),
            in_flight: Arc::new(AtomicUsize::new(0)),
            closed: stopping.child_token(),
            stopping,
            log_level: Arc::new(AtomicU8::new(0)),
        }
    }

    /// A server for a new session: the same tools, call slots and shutdown
    /// as this one, with its own log level.
    pub fn session(&self) -> Server {
        Server {
            log_level: Arc::new(AtomicU8::new(0)),
            closed: self.stopping.child_token(),
            ..self.clone()
        }
    }

    /// Shuts down calls: refuses new ones, lets running ones finish for up
    /// to `grace`, then interrupts the rest and waits (briefly) for them.
    pub async fn drain(&self, grace: Duration) {
        let started = Instant::now();
        let running = self.in_flight.load(Ordering::Acquire);
        if running > 0 {
            tracing::info!(running, "waiting for running calls to finish");
        }
        while self.in_flight.load(Ordering::Acquire) > 0 && started.elapsed() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.stopping.cancel();
        // Interrupted guests stop at the next epoch tick.
        let cutoff = Instant::now() + Duration::from_secs(2);
        while self.in_flight.load(Ordering::Acquire) > 0 && Instant::now() < cutoff {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Marks the session as ended: requests held back (cancelled calls,
    /// which get no response) are released.
    pub fn close(&self) {
        self.closed.cancel();
    }

    /// The tools, once loaded.
    async fn toolbox(&self) -> Result<Arc<Toolbox>, ErrorData> {
        let mut toolbox = self.toolbox.clone();
        // Fails only when loading ended without tools (the sender is gone).
        let loaded = toolbox.wait_for(Option::is_some).await.ok();
        loaded
            .and_then(|toolbox| toolbox.clone())
            .ok_or_else(|| ErrorData::internal_error("the plugins failed to load", None))
    }

    /// Runs one call: validation, sandbox, result. Used by `tools/call` and
    /// by `toolcell call`.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        cx: CallContext,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(route) = self.toolbox().await?.get(name).cloned() else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; tools/list shows the tools this server offers"),
                None,
            ));
        };
        if self.stopping.is_cancelled() {
            return Ok(error_result("the server is shutting down".to_string()));
        }
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
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let _in_flight = InFlight(self.in_flight.clone());
        // A task of its own, so that a panic in the host is reported as a
        // failed call, not a request left without an answer.
        let joined =
            tokio::spawn(async move { route.plugin.call(&route.spec, text, &cx).await }).await;
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

/// Hands a [`Server::loading`] server its tools.
pub struct Loading(watch::Sender<Option<Arc<Toolbox>>>);

impl Loading {
    /// The tools are loaded: requests waiting for them go on.
    pub fn ready(self, toolbox: Arc<Toolbox>) {
        self.0.send_replace(Some(toolbox));
    }
}

/// Counts a call as running until dropped.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// What a running call reports, on its way to the client.
enum Report {
    Progress(f64, Option<f64>, Option<String>),
    Log(LogLevel, String),
}

/// Queues a call's reports for the task that sends them as notifications.
struct Reporter {
    tx: mpsc::UnboundedSender<Report>,
    wants_progress: bool,
    log_level: Arc<AtomicU8>,
}

impl CallObserver for Reporter {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if self.wants_progress {
            // The receiver is gone only once the call has finished.
            let _ = self.tx.send(Report::Progress(progress, total, message));
        }
    }

    fn log(&self, level: LogLevel, message: &str) {
        let wanted = self.log_level.load(Ordering::Relaxed);
        if wanted != 0 && rank(mcp_level(level)) >= wanted {
            let _ = self.tx.send(Report::Log(level, message.to_string()));
        }
    }
}

fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// MCP log levels in increasing severity, from 1.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 1,
        LoggingLevel::Info => 2,
        LoggingLevel::Notice => 3,
        LoggingLevel::Warning => 4,
        LoggingLevel::Error => 5,
        LoggingLevel::Critical => 6,
        LoggingLevel::Alert => 7,
        LoggingLevel::Emergency => 8,
    }
}

/// Sends a call's reports as notifications until the call ends.
async fn notify(
    mut reports: mpsc::UnboundedReceiver<Report>,
    peer: rmcp::Peer<RoleServer>,
    progress_token: Option<rmcp::model::ProgressToken>,
    tool: String,
) {
    while let Some(report) = reports.recv().await {
        let sent = match report {
            Report::Progress(progress, total, message) => {
                let Some(token) = progress_token.clone() else {
                    continue;
                };
                let mut param = ProgressNotificationParam::new(token, progress);
                param.total = total;
                param.message = message;
                peer.notify_progress(param).await
            }
            Report::Log(level, message) => {
                let mut param = LoggingMessageNotificationParam::new(
                    mcp_level(level),
                    serde_json::json!({ "tool": tool, "message": message }),
                );
                param.logger = Some("toolcell".to_string());
                peer.notify_logging_message(param).await
            }
        };
        if let Err(error) = sent {
            tracing::debug!("cannot send a notification: {error}");
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
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
            .toolbox()
            .await?
            .routes()
            .iter()
            .map(|route| route.spec.mcp.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let toolbox = self.toolbox.borrow();
        let route = toolbox.as_ref()?.get(name)?;
        Some(route.spec.mcp.clone())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.store(rank(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let progress_token = cx.meta.get_progress_token();
        let mut call = CallContext {
            cancel: vec![cx.ct.clone(), self.stopping.clone()],
            observer: None,
        };
        // Reports become notifications in a task of their own, as the call
        // runs; none is started when the client asked for neither progress
        // nor log messages. (Over Streamable HTTP, rmcp puts progress on the
        // request's stream and log messages on the session's GET stream.)
        let reporter = (progress_token.is_some() || self.log_level.load(Ordering::Relaxed) != 0)
            .then(|| {
                let (tx, rx) = mpsc::unbounded_channel();
                call.observer = Some(Arc::new(Reporter {
                    tx,
                    wants_progress: progress_token.is_some(),
                    log_level: self.log_level.clone(),
                }));
                tokio::spawn(notify(rx, cx.peer.clone(), progress_token, name.clone()))
            });
        let result = self.call(&name, request.arguments, call).await;
        // The call's end closed the channel: once the task has sent what was
        // queued, the response may follow.
        if let Some(reporter) = reporter {
            let _ = reporter.await;
        }
        if cx.ct.is_cancelled() {
            // MCP: a cancelled request gets no response. Hold this one until
            // the session ends; rmcp would otherwise send it.
            tracing::debug!(tool = %name, "call cancelled; no response sent");
            // Bounded, so a long-lived HTTP session does not collect them.
            tokio::select! {
                _ = self.closed.cancelled() => {}
                _ = tokio::time::sleep(Duration::from_secs(300)) => {}
            }
        }
        result.map(CallToolResponse::from)
    }
}

/// Longest line accepted on stdin: a bigger message is refused whole.
const MAX_LINE: usize = 64 * 1024 * 1024;

/// Serves MCP on stdin/stdout until stdin closes.
pub async fn serve_stdio(server: Server) -> Result<()> {
    let (input, output) = rmcp::transport::stdio_pipes();
    let transport = StdioTransport {
        input: BufReader::new(input),
        line: Vec::new(),
        output: Arc::new(tokio::sync::Mutex::new(output)),
    };
    let running = match server.clone().serve(transport).await {
        Ok(running) => running,
        // A client that goes away before the handshake is a normal end.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(during)) => {
            tracing::info!("stdin closed before the session started ({during})");
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    let reason = running.waiting().await;
    tracing::debug!("MCP session ended: {reason:?}");
    server.close();
    Ok(())
}

/// MCP over stdin and stdout, one JSON-RPC message per line.
///
/// Unlike rmcp's own line transport, it answers a line that is not JSON
/// with a parse error (-32700), as JSON-RPC asks, and well-formed JSON that
/// is not a message with an invalid-request error (-32600); notifications it
/// does not know are ignored. Each line is parsed once, and when stdin and
/// stdout are pipes (as MCP clients start servers) they are read and written
/// on the runtime's reactor, not through blocking threads.
struct StdioTransport {
    input: BufReader<rmcp::transport::StdioReader>,
    /// The line being read; it survives a `receive` that rmcp drops midway.
    line: Vec<u8>,
    output: Arc<tokio::sync::Mutex<rmcp::transport::StdioWriter>>,
}

impl StdioTransport {
    /// Reads one line into `self.line`; `Ok(false)` at the end of input.
    /// Cancel-safe: a partial line stays in `self.line`.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let room = (MAX_LINE + 1).saturating_sub(self.line.len());
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
            if self.line.len() > MAX_LINE {
                // Skip the rest of the oversized line, then refuse it.
                let mut rest = Vec::new();
                self.input.read_until(b'\n', &mut rest).await?;
                self.line.clear();
                self.reply(json_rpc_error(
                    Value::Null,
                    -32700,
                    &format!("Parse error: message longer than {MAX_LINE} bytes"),
                ))
                .await?;
            }
        }
    }

    async fn reply(&self, message: Vec<u8>) -> std::io::Result<()> {
        write_line(&self.output, message).await
    }
}

async fn write_line(
    output: &tokio::sync::Mutex<rmcp::transport::StdioWriter>,
    mut message: Vec<u8>,
) -> std::io::Result<()> {
    message.push(b'\n');
    let mut output = output.lock().await;
    output.write_all(&message).await?;
    output.flush().await
}

impl rmcp::transport::Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + 'static {
        let output = Arc::clone(&self.output);
        async move {
            let message = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&output, message).await
        }
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleServer>> {
        loop {
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
            let error = match serde_json::from_slice(body) {
                Ok(message) => return Some(message),
                Err(error) => error,
            };
            let reply = if error.is_syntax() || error.is_eof() {
                tracing::debug!("answering a line that is not JSON: {error}");
                json_rpc_error(Value::Null, -32700, &format!("Parse error: {error}"))
            } else {
                let value: Value = serde_json::from_slice(body).unwrap_or_default();
                let id = value.get("id").cloned();
                if id.is_none() && value.get("method").is_some() {
                    tracing::debug!("ignoring a notification this server does not know: {error}");
                    continue;
                }
                tracing::debug!("answering a message that is not a valid request: {error}");
                json_rpc_error(
                    id.unwrap_or(Value::Null),
                    -32600,
                    &format!("Invalid request: {error}"),
                )
            };
            if let Err(error) = self.reply(reply).await {
                tracing::error!("cannot write stdout: {error}");
                return None;
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
