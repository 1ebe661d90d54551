//! The first run: what a new user meets with no configuration file, where desktop clients
//! start servers (`/`, the home directory), with a client that offers MCP roots, with
//! `--mount`; and the messages, capabilities, exit codes and logs around it.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use crate::support::{Fixture, RawServer, bin, cli, cli_with};

/// A server with no `--config`, started in `dir` with `HOME` set to `home`.
fn serve_in(dir: &Path, home: &Path, args: &[&str]) -> RawServer {
    let (dir, home) = (dir.to_path_buf(), home.to_path_buf());
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    RawServer::spawn_with(bin(), move |command| {
        command
            .arg("serve")
            .args(args)
            .current_dir(dir)
            .env("HOME", home);
    })
}

/// `initialize` with the given client capabilities, then `notifications/initialized`.
async fn initialize(server: &mut RawServer, capabilities: Value) {
    let response = server
        .request(
            0,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "toolcell-tests", "version": "0"},
            }),
        )
        .await;
    assert!(response.get("result").is_some(), "{response}");
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

fn text(response: &Value) -> String {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Class: started in `/` without a configuration, the embedded default mounts nothing (it used
/// to mount the whole disk), says so in the log, and the tools answer with how to grant a
/// folder.
#[tokio::test]
async fn the_root_directory_is_never_mounted_implicitly() {
    let home = Fixture::new();
    let mut server = serve_in(Path::new("/"), home.root(), &[]);
    initialize(&mut server, json!({})).await;
    let response = server
        .call(1, "read_file", json!({"path": "/etc/passwd"}))
        .await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    let message = text(&response);
    assert!(message.contains("`/`"), "{message}");
    assert!(message.contains("--mount DIR"), "{message}");
    assert!(message.contains("--config FILE"), "{message}");
    let finished = server.finish().await;
    assert!(
        finished.log.contains("no folder is mounted"),
        "{}",
        finished.log
    );

    // The command line says the same.
    let out = cli_with(
        &["call", "read_file", r#"{"path": "/etc/passwd"}"#],
        |command| {
            command.current_dir("/").env("HOME", home.root());
        },
    )
    .await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("--mount DIR"), "{out:?}");
    assert!(!out.stdout.contains("root:"), "{out:?}");
}

/// Class: started in the home directory, nothing is mounted either.
#[tokio::test]
async fn the_home_directory_is_never_mounted_implicitly() {
    let home = Fixture::new();
    home.write("secret.txt", "private\n");
    let out = cli_with(
        &["call", "read_file", r#"{"path": "secret.txt"}"#],
        |command| {
            command.current_dir(home.root()).env("HOME", home.root());
        },
    )
    .await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("home directory"), "{out:?}");
    assert!(!out.stdout.contains("private"), "{out:?}");
}

/// Class: a project directory (not a system or home directory) is mounted read-only, and the
/// log says so at info.
#[tokio::test]
async fn a_project_directory_is_mounted_read_only_and_logged() {
    let home = Fixture::new();
    let project = Fixture::new();
    project.write("notes.txt", "notes\n");
    let mut server = serve_in(project.root(), home.root(), &[]);
    initialize(&mut server, json!({})).await;
    let read = server
        .call(1, "read_file", json!({"path": "notes.txt"}))
        .await;
    assert_eq!(text(&read), "notes\n", "{read}");
    let finished = server.finish().await;
    let expected = format!(
        "mounted {} read-only for fs, search",
        project.root().display()
    );
    assert!(finished.log.contains(&expected), "{}", finished.log);
}

/// Class: a client that offers MCP roots gets them mounted (read-only) instead of the working
/// directory, and a `notifications/roots/list_changed` makes the server ask again.
#[tokio::test]
async fn client_roots_are_mounted_and_followed() {
    let home = Fixture::new();
    let first = Fixture::new();
    first.write("a.txt", "first root\n");
    let second = Fixture::new();
    second.write("b.txt", "second root\n");
    let mut server = serve_in(Path::new("/"), home.root(), &[]);
    initialize(&mut server, json!({"roots": {"listChanged": true}})).await;

    // The server asks for the roots once the client is initialized.
    answer_roots(&mut server, first.root()).await;
    let read = server.call(1, "read_file", json!({"path": "a.txt"})).await;
    assert_eq!(text(&read), "first root\n", "{read}");

    // The roots change: the server asks again and follows.
    server
        .send(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
        .await;
    answer_roots(&mut server, second.root()).await;
    // The new list is in place once the server has had the answer.
    let started = Instant::now();
    loop {
        let read = server.call(2, "read_file", json!({"path": "b.txt"})).await;
        if text(&read) == "second root\n" {
            break;
        }
        assert!(started.elapsed().as_secs() < 10, "{read}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let gone = server
        .call(3, "read_file", json!({"path": first.arg("a.txt")}))
        .await;
    assert_eq!(gone["result"]["isError"], true, "{gone}");
    // Writing stays off: roots are mounted read-only.
    let write = server
        .call(4, "write_file", json!({"path": "c.txt", "content": "x"}))
        .await;
    assert!(write.get("error").is_some(), "{write}");
    let finished = server.finish().await;
    assert!(
        finished
            .log
            .contains("mounted the client's roots read-only"),
        "{}",
        finished.log
    );
}

/// Waits for the server's `roots/list` request and answers it with one root, `dir`.
async fn answer_roots(server: &mut RawServer, dir: &Path) {
    let request = loop {
        let message = server.recv().await.expect("the stream is open");
        if message["method"] == "roots/list" {
            break message;
        }
        server.received.push(message);
    };
    let uri = url_of(dir);
    server
        .send(json!({"jsonrpc": "2.0", "id": request["id"],
            "result": {"roots": [{"uri": uri, "name": "project"}]}}))
        .await;
}

fn url_of(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// Class: `--mount DIR` grants a folder where none would be implicit; `DIR:rw` enables
/// writing; it cannot be combined with `--config`.
#[tokio::test]
async fn the_mount_flag_grants_folders() {
    let home = Fixture::new();
    let project = Fixture::new();
    project.write("notes.txt", "notes\n");
    let dir = project.root().display().to_string();
    let in_root = |command: &mut tokio::process::Command| {
        command.current_dir("/").env("HOME", home.root());
    };
    let read = cli_with(
        &[
            "call",
            "--mount",
            &dir,
            "read_file",
            r#"{"path": "notes.txt"}"#,
        ],
        in_root,
    )
    .await;
    assert_eq!(read.code(), 0, "{read:?}");
    assert_eq!(read.stdout, "notes\n");

    // Read-only by default: the write tools are not even enabled.
    let refused = cli_with(
        &[
            "call",
            "--mount",
            &dir,
            "write_file",
            r#"{"path": "new.txt", "content": "x"}"#,
        ],
        in_root,
    )
    .await;
    assert_eq!(refused.code(), 2, "{refused:?}");
    assert!(refused.stderr.contains("not enabled"), "{refused:?}");

    let rw = format!("{dir}:rw");
    let wrote = cli_with(
        &[
            "call",
            "--mount",
            &rw,
            "write_file",
            r#"{"path": "new.txt", "content": "x"}"#,
        ],
        in_root,
    )
    .await;
    assert_eq!(wrote.code(), 0, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(project.path("new.txt")).unwrap(),
        "x"
    );

    let both = cli(&["tools", "--mount", &dir, "--config", "plugins.toml"]).await;
    assert_eq!(both.code(), 2, "{both:?}");
}

/// Class: methods of capabilities the server does not declare answer -32601 naming the
/// capability, not empty results. (The probe plugin offers tools alone.)
#[tokio::test]
async fn undeclared_capabilities_are_method_not_found() {
    let project = Fixture::new();
    let probe = project.probe();
    let config = project.config(&format!(
        "[[plugin]]\nname = \"probe\"\npath = \"{probe}\"\n"
    ));
    let mut server = RawServer::spawn(&config, &[]);
    let init = server.initialize().await;
    assert!(init["capabilities"].get("prompts").is_none(), "{init}");
    assert!(init["capabilities"].get("resources").is_none(), "{init}");
    let cases = [
        ("prompts/list", json!({}), "prompts"),
        ("prompts/get", json!({"name": "x"}), "prompts"),
        ("resources/list", json!({}), "resources"),
        ("resources/templates/list", json!({}), "resources"),
        ("resources/read", json!({"uri": "file:///x"}), "resources"),
        (
            "resources/subscribe",
            json!({"uri": "file:///x"}),
            "resources",
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "x"},
                "argument": {"name": "a", "value": "b"}}),
            "completions",
        ),
    ];
    for (id, (method, params, capability)) in cases.into_iter().enumerate() {
        let response = server.request(id as i64 + 1, method, params).await;
        assert_eq!(response["error"]["code"], -32601, "{method}: {response}");
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(method) && message.contains(capability),
            "{method}: {message}"
        );
    }
    let unknown = server.request(50, "nonsense/method", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nonsense/method") && m.contains("tools")),
        "{unknown}"
    );
    server.finish().await;
}

/// Class: a disabled tool is not "unknown": the error says how to enable it; the command line
/// speaks of the command line; client mistakes are not logged as warnings.
#[tokio::test]
async fn messages_say_what_to_do_and_client_mistakes_are_not_warnings() {
    let project = Fixture::new();
    project.write("notes.txt", "notes\n");
    let config = project.config(
        "[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nmounts = [{ host = \".\", mode = \"ro\" }]\n",
    );
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;
    let disabled = server
        .call(1, "write_file", json!({"path": "x", "content": "y"}))
        .await;
    assert_eq!(disabled["error"]["code"], -32602, "{disabled}");
    let message = disabled["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not enabled"), "{message}");
    assert!(
        message.contains(r#"add "write" to [server] categories"#),
        "{message}"
    );
    let unknown = server.call(2, "nope", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("tools/list")),
        "{unknown}"
    );
    let invalid = server.call(3, "read_file", json!({"path": 5})).await;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    let _ = server.request(4, "nonsense/method", json!({})).await;
    let finished = server.finish().await;
    assert!(
        !finished.log.contains(" WARN "),
        "client mistakes were logged as warnings:\n{}",
        finished.log
    );

    let config_arg = config.display().to_string();
    let out = cli(&["call", "--config", &config_arg, "nope"]).await;
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("`toolcell tools`"), "{out:?}");
    assert!(!out.stderr.contains("tools/list"), "{out:?}");
    let out = cli(&["call", "--config", &config_arg, "write_file", "{}"]).await;
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("not enabled"), "{out:?}");
}

