//! `toolcell new`, `toolcell build` and `toolcell inspect`: a plugin project goes from nothing
//! to a served tool in Rust, Python and JavaScript, and the SDK examples pass the checks a Rust
//! plugin passes.
//!
//! The builds install what they need (the wasm32-wasip2 target, componentize-py, componentize-js)
//! under the tests' cache directory, once per checkout.
//!
//! A test binary of its own: cargo runs test binaries one after another, so the builds and the
//! first compiles of 15 to 19 MiB components here never load the machine while `tests/all`'s
//! servers run against their timeouts.

// A failing test should panic with a message; unwrapping is how it does so.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// The harness is `tests/all`'s, which is Unix-only (see there).
#![cfg(unix)]

#[allow(dead_code)]
#[path = "../all/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use support::{CliOutput, Fixture, cli, cli_with, cli_within, workspace_root};

/// A first build installs a componentizer and compiles an SDK; a first call compiles a component
/// of tens of megabytes. Neither is what these tests time.
const SLOW: Duration = Duration::from_secs(900);

/// Cargo's target directory for the Rust projects the tests create, shared between runs so
/// that the SDK's dependencies compile once.
fn rust_target_dir() -> PathBuf {
    workspace_root().join("target").join("authoring")
}

async fn toolcell(args: &[&str]) -> CliOutput {
    cli_within(SLOW, args, |command| {
        command.env("CARGO_TARGET_DIR", rust_target_dir());
    })
    .await
}

/// `toolcell build DIR`, which must succeed and print the component's path. It runs in the
/// cache directory's parent and names the cache relative to it (a relative cache path once broke
/// the JavaScript build, whose bundler runs in the project's folder).
async fn build(dir: &Path, component: &str) -> PathBuf {
    let cache = support::cache_dir();
    let (Some(parent), Some(name)) = (cache.parent(), cache.file_name()) else {
        panic!(
            "the tests' cache directory {} has no parent",
            cache.display()
        );
    };
    let out = cli_within(SLOW, &["build", &dir.display().to_string()], |command| {
        command
            .env("CARGO_TARGET_DIR", rust_target_dir())
            .env("TOOLCELL_CACHE_DIR", name)
            .current_dir(parent);
    })
    .await;
    assert_eq!(out.code(), 0, "toolcell build failed: {out:?}");
    let built = PathBuf::from(out.stdout.trim());
    assert_eq!(
        built,
        std::fs::canonicalize(dir).unwrap().join(component),
        "{out:?}"
    );
    assert!(built.is_file(), "{} was not written", built.display());
    built
}

