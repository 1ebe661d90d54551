//! The subcommands other than `serve`: `tools`, `call`, `check`, and `--help` for each.

use crate::support::{Fixture, cli};

/// One fs plugin with `data/` mounted read-only and `data/notes.txt` in it; returns the
/// fixture and the config's path as a string.
fn fs_fixture() -> (Fixture, String) {
    let fixture = Fixture::new();
    fixture.write("data/notes.txt", "alpha\nbeta\ngamma\n");
    let config = fixture.config(
        r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }]
"#,
    );
    (fixture, config.display().to_string())
}

#[tokio::test]
async fn help_works_for_every_subcommand() {
    let top = cli(&["--help"]).await;
    assert_eq!(top.code(), 0, "{top:?}");
    for subcommand in ["serve", "tools", "call", "check"] {
        assert!(
            top.stdout.contains(subcommand),
            "`toolcell --help` does not mention `{subcommand}`:\n{}",
            top.stdout
        );
        let help = cli(&[subcommand, "--help"]).await;
        assert_eq!(help.code(), 0, "`toolcell {subcommand} --help`: {help:?}");
        assert!(
            help.stdout.contains("Usage") && help.stdout.contains("--config"),
            "`toolcell {subcommand} --help` shows no usage with --config:\n{}",
            help.stdout
        );
    }
}

#[tokio::test]
async fn tools_prints_a_table_of_the_tools() {
    let (_fixture, config) = fs_fixture();
    let out = cli(&["tools", "--config", &config]).await;
    assert_eq!(out.code(), 0, "{out:?}");
    let mut lines = out.stdout.lines().filter(|line| !line.trim().is_empty());
    let header = lines.next().unwrap_or_default().to_lowercase();
    for column in ["tool", "plugin", "category", "annotations", "mounts"] {
        assert!(
            header.contains(column),
            "the header lacks `{column}`: {header}"
        );
    }
    let rows: Vec<&str> = lines.collect();
    for tool in ["read_file", "tail", "file_info", "list_directory"] {
        let row = rows
            .iter()
            .find(|row| row.split_whitespace().next() == Some(tool))
            .unwrap_or_else(|| panic!("no row for `{tool}`:\n{}", out.stdout));
        assert!(row.contains("fs"), "`{tool}` row lacks its plugin: {row}");
        assert!(
            row.contains("read"),
            "`{tool}` row lacks its category: {row}"
        );
    }
    assert!(
        !out.stdout.contains("write_attempt"),
        "unexpected tools:\n{}",
        out.stdout
    );
}

#[tokio::test]
async fn call_prints_the_result_and_sets_the_exit_status() {
    let (fixture, config) = fs_fixture();
    let notes = fixture.arg("data/notes.txt");

    let arguments = serde_json::json!({"path": notes}).to_string();
    let ok = cli(&["call", "--config", &config, "read_file", &arguments]).await;
    assert_eq!(ok.code(), 0, "{ok:?}");
    assert!(ok.stdout.contains("alpha\nbeta\ngamma\n"), "{ok:?}");

    let missing = fixture.arg("data/absent.txt");
    let arguments = serde_json::json!({"path": missing}).to_string();
    let failed = cli(&["call", "--config", &config, "read_file", &arguments]).await;
    assert_eq!(failed.code(), 1, "an isError result exits 1: {failed:?}");
    assert!(
        failed.stdout.contains("absent.txt") || failed.stderr.contains("absent.txt"),
        "the error text is not shown: {failed:?}"
    );

    let unknown = cli(&["call", "--config", &config, "no_such_tool", "{}"]).await;
    assert_eq!(unknown.code(), 2, "an unknown tool exits 2: {unknown:?}");
    assert!(unknown.stderr.contains("no_such_tool"), "{unknown:?}");
}

#[tokio::test]
async fn call_with_a_bad_config_exits_2() {
    let fixture = Fixture::new();
    let config = fixture.config("[[plugin]]\nname = \"fs\"\npath = \"builtin:fs\"\nbogus = 1\n");
    let config = config.display().to_string();
    let out = cli(&["call", "--config", &config, "read_file", "{}"]).await;
    assert_eq!(out.code(), 2, "{out:?}");
    assert!(
        out.stderr.contains("bogus"),
        "the error should name the key: {out:?}"
    );
}

