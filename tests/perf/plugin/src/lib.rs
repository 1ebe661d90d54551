//! `perf`: a benchmark-only plugin with one tool, `<prefix>_echo`.
//!
//! The prefix comes from the plugin's `config` table (`config = { prefix =
//! "p17" }`), so a `plugins.toml` can load the same component a hundred times
//! under a hundred names without two copies offering the same tool; the
//! start-up benchmark uses it to show how start-up grows with the plugin
//! count. Without a prefix the tool is `perf_echo`.

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Category, Error, Output, Tool, host};

fn tools() -> Vec<Tool> {
    let prefix = host::config("prefix").unwrap_or_else(|| "perf".to_string());
    vec![
        Tool::new(format!("{prefix}_echo"), echo)
            .title("Echo")
            .description("Return `text` unchanged.")
            .category(Category::Read)
            .read_only()
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);

/// Arguments of `<prefix>_echo`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct EchoArgs {
    /// What to return.
    text: String,
}

fn echo(args: EchoArgs) -> Result<Output, Error> {
    Ok(Output::text(args.text))
}
