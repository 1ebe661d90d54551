//! A small client for the part of the OCI distribution API a pull needs: `GET` of manifests and
//! blobs, the `WWW-Authenticate` dance (Bearer tokens from the registry's realm, or Basic), and
//! redirects for blobs, over hyper's HTTP/1 connections with rustls (ring, Mozilla's roots).
//!
//! Every body is streamed into a caller's sink with a size cap; every step has a timeout
//! ([`OCI_CONNECT_TIMEOUT`], [`OCI_READ_TIMEOUT`]); credentials are sent only to the registry
//! and its token realm, never to a host a blob redirect leads to, and never logged.

use std::net::IpAddr;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::{self, RootCertStore, pki_types::ServerName};
use url::Url;

use super::auth::Credentials;
use super::manifest;
use crate::limits::{
    OCI_CONNECT_TIMEOUT, OCI_MAX_MANIFEST_BYTES, OCI_MAX_REDIRECTS, OCI_READ_TIMEOUT,
};

/// What a request failed with, when the caller acts on it.
#[derive(Debug)]
pub(super) enum Failure {
    /// 404: the manifest, tag or blob does not exist.
    NotFound,
    /// Anything else, explained.
    Other(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure::Other(error)
    }
}

impl Failure {
    /// The error, a 404 said as `what` was not found.
    pub(super) fn into_error(self, what: &str) -> anyhow::Error {
        match self {
            Failure::NotFound => anyhow::anyhow!("{what} was not found (404)"),
            Failure::Other(error) => error,
        }
    }
}

/// A response's head, once its body has gone to the sink.
pub(super) struct Received {
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
}

/// One registry: where it answers, how, and with which credentials.
pub(super) struct Registry {
    /// The registry as written in the reference (`ghcr.io`, `localhost:5000`).
    pub name: String,
    /// The base of its API: `https://HOST[:PORT]` (or `http://` on loopback or when insecure).
    base: Url,
    plain_http: bool,
    credentials: Option<Credentials>,
    /// A note for the error when the registry wants credentials we do not have.
    missing_note: Option<String>,
    /// The last Bearer token the realm granted, tried first on the next request.
    bearer: Option<String>,
    /// The registry asked for Basic credentials: send them with every request.
    use_basic: bool,
    tls: Arc<rustls::ClientConfig>,
}

