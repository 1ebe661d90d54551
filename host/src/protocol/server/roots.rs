//! The client's MCP roots as a session's mounts, for the embedded default
//! ([`MountPolicy::client_roots`](crate::config::MountPolicy)): asked for
//! once the client is initialized and again on
//! `notifications/roots/list_changed`; calls wait a little for the first
//! answer.

use std::sync::Arc;

use rmcp::{Peer, RoleServer};

use super::Server;
use crate::config::{Mount, roots_mounts};
use crate::limits::ROOTS_WAIT;

/// What the server knows of a session's client roots.
pub(super) enum Roots {
    /// The client said it has roots; the list has not arrived yet.
    Waiting,
    /// The directories the client's roots name; `None` when it offers none
    /// (or the server does not follow them).
    Known(Option<Arc<[Mount]>>),
}

impl Server {
    /// The directories this session's calls see instead of the configured
    /// ones: the client's roots once known, waiting a little for the first
    /// answer.
    pub(super) async fn client_roots(&self) -> Option<Arc<[Mount]>> {
        let mut roots = self.roots.subscribe();
        let known = tokio::time::timeout(
            ROOTS_WAIT,
            roots.wait_for(|roots| matches!(roots, Roots::Known(_))),
        )
        .await;
        match known {
            Ok(Ok(roots)) => match &*roots {
                Roots::Known(mounts) => mounts.clone(),
                Roots::Waiting => None,
            },
            _ => {
                tracing::info!(
                    "the client has not answered roots/list; using the configured directories"
                );
                None
            }
        }
    }

    /// Asks the client for its roots and makes them this session's mounts.
    pub(super) async fn refresh_roots(&self, peer: &Peer<RoleServer>) {
        let listed = tokio::time::timeout(ROOTS_WAIT, peer.list_roots()).await;
        let mounts = match listed {
            Ok(Ok(listed)) => {
                let mounts = roots_mounts(listed.roots.iter().map(|root| root.uri.as_str()));
                if mounts.is_empty() {
                    tracing::info!("the client offers no usable roots");
                    None
                } else {
                    let shown: Vec<String> = mounts
                        .iter()
                        .map(|m| m.host.display().to_string())
                        .collect();
                    tracing::info!("mounted the client's roots read-only: {}", shown.join(", "));
                    Some(Arc::from(mounts))
                }
            }
            Ok(Err(error)) => {
                tracing::info!("roots/list failed ({error}); using the configured directories");
                None
            }
            Err(_) => {
                tracing::info!(
                    "the client did not answer roots/list; using the configured directories"
                );
                None
            }
        };
        self.roots.send_replace(Roots::Known(mounts));
    }
}
