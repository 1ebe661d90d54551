//! The configuration's tests: parsing and validation of `plugins.toml`,
//! including the golden files of `tests/config/invalid`.

// A failed unwrap is a failed test; the workspace lint is for non-test code.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use super::validate::base_dir;
use super::*;
use crate::builtins::{Build, Builtin};

/// The builtins the tests know: `fs` alone, so that messages listing them stay short.
pub(super) const BUILTINS: &[Builtin] = &[builtin("fs", &["max_file_bytes", "max_diff_bytes"])];

/// A builtin called `name` that takes `config_keys`, as the configuration sees it.
pub(super) const fn builtin(name: &'static str, config_keys: &'static [&'static str]) -> Builtin {
    Builtin {
        name,
        build: Build::Package(""),
        file: "",
        config_keys,
        initial_memory_mib: None,
        by_default: true,
        gated_by: None,
        in_crate: true,
    }
}

fn parse_in(dir: &Path, text: &str) -> Result<Config, Vec<ConfigError>> {
    Config::parse(text, "plugins.toml", dir, BUILTINS)
}

pub(super) fn messages(result: Result<Config, Vec<ConfigError>>) -> Vec<String> {
    match result {
        Ok(config) => panic!("expected errors, got {config:?}"),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn empty_file_gets_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let config = parse_in(dir.path(), "").unwrap();
    assert_eq!(config.source, "plugins.toml");
    assert_eq!(config.categories, DEFAULT_CATEGORIES);
    assert_eq!(config.limits, Limits::default());
    assert_eq!(
        config.limits,
        Limits {
            timeout_ms: 30_000,
            memory_mb: 256,
            max_output_bytes: 1_048_576
        }
    );
    assert_eq!(config.max_concurrent_calls, 16);
    assert!(config.plugins.is_empty());
}

#[test]
fn plugin_defaults_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    // A component file may declare its own categories, so `my-category`
    // is left for the toolbox to check once the plugins are loaded.
    std::fs::write(dir.path().join("own.wasm"), b"\0asm").unwrap();
    let text = r#"
        [server]
        categories = ["read", "write", "my-category"]

        [[plugin]]
        name = "own"
        path = "own.wasm"

        [limits]
        timeout_ms = 1000
        max_concurrent_calls = 4
        max_subscriptions = 3

        [[plugin]]
        name = "plain"
        path = "builtin:fs"

        [[plugin]]
        name = "tuned"
        path = "builtin:fs"
        env = ["HOME", "_X1"]
        tools = ["read_file"]
        limits = { memory_mb = 4096, max_output_bytes = 10 }
    "#;
    let config = parse_in(dir.path(), text).unwrap();
    assert_eq!(config.categories, ["read", "write", "my-category"]);
    assert_eq!(config.max_concurrent_calls, 4);
    assert_eq!(config.subscriptions.per_connection, 3);
    assert_eq!(
        config.subscriptions.distinct,
        crate::limits::DEFAULT_MAX_FOLLOWED_RESOURCES
    );
    let top = Limits {
        timeout_ms: 1000,
        ..Limits::default()
    };
    assert_eq!(config.limits, top);

    let plain = &config.plugins[1];
    assert_eq!(plain.name, "plain");
    assert_eq!(plain.source, PluginSource::Builtin("fs".to_owned()));
    assert!(plain.mounts.is_empty());
    assert!(plain.env.is_empty());
    assert_eq!(plain.tools, None);
    assert!(plain.config.is_empty());
    assert_eq!(plain.limits, top);
    assert!(plain.tools_overrides.is_empty());

    let tuned = &config.plugins[2];
    assert_eq!(tuned.env, ["HOME", "_X1"]);
    assert_eq!(tuned.tools, Some(vec!["read_file".to_owned()]));
    assert_eq!(
        tuned.limits,
        Limits {
            timeout_ms: 1000,
            memory_mb: 4096,
            max_output_bytes: 10
        }
    );
}

#[test]
fn tool_overrides_layer_over_the_plugin() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let text = r#"
        [limits]
        timeout_ms = 1000

        [[plugin]]
        name = "fs"
        path = "builtin:fs"
        mounts = [{ host = ".", mode = "ro" }]
        limits = { memory_mb = 128 }

        [[plugin.tool]]
        name = "write_file"
        mounts = [{ host = "./out", mode = "rw" }]
        limits = { max_output_bytes = 10 }

        [[plugin.tool]]
        name = "slow.search"
        limits = { timeout_ms = 9000, memory_mb = 512 }

        [[plugin.tool]]
        name = "Isolated-1"
        mounts = []
    "#;
    let config = parse_in(dir.path(), text).unwrap();
    let fs = &config.plugins[0];
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let out = root.join("out");
    let plugin_mounts = [Mount {
        host: root,
        writable: false,
    }];
    let plugin_limits = Limits {
        timeout_ms: 1000,
        memory_mb: 128,
        max_output_bytes: 1_048_576,
    };
    assert_eq!(fs.mounts, plugin_mounts);
    assert_eq!(fs.limits, plugin_limits);
    let names: Vec<&str> = fs.tools_overrides.keys().map(String::as_str).collect();
    assert_eq!(names, ["Isolated-1", "slow.search", "write_file"]);

    // Mounts replaced; limits: server timeout, plugin memory, tool output.
    let write_mounts = [Mount {
        host: out,
        writable: true,
    }];
    let write_limits = Limits {
        max_output_bytes: 10,
        ..plugin_limits
    };
    assert_eq!(
        fs.tools_overrides["write_file"],
        ToolOverride {
            mounts: Some(write_mounts.to_vec()),
            limits: write_limits,
        }
    );
    assert_eq!(fs.mounts_for("write_file"), write_mounts);
    assert_eq!(fs.limits_for("write_file"), write_limits);

    // No `mounts`: the plugin's; the tool's limits win over both levels above.
    assert_eq!(fs.tools_overrides["slow.search"].mounts, None);
    assert_eq!(fs.mounts_for("slow.search"), plugin_mounts);
    assert_eq!(
        fs.limits_for("slow.search"),
        Limits {
            timeout_ms: 9000,
            memory_mb: 512,
            max_output_bytes: 1_048_576,
        }
    );

    // `mounts = []` replaces the plugin's mounts with none; no `limits`: the plugin's.
    assert_eq!(fs.mounts_for("Isolated-1"), []);
    assert_eq!(fs.limits_for("Isolated-1"), plugin_limits);

    // A tool without an override, and names are case-sensitive.
    assert_eq!(fs.mounts_for("read_file"), plugin_mounts);
    assert_eq!(fs.limits_for("read_file"), plugin_limits);
    assert_eq!(fs.mounts_for("WRITE_FILE"), plugin_mounts);
}

