//! `toolcell new`: a plugin project to start from.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use toolcell::authoring::{self, Language};

#[derive(Args)]
pub struct NewArgs {
    /// The plugin's name: a-z, 0-9, `_` and `-`, starting with a letter.
    pub name: String,

    /// The language of the project.
    #[arg(long, value_enum, default_value_t = Language::Rust)]
    pub lang: Language,

    /// The folder to create (default: ./NAME); it must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Runs `toolcell new`.
pub fn run(args: &NewArgs) -> Result<ExitCode> {
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
