//! The `toolcell` command: parse the command line, call the library, map
//! errors to exit codes, the same for every command: 0 ok, 1 a check that
//! found problems or a call whose result is an error, 2 a usage or
//! configuration error.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use rmcp::model::ContentBlock;
use toolcell::authoring::{self, Language, Project};
use toolcell::config::{self, Config, MountArg};
use toolcell::protocol::relay::StateKey;
use toolcell::protocol::server::{MountPolicy, Server};
use toolcell::runtime::builtin;
use toolcell::runtime::engine::{self, Engine};
use toolcell::runtime::plugin::CallContext;
use toolcell::runtime::toolbox::{self, Offered, Toolbox};

/// A check found problems, or a call's result is an error.
const EXIT_FAILED: u8 = 1;
/// A usage or configuration error.
const EXIT_USAGE: u8 = 2;

/// Toolcell: MCP tools that run in WebAssembly sandboxes and can reach only
/// what plugins.toml grants them.
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
    Serve(ServeArgs),
    /// List the enabled tools: plugin, category, annotations and mounts.
    Tools(Common),
    /// Run one tool call and print its result (exit status 1 if the result is an error).
    Call(CallArgs),
    /// Check the configuration and load every plugin; report every problem.
    Check(Common),
    /// Write a new plugin project: one example tool, a README, and a
    /// plugins.toml that serves the built component.
    New(NewArgs),
    /// Build the plugin project in DIR into DIR/<name>.wasm (Rust, Python or
    /// JavaScript), installing what the build needs into the cache directory.
    Build(BuildArgs),
    /// Tell whether Toolcell can load a component: its contract version, its
    /// tools and the capabilities it imports.
    Inspect(InspectArgs),
}

#[derive(Args)]
struct NewArgs {
    /// The plugin's name: a-z, 0-9, `_` and `-`, starting with a letter.
    name: String,

    /// The language of the project.
    #[arg(long, value_enum, default_value_t = Language::Rust)]
    lang: Language,

    /// The folder to create (default: ./NAME); it must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

#[derive(Args)]
struct BuildArgs {
    /// The project folder.
    #[arg(default_value = ".")]
    dir: PathBuf,

    /// Where build tools are installed (under `tools/`). Default:
    /// $TOOLCELL_CACHE_DIR, or the user's cache directory plus `toolcell`.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

#[derive(Args)]
struct InspectArgs {
    /// The component.
    file: PathBuf,

    /// Where compiled plugins are cached (as for `serve`).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile afresh and do not use the cache.
    #[arg(long)]
    no_cache: bool,
}

#[derive(Args, Clone)]
struct Common {
    /// The configuration file. Default: ./plugins.toml if it exists, otherwise
    /// the embedded default (the builtin plugins, with the client's MCP roots
    /// or the current directory mounted read-only; never `/`, the home
    /// directory or a system directory).
    #[arg(long, short, value_name = "FILE")]
    config: Option<PathBuf>,

    /// A folder the builtin plugins may see, instead of the default ones:
    /// DIR (read-only), DIR:ro or DIR:rw (which also enables the write tools).
    /// Repeatable. Serves the embedded default configuration; ./plugins.toml is
    /// not read.
    #[arg(long, value_name = "DIR[:ro|rw]", conflicts_with = "config")]
    mount: Vec<MountArg>,

    /// Log level for stderr: error, warn, info, debug or trace (RUST_LOG,
    /// when set, takes precedence).
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,

    /// Where compiled plugins are cached. Default: $TOOLCELL_CACHE_DIR, or
    /// the user's cache directory plus `toolcell`.
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile every plugin afresh and do not use the cache.
    #[arg(long)]
    no_cache: bool,
}

#[derive(Args)]
struct ServeArgs {
    #[command(flatten)]
    common: Common,

    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio,
    /// e.g. 127.0.0.1:8808 or localhost:8808. A non-loopback address requires
    /// a token.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    http: Option<std::net::SocketAddr>,

