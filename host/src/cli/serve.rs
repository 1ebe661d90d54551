//! `toolcell serve`: MCP on stdio, or over Streamable HTTP with `--http`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use toolcell::config::MountArg;
use toolcell::limits::{
    DEFAULT_BODY_TIMEOUT_MS, DEFAULT_HEADER_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_IP, DEFAULT_MAX_SESSIONS, DEFAULT_REPLAY_BUDGET_MB,
    DEFAULT_SESSION_IDLE_SECS, DEFAULT_SHUTDOWN_GRACE_MS,
};
use toolcell::protocol::http::{self, HttpLimits, HttpOptions, SessionLimits};
use toolcell::protocol::relay::StateKey;
use toolcell::protocol::server::Server;
use toolcell::protocol::stdio;

use super::{Common, load_config_with, load_toolbox_in, log_loaded, log_mounts, new_engine};

mod watch;

#[derive(Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub common: Common,

    /// Folders the tools may read (each one as `--mount DIR`, read-only), the
    /// way the official filesystem server takes them. The first folder named
    /// is the one relative paths start from. Taken as written: a `:ro` or
    /// `:rw` at the end is part of the name.
    #[arg(value_name = "DIR", conflicts_with = "config", value_parser = folder)]
    pub folders: Vec<String>,

    /// Folders the write tools may also change (each one as `--mount
    /// DIR:rw`). Takes every value that follows it, and none is allowed, so it
    /// may end the command line: `serve A --writable B C` reads A and
    /// writes B and C.
    #[arg(long, value_name = "DIR", num_args = 0.., conflicts_with = "config", value_parser = folder)]
    pub writable: Vec<String>,

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

    /// A drop folder (repeatable): each NAME.wasm in it is a plugin named
    /// NAME, granted what a NAME.toml beside it grants (nothing without
    /// one). Watched while serving: a new, replaced or removed file takes
    /// effect without a restart, and clients are told the lists changed.
    #[arg(long = "plugins", value_name = "DIR", value_parser = folder)]
    pub plugins: Vec<String>,

    /// Also reload plugins.toml when it changes (a version that does not
    /// validate is logged, and the previous one keeps serving).
    #[arg(long)]
    pub watch: bool,

    /// The most HTTP sessions live at once; an `initialize` past it gets 503
    /// with Retry-After.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_SESSIONS, requires = "http", value_parser = at_least_one)]
    pub max_sessions: usize,

    /// How long an HTTP session lives with no request from its client and no
    /// stream of it connected.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_SESSION_IDLE_SECS, requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub session_idle_secs: u64,

    /// What the events kept for resuming HTTP streams may add up to, across
    /// every session, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = DEFAULT_REPLAY_BUDGET_MB, requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub replay_budget_mb: u64,

    /// The most HTTP connections open at once; more are answered 503 and
    /// closed.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS, requires = "http", value_parser = at_least_one)]
    pub max_connections: usize,

    /// The most HTTP connections open from one address (on loopback, every
    /// local client shares one).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_IP, requires = "http", value_parser = at_least_one)]
    pub max_connections_per_ip: usize,

    /// How long an HTTP connection may take to send a request's headers, and
    /// may stay idle between requests, before it is closed.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_HEADER_TIMEOUT_MS, requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout_ms: u64,

    /// How long an HTTP request's body may take to arrive once its headers
    /// have; a slower one gets 408.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_BODY_TIMEOUT_MS, requires = "http", value_parser = clap::value_parser!(u64).range(1..))]
    pub body_timeout_ms: u64,
}

/// A count that must be at least 1.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(error) => Err(format!("{error}: expected a whole number, e.g. 64")),
    }
}

/// A folder named on the command line: any text but the empty one.
fn folder(text: &str) -> Result<String, String> {
    match text {
        "" => Err("a folder cannot be empty".to_owned()),
        _ => Ok(text.to_owned()),
    }
}