/// Class: a configuration error exits 2 from every command; a misspelt category is an error
/// naming the known ones, and `check` fails on it.
#[tokio::test]
async fn configuration_errors_exit_2_everywhere_and_categories_are_checked() {
    let project = Fixture::new();
    let broken = project.write("broken.toml", "[[plugin]]\nname = 5\n");
    let broken = broken.display().to_string();
    for command in [
        vec!["check", "--config", &broken],
        vec!["tools", "--config", &broken],
        vec!["call", "--config", &broken, "read_file"],
    ] {
        let out = cli(&command).await;
        assert_eq!(out.code(), 2, "{command:?}: {out:?}");
        assert!(out.stderr.contains("broken.toml"), "{out:?}");
    }

    // With builtins only, a misspelt category is a configuration error.
    let misspelt = project.write(
        "misspelt.toml",
        "[server]\ncategories = [\"read\", \"serach\"]\n\n[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\n",
    );
    let out = cli(&["serve", "--config", &misspelt.display().to_string()]).await;
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(out.stderr.contains("unknown category `serach`"), "{out:?}");
    assert!(out.stderr.contains("did you mean `search`?"), "{out:?}");
    assert!(
        out.stderr
            .contains("read, search, write, execute, vcs, network"),
        "{out:?}"
    );

    // With a component file, which may declare categories of its own, it is found once the
    // plugins are loaded: `check` fails on it.
    let probe = project.probe();
    let with_plugin = project.write(
        "with-plugin.toml",
        format!(
            "[server]\ncategories = [\"read\", \"serach\"]\n\n[[plugin]]\nname = \"probe\"\npath = {probe:?}\n"
        ),
    );
    let out = cli(&["check", "--config", &with_plugin.display().to_string()]).await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stderr.contains("unknown category `serach`"), "{out:?}");
    assert!(out.stderr.contains("did you mean `search`?"), "{out:?}");
}

