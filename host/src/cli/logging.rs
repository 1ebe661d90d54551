//! Logging to stderr (stdout belongs to MCP), with one event of rmcp's
//! dropped: see [`DrainNoise`].

use std::io::IsTerminal;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata};
use tracing_subscriber::filter::{FilterExt, LevelFilter};
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Logs to stderr at `level` (`RUST_LOG`, when set, takes precedence).
pub fn init_logging(level: &str) {
    // rmcp logs every session event at info, and every error response (a
    // client's mistake) at warn; keep those for debug levels.
    let directives = match level {
        "info" | "warn" | "error" => format!("{level},rmcp=error"),
        _ => level.to_string(),
    };
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(directives))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .with_filter(filter.and(DrainNoise));
    tracing_subscriber::registry().with(stderr).init();
}

/// What rmcp 3.9 logs at ERROR when a 2026-07-28 client that cancelled a
/// request has already dropped the stream its answer would go to.
const DRAIN_MESSAGE: &str = "failed to send pending response during drain";

/// Drops rmcp's [`DRAIN_MESSAGE`]. When a client cancels a request over
/// HTTP, rmcp cancels the handler and then, draining, sends the handler's
/// last answer into the stream the client closed; that send can only fail
/// because the client is gone, which is the normal end of a cancellation,
/// not an error. Every other rmcp event passes.
struct DrainNoise;

impl<S> Filter<S> for DrainNoise {
    fn enabled(&self, _: &Metadata<'_>, _: &Context<'_, S>) -> bool {
        true
    }

    /// Everything passes, so this filter leaves the level to the other one.
    /// Without a hint here, the pair would have none, and `init` would let
    /// every `log` record of every level through to tracing: Cranelift's
    /// trace records then cost more than compiling (measured: 332 s of CPU
    /// for the python and js components in a debug build).
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::TRACE)
    }

    fn event_enabled(&self, event: &Event<'_>, _: &Context<'_, S>) -> bool {
        let metadata = event.metadata();
        if *metadata.level() != Level::ERROR || !metadata.target().starts_with("rmcp") {
            return true;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        !is_drain_noise(metadata.target(), &message.0)
    }
}

/// Whether an event of `target` saying `message` is rmcp's drain noise.
fn is_drain_noise(target: &str, message: &str) -> bool {
    target.starts_with("rmcp") && message == DRAIN_MESSAGE
}

/// An event's `message` field, as written.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::fmt::MakeWriter;

    /// A writer that keeps what is logged.
    #[derive(Clone, Default)]
    struct Kept(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Kept {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .expect("not poisoned")
                .extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Kept {
        type Writer = Kept;
        fn make_writer(&'a self) -> Kept {
            self.clone()
        }
    }

    #[test]
    fn only_the_drain_message_of_rmcp_is_dropped() {
        let kept = Kept::default();
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(kept.clone())
            .with_filter(EnvFilter::new("info").and(DrainNoise));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            let error = "channel closed";
            tracing::error!(target: "rmcp::service", %error, "failed to send pending response during drain");
            tracing::error!(target: "rmcp::service", %error, "failed to send a response");
            tracing::error!(target: "toolcell", "failed to send pending response during drain");
            tracing::info!(target: "toolcell", "still here");
        });
        let text = String::from_utf8(kept.0.lock().expect("not poisoned").clone()).expect("utf-8");
        assert_eq!(text.matches("during drain").count(), 1, "{text}");
        assert!(text.contains("failed to send a response"), "{text}");
        assert!(text.contains("still here"), "{text}");
        assert!(is_drain_noise("rmcp::service", DRAIN_MESSAGE));
        assert!(!is_drain_noise("toolcell", DRAIN_MESSAGE));
    }
}
