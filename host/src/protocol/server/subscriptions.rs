//! Resource subscriptions: `resources/subscribe` (2025-11-25) follows a
//! resource for the session, `subscriptions/listen` (2026-07-28) for the
//! stream; either way the resource is read again every [`WATCH_INTERVAL`]
//! and the client is told when its contents change (or it goes).

use std::sync::PoisonError;

use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::Server;
use super::resources::{failure_error, read};
use crate::limits::{MAX_SUBSCRIPTIONS, WATCH_INTERVAL};
use crate::runtime::offerings::Failure;

impl Server {
    /// A digest of the contents of `uri`, read as `resources/read` reads it;
    /// `None` when no plugin serves it.
    pub(super) async fn digest_of(
        &self,
        uri: &str,
        ct: CancellationToken,
    ) -> Result<Option<[u8; 32]>, ErrorData> {
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
    /// client unsubscribes, the session ends or the server stops.
    pub(super) async fn follow(
        &self,
        uri: String,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let version = cx.protocol_version();
        let Some(first) = self.digest_of(&uri, cx.ct.clone()).await? else {
            let message = format!("no resource `{uri}` to subscribe to");
            return Err(failure_error(
                Failure::NotFound(message),
                Some((&uri, &version)),
            ));
        };
        {
            let watched = self.watched.lock().unwrap_or_else(PoisonError::into_inner);
            if !watched.contains_key(&uri) && watched.len() >= MAX_SUBSCRIPTIONS {
                return Err(ErrorData::invalid_params(
                    format!(
                        "this session already follows {MAX_SUBSCRIPTIONS} resources, the most \
                         it may; unsubscribe from one first"
                    ),
                    None,
                ));
            }
        }
        let task = tokio::spawn(follow(self.clone(), cx.peer.clone(), uri.clone(), first));
        let replaced = self
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(uri, task.abort_handle());
        if let Some(replaced) = replaced {
            replaced.abort();
        }
        Ok(())
    }

    /// Stops following `uri` for this session (`resources/unsubscribe`).
    pub(super) fn unfollow(&self, uri: &str) {
        let removed = self
            .watched
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uri);
        if let Some(removed) = removed {
            removed.abort();
        }
    }

    /// Follows the resources a `subscriptions/listen` stream accepted, as
    /// `resources/subscribe` follows one, until the client cancels the
    /// stream or the server stops.
    pub(super) async fn follow_stream(&self, context: SubscriptionContext) {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let sink = context.sink().clone();
        let follow = async {
            let mut last = Vec::with_capacity(uris.len());
            for uri in &uris {
                last.push(
                    self.digest_of(uri, CancellationToken::new())
                        .await
                        .ok()
                        .flatten(),
                );
            }
            loop {
                tokio::time::sleep(WATCH_INTERVAL).await;
                for (uri, last) in uris.iter().zip(last.iter_mut()) {
                    let Ok(now) = self.digest_of(uri, CancellationToken::new()).await else {
                        continue;
                    };
                    if now != *last {
                        *last = now;
                        if sink.notify_resource_updated(uri.clone()).await.is_err() {
                            return;
                        }
                    }
                }
            }
        };
        tokio::select! {
            () = context.cancelled() => {}
            () = self.stopping.cancelled() => {}
            () = follow => {}
        }
    }
}

/// What a `subscriptions/listen` stream is granted of what it asked:
/// resources only, at most [`MAX_SUBSCRIPTIONS`] of them. The lists of
/// tools, prompts and templates do not change while the server runs. rmcp
/// keeps what `get_info` declares, so while the plugins are still loading
/// (nothing declared yet) the acknowledgment lists no resources, and the
/// client sees that.
pub(super) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::default();
    accepted.resource_subscriptions = requested
        .resource_subscriptions
        .as_ref()
        .map(|uris| uris.iter().take(MAX_SUBSCRIPTIONS).cloned().collect());
    accepted
}

/// Follows a subscribed resource for a session: reads it every
/// [`WATCH_INTERVAL`] and sends `notifications/resources/updated` when its
/// contents change (or it goes), until the session ends, the client
/// unsubscribes (which aborts this task) or the server stops. `last` is the
/// digest of the contents when the client subscribed.
async fn follow(server: Server, peer: Peer<RoleServer>, uri: String, last: [u8; 32]) {
    let mut last = Some(last);
    loop {
        tokio::time::sleep(WATCH_INTERVAL).await;
        if peer.is_transport_closed() || server.stopping.is_cancelled() {
            break;
        }
        let now = match server.digest_of(&uri, CancellationToken::new()).await {
            Ok(now) => now,
            Err(error) => {
                tracing::debug!(uri, "cannot read a followed resource: {}", error.message);
                continue;
            }
        };
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
