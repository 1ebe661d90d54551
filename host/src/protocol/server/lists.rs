//! Telling clients that the lists of tools, resources and prompts changed,
//! when a reload replaced what is served ([`Loading::replace`](super::Loading::replace)).
//!
//! Each [`Served`] carries [`Lists`], a digest of each list as clients see
//! it; [`next_change`] waits for a replacement that changes at least one
//! and says which ([`Changed`]), so a reload that changes nothing a client
//! sees tells it nothing. A 2025-11-25 session gets the notifications from
//! a task of its own ([`Server::tell_list_changes`]); a 2026-07-28
//! `subscriptions/listen` stream that asked for them gets them on the
//! stream (`subscriptions`).

use std::sync::Arc;

use rmcp::{Peer, RoleServer};
use sha2::{Digest as _, Sha256};
use tokio::sync::watch;

use super::{Served, Server};
use crate::limits::WATCH_INTERVAL;
use crate::protocol::mcp::Catalog;

/// A digest of each list a client may be told changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Lists {
    tools: [u8; 32],
    /// Resources and resource templates together.
    resources: [u8; 32],
    prompts: [u8; 32],
}

impl Lists {
    pub(super) fn of(catalog: &Catalog) -> Lists {
        fn digest(value: &impl serde::Serialize) -> [u8; 32] {
            Sha256::digest(serde_json::to_vec(value).unwrap_or_default()).into()
        }
        Lists {
            tools: digest(&catalog.tools),
            resources: digest(&(&catalog.resources, &catalog.templates)),
            prompts: digest(&catalog.prompts),
        }
    }
}

/// Which lists a replacement changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Changed {
    pub(super) tools: bool,
    pub(super) resources: bool,
    pub(super) prompts: bool,
}

/// What is served now, as a client was last told of it.
pub(super) type Seen = Option<Lists>;

/// What `served` holds now, to compare later replacements with.
pub(super) fn seen(served: &mut watch::Receiver<Option<Arc<Served>>>) -> Seen {
    served
        .borrow_and_update()
        .as_ref()
        .map(|served| served.lists)
}

/// Waits for a replacement of what is served that changes a list since
/// `last` (which it then updates), and says which lists changed; `None` once
/// nothing more can be served. The first load (from nothing) is no change:
/// clients list what is served once it is there.
pub(super) async fn next_change(
    served: &mut watch::Receiver<Option<Arc<Served>>>,
    last: &mut Seen,
) -> Option<Changed> {
    loop {
        served.changed().await.ok()?;
        let Some(now) = seen(served) else {
            continue;
        };
        let Some(before) = last.replace(now) else {
            continue;
        };
        let changed = Changed {
            tools: before.tools != now.tools,
            resources: before.resources != now.resources,
            prompts: before.prompts != now.prompts,
        };
        if changed != Changed::default() {
            return Some(changed);
        }
    }
}

impl Server {
    /// Tells this session's client (`peer`) of every change to the lists
    /// from now on, until the session ends or the server stops.
    pub(super) fn tell_list_changes(&self, peer: Peer<RoleServer>) {
        let mut served = self.served.clone();
        let stopping = self.stopping.clone();
        tokio::spawn(async move {
            let mut last = seen(&mut served);
            loop {
                let changed = tokio::select! {
                    changed = next_change(&mut served, &mut last) => changed,
                    () = stopping.cancelled() => None,
                    () = tokio::time::sleep(WATCH_INTERVAL) => {
                        if peer.is_transport_closed() {
                            return;
                        }
                        continue;
                    }
                };
                let Some(changed) = changed else {
                    return;
                };
                tracing::debug!(?changed, "telling the client its lists changed");
                let sent = async {
                    if changed.tools {
                        peer.notify_tool_list_changed().await?;
                    }
                    if changed.resources {
                        peer.notify_resource_list_changed().await?;
                    }
                    if changed.prompts {
                        peer.notify_prompt_list_changed().await?;
                    }
                    Ok::<(), rmcp::service::ServiceError>(())
                };
                if sent.await.is_err() {
                    return;
                }
            }
        });
    }
}