    /// A file holding the bearer token HTTP clients must send (default: the
    /// TOOLCELL_TOKEN variable; none on loopback if neither is set).
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,

    /// A browser origin allowed to connect over HTTP besides loopback ones,
    /// e.g. https://app.example.com:443 (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    allow_origin: Vec<String>,

    /// A Host header value allowed over HTTP besides loopback names and the
    /// listening address (repeatable).
    #[arg(long, value_name = "HOST", requires = "http")]
    allow_host: Vec<String>,

    /// At shutdown (SIGTERM, SIGINT), how long running HTTP calls may take to
    /// finish before they are interrupted.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "http")]
    shutdown_grace_ms: u64,
}

#[derive(Args)]
struct CallArgs {
    #[command(flatten)]
    common: Common,

    /// The tool to call.
    tool: String,

    /// The arguments, a JSON object.
    #[arg(default_value = "{}")]
    arguments: String,

    /// Print the whole MCP result as JSON instead of its text.
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (common, default_level) = match &cli.command {
        Command::Serve(args) => (Some(&args.common), "info"),
        Command::Check(common) => (Some(common), "info"),
        Command::Tools(common) => (Some(common), "warn"),
        Command::Call(args) => (Some(&args.common), "warn"),
        Command::New(_) | Command::Build(_) | Command::Inspect(_) => (None, "warn"),
    };
    let level = common.and_then(|common| common.log_level.as_deref());
    init_logging(level.unwrap_or(default_level));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => serve(&args).await,
            Command::Tools(common) => tools(&common),
            Command::Call(args) => call(args).await,
            Command::Check(common) => check(&common),
            Command::New(args) => new(&args),
            Command::Build(args) => build(&args),
            Command::Inspect(args) => inspect(&args),
        }
    });
    // Calls still running on blocking threads (a client that hung up
    // mid-call) must not hold the process open.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// `IP:PORT`, `[IPv6]:PORT`, or `localhost:PORT` (127.0.0.1).
fn listen_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let invalid = || {
        format!("invalid address {text:?}: expected IP:PORT or localhost:PORT, e.g. 127.0.0.1:8808")
    };
    let (host, port) = text.rsplit_once(':').ok_or_else(invalid)?;
    let port: u16 = port.parse().map_err(|_| invalid())?;
    if host.eq_ignore_ascii_case("localhost") {
        return Ok((std::net::Ipv4Addr::LOCALHOST, port).into());
    }
    Err(invalid())
}

fn init_logging(level: &str) {
    use tracing_subscriber::EnvFilter;
    // rmcp logs every session event at info, and every error response (a
    // client's mistake) at warn; keep those for debug levels.
    let directives = match level {
        "info" | "warn" | "error" => format!("{level},rmcp=error"),
        _ => level.to_string(),
    };
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(directives))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

/// Finds and validates the configuration, every error at once, and says
/// where calls get their directories when the configuration leaves it open.
fn load_config(common: &Common) -> Result<(Config, MountPolicy)> {
    let builtins = builtin::known();
    let defaults: Vec<_> = builtins
        .iter()
        .copied()
        .filter(|known| builtin::DEFAULT.contains(&known.name))
        .collect();
    let mut policy = MountPolicy::default();
    let result = match &common.config {
        Some(path) => Config::load(path, &builtins),
        None if !common.mount.is_empty() => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            if Path::new("plugins.toml").is_file() {
                tracing::info!("--mount given: serving the embedded default, not ./plugins.toml");
            }
            Config::embedded_default(&cwd, &common.mount, &defaults)
        }
        None if Path::new("plugins.toml").is_file() => {
            Config::load(Path::new("plugins.toml"), &builtins)
        }
        None => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
            let home = dirs::home_dir().map(|home| std::fs::canonicalize(&home).unwrap_or(home));
            policy.client_roots = true;
            policy.unmounted_reason = config::implicit_mount_refusal(&cwd, home.as_deref());
            let mounts = match policy.unmounted_reason {
                Some(_) => Vec::new(),
                None => vec![MountArg {
                    path: ".".to_owned(),
                    writable: false,
                }],
            };
            Config::embedded_default(&cwd, &mounts, &defaults)
        }
    };
    let config = result.map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        anyhow::anyhow!(
            "the configuration has {} error{}:\n{}",
            errors.len(),
            if errors.len() == 1 { "" } else { "s" },
            lines.join("\n")
        )
    })?;
    policy.categories = config.categories.clone();
    Ok((config, policy))
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

