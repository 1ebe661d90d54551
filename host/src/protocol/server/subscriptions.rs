//! Resource subscriptions: `resources/subscribe` (2025-11-25) follows a
//! resource for the session, `subscriptions/listen` (2026-07-28) for the
//! stream; either way the client is told when its contents change (or it
//! goes).
//!
//! The [`Watcher`] is shared by every connection of the process: it reads
//! each followed resource once per [`WATCH_INTERVAL`], however many
//! connections follow it, and publishes its digest on a `watch` channel.
//! Each [`Follow`] (one connection following one resource) takes a receiver
//! of that channel and is counted against the connection's cap
//! (`max_subscriptions`) and the process's (`max_followed_resources`
//! distinct resources, [`MAX_FOLLOWS`] follows); dropping it gives them
//! back, and the last follow of a resource stops its reading. A resource
//! whose read fails (over the output cap, say) is not read again until it
//! changes: when it is a file beneath one of its plugin's mounts, until its
//! size or modification time changes ([`file_fingerprint`]); otherwise less
//! and less often, up to [`WATCH_BACKOFF_MAX`] apart, until a read succeeds.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer};
use sha2::{Digest as _, Sha256};
use tokio::sync::watch;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::resources::{failure_error, read};
use super::{Server, lists};
use crate::config::Subscriptions;
use crate::limits::{MAX_FOLLOWS, WATCH_BACKOFF_MAX, WATCH_INTERVAL};
use crate::runtime::offerings::Failure;
use crate::runtime::watch::{Fingerprint, file_fingerprint};

/// A digest of a resource's contents as `resources/read` returns them;
/// `None` when no plugin serves it (or it could not be read when first
/// followed).
type Digest = Option<[u8; 32]>;

/// The resources followed across the process, each read by one task.
pub(super) struct Watcher {
    caps: Subscriptions,
    state: Mutex<Watched>,
    /// The last scope handed out by [`Watcher::scope`].
    scopes: AtomicU64,
}

#[derive(Default)]
struct Watched {
    resources: HashMap<Key, Resource>,
    /// Follows alive now, across connections.
    follows: usize,
}

/// What one watcher task reads: a URI, and the session whose client roots
/// its reads see when the server follows client roots (`None` otherwise:
/// every connection reads the same thing).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    uri: String,
    scope: Option<u64>,
}

/// A followed resource: its latest digest, how many follow it, and the task
/// that reads it.
struct Resource {
    digest: watch::Sender<Digest>,
    followers: usize,
    task: AbortHandle,
}

/// One connection following one resource. Dropping it gives back its place
/// under the caps, and stops the resource's reading if no one else follows
/// it.
pub(super) struct Follow {
    watcher: Arc<Watcher>,
    key: Key,
    /// The connection's count of follows.
    connection: Arc<AtomicUsize>,
    /// The resource's digest, as its watcher last read it.
    digest: watch::Receiver<Digest>,
}

impl Drop for Follow {
    fn drop(&mut self) {
        self.connection.fetch_sub(1, Ordering::AcqRel);
        let mut state = self.watcher.lock();
        state.follows -= 1;
        let gone = match state.resources.get_mut(&self.key) {
            Some(resource) => {
                resource.followers -= 1;
                resource.followers == 0
            }
            None => false,
        };
        if gone && let Some(resource) = state.resources.remove(&self.key) {
            resource.task.abort();
        }
    }
}

