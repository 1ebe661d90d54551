//! Registry credentials: from the environment variables a `[[plugin]]` names, else from the
//! Docker config file (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`), else none.
//!
//! Credentials go only into the `Authorization` header of requests to the registry and its token
//! realm: never to a plugin, never into a log line or an error message ([`Credentials`]'s `Debug`
//! hides them).

use std::fmt;
use std::path::PathBuf;

use anyhow::{Context, Result};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::config::OciAuth;

/// Credentials for one registry.
#[derive(Clone)]
pub(super) enum Credentials {
    /// A user name and password (or access token): HTTP Basic, and for the token realm.
    Basic { username: String, password: String },
    /// A bearer token sent as is.
    Token(String),
    /// A Docker config `identitytoken`: an OAuth2 refresh token for the token realm.
    Identity(String),
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            Credentials::Basic { .. } => "Basic",
            Credentials::Token(_) => "Token",
            Credentials::Identity(_) => "Identity",
        };
        write!(f, "Credentials::{kind}(hidden)")
    }
}

/// Where credentials were found, for the log (never the credentials themselves).
pub(super) struct Found {
    /// The credentials, if any.
    pub credentials: Option<Credentials>,
    /// Where they came from, or why there are none.
    pub note: Option<String>,
}

/// The credentials for `registry`: the table's environment variables first, then the Docker
/// config file. A variable the table names that is not set is an error.
pub(super) fn lookup(registry: &str, table: Option<&OciAuth>) -> Result<Found> {
    if let Some(table) = table {
        let var = |name: &str, key: &str| {
            std::env::var(name).with_context(|| {
                format!("auth.{key} names the environment variable `{name}`, which is not set (or not UTF-8)")
            })
        };
        let credentials = match table {
            OciAuth::Basic {
                username_env,
                password_env,
            } => Credentials::Basic {
                username: var(username_env, "username_env")?,
                password: var(password_env, "password_env")?,
            },
            OciAuth::Token { token_env } => Credentials::Token(var(token_env, "token_env")?),
        };
        return Ok(Found {
            credentials: Some(credentials),
            note: None,
        });
    }
    let Some(path) = docker_config_path() else {
        return Ok(Found {
            credentials: None,
            note: None,
        });
    };
    let text = match std::fs::read(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Found {
                credentials: None,
                note: None,
            });
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    from_docker_config(&text, registry)
        .with_context(|| format!("cannot use the Docker config file {}", path.display()))
}

fn docker_config_path() -> Option<PathBuf> {
    match std::env::var_os("DOCKER_CONFIG") {
        Some(dir) => Some(PathBuf::from(dir).join("config.json")),
        None => dirs::home_dir().map(|home| home.join(".docker").join("config.json")),
    }
}

/// The `auths` entry for `registry` in a Docker config file's JSON.
fn from_docker_config(text: &[u8], registry: &str) -> Result<Found> {
    let json: serde_json::Value = serde_json::from_slice(text).context("not JSON")?;
    let wanted = normalize(registry);
    let entry = json
        .get("auths")
        .and_then(|auths| auths.as_object())
        .and_then(|auths| {
            auths
                .iter()
                .find_map(|(key, entry)| (normalize(key) == wanted).then_some(entry))
        });
    if let Some(entry) = entry {
        let field = |name: &str| {
            entry
                .get(name)
                .and_then(|v| v.as_str())
                .filter(|v| !v.is_empty())
        };
        if let Some(token) = field("identitytoken") {
            return Ok(Found {
                credentials: Some(Credentials::Identity(token.to_owned())),
                note: None,
            });
        }
        if let Some(auth) = field("auth") {
            let decoded = BASE64
                .decode(auth.trim())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .context("the `auth` of this registry is not base64 of `user:password`")?;
            let (username, password) = decoded
                .split_once(':')
                .context("the `auth` of this registry is not base64 of `user:password`")?;
            return Ok(Found {
                credentials: Some(Credentials::Basic {
                    username: username.to_owned(),
                    password: password.to_owned(),
                }),
                note: None,
            });
        }
        if let (Some(username), Some(password)) = (field("username"), field("password")) {
            return Ok(Found {
                credentials: Some(Credentials::Basic {
                    username: username.to_owned(),
                    password: password.to_owned(),
                }),
                note: None,
            });
        }
    }
    let helper = json
        .get("credHelpers")
        .and_then(|helpers| helpers.as_object())
        .and_then(|helpers| {
            helpers
                .iter()
                .find_map(|(key, helper)| (normalize(key) == wanted).then_some(helper))
        })
        .or_else(|| json.get("credsStore"))
        .and_then(|helper| helper.as_str());
    Ok(Found {
        credentials: None,
        note: helper.map(|helper| {
            format!(
                "the Docker config keeps the credentials of {registry} in the credential helper \
                 `docker-credential-{helper}`, which Toolcell does not run (credential helpers are \
                 unsupported); name environment variables holding them with `auth = {{ \
                 username_env = \"...\", password_env = \"...\" }}` in the plugin's table"
            )
        }),
    })
}

/// A registry as Docker config keys write it, without scheme or path; Docker Hub's names as one.
fn normalize(key: &str) -> String {
    let key = key
        .trim_start_matches("https://")
        .trim_start_matches("http://");
    let host = key.split('/').next().unwrap_or(key).to_ascii_lowercase();
    match host.as_str() {
        "index.docker.io" | "registry-1.docker.io" | "docker.io" => "docker.io".to_owned(),
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_config_entries() {
        let config = br#"{"auths": {
            "https://index.docker.io/v1/": {"auth": "dXNlcjpwYXNz"},
            "localhost:5000": {"identitytoken": "refresh"},
            "ghcr.io": {}
        }, "credHelpers": {"ghcr.io": "gh"}}"#;
        let hub = from_docker_config(config, "docker.io").unwrap();
        match hub.credentials {
            Some(Credentials::Basic { username, password }) => {
                assert_eq!((username.as_str(), password.as_str()), ("user", "pass"));
            }
            other => panic!("expected Basic, got {other:?}"),
        }
        let local = from_docker_config(config, "localhost:5000").unwrap();
        assert!(matches!(local.credentials, Some(Credentials::Identity(_))));
        let ghcr = from_docker_config(config, "ghcr.io").unwrap();
        assert!(ghcr.credentials.is_none());
        assert!(ghcr.note.unwrap().contains("docker-credential-gh"));
        let none = from_docker_config(config, "quay.io").unwrap();
        assert!(none.credentials.is_none() && none.note.is_none());
        // The Debug form hides the secrets.
        let shown = format!("{:?}", Credentials::Token("s3cret".to_owned()));
        assert!(!shown.contains("s3cret"));
    }
}
