//! `path = "oci://..."`: parsing a registry reference, and the keys a `[[plugin]]` from a
//! registry may set (`allow_unpinned`, `verify`, `insecure`, `auth`).

use std::fmt;

use toml::{Table, Value};

use super::Validator;
use super::values::{describe, io_reason, join};
use crate::config::names::is_env_name;
use crate::config::types::{OciAuth, OciReference, OciSource, PluginSource};

/// Prefix of a `path` that names a component in an OCI registry.
pub(super) const OCI_PREFIX: &str = "oci://";

/// The `[[plugin]]` keys that only a registry plugin may set.
pub(super) const OCI_KEYS: &[&str] = &["allow_unpinned", "verify", "insecure", "auth"];

impl OciReference {
    /// Whether `path` (a `path` value, or a command-line argument) names a registry reference.
    pub fn is_reference(path: &str) -> bool {
        path.starts_with(OCI_PREFIX)
    }

    /// Parses `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]` (the `oci://` is optional).
    ///
    /// The error says what is wrong with the reference and how it should look.
    pub fn parse(written: &str) -> Result<OciReference, String> {
        const SHAPE: &str = "expected oci://REGISTRY/REPOSITORY:TAG@sha256:DIGEST (the tag or the \
                             digest may be left out, not both)";
        let text = written.strip_prefix(OCI_PREFIX).unwrap_or(written);
        let (name, digest) = match text.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (text, None),
        };
        if let Some(digest) = digest {
            let hex = digest.strip_prefix("sha256:").ok_or_else(|| {
                format!("digest {digest:?} is not sha256:<64 hex digits> ({SHAPE})")
            })?;
            if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                return Err(format!(
                    "digest {digest:?} is not sha256: followed by 64 lowercase hex digits"
                ));
            }
        }
        let Some((registry, rest)) = name.split_once('/') else {
            return Err(format!(
                "no registry or repository in {written:?} ({SHAPE})"
            ));
        };
        let registry_ok = !registry.is_empty()
            && registry.bytes().all(|b| {
                b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']')
            });
        if !registry_ok {
            return Err(format!(
                "invalid registry {registry:?} in {written:?} ({SHAPE})"
            ));
        }
        // A tag is after the last `:` of the last path component.
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (repository, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
            None => (rest, None),
        };
        let repository_ok = !repository.is_empty()
            && repository.split('/').all(|part| {
                !part.is_empty()
                    && part.bytes().all(|b| {
                        b.is_ascii_lowercase()
                            || b.is_ascii_digit()
                            || matches!(b, b'.' | b'_' | b'-')
                    })
                    && part.as_bytes()[0].is_ascii_alphanumeric()
            });
        if !repository_ok {
            return Err(format!(
                "invalid repository {repository:?}: lowercase letters, digits, `.`, `_` and `-` in \
                 `/`-separated parts, each starting with a letter or digit"
            ));
        }
        if let Some(tag) = tag {
            let tag_ok = !tag.is_empty()
                && tag.len() <= 128
                && !tag.starts_with(['.', '-'])
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
            if !tag_ok {
                return Err(format!(
                    "invalid tag {tag:?}: up to 128 letters, digits, `.`, `_` and `-`, not \
                     starting with `.` or `-`"
                ));
            }
        }
        if tag.is_none() && digest.is_none() {
            return Err(format!(
                "{written:?} has neither a tag nor a digest ({SHAPE})"
            ));
        }
        Ok(OciReference {
            registry: registry.to_ascii_lowercase(),
            repository: repository.to_owned(),
            tag: tag.map(str::to_owned),
            digest: digest.map(str::to_owned),
        })
    }

    /// The same reference pinned to `digest`, as `oci://...` (the tag kept for the reader).
    pub fn pinned(&self, digest: &str) -> String {
        let pinned = OciReference {
            digest: Some(digest.to_owned()),
            ..self.clone()
        };
        format!("{OCI_PREFIX}{pinned}")
    }
}

impl fmt::Display for OciReference {
    /// `REGISTRY/REPOSITORY[:TAG][@DIGEST]`, without `oci://`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

impl Validator<'_> {
    /// The source of a `path` that starts with `oci://`, its keys read later by
    /// [`oci_keys`](Self::oci_keys).
    pub(super) fn oci_source(&mut self, written: &str, key: &str) -> Option<PluginSource> {
        match OciReference::parse(written) {
            Ok(reference) => Some(PluginSource::Oci(OciSource {
                reference,
                allow_unpinned: false,
                verify_key: None,
                insecure: false,
                auth: None,
            })),
            Err(reason) => {
                self.error(key, reason);
                None
            }
        }
    }

