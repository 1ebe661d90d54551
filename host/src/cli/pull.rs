//! `toolcell pull`: fetch a component from an OCI registry into the cache and print the digest
//! and the `path = ...` line that pins it.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Result, anyhow};
use clap::Args;
use toolcell::config::{OciAuth, OciReference, OciSource};
use toolcell::limits::DEFAULT_MAX_COMPONENT_MB;
use toolcell::runtime::oci;

#[derive(Args)]
pub struct PullArgs {
    /// The reference: oci://REGISTRY/REPOSITORY:TAG, or with @sha256:DIGEST.
    pub reference: String,

    /// Where pulled components are cached (its `oci` folder; as for `serve`).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,

    /// Check a cosign signature with this public key (PEM), as `verify = { key = ... }` does.
    #[arg(long, value_name = "FILE")]
    pub verify: Option<PathBuf>,

    /// Allow plain HTTP to a registry that is not on loopback.
    #[arg(long)]
    pub insecure: bool,

    /// The environment variable holding the user name (with --password-env).
    #[arg(long, value_name = "VAR", requires = "password_env")]
    pub username_env: Option<String>,

    /// The environment variable holding the password (with --username-env).
    #[arg(long, value_name = "VAR", requires = "username_env")]
    pub password_env: Option<String>,

    /// The environment variable holding a bearer token.
    #[arg(long, value_name = "VAR", conflicts_with = "username_env")]
    pub token_env: Option<String>,
}

/// Runs `toolcell pull`.
pub fn run(args: &PullArgs) -> Result<ExitCode> {
    let reference = OciReference::parse(&args.reference).map_err(|reason| anyhow!(reason))?;
    let auth = match (&args.username_env, &args.password_env, &args.token_env) {
        (Some(username_env), Some(password_env), _) => Some(OciAuth::Basic {
            username_env: username_env.clone(),
            password_env: password_env.clone(),
        }),
        (_, _, Some(token_env)) => Some(OciAuth::Token {
            token_env: token_env.clone(),
        }),
        _ => None,
    };
    let verify_key = match &args.verify {
        Some(path) => Some(std::path::absolute(path)?),
        None => None,
    };
    let source = OciSource {
        reference: reference.clone(),
        allow_unpinned: true,
        verify_key,
        insecure: args.insecure,
        auth,
    };
    let pulled = oci::pull(
        &source,
        args.cache_dir.as_deref(),
        DEFAULT_MAX_COMPONENT_MB << 20,
    )?;
    let how = if pulled.pulled {
        "pulled"
    } else {
        "already cached"
    };
    println!("{how}: oci://{reference}");
    println!("digest: {}", pulled.manifest_digest);
    println!(
        "component: {} bytes, at {}",
        pulled.bytes.len(),
        pulled.path.display()
    );
    if args.verify.is_some() {
        println!("signature: verified");
    }
    println!("\nIn a [[plugin]] table of plugins.toml:");
    println!("path = \"{}\"", reference.pinned(&pulled.manifest_digest));
    Ok(ExitCode::SUCCESS)
}
