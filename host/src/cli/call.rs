//! `toolcell call`: one tool call, its result printed.

use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use rmcp::model::ContentBlock;
use toolcell::protocol::relay::StateKey;
use toolcell::protocol::server::Server;
use toolcell::runtime::call::CallContext;

use super::{Common, EXIT_FAILED, load_config, load_toolbox};

#[derive(Args)]
pub struct CallArgs {
    #[command(flatten)]
    pub common: Common,

    /// The tool to call.
    pub tool: String,

    /// The arguments, a JSON object.
    #[arg(default_value = "{}")]
    pub arguments: String,

    /// Print the whole MCP result as JSON instead of its text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `toolcell call`.
pub async fn run(args: CallArgs) -> Result<ExitCode> {
    let arguments: serde_json::Value = serde_json::from_str(&args.arguments)
        .with_context(|| format!("the arguments are not valid JSON: {}", args.arguments))?;
    let serde_json::Value::Object(arguments) = arguments else {
        bail!("the arguments must be a JSON object, such as '{{\"path\": \"README.md\"}}'");
    };
    let (config, policy) = load_config(&args.common)?;
    let toolbox = load_toolbox(&args.common, &config)?;
    for failure in toolbox.failures() {
        eprintln!(
            "warning: plugin `{}` did not load: {}",
            failure.plugin, failure.error
        );
    }
    if toolbox.get(&args.tool).is_none() {
        match toolbox.why_disabled(&config.categories, &args.tool) {
            Some(reason) => bail!("{reason}"),
            None => bail!(
                "unknown tool `{}`; `toolcell tools` lists the tools this configuration serves",
                args.tool
            ),
        }
    }
    let server = Server::new(
        toolbox,
        config.max_concurrent_calls,
        policy,
        StateKey::from_env()?,
    );
    let result = server
        .call(&args.tool, Some(arguments), CallContext::default())
        .await
        .map_err(|error| anyhow::anyhow!("{}", error.message))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        for block in &result.content {
            match block {
                ContentBlock::Text(text) => {
                    print!("{}", text.text);
                    if !text.text.ends_with('\n') {
                        println!();
                    }
                }
                ContentBlock::Image(image) => println!("[image, {}]", image.mime_type),
                ContentBlock::Audio(audio) => println!("[audio, {}]", audio.mime_type),
                ContentBlock::ResourceLink(link) => println!("[resource link: {}]", link.uri),
                ContentBlock::Resource(_) => println!("[embedded resource]"),
                _ => println!("[content block]"),
            }
        }
    }
    Ok(if result.is_error == Some(true) {
        ExitCode::from(EXIT_FAILED)
    } else {
        ExitCode::SUCCESS
    })
}
