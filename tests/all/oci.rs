//! Plugins from OCI registries, against a real registry: Debian's `docker-registry`
//! (distribution 2.8) on a free loopback port with its storage in a temporary directory, pushed
//! to with the `oras` client from PyPI (the Python interpreter in `TOOLCELL_TEST_PYTHON`, else
//! `python3`). Without them the tests fail under `CI` and are skipped, loudly, otherwise.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_ASN1_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::json;

use crate::support::{CliOutput, cli_with, probe_wasm, workspace_root};

/// The password of the basic-auth registry, and its bcrypt hash for htpasswd (cost 5).
const PASSWORD: &str = "s3cret-pass";
const PASSWORD_BCRYPT: &str = "$2b$05$abcdefghijklmnopqrstuuV7fpPozvyqJfnY19y0802WTlXUm6Rjy";

/// What the tests need from outside Rust; `None` (skip) when absent and not under CI.
fn tools_present() -> Option<String> {
    let python = std::env::var("TOOLCELL_TEST_PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let registry = Command::new("docker-registry")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let oras = Command::new(&python)
        .args(["-c", "import oras.client"])
        .output()
        .is_ok_and(|o| o.status.success());
    if registry && oras {
        return Some(python);
    }
    let missing = format!(
        "the OCI tests need `docker-registry` (apt-get install docker-registry: {}) and the \
         `oras` Python package in {python} (pip install oras==0.2.43: {})",
        if registry { "found" } else { "MISSING" },
        if oras { "found" } else { "MISSING" },
    );
    if std::env::var_os("CI").is_some() {
        panic!("{missing}");
    }
    eprintln!("\n!!!!! SKIPPED: {missing} !!!!!\n");
    None
}

/// A registry on loopback, stopped when dropped.
struct Registry {
    child: Child,
    host: String,
    dir: tempfile::TempDir,
    python: String,
    /// Basic credentials the registry requires, if any.
    user: Option<&'static str>,
}

impl Registry {
    fn start(python: &str, basic_auth: bool) -> Registry {
        let dir = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let host = format!("127.0.0.1:{port}");
        let mut config = format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {host}\n",
            dir.path().join("storage").display()
        );
        if basic_auth {
            std::fs::write(
                dir.path().join("htpasswd"),
                format!("tester:{PASSWORD_BCRYPT}\n"),
            )
            .unwrap();
            config.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        let config_path = dir.path().join("registry.yml");
        std::fs::write(&config_path, config).unwrap();
        let child = Command::new("docker-registry")
            .arg("serve")
            .arg(&config_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start docker-registry");
        let started = Instant::now();
        while std::net::TcpStream::connect(&host).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "docker-registry did not listen on {host}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Registry {
            child,
            host,
            dir,
            python: python.to_owned(),
            user: basic_auth.then_some("tester"),
        }
    }

    /// Pushes `files` (`PATH:MEDIA_TYPE`) to `target` (`REPO:TAG`) with oras; returns the
    /// manifest digest.
    fn push(&self, target: &str, request: serde_json::Value) -> String {
        const SCRIPT: &str = r#"
import json, os, sys, tempfile, oras.client
a = json.load(open(sys.argv[1]))
c = oras.client.OrasClient(hostname=a["registry"], insecure=True,
                           auth_backend="basic" if a.get("user") else "token")
if a.get("user"):
    c.auth.set_basic_auth(a["user"], a["password"])
annotations = None
if a.get("annotations"):
    fd, annotations = tempfile.mkstemp(suffix=".json")
    os.write(fd, json.dumps(a["annotations"]).encode())
    os.close(fd)
r = c.push(target=a["target"], files=a["files"], manifest_config=a.get("config"),
           annotation_file=annotations, manifest_annotations=a.get("manifest_annotations"),
           disable_path_validation=True, quiet=True)
print(r.headers["Docker-Content-Digest"])
"#;
        let mut request = request;
        request["registry"] = json!(self.host);
        request["target"] = json!(format!("{}/{target}", self.host));
        if let Some(user) = self.user {
            request["user"] = json!(user);
            request["password"] = json!(PASSWORD);
        }
        // In a file: an oversized manifest's annotation is longer than a command line may be.
        let request_file = self.dir.path().join("push.json");
        std::fs::write(&request_file, request.to_string()).unwrap();
        let output = Command::new(&self.python)
            .args(["-c", SCRIPT])
            .arg(&request_file)
            .env("HOME", self.dir.path())
            .output()
            .expect("run oras");
        assert!(
            output.status.success(),
            "oras push {target} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// Pushes the probe plugin in the wasm OCI artifact layout.
    fn push_probe(&self, target: &str) -> String {
        let files = self.dir.path().join("files");
        std::fs::create_dir_all(&files).unwrap();
        let wasm = files.join("probe.wasm");
        std::fs::copy(probe_wasm(), &wasm).unwrap();
        let config = files.join("config.json");
        // The target in the config keeps each push's manifest (and digest) its own.
        std::fs::write(
            &config,
            json!({"architecture": "wasm", "os": "wasip2", "pushed_as": target}).to_string(),
        )
        .unwrap();
        self.push(
            target,
            json!({
                "files": [format!("{}:application/wasm", wasm.display())],
                "config": format!("{}:application/vnd.wasm.config.v0+json", config.display()),
            }),
        )
    }

    /// The file of blob `digest` in the registry's storage.
    fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap();
        self.dir
            .path()
            .join("storage/docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A cache directory of the test's own, under target/ (for hard links), with the compiled
/// components of the shared test cache linked in so that the probe is not compiled again.
fn cache() -> tempfile::TempDir {
    let target = workspace_root().join("target");
    let dir = tempfile::tempdir_in(&target).unwrap();
    if let Ok(entries) = std::fs::read_dir(target.join("test-cache")) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "cwasm") {
                let _ = std::fs::hard_link(&path, dir.path().join(entry.file_name()));
            }
        }
    }
    dir
}

/// Writes a configuration with one `[[plugin]]` named `probe` at `path`, plus `extra` lines.
fn config(dir: &Path, path: &str, extra: &str) -> PathBuf {
    let file = dir.join("plugins.toml");
    std::fs::write(
        &file,
        format!(
            "[[plugin]]\nname = \"probe\"\npath = \"{path}\"\nconfig = {{ greeting = \"hello\" }}\n{extra}\n"
        ),
    )
    .unwrap();
    file
}

/// `toolcell call config {"key":"greeting"}` with the given cache and extra variables.
async fn call_probe(config: &Path, cache: &Path, env: &[(&str, &str)]) -> CliOutput {
    let config = config.display().to_string();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    cli_with(
        &[
            "call",
            "config",
            r#"{"key":"greeting"}"#,
            "--config",
            &config,
        ],
        |command| {
            command.env("TOOLCELL_CACHE_DIR", cache).envs(env);
        },
    )
    .await
}

/// The blob files in the OCI cache.
fn cached_blobs(cache: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache.join("oci/blobs/sha256"))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn pinned_pull_serves_then_starts_offline() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let digest = registry.push_probe("probe:v1");
    let work = tempfile::tempdir().unwrap();
    let cache = cache();
    let path = format!("oci://{}/probe:v1@{digest}", registry.host);
    let config = config(work.path(), &path, "");

    let first = call_probe(&config, cache.path(), &[("RUST_LOG", "info")]).await;
    assert_eq!(first.code(), 0, "{first:?}");
    assert_eq!(first.stdout.trim(), "hello");
    assert!(
        first.stderr.contains("pulled and verified a blob"),
        "{}",
        first.stderr
    );
    assert_eq!(
        cached_blobs(cache.path()).len(),
        2,
        "the manifest and the component"
    );

    // The registry is gone: the pinned plugin starts from the cache, with no network.
    drop(registry);
    let second = call_probe(&config, cache.path(), &[("RUST_LOG", "info")]).await;
    assert_eq!(second.code(), 0, "{second:?}");
    assert_eq!(second.stdout.trim(), "hello");
    assert!(!second.stderr.contains("pulled"), "{}", second.stderr);
}

#[tokio::test]
async fn wrong_or_tampered_digests_are_refused_and_nothing_is_cached() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let digest = registry.push_probe("probe:v1");
    let work = tempfile::tempdir().unwrap();
    let cache = cache();

    // A digest the registry does not have.
    let wrong = format!("sha256:{}", "0".repeat(64));
    let config_path = config(
        work.path(),
        &format!("oci://{}/probe:v1@{wrong}", registry.host),
        "",
    );
    let out = call_probe(&config_path, cache.path(), &[]).await;
    assert_ne!(out.code(), 0);
    assert!(out.stderr.contains("was not found (404)"), "{}", out.stderr);

    // The registry serves a manifest whose bytes are not its digest.
    let manifest_file = registry.blob_file(&digest);
    let original = std::fs::read(&manifest_file).unwrap();
    let mut changed = String::from_utf8(original.clone()).unwrap();
    changed = changed.replacen("\"schemaVersion\": 2", "\"schemaVersion\":  2", 1);
    changed = changed.replacen("\"schemaVersion\":2", "\"schemaVersion\": 2", 1);
    assert_ne!(changed.as_bytes(), original.as_slice());
    std::fs::write(&manifest_file, &changed).unwrap();
    let config_path = config(
        work.path(),
        &format!("oci://{}/probe:v1@{digest}", registry.host),
        "",
    );
    let out = call_probe(&config_path, cache.path(), &[]).await;
    assert_ne!(out.code(), 0);
    assert!(
        out.stderr.contains("does not match its digest")
            && out.stderr.contains(&format!("pins {digest}")),
        "{}",
        out.stderr
    );
    std::fs::write(&manifest_file, &original).unwrap();

    // A component blob changed in the registry's storage, same size.
    let manifest: serde_json::Value = serde_json::from_slice(&original).unwrap();
    let layer = manifest["layers"][0]["digest"].as_str().unwrap().to_owned();
    let layer_file = registry.blob_file(&layer);
    let mut bytes = std::fs::read(&layer_file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&layer_file, &bytes).unwrap();
    let out = call_probe(&config_path, cache.path(), &[]).await;
    assert_ne!(out.code(), 0);
    assert!(
        out.stderr.contains(&format!(
            "the manifest names {layer} but the registry served sha256:"
        )),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("nothing cached"), "{}", out.stderr);
    assert_eq!(cached_blobs(cache.path()), Vec::<String>::new());
}