impl Registry {
    /// A client for `name`; `insecure` allows plain HTTP to a registry not on loopback.
    pub(super) fn new(
        name: &str,
        insecure: bool,
        credentials: Option<Credentials>,
        missing_note: Option<String>,
    ) -> Result<Registry> {
        // Docker Hub's API lives on another host than its name.
        let host = if name == "docker.io" {
            "registry-1.docker.io"
        } else {
            name
        };
        let probe = Url::parse(&format!("http://{host}/"))
            .with_context(|| format!("invalid registry {name:?}"))?;
        let loopback = probe.host().is_some_and(|host| match host {
            url::Host::Domain(domain) => domain == "localhost",
            url::Host::Ipv4(ip) => IpAddr::V4(ip).is_loopback(),
            url::Host::Ipv6(ip) => IpAddr::V6(ip).is_loopback(),
        });
        let plain_http = loopback || insecure;
        if insecure && !loopback {
            tracing::warn!(
                registry = name,
                "insecure = true: talking to the registry over plain HTTP, unauthenticated and \
                 unencrypted"
            );
        }
        let scheme = if plain_http { "http" } else { "https" };
        let base = Url::parse(&format!("{scheme}://{host}/"))
            .with_context(|| format!("invalid registry {name:?}"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .context("cannot set up TLS")?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Registry {
            name: name.to_owned(),
            base,
            plain_http,
            credentials,
            missing_note,
            bearer: None,
            use_basic: false,
            tls: Arc::new(tls),
        })
    }

    /// The URL of `path` (`/v2/...`) on this registry.
    pub(super) fn url(&self, path: &str) -> Result<Url> {
        self.base
            .join(path)
            .with_context(|| format!("invalid registry path {path:?}"))
    }

    /// `GET url` of a manifest (any of the layouts [`manifest::ACCEPT`] names, at most
    /// [`OCI_MAX_MANIFEST_BYTES`], no redirects): its bytes and what the registry said of them.
    pub(super) async fn get_manifest(&mut self, url: Url) -> Result<(Vec<u8>, Received), Failure> {
        let mut bytes = Vec::new();
        let received = self
            .get(
                url,
                manifest::ACCEPT,
                OCI_MAX_MANIFEST_BYTES,
                false,
                &mut |chunk| {
                    bytes.extend_from_slice(chunk);
                    Ok(())
                },
            )
            .await?;
        Ok((bytes, received))
    }

    /// `GET url` with `accept`, its body (at most `cap` bytes) given to `sink` piece by piece;
    /// `follow` allows redirects (blobs).
    pub(super) async fn get(
        &mut self,
        url: Url,
        accept: &str,
        cap: u64,
        follow: bool,
        sink: &mut (dyn FnMut(&[u8]) -> Result<()> + Send),
    ) -> Result<Received, Failure> {
        let mut url = url;
        let mut redirects = 0;
        let mut retried_auth = false;
        loop {
            let on_registry = self.same_origin(&url);
            let authorization = if on_registry {
                self.authorization()
            } else {
                None
            };
            let response = send(&self.tls, Method::GET, &url, accept, authorization, None).await?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED && on_registry && !retried_auth {
                retried_auth = true;
                let challenge = response
                    .headers()
                    .get(header::WWW_AUTHENTICATE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                self.answer_challenge(&challenge).await?;
                continue;
            }
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                let mut message =
                    format!("{} refused access to {} ({status})", self.name, url.path());
                match (&self.credentials, &self.missing_note) {
                    (Some(_), _) => message.push_str(": check the credentials"),
                    (None, Some(note)) => message.push_str(&format!(": {note}")),
                    (None, None) => message.push_str(
                        ": no credentials were found for it; log in with `docker login` (an \
                         `auths` entry in the Docker config file) or name environment variables \
                         with `auth = { username_env = \"...\", password_env = \"...\" }`",
                    ),
                }
                return Err(Failure::Other(anyhow::anyhow!(message)));
            }
            if status == StatusCode::NOT_FOUND {
                return Err(Failure::NotFound);
            }
            if status.is_redirection() {
                if !follow {
                    return Err(Failure::Other(anyhow::anyhow!(
                        "{} answered {} with a redirect ({status}), which is only followed for blobs",
                        self.name,
                        url.path()
                    )));
                }
                redirects += 1;
                if redirects > OCI_MAX_REDIRECTS {
                    return Err(Failure::Other(anyhow::anyhow!(
                        "more than {OCI_MAX_REDIRECTS} redirects fetching {} from {}",
                        url.path(),
                        self.name
                    )));
                }
                let location = response
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .context("a redirect without a Location header")?;
                let next = url
                    .join(location)
                    .with_context(|| format!("a redirect to an invalid URL {location:?}"))?;
                self.check_redirect(&next)?;
                tracing::debug!(registry = %self.name, host = next.host_str(), "following a blob redirect");
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(Failure::Other(anyhow::anyhow!(
                    "{} answered {status} for {}",
                    self.name,
                    url.path()
                )));
            }
            let content_type = response
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .map(|v| v.split(';').next().unwrap_or(v).trim().to_owned());
            read_body(response, cap, &url, sink).await?;
            return Ok(Received { content_type });
        }
    }

    fn same_origin(&self, url: &Url) -> bool {
        url.scheme() == self.base.scheme()
            && url.host_str() == self.base.host_str()
            && url.port_or_known_default() == self.base.port_or_known_default()
    }

    /// A blob may be served from another host (a CDN), over HTTPS; plain HTTP only back to the
    /// registry itself when it is allowed plain HTTP.
    fn check_redirect(&self, next: &Url) -> Result<()> {
        match next.scheme() {
            "https" => Ok(()),
            "http" if self.plain_http && next.host_str() == self.base.host_str() => Ok(()),
            _ => bail!(
                "{} redirected a blob to {}://{}, which is refused: only HTTPS redirects are \
                 followed",
                self.name,
                next.scheme(),
                next.host_str().unwrap_or("?")
            ),
        }
    }

    fn authorization(&self) -> Option<HeaderValue> {
        let value = match (&self.bearer, &self.credentials) {
            (Some(token), _) => format!("Bearer {token}"),
            (None, Some(Credentials::Token(token))) => format!("Bearer {token}"),
            (None, Some(Credentials::Basic { username, password })) if self.use_basic => {
                format!("Basic {}", BASE64.encode(format!("{username}:{password}")))
            }
            _ => return None,
        };
        let mut value = HeaderValue::from_str(&value).ok()?;
        value.set_sensitive(true);
        Some(value)
    }

    /// Gets what a 401's challenge asks for: a Bearer token from its realm, or Basic
    /// credentials (sent with every later request).
    async fn answer_challenge(&mut self, challenge: &str) -> Result<()> {
        let (scheme, params) = parse_challenge(challenge);
        if scheme.eq_ignore_ascii_case("basic") {
            self.bearer = None;
            self.use_basic = matches!(self.credentials, Some(Credentials::Basic { .. }));
            return Ok(());
        }
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Ok(());
        }
        let realm = params
            .iter()
            .find_map(|(k, v)| (k == "realm").then_some(v.as_str()))
            .context("the registry's Bearer challenge names no realm")?;
        let mut realm =
            Url::parse(realm).with_context(|| format!("invalid token realm {realm:?}"))?;
        if realm.scheme() != "https" && !(realm.scheme() == "http" && self.plain_http) {
            bail!(
                "{} asks for a token from {realm}, which is not HTTPS: refused",
                self.name
            );
        }
        {
            let mut query = realm.query_pairs_mut();
            for (key, value) in &params {
                if key == "service" || key == "scope" {
                    query.append_pair(key, value);
                }
            }
        }
        let (method, body, authorization) = match &self.credentials {
            Some(Credentials::Basic { username, password }) => {
                let encoded = BASE64.encode(format!("{username}:{password}"));
                let mut value = HeaderValue::from_str(&format!("Basic {encoded}"))
                    .context("credentials that cannot be sent in a header")?;
                value.set_sensitive(true);
                (Method::GET, None, Some(value))
            }
            Some(Credentials::Identity(refresh)) => {
                // A Docker config `identitytoken` is an OAuth2 refresh token.
                let mut form = url::form_urlencoded::Serializer::new(String::new());
                form.append_pair("grant_type", "refresh_token");
                form.append_pair("client_id", "toolcell");
                form.append_pair("refresh_token", refresh);
                for (key, value) in &params {
                    if key == "service" || key == "scope" {
                        form.append_pair(key, value);
                    }
                }
                (Method::POST, Some(form.finish()), None)
            }
            Some(Credentials::Token(_)) | None => (Method::GET, None, None),
        };
        let response = send(
            &self.tls,
            method,
            &realm,
            "application/json",
            authorization,
            body,
        )
        .await?;
        let status = response.status();
        if !status.is_success() {
            bail!(
                "the token service of {} answered {status}{}",
                self.name,
                if self.credentials.is_some() {
                    ": check the credentials"
                } else {
                    ""
                }
            );
        }
        let mut text = Vec::new();
        read_body(response, 1 << 20, &realm, &mut |chunk| {
            text.extend_from_slice(chunk);
            Ok(())
        })
        .await?;
        let json: serde_json::Value =
            serde_json::from_slice(&text).context("the token service answered no JSON")?;
        let token = json
            .get("token")
            .or_else(|| json.get("access_token"))
            .and_then(|t| t.as_str())
            .context("the token service's answer holds no token")?;
        self.bearer = Some(token.to_owned());
        Ok(())
    }
}