#[test]
fn inline_tool_array_is_the_same_as_tables() {
    let dir = tempfile::tempdir().unwrap();
    let tables = r#"
        [[plugin]]
        name = "fs"
        path = "builtin:fs"

        [[plugin.tool]]
        name = "a"
        mounts = [{ host = ".", mode = "rw" }]

        [[plugin.tool]]
        name = "b"
        limits = { timeout_ms = 5 }
    "#;
    let inline = r#"
        [[plugin]]
        name = "fs"
        path = "builtin:fs"
        tool = [
            { name = "a", mounts = [{ host = ".", mode = "rw" }] },
            { name = "b", limits = { timeout_ms = 5 } },
        ]
    "#;
    let from_tables = parse_in(dir.path(), tables).unwrap();
    let from_inline = parse_in(dir.path(), inline).unwrap();
    assert_eq!(from_tables.plugins[0].tools_overrides.len(), 2);
    assert_eq!(
        from_tables.plugins[0].tools_overrides,
        from_inline.plugins[0].tools_overrides
    );
}

#[test]
fn mounts_are_canonicalised() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir_all(real.join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    let link = if cfg!(unix) { "link" } else { "real" };
    let text = format!(
        r#"
        [[plugin]]
        name = "fs"
        path = "builtin:fs"
        mounts = [
            {{ host = "real/sub/..", mode = "ro" }},
            {{ host = "{link}", mode = "rw" }},
        ]
        "#
    );
    let config = parse_in(dir.path(), &text).unwrap();
    let canonical = std::fs::canonicalize(&real).unwrap();
    assert_eq!(
        config.plugins[0].mounts,
        [
            Mount {
                host: canonical.clone(),
                writable: false
            },
            Mount {
                host: canonical,
                writable: true
            },
        ]
    );
}

