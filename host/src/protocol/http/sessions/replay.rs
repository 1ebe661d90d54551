//! The logs of SSE streams that [`super::Sessions`] keeps for resumption:
//! a [`Log`] per stream, the [`Registry`] of every session's logs, the
//! server-wide [`Budget`] of bytes they share, and [`read`], the reader task
//! that forwards a log to a connection (the bounds are in the parent
//! module's documentation).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::transport::common::server_side_http::session_id as random_id;
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};

use super::{Activity, Connected, READER_BUFFER, RETRY, lock, mib};
use crate::limits::{DEFAULT_REPLAY_BUDGET_MB, KEEP_ENDED, MAX_ENDED, MAX_EVENTS};

/// The logs of every session.
pub(super) struct Registry {
    pub(super) sessions: Mutex<HashMap<SessionId, SessionLogs>>,
    /// What every log's events may add up to.
    pub(super) budget: Arc<Budget>,
    /// [`KEEP_ENDED`], but for tests.
    pub(super) keep_ended: Duration,
    /// [`MAX_ENDED`], but for tests.
    pub(super) max_ended: usize,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new(mib(DEFAULT_REPLAY_BUDGET_MB))
    }
}

/// The bytes of JSON the logs hold, server-wide, and how many they may.
pub(super) struct Budget {
    pub(super) limit: usize,
    pub(super) used: AtomicUsize,
}

impl Budget {
    pub(super) fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    pub(super) fn over(&self) -> bool {
        self.used.load(Ordering::Acquire) > self.limit
    }
}

#[derive(Default)]
pub(super) struct SessionLogs {
    /// When the client was last active; whether a stream is connected.
    pub(super) activity: Arc<Activity>,
    pub(super) logs: HashMap<Arc<str>, Arc<Log>>,
    /// Logs whose stream has ended, oldest first: when each is to go, and
    /// its key.
    pub(super) ended: VecDeque<(Instant, Arc<str>)>,
    /// A task is waiting to drop the `ended` logs whose time has come.
    pub(super) sweeping: bool,
    /// The log of the session's `GET` stream, once a client has opened it.
    /// The async lock keeps two first `GET`s from both opening rmcp's stream.
    pub(super) standalone: Arc<tokio::sync::Mutex<Option<Arc<Log>>>>,
}

impl Registry {
    pub(super) fn new(replay_budget: usize) -> Registry {
        Registry {
            sessions: Mutex::default(),
            budget: Budget::new(replay_budget),
            keep_ended: KEEP_ENDED,
            max_ended: MAX_ENDED,
        }
    }

    /// Brings the logs back within the budget after `growing` took more:
    /// the logs of ended streams go first, the oldest whatever their
    /// session; then `growing` drops its oldest events, down to its last.
    pub(super) fn keep_to_budget(&self, growing: &Log) {
        while self.budget.over() {
            if !self.drop_oldest_ended() && !growing.drop_oldest() {
                return;
            }
        }
    }

    /// Drops the log of the stream that ended first, of any session;
    /// `false` if no ended stream is kept.
    pub(super) fn drop_oldest_ended(&self) -> bool {
        let dropped = {
            let mut sessions = lock(&self.sessions);
            let oldest = sessions
                .iter()
                .filter_map(|(id, session)| session.ended.front().map(|(due, _)| (*due, id)))
                .min_by_key(|(due, _)| *due)
                .map(|(_, id)| id.clone());
            let Some(session) = oldest.and_then(|id| sessions.get_mut(&id)) else {
                return false;
            };
            let key = session.ended.pop_front().map(|(_, key)| key);
            key.and_then(|key| session.logs.remove(&key))
        };
        if let Some(log) = dropped {
            tracing::debug!(stream = %log.key, "the replay budget is spent: an ended stream's log goes");
        }
        true
    }

    /// A log for `source`, one of session `id`'s streams, filled by a task
    /// of its own.
    pub(super) fn open(
        self: &Arc<Registry>,
        id: &SessionId,
        source: impl Stream<Item = ServerSseMessage> + Send + 'static,
    ) -> Arc<Log> {
        let log = Log::new(MAX_EVENTS, self.budget.clone());
        // A session that has just ended gets no entry back: its stream still
        // works, but cannot be resumed.
        if let Some(session) = lock(&self.sessions).get_mut(id) {
            session.logs.insert(log.key.clone(), log.clone());
        }
        tokio::spawn(pump(log.clone(), source, self.clone(), id.clone()));
        log
    }