/// Class: `--http localhost:PORT` is an address, not "invalid socket address syntax".
#[tokio::test]
async fn http_accepts_localhost() {
    let project = Fixture::new();
    let config = project.config(
        "[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nmounts = [{ host = \".\", mode = \"ro\" }]\n",
    );
    let config = config.display().to_string();
    let server = RawServer::spawn_with(bin(), |command| {
        command
            .args(["serve", "--config", &config, "--http", "localhost:0"])
            .stdin(std::process::Stdio::null());
    });
    server
        .log()
        .wait_for("serving MCP over HTTP at http://127.0.0.1:")
        .await;
    server.kill().await;
    let bad = cli(&["serve", "--http", "nowhere"]).await;
    assert_eq!(bad.code(), 2, "{bad:?}");
    assert!(bad.stderr.contains("localhost:PORT"), "{bad:?}");
}

/// Class: `--named-only` with no folder named (what Claude Desktop's bundle passes when the user
/// chose none) mounts nothing, not even a project directory it was started in, and says why.
#[tokio::test]
async fn named_only_with_no_folder_mounts_nothing() {
    let home = Fixture::new();
    let project = Fixture::new();
    project.write("notes.txt", "notes\n");
    let out = cli_with(
        &[
            "call",
            "--named-only",
            "read_file",
            r#"{"path": "notes.txt"}"#,
        ],
        |command| {
            command.current_dir(project.root()).env("HOME", home.root());
        },
    )
    .await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stdout.contains("no folder was chosen"), "{out:?}");
    assert!(!out.stdout.contains("notes"), "{out:?}");
    // A folder named is served, and only it.
    let chosen = Fixture::new();
    chosen.write("chosen.txt", "chosen\n");
    let mount = chosen.root().display().to_string();
    let out = cli_with(
        &[
            "call",
            "--named-only",
            "--mount",
            &mount,
            "read_file",
            r#"{"path": "chosen.txt"}"#,
        ],
        |command| {
            command.current_dir(project.root()).env("HOME", home.root());
        },
    )
    .await;
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("chosen"), "{out:?}");
}

