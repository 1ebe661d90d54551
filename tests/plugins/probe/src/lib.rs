//! `probe`: a test-only plugin that tries what the sandbox must govern.
//!
//! Each tool does one thing the host has to allow or refuse, so an
//! integration test can call it and check the outcome on the host's side:
//! - `write_attempt` writes a file; it is a write tool (category `write`,
//!   destructive), so it may succeed only on a mount granted `rw`.
//! - `write_attempt_ro` declares itself read-only yet writes anyway: the host
//!   mounts everything read-only for read-only tools, so it must fail.
//! - `print` floods the guest's stdout and stderr, which must reach the
//!   host's log and never the MCP stream.
//! - `env` and `config` report what the sandbox lets the guest see.

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Category, Error, Output, Tool, host};

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("write_attempt", write_attempt)
            .title("Write attempt")
            .description("Write `content` to `path`, replacing the file.")
            .category(Category::Write)
            .destructive(true),
        Tool::new("write_attempt_ro", write_attempt_ro)
            .title("Read-only write attempt")
            .description("Declared read-only, but writes a file at `path` anyway.")
            .category(Category::Read)
            .read_only(),
        Tool::new("print", print)
            .title("Print")
            .description("Print `lines` lines to stdout and to stderr.")
            .category(Category::Read)
            .read_only(),
        Tool::new("env", env)
            .title("Environment variable")
            .description("The value of the environment variable `name`, as the guest sees it.")
            .category(Category::Read)
            .read_only(),
        Tool::new("config", config)
            .title("Config value")
            .description("The value of `key` in this plugin's `config` table.")
            .category(Category::Read)
            .read_only(),
    ]
}

toolcell_sdk::export_plugin!(tools);

/// Arguments of `write_attempt`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct WriteArgs {
    /// The file to write: absolute, or relative to the first mount.
    path: String,
    /// What to write.
    content: String,
}

fn write_attempt(args: WriteArgs) -> Result<Output, Error> {
    write(&args.path, args.content.as_bytes())
}

/// Arguments of `write_attempt_ro`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct WriteRoArgs {
    /// The file to write: absolute, or relative to the first mount.
    path: String,
}

fn write_attempt_ro(args: WriteRoArgs) -> Result<Output, Error> {
    write(&args.path, b"written by a read-only tool\n")
}

fn write(path: &str, content: &[u8]) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(path)?;
    std::fs::write(&path, content).map_err(|e| Error::io(&path, e))?;
    Ok(Output::text(format!("wrote {} bytes", content.len())))
}

/// Arguments of `print`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct PrintArgs {
    /// How many lines to print to each of stdout and stderr.
    lines: u32,
}

fn print(args: PrintArgs) -> Result<Output, Error> {
    for i in 0..args.lines {
        println!("PROBE-STDOUT {i}");
        eprintln!("PROBE-STDERR {i}");
    }
    Ok(Output::text("printed"))
}

/// Arguments of `env`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct EnvArgs {
    /// The variable's name.
    name: String,
}

fn env(args: EnvArgs) -> Result<Output, Error> {
    match std::env::var(&args.name) {
        Ok(value) => Ok(Output::text(value)),
        Err(_) => Err(Error::new(format!("`{}` is not set", args.name))),
    }
}

/// Arguments of `config`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ConfigArgs {
    /// The key in the plugin's `config` table.
    key: String,
}

fn config(args: ConfigArgs) -> Result<Output, Error> {
    match host::config(&args.key) {
        Some(value) => Ok(Output::text(value)),
        None => Err(Error::new(format!("config key `{}` is not set", args.key))),
    }
}