/// The scheme of a `WWW-Authenticate` challenge and its `key="value"` parameters.
fn parse_challenge(challenge: &str) -> (String, Vec<(String, String)>) {
    let challenge = challenge.trim();
    let (scheme, rest) = challenge.split_once(' ').unwrap_or((challenge, ""));
    let mut params = Vec::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = after.trim_start();
        let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
            match quoted.find('"') {
                Some(end) => (&quoted[..end], &quoted[end + 1..]),
                None => (quoted, ""),
            }
        } else {
            match after.find(',') {
                Some(end) => (&after[..end], &after[end..]),
                None => (after, ""),
            }
        };
        params.push((key, value.to_owned()));
        rest = remaining.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_owned(), params)
}

/// Sends one request on a fresh connection and returns the response head, within
/// [`OCI_CONNECT_TIMEOUT`] to connect and [`OCI_READ_TIMEOUT`] for the head.
async fn send(
    tls: &Arc<rustls::ClientConfig>,
    method: Method,
    url: &Url,
    accept: &str,
    authorization: Option<HeaderValue>,
    form: Option<String>,
) -> Result<http::Response<hyper::body::Incoming>> {
    let host = url.host_str().context("a URL without a host")?.to_owned();
    let port = url
        .port_or_known_default()
        .context("a URL without a port")?;
    let tcp = tokio::time::timeout(
        OCI_CONNECT_TIMEOUT,
        TcpStream::connect((host.trim_matches(['[', ']']), port)),
    )
    .await
    .map_err(|_| {
        anyhow::anyhow!("connecting to {host}:{port} timed out after {OCI_CONNECT_TIMEOUT:?}")
    })?
    .with_context(|| format!("cannot connect to {host}:{port}"))?;
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_owned(),
    };
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, authority)
        .header(header::ACCEPT, accept)
        .header(
            header::USER_AGENT,
            concat!("toolcell/", env!("CARGO_PKG_VERSION")),
        );
    if let Some(value) = authorization {
        request = request.header(header::AUTHORIZATION, value);
    }
    let body = match form {
        Some(form) => {
            request = request.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            Full::new(Bytes::from(form))
        }
        None => Full::new(Bytes::new()),
    };
    let request = request.body(body).context("cannot build the request")?;
    let exchange = async {
        if url.scheme() == "https" {
            let name = ServerName::try_from(host.trim_matches(['[', ']']).to_owned())
                .with_context(|| format!("invalid TLS server name {host:?}"))?;
            let stream = TlsConnector::from(tls.clone())
                .connect(name, tcp)
                .await
                .with_context(|| format!("TLS with {host} failed"))?;
            exchange(stream, request).await
        } else {
            exchange(tcp, request).await
        }
    };
    tokio::time::timeout(OCI_READ_TIMEOUT, exchange)
        .await
        .map_err(|_| anyhow::anyhow!("{host} did not answer within {OCI_READ_TIMEOUT:?}"))?
}