#[test]
fn file_plugin_resolves_against_the_config_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("plugins")).unwrap();
    std::fs::write(dir.path().join("plugins/echo.wasm"), b"\0asm").unwrap();
    let config_path = dir.path().join("plugins.toml");
    std::fs::write(
        &config_path,
        "[[plugin]]\nname = \"echo\"\npath = \"plugins/echo.wasm\"\n",
    )
    .unwrap();
    let config = Config::load(&config_path, BUILTINS).unwrap();
    assert_eq!(config.source, config_path.display().to_string());
    let expected = std::fs::canonicalize(dir.path().join("plugins/echo.wasm")).unwrap();
    assert!(expected.is_absolute());
    assert_eq!(config.plugins[0].source, PluginSource::File(expected));
}

#[test]
fn config_values_are_stringified() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.wasm"), b"\0asm").unwrap();
    let text = r#"
        [[plugin]]
        name = "p"
        path = "p.wasm"
        config = { s = "text", i = -3, f = 1.0, g = 2.5, b = true, "odd key" = "x" }
    "#;
    let config = parse_in(dir.path(), text).unwrap();
    let values: Vec<(&str, &str)> = config.plugins[0]
        .config
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        values,
        [
            ("b", "true"),
            ("f", "1.0"),
            ("g", "2.5"),
            ("i", "-3"),
            ("odd key", "x"),
            ("s", "text"),
        ]
    );
}

#[test]
fn unreadable_file_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent.toml");
    let errors = Config::load(&missing, BUILTINS).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].file, missing.display().to_string());
    assert_eq!(errors[0].key, "(file)");
    assert!(errors[0].message.starts_with("cannot read file: "));
}

#[test]
fn base_dir_of_a_bare_file_name_is_dot() {
    assert_eq!(base_dir(Path::new("plugins.toml")), Path::new("."));
    assert_eq!(base_dir(Path::new("a/plugins.toml")), Path::new("a"));
    assert_eq!(base_dir(Path::new("/plugins.toml")), Path::new("/"));
}

#[test]
fn valid_full_example_parses() {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/config/valid/full.toml"
    ));
    let config = match Config::load(path, BUILTINS) {
        Ok(config) => config,
        Err(errors) => panic!(
            "{}",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        ),
    };
    assert!(!config.plugins.is_empty());
    let overridden: Vec<(&str, Vec<&str>)> = config
        .plugins
        .iter()
        .map(|p| {
            let tools = p.tools_overrides.keys().map(String::as_str).collect();
            (p.name.as_str(), tools)
        })
        .collect();
    assert_eq!(
        overridden,
        [("fs", vec!["list_dir"]), ("fs-minimal", vec!["read_file"])]
    );
    // A plugin's own cap and categories; none unless written.
    let caps: Vec<(Option<usize>, &[String])> = config
        .plugins
        .iter()
        .map(|p| (p.max_concurrent_calls, p.categories.as_slice()))
        .collect();
    assert_eq!(
        caps,
        [(Some(4), &["network".to_owned()][..]), (None, &[][..])]
    );
}

/// Each `tests/config/invalid/<case>.toml` must produce exactly the errors in `<case>.err`.
/// With `TOOLCELL_BLESS=1`, writes the `.err` files instead.
#[test]
fn invalid_golden_files() {
    let dir = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/config/invalid"
    ));
    let canonical_dir = std::fs::canonicalize(dir).unwrap().display().to_string();
    let bless = std::env::var_os("TOOLCELL_BLESS").is_some_and(|v| v == "1");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 12, "only {} cases", cases.len());

    let mut failures = Vec::new();
    for case in &cases {
        let file_name = case.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(case).unwrap();
        let actual = match Config::parse(&text, file_name, dir, BUILTINS) {
            Ok(_) => {
                failures.push(format!("{file_name}: parsed without errors"));
                continue;
            }
            // Resolved paths differ from machine to machine.
            Err(errors) => errors
                .iter()
                .map(|e| format!("{e}\n").replace(&canonical_dir, "<dir>"))
                .collect::<String>(),
        };
        let err_path = case.with_extension("err");
        if bless {
            std::fs::write(&err_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&err_path).unwrap_or_default();
        if actual != expected {
            failures.push(format!(
                "{file_name}:\n--- expected\n{expected}--- actual\n{actual}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches (rerun with TOOLCELL_BLESS=1 to update):\n{}",
        failures.join("\n")
    );
}