    /// Notes that a log's stream has ended: the log goes after
    /// [`KEEP_ENDED`], or sooner if more than [`MAX_ENDED`] have ended since.
    pub(super) fn ended(self: &Arc<Registry>, id: &SessionId, key: Arc<str>) {
        let mut sessions = lock(&self.sessions);
        let Some(session) = sessions.get_mut(id) else {
            return;
        };
        session
            .ended
            .push_back((Instant::now() + self.keep_ended, key));
        while session.ended.len() > self.max_ended {
            if let Some((_, oldest)) = session.ended.pop_front() {
                session.logs.remove(&oldest);
            }
        }
        if !session.sweeping {
            session.sweeping = true;
            tokio::spawn(sweep(self.clone(), id.clone()));
        }
    }
}

/// Drops session `id`'s ended logs as their time comes; returns when none
/// is left, or the session has ended. One task per session at most, rather
/// than one waiting per stream.
async fn sweep(registry: Arc<Registry>, id: SessionId) {
    loop {
        let next = {
            let mut sessions = lock(&registry.sessions);
            let Some(session) = sessions.get_mut(&id) else {
                return;
            };
            let now = Instant::now();
            while let Some((due, _)) = session.ended.front()
                && *due <= now
            {
                if let Some((_, key)) = session.ended.pop_front() {
                    session.logs.remove(&key);
                }
            }
            match session.ended.front() {
                Some((due, _)) => *due,
                None => {
                    session.sweeping = false;
                    return;
                }
            }
        };
        tokio::time::sleep_until(next).await;
    }
}

/// Moves what rmcp sends on one stream into `log` until the stream ends.
async fn pump(
    log: Arc<Log>,
    source: impl Stream<Item = ServerSseMessage> + Send,
    registry: Arc<Registry>,
    session: SessionId,
) {
    let mut source = std::pin::pin!(source);
    while let Some(event) = source.next().await {
        // An event without a message is a priming event; readers send their own.
        if event.message.is_some() {
            log.push(event);
            registry.keep_to_budget(&log);
        }
    }
    log.end();
    tracing::debug!(stream = %log.key, "SSE stream ended; its log is kept for resumption");
    registry.ended(&session, log.key.clone());
}

/// A connection's view of `log`: a priming event, then the log's events from
/// number `from` on (by default, from the first one no connection has taken),
/// until the stream ends. A later reader of the same log replaces this one,
/// which then gets nothing more (MCP sends each message on one stream only)
/// but stays open until the stream ends.
///
/// `connected`, held until the connection goes, keeps the session from
/// expiring meanwhile.
pub(super) fn read(
    log: Arc<Log>,
    from: Option<u64>,
    connected: Option<Connected>,
) -> ReceiverStream<ServerSseMessage> {
    let (reader, mut next) = log.attach(from);
    let (tx, rx) = mpsc::channel(READER_BUFFER);
    tokio::spawn(async move {
        let _connected = connected;
        let mut changed = log.changed.subscribe();
        if tx
            .send(ServerSseMessage::priming(log.id(next), RETRY))
            .await
            .is_err()
        {
            return;
        }
        loop {
            match log.next(reader, &mut next) {
                Next::Event(event) => {
                    if tx.send(event).await.is_err() {
                        return;
                    }
                }
                Next::End => return,
                Next::Wait => {
                    tokio::select! {
                        changed = changed.changed() => if changed.is_err() { return },
                        () = tx.closed() => return,
                    }
                }
            }
        }
    });
    ReceiverStream::new(rx)
}

/// The events of one SSE stream, numbered from 0, and which reader gets them.
pub(super) struct Log {
    pub(super) key: Arc<str>,
    pub(super) max_events: usize,
    /// Charged for every event kept, refunded as each goes.
    pub(super) budget: Arc<Budget>,
    pub(super) state: Mutex<LogState>,
    /// Touched on every change, to wake readers.
    pub(super) changed: watch::Sender<()>,
}