#[tokio::test]
async fn a_tag_without_digest_is_refused_with_the_digest_then_allowed() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let digest = registry.push_probe("probe:v1");
    let work = tempfile::tempdir().unwrap();
    let cache = cache();
    let tag = format!("oci://{}/probe:v1", registry.host);

    let refused = call_probe(&config(work.path(), &tag, ""), cache.path(), &[]).await;
    assert_ne!(refused.code(), 0);
    assert!(
        refused
            .stderr
            .contains(&format!("path = \\\"{tag}@{digest}\\\""))
            || refused
                .stderr
                .contains(&format!("path = \"{tag}@{digest}\"")),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("toolcell pull"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("allow_unpinned"),
        "{}",
        refused.stderr
    );

    let allowed = call_probe(
        &config(work.path(), &tag, "allow_unpinned = true"),
        cache.path(),
        &[],
    )
    .await;
    assert_eq!(allowed.code(), 0, "{allowed:?}");
    assert_eq!(allowed.stdout.trim(), "hello");
    assert!(
        allowed.stderr.contains("WARN") && allowed.stderr.contains(&digest),
        "{}",
        allowed.stderr
    );
}

/// `{key: value}`.
fn object(key: &str, value: serde_json::Value) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    map.insert(key.to_owned(), value);
    serde_json::Value::Object(map)
}

