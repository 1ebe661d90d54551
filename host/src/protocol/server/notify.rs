//! What a running call reports, on its way to the client: progress as
//! `notifications/progress` (at most one per [`PROGRESS_INTERVAL`], the last
//! always sent) and log lines as `notifications/message` at or above the
//! level the client set.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::limits::{PROGRESS_INTERVAL, QUEUED_REPORTS};
use crate::runtime::call::{CallObserver, LogLevel};

/// Starts sending a call's reports to the client of `peer` as they come:
/// progress if the request carried `progress_token`, log lines at or above
/// `log_level` (0: none). Returns the call's observer and the task, which
/// ends, having sent everything, once the call has ended and the observer is
/// dropped; `None` when the client asked for neither.
pub(super) fn start(
    peer: &Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    log_level: &Arc<AtomicU8>,
    tool: &str,
) -> Option<(Arc<dyn CallObserver>, JoinHandle<()>)> {
    if progress_token.is_none() && log_level.load(Ordering::Relaxed) == 0 {
        return None;
    }
    let (tx, rx) = mpsc::channel(QUEUED_REPORTS);
    let latest = Arc::new(Mutex::new(None));
    let observer = Arc::new(Reporter {
        tx,
        latest: Arc::clone(&latest),
        wants_progress: progress_token.is_some(),
        log_level: log_level.clone(),
    });
    let task = tokio::spawn(notify(
        rx,
        latest,
        peer.clone(),
        progress_token,
        tool.to_string(),
    ));
    Some((observer, task))
}

/// What a running call reports, on its way to the client.
enum Report {
    /// A new progress value is in [`Reporter::latest`].
    Progress,
    Log(LogLevel, String),
}

/// A progress report: progress, total, message.
type Progress = (f64, Option<f64>, Option<String>);

/// Queues a call's reports for the task that sends them as notifications.
/// Only the latest progress is kept, so a plugin that reports in a tight
/// loop costs a slot, not a queue.
struct Reporter {
    tx: mpsc::Sender<Report>,
    latest: Arc<Mutex<Option<Progress>>>,
    wants_progress: bool,
    log_level: Arc<AtomicU8>,
}

impl CallObserver for Reporter {
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if self.wants_progress {
            let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
            let wake = latest.is_none();
            *latest = Some((progress, total, message));
            if wake {
                // Full or closed: the sender finds the value anyway.
                let _ = self.tx.try_send(Report::Progress);
            }
        }
    }

    fn log(&self, level: LogLevel, message: &str) {
        let wanted = self.log_level.load(Ordering::Relaxed);
        if wanted != 0 && rank(mcp_level(level)) >= wanted {
            let _ = self.tx.try_send(Report::Log(level, message.to_string()));
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
pub(super) fn rank(level: LoggingLevel) -> u8 {
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

/// Sends a call's reports as notifications until the call ends: log
/// messages as they come, progress at most once per [`PROGRESS_INTERVAL`],
/// and the last progress report at the end.
async fn notify(
    mut reports: mpsc::Receiver<Report>,
    latest: Arc<Mutex<Option<Progress>>>,
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    tool: String,
) {
    let send_progress = async |peer: &Peer<RoleServer>| {
        let taken = latest.lock().unwrap_or_else(PoisonError::into_inner).take();
        let (Some((progress, total, message)), Some(token)) = (taken, progress_token.clone())
        else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, progress);
        param.total = total;
        param.message = message;
        if let Err(error) = peer.notify_progress(param).await {
            tracing::debug!("cannot send a progress notification: {error}");
        }
    };
    let mut next_progress = Instant::now();
    let mut held = false;
    loop {
        let report = if held {
            tokio::select! {
                report = reports.recv() => report,
                () = tokio::time::sleep_until(next_progress) => {
                    send_progress(&peer).await;
                    next_progress = Instant::now() + PROGRESS_INTERVAL;
                    held = false;
                    continue;
                }
            }
        } else {
            reports.recv().await
        };
        match report {
            None => break,
            Some(Report::Progress) if Instant::now() >= next_progress => {
                send_progress(&peer).await;
                next_progress = Instant::now() + PROGRESS_INTERVAL;
            }
            Some(Report::Progress) => held = true,
            Some(Report::Log(level, message)) => {
                let mut param = LoggingMessageNotificationParam::new(
                    mcp_level(level),
                    serde_json::json!({ "tool": tool, "message": message }),
                );
                param.logger = Some("toolcell".to_string());
                if let Err(error) = peer.notify_logging_message(param).await {
                    tracing::debug!("cannot send a log notification: {error}");
                }
            }
        }
    }
    send_progress(&peer).await;
}
