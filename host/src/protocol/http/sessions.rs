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
//! session's logs go when the session ends. Every log's events count against
//! one [`Budget`] of bytes for the whole server: past it, the logs of ended
//! streams go, oldest first whatever their session, then the stream that is
//! growing drops its oldest events.
//!
//! Sessions are bounded too ([`SessionLimits`]): at most `max_sessions` live
//! at once (`create_session` refuses more), and a session ends once it has
//! been idle for `idle`: no request from its client and no connection
//! reading one of its streams. The server's own messages do not count, so a
//! session that is sent notifications but never read ends all the same.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
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

use crate::limits::{
    DEFAULT_MAX_SESSIONS, DEFAULT_REPLAY_BUDGET_MB, DEFAULT_SESSION_IDLE_SECS, KEEP_ENDED,
    MAX_ENDED, MAX_EVENTS,
};

/// How long a client waits before reconnecting a dropped stream (the SSE
/// `retry` field).
pub const RETRY: Duration = Duration::from_secs(3);

/// Events queued for one connection; the rest wait in the log.
const READER_BUFFER: usize = 16;

/// What sessions may cost.
#[derive(Clone, Copy, Debug)]
pub struct SessionLimits {
    /// Live sessions at once. Default: [`DEFAULT_MAX_SESSIONS`].
    pub max_sessions: usize,
    /// How long a session lives with no request from its client and no
    /// stream of it connected. Default: [`DEFAULT_SESSION_IDLE_SECS`].
    pub idle: Duration,
    /// What every log's events may add up to, in bytes of JSON. Default:
    /// [`DEFAULT_REPLAY_BUDGET_MB`] MiB.
    pub replay_budget: usize,
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits {
            max_sessions: DEFAULT_MAX_SESSIONS,
            idle: Duration::from_secs(DEFAULT_SESSION_IDLE_SECS),
            replay_budget: mib(DEFAULT_REPLAY_BUDGET_MB),
        }
    }
}

/// `n` MiB in bytes, saturating.
pub fn mib(n: u64) -> usize {
    usize::try_from(n.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
}

/// rmcp's `LocalSessionManager`, with SSE streams that can be resumed, a
/// cap on live sessions and idle expiry.
pub struct Sessions {
    local: LocalSessionManager,
    registry: Arc<Registry>,
    limits: SessionLimits,
    /// Sessions being created: counted against the cap before they are in
    /// the registry.
    pending: AtomicUsize,
}

impl Sessions {
    /// Sessions within `limits`, with a task that ends idle ones (it stops
    /// once the `Sessions` are dropped).
    pub fn new(limits: SessionLimits) -> Arc<Sessions> {
        let mut local = LocalSessionManager::default();
        // Readers send their own priming events, with ids this module knows.
        local.session_config.sse_retry = None;
        // Idle sessions are ended by `expire`, which counts only the client's
        // activity: rmcp's keep-alive counts the server's messages too, so a
        // session the server keeps notifying would never end.
        local.session_config.keep_alive = None;
        let sessions = Arc::new(Sessions {
            local,
            registry: Arc::new(Registry::new(limits.replay_budget)),
            limits,
            pending: AtomicUsize::new(0),
        });
        tokio::spawn(expire(Arc::downgrade(&sessions)));
        sessions
    }

    /// Whether an `initialize` now would be refused: `max_sessions` are live.
    pub fn is_full(&self) -> bool {
        let live = lock(&self.registry.sessions).len();
        live + self.pending.load(Ordering::Acquire) >= self.limits.max_sessions
    }

    /// Notes a request of session `id`'s client.
    fn touch(&self, id: &SessionId) {
        if let Some(session) = lock(&self.registry.sessions).get(id) {
            session.activity.touch();
        }
    }

    /// The activity of session `id`, for a reader to hold.
    fn connected(&self, id: &SessionId) -> Option<Connected> {
        lock(&self.registry.sessions)
            .get(id)
            .map(|session| Connected::new(session.activity.clone()))
    }
}

/// Ends the sessions of `sessions` that have been idle for their limit,
/// checking a few times per limit, until the `Sessions` are dropped.
async fn expire(sessions: Weak<Sessions>) {
    loop {
        let Some(idle) = sessions.upgrade().map(|sessions| sessions.limits.idle) else {
            return;
        };
        let tick = (idle / 4).clamp(Duration::from_millis(250), Duration::from_secs(30));
        tokio::time::sleep(tick).await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        let now = Instant::now();
        let expired: Vec<SessionId> = lock(&sessions.registry.sessions)
            .iter()
            .filter(|(_, session)| session.activity.idle_at(now) >= Some(idle))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            tracing::info!(
                session = %id,
                "ending an HTTP session idle for {}s (no request and no stream connected)",
                idle.as_secs_f64()
            );
            if let Err(error) = sessions.close_session(&id).await {
                tracing::debug!(session = %id, "ending an idle session: {error}");
            }
        }
    }
}

