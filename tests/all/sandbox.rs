//! What the sandbox lets a plugin reach: one test per escape class it guards (`..`, absolute
//! paths, symlinks out, a sibling sharing the mount's prefix), writes against `ro` mounts and
//! read-only tools, the guest's stdout and stderr, environment variables and config values, and
//! the memory an earlier call wrote.

use serde_json::{Value, json};

use crate::support::{Fixture, RawServer, Server, hostile_fixture};

/// Marks every secret file's contents; no tool result may ever contain it.
const SECRET: &str = "TOOLCELL-SECRET";

/// The escape fixture: `<root>/data` is mounted and everything else is secret.
///
/// ```text
/// <root>/secret.txt
/// <root>/outside/secret.txt
/// <root>/data-evil/secret.txt          sibling sharing the prefix `<root>/data`
/// <root>/data/hello.txt
/// <root>/data/sub/
/// <root>/data/link-out     -> <root>/secret.txt     (absolute)
/// <root>/data/rel-link-out -> ../secret.txt          (relative)
/// <root>/data/dir-out      -> <root>/outside        (a directory)
/// <root>/data/link-in      -> hello.txt             (stays inside: allowed)
/// ```
fn escape_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.write("secret.txt", format!("{SECRET}-root\n"));
    fixture.write("outside/secret.txt", format!("{SECRET}-outside\n"));
    fixture.write("data-evil/secret.txt", format!("{SECRET}-sibling\n"));
    fixture.write("data/hello.txt", "hello\n");
    fixture.mkdir("data/sub");
    fixture.symlink(fixture.path("secret.txt"), "data/link-out");
    fixture.symlink("../secret.txt", "data/rel-link-out");
    fixture.symlink(fixture.path("outside"), "data/dir-out");
    fixture.symlink("hello.txt", "data/link-in");
    fixture
}

/// Asserts that `result` is an error result and shows none of `forbidden`.
#[track_caller]
fn assert_refused(what: &str, result: &Value, forbidden: &[&str]) {
    assert_eq!(
        result["isError"],
        json!(true),
        "{what} should be refused, got {result}"
    );
    let text = result.to_string();
    for needle in forbidden {
        assert!(!text.contains(needle), "{what} leaked {needle:?}: {result}");
    }
}

#[tokio::test]
async fn fs_tools_cannot_leave_the_mount() {
    let fixture = escape_fixture();
    let config = fixture.config(
        r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }]
"#,
    );
    let server = Server::start(&config).await;
    let data = fixture.arg("data");
    let root = fixture.root().display().to_string();

    // Control: the mount itself, and a symlink that stays inside it, are readable.
    let hello = server
        .call("read_file", json!({"path": format!("{data}/hello.txt")}))
        .await;
    assert_eq!(hello.ok_text(), "hello\n");
    let link_in = server.call("read_file", json!({"path": "link-in"})).await;
    assert_eq!(link_in.ok_text(), "hello\n");

    // Contents of files outside, and of the host's own files.
    let content_leaks = [SECRET, "root:x:0", "root:*:0"];
    let files = [
        // `..`, relative and absolute.
        "../secret.txt".to_string(),
        format!("{data}/../secret.txt"),
        format!("{data}/sub/../../secret.txt"),
        "sub/../../secret.txt".to_string(),
        // Absolute paths outside.
        format!("{root}/secret.txt"),
        "/etc/passwd".to_string(),
        // Symlinks out, absolute and relative, by absolute and relative paths.
        format!("{data}/link-out"),
        "link-out".to_string(),
        format!("{data}/rel-link-out"),
        "rel-link-out".to_string(),
        // A symlinked directory pointing out.
        format!("{data}/dir-out/secret.txt"),
        "dir-out/secret.txt".to_string(),
        // A sibling that shares the mount's prefix (CVE-2025-53110's class).
        format!("{data}-evil/secret.txt"),
    ];
    for path in &files {
        for tool in ["read_file", "tail"] {
            let result = server.call(tool, json!({"path": path})).await;
            assert_refused(&format!("{tool} {path}"), &result.0, &content_leaks);
        }
    }
    for path in [
        format!("{root}/secret.txt"),
        "../secret.txt".to_string(),
        format!("{data}/dir-out/secret.txt"),
        format!("{data}-evil/secret.txt"),
    ] {
        let result = server.call("file_info", json!({"path": path})).await;
        assert_refused(&format!("file_info {path}"), &result.0, &content_leaks);
    }

    // Listings outside: none may show a name from there.
    let listing_leaks = [SECRET, "secret.txt", "plugins.toml", "passwd", "outside/"];
    for path in [
        "..".to_string(),
        format!("{data}/.."),
        "sub/../..".to_string(),
        root.clone(),
        "/".to_string(),
        "/etc".to_string(),
        format!("{data}/dir-out"),
        "dir-out".to_string(),
        format!("{data}-evil"),
    ] {
        let result = server.call("list_directory", json!({"path": path})).await;
        assert_refused(&format!("list_directory {path}"), &result.0, &listing_leaks);
    }

    // The listing of the mount itself is fine and shows the links, not their targets' contents.
    let listing = server
        .call("list_directory", json!({"path": data}))
        .await
        .ok_text();
    assert!(listing.contains("hello.txt"), "{listing}");
    assert!(!listing.contains(SECRET), "{listing}");
    server.stop().await;
}