/// A generated cosign-style key pair: the signer and its `cosign.pub` PEM.
fn key_pair() -> (EcdsaKeyPair, String) {
    let rng = SystemRandom::new();
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &rng).unwrap();
    let pair =
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, pkcs8.as_ref(), &rng).unwrap();
    // SubjectPublicKeyInfo: id-ecPublicKey, prime256v1, then the point.
    let mut der = vec![
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08,
        0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ];
    der.extend_from_slice(pair.public_key().as_ref());
    let pem = format!(
        "-----BEGIN PUBLIC KEY-----\n{}\n-----END PUBLIC KEY-----\n",
        BASE64.encode(der)
    );
    (pair, pem)
}

/// Pushes a cosign signature of `digest` in `repository` by `signer`, in cosign's layout.
fn sign(registry: &Registry, repository: &str, digest: &str, signer: &EcdsaKeyPair) {
    let payload = json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{repository}", registry.host)},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature"
        },
        "optional": null
    })
    .to_string();
    let signature = signer
        .sign(&SystemRandom::new(), payload.as_bytes())
        .unwrap();
    let files = registry.dir.path().join("sig");
    std::fs::create_dir_all(&files).unwrap();
    let payload_file = files.join("payload.json");
    std::fs::write(&payload_file, &payload).unwrap();
    let payload_path = payload_file.display().to_string();
    let tag = format!("sha256-{}.sig", digest.strip_prefix("sha256:").unwrap());
    registry.push(
        &format!("{repository}:{tag}"),
        json!({
            "files": [format!("{payload_path}:application/vnd.dev.cosign.simplesigning.v1+json")],
            "annotations": object(
                &payload_path,
                json!({"dev.cosignproject.cosign/signature": BASE64.encode(signature.as_ref())}),
            ),
        }),
    );
}

