//! The `toolcell` command: parse the command line and dispatch to the
//! subcommand's file in `cli/`; errors map to the same exit codes for every
//! command: 0 ok, 1 a check that found problems or a call whose result is an
//! error, 2 a usage or configuration error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the tools over MCP: on stdin/stdout (for Claude Desktop and other
    /// local clients), or over Streamable HTTP with --http.
    Serve(cli::serve::ServeArgs),
    /// List the enabled tools: plugin, category, annotations and mounts.
    Tools(cli::Common),
    /// Run one tool call and print its result (exit status 1 if the result is an error).
    Call(cli::call::CallArgs),
    /// Check the configuration and load every plugin; report every problem.
    Check(cli::Common),
    /// Write a new plugin project: one example tool, a README, and a
    /// plugins.toml that serves the built component.
    New(cli::new::NewArgs),
    /// Build the plugin project in DIR into DIR/<name>.wasm (Rust, Python or
    /// JavaScript), installing what the build needs into the cache directory.
    Build(cli::build::BuildArgs),
    /// Tell whether Toolcell can load a component: its contract version, its
    /// tools and the capabilities it imports.
    Inspect(cli::inspect::InspectArgs),
    /// Fetch a component from an OCI registry (oci://REGISTRY/REPO:TAG) into
    /// the cache; print its digest and the `path = ...` line that pins it.
    Pull(cli::pull::PullArgs),
    /// Write a Claude Desktop extension (DIR/toolcell-VERSION-PLATFORM.mcpb)
    /// holding this binary, or one built for --target; print its path.
    Bundle(cli::bundle::BundleArgs),
}

fn main() -> ExitCode {
    cli::arenas::cap();
    let cli = Cli::parse();
    let (common, default_level) = match &cli.command {
        Command::Serve(args) => (Some(&args.common), "info"),
        Command::Check(common) => (Some(common), "info"),
        Command::Tools(common) => (Some(common), "warn"),
        Command::Call(args) => (Some(&args.common), "warn"),
        // Its progress (each blob's bytes) is logged at INFO.
        Command::Pull(_) => (None, "info"),
        Command::New(_) | Command::Build(_) | Command::Inspect(_) | Command::Bundle(_) => {
            (None, "warn")
        }
    };
    let level = common.and_then(|common| common.log_level.as_deref());
    cli::init_logging(level.unwrap_or(default_level));
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // One worker per core, as tokio's default, but from the count the runtime
    // reads once; TOKIO_WORKER_THREADS, when set, still decides (tokio reads it).
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(toolcell::runtime::cores());
    }
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(cli::EXIT_USAGE);
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => cli::serve::run(&args).await,
            Command::Tools(common) => cli::tools::run(&common),
            Command::Call(args) => cli::call::run(args).await,
            Command::Check(common) => cli::check::run(&common).await,
            Command::New(args) => cli::new::run(&args),
            Command::Build(args) => cli::build::run(&args),
            Command::Inspect(args) => cli::inspect::run(&args),
            Command::Pull(args) => cli::pull::run(&args),
            Command::Bundle(args) => cli::bundle::run(&args),
        }
    });
    // Calls still running on blocking threads (a client that hung up
    // mid-call) must not hold the process open.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(cli::EXIT_USAGE)
        }
    }
}
