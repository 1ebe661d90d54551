//! MCP over Streamable HTTP: one endpoint, `/mcp`, served with rmcp's
//! `StreamableHttpService` inside axum.
//!
//! [`HttpOptions`] says where to listen and who may connect. Every session
//! gets its own [`Server`] (its own log level) sharing the tools, the call
//! slots and the shutdown signal. Around rmcp's own `Host` check, this module
//! adds what rmcp leaves off by default: `Origin` validation (a foreign
//! origin gets 403) and bearer-token authentication (a missing or wrong
//! token gets 401 with `WWW-Authenticate`). Listening on a non-loopback
//! address without a token is refused. SIGTERM or SIGINT lets running calls
//! finish for the grace period, interrupts the rest, waits (a second at
//! most) for their answers to be sent on their POSTs' streams, and returns.
//!
//! Sessions are `sessions::Sessions`: rmcp's, with SSE streams that a
//! client can resume with `Last-Event-ID` after its connection drops. `DELETE`
//! answers 200 for a live session and 404 for one that has ended or never
//! existed (rmcp's own handler answers 202 to both).
//!
//! Requests in the 2026-07-28 revision have no session: rmcp serves them
//! statelessly, and their streams carry no event ids (that revision dropped
//! resumption), so a dropped connection cancels the call.
//!
//! What a client can make the server spend is bounded in three places, each
//! set by [`HttpLimits`]: connections (how many, from one address, how long
//! their headers may take) in `listener`, before authentication; a request's
//! body (its size and how long it may take) in `requests`, after it; and
//! sessions (how many, how long idle, what their replay logs may hold) in
//! `sessions`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::limits::{
    ANSWERS_WAIT, DEFAULT_BODY_TIMEOUT_MS, DEFAULT_HEADER_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_IP, MAX_REQUEST_BODY_BYTES,
};
use crate::protocol::server::Server;

mod listener;
mod requests;
mod sessions;

use listener::ConnectionLimits;
use requests::Bounds;
use sessions::Sessions;
pub use sessions::{SessionLimits, mib};

/// How to serve over HTTP.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen. Default in the CLI: `127.0.0.1:8808`.
    pub addr: SocketAddr,
    /// The bearer token clients must send; `None` only on loopback.
    pub token: Option<String>,
    /// Browser origins allowed besides loopback ones (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*`), e.g. `https://app.example.com:443`.
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed besides loopback names and the listening address.
    pub allowed_hosts: Vec<String>,
    /// How long running calls may take to finish at shutdown.
    pub shutdown_grace: Duration,
    /// What clients may make the server spend.
    pub limits: HttpLimits,
}

/// What HTTP clients may make the server spend; every default is a constant
/// of `limits.rs`.
#[derive(Clone, Copy, Debug)]
pub struct HttpLimits {
    /// Open connections at once. Default: [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
    /// Open connections from one peer address. Default:
    /// [`DEFAULT_MAX_CONNECTIONS_PER_IP`].
    pub max_connections_per_ip: usize,
    /// How long a request's headers may take, and a connection may sit idle
    /// between requests. Default: [`DEFAULT_HEADER_TIMEOUT_MS`].
    pub header_timeout: Duration,
    /// How long a request's body may take once its headers are in. Default:
    /// [`DEFAULT_BODY_TIMEOUT_MS`].
    pub body_timeout: Duration,
    /// Sessions: how many, how long idle, the replay budget.
    pub sessions: SessionLimits,
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            header_timeout: Duration::from_millis(DEFAULT_HEADER_TIMEOUT_MS),
            body_timeout: Duration::from_millis(DEFAULT_BODY_TIMEOUT_MS),
            sessions: SessionLimits::default(),
        }
    }
}

/// Serves `server` over Streamable HTTP until SIGTERM or SIGINT.
pub async fn serve_http(server: Server, options: HttpOptions) -> Result<()> {
    let stop = CancellationToken::new();
    let signal = stop.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        signal.cancel();
    });
    serve_http_until(server, options, stop).await
}

