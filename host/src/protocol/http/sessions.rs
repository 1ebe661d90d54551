//! Streamable HTTP sessions whose SSE streams survive a dropped connection.
//!
//! [`Sessions`] is the rmcp `SessionManager` behind the HTTP endpoint. rmcp's
//! `LocalSessionManager` still runs each session (its worker routes every
//! message to a stream); `Sessions` keeps what is sent on each SSE stream in a
//! [`Log`]: a request's stream (its progress notifications, then its
//! response) and the session's `GET` stream. A pump task per stream moves
//! each message from rmcp into the log as soon as it is sent, and every HTTP
//! response is a reader task that forwards the log to its connection. So a
//! connection that drops costs nothing the log still holds: `GET` with
//! `Last-Event-ID` starts a new reader where the client left off, and it gets
//! the rest, including a response that was sent while no one was connected.
//!
//! rmcp's own replay cache cannot do this: it forgets a request's stream the
//! moment the response is sent, and holds 16 events per stream.
//!
//! Event ids are `<key>/<n>`: `key` names the stream (a random UUID, so no
//! client can guess another's) and `n` says the client has the stream's
//! first `n` events. Every connection starts with a priming event (SEP-1699):
//! an id, the `retry` hint and no data. A stream is resumed only within the
//! session it belongs to.
//!
//! Memory is bounded: a log holds the last [`MAX_EVENTS`] events of its
//! stream (when more pile up, the oldest notifications go; a response is the
//! last event, so it stays), a log whose stream has ended is kept for
//! [`KEEP_ENDED`] and at most [`MAX_ENDED`] of them per session, and a
//! session's logs go when the session ends.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::server_side_http::session_id as random_id;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionTransport,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};

use crate::limits::{KEEP_ENDED, MAX_ENDED, MAX_EVENTS};

/// How long a client waits before reconnecting a dropped stream (the SSE
/// `retry` field).
pub const RETRY: Duration = Duration::from_secs(3);

/// Events queued for one connection; the rest wait in the log.
const READER_BUFFER: usize = 16;

/// rmcp's `LocalSessionManager`, with SSE streams that can be resumed.
pub struct Sessions {
    local: LocalSessionManager,
    registry: Arc<Registry>,
}

impl Default for Sessions {
    fn default() -> Sessions {
        let mut local = LocalSessionManager::default();
        // Readers send their own priming events, with ids this module knows.
        local.session_config.sse_retry = None;
        Sessions {
            local,
            registry: Arc::default(),
        }
    }
}