#[tokio::test]
async fn check_accepts_a_good_config() {
    let (_fixture, config) = fs_fixture();
    let out = cli(&["check", "--config", &config]).await;
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(!out.stdout.trim().is_empty(), "no summary: {out:?}");
}

#[tokio::test]
async fn check_names_a_plugin_that_fails_to_load() {
    let fixture = Fixture::new();
    fixture.mkdir("data");
    fixture.write(
        "plugins/junk.wasm",
        b"\0asm but not really a component, just junk",
    );
    let config = fixture.config(
        r#"
[[plugin]]
name = "broken-plugin"
path = "plugins/junk.wasm"

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }]
"#,
    );
    let out = cli(&["check", "--config", &config.display().to_string()]).await;
    assert_eq!(out.code(), 1, "{out:?}");
    assert!(out.stderr.contains("broken-plugin"), "{out:?}");
}

/// See: issue "Bounded everywhere", item 6: a plugin path at a FIFO hung `serve` and `check`, and
/// one at /dev/zero or a huge file was read whole. Each is refused alone; the rest serve.
#[tokio::test]
async fn plugin_files_that_are_not_regular_or_too_big_are_refused_alone() {
    let fixture = Fixture::new();
    fixture.write("data/notes.txt", "alpha\n");
    fixture.mkdir("plugins");
    crate::fs::mkfifo(&fixture.path("plugins/pipe.wasm"));
    fixture.write("plugins/big.wasm", vec![0u8; 2 << 20]);
    let config = fixture.config(
        r#"
[limits]
max_component_mb = 1

[[plugin]]
name = "pipe"
path = "plugins/pipe.wasm"

[[plugin]]
name = "zero"
path = "/dev/zero"

[[plugin]]
name = "big"
path = "plugins/big.wasm"

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }]
"#,
    );
    let config = config.display().to_string();
    let out = cli(&["check", "--config", &config]).await;
    assert_eq!(out.code(), 1, "{out:?}");
    for expected in [
        "plugin `pipe` did not load",
        "plugin `zero` did not load",
        "not a regular file",
        "plugin `big` did not load",
        "over the limit of 1048576 bytes",
    ] {
        assert!(out.stderr.contains(expected), "{expected}: {out:?}");
    }
    let out = cli(&[
        "call",
        "--config",
        &config,
        "read_file",
        r#"{"path": "notes.txt"}"#,
    ])
    .await;
    assert_eq!(out.code(), 0, "{out:?}");
    assert!(out.stdout.contains("alpha"), "{out:?}");
}

#[tokio::test]
async fn check_lists_every_config_problem() {
    let fixture = Fixture::new();
    let config = fixture.config(
        r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "no-such-dir", mode = "ro" }]

[[plugin]]
name = "other"
path = "builtin:fs"
unknown_key = true
"#,
    );
    let out = cli(&["check", "--config", &config.display().to_string()]).await;
    assert_eq!(
        out.code(),
        2,
        "a configuration error exits 2, as for every command: {out:?}"
    );
    assert!(out.stderr.contains("no-such-dir"), "{out:?}");
    assert!(out.stderr.contains("unknown_key"), "{out:?}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn calls_work_when_the_instance_pool_cannot_reserve_its_address_space() {
    // Under an 8 GB `ulimit -v` the pool's reservation (a few GiB per slot)
    // fails; the engine falls back to mapping memory per call.
    let (fixture, config) = fs_fixture();
    let notes = fixture.arg("data/notes.txt");
    let arguments = serde_json::json!({"path": notes}).to_string();
    let script = "ulimit -v 8000000 && exec \"$0\" call --config \"$1\" read_file \"$2\"";
    let output = tokio::process::Command::new("sh")
        .args(["-c", script])
        .arg(crate::support::bin())
        .args([&config, &arguments])
        .env(
            "TOOLCELL_CACHE_DIR",
            crate::support::workspace_root().join("target/test-cache"),
        )
        .env("NO_COLOR", "1")
        .output();
    let output = crate::support::within("`toolcell call` under ulimit -v", output)
        .await
        .expect("run sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("alpha\nbeta\ngamma\n"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("instance pool unavailable"), "{stderr}");
}