fn load_toolbox(common: &Common, config: &Config) -> Result<Arc<Toolbox>> {
    let cache_dir = if common.no_cache {
        None
    } else {
        common.cache_dir.clone().or_else(engine::default_cache_dir)
    };
    let descriptors = engine::raise_descriptor_limit();
    let engine = Arc::new(Engine::new(
        cache_dir,
        toolbox::capacity(config, descriptors),
    )?);
    let toolbox = Toolbox::load(config, &engine)?;
    for warning in toolbox.warnings() {
        tracing::warn!("{warning}");
    }
    Ok(Arc::new(toolbox))
}

async fn serve(args: &ServeArgs) -> Result<ExitCode> {
    let common = &args.common;
    // Check the token before the slow part, so a mistake is reported at once.
    let token = match args.http {
        Some(_) => toolcell::protocol::http::load_token(args.token_file.as_deref())?,
        None => None,
    };
    let (config, policy) = load_config(common)?;
    log_mounts(&config, &policy);
    // The server starts before the plugins are loaded, so that a client's
    // `initialize` is answered at once even when a cold compile cache makes
    // loading slow; `tools/list` and calls wait for the tools.
    let state_key = StateKey::from_env()?;
    let (server, loading) = Server::loading(config.max_concurrent_calls, policy, state_key);
    let mut serving = match args.http {
        Some(addr) => {
            let options = toolcell::protocol::http::HttpOptions {
                addr,
                token,
                allowed_origins: args.allow_origin.clone(),
                allowed_hosts: args.allow_host.clone(),
                shutdown_grace: std::time::Duration::from_millis(args.shutdown_grace_ms),
            };
            tokio::spawn(toolcell::protocol::http::serve_http(server, options))
        }
        None => {
            tracing::info!("serving MCP on stdio");
            tokio::spawn(toolcell::protocol::stdio::serve_stdio(server))
        }
    };
    let common = common.clone();
    let mut loaded = tokio::task::spawn_blocking(move || {
        let toolbox = load_toolbox(&common, &config)?;
        log_loaded(&config, &toolbox);
        anyhow::Ok(toolbox)
    });
    tokio::select! {
        // The server ended (stdin closed, a signal, or it could not start)
        // before the tools were ready.
        served = &mut serving => {
            served??;
            return Ok(ExitCode::SUCCESS);
        }
        toolbox = &mut loaded => match toolbox? {
            Ok(toolbox) => loading.ready(toolbox),
            Err(error) => {
                serving.abort();
                return Err(error);
            }
        },
    }
    serving.await??;
    Ok(ExitCode::SUCCESS)
}

fn log_loaded(config: &Config, toolbox: &Toolbox) {
    tracing::info!(
        config = %config.source,
        plugins = toolbox.plugins().len(),
        failed = toolbox.failures().len(),
        refused = toolbox.errors().len(),
        tools = toolbox.routes().len(),
        "tools loaded"
    );
}