/// The builtins served by default ship compiled: a first start with an empty compile cache
/// loads their code from the binary (into the cache) instead of compiling them, and the next
/// start maps it from the cache.
#[tokio::test]
async fn a_first_start_loads_the_builtins_compiled_at_build_time() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let check = || {
        cli_with(
            &["check", "--named-only", "--log-level", "debug"],
            |command| {
                command
                    .current_dir(dir.path())
                    .env("TOOLCELL_CACHE_DIR", cache.path());
            },
        )
    };
    let first = check().await;
    assert!(first.status.success(), "{first:?}");
    for plugin in ["fs", "search", "git"] {
        let loaded = format!("loaded the code compiled at build time plugin=\"{plugin}\"");
        assert!(first.stderr.contains(&loaded), "{plugin}: {}", first.stderr);
    }
    assert!(!first.stderr.contains("compiling"), "{}", first.stderr);
    let entries = std::fs::read_dir(cache.path())
        .unwrap()
        .filter(|entry| {
            let name = entry.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".cwasm")
        })
        .count();
    assert_eq!(entries, 3, "one cache entry per builtin");

    let second = check().await;
    assert!(second.status.success(), "{second:?}");
    for plugin in ["fs", "search", "git"] {
        let loaded = format!("loaded compiled component from cache plugin=\"{plugin}\"");
        assert!(
            second.stderr.contains(&loaded),
            "{plugin}: {}",
            second.stderr
        );
    }
}