/// A session's `resources/subscribe` follow and the task that forwards its
/// changes to the client; dropping it stops both.
pub(super) struct Subscribed {
    _follow: Follow,
    task: AbortHandle,
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Watcher {
    pub(super) fn new(caps: Subscriptions) -> Watcher {
        Watcher {
            caps,
            state: Mutex::default(),
            scopes: AtomicU64::new(0),
        }
    }

    /// A scope of its own, for a session whose reads see its client's roots.
    pub(super) fn scope(&self) -> u64 {
        self.scopes.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn lock(&self) -> MutexGuard<'_, Watched> {
        // Every update is a few counters changed together under the lock,
        // with nothing that can panic in between.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Refuses `wanted` more follows for `server`'s connection if they would
    /// take it, or the process, past a cap. Counts as new only the URIs not
    /// followed yet, and so is a check made before reading anything; the
    /// caps are checked again, exactly, by [`Watcher::follow`].
    fn check(&self, server: &Server, uris: &[String]) -> Result<(), ErrorData> {
        let state = self.lock();
        let new = uris
            .iter()
            .filter(|uri| !state.resources.contains_key(&server.key(uri)))
            .count();
        self.refuse(server, &state, uris.len(), new)
    }

    /// The error for `count` more follows of which `new` are of resources
    /// not followed yet, if they go past a cap.
    fn refuse(
        &self,
        server: &Server,
        state: &Watched,
        count: usize,
        new: usize,
    ) -> Result<(), ErrorData> {
        let mine = server.follows.load(Ordering::Acquire);
        let per_connection = self.caps.per_connection;
        if mine + count > per_connection {
            return Err(ErrorData::invalid_params(
                format!(
                    "this connection already follows {mine} resources and asked for {count} \
                     more; a connection may follow at most {per_connection} \
                     (max_subscriptions): unsubscribe from some, or close a \
                     subscriptions/listen stream, first"
                ),
                None,
            ));
        }
        let distinct = self.caps.distinct;
        if state.resources.len() + new > distinct {
            return Err(ErrorData::invalid_params(
                format!(
                    "the server already follows {} distinct resources, and may follow at most \
                     {distinct} (max_followed_resources); try again once clients follow fewer",
                    state.resources.len()
                ),
                None,
            ));
        }
        if state.follows + count > MAX_FOLLOWS {
            return Err(ErrorData::invalid_params(
                format!(
                    "the server already keeps {} follows across its clients, and may keep at \
                     most {MAX_FOLLOWS}; try again once clients follow fewer",
                    state.follows
                ),
                None,
            ));
        }
        Ok(())
    }

    /// Follows each of `uris` for `server`'s connection, all or none. Each
    /// comes with the digest the connection saw: a resource followed
    /// already takes it if it is newer (the other followers then hear of
    /// the change); a new one starts from it, read by a task of its own.
    fn follow(
        self: &Arc<Watcher>,
        server: &Server,
        uris: Vec<(String, Digest)>,
    ) -> Result<Vec<Follow>, ErrorData> {
        let mut state = self.lock();
        let keys: Vec<(Key, Digest)> = uris
            .into_iter()
            .map(|(uri, digest)| (server.key(&uri), digest))
            .collect();
        let mut new: Vec<&Key> = keys
            .iter()
            .map(|(key, _)| key)
            .filter(|key| !state.resources.contains_key(key))
            .collect();
        new.dedup();
        self.refuse(server, &state, keys.len(), new.len())?;
        let mut follows = Vec::with_capacity(keys.len());
        for (key, seen) in keys {
            state.follows += 1;
            let resource = state.resources.entry(key.clone()).or_insert_with(|| {
                let (digest, _) = watch::channel(seen);
                let task = tokio::spawn(watch_resource(
                    server.reader(),
                    key.uri.clone(),
                    digest.clone(),
                ));
                Resource {
                    digest,
                    followers: 0,
                    task: task.abort_handle(),
                }
            });
            if seen.is_some() {
                resource.digest.send_if_modified(|digest| {
                    let changed = *digest != seen;
                    *digest = seen;
                    changed
                });
            }
            resource.followers += 1;
            server.follows.fetch_add(1, Ordering::AcqRel);
            follows.push(Follow {
                watcher: self.clone(),
                key,
                connection: server.follows.clone(),
                digest: resource.digest.subscribe(),
            });
        }
        Ok(follows)
    }

    /// The digest last read of `uri` for `server`'s connection, if the
    /// process follows it already.
    fn latest(&self, server: &Server, uri: &str) -> Option<Digest> {
        let state = self.lock();
        let resource = state.resources.get(&server.key(uri))?;
        Some(*resource.digest.borrow())
    }
}

impl Server {
    /// Which watcher task reads `uri` for this session.
    fn key(&self, uri: &str) -> Key {
        Key {
            uri: uri.to_string(),
            scope: self.policy.client_roots.then_some(self.scope),
        }
    }

    /// A clone that reads resources as this session does, without keeping
    /// its subscriptions alive.
    fn reader(&self) -> Server {
        Server {
            watched: Arc::default(),
            ..self.clone()
        }
    }

    /// The size and modification time of the file `uri` names, when it is a
    /// `file://` URI beneath a mount of the plugin that would read it.
    async fn fingerprint_of(&self, uri: &str) -> Option<Fingerprint> {
        let toolbox = self.toolbox().await.ok()?;
        let plugin = toolbox.readers(uri).into_iter().next()?;
        let uri = uri.to_owned();
        // A stat may block (a hung network file system): not on a runtime
        // worker.
        tokio::task::spawn_blocking(move || file_fingerprint(&plugin.grants().mounts, &uri))
            .await
            .ok()
            .flatten()
    }

    /// A digest of the contents of `uri`, read as `resources/read` reads it;
    /// `None` when no plugin serves it.
    pub(super) async fn digest_of(
        &self,
        uri: &str,
        ct: CancellationToken,
    ) -> Result<Digest, ErrorData> {
        let toolbox = self.toolbox().await?;
        for plugin in toolbox.readers(uri) {
            let asked = uri.to_string();
            let what = format!("resource `{uri}`");
            let read = self
                .feature(&plugin, &what, ct.clone(), None, async move |plugin, cx| {
                    read(plugin, asked, cx).await
                })
                .await?;
            match read {
                Ok(Ok(result)) => {
                    let json = serde_json::to_vec(&result.contents).unwrap_or_default();
                    return Ok(Some(Sha256::digest(json).into()));
                }
                Ok(Err(Failure::NotFound(_))) => continue,
                Ok(Err(failure)) => return Err(failure_error(failure, None)),
                Err(interruption) => {
                    return Err(ErrorData::internal_error(
                        format!("a followed resource cannot ask the client: {interruption}"),
                        None,
                    ));
                }
            }
        }
        Ok(None)
    }

    /// Follows `uri` for this session (`resources/subscribe`), until the
    /// client unsubscribes, the session ends or the server stops. A URI the
    /// session follows already is left as it is.
    pub(super) async fn follow(
        &self,
        uri: String,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.subscribed().contains_key(&uri) {
            return Ok(());
        }
        let wanted = [uri.clone()];
        self.watcher.check(self, &wanted)?;
        let version = cx.protocol_version();
        let Some(first) = self.digest_of(&uri, cx.ct.clone()).await? else {
            let message = format!("no resource `{uri}` to subscribe to");
            return Err(failure_error(
                Failure::NotFound(message),
                Some((&uri, &version)),
            ));
        };
        let mut subscribed = self.subscribed();
        if subscribed.contains_key(&uri) {
            return Ok(());
        }
        let mut follows = self
            .watcher
            .follow(self, vec![(uri.clone(), Some(first))])?;
        let Some(follow) = follows.pop() else {
            return Ok(());
        };
        let forwarding = forward(
            cx.peer.clone(),
            uri.clone(),
            follow.digest.clone(),
            Some(first),
            self.stopping.clone(),
        );
        let watched = Arc::downgrade(&self.watched);
        let ended = uri.clone();
        let task = tokio::spawn(async move {
            forwarding.await;
            // The session has gone (or the server is stopping): give the
            // follow back now rather than when the session's handler goes.
            // A newer subscription to the same URI is left alone.
            if let Some(watched) = watched.upgrade() {
                let mut watched = watched.lock().unwrap_or_else(PoisonError::into_inner);
                let mine = watched
                    .get(&ended)
                    .is_some_and(|s| s.task.id() == tokio::task::id());
                if mine {
                    let removed = watched.remove(&ended);
                    drop(watched);
                    drop(removed);
                }
            }
        });
        subscribed.insert(
            uri,
            Subscribed {
                _follow: follow,
                task: task.abort_handle(),
            },
        );
        Ok(())
    }

    /// Stops following `uri` for this session (`resources/unsubscribe`).
    pub(super) fn unfollow(&self, uri: &str) {
        let removed = self.subscribed().remove(uri);
        drop(removed);
    }

    fn subscribed(&self) -> MutexGuard<'_, HashMap<String, Subscribed>> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Follows the resources a `subscriptions/listen` stream accepted, as
    /// `resources/subscribe` follows one, until the client cancels the
    /// stream or the server stops. A stream that would take its connection
    /// or the server past a cap on followed resources is refused (after
    /// its acknowledgment, which rmcp sends before this runs).
    pub(super) async fn follow_stream(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let mut uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        uris.sort();
        uris.dedup();
        self.watcher.check(self, &uris)?;
        // A resource the server follows already is not read again: the
        // stream starts from its watcher's last digest.
        let mut seen = Vec::with_capacity(uris.len());
        for uri in uris {
            let digest = match self.watcher.latest(self, &uri) {
                Some(digest) => digest,
                None => self
                    .digest_of(&uri, CancellationToken::new())
                    .await
                    .ok()
                    .flatten(),
            };
            seen.push((uri, digest));
        }
        let follows = self.watcher.follow(self, seen.clone())?;
        let sink = context.sink().clone();
        let mut digests: Vec<_> = follows.iter().map(|f| f.digest.clone()).collect();
        let forward_all = async {
            let mut last: Vec<Digest> = seen.iter().map(|(_, digest)| *digest).collect();
            loop {
                let changes = digests.iter_mut().map(|d| Box::pin(d.changed()));
                let (changed, index, _) = futures_util::future::select_all(changes).await;
                if changed.is_err() {
                    return;
                }
                let now = *digests[index].borrow_and_update();
                if now != last[index] {
                    last[index] = now;
                    let uri = seen[index].0.clone();
                    if sink.notify_resource_updated(uri).await.is_err() {
                        return;
                    }
                }
            }
        };
        // The list changes the stream asked for (accepted only while
        // reloading), told as they happen.
        let accepted = context.accepted();
        let wanted = lists::Changed {
            tools: accepted.tools_list_changed == Some(true),
            resources: accepted.resources_list_changed == Some(true),
            prompts: accepted.prompts_list_changed == Some(true),
        };
        let list_sink = context.sink().clone();
        let mut served = self.served.clone();
        let tell_lists = async {
            if wanted == lists::Changed::default() {
                return std::future::pending().await;
            }
            let mut last = lists::seen(&mut served);
            while let Some(changed) = lists::next_change(&mut served, &mut last).await {
                let sent = async {
                    if changed.tools && wanted.tools {
                        list_sink.notify_tool_list_changed().await?;
                    }
                    if changed.resources && wanted.resources {
                        list_sink.notify_resource_list_changed().await?;
                    }
                    if changed.prompts && wanted.prompts {
                        list_sink.notify_prompt_list_changed().await?;
                    }
                    Ok::<(), rmcp::service::SubscriptionSendError>(())
                };
                if sent.await.is_err() {
                    break;
                }
            }
            std::future::pending().await
        };
        if !follows.is_empty() {
            tokio::select! {
                () = context.cancelled() => {}
                () = self.stopping.cancelled() => {}
                () = forward_all => {}
                () = tell_lists => {}
            }
        } else {
            tokio::select! {
                () = context.cancelled() => {}
                () = self.stopping.cancelled() => {}
                () = tell_lists => {}
            }
        }
        drop(follows);
        Ok(())
    }
}

/// What a `subscriptions/listen` stream is granted of what it asked: at
/// most `max_subscriptions` resources, and, when the server is `reloading`,
/// the changes to the lists of tools, resources and prompts (otherwise they
/// do not change while the server runs). rmcp keeps what `get_info`
/// declares, so while the plugins are still loading (nothing declared yet)
/// the acknowledgment lists no resources, and the client sees that.
pub(super) fn accepted(
    requested: &SubscriptionFilter,
    max: usize,
    reloading: bool,
) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::default();
    if reloading {
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
    }
    accepted.resource_subscriptions = requested
        .resource_subscriptions
        .as_ref()
        .map(|uris| uris.iter().take(max).cloned().collect());
    accepted
}

/// Tells a session's client each time the digest of a resource it follows
/// changes from `last` (what it saw when it subscribed), until the session
/// ends, the client unsubscribes (which aborts this task) or the server
/// stops.
async fn forward(
    peer: Peer<RoleServer>,
    uri: String,
    mut digest: watch::Receiver<Digest>,
    mut last: Digest,
    stopping: CancellationToken,
) {
    loop {
        tokio::select! {
            changed = digest.changed() => if changed.is_err() { break },
            () = tokio::time::sleep(WATCH_INTERVAL) => {
                if peer.is_transport_closed() {
                    break;
                }
                continue;
            }
            () = stopping.cancelled() => break,
        }
        let now = *digest.borrow_and_update();
        if now == last {
            continue;
        }
        last = now;
        let updated = ResourceUpdatedNotificationParam::new(uri.clone());
        if peer.notify_resource_updated(updated).await.is_err() {
            break;
        }
    }
}

/// Reads a followed resource every [`WATCH_INTERVAL`] and publishes its
/// digest, until its last follower goes (which aborts this task) or the
/// server stops. A resource that cannot be served (too large for the output
/// cap, say) is not read in full every interval: after a read that fails,
/// a file beneath its plugin's mounts is read again only once its size or
/// modification time changes; anything else waits twice as long after each
/// failure, up to [`WATCH_BACKOFF_MAX`].
async fn watch_resource(reader: Server, uri: String, digest: watch::Sender<Digest>) {
    let mut wait = WATCH_INTERVAL;
    // The file as it was before the last read, when that read failed.
    let mut failed_at: Option<Fingerprint> = None;
    loop {
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = reader.stopping.cancelled() => return,
        }
        let before = reader.fingerprint_of(&uri).await;
        if failed_at.is_some() && before == failed_at {
            continue;
        }
        match reader.digest_of(&uri, CancellationToken::new()).await {
            Ok(now) => {
                wait = WATCH_INTERVAL;
                failed_at = None;
                digest.send_if_modified(|digest| {
                    let changed = *digest != now;
                    *digest = now;
                    changed
                });
            }
            Err(error) => {
                failed_at = before;
                wait = if failed_at.is_some() {
                    WATCH_INTERVAL
                } else {
                    (wait * 2).min(WATCH_BACKOFF_MAX)
                };
                tracing::debug!(
                    uri,
                    until_it_changes = failed_at.is_some(),
                    next_look_in_s = wait.as_secs(),
                    "cannot read a followed resource: {}",
                    error.message
                );
            }
        }
    }
}
