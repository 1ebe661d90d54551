//! Streamable HTTP sessions whose SSE streams survive a dropped connection.
//!
//! [`Sessions`] is the rmcp `SessionManager` behind the HTTP endpoint. rmcp's
//! `LocalSessionManager` still runs each session (its worker routes every
//! message to a stream); `Sessions` keeps what is sent on each SSE stream in a
//! [`Log`](replay::Log): a request's stream (its progress notifications, then its
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
//! Memory is bounded (the logs are in [`replay`]): a log holds the last
//! [`MAX_EVENTS`](crate::limits::MAX_EVENTS) events of its
//! stream (when more pile up, the oldest notifications go; a response is the
//! last event, so it stays), a log whose stream has ended is kept for
//! [`KEEP_ENDED`] and at most [`MAX_ENDED`] of them per session, and a
//! session's logs go when the session ends. Every log's events count against
//! one [`Budget`](replay::Budget) of bytes for the whole server: past it, the logs of ended
//! streams go, oldest first whatever their session, then the stream that is
//! growing drops its oldest events.
//!
//! Sessions are bounded too ([`SessionLimits`]): at most `max_sessions` live
//! at once (`create_session` refuses more), and a session ends once it has
//! been idle for `idle`: no request from its client and no connection
//! reading one of its streams. The server's own messages do not count, so a
//! session that is sent notifications but never read ends all the same.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, SessionTransport,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::time::Instant;
use tokio_stream::Stream;

mod replay;

use replay::{Registry, SessionLogs, read};

use crate::limits::{
    DEFAULT_MAX_SESSIONS, DEFAULT_REPLAY_BUDGET_MB, DEFAULT_SESSION_IDLE_SECS, KEEP_ENDED,
    MAX_ENDED,
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

    use tokio_stream::StreamExt;
    use tokio_stream::wrappers::ReceiverStream;

    use super::replay::{Budget, Log, size_of};
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