impl ServeArgs {
    /// The HTTP bounds the flags set.
    fn http_limits(&self) -> HttpLimits {
        HttpLimits {
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            header_timeout: Duration::from_millis(self.header_timeout_ms),
            body_timeout: Duration::from_millis(self.body_timeout_ms),
            sessions: SessionLimits {
                max_sessions: self.max_sessions,
                idle: Duration::from_secs(self.session_idle_secs),
                replay_budget: http::mib(self.replay_budget_mb),
            },
        }
    }

    /// The shared options, with the folders named as arguments of `serve`
    /// added to `--mount`: the read-only ones after those of `--mount`, then
    /// the writable ones. A writable folder already named read-only (the
    /// same folder chosen in both lists of Claude Desktop's settings) makes
    /// that mount writable where it stands, since the first of two mounts
    /// of one folder is the one used.
    pub fn common(&self) -> Common {
        let mut common = self.common.clone();
        let mounts = &mut common.mount;
        mounts.extend(self.folders.iter().map(|path| MountArg {
            path: path.clone(),
            writable: false,
        }));
        for path in &self.writable {
            let same = |mount: &&mut MountArg| same_folder(&mount.path, path);
            match mounts.iter_mut().find(same) {
                Some(mount) => mount.writable = true,
                None => mounts.push(MountArg {
                    path: path.clone(),
                    writable: true,
                }),
            }
        }
        common
    }
}

