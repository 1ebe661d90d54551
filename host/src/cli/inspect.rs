//! `toolcell inspect`: whether Toolcell can load a component, and what it
//! would serve.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use toolcell::authoring;
use toolcell::runtime::cache;

use super::EXIT_FAILED;

#[derive(Args)]
pub struct InspectArgs {
    /// The component.
    pub file: PathBuf,

    /// Where compiled plugins are cached (as for `serve`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Compile afresh and do not use the cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// Runs `toolcell inspect`.
pub fn run(args: &InspectArgs) -> Result<ExitCode> {
    let cache_dir = if args.no_cache {
        None
    } else {
        args.cache_dir.clone().or_else(cache::default_cache_dir)
    };
    let (report, loadable) = authoring::inspect::inspect(&args.file, cache_dir)?;
    print!("{report}");
    Ok(if loadable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    })
}
