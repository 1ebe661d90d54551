//! Call slots and deadlines: every run (a tool call, a resource read, a
//! prompt, a completion) takes one of `max_concurrent_calls` slots and runs
//! on a thread of its own (the [awake](super::awake) call thread or a
//! blocking-pool thread), answered by its deadline even if that thread is
//! stuck in the kernel; at shutdown, running calls get a grace period and
//! are then interrupted.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::ErrorData;
use tokio::sync::oneshot::error::TryRecvError;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::Server;
use crate::limits::STRAGGLE;
use crate::runtime::call::{CallContext, CallError, ClientAsk, Interruption};
use crate::runtime::plugin::{Gate, Plugin};

impl Server {
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
        // An interrupted call ends at once: its future is dropped.
        let cutoff = Instant::now() + Duration::from_secs(2);
        while self.in_flight.load(Ordering::Acquire) > 0 && Instant::now() < cutoff {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Runs `work` in one of the call slots, on a thread of its own, by a
    /// deadline of `timeout_ms` from `accepted` (unless `cx`
    /// has an earlier one). Tool calls, resource reads, prompts and
    /// completions all run this way, so they share the slots and limits.
    pub(super) async fn in_slot<R, F>(
        &self,
        what: &str,
        gate: Option<Gate>,
        timeout_ms: u64,
        accepted: Instant,
        mut cx: CallContext,
        work: impl FnOnce(CallContext) -> F + Send + 'static,
    ) -> Result<R, CallError>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, CallError>>,
    {
        let tool = || what.to_string();
        let deadline = *cx
            .deadline
            .get_or_insert(accepted + Duration::from_millis(timeout_ms));
        cx.cancel.push(self.stopping.clone());
        // The plugin's own cap first: a call waiting for it holds no server-wide slot.
        let _plugin_permit = match gate {
            None => None,
            Some(gate) => Some(tokio::select! {
                biased;
                permit = Arc::clone(&gate.permits).acquire_owned() => permit
                    .map_err(|_| CallError::Cancelled { tool: tool() })?,
                () = cx.cancelled() => return Err(CallError::Cancelled { tool: tool() }),
                () = tokio::time::sleep_until(deadline) => return Err(CallError::PluginBusy {
                    tool: tool(),
                    ms: timeout_ms,
                    plugin: gate.plugin.to_string(),
                    slots: gate.size,
                }),
            }),
        };
        let permit = tokio::select! {
            biased;
            permit = Arc::clone(&self.calls).acquire_owned() => permit
                .map_err(|_| CallError::Cancelled { tool: tool() })?,
            () = cx.cancelled() => return Err(CallError::Cancelled { tool: tool() }),
            () = tokio::time::sleep_until(deadline) => return Err(CallError::Busy {
                tool: tool(),
                ms: timeout_ms,
                slots: self.slots,
            }),
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let _in_flight = InFlight(self.in_flight.clone());
        let _slot = permit;
        // The guest runs on a thread of its own (the awake call thread when
        // it is free, a blocking-pool thread otherwise), where its file
        // operations are done in place: fast, and harmless to the runtime's
        // workers if one blocks in the kernel (a hung disk; FIFOs are never
        // opened). The thread ends the call by its deadline or cancellation
        // (see `Plugin::call`); should it be stuck in a system call, this side
        // answers anyway a moment later, gives the slot back, and tells the
        // thread to stop when the kernel lets it go.
        let stop = CancellationToken::new();
        let _stop = stop.clone().drop_guard();
        cx.cancel.push(stop);
        let watched = cx.clone();
        let runtime = tokio::runtime::Handle::current();
        let (answer, mut answered) = tokio::sync::oneshot::channel();
        let job = move || {
            let _ = answer.send(runtime.block_on(work(cx)));
        };
        if let Err(job) = self.awake.run(job) {
            drop(tokio::task::spawn_blocking(job));
        }
        let failed = || {
            tracing::error!(what, "call task failed");
            Err(CallError::Trap {
                tool: tool(),
                reason: "its task failed inside the server".to_string(),
            })
        };
        // The only call running: wait for its answer awake for a moment,
        // as the thread running it does for the next call, rather than
        // park this worker and be woken for it. Another call coming in
        // ends the wait: the cores are then better spent on the calls.
        let since = std::time::Instant::now();
        while self.in_flight.load(Ordering::Acquire) == 1 {
            match answered.try_recv() {
                Ok(result) => return result,
                Err(TryRecvError::Closed) => return failed(),
                Err(TryRecvError::Empty) => {}
            }
            if since.elapsed() >= AWAIT {
                break;
            }
            // Lets this worker's other tasks run (the next request read,
            // another call started) while it waits.
            tokio::task::yield_now().await;
        }
        tokio::select! {
            biased;
            result = &mut answered => result.unwrap_or_else(|_| failed()),
            () = watched.cancelled() => Err(CallError::Cancelled { tool: tool() }),
            () = tokio::time::sleep_until(deadline + STRAGGLE) => {
                tracing::warn!(what, "a call is stuck in a system call past its deadline");
                Err(CallError::Timeout { tool: tool(), ms: timeout_ms })
            }
        }
    }

    /// Runs `work` for a resource listing or read, a prompt or a
    /// completion on `plugin`: in a call slot, with the plugin's limits,
    /// `client` to ask, and (for the embedded default) the client's roots as
    /// its mounts. A run that fails (a trap, the time limit) is a JSON-RPC
    /// internal error saying so: these requests have no `isError` result.
    pub(super) async fn feature<R, F>(
        &self,
        plugin: &Arc<Plugin>,
        what: &str,
        ct: CancellationToken,
        client: Option<Arc<dyn ClientAsk>>,
        work: impl FnOnce(Arc<Plugin>, CallContext) -> F + Send + 'static,
    ) -> Result<Result<R, Interruption>, ErrorData>
    where
        R: Send + 'static,
        F: Future<Output = Result<R, CallError>>,
    {
        let accepted = Instant::now();
        if self.stopping.is_cancelled() {
            return Err(ErrorData::internal_error(
                "the server is shutting down",
                None,
            ));
        }
        let mut cx = CallContext {
            cancel: vec![ct],
            client,
            ..CallContext::default()
        };
        if self.policy.client_roots {
            cx.mounts = self.client_roots().await;
        }
        let timeout_ms = plugin.limits().timeout_ms;
        let gate = plugin.gate().cloned();
        let owned = plugin.clone();
        match self
            .in_slot(what, gate, timeout_ms, accepted, cx, move |cx| {
                work(owned, cx)
            })
            .await
        {
            Ok(result) => Ok(Ok(result)),
            Err(CallError::Interrupted { interruption, .. }) => Ok(Err(interruption)),
            Err(error) => {
                tracing::debug!(what, "failed: {error}");
                Err(ErrorData::internal_error(error.to_string(), None))
            }
        }
    }
}

/// How long the worker that took the only running call waits for its
/// answer awake before parking: about a small call's run (a `read_file`).
const AWAIT: Duration = Duration::from_micros(200);

/// Counts a call as running until dropped.
struct InFlight(Arc<AtomicUsize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
