//! `tools/call`: the tool's arguments checked against its schema, the
//! client's roots as its folders where the policy says so, a run in a call
//! slot, and its result converted, with progress and log lines sent as it
//! runs.

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio::time::Instant;

use super::{Server, notify};
use crate::protocol::mcp::{self, error_result};
use crate::runtime::call::{CallContext, CallError, Interruption};

impl Server {
    /// Runs one call: validation, a slot, the sandbox, the result. Used by
    /// `toolcell call`; `tools/call` goes through `Server::run_call`. The
    /// call's deadline starts now, so time spent waiting for a slot counts
    /// against its `timeout_ms`.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        cx: CallContext,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.run_call(name, arguments, cx).await? {
            Ok(result) => result,
            Err(interruption) => error_result(format!("`{name}` stopped: {interruption}")),
        })
    }

    /// [`Server::call`], or why the run stopped to wait for the client.
    async fn run_call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        mut cx: CallContext,
    ) -> Result<Result<CallToolResult, Interruption>, ErrorData> {
        let accepted = Instant::now();
        let toolbox = self.toolbox().await?;
        let Some(route) = toolbox.get(name).cloned() else {
            let message = toolbox
                .why_disabled(&self.policy.categories, name)
                .unwrap_or_else(|| {
                    format!("unknown tool `{name}`; tools/list shows the tools this server offers")
                });
            tracing::debug!(tool = name, "refused a call: {message}");
            return Err(ErrorData::invalid_params(message, None));
        };
        if self.stopping.is_cancelled() {
            return Ok(Ok(error_result("the server is shutting down".to_string())));
        }
        let mut arguments = Value::Object(arguments.unwrap_or_default());
        if let Err(message) = route.spec.validate(&mut arguments) {
            tracing::debug!(tool = name, "refused a call: {message}");
            return Ok(Ok(error_result(message)));
        }
        if self.policy.client_roots {
            cx.mounts = self.client_roots().await;
        }
        let mounts = cx.mounts.as_deref().unwrap_or(&route.spec.mounts);
        if mounts.is_empty() && self.policy.unmounted_reason.is_some() {
            return Ok(Ok(error_result(self.policy.no_folder(name))));
        }
        let text = arguments.to_string();
        let plugin = route.plugin.clone();
        let gate = plugin.gate().cloned();
        let spec = route.spec.clone();
        // Converted on the call's own thread, like the run itself.
        let work = move |cx: CallContext| async move {
            let result = plugin.call(&spec, text, &cx).await?;
            mcp::tool_result(result, spec.limits.max_output_bytes).map_err(|reason| {
                CallError::InvalidResult {
                    tool: spec.name.clone(),
                    reason,
                }
            })
        };
        let timeout_ms = route.spec.limits.timeout_ms;
        Ok(
            match self
                .in_slot(name, gate, timeout_ms, accepted, cx, work)
                .await
            {
                Ok(result) => Ok(result),
                Err(CallError::Interrupted { interruption, .. }) => Err(interruption),
                Err(error) => {
                    tracing::debug!(tool = name, "call failed: {error}");
                    Ok(error_result(error.to_string()))
                }
            },
        )
    }

    /// Answers `tools/call`.
    pub(super) async fn call_tool_now(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let asker = self.asker(
            &cx,
            ("tools/call", &name),
            || Value::Object(request.arguments.clone().unwrap_or_default()),
            request.request_state.as_deref(),
            request.input_responses,
        )?;
        let mut call = CallContext {
            cancel: vec![cx.ct.clone()],
            client: Some(asker.client()),
            ..CallContext::default()
        };
        // Reports become notifications in a task of their own, as the call
        // runs. (Over Streamable HTTP, rmcp puts progress on the request's
        // stream and log messages on the session's GET stream.)
        let progress_token = cx.meta.get_progress_token();
        let reporter = notify::start(&cx.peer, progress_token, &self.log_level, &name);
        let sending = reporter.map(|(observer, task)| {
            call.observer = Some(observer);
            task
        });
        let result = self.run_call(&name, request.arguments, call).await;
        // The call's end dropped the observer: once the task has sent what
        // was queued, the response may follow. (A cancelled request's
        // response is dropped by rmcp, as MCP asks.)
        if let Some(sending) = sending {
            let _ = sending.await;
        }
        asker.settle(&self.state_key, result?.map(Ok))
    }
}
