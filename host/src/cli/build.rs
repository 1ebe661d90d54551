//! `toolcell build`: a plugin project into a component.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use toolcell::authoring::{self, Project};
use toolcell::runtime::cache;

#[derive(Args)]
pub struct BuildArgs {
    /// The project folder.
    #[arg(default_value = ".")]
    pub dir: PathBuf,

    /// Where build tools are installed (under `tools/`). Default:
    /// $TOOLCELL_CACHE_DIR, or the user's cache directory plus `toolcell`.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Runs `toolcell build`.
pub fn run(args: &BuildArgs) -> Result<ExitCode> {
    let project = Project::find(&args.dir)?;
    let cache = args
        .cache_dir
        .clone()
        .or_else(cache::default_cache_dir)
        .context("no cache directory: set TOOLCELL_CACHE_DIR or pass --cache-dir")?;
    // The build tools run in the project's folder, where a relative path
    // would name another place.
    let cache = std::path::absolute(&cache)
        .with_context(|| format!("cannot resolve the cache directory {}", cache.display()))?;
    let component = authoring::build::build(&project, &cache)?;
    println!("{}", component.display());
    Ok(ExitCode::SUCCESS)
}
