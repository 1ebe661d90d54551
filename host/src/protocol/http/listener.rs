//! The HTTP server's accept loop: what a connection may cost before any
//! request on it is authenticated.
//!
//! [`serve`] accepts TCP connections and serves each with hyper's HTTP/1
//! connection, as `axum::serve` does, and adds the bounds `axum::serve`
//! leaves off: [`ConnectionLimits::max`] open connections at once and
//! [`ConnectionLimits::per_ip`] from one peer address (one more is answered
//! 503 and closed at once, so the client learns why rather than waiting in
//! the kernel's backlog), and a header-read timeout, after which a
//! connection that has not sent a complete request head (or sat idle since
//! its last response) is closed. A [`Ticket`] holds a connection's place in
//! the counts until its task ends.
//!
//! Graceful shutdown is `axum::serve`'s: once `shutdown` completes, no more
//! connections are accepted, each open one finishes the request it is
//! serving and closes, and [`serve`] returns when all have.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// What connections may cost.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// Open connections at once.
    pub max: usize,
    /// Open connections from one peer address.
    pub per_ip: usize,
    /// How long a request's head may take to arrive, counted from when the
    /// connection opened or its last response was sent.
    pub header_timeout: Duration,
}

/// The answer to a connection over a cap.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
    Retry-After: 1\r\n\
    Connection: close\r\n\
    Content-Type: text/plain\r\n\
    Content-Length: 58\r\n\r\n\
    too many open connections to this server; try again later\n";

/// How long accepting pauses after an error that is not the peer's (out of
/// descriptors, say), so the loop does not spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` within `limits` until `shutdown` completes,
/// then waits for the open connections to finish.
pub async fn serve(
    listener: TcpListener,
    app: axum::Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let open = Arc::new(Open::default());
    let stopping = CancellationToken::new();
    // Every connection task holds a receiver; `closed` says when all are gone.
    let (all_closed, connection) = watch::channel(());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    if !is_peer_error(&error) {
                        tracing::warn!("cannot accept a connection: {error}");
                        tokio::time::sleep(ACCEPT_PAUSE).await;
                    }
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(ticket) = open.admit(peer.ip(), limits) else {
            tracing::debug!(%peer, "refused a connection over the connection caps");
            refuse(stream);
            continue;
        };
        tokio::spawn(serve_connection(
            stream,
            app.clone(),
            limits.header_timeout,
            ticket,
            stopping.clone(),
            connection.clone(),
        ));
    }
    drop(listener);
    stopping.cancel();
    drop(connection);
    all_closed.closed().await;
}

async fn serve_connection(
    stream: TcpStream,
    app: axum::Router,
    header_timeout: Duration,
    _ticket: Ticket,
    stopping: CancellationToken,
    _connection: watch::Receiver<()>,
) {
    // Without TCP_NODELAY, the small last chunk of a streamed response waits
    // for the client's delayed ACK: about 40 ms a call on Linux.
    if let Err(error) = stream.set_nodelay(true) {
        tracing::debug!("cannot set TCP_NODELAY: {error}");
    }
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let service = TowerToHyperService::new(app);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => {
            if let Err(error) = served {
                tracing::debug!("connection ended: {error}");
            }
            return;
        }
        () = stopping.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    if let Err(error) = connection.await {
        tracing::debug!("connection ended: {error}");
    }
}

/// Answers 503 and closes, without waiting: the socket is non-blocking, and
/// a new one's send buffer has room. Best effort: a client that sees only
/// the close still learns that nothing was served.
fn refuse(stream: TcpStream) {
    use std::io::Write;
    // The standard socket writes at once; tokio's would wait for the
    // runtime to see the socket writable.
    if let Ok(stream) = stream.into_std() {
        let _ = (&stream).write(REFUSED);
    }
}

/// Errors of one connection that do not affect the next `accept`.
fn is_peer_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}

/// The connections open now: in all, and per peer address.
#[derive(Default)]
struct Open {
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    total: usize,
    per_ip: HashMap<IpAddr, usize>,
}

impl Open {
    /// A place for a connection from `ip`, if the caps leave one.
    fn admit(self: &Arc<Open>, ip: IpAddr, limits: ConnectionLimits) -> Option<Ticket> {
        // `::ffff:a.b.c.d` is the IPv4 peer a.b.c.d on a dual-stack socket.
        let ip = ip.to_canonical();
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let from_ip = counts.per_ip.get(&ip).copied().unwrap_or(0);
        if counts.total >= limits.max || from_ip >= limits.per_ip {
            return None;
        }
        counts.total += 1;
        counts.per_ip.insert(ip, from_ip + 1);
        Some(Ticket {
            open: self.clone(),
            ip,
        })
    }
}

/// One open connection's place in the counts, given back on drop.
struct Ticket {
    open: Arc<Open>,
    ip: IpAddr,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut counts = self
            .open
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        counts.total -= 1;
        if let Some(from_ip) = counts.per_ip.get_mut(&self.ip) {
            *from_ip -= 1;
            if *from_ip == 0 {
                counts.per_ip.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_ip: usize) -> ConnectionLimits {
        ConnectionLimits {
            max,
            per_ip,
            header_timeout: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_caps_count_open_connections_and_give_places_back() {
        let open = Arc::new(Open::default());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = open.admit(a, limits(3, 2)).expect("under both caps");
        let _second = open.admit(a, limits(3, 2)).expect("under both caps");
        assert!(open.admit(a, limits(3, 2)).is_none(), "per address");
        let _third = open.admit(b, limits(3, 2)).expect("another address");
        assert!(open.admit(b, limits(3, 2)).is_none(), "in all");
        drop(first);
        assert!(open.admit(a, limits(3, 2)).is_some(), "a place came back");
    }

    #[test]
    fn an_ipv4_mapped_peer_counts_as_its_ipv4_address() {
        let open = Arc::new(Open::default());
        let v4: IpAddr = "10.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        let _one = open.admit(v4, limits(8, 1)).unwrap();
        assert!(open.admit(mapped, limits(8, 1)).is_none());
    }
}
