//! Outbound HTTP(S), for plugins granted `network = [...]` in `plugins.toml`.
//!
//! The host refuses a request to any host the grant does not name, before a
//! connection is made; [`get`] turns that refusal into an [`Error`] naming
//! the host.

use crate::__private::bindings::wasi::http::outgoing_handler;
use crate::__private::bindings::wasi::http::types::{
    ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, Scheme,
};
use crate::__private::bindings::wasi::io::streams::StreamError;
use crate::Error;

/// A response: status, headers and the whole body.
#[derive(Clone, Debug)]
pub struct Response {
    /// The status code, such as 200.
    pub status: u16,
    /// The headers, names in lowercase, values as text (lossy).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// GETs `url` (`http://` or `https://`), reading at most `max_bytes` of
/// body; a longer body is an error rather than a silent cut.
pub fn get(url: &str, max_bytes: usize) -> Result<Response, Error> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else {
        return Err(Error::new(format!(
            "`{url}` is not an http:// or https:// URL"
        )));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(Error::new(format!("`{url}` has no host")));
    }
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };

    let headers = Fields::new();
    headers
        .append("user-agent", b"toolcell-plugin")
        .map_err(|e| Error::new(format!("cannot set a header: {e:?}")))?;
    let request = OutgoingRequest::new(headers);
    let invalid = |what: &str| Error::new(format!("`{url}` has an invalid {what}"));
    request
        .set_method(&Method::Get)
        .map_err(|()| invalid("method"))?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|()| invalid("scheme"))?;
    request
        .set_authority(Some(authority))
        .map_err(|()| invalid("host"))?;
    request
        .set_path_with_query(Some(&path))
        .map_err(|()| invalid("path"))?;
    let body = request
        .body()
        .map_err(|()| Error::new("cannot open the request body"))?;
    OutgoingBody::finish(body, None).map_err(|e| request_error(authority, &e))?;

    let pending =
        outgoing_handler::handle(request, None).map_err(|e| request_error(authority, &e))?;
    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(e))) => return Err(request_error(authority, &e)),
        Some(Err(())) | None => {
            return Err(Error::new(format!(
                "the request to `{authority}` ended without a response"
            )));
        }
    };
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| {
            (
                name.to_ascii_lowercase(),
                String::from_utf8_lossy(&value).into_owned(),
            )
        })
        .collect();
    let incoming = response
        .consume()
        .map_err(|()| Error::new("cannot read the response body"))?;
    let stream = incoming
        .stream()
        .map_err(|()| Error::new("cannot read the response body"))?;
    let mut body = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => {
                body.extend_from_slice(&chunk);
                if body.len() > max_bytes {
                    return Err(Error::new(format!(
                        "the response from `{authority}` is larger than {max_bytes} bytes"
                    )));
                }
            }
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(Error::new(format!(
                    "reading the response from `{authority}` failed: {}",
                    e.to_debug_string()
                )));
            }
        }
    }
    drop(stream);
    let _trailers = IncomingBody::finish(incoming);
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn request_error(authority: &str, code: &ErrorCode) -> Error {
    match code {
        ErrorCode::HttpRequestDenied => Error::new(format!(
            "the sandbox refused the request to `{authority}`: that host is not in this \
             plugin's `network` grant in plugins.toml"
        )),
        ErrorCode::DnsError(_) => Error::new(format!("cannot resolve `{authority}`")),
        ErrorCode::ConnectionRefused => Error::new(format!("`{authority}` refused the connection")),
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => {
            Error::new(format!("`{authority}` timed out"))
        }
        other => Error::new(format!("the request to `{authority}` failed: {other:?}")),
    }
}