#[derive(Default)]
pub(super) struct LogState {
    /// The events kept, each with its id and its size in bytes.
    pub(super) events: VecDeque<(ServerSseMessage, usize)>,
    /// The sizes of `events`, added up.
    pub(super) bytes: usize,
    /// The number of `events[0]`.
    pub(super) first: u64,
    /// No more events will come.
    pub(super) ended: bool,
    /// The reader that gets events; readers are numbered from 1.
    pub(super) reader: u64,
    /// One past the last event a reader has taken.
    pub(super) taken: u64,
}

/// What a reader does next.
pub(super) enum Next {
    Event(ServerSseMessage),
    Wait,
    End,
}

impl Log {
    pub(super) fn new(max_events: usize, budget: Arc<Budget>) -> Arc<Log> {
        Arc::new(Log {
            // A UUID v4: 122 random bits.
            key: random_id(),
            max_events: max_events.max(1),
            budget,
            state: Mutex::default(),
            changed: watch::Sender::new(()),
        })
    }

    /// The id of the point after the stream's first `seen` events.
    pub(super) fn id(&self, seen: u64) -> String {
        format!("{}/{seen}", self.key)
    }

    pub(super) fn push(&self, mut event: ServerSseMessage) {
        let size = size_of(&event);
        {
            let mut state = lock(&self.state);
            let number = state.first + state.events.len() as u64;
            event.event_id = Some(self.id(number + 1));
            state.events.push_back((event, size));
            state.bytes += size;
            self.budget.used.fetch_add(size, Ordering::AcqRel);
            if state.events.len() > self.max_events {
                self.pop_front(&mut state);
            }
        }
        self.changed.send_replace(());
    }

    /// Drops the oldest event if another is kept after it.
    pub(super) fn drop_oldest(&self) -> bool {
        let mut state = lock(&self.state);
        if state.events.len() < 2 {
            return false;
        }
        self.pop_front(&mut state);
        true
    }

    pub(super) fn pop_front(&self, state: &mut LogState) {
        if let Some((_, size)) = state.events.pop_front() {
            state.first += 1;
            state.bytes -= size;
            self.budget.used.fetch_sub(size, Ordering::AcqRel);
        }
    }

    pub(super) fn end(&self) {
        lock(&self.state).ended = true;
        self.changed.send_replace(());
    }

    /// Makes a new reader the one that gets events, starting at event
    /// `from` (where the readers so far stopped if `None`). Returns the
    /// reader's number and its first event's.
    pub(super) fn attach(&self, from: Option<u64>) -> (u64, u64) {
        let attached = {
            let mut state = lock(&self.state);
            state.reader += 1;
            let end = state.first + state.events.len() as u64;
            (state.reader, from.unwrap_or(state.taken).min(end))
        };
        self.changed.send_replace(());
        attached
    }

    /// What reader `reader`, whose next event is number `next`, does now.
    pub(super) fn next(&self, reader: u64, next: &mut u64) -> Next {
        let mut state = lock(&self.state);
        if reader == state.reader {
            if *next < state.first {
                tracing::debug!(
                    stream = %self.key,
                    missed = state.first - *next,
                    "a resumed stream skips events no longer kept"
                );
                *next = state.first;
            }
            let index = usize::try_from(*next - state.first).unwrap_or(usize::MAX);
            if let Some((event, _)) = state.events.get(index).cloned() {
                *next += 1;
                state.taken = state.taken.max(*next);
                return Next::Event(event);
            }
        }
        if state.ended { Next::End } else { Next::Wait }
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        let bytes = lock(&self.state).bytes;
        self.budget.used.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// What `event` costs the budget: its message as JSON, plus a little for its
/// id and framing.
pub(super) fn size_of(event: &ServerSseMessage) -> usize {
    /// Counts what is written, keeping none of it.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(64);
    if let Some(message) = &event.message {
        // Writing to a counter fails only if the message cannot be
        // serialised, and then rmcp cannot send it either.
        let _ = serde_json::to_writer(&mut count, &**message);
    }
    count.0
}