/// A probe plugin with `data/` mounted as `mode`, the write category enabled.
fn probe_config(fixture: &Fixture, mode: &str) -> std::path::PathBuf {
    let probe = fixture.probe();
    fixture.config(&format!(
        r#"
[server]
categories = ["read", "write"]

[[plugin]]
name = "probe"
path = "{probe}"
mounts = [{{ host = "data", mode = "{mode}" }}]
"#
    ))
}

#[tokio::test]
async fn writes_to_a_read_only_mount_fail() {
    let fixture = Fixture::new();
    let existing = fixture.write("data/existing.txt", "original\n");
    let config = probe_config(&fixture, "ro");
    let server = Server::start(&config).await;

    let new = fixture.path("data/new.txt");
    let result = server
        .call(
            "write_attempt",
            json!({"path": new.display().to_string(), "content": "created"}),
        )
        .await;
    result.error_text();
    assert!(
        !new.exists(),
        "a write to an ro mount created {}",
        new.display()
    );

    let result = server
        .call(
            "write_attempt",
            json!({"path": existing.display().to_string(), "content": "CHANGED"}),
        )
        .await;
    result.error_text();
    assert_eq!(std::fs::read(&existing).expect("read back"), b"original\n");

    let result = server
        .call(
            "write_attempt",
            json!({"path": "new.txt", "content": "created"}),
        )
        .await;
    result.error_text();
    assert!(!new.exists(), "a relative write to an ro mount created it");
    server.stop().await;
}

#[tokio::test]
async fn read_only_tools_cannot_write_to_a_read_write_mount() {
    let fixture = Fixture::new();
    let existing = fixture.write("data/existing.txt", "original\n");
    let config = probe_config(&fixture, "rw");
    let server = Server::start(&config).await;

    // Declared read-only, so the host mounts `data` read-only for it despite `rw`.
    let new = fixture.path("data/ro-new.txt");
    let result = server
        .call(
            "write_attempt_ro",
            json!({"path": new.display().to_string()}),
        )
        .await;
    result.error_text();
    assert!(!new.exists(), "a read-only tool created {}", new.display());
    let result = server
        .call(
            "write_attempt_ro",
            json!({"path": existing.display().to_string()}),
        )
        .await;
    result.error_text();
    assert_eq!(std::fs::read(&existing).expect("read back"), b"original\n");

    // The write tool on the same mount succeeds, so the refusals above are the sandbox's.
    let created = fixture.path("data/new.txt");
    let result = server
        .call(
            "write_attempt",
            json!({"path": created.display().to_string(), "content": "fresh content"}),
        )
        .await;
    assert_eq!(result.ok_text(), "wrote 13 bytes");
    assert_eq!(
        std::fs::read(&created).expect("read back"),
        b"fresh content"
    );

    let result = server
        .call(
            "write_attempt",
            json!({"path": "existing.txt", "content": "replaced"}),
        )
        .await;
    assert_eq!(result.ok_text(), "wrote 8 bytes");
    assert_eq!(std::fs::read(&existing).expect("read back"), b"replaced");
    server.stop().await;
}

