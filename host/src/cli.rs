//! What every subcommand shares: the options that choose the
//! configuration, logging to stderr, loading the configuration and the
//! plugins, and the exit codes. Each subcommand is a file of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use toolcell::builtins::BUILTINS;
use toolcell::config::{self, Choice, Config, MountArg, MountPolicy};
use toolcell::runtime::cache;
use toolcell::runtime::engine::{self, Engine};
use toolcell::runtime::toolbox::{self, Toolbox};

pub mod arenas;
pub mod build;
pub mod bundle;
pub mod call;
pub mod check;
pub mod inspect;
mod logging;
pub mod new;
pub mod pull;
pub mod serve;
pub mod tools;

pub use logging::init_logging;

/// A check found problems, or a call's result is an error.
pub const EXIT_FAILED: u8 = 1;
/// A usage or configuration error.
pub const EXIT_USAGE: u8 = 2;

#[derive(Args, Clone)]
pub struct Common {
    /// The configuration file. Default: ./plugins.toml if it exists, otherwise
    /// the embedded default (the builtin plugins, with the client's MCP roots
    /// or the current directory mounted read-only; never `/`, the home
    /// directory or a system directory).
    #[arg(long, short, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// A folder the builtin plugins may see, instead of the default ones:
    /// DIR (read-only), DIR:ro or DIR:rw (which also enables the write tools).
    /// Repeatable. Serves the embedded default configuration; ./plugins.toml is
    /// not read.
    #[arg(long, value_name = "DIR[:ro|rw]", conflicts_with = "config")]
    pub mount: Vec<MountArg>,

    /// Serve exactly the folders named (with --mount, or as arguments of
    /// `serve`), none if none: never ./plugins.toml, the client's MCP roots
    /// or the current directory. For launchers that pass the folders a user
    /// chose, such as Claude Desktop's bundle.
    #[arg(long, conflicts_with = "config")]
    pub named_only: bool,

    /// Enable a category of tools on top of the configuration's: `execute`
    /// (run_python, run_js), `write`, `network`, ... Repeatable.
    #[arg(long, value_name = "CATEGORY")]
    pub enable: Vec<String>,

    /// Log level for stderr: error, warn, info, debug or trace (RUST_LOG,
    /// when set, takes precedence).
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,

    /// Where compiled plugins are cached. Default: $TOOLCELL_CACHE_DIR, or
    /// the user's cache directory plus `toolcell`.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Compile every plugin afresh and do not use the cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// Finds and validates the configuration, every error at once, and says
/// where calls get their directories when the configuration leaves it open
/// (see [`config::choose`]).
pub fn load_config(common: &Common) -> Result<(Config, MountPolicy)> {
    load_config_with(common, &[])
}

/// [`load_config`], with the plugins of the configuration's drop folders and
/// of `extra_dirs` (canonical) added; each drop-in refused is logged as an
/// ERROR naming its file, and the rest serve.
pub fn load_config_with(common: &Common, extra_dirs: &[PathBuf]) -> Result<(Config, MountPolicy)> {
    let (config, policy) = validated_config(common)?;
    let (config, refused) = config.with_dropins(extra_dirs);
    for refusal in refused {
        tracing::error!("drop-in refused: {refusal}");
    }
    Ok((config, policy))
}

fn validated_config(common: &Common) -> Result<(Config, MountPolicy)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let home = dirs::home_dir();
    let choice = Choice {
        file: common.config.as_deref(),
        mounts: &common.mount,
        named_only: common.named_only,
        enable: &common.enable,
    };
    config::choose(choice, &cwd, home.as_deref(), BUILTINS).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        anyhow::anyhow!(
            "the configuration has {} error{}:\n{}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            lines.join("\n")
        )
    })
}

/// Logs each mounted directory with its mode, and where the embedded
/// default's directories come from.
fn log_mounts(config: &Config, policy: &MountPolicy) {
    let mut mounted: Vec<(&Path, bool, Vec<&str>)> = Vec::new();
    for plugin in &config.plugins {
        let overrides = plugin.tools_overrides.values();
        let tool_mounts = overrides.filter_map(|tool| tool.mounts.as_deref());
        for mount in plugin.mounts.iter().chain(tool_mounts.flatten()) {
            let key = (mount.host.as_path(), mount.writable);
            match mounted.iter_mut().find(|(path, rw, _)| (*path, *rw) == key) {
                Some((_, _, plugins)) if plugins.contains(&plugin.name.as_str()) => {}
                Some((_, _, plugins)) => plugins.push(&plugin.name),
                None => mounted.push((key.0, key.1, vec![&plugin.name])),
            }
        }
    }
    for (path, writable, plugins) in mounted {
        let mode = if writable { "read-write" } else { "read-only" };
        tracing::info!(
            "mounted {} {mode} for {}",
            path.display(),
            plugins.join(", ")
        );
    }
    if policy.client_roots {
        tracing::info!(
            "a client that offers MCP roots gets them mounted read-only instead of the default"
        );
    }
    if let Some(reason) = &policy.unmounted_reason {
        tracing::warn!(
            "no folder is mounted: {reason}; the tools will answer with an error unless the \
             client offers MCP roots. Grant a folder with `--mount DIR` or `--config FILE`"
        );
    }
}

/// Loads every plugin of `config`, with the compile cache `common` names.
pub fn load_toolbox(common: &Common, config: &Config) -> Result<Arc<Toolbox>> {
    load_toolbox_in(&new_engine(common, config)?, config)
}

/// An engine sized for `config`, with the compile cache `common` names.
pub fn new_engine(common: &Common, config: &Config) -> Result<Arc<Engine>> {
    let cache_dir = if common.no_cache {
        None
    } else {
        common.cache_dir.clone().or_else(cache::default_cache_dir)
    };
    // Plugins from registries are cached under the same directory, even with --no-cache (which
    // is about compiled code).
    if let Some(dir) = common.cache_dir.clone().or_else(cache::default_cache_dir) {
        toolcell::runtime::oci::set_cache_dir(dir);
    }
    let descriptors = engine::raise_descriptor_limit();
    Ok(Arc::new(Engine::new(
        cache_dir,
        toolbox::capacity(config, descriptors),
    )?))
}

/// Loads every plugin of `config` in `engine`, and logs the warnings.
pub fn load_toolbox_in(engine: &Arc<Engine>, config: &Config) -> Result<Arc<Toolbox>> {
    let toolbox = Toolbox::load(config, engine)?;
    for warning in toolbox.warnings() {
        tracing::warn!("{warning}");
    }
    Ok(Arc::new(toolbox))
}

/// What `tools` and `serve` print of a loaded toolbox.
pub fn log_loaded(config: &Config, toolbox: &Toolbox) {
    tracing::info!(
        config = %config.source,
        plugins = toolbox.plugins().len(),
        failed = toolbox.failures().len(),
        refused = toolbox.errors().len(),
        tools = toolbox.routes().len(),
        "tools loaded"
    );
}