/// Why [`Sessions`] could not do what the HTTP service asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionsError {
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// The session has ended, or never existed.
    #[error("session `{0}` not found")]
    UnknownSession(SessionId),
    /// `Last-Event-ID` names no stream this session still keeps.
    #[error(
        "no stream of this session to resume from that event id: the stream ended more than \
         {}s ago or before {} others that have ended since, or the id is not one this server \
         sent to this session",
        KEEP_ENDED.as_secs(),
        MAX_ENDED
    )]
    UnknownStream,
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, SessionTransport), SessionsError> {
        let (id, transport) = self.local.create_session().await?;
        lock(&self.registry.sessions).insert(id.clone(), SessionLogs::default());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionsError> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionsError> {
        Ok(self.local.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionsError> {
        let closed = self.local.close_session(id).await;
        lock(&self.registry.sessions).remove(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        let source = self.local.create_stream(id, message).await?;
        let log = self.registry.open(id, source);
        Ok(read(log, None))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        let standalone = lock(&self.registry.sessions)
            .get(id)
            .map(|session| session.standalone.clone())
            .ok_or_else(|| SessionsError::UnknownSession(id.clone()))?;
        // rmcp has one stream for messages outside requests; it is opened
        // once, and later `GET`s read its log.
        let mut standalone = standalone.lock().await;
        let log = match &*standalone {
            Some(log) => log.clone(),
            None => {
                let source = self.local.create_standalone_stream(id).await?;
                let log = self.registry.open(id, source);
                *standalone = Some(log.clone());
                log
            }
        };
        Ok(read(log, None))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionsError> {
        let (key, seen) = last_event_id
            .rsplit_once('/')
            .ok_or(SessionsError::UnknownStream)?;
        let seen: u64 = seen.parse().map_err(|_| SessionsError::UnknownStream)?;
        let log = lock(&self.registry.sessions)
            .get(id)
            .and_then(|session| session.logs.get(key).cloned())
            .ok_or(SessionsError::UnknownStream)?;
        Ok(read(log, Some(seen)))
    }
}

/// The logs of every session.
struct Registry {
    sessions: Mutex<HashMap<SessionId, SessionLogs>>,
    /// [`KEEP_ENDED`], but for tests.
    keep_ended: Duration,
    /// [`MAX_ENDED`], but for tests.
    max_ended: usize,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry {
            sessions: Mutex::default(),
            keep_ended: KEEP_ENDED,
            max_ended: MAX_ENDED,
        }
    }
}

#[derive(Default)]
struct SessionLogs {
    logs: HashMap<Arc<str>, Arc<Log>>,
    /// Logs whose stream has ended, oldest first: when each is to go, and
    /// its key.
    ended: VecDeque<(Instant, Arc<str>)>,
    /// A task is waiting to drop the `ended` logs whose time has come.
    sweeping: bool,
    /// The log of the session's `GET` stream, once a client has opened it.
    /// The async lock keeps two first `GET`s from both opening rmcp's stream.
    standalone: Arc<tokio::sync::Mutex<Option<Arc<Log>>>>,
}

impl Registry {
    /// A log for `source`, one of session `id`'s streams, filled by a task
    /// of its own.
    fn open(
        self: &Arc<Registry>,
        id: &SessionId,
        source: impl Stream<Item = ServerSseMessage> + Send + 'static,
    ) -> Arc<Log> {
        let log = Log::new(MAX_EVENTS);
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
    fn ended(self: &Arc<Registry>, id: &SessionId, key: Arc<str>) {
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
fn read(log: Arc<Log>, from: Option<u64>) -> ReceiverStream<ServerSseMessage> {
    let (reader, mut next) = log.attach(from);
    let (tx, rx) = mpsc::channel(READER_BUFFER);
    tokio::spawn(async move {
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
struct Log {
    key: Arc<str>,
    max_events: usize,
    state: Mutex<LogState>,
    /// Touched on every change, to wake readers.
    changed: watch::Sender<()>,
}

#[derive(Default)]
struct LogState {
    /// The events kept, each with its id.
    events: VecDeque<ServerSseMessage>,
    /// The number of `events[0]`.
    first: u64,
    /// No more events will come.
    ended: bool,
    /// The reader that gets events; readers are numbered from 1.
    reader: u64,
    /// One past the last event a reader has taken.
    taken: u64,
}

/// What a reader does next.
enum Next {
    Event(ServerSseMessage),
    Wait,
    End,
}

impl Log {
    fn new(max_events: usize) -> Arc<Log> {
        Arc::new(Log {
            // A UUID v4: 122 random bits.
            key: random_id(),
            max_events: max_events.max(1),
            state: Mutex::default(),
            changed: watch::Sender::new(()),
        })
    }

    /// The id of the point after the stream's first `seen` events.
    fn id(&self, seen: u64) -> String {
        format!("{}/{seen}", self.key)
    }

    fn push(&self, mut event: ServerSseMessage) {
        {
            let mut state = lock(&self.state);
            let number = state.first + state.events.len() as u64;
            event.event_id = Some(self.id(number + 1));
            state.events.push_back(event);
            if state.events.len() > self.max_events {
                state.events.pop_front();
                state.first += 1;
            }
        }
        self.changed.send_replace(());
    }

    fn end(&self) {
        lock(&self.state).ended = true;
        self.changed.send_replace(());
    }

    /// Makes a new reader the one that gets events, starting at event
    /// `from` (where the readers so far stopped if `None`). Returns the
    /// reader's number and its first event's.
    fn attach(&self, from: Option<u64>) -> (u64, u64) {
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
    fn next(&self, reader: u64, next: &mut u64) -> Next {
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
            if let Some(event) = state.events.get(index).cloned() {
                *next += 1;
                state.taken = state.taken.max(*next);
                return Next::Event(event);
            }
        }
        if state.ended { Next::End } else { Next::Wait }
    }
}

/// Locks `mutex`; a panic while it was held leaves consistent data here
/// (every update is a single step), so poisoning is ignored.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{
        NumberOrString, ProgressNotificationParam, ProgressToken, ServerNotification,
    };

    use super::*;

    fn progress(n: u32) -> ServerSseMessage {
        let param = ProgressNotificationParam::new(
            ProgressToken(NumberOrString::String("t".into())),
            f64::from(n),
        );
        ServerSseMessage::from_message(ServerJsonRpcMessage::notification(
            ServerNotification::ProgressNotification(rmcp::model::Notification::new(param)),
        ))
    }

    fn number(event: &ServerSseMessage) -> f64 {
        let value = serde_json::to_value(event.message.as_deref().unwrap()).unwrap();
        value["params"]["progress"].as_f64().unwrap()
    }

    async fn collect(stream: ReceiverStream<ServerSseMessage>) -> Vec<ServerSseMessage> {
        tokio::time::timeout(Duration::from_secs(10), stream.collect())
            .await
            .expect("the stream ends")
    }

    #[tokio::test]
    async fn a_reader_gets_a_priming_event_then_every_event_in_order() {
        let log = Log::new(8);
        for n in 0..3 {
            log.push(progress(n));
        }
        log.end();
        let events = collect(read(log.clone(), None)).await;
        assert_eq!(events.len(), 4);
        assert!(events[0].message.is_none());
        assert_eq!(events[0].retry, Some(RETRY));
        assert_eq!(events[0].event_id, Some(log.id(0)));
        for (n, event) in events[1..].iter().enumerate() {
            assert_eq!(number(event), n as f64);
            assert_eq!(event.event_id, Some(log.id(n as u64 + 1)));
        }
    }

    #[tokio::test]
    async fn resuming_replays_what_follows_the_last_event_id_then_goes_live() {
        let log = Log::new(8);
        for n in 0..4 {
            log.push(progress(n));
        }
        let resumed = read(log.clone(), Some(2));
        log.push(progress(4));
        log.end();
        let events = collect(resumed).await;
        assert_eq!(
            events[0].event_id,
            Some(log.id(2)),
            "priming at the resume point"
        );
        let numbers: Vec<f64> = events[1..].iter().map(number).collect();
        assert_eq!(numbers, [2.0, 3.0, 4.0]);
    }

    #[tokio::test]
    async fn a_full_log_drops_the_oldest_events_and_keeps_the_last() {
        let log = Log::new(3);
        for n in 0..10 {
            log.push(progress(n));
        }
        log.end();
        let events = collect(read(log, Some(1))).await;
        let numbers: Vec<f64> = events[1..].iter().map(number).collect();
        assert_eq!(numbers, [7.0, 8.0, 9.0]);
    }

    #[tokio::test]
    async fn a_replaced_reader_gets_nothing_more_and_ends_with_the_stream() {
        let log = Log::new(8);
        log.push(progress(0));
        let mut first = read(log.clone(), None);
        assert!(first.next().await.unwrap().message.is_none());
        assert_eq!(number(&first.next().await.unwrap()), 0.0);
        let second = read(log.clone(), Some(1));
        log.push(progress(1));
        log.end();
        let rest = collect(second).await;
        assert_eq!(rest.len(), 2);
        assert_eq!(number(&rest[1]), 1.0);
        assert!(collect(first).await.is_empty(), "one stream per message");
    }

    /// A registry with one session, `s`, and `streams` logs that have ended.
    fn registry_with_ended(
        keep_ended: Duration,
        max_ended: usize,
        streams: usize,
    ) -> (Arc<Registry>, Vec<Arc<str>>) {
        let registry = Arc::new(Registry {
            keep_ended,
            max_ended,
            ..Registry::default()
        });
        let id: SessionId = "s".into();
        lock(&registry.sessions).insert(id.clone(), SessionLogs::default());
        let mut keys = Vec::new();
        for _ in 0..streams {
            let log = Log::new(8);
            lock(&registry.sessions)
                .get_mut(&id)
                .unwrap()
                .logs
                .insert(log.key.clone(), log.clone());
            registry.ended(&id, log.key.clone());
            keys.push(log.key.clone());
        }
        (registry, keys)
    }

    fn kept(registry: &Registry, key: &str) -> bool {
        lock(&registry.sessions)
            .get("s")
            .is_some_and(|session| session.logs.contains_key(key))
    }

    #[tokio::test]
    async fn ended_logs_beyond_the_cap_go_oldest_first() {
        let (registry, keys) = registry_with_ended(Duration::from_secs(60), 3, 5);
        let kept: Vec<bool> = keys.iter().map(|key| kept(&registry, key)).collect();
        assert_eq!(kept, [false, false, true, true, true]);
    }

    #[tokio::test]
    async fn ended_logs_go_when_their_time_is_up() {
        let (registry, keys) = registry_with_ended(Duration::from_millis(200), 8, 2);
        assert!(keys.iter().all(|key| kept(&registry, key)));
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(keys.iter().all(|key| !kept(&registry, key)));
        assert!(
            !lock(&registry.sessions)["s"].sweeping,
            "the sweeper is done"
        );
    }

    #[tokio::test]
    async fn a_new_reader_starts_where_the_last_one_stopped() {
        let log = Log::new(8);
        log.push(progress(0));
        let mut first = read(log.clone(), None);
        first.next().await.unwrap();
        first.next().await.unwrap();
        drop(first);
        log.push(progress(1));
        log.end();
        let events = collect(read(log, None)).await;
        let numbers: Vec<f64> = events[1..].iter().map(number).collect();
        assert_eq!(numbers, [1.0]);
    }
}