#[tokio::test]
async fn writes_cannot_leave_a_read_write_mount() {
    let fixture = escape_fixture();
    let config = probe_config(&fixture, "rw");
    let server = Server::start(&config).await;
    let data = fixture.arg("data");
    let root = fixture.root().display().to_string();

    for (path, lands_at) in [
        ("../escaped.txt".to_string(), "escaped.txt"),
        (format!("{data}/../escaped.txt"), "escaped.txt"),
        (format!("{root}/escaped.txt"), "escaped.txt"),
        (format!("{data}/dir-out/escaped.txt"), "outside/escaped.txt"),
        (format!("{data}-evil/escaped.txt"), "data-evil/escaped.txt"),
        (format!("{data}/link-out"), "secret.txt"),
        (format!("{data}/rel-link-out"), "secret.txt"),
        (format!("{data}/dir-out/secret.txt"), "outside/secret.txt"),
    ] {
        let result = server
            .call("write_attempt", json!({"path": path, "content": "ESCAPED"}))
            .await;
        assert_refused(&format!("write_attempt {path}"), &result.0, &[SECRET]);
        let target = fixture.path(lands_at);
        if let Ok(bytes) = std::fs::read(&target) {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("ESCAPED"),
                "write_attempt {path} wrote {}",
                target.display()
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(fixture.path("secret.txt")).expect("read back"),
        format!("{SECRET}-root\n")
    );

    // Control: inside the mount the same tool writes.
    let result = server
        .call(
            "write_attempt",
            json!({"path": "inside.txt", "content": "ok"}),
        )
        .await;
    assert_eq!(result.ok_text(), "wrote 2 bytes");
    assert_eq!(
        std::fs::read(fixture.path("data/inside.txt")).expect("read back"),
        b"ok"
    );
    server.stop().await;
}

// See: NOTES.md, a peer let a guest's `println!` corrupt the stdio JSON-RPC stream.
#[tokio::test]
async fn guest_output_goes_to_the_log_never_to_the_stream() {
    let fixture = Fixture::new();
    let probe = fixture.probe();
    let config = fixture.config(&format!(
        r#"
[[plugin]]
name = "probe"
path = "{probe}"
"#
    ));
    // Debug, so that the guest's output is logged whatever level the host gives it.
    let mut server = RawServer::spawn(&config, &["--log-level", "debug"]);
    server.initialize().await;

    let response = server.call(1, "print", json!({"lines": 1000})).await;
    assert_eq!(
        response["result"]["content"][0]["text"], "printed",
        "{response}"
    );
    assert_ne!(response["result"]["isError"], json!(true), "{response}");

    // The stream is still in step: the next call gets its own answer.
    let response = server.call(2, "print", json!({"lines": 1})).await;
    assert_eq!(
        response["result"]["content"][0]["text"], "printed",
        "{response}"
    );
    let pong = server.request(3, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}), "{pong}");

    let finished = server.finish().await;
    assert!(
        finished.status.success(),
        "exit: {}\n{}",
        finished.status,
        finished.log
    );
    for line in &finished.stdout_lines {
        assert!(
            !line.contains("PROBE-"),
            "guest output reached stdout: {line:?}"
        );
    }
    for needle in [
        "PROBE-STDOUT 0",
        "PROBE-STDOUT 999",
        "PROBE-STDERR 0",
        "PROBE-STDERR 999",
    ] {
        assert!(
            finished.log.contains(needle),
            "{needle:?} is missing from the log (its last 2000 bytes):\n{}",
            tail(&finished.log, 2000)
        );
    }
}

/// The last `n` bytes of `text`, or a little more to stay on a character boundary.
fn tail(text: &str, n: usize) -> &str {
    let mut start = text.len().saturating_sub(n);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..]
}

