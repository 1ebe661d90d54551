//! `toolcell serve`: MCP on stdio, or over Streamable HTTP with `--http`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use toolcell::limits::DEFAULT_SHUTDOWN_GRACE_MS;
use toolcell::protocol::http::{self, HttpOptions};
use toolcell::protocol::relay::StateKey;
use toolcell::protocol::server::Server;
use toolcell::protocol::stdio;

use super::{Common, load_config, load_toolbox, log_loaded, log_mounts};

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: Common,

    /// Serve MCP over Streamable HTTP at http://ADDR/mcp instead of stdio,
    /// e.g. 127.0.0.1:8808 or localhost:8808. A non-loopback address requires
    /// a token.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub http: Option<std::net::SocketAddr>,

    /// A file holding the bearer token HTTP clients must send (default: the
    /// TOOLCELL_TOKEN variable; none on loopback if neither is set).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,

    /// A browser origin allowed to connect over HTTP besides loopback ones,
    /// e.g. https://app.example.com:443 (repeatable).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,

    /// A Host header value allowed over HTTP besides loopback names and the
    /// listening address (repeatable).
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,

    /// At shutdown (SIGTERM, SIGINT), how long running HTTP calls may take to
    /// finish before they are interrupted.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_SHUTDOWN_GRACE_MS, requires = "http")]
    pub shutdown_grace_ms: u64,
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

/// Runs `toolcell serve`.
pub async fn run(args: &ServeArgs) -> Result<ExitCode> {
    let common = &args.common;
    // Check the token before the slow part, so a mistake is reported at once.
    let token = match args.http {
        Some(_) => http::load_token(args.token_file.as_deref())?,
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
            let options = HttpOptions {
                addr,
                token,
                allowed_origins: args.allow_origin.clone(),
                allowed_hosts: args.allow_host.clone(),
                shutdown_grace: std::time::Duration::from_millis(args.shutdown_grace_ms),
            };
            tokio::spawn(http::serve_http(server, options))
        }
        None => {
            tracing::info!("serving MCP on stdio");
            tokio::spawn(stdio::serve_stdio(server))
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