#[tokio::test]
async fn signatures_verify_or_the_plugin_is_refused() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let (signer, pem) = key_pair();
    let (stranger, _) = key_pair();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("cosign.pub"), &pem).unwrap();
    let verify = "verify = { key = \"cosign.pub\" }";

    let signed = registry.push_probe("signed:v1");
    sign(&registry, "signed", &signed, &signer);
    let unsigned = registry.push_probe("unsigned:v1");
    let forged = registry.push_probe("forged:v1");
    sign(&registry, "forged", &forged, &stranger);

    let cache = cache();
    let host = registry.host.clone();
    let path = |repo: &str, digest: &str| format!("oci://{host}/{repo}:v1@{digest}");
    let ok = call_probe(
        &config(work.path(), &path("signed", &signed), verify),
        cache.path(),
        &[("RUST_LOG", "info")],
    )
    .await;
    assert_eq!(ok.code(), 0, "{ok:?}");
    assert!(
        ok.stderr.contains("cosign signature verified"),
        "{}",
        ok.stderr
    );

    let missing = call_probe(
        &config(work.path(), &path("unsigned", &unsigned), verify),
        cache.path(),
        &[],
    )
    .await;
    assert_ne!(missing.code(), 0);
    assert!(
        missing.stderr.contains("has no cosign signature"),
        "{}",
        missing.stderr
    );

    let bad = call_probe(
        &config(work.path(), &path("forged", &forged), verify),
        cache.path(),
        &[],
    )
    .await;
    assert_ne!(bad.code(), 0);
    assert!(
        bad.stderr
            .contains("the signature does not verify with the configured key"),
        "{}",
        bad.stderr
    );

    // Offline, the cached signature is checked again.
    drop(registry);
    let offline = call_probe(
        &config(work.path(), &path("signed", &signed), verify),
        cache.path(),
        &[],
    )
    .await;
    assert_eq!(offline.code(), 0, "{offline:?}");
}

