//! The {{name}} plugin for Toolcell.

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Category, Error, Output, Tool};

/// Arguments of `hello`. Doc comments become schema descriptions the model reads.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Hello {
    /// Who to greet.
    name: String,
}

fn hello(args: Hello) -> Result<Output, Error> {
    Ok(Output::text(format!("Hello, {}!", args.name)))
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("hello", hello)
            .title("Hello")
            .description("Greet someone by name.")
            .category(Category::Read)
            .read_only()
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);