fn tools(common: &Common) -> Result<ExitCode> {
    let (config, _) = load_config(common)?;
    let toolbox = load_toolbox(common, &config)?;
    let mut rows = vec![[
        "TOOL".to_string(),
        "PLUGIN".to_string(),
        "CATEGORY".to_string(),
        "ANNOTATIONS".to_string(),
        "MOUNTS".to_string(),
    ]];
    for route in toolbox.routes() {
        let hints = route.spec.mcp.annotations.clone().unwrap_or_default();
        let flag = |on: Option<bool>, yes: &str, no: &str| {
            if on.unwrap_or(false) { yes } else { no }.to_string()
        };
        let annotations = [
            flag(hints.read_only_hint, "read-only", "writes"),
            flag(hints.destructive_hint, "destructive", "non-destructive"),
            flag(hints.idempotent_hint, "idempotent", "non-idempotent"),
            flag(hints.open_world_hint, "open-world", "closed-world"),
        ]
        .join(",");
        let mounts = route
            .spec
            .mounts
            .iter()
            .map(|mount| {
                let mode = if mount.writable && !route.spec.read_only {
                    "rw"
                } else {
                    "ro"
                };
                format!("{} ({mode})", mount.host.display())
            })
            .collect::<Vec<_>>()
            .join(", ");
        rows.push([
            route.spec.name.clone(),
            route.plugin.name().to_string(),
            route.spec.category.clone(),
            annotations,
            if mounts.is_empty() {
                "-".into()
            } else {
                mounts
            },
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|col| {
            rows.iter()
                .map(|row| row[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col == 4 {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[col]));
            }
        }
        println!("{}", line.trim_end());
    }
    if !toolbox.disabled().is_empty() {
        let names: Vec<&str> = toolbox
            .disabled()
            .iter()
            .map(|r| r.spec.name.as_str())
            .collect();
        println!(
            "\n{} more tool(s) not enabled by [server] categories or `tools`: {}",
            names.len(),
            names.join(", ")
        );
    }
    print_offered("resources", toolbox.resources(), |r| &r.uri);
    print_offered("resource templates", toolbox.templates(), |t| {
        &t.uri_template
    });
    print_offered("prompts", toolbox.prompts(), |p| &p.name);
    for failure in toolbox.failures() {
        eprintln!(
            "error: plugin `{}` did not load: {}",
            failure.plugin, failure.error
        );
    }
    for error in toolbox.errors() {
        eprintln!("error: {error}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what plugins offer besides tools (contract 0.2.0), if any: each
/// item named by `key`, with its plugin.
fn print_offered<T>(what: &str, offered: &[Offered<T>], key: impl Fn(&T) -> &String) {
    if offered.is_empty() {
        return;
    }
    println!("\n{what}:");
    let width = offered
        .iter()
        .map(|o| key(&o.item).chars().count())
        .max()
        .unwrap_or(0);
    for item in offered {
        println!("  {:<width$}  {}", key(&item.item), item.plugin.name());
    }
}

async fn call(args: CallArgs) -> Result<ExitCode> {
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

fn check(common: &Common) -> Result<ExitCode> {
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

fn new(args: &NewArgs) -> Result<ExitCode> {
    let created = authoring::scaffold::new_project(&args.name, args.lang, args.dir.as_deref())?;
    let dir = created.dir.display();
    println!("created {} plugin `{}` in {dir}:", args.lang, args.name);
    for file in &created.files {
        println!("  {file}");
    }
    println!(
        "\nnext:\n  cd {dir}\n  toolcell build\n  toolcell call --config plugins.toml hello \
         '{{\"name\": \"world\"}}'"
    );
    Ok(ExitCode::SUCCESS)
}

fn build(args: &BuildArgs) -> Result<ExitCode> {
    let project = Project::find(&args.dir)?;
    let cache = args
        .cache_dir
        .clone()
        .or_else(engine::default_cache_dir)
        .context("no cache directory: set TOOLCELL_CACHE_DIR or pass --cache-dir")?;
    let component = authoring::build::build(&project, &cache)?;
    println!("{}", component.display());
    Ok(ExitCode::SUCCESS)
}

fn inspect(args: &InspectArgs) -> Result<ExitCode> {
    let cache_dir = if args.no_cache {
        None
    } else {
        args.cache_dir.clone().or_else(engine::default_cache_dir)
    };
    let (report, loadable) = authoring::inspect::inspect(&args.file, cache_dir)?;
    print!("{report}");
    Ok(if loadable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FAILED)
    })
}