/// When a session's client was last active, and how many connections are
/// reading its streams now.
struct Activity {
    last: Mutex<Instant>,
    connected: AtomicUsize,
}

impl Default for Activity {
    fn default() -> Activity {
        Activity {
            last: Mutex::new(Instant::now()),
            connected: AtomicUsize::new(0),
        }
    }
}

impl Activity {
    fn touch(&self) {
        *lock(&self.last) = Instant::now();
    }

    /// How long the session has been idle at `now`; `None` while a
    /// connection reads one of its streams.
    fn idle_at(&self, now: Instant) -> Option<Duration> {
        if self.connected.load(Ordering::Acquire) > 0 {
            return None;
        }
        Some(now.saturating_duration_since(*lock(&self.last)))
    }
}

/// A connection reading one of a session's streams: the session is not idle
/// while one exists, and its idle time starts again when the last goes.
struct Connected(Arc<Activity>);

impl Connected {
    fn new(activity: Arc<Activity>) -> Connected {
        activity.connected.fetch_add(1, Ordering::AcqRel);
        Connected(activity)
    }
}

impl Drop for Connected {
    fn drop(&mut self) {
        self.0.touch();
        self.0.connected.fetch_sub(1, Ordering::AcqRel);
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
    /// `max_sessions` sessions are live.
    #[error(
        "{0} HTTP sessions are live, the most this server keeps (--max-sessions): end one with \
         DELETE, or wait for an idle one to expire"
    )]
    Full(usize),
    /// `Last-Event-ID` names no stream this session still keeps.
    #[error(
        "no stream of this session to resume from that event id: the stream ended more than \
         {}s ago or before {} others that have ended since, the server's replay budget \
         (--replay-budget-mb) needed its room, or the id is not one this server sent to this \
         session",
        KEEP_ENDED.as_secs(),
        MAX_ENDED
    )]
    UnknownStream,
}

impl SessionManager for Sessions {
    type Error = SessionsError;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, SessionTransport), SessionsError> {
        {
            // Checked and reserved under the registry's lock, so concurrent
            // `initialize`s cannot overshoot the cap.
            let sessions = lock(&self.registry.sessions);
            let pending = self.pending.load(Ordering::Acquire);
            if sessions.len() + pending >= self.limits.max_sessions {
                return Err(SessionsError::Full(sessions.len()));
            }
            self.pending.fetch_add(1, Ordering::AcqRel);
        }
        let created = self.local.create_session().await;
        let mut sessions = lock(&self.registry.sessions);
        self.pending.fetch_sub(1, Ordering::AcqRel);
        let (id, transport) = created?;
        sessions.insert(id.clone(), SessionLogs::default());
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
        // Asked for every request that names a session.
        self.touch(id);
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
        self.touch(id);
        let source = self.local.create_stream(id, message).await?;
        let log = self.registry.open(id, source);
        Ok(read(log, None, self.connected(id)))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        self.touch(id);
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
        Ok(read(log, None, self.connected(id)))
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
        Ok(read(log, Some(seen), self.connected(id)))
    }
}

/// The logs of every session.
struct Registry {
    sessions: Mutex<HashMap<SessionId, SessionLogs>>,
    /// What every log's events may add up to.
    budget: Arc<Budget>,
    /// [`KEEP_ENDED`], but for tests.
    keep_ended: Duration,
    /// [`MAX_ENDED`], but for tests.
    max_ended: usize,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry::new(mib(DEFAULT_REPLAY_BUDGET_MB))
    }
}

