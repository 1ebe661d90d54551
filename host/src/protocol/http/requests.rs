//! What one request may cost before rmcp sees it, and the answers rmcp
//! would get wrong.
//!
//! [`bound`] reads a request's whole body within a time limit and a size
//! limit (rmcp reads it whole anyway, but with neither bound on time), then
//! looks at what it asks: an `initialize` while every session is taken gets
//! 503 with `Retry-After` here, rather than rmcp's 500, and a method that
//! the 2026-07-28 revision removed gets -32601 even without the `Mcp-Name`
//! header rmcp would otherwise demand for it first (-32020).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde_json::{Value, json};

use super::sessions::Sessions;
use crate::limits::MAX_REQUEST_BODY_BYTES;

/// When a client refused for want of a session is told to try again, in
/// seconds: sessions free up as clients end them or they expire.
const RETRY_SESSIONS_SECS: u64 = 30;

/// Methods the 2026-07-28 revision removed that name a resource, so rmcp
/// checks them for an `Mcp-Name` header before anything says they are gone.
const REMOVED_WITH_A_NAME: &[&str] = &["resources/subscribe", "resources/unsubscribe"];

/// What [`bound`] needs.
pub struct Bounds {
    /// How long a body may take to arrive once the headers have.
    pub body_timeout: Duration,
    /// Asked whether an `initialize` would find room.
    pub sessions: Arc<Sessions>,
}

/// Reads the body within [`Bounds::body_timeout`] and
/// [`MAX_REQUEST_BODY_BYTES`], and answers what rmcp would answer wrongly.
pub async fn bound(State(bounds): State<Arc<Bounds>>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let read = Limited::new(body, MAX_REQUEST_BODY_BYTES).collect();
    let body = match tokio::time::timeout(bounds.body_timeout, read).await {
        Ok(Ok(body)) => body.to_bytes(),
        Ok(Err(error)) if error.downcast_ref::<LengthLimitError>().is_some() => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is over the limit of {MAX_REQUEST_BODY_BYTES} bytes\n"),
            );
        }
        Ok(Err(error)) => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("the request body could not be read: {error}\n"),
            );
        }
        Err(_) => {
            tracing::debug!("a request body did not arrive in time");
            let mut response = refuse(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {} ms (--body-timeout-ms)\n",
                    bounds.body_timeout.as_millis()
                ),
            );
            // The rest of the body may still come: the connection cannot
            // carry another request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    if parts.method == Method::POST
        && let Some(response) = answer_early(&parts.headers, &body, &bounds.sessions)
    {
        return response;
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// The answer to a POST that rmcp would get wrong, if it is one.
fn answer_early(
    headers: &axum::http::HeaderMap,
    body: &Bytes,
    sessions: &Sessions,
) -> Option<Response> {
    let no_session = !headers.contains_key("mcp-session-id");
    let modern = headers
        .get("mcp-protocol-version")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|version| version >= "2026-07-28");
    let removed = modern && !headers.contains_key("mcp-name");
    // Parsed only when the answer may depend on it.
    let full = no_session && sessions.is_full();
    if !full && !removed {
        return None;
    }
    let message: Value = serde_json::from_slice(body).ok()?;
    let method = message.get("method").and_then(Value::as_str)?;
    if full && method == "initialize" {
        tracing::warn!("refused an HTTP session: every one of --max-sessions is live");
        let mut response = refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "every HTTP session this server keeps (--max-sessions) is live; try again in \
                 {RETRY_SESSIONS_SECS} s\n"
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_SESSIONS_SECS));
        return Some(response);
    }
    if removed && REMOVED_WITH_A_NAME.contains(&method) {
        // As rmcp answers an unknown method on this revision: 404 and -32601.
        let error = json!({
            "jsonrpc": "2.0",
            "id": message.get("id").cloned().unwrap_or(Value::Null),
            "error": {
                "code": -32601,
                "message": format!(
                    "{method} is not part of MCP 2026-07-28: follow resources with \
                     subscriptions/listen"
                ),
            },
        });
        let json = [(header::CONTENT_TYPE, "application/json")];
        return Some((StatusCode::NOT_FOUND, json, error.to_string()).into_response());
    }
    None
}

fn refuse(status: StatusCode, message: String) -> Response {
    (status, message).into_response()
}