/// `toolcell call --config CONFIG TOOL ARGS --json`: its exit code and its MCP result.
async fn call(config: &Path, tool: &str, arguments: &str) -> (i32, Value) {
    let config = config.display().to_string();
    let out = toolcell(&["call", "--config", &config, tool, arguments, "--json"]).await;
    let result = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("`toolcell call` printed no JSON ({e}): {out:?}"));
    (out.code(), result)
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `toolcell new greeter --lang LANG`, built, called and inspected.
async fn new_build_call(lang: &str) {
    let fixture = Fixture::new();
    let dir = fixture.path("greeter");
    let dir_arg = dir.display().to_string();
    let created = toolcell(&["new", "greeter", "--lang", lang, "--dir", &dir_arg]).await;
    assert_eq!(created.code(), 0, "{created:?}");
    assert!(created.stdout.contains("plugins.toml"), "{created:?}");
    assert!(dir.join("README.md").is_file());

    let component = build(&dir, "greeter.wasm").await;

    let (code, result) = call(&dir.join("plugins.toml"), "hello", r#"{"name": "x"}"#).await;
    assert_eq!(code, 0, "{result}");
    assert_eq!(text_of(&result), "Hello, x!", "{result}");

    let inspected = toolcell(&["inspect", &component.display().to_string()]).await;
    assert_eq!(inspected.code(), 0, "{inspected:?}");
    // The Rust SDK targets contract 0.2.0; the Python and JavaScript SDKs 0.1.0.
    let contract = if lang == "rust" {
        "toolcell:plugin@0.2.0"
    } else {
        "toolcell:plugin@0.1.0"
    };
    for needed in [contract, "hello", "read-only", "Toolcell can load it"] {
        assert!(
            inspected.stdout.contains(needed),
            "inspect does not say {needed:?}:\n{}",
            inspected.stdout
        );
    }
}

#[tokio::test]
async fn a_new_rust_plugin_builds_and_answers() {
    new_build_call("rust").await;
}

#[tokio::test]
async fn a_new_python_plugin_builds_and_answers() {
    new_build_call("python").await;
}

#[tokio::test]
async fn a_new_js_plugin_builds_and_answers() {
    new_build_call("js").await;
}

#[tokio::test]
async fn new_refuses_a_bad_name_and_a_folder_in_use() {
    let fixture = Fixture::new();
    let bad = cli(&["new", "Bad Name", "--dir", &fixture.arg("x")]).await;
    assert_eq!(bad.code(), 2, "{bad:?}");
    assert!(bad.stderr.contains("invalid plugin name"), "{bad:?}");

    fixture.write("used/file.txt", "mine");
    let used = cli(&["new", "fine", "--dir", &fixture.arg("used")]).await;
    assert_eq!(used.code(), 2, "{used:?}");
    assert!(used.stderr.contains("not empty"), "{used:?}");
    assert_eq!(
        std::fs::read_to_string(fixture.path("used/file.txt")).unwrap(),
        "mine"
    );
}

#[tokio::test]
async fn build_names_the_interpreter_it_needs() {
    let fixture = Fixture::new();
    for (lang, needed) in [("python", "needs python3"), ("js", "needs Node.js")] {
        let dir = fixture.path(lang);
        let dir = dir.display().to_string();
        let created = cli(&["new", "greeter", "--lang", lang, "--dir", &dir]).await;
        assert_eq!(created.code(), 0, "{created:?}");
        // An empty PATH: no python3, node or npm to find.
        let out = cli_with(&["build", &dir], |command| {
            command.env("PATH", "");
        })
        .await;
        assert_eq!(out.code(), 2, "{out:?}");
        assert!(out.stderr.contains(needed), "{lang}: {out:?}");
    }
}

#[tokio::test]
async fn build_says_what_a_folder_lacks() {
    let fixture = Fixture::new();
    fixture.mkdir("empty");
    let out = cli(&["build", &fixture.arg("empty")]).await;
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("no plugin project"), "{out:?}");
}

#[tokio::test]
async fn inspect_tells_a_module_and_a_foreign_component_from_a_plugin() {
    let fixture = Fixture::new();
    // The smallest core module, and the smallest component: headers alone.
    let module = fixture.write("module.wasm", b"\0asm\x01\0\0\0");
    let component = fixture.write("empty.wasm", b"\0asm\x0d\0\x01\0");
    let text = fixture.write("text.wasm", "not wasm");

    let out = cli(&["inspect", &module.display().to_string()]).await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("core WebAssembly module"), "{out:?}");

    let out = cli(&["inspect", &component.display().to_string()]).await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(
        out.stdout.contains("does not target the Toolcell contract")
            && out.stdout.contains("exports nothing"),
        "{out:?}"
    );

    let out = cli(&["inspect", &text.display().to_string()]).await;
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains("not a valid WebAssembly binary"),
        "{out:?}"
    );
}