/// The bytes of JSON the logs hold, server-wide, and how many they may.
struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl Budget {
    fn new(limit: usize) -> Arc<Budget> {
        Arc::new(Budget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    fn over(&self) -> bool {
        self.used.load(Ordering::Acquire) > self.limit
    }
}

#[derive(Default)]
struct SessionLogs {
    /// When the client was last active; whether a stream is connected.
    activity: Arc<Activity>,
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
    fn new(replay_budget: usize) -> Registry {
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
    fn keep_to_budget(&self, growing: &Log) {
        while self.budget.over() {
            if !self.drop_oldest_ended() && !growing.drop_oldest() {
                return;
            }
        }
    }

    /// Drops the log of the stream that ended first, of any session;
    /// `false` if no ended stream is kept.
    fn drop_oldest_ended(&self) -> bool {
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
    fn open(
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
fn read(
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
struct Log {
    key: Arc<str>,
    max_events: usize,
    /// Charged for every event kept, refunded as each goes.
    budget: Arc<Budget>,
    state: Mutex<LogState>,
    /// Touched on every change, to wake readers.
    changed: watch::Sender<()>,
}

#[derive(Default)]
struct LogState {
    /// The events kept, each with its id and its size in bytes.
    events: VecDeque<(ServerSseMessage, usize)>,
    /// The sizes of `events`, added up.
    bytes: usize,
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
    fn new(max_events: usize, budget: Arc<Budget>) -> Arc<Log> {
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
    fn id(&self, seen: u64) -> String {
        format!("{}/{seen}", self.key)
    }

    fn push(&self, mut event: ServerSseMessage) {
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
    fn drop_oldest(&self) -> bool {
        let mut state = lock(&self.state);
        if state.events.len() < 2 {
            return false;
        }
        self.pop_front(&mut state);
        true
    }

    fn pop_front(&self, state: &mut LogState) {
        if let Some((_, size)) = state.events.pop_front() {
            state.first += 1;
            state.bytes -= size;
            self.budget.used.fetch_sub(size, Ordering::AcqRel);
        }
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
fn size_of(event: &ServerSseMessage) -> usize {
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
        let log = Log::new(8, Budget::new(usize::MAX));
        for n in 0..3 {
            log.push(progress(n));
        }
        log.end();
        let events = collect(read(log.clone(), None, None)).await;
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
        let log = Log::new(8, Budget::new(usize::MAX));
        for n in 0..4 {
            log.push(progress(n));
        }
        let resumed = read(log.clone(), Some(2), None);
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
        let log = Log::new(3, Budget::new(usize::MAX));
        for n in 0..10 {
            log.push(progress(n));
        }
        log.end();
        let events = collect(read(log, Some(1), None)).await;
        let numbers: Vec<f64> = events[1..].iter().map(number).collect();
        assert_eq!(numbers, [7.0, 8.0, 9.0]);
    }

    #[tokio::test]
    async fn a_replaced_reader_gets_nothing_more_and_ends_with_the_stream() {
        let log = Log::new(8, Budget::new(usize::MAX));
        log.push(progress(0));
        let mut first = read(log.clone(), None, None);
        assert!(first.next().await.unwrap().message.is_none());
        assert_eq!(number(&first.next().await.unwrap()), 0.0);
        let second = read(log.clone(), Some(1), None);
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
            let log = Log::new(8, Budget::new(usize::MAX));
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
        let log = Log::new(8, Budget::new(usize::MAX));
        log.push(progress(0));
        let mut first = read(log.clone(), None, None);
        first.next().await.unwrap();
        first.next().await.unwrap();
        drop(first);
        log.push(progress(1));
        log.end();
        let events = collect(read(log, None, None)).await;
        let numbers: Vec<f64> = events[1..].iter().map(number).collect();
        assert_eq!(numbers, [1.0]);
    }

    #[tokio::test]
    async fn over_the_budget_ended_logs_go_oldest_first_whatever_their_session() {
        let size = size_of(&progress(0));
        let registry = Arc::new(Registry::new(size * 5));
        let mut keys = Vec::new();
        for session in ["a", "b", "a"] {
            let id: SessionId = session.into();
            lock(&registry.sessions).entry(id.clone()).or_default();
            let log = Log::new(8, registry.budget.clone());
            log.push(progress(0));
            log.push(progress(1));
            lock(&registry.sessions)
                .get_mut(&id)
                .unwrap()
                .logs
                .insert(log.key.clone(), log.clone());
            registry.ended(&id, log.key.clone());
            keys.push((id, log.key.clone()));
            drop(log);
            registry.keep_to_budget(&Log::new(8, registry.budget.clone()));
        }
        let kept: Vec<bool> = keys
            .iter()
            .map(|(id, key)| lock(&registry.sessions)[id].logs.contains_key(key))
            .collect();
        assert_eq!(kept, [false, true, true], "6 events over a budget of 5");
        assert_eq!(registry.budget.used.load(Ordering::Acquire), size * 4);
    }

    #[tokio::test]
    async fn over_the_budget_a_growing_log_drops_its_oldest_events_but_its_last() {
        let size = size_of(&progress(0));
        let registry = Arc::new(Registry::new(size * 3));
        let log = Log::new(1024, registry.budget.clone());
        for n in 0..10 {
            log.push(progress(n));
            registry.keep_to_budget(&log);
        }
        log.end();
        let events = collect(read(log.clone(), Some(0), None)).await;
        let numbers: Vec<f64> = events[1..].iter().map(number).collect();
        assert_eq!(numbers, [7.0, 8.0, 9.0]);
        drop(events);
        drop(log);
        assert_eq!(registry.budget.used.load(Ordering::Acquire), 0, "refunded");
    }
}