    /// Reads the registry keys of the `[[plugin]]` `table` into its source; they are an error on
    /// a plugin that is not from a registry.
    pub(super) fn oci_keys(
        &mut self,
        table: &Table,
        prefix: &str,
        source: Option<PluginSource>,
    ) -> Option<PluginSource> {
        let mut oci = match source {
            Some(PluginSource::Oci(oci)) => oci,
            other => {
                for key in OCI_KEYS {
                    if table.contains_key(*key) && other.is_some() {
                        self.error(
                            join(prefix, key),
                            "only a plugin from a registry (`path = \"oci://...\"`) takes this key",
                        );
                    }
                }
                return other;
            }
        };
        // Every key is checked, so that all of their errors are reported at once.
        let mut valid = true;
        if let Some(value) = table.get("allow_unpinned") {
            match self.boolean(value, &join(prefix, "allow_unpinned")) {
                Some(allow) => oci.allow_unpinned = allow,
                None => valid = false,
            }
        }
        if let Some(value) = table.get("insecure") {
            match self.boolean(value, &join(prefix, "insecure")) {
                Some(insecure) => oci.insecure = insecure,
                None => valid = false,
            }
        }
        if let Some(value) = table.get("verify") {
            match self.verify_key(value, &join(prefix, "verify")) {
                Some(key) => oci.verify_key = Some(key),
                None => valid = false,
            }
        }
        if let Some(value) = table.get("auth") {
            match self.oci_auth(value, &join(prefix, "auth")) {
                Some(auth) => oci.auth = Some(auth),
                None => valid = false,
            }
        }
        if !valid {
            return None;
        }
        Some(PluginSource::Oci(oci))
    }

    /// `verify = { key = "..." }`: the key file, canonical.
    fn verify_key(&mut self, value: &Value, path: &str) -> Option<std::path::PathBuf> {
        let table = self.table(value, path)?;
        self.unknown_keys(table, path, &["key"], &[]);
        let key = join(path, "key");
        let Some(written) = table.get("key") else {
            self.error(
                path,
                "missing required key `key` (the cosign public key, PEM)",
            );
            return None;
        };
        let written = self.string(written, &key)?;
        match dunce::canonicalize(self.base_dir.join(written)) {
            Ok(file) if file.is_file() => Some(file),
            Ok(_) => {
                self.error(key, format!("{written:?}: not a file"));
                None
            }
            Err(e) => {
                self.error(key, format!("{written:?}: {}", io_reason(&e, "file")));
                None
            }
        }
    }

    fn oci_auth(&mut self, value: &Value, path: &str) -> Option<OciAuth> {
        let table = self.table(value, path)?;
        self.unknown_keys(
            table,
            path,
            &["username_env", "password_env", "token_env"],
            &[],
        );
        let mut name = |key: &str| -> Option<Option<String>> {
            let Some(value) = table.get(key) else {
                return Some(None);
            };
            let full = join(path, key);
            let written = self.string(value, &full)?;
            if !is_env_name(written) {
                self.error(
                    full,
                    format!(
                        "invalid environment variable name {written:?}: letters, digits and `_`, \
                         not starting with a digit"
                    ),
                );
                return None;
            }
            Some(Some(written.to_owned()))
        };
        let username_env = name("username_env")?;
        let password_env = name("password_env")?;
        let token_env = name("token_env")?;
        match (username_env, password_env, token_env) {
            (Some(username_env), Some(password_env), None) => Some(OciAuth::Basic {
                username_env,
                password_env,
            }),
            (None, None, Some(token_env)) => Some(OciAuth::Token { token_env }),
            _ => {
                self.error(
                    path,
                    "expected either `username_env` and `password_env`, or `token_env` alone \
                     (the names of environment variables holding the credentials)",
                );
                None
            }
        }
    }