async fn exchange<S>(
    stream: S,
    request: Request<Full<Bytes>>,
) -> Result<http::Response<hyper::body::Incoming>>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .context("HTTP handshake failed")?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::debug!("registry connection ended: {error}");
        }
    });
    sender
        .send_request(request)
        .await
        .context("the request failed")
}

/// Streams the body into `sink`, refusing more than `cap` bytes and a pause longer than
/// [`OCI_READ_TIMEOUT`].
async fn read_body(
    response: http::Response<hyper::body::Incoming>,
    cap: u64,
    url: &Url,
    sink: &mut (dyn FnMut(&[u8]) -> Result<()> + Send),
) -> Result<()> {
    if let Some(length) = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        && length > cap
    {
        bail!(
            "{} is {length} bytes, over the limit of {cap} bytes: refused",
            url.path()
        );
    }
    let mut body = response.into_body();
    let mut total: u64 = 0;
    loop {
        let frame = tokio::time::timeout(OCI_READ_TIMEOUT, body.frame())
            .await
            .map_err(|_| {
                anyhow::anyhow!("reading {} stalled for {OCI_READ_TIMEOUT:?}", url.path())
            })?;
        let Some(frame) = frame else {
            return Ok(());
        };
        let frame = frame.with_context(|| format!("reading {} failed", url.path()))?;
        if let Ok(data) = frame.into_data() {
            total += data.len() as u64;
            if total > cap {
                bail!("{} is over the limit of {cap} bytes: refused", url.path());
            }
            sink(&data)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(
            params,
            vec![
                ("realm".to_owned(), "https://auth.example/token".to_owned()),
                ("service".to_owned(), "registry.example".to_owned()),
                ("scope".to_owned(), "repository:a/b:pull".to_owned()),
            ]
        );
        let (scheme, params) = parse_challenge(r#"Basic realm="Registry Realm""#);
        assert_eq!(scheme, "Basic");
        assert_eq!(params[0].1, "Registry Realm");
    }
}