/// Serves `server` until `stop` fires, then shuts down gracefully.
pub async fn serve_http_until(
    server: Server,
    options: HttpOptions,
    stop: CancellationToken,
) -> Result<()> {
    if !options.addr.ip().is_loopback() && options.token.is_none() {
        bail!(
            "refusing to listen on {} without a token: anyone who can reach that address could \
             call the tools. Set TOOLCELL_TOKEN or pass --token-file, or listen on 127.0.0.1",
            options.addr
        );
    }

    let listener = tokio::net::TcpListener::bind(options.addr)
        .await
        .with_context(|| format!("cannot listen on {}", options.addr))?;
    let local = listener.local_addr()?;

    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    if !local.ip().is_unspecified() {
        hosts.push(local.ip().to_string());
    }
    hosts.extend(options.allowed_hosts.iter().cloned());
    let mut origins: Vec<String> = vec![
        "http://localhost:*".into(),
        "http://127.0.0.1:*".into(),
        "http://[::1]:*".into(),
    ];
    origins.extend(options.allowed_origins.iter().cloned());

    let sessions_stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_REQUEST_BODY_BYTES)
        // Otherwise rmcp primes the `initialize` response and `GET` streams
        // itself, with event id "0". `Sessions` primes every stream it can
        // resume, with ids of its own; the `initialize` response, answered
        // at once, is not resumable and gets no id.
        .with_sse_retry(None);
    config.cancellation_token = sessions_stop.clone();
    let template = server.clone();
    let limits = options.limits;
    let sessions = Sessions::new(limits.sessions);
    let service =
        StreamableHttpService::new(move || Ok(template.session()), sessions.clone(), config);
    let auth = Arc::new(options.token.clone());
    let answering = Answering::default();
    let bounds = Arc::new(Bounds {
        body_timeout: limits.body_timeout,
        sessions: sessions.clone(),
    });
    // The last layer runs first: no session is looked up, and no body read,
    // before the token is checked.
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(
            answering.clone(),
            count_answers,
        ))
        .layer(middleware::from_fn_with_state(sessions, delete_status))
        .layer(middleware::from_fn_with_state(bounds, requests::bound))
        .layer(middleware::from_fn_with_state(auth, authenticate));

    tracing::info!(
        auth = if options.token.is_some() {
            "bearer token"
        } else {
            "none (loopback)"
        },
        "serving MCP over HTTP at http://{local}/mcp"
    );

    let grace = options.shutdown_grace;
    let connections = ConnectionLimits {
        max: limits.max_connections,
        per_ip: limits.max_connections_per_ip,
        header_timeout: limits.header_timeout,
    };
    listener::serve(listener, app, connections, async move {
        stop.cancelled().await;
        tracing::info!("shutting down");
        server.drain(grace).await;
        // The interrupted calls were answered; the answers travel on
        // their POSTs' streams, which end once they are written.
        answering.settle(ANSWERS_WAIT).await;
        // Ends the sessions' open SSE streams, so connections close.
        sessions_stop.cancel();
    })
    .await;
    tracing::info!("stopped");
    Ok(())
}

/// How many POST responses are still being sent. A request's answer goes
/// out on its POST's response stream, which ends after it.
#[derive(Clone, Default)]
struct Answering(Arc<AtomicUsize>);

/// One POST response being sent; dropped with its body.
struct Sending(Arc<AtomicUsize>);

impl Drop for Sending {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Answering {
    /// Waits until no POST response is being sent, or `wait` has passed.
    async fn settle(&self, wait: Duration) {
        let cutoff = tokio::time::Instant::now() + wait;
        while self.0.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < cutoff {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// Counts each POST from its arrival until its response body has been sent
/// (or dropped with a closed connection).
async fn count_answers(
    State(answering): State<Answering>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    answering.0.fetch_add(1, Ordering::AcqRel);
    let sending = Sending(answering.0.clone());
    let response = next.run(request).await;
    response.map(|body| {
        Body::new(body.map_frame(move |frame| {
            let _ = &sending;
            frame
        }))
    })
}

/// Checks `Authorization: Bearer <token>` when a token is set.
async fn authenticate(
    State(token): State<Arc<Option<String>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = token.as_deref() else {
        return next.run(request).await;
    };
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(bearer_token);
    match presented {
        Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        Some(_) => unauthorized(r#"Bearer realm="toolcell", error="invalid_token""#),
        None => unauthorized(r#"Bearer realm="toolcell""#),
    }
}

/// The token of an `Authorization` value of the Bearer scheme, whose name is
/// case-insensitive (RFC 9110, 11.1): `Bearer`, `bearer`, `BEARER`.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// Answers `DELETE` with 200 when it ended a live session and 404 when the
/// session had already ended or never existed. rmcp's handler runs first (it
/// checks `Host`, `Origin` and the headers, and ends the session) and answers
/// 202 in both cases, which clients such as the Python SDK report as a
/// failure.
async fn delete_status(
    State(sessions): State<Arc<Sessions>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::DELETE {
        return next.run(request).await;
    }
    let session: Option<SessionId> = request
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(Into::into);
    let live = match &session {
        Some(id) => sessions.has_session(id).await.unwrap_or(false),
        None => false,
    };
    let response = next.run(request).await;
    match response.status() {
        StatusCode::ACCEPTED if live => StatusCode::OK.into_response(),
        StatusCode::ACCEPTED => {
            (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
        }
        _ => response,
    }
}

fn unauthorized(challenge: &'static str) -> Response {
    let mut response = (
        StatusCode::UNAUTHORIZED,
        "a valid bearer token is required\n",
    )
        .into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

/// Compares without an early exit, so timing does not reveal how much of a
/// guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn wait_for_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!("cannot listen for SIGINT: {error}");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!("cannot listen for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
}

/// Reads the token from `--token-file` or `TOOLCELL_TOKEN`.
pub fn load_token(token_file: Option<&std::path::Path>) -> Result<Option<String>> {
    let token = match token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?
                .trim()
                .to_string(),
        ),
        None => std::env::var("TOOLCELL_TOKEN")
            .ok()
            .map(|t| t.trim().to_string()),
    };
    match token {
        Some(token) if token.is_empty() => bail!("the token is empty"),
        Some(token) if token.len() < 16 => {
            bail!(
                "the token is too short: use at least 16 characters (e.g. `openssl rand -hex 32`)"
            )
        }
        token => Ok(token),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        // See: issue "Bounded everywhere", item 7: `bearer` was refused.
        for value in ["Bearer t0k", "bearer t0k", "BEARER t0k", "Bearer  t0k"] {
            assert_eq!(bearer_token(value), Some("t0k"), "{value}");
        }
        for value in ["Basic t0k", "Bearert0k", "t0k", ""] {
            assert_eq!(bearer_token(value), None, "{value}");
        }
    }

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"secret-token", b"secret-token"));
        assert!(!constant_time_eq(b"secret-token", b"secret-tokex"));
        assert!(!constant_time_eq(b"short", b"longer"));
    }
}