    fn boolean(&mut self, value: &Value, key: &str) -> Option<bool> {
        match value {
            Value::Boolean(b) => Some(*b),
            other => {
                self.error(
                    key,
                    format!("expected true or false, found {}", describe(other)),
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The errors of validating `text` (written in a temporary directory with `cosign.pub` and
    /// `x.wasm`), or its first plugin's source.
    fn check(text: &str) -> Result<PluginSource, Vec<String>> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cosign.pub"), "key").unwrap();
        std::fs::write(dir.path().join("x.wasm"), "wasm").unwrap();
        let table: Table = toml::from_str(text).unwrap();
        match super::super::validate(&table, "plugins.toml", dir.path(), &[]) {
            Ok(mut config) => Ok(config.plugins.remove(0).source),
            Err(errors) => Err(errors.iter().map(ToString::to_string).collect()),
        }
    }

    #[test]
    fn registry_keys_are_read_and_checked() {
        let digest = format!("sha256:{}", "e".repeat(64));
        let source = check(&format!(
            "[[plugin]]\nname = \"p\"\npath = \"oci://localhost:5000/p:v1@{digest}\"\n\
             allow_unpinned = true\ninsecure = true\nverify = {{ key = \"cosign.pub\" }}\n\
             auth = {{ username_env = \"U\", password_env = \"P\" }}\n"
        ))
        .unwrap();
        let PluginSource::Oci(oci) = source else {
            panic!("not an OCI source: {source:?}")
        };
        assert!(oci.allow_unpinned && oci.insecure);
        assert!(oci.verify_key.unwrap().ends_with("cosign.pub"));
        assert_eq!(
            oci.auth,
            Some(OciAuth::Basic {
                username_env: "U".to_owned(),
                password_env: "P".to_owned()
            })
        );

        let errors = check("[[plugin]]\nname = \"p\"\npath = \"x.wasm\"\nallow_unpinned = true\n")
            .unwrap_err();
        assert!(
            errors[0].contains("allow_unpinned: only a plugin from a registry"),
            "{errors:?}"
        );

        let errors = check(
            "[[plugin]]\nname = \"p\"\npath = \"oci://r.io/p:v1\"\nauth = { username_env = \"U\" }\n\
             verify = { key = \"missing.pub\" }\n",
        )
        .unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.contains("verify.key: \"missing.pub\"")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.contains("either `username_env` and `password_env`")),
            "{errors:?}"
        );

        let errors = check("[[plugin]]\nname = \"p\"\npath = \"oci://nothing\"\n").unwrap_err();
        assert!(
            errors[0].contains("no registry or repository"),
            "{errors:?}"
        );
    }

    #[test]
    fn references_parse_and_print() {
        let digest = format!("sha256:{}", "a".repeat(64));
        let full = OciReference::parse(&format!("oci://ghcr.io/Org/x:1.0@{digest}"));
        assert!(full.unwrap_err().contains("invalid repository"));
        let full = OciReference::parse(&format!("oci://GHCR.io/org/x:1.0@{digest}")).unwrap();
        assert_eq!(full.registry, "ghcr.io");
        assert_eq!(full.repository, "org/x");
        assert_eq!(full.tag.as_deref(), Some("1.0"));
        assert_eq!(full.digest.as_deref(), Some(digest.as_str()));
        assert_eq!(full.to_string(), format!("ghcr.io/org/x:1.0@{digest}"));

        let port = OciReference::parse("oci://localhost:5000/probe:v1").unwrap();
        assert_eq!(port.registry, "localhost:5000");
        assert_eq!(port.repository, "probe");
        assert_eq!(port.tag.as_deref(), Some("v1"));
        assert_eq!(
            port.pinned(&digest),
            format!("oci://localhost:5000/probe:v1@{digest}")
        );

        let bare = OciReference::parse(&format!("oci://localhost:5000/a/b@{digest}")).unwrap();
        assert_eq!((bare.repository.as_str(), bare.tag), ("a/b", None));

        assert!(
            OciReference::parse("oci://localhost:5000/probe")
                .unwrap_err()
                .contains("neither")
        );
        assert!(
            OciReference::parse("oci://probe:v1")
                .unwrap_err()
                .contains("no registry")
        );
        assert!(
            OciReference::parse("oci://r/p@sha256:abc")
                .unwrap_err()
                .contains("64")
        );
        assert!(
            OciReference::parse("oci://r/p@md5:abc")
                .unwrap_err()
                .contains("sha256")
        );
    }
}
