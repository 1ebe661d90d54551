//! The call API: what the protocol layer hands a run ([`CallContext`]:
//! cancellation, deadline, mounts, an observer of its reports, who answers
//! its questions to the client) and how a run that produced no result
//! failed ([`CallError`], with a message the model can act on).

use std::sync::Arc;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::Mount;
use crate::runtime::contract::client;
pub use crate::runtime::contract::host::LogLevel;

/// Receives what a running call reports: progress and log lines.
pub trait CallObserver: Send + Sync {
    /// A progress report; `progress` has already been checked to increase.
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>);
    /// A log line from the plugin (it is also sent to `tracing`).
    fn log(&self, level: LogLevel, message: &str);
}

/// Asks the MCP client on a run's behalf: contract 0.2.0's `client`
/// interface. The server implements it for each request: by asking a
/// 2025-11-25 session's client, or from the answers a 2026-07-28 request
/// carries.
#[async_trait::async_trait]
pub trait ClientAsk: Send + Sync {
    /// What the client declared it can answer.
    fn capabilities(&self) -> client::ClientCapabilities;
    /// Answers `questions` (keys and questions), in order; or stops the run
    /// ([`Interruption`]) when the answers must come from a retry.
    async fn ask(
        &self,
        questions: Vec<(String, client::Question)>,
    ) -> Result<Result<Vec<client::Reply>, client::ClientError>, Interruption>;
}

/// Why a run stopped to wait for the client.
#[derive(Debug, thiserror::Error)]
pub enum Interruption {
    /// It asked questions (2026-07-28) its request carries no answers to:
    /// the client is to answer them and send the request again.
    #[error("the run needs {} answer(s) from the client", .0.len())]
    Input(Vec<(String, client::Question)>),
    /// It asked for something the client did not declare (2026-07-28).
    #[error("the client did not declare the `{0}` capability this needs")]
    MissingCapability(&'static str),
}

/// What a call gets besides its arguments.
#[derive(Clone, Default)]
pub struct CallContext {
    /// The call stops as soon as any of these is cancelled: the client's
    /// cancellation of the request, the server's shutdown.
    pub cancel: Vec<CancellationToken>,
    /// When the call must have ended; default: its `timeout_ms` from when it
    /// starts. The server sets it when it accepts the call, so time spent
    /// waiting for a free slot counts too.
    pub deadline: Option<Instant>,
    /// The directories the call sees instead of its tool's configured
    /// mounts (the client's roots, for the embedded default).
    pub mounts: Option<Arc<[Mount]>>,
    /// Where progress and log lines go, if anywhere.
    pub observer: Option<Arc<dyn CallObserver>>,
    /// Who answers the plugin's questions to the client, if anyone.
    pub client: Option<Arc<dyn ClientAsk>>,
}

impl CallContext {
    /// Whether any of the tokens has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.iter().any(CancellationToken::is_cancelled)
    }

    /// Whether the call has ended: cancelled, or past its deadline. Host
    /// functions that loop (`stat-paths`, listings) check it between steps,
    /// so that their work stops with the call, not after it.
    pub fn is_over(&self) -> bool {
        self.is_cancelled()
            || self
                .deadline
                .is_some_and(|deadline| Instant::now() >= deadline)
    }

    /// Resolves once any of the tokens is cancelled; never if there are none.
    pub async fn cancelled(&self) {
        if self.cancel.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.cancel.iter().map(|token| Box::pin(token.cancelled()));
        futures_util::future::select_all(waits).await;
    }
}

/// Why a call produced no result from the plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// The run stopped to wait for the client (2026-07-28).
    #[error("`{tool}` stopped: {interruption}")]
    Interrupted {
        /// The tool.
        tool: String,
        /// Why.
        interruption: Interruption,
    },
    /// The call ran past its deadline.
    #[error("`{tool}` timed out after {ms} ms and was stopped")]
    Timeout {
        /// The tool.
        tool: String,
        /// The limit.
        ms: u64,
    },
    /// Every call slot stayed busy until the deadline.
    #[error(
        "`{tool}` did not start within its limit of {ms} ms: all {slots} call slots \
         (max_concurrent_calls) stayed busy; try again later"
    )]
    Busy {
        /// The tool.
        tool: String,
        /// The limit.
        ms: u64,
        /// How many calls may run at once.
        slots: usize,
    },
    /// The plugin's own slots stayed busy until the deadline.
    #[error(
        "`{tool}` did not start within its limit of {ms} ms: plugin `{plugin}` runs at most \
         {slots} calls at once (its max_concurrent_calls) and they stayed busy; try again later"
    )]
    PluginBusy {
        /// The tool.
        tool: String,
        /// The limit.
        ms: u64,
        /// The plugin.
        plugin: String,
        /// How many of its calls may run at once.
        slots: usize,
    },
    /// The client cancelled the call.
    #[error("`{tool}` was cancelled")]
    Cancelled {
        /// The tool.
        tool: String,
    },
    /// The guest held more handles (files, directories, streams) at once
    /// than a call may.
    #[error(
        "`{tool}` was stopped: it held more than {max} open handles (files, directories, \
         streams) at once, the limit per call; work on fewer files at a time"
    )]
    TooManyHandles {
        /// The tool.
        tool: String,
        /// The limit.
        max: usize,
    },
    /// The guest tried to grow its memory past the limit.
    #[error("`{tool}` ran out of memory: it tried to use more than its limit of {mb} MiB")]
    OutOfMemory {
        /// The tool.
        tool: String,
        /// The limit.
        mb: u64,
    },
    /// The guest trapped (a panic, a stack overflow, an invalid operation).
    #[error("`{tool}` crashed ({reason}); see the server log for details")]
    Trap {
        /// The tool.
        tool: String,
        /// A short reason.
        reason: String,
    },
    /// The plugin returned something the host cannot pass on.
    #[error("`{tool}` returned an invalid result: {reason}")]
    InvalidResult {
        /// The tool.
        tool: String,
        /// What was wrong.
        reason: String,
    },
    /// The sandbox could not be set up.
    #[error("`{tool}` could not be started: {reason}")]
    Setup {
        /// The tool.
        tool: String,
        /// What went wrong.
        reason: String,
    },
}