#[tokio::test]
async fn only_listed_environment_variables_reach_the_guest() {
    let fixture = Fixture::new();
    let probe = fixture.probe();
    let config = fixture.config(&format!(
        r#"
[[plugin]]
name = "probe"
path = "{probe}"
env = ["TOOLCELL_TEST_VISIBLE"]
"#
    ));
    let server = Server::start_with_env(
        &config,
        &[
            ("TOOLCELL_TEST_VISIBLE", "visible-value"),
            ("TOOLCELL_TEST_SECRET", "hunter2-env-secret"),
        ],
    )
    .await;

    let visible = server
        .call("env", json!({"name": "TOOLCELL_TEST_VISIBLE"}))
        .await;
    assert_eq!(visible.ok_text(), "visible-value");

    let secret = server
        .call("env", json!({"name": "TOOLCELL_TEST_SECRET"}))
        .await;
    assert_refused(
        "env TOOLCELL_TEST_SECRET",
        &secret.0,
        &["hunter2-env-secret"],
    );
    assert!(secret.text().contains("not set"), "{secret:?}");

    // Inherited variables are not passed through either.
    for name in ["PATH", "HOME"] {
        if std::env::var_os(name).is_some() {
            let result = server.call("env", json!({"name": name})).await;
            assert!(result.is_error(), "`{name}` reached the guest: {result:?}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn the_servers_secrets_never_reach_a_plugin_even_when_granted() {
    let fixture = Fixture::new();
    let probe = fixture.probe();
    let config = fixture.config(&format!(
        "[[plugin]]\nname = \"probe\"\npath = \"{probe}\"\nenv = [\"TOOLCELL_TOKEN\", \"TOOLCELL_STATE_KEY\"]\n"
    ));
    let key = "the-state-key-that-seals-request-state-0123456789";
    let server = Server::start_with_env(
        &config,
        &[
            ("TOOLCELL_TOKEN", "token-secret-0123456789"),
            ("TOOLCELL_STATE_KEY", key),
        ],
    )
    .await;
    for (name, secret) in [
        ("TOOLCELL_TOKEN", "token-secret-0123456789"),
        ("TOOLCELL_STATE_KEY", key),
    ] {
        let result = server.call("env", json!({"name": name})).await;
        assert_refused(&format!("env {name}"), &result.0, &[secret]);
    }
    let log = server.log().text();
    assert!(
        log.contains("TOOLCELL_STATE_KEY is the key that seals the server's requestState"),
        "{log}"
    );
    server.stop().await;
}

#[tokio::test]
async fn config_values_reach_the_guest() {
    let fixture = Fixture::new();
    let probe = fixture.probe();
    let config = fixture.config(&format!(
        r#"
[[plugin]]
name = "probe"
path = "{probe}"
config = {{ greeting = "hello from plugins.toml", answer = "42" }}
"#
    ));
    let server = Server::start(&config).await;
    let greeting = server.call("config", json!({"key": "greeting"})).await;
    assert_eq!(greeting.ok_text(), "hello from plugins.toml");
    let answer = server.call("config", json!({"key": "answer"})).await;
    assert_eq!(answer.ok_text(), "42");
    let missing = server.call("config", json!({"key": "missing"})).await;
    assert!(missing.error_text().contains("missing"), "{missing:?}");
    server.stop().await;
}

/// The threads of process `pid` blocked in an `open` system call (the only way a thread ends
/// up there for long is a FIFO with no writer).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn threads_blocked_in_open(pid: u32) -> usize {
    // openat and openat2 (x86_64: 257, 437; aarch64: 56, 437).
    let opens: &[&str] = if cfg!(target_arch = "x86_64") {
        &["257", "437"]
    } else {
        &["56", "437"]
    };
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("syscall")).is_ok_and(|syscall| {
                let number = syscall.split_whitespace().next().unwrap_or_default();
                opens.contains(&number)
            })
        })
        .count()
}

/// See: issue "Bounded everywhere", item 1: a file swapped for a FIFO between the fs plugin's
/// look and its open hung `read_file` to its deadline and left a thread blocked in the kernel.
/// Now the open never blocks and the type is checked on what was opened: every read answers the
/// content or the clear refusal, none times out, and no thread is left in an `open`.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[tokio::test]
async fn a_file_swapped_for_a_fifo_never_hangs_a_read() {
    let call = json!({"name": "read_file", "arguments": {"path": "target"}});
    let (contents, refusals) = calls_while_a_file_is_swapped_for_a_fifo("fs", call, |result| {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        if result["isError"] == json!(true) {
            assert!(
                text.contains("not a regular file; read_file reads regular files only"),
                "{result}"
            );
            false
        } else {
            assert_eq!(text, "regular\n", "{result}");
            true
        }
    })
    .await;
    assert_eq!(contents + refusals, 160);
}