#[tokio::test]
async fn basic_auth_from_a_docker_config_file() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, true);
    let digest = registry.push_probe("private:v1");
    let work = tempfile::tempdir().unwrap();
    let cache = cache();
    let config_path = config(
        work.path(),
        &format!("oci://{}/private:v1@{digest}", registry.host),
        "",
    );
    let docker = work.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let docker_dir = docker.display().to_string();

    // No credentials: refused, explained.
    let out = call_probe(
        &config_path,
        cache.path(),
        &[("DOCKER_CONFIG", &docker_dir)],
    )
    .await;
    assert_ne!(out.code(), 0);
    assert!(
        out.stderr.contains("no credentials were found"),
        "{}",
        out.stderr
    );

    let auth = BASE64.encode(format!("tester:{PASSWORD}"));
    std::fs::write(
        docker.join("config.json"),
        json!({"auths": object(&registry.host, json!({"auth": auth}))}).to_string(),
    )
    .unwrap();
    let out = call_probe(
        &config_path,
        cache.path(),
        &[
            ("DOCKER_CONFIG", &docker_dir),
            ("RUST_LOG", "toolcell=trace"),
        ],
    )
    .await;
    assert_eq!(out.code(), 0, "{out:?}");
    assert_eq!(out.stdout.trim(), "hello");
    assert!(!out.stderr.contains(PASSWORD), "the password was logged");
    assert!(!out.stderr.contains(&auth), "the credentials were logged");
}

#[tokio::test]
async fn an_oversized_manifest_is_refused() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let files = registry.dir.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    let wasm = files.join("probe.wasm");
    std::fs::copy(probe_wasm(), &wasm).unwrap();
    // Over OCI_MAX_MANIFEST_BYTES (1 MiB), under the registry's own 4 MiB.
    let digest = registry.push(
        "big:v1",
        json!({
            "files": [format!("{}:application/wasm", wasm.display())],
            "manifest_annotations": {"padding": "x".repeat(1_200_000)},
        }),
    );
    let work = tempfile::tempdir().unwrap();
    let cache = cache();
    let config_path = config(
        work.path(),
        &format!("oci://{}/big:v1@{digest}", registry.host),
        "",
    );
    let out = call_probe(&config_path, cache.path(), &[]).await;
    assert_ne!(out.code(), 0);
    assert!(
        out.stderr.contains("over the limit of 1048576 bytes"),
        "{}",
        out.stderr
    );
    assert_eq!(cached_blobs(cache.path()), Vec::<String>::new());
}

#[tokio::test]
async fn pull_prints_the_digest_and_the_line_to_paste() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let digest = registry.push_probe("probe:v1");
    let cache = cache();
    let reference = format!("oci://{}/probe:v1", registry.host);
    let cache_arg = cache.path().display().to_string();
    let out = cli_with(&["pull", &reference, "--cache-dir", &cache_arg], |_| {}).await;
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(
        out.stdout.contains(&format!("digest: {digest}")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(&format!("path = \"{reference}@{digest}\"")),
        "{}",
        out.stdout
    );
    assert_eq!(cached_blobs(cache.path()).len(), 2);

    // `inspect` takes the same reference, from the cache.
    let pinned = format!("{reference}@{digest}");
    let out = cli_with(&["inspect", &pinned, "--cache-dir", &cache_arg], |_| {}).await;
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("config"), "{}", out.stdout);
}

#[tokio::test]
async fn a_drop_folders_toml_alone_serves_a_registrys_component() {
    let Some(python) = tools_present() else {
        return;
    };
    let registry = Registry::start(&python, false);
    let digest = registry.push_probe("probe:v1");
    let work = tempfile::tempdir().unwrap();
    let cache = cache();
    std::fs::create_dir(work.path().join("drop")).unwrap();
    std::fs::write(
        work.path().join("drop/probe.toml"),
        format!(
            "path = \"oci://{}/probe:v1@{digest}\"\nconfig = {{ greeting = \"hello\" }}\n",
            registry.host
        ),
    )
    .unwrap();
    let config = work.path().join("plugins.toml");
    std::fs::write(
        &config,
        "[server]\nplugin_dirs = [\"drop\"]\n[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\n",
    )
    .unwrap();
    let called = call_probe(&config, cache.path(), &[("RUST_LOG", "info")]).await;
    assert_eq!(called.code(), 0, "{called:?}");
    assert_eq!(called.stdout.trim(), "hello");
    assert_eq!(cached_blobs(cache.path()).len(), 2, "{called:?}");
}
