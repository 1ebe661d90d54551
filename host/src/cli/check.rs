//! `toolcell check`: load every plugin of a configuration and report
//! every problem.

use std::process::ExitCode;

use anyhow::Result;

use super::{Common, EXIT_FAILED, load_config, load_toolbox};

/// Runs `toolcell check`.
pub async fn run(common: &Common) -> Result<ExitCode> {
    let (config, _) = load_config(common)?;
    let toolbox = match load_toolbox(common, &config) {
        Ok(toolbox) => toolbox,
        Err(error) => {
            eprintln!("{}: {error:#}", config.source);
            return Ok(ExitCode::from(EXIT_FAILED));
        }
    };
    let mut problems = 0;
    for failure in toolbox.failures() {
        eprintln!(
            "{}: plugin `{}` did not load: {}",
            config.source, failure.plugin, failure.error
        );
        problems += 1;
    }
    // A builtin served from its remembered listing is linked after it
    // loads: wait for each, so that what would fail at its first call is
    // reported now.
    for plugin in toolbox.plugins() {
        if let Err(error) = plugin.ready().await {
            eprintln!("{}: {error}", config.source);
            problems += 1;
        }
    }
    for error in toolbox.errors() {
        eprintln!("{error}");
        problems += 1;
    }
    for warning in toolbox.warnings() {
        eprintln!("{}: {warning}", config.source);
        problems += 1;
    }
    for route in toolbox.routes().iter().chain(toolbox.disabled()) {
        if let Err(error) = route.spec.check_schema() {
            eprintln!(
                "{}: plugin `{}`: {error}",
                config.source,
                route.plugin.name()
            );
            problems += 1;
        }
    }
    if problems > 0 {
        eprintln!("{problems} problem(s) found");
        return Ok(ExitCode::from(EXIT_FAILED));
    }
    println!(
        "{}: ok: {} plugin(s), {} tool(s) enabled, {} not enabled",
        config.source,
        toolbox.plugins().len(),
        toolbox.routes().len(),
        toolbox.disabled().len()
    );
    Ok(ExitCode::SUCCESS)
}