/// A warm start reads what each plugin listed from the compile cache (`listings/`) instead of
/// instantiating it to ask again. A record changed along with its checksum is served as it
/// says, which shows that the record is what is read (the cache is trusted as its compiled
/// code is); a damaged one is listed afresh and written again.
#[tokio::test]
async fn a_warm_start_reads_each_listing_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let tools = || {
        cli_with(
            &["tools", "--named-only", "--log-level", "debug"],
            |command| {
                command
                    .current_dir(dir.path())
                    .env("TOOLCELL_CACHE_DIR", cache.path());
            },
        )
    };
    let listed = |stderr: &str, plugin: &str| {
        stderr.contains(&format!(
            "listed from the compile cache plugin=\"{plugin}\""
        ))
    };
    let first = tools().await;
    assert!(first.status.success(), "{first:?}");
    assert!(first.stdout.contains("read_file"), "{}", first.stdout);
    assert!(!listed(&first.stderr, "fs"), "{}", first.stderr);
    let records: Vec<_> = std::fs::read_dir(cache.path().join("listings"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(records.len(), 3, "one listing per builtin: {records:?}");

    let second = tools().await;
    assert!(second.status.success(), "{second:?}");
    for plugin in ["fs", "search", "git"] {
        assert!(
            listed(&second.stderr, plugin),
            "{plugin}: {}",
            second.stderr
        );
    }
    assert_eq!(second.stdout, first.stdout);

    let fs_record = records
        .iter()
        .find(|path| {
            String::from_utf8_lossy(&std::fs::read(path).unwrap()).contains(r#""name":"tail""#)
        })
        .expect("the fs plugin's listing");
    let original = std::fs::read(fs_record).unwrap();
    let (json, trailer) = original.split_at(original.len() - 24);
    assert_eq!(&trailer[16..], b"tcache01");
    let altered = String::from_utf8(json.to_vec())
        .unwrap()
        .replace(r#""name":"tail""#, r#""name":"tail_remembered""#);
    let mut record = altered.clone().into_bytes();
    record.extend_from_slice(&xxhash_rust::xxh3::xxh3_128(altered.as_bytes()).to_le_bytes());
    record.extend_from_slice(b"tcache01");
    std::fs::write(fs_record, &record).unwrap();
    let third = tools().await;
    assert!(third.status.success(), "{third:?}");
    assert!(third.stdout.contains("tail_remembered"), "{}", third.stdout);

    let mut damaged = original.clone();
    damaged[json.len() / 2] ^= 0x01;
    std::fs::write(fs_record, &damaged).unwrap();
    let fourth = tools().await;
    assert!(fourth.status.success(), "{fourth:?}");
    assert!(!listed(&fourth.stderr, "fs"), "{}", fourth.stderr);
    assert_eq!(fourth.stdout, first.stdout);
    assert_eq!(std::fs::read(fs_record).unwrap(), original, "written again");
}

/// A warm start serves a builtin from its remembered listing and links its code afterwards
/// (in the background, or for the first call that needs it): the call still works, and
/// `check` links every plugin before saying all is well.
#[tokio::test]
async fn a_warm_start_links_the_builtins_after_serving_their_listings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("note.txt"), "linked later\n").unwrap();
    let mount = dir.path().to_str().unwrap().to_string();
    let cache = tempfile::tempdir().unwrap();
    let run = |args: Vec<&str>| {
        let args: Vec<String> = args.into_iter().map(String::from).collect();
        let (dir, cache) = (dir.path().to_path_buf(), cache.path().to_path_buf());
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            cli_with(&args, |command| {
                command.current_dir(&dir).env("TOOLCELL_CACHE_DIR", &cache);
            })
            .await
        }
    };
    let call = || {
        vec![
            "call",
            "--named-only",
            "--log-level",
            "debug",
            "--mount",
            &mount,
            "read_file",
            r#"{"path": "note.txt"}"#,
        ]
    };
    let cold = run(call()).await;
    assert_eq!(cold.code(), 0, "{cold:?}");
    assert!(cold.stdout.contains("linked later"), "{cold:?}");
    assert!(
        !cold
            .stderr
            .contains("plugin linked after its listing was served"),
        "nothing is remembered yet: {}",
        cold.stderr
    );

    let warm = run(call()).await;
    assert_eq!(warm.code(), 0, "{warm:?}");
    assert!(warm.stdout.contains("linked later"), "{warm:?}");
    for line in [
        "listed from the compile cache plugin=\"fs\"",
        "plugin linked after its listing was served plugin=\"fs\"",
    ] {
        assert!(warm.stderr.contains(line), "{line}: {}", warm.stderr);
    }

    let check = run(vec![
        "check",
        "--named-only",
        "--log-level",
        "debug",
        "--mount",
        &mount,
    ])
    .await;
    assert_eq!(check.code(), 0, "{check:?}");
    for plugin in ["fs", "search", "git"] {
        let linked = format!("plugin linked after its listing was served plugin=\"{plugin}\"");
        assert!(check.stderr.contains(&linked), "{plugin}: {}", check.stderr);
    }
}