#[tokio::test]
async fn inspect_lists_a_plugins_tools_and_capabilities() {
    let probe = support::probe_wasm();
    let out = cli(&["inspect", &probe.display().to_string()]).await;
    assert_eq!(out.code(), 0, "{out:?}");
    for needed in [
        "contract toolcell:plugin@0.2.0",
        "files: granted with `mounts`",
        "environment variables: granted with `env`",
        "Toolcell can load it",
    ] {
        assert!(
            out.stdout.contains(needed),
            "no {needed:?} in:\n{}",
            out.stdout
        );
    }
    let hostile = support::hostile_wasm();
    let out = cli(&["inspect", &hostile.display().to_string()]).await;
    assert!(
        out.stdout.contains("network: granted with `network`")
            && out.stdout.contains("wasi:http/outgoing-handler"),
        "{out:?}"
    );
}

/// Copies an SDK example into the fixture (so that the build writes nothing into the
/// repository) and builds it; returns its folder.
async fn built_example(fixture: &Fixture, sdk: &str) -> PathBuf {
    let source = workspace_root().join(sdk).join("examples/wordcount");
    let dir = fixture.mkdir("wordcount");
    copy_tree(&source, &dir);
    // The Rust example takes the SDK by a relative path.
    let manifest = dir.join("Cargo.toml");
    if let Ok(text) = std::fs::read_to_string(&manifest) {
        let sdk = workspace_root().join("sdk").display().to_string();
        let text = text.replace("{ path = \"../..\" }", &format!("{{ path = {sdk:?} }}"));
        std::fs::write(&manifest, text).unwrap();
    }
    build(&dir, "wordcount.wasm").await;
    dir
}

/// Copies the files under `from` into `to`, leaving out build output.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "target" || name == "node_modules" || name.ends_with(".wasm") {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(to.join(&name)).unwrap();
            copy_tree(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// The checks a Rust plugin passes: a good call with structured content, a bad argument, a
/// failure inside the tool, a path outside the mount.
async fn example_passes_the_plugin_checks(sdk: &str) {
    let fixture = Fixture::new();
    let dir = built_example(&fixture, sdk).await;
    let config = dir.join("plugins.toml");
    std::fs::write(dir.join("poem.txt"), "one two three\nfour five\n").unwrap();
    fixture.write("outside/secret.txt", "not yours\n");

    let (code, good) = call(&config, "count", r#"{"path": "poem.txt"}"#).await;
    assert_eq!(code, 0, "{good}");
    let structured = &good["structuredContent"];
    assert_eq!(
        (
            &structured["lines"],
            &structured["words"],
            &structured["bytes"]
        ),
        (&Value::from(2), &Value::from(5), &Value::from(24)),
        "{good}"
    );
    assert!(!text_of(&good).is_empty(), "{good}");

    let (code, bad) = call(&config, "count", r#"{"path": 7}"#).await;
    assert_eq!((code, &bad["isError"]), (1, &Value::Bool(true)), "{bad}");
    assert!(
        text_of(&bad).contains("path"),
        "the error does not name the field: {bad}"
    );

    let (code, missing) = call(&config, "count", r#"{"path": "no-such-file.txt"}"#).await;
    assert_eq!(
        (code, &missing["isError"]),
        (1, &Value::Bool(true)),
        "{missing}"
    );
    assert!(text_of(&missing).contains("no-such-file.txt"), "{missing}");

    let secret = fixture.path("outside/secret.txt").display().to_string();
    for outside in [secret.as_str(), "../outside/secret.txt", "/etc/passwd"] {
        let arguments = serde_json::json!({ "path": outside }).to_string();
        let (code, refused) = call(&config, "count", &arguments).await;
        assert_eq!(
            (code, &refused["isError"]),
            (1, &Value::Bool(true)),
            "{outside}: {refused}"
        );
        assert!(!text_of(&refused).contains("not yours"), "{refused}");
    }
}

#[tokio::test]
async fn the_rust_example_passes_the_plugin_checks() {
    example_passes_the_plugin_checks("sdk").await;
}

#[tokio::test]
async fn the_python_example_passes_the_plugin_checks() {
    example_passes_the_plugin_checks("sdk/python").await;
}

#[tokio::test]
async fn the_js_example_passes_the_plugin_checks() {
    example_passes_the_plugin_checks("sdk/js").await;
}