/// The same for `grep`, which reads each file with one host call (`toolcell:files/contents`):
/// the listing may say `target` is a regular file and the open find a FIFO; every search answers
/// with the match or with the file reported unreadable, none times out, and no thread is left
/// in an `open`.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[tokio::test]
async fn a_file_swapped_for_a_fifo_never_hangs_a_grep() {
    let call = json!({"name": "grep", "arguments": {"pattern": "regular", "path": "."}});
    let (found, not_found) = calls_while_a_file_is_swapped_for_a_fifo("search", call, |result| {
        assert_ne!(result["isError"], json!(true), "{result}");
        let files = result["structuredContent"]["files"].as_array().cloned();
        files.unwrap_or_default().iter().any(|file| {
            file["path"]
                .as_str()
                .is_some_and(|path| path.ends_with("/target"))
        })
    })
    .await;
    assert_eq!(found + not_found, 160);
}

/// Swaps `data/target` between a regular file and a FIFO, by hard links as fast as it can,
/// while 160 calls of `call` to `plugin` (mounted on `data`, 3 s deadline) run four at a time;
/// `check` asserts on each result that did not time out and says which of two kinds it is.
/// Returns how many of each, after checking that no thread was left blocked in an `open`.
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
async fn calls_while_a_file_is_swapped_for_a_fifo(
    plugin: &str,
    call: Value,
    check: impl Fn(&Value) -> bool,
) -> (usize, usize) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let fixture = Fixture::new();
    fixture.write("data/target", "regular\n");
    fixture.write("data/.regular", "regular\n");
    crate::fs::mkfifo(&fixture.path("data/.fifo"));
    let config = fixture.config(&format!(
        r#"
[limits]
timeout_ms = 3000

[[plugin]]
name = "{plugin}"
path = "builtin:{plugin}"
mounts = [{{ host = "data", mode = "ro" }}]
"#
    ));
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let pid = server.pid().expect("the server's pid");

    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let data = fixture.path("data");
        std::thread::spawn(move || {
            let target = data.join("target");
            let next = data.join(".next");
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let source = if swaps.is_multiple_of(2) {
                    ".fifo"
                } else {
                    ".regular"
                };
                let _ = std::fs::remove_file(&next);
                if std::fs::hard_link(data.join(source), &next).is_ok() {
                    let _ = std::fs::rename(&next, &target);
                }
                swaps += 1;
            }
            swaps
        })
    };

    let (mut yes, mut no) = (0, 0);
    let mut id = 1;
    for _ in 0..40 {
        let ids: Vec<i64> = (id..id + 4).collect();
        id += 4;
        for &id in &ids {
            server
                .send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call}))
                .await;
        }
        for id in ids {
            let response = server.response(id).await;
            let result = &response["result"];
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            assert!(!text.contains("timed out"), "{response}");
            if check(result) {
                yes += 1;
            } else {
                no += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().expect("the swapper");
    assert!(swaps > 100, "the swapper barely ran: {swaps}");
    assert_eq!(
        threads_blocked_in_open(pid),
        0,
        "threads left blocked in open"
    );
    assert!(server.finish().await.status.success());
    (yes, no)
}

/// Class: state left by an earlier call. Each call gets a fresh instance, and a pooled slot's
/// memory is reset to the component's image between calls; here each call writes to more
/// disjoint runs of pages than one scan of the slot reports (see host/vendor/wasmtime), and the
/// next call, in a slot the pool hands back to the same component, must find none of them.
#[tokio::test]
async fn a_call_never_sees_the_memory_an_earlier_call_wrote() {
    let (_fixture, config) = hostile_fixture("");
    let server = Server::start(&config).await;
    for _ in 0..5 {
        assert_eq!(
            server.call("scribble", json!({})).await.ok_text(),
            "pristine"
        );
    }
}