/// Whether two folders named on the command line are the same one.
fn same_folder(a: &str, b: &str) -> bool {
    let canonical = |path: &str| dunce::canonicalize(path).unwrap_or_else(|_| PathBuf::from(path));
    a == b || canonical(a) == canonical(b)
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
    let common = &args.common();
    // Check the token before the slow part, so a mistake is reported at once.
    let token = match args.http {
        Some(_) => http::load_token(args.token_file.as_deref())?,
        None => None,
    };
    let mut extra_dirs = Vec::new();
    for dir in &args.plugins {
        match dunce::canonicalize(dir) {
            Ok(found) if found.is_dir() => extra_dirs.push(found),
            Ok(_) => anyhow::bail!("--plugins {dir}: not a directory"),
            Err(error) => anyhow::bail!("--plugins {dir}: {error}"),
        }
    }
    let (config, policy) = load_config_with(common, &extra_dirs)?;
    log_mounts(&config, &policy);
    let config_file = PathBuf::from(&config.source);
    if args.watch && !config_file.is_file() {
        tracing::warn!("--watch: serving no plugins.toml, so there is none to watch");
    }
    let reloading = args.watch || !config.plugin_dirs.is_empty();
    let watch = reloading.then(|| watch::Watch {
        common: common.clone(),
        extra_dirs: extra_dirs.clone(),
        config_file: (args.watch && config_file.is_file()).then_some(config_file),
        memory_mb: config.largest_memory_mb(),
    });
    let first_look = watch.as_ref().map(|watch| watch.first_look(&config));
    // The server starts before the plugins are loaded, so that a client's
    // `initialize` is answered at once even when a cold compile cache makes
    // loading slow; `tools/list` and calls wait for the tools.
    let state_key = StateKey::from_env()?;
    let (server, loading) = Server::loading(config.max_concurrent_calls, policy, state_key);
    let server = if reloading {
        server.reloading()
    } else {
        server
    };
    let mut serving = match args.http {
        Some(addr) => {
            let options = HttpOptions {
                addr,
                token,
                allowed_origins: args.allow_origin.clone(),
                allowed_hosts: args.allow_host.clone(),
                shutdown_grace: Duration::from_millis(args.shutdown_grace_ms),
                limits: args.http_limits(),
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
        let engine = new_engine(&common, &config)?;
        let toolbox = load_toolbox_in(&engine, &config)?;
        log_loaded(&config, &toolbox);
        anyhow::Ok((engine, config, toolbox))
    });
    tokio::select! {
        // The server ended (stdin closed, a signal, or it could not start)
        // before the tools were ready.
        served = &mut serving => {
            served??;
            return Ok(ExitCode::SUCCESS);
        }
        toolbox = &mut loaded => match toolbox? {
            Ok((engine, config, toolbox)) => match (watch, first_look) {
                (Some(watch), Some(first_look)) => {
                    loading.replace(toolbox);
                    let watching = tokio::spawn(watch.run(engine, loading, config, first_look));
                    let served = serving.await;
                    watching.abort();
                    served??;
                    return Ok(ExitCode::SUCCESS);
                }
                _ => loading.ready(toolbox),
            },
            Err(error) => {
                serving.abort();
                return Err(error);
            }
        },
    }
    serving.await??;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn mounts(args: &[&str]) -> Vec<(String, bool)> {
        let cli = Cli::try_parse_from(std::iter::once("serve").chain(args.iter().copied()))
            .unwrap_or_else(|error| panic!("{args:?}: {error}"));
        let common = cli.serve.common();
        common
            .mount
            .into_iter()
            .map(|mount| (mount.path, mount.writable))
            .collect()
    }

    fn owned(mounts: &[(&str, bool)]) -> Vec<(String, bool)> {
        let owned = mounts.iter().map(|(path, rw)| (path.to_string(), *rw));
        owned.collect()
    }

    #[test]
    fn folders_as_arguments_and_writable() {
        assert_eq!(mounts(&[]), owned(&[]));
        assert_eq!(mounts(&["a", "b"]), owned(&[("a", false), ("b", false)]));
        // Taken as written: no `:rw` suffix on an argument.
        assert_eq!(mounts(&["a:rw"]), owned(&[("a:rw", false)]));
        // `--writable` takes what follows it, and may take nothing.
        assert_eq!(
            mounts(&["--named-only", "a", "--writable", "b", "c"]),
            owned(&[("a", false), ("b", true), ("c", true)])
        );
        assert_eq!(
            mounts(&["--named-only", "a", "--writable"]),
            owned(&[("a", false)])
        );
        assert_eq!(mounts(&["--named-only", "--writable"]), owned(&[]));
        // After `--mount`, which keeps its `:rw`.
        assert_eq!(
            mounts(&["--mount", "m:rw", "a", "--writable", "w"]),
            owned(&[("m", true), ("a", false), ("w", true)])
        );
        // A folder chosen in both lists is writable where it stands.
        assert_eq!(
            mounts(&["a", "b", "--writable", "a"]),
            owned(&[("a", true), ("b", false)])
        );
        let cli = Cli::try_parse_from(["serve", "--named-only", "--writable"]).unwrap();
        assert!(cli.serve.common.named_only);
    }

    #[test]
    fn the_http_bounds_come_from_their_flags() {
        let parse = |args: &[&str]| {
            let all = ["serve", "--http", "127.0.0.1:0"].iter().chain(args);
            Cli::try_parse_from(all).map(|cli| cli.serve.http_limits())
        };
        let defaults = parse(&[]).unwrap();
        let expected = HttpLimits::default();
        assert_eq!(defaults.max_connections, expected.max_connections);
        assert_eq!(defaults.header_timeout, expected.header_timeout);
        assert_eq!(
            defaults.sessions.replay_budget,
            expected.sessions.replay_budget
        );
        let set = parse(&["--max-sessions", "3", "--header-timeout-ms", "300"]).unwrap();
        assert_eq!(set.sessions.max_sessions, 3);
        assert_eq!(set.header_timeout, Duration::from_millis(300));
        for zero in ["--max-sessions", "--max-connections", "--header-timeout-ms"] {
            assert!(parse(&[zero, "0"]).is_err(), "{zero} 0");
        }
        assert!(
            Cli::try_parse_from(["serve", "--max-sessions", "3"]).is_err(),
            "needs --http"
        );
    }

    #[test]
    fn folders_and_config_conflict() {
        for args in [
            &["serve", "--config", "p.toml", "a"][..],
            &["serve", "--config", "p.toml", "--writable", "a"],
            &["serve", "--writable", ""],
            &["serve", ""],
        ] {
            assert!(Cli::try_parse_from(args).is_err(), "{args:?}");
        }
    }
}
