//! `toolcell build`: a project into `<dir>/<name>.wasm`, whatever its
//! language.
//!
//! The tools a build needs are installed on demand under
//! `<cache>/tools/<tool>-<version>`, never globally: the wasm32-wasip2
//! target with rustup, componentize-py in a Python virtual environment,
//! componentize-js and esbuild with npm. An installation is complete only once
//! its marker file is written, so an interrupted one is redone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use super::{Embedded, Language, Project, WIT, materialise};

/// The Rust target plugins are built for.
const TARGET: &str = "wasm32-wasip2";

/// Builds `project` and returns the component's path. `cache` is Toolcell's
/// cache directory; progress goes to stderr.
pub fn build(project: &Project, cache: &Path) -> Result<PathBuf> {
    let started = Instant::now();
    eprintln!(
        "building {} ({}) in {}",
        project.name,
        project.language,
        project.dir.display()
    );
    let out = project.component();
    match project.language {
        Language::Rust => build_rust(project, &out)?,
        Language::Python => python::build(project, cache, &out)?,
        Language::Js => js::build(project, cache, &out)?,
    }
    let size = std::fs::metadata(&out)
        .with_context(|| format!("the build wrote no {}", out.display()))?
        .len();
    eprintln!(
        "built {} ({:.1} MiB) in {:.1} s",
        out.display(),
        size as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64()
    );
    Ok(out)
}

/// Runs `command`, its output going to stderr, and fails with `what` if it
/// does.
fn run(command: &mut Command, what: &str) -> Result<()> {
    let program = command.get_program().to_string_lossy().into_owned();
    let status = command
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .status()
        .with_context(|| format!("{what}: cannot run `{program}`"))?;
    if !status.success() {
        bail!("{what}: `{program}` failed ({status})");
    }
    Ok(())
}

/// Whether `program` can be started (it answers `--version`).
fn available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// A tool installed under the cache: `<cache>/tools/<name>`, complete once
/// `.complete` exists in it. `install` fills the folder it is given.
fn installed(
    cache: &Path,
    name: &str,
    what: &str,
    install: impl FnOnce(&Path) -> Result<()>,
) -> Result<PathBuf> {
    let dir = cache.join("tools").join(name);
    let marker = dir.join(".complete");
    if marker.is_file() {
        return Ok(dir);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)
            .with_context(|| format!("cannot remove the unfinished {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    eprintln!("installing {what} into {} (once)", dir.display());
    let started = Instant::now();
    install(&dir).with_context(|| format!("installing {what} failed"))?;
    std::fs::write(&marker, "").with_context(|| format!("cannot write {}", marker.display()))?;
    eprintln!(
        "installed {what} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(dir)
}

fn build_rust(project: &Project, out: &Path) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    ensure_rust_target(&project.dir)?;
    // Cargo's own default, and its variable when set.
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| project.dir.join("target"), PathBuf::from);
    run(
        Command::new(&cargo)
            .current_dir(&project.dir)
            .args(["build", "--release", "--target", TARGET, "--target-dir"])
            .arg(&target_dir)
            .arg("--manifest-path")
            .arg(project.dir.join("Cargo.toml")),
        "cargo build",
    )?;
    let built = target_dir
        .join(TARGET)
        .join("release")
        .join(format!("{}.wasm", project.name.replace('-', "_")));
    std::fs::copy(&built, out).with_context(|| {
        format!(
            "cargo built no {}: is the crate a `cdylib` ([lib] crate-type = [\"cdylib\"])?",
            built.display()
        )
    })?;
    Ok(())
}

/// Installs the wasm32-wasip2 target with rustup when the project's
/// toolchain lacks it.
fn ensure_rust_target(dir: &Path) -> Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .current_dir(dir)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let Some(sysroot) = sysroot else {
        bail!("cannot run `rustc`: building a Rust plugin needs Rust, from https://rustup.rs");
    };
    if sysroot.join("lib/rustlib").join(TARGET).is_dir() {
        return Ok(());
    }
    eprintln!("installing the {TARGET} target with rustup (once)");
    run(
        Command::new("rustup")
            .current_dir(dir)
            .args(["target", "add", TARGET]),
        &format!("the {TARGET} target is missing"),
    )
}

/// Python plugins: componentize-py, in a virtual environment under the
/// cache. The component's entry module is the SDK's `toolcell._component`,
/// which imports the author's `app`.
mod python {
    use super::*;

    /// The componentize-py release builds are made with.
    const VERSION: &str = "0.25.1";
    /// The `toolcell` package, as `sdk/python` holds it.
    const SDK: &[Embedded] = embed!(
        "sdk/python",
        "toolcell/__init__.py",
        "toolcell/_component.py",
        "toolcell/_schema.py",
        "toolcell/fs.py",
        "toolcell/host.py",
    );

    pub(super) fn build(project: &Project, cache: &Path, out: &Path) -> Result<()> {
        let entry = project.dir.join("app.py");
        if !entry.is_file() {
            bail!(
                "{} is missing: a Python plugin's module is app.py",
                entry.display()
            );
        }
        let venv = install(cache)?;
        let wit = materialise(&cache.join("sdk"), "wit", WIT)?;
        let sdk = materialise(&cache.join("sdk"), "python", SDK)?;
        run(
            Command::new(venv.join(BIN).join("componentize-py"))
                // Without it, componentize-py adds the site-packages of
                // whichever python3 is first on the PATH to the guest's path.
                .env("VIRTUAL_ENV", &venv)
                .env("RUST_LIB_BACKTRACE", "0")
                .arg("-d")
                .arg(&wit)
                .args(["-w", "toolcell:plugin/plugin@0.1.0", "componentize", "-p"])
                .arg(&sdk)
                .arg("-p")
                .arg(&project.dir)
                .arg("-o")
                .arg(out)
                .arg("toolcell._component"),
            "componentize-py",
        )
    }

    /// Where a virtual environment keeps its programs.
    const BIN: &str = if cfg!(windows) { "Scripts" } else { "bin" };

    fn install(cache: &Path) -> Result<PathBuf> {
        let python = ["python3", "python"]
            .into_iter()
            .find(|program| available(program))
            .context(
                "building a Python plugin needs python3 (3.9 or newer, with its venv module) on \
                 the PATH: install it from https://www.python.org or with your package manager \
                 (on Debian and Ubuntu, python3 and python3-venv)",
            )?;
        let name = format!("componentize-py-{VERSION}");
        installed(
            cache,
            &name,
            &format!("componentize-py {VERSION} (PyPI)"),
            |dir| {
                run(
                    Command::new(python).args(["-m", "venv"]).arg(dir),
                    "creating a virtual environment (is python3's venv module installed?)",
                )?;
                run(
                    Command::new(dir.join(BIN).join("pip")).args([
                        "install",
                        "--disable-pip-version-check",
                        "--quiet",
                        &format!("componentize-py=={VERSION}"),
                    ]),
                    "pip install",
                )
            },
        )
    }
}

/// JavaScript plugins: the author's module bundled with the SDK by esbuild
/// (componentize-js takes one file), then componentize-js. Both come from
/// npm at the versions `sdk/js/tools/package-lock.json` pins.
mod js {
    use super::*;

    /// The SDK, and the pinned build tools.
    const SDK: &[Embedded] = embed!("sdk/js", "toolcell.js");
    const TOOLS: &[Embedded] = embed!("sdk/js", "tools/package.json", "tools/package-lock.json");

    pub(super) fn build(project: &Project, cache: &Path, out: &Path) -> Result<()> {
        let entry = project.dir.join("app.js");
        if !entry.is_file() {
            bail!(
                "{} is missing: a JavaScript plugin's module is app.js",
                entry.display()
            );
        }
        if !available("node") || !available("npm") {
            bail!(
                "building a JavaScript plugin needs Node.js 20 or newer with npm on the PATH: \
                 install them from https://nodejs.org or with your package manager"
            );
        }
        let tools = install(cache)?;
        let wit = materialise(&cache.join("sdk"), "wit", WIT)?;
        let sdk = materialise(&cache.join("sdk"), "js", SDK)?;
        let bin = tools.join("node_modules/.bin");
        // componentize-js sees only its working directory: a scratch one.
        let scratch = tempfile::Builder::new()
            .prefix("js-build-")
            .tempdir_in(cache.join("tools"))
            .context("cannot create a build folder")?;
        let bundle = scratch.path().join(format!("{}.js", project.name));
        run(
            Command::new(bin.join("esbuild"))
                .arg(&entry)
                .args(["--bundle", "--format=esm", "--platform=browser"])
                .arg(format!(
                    "--alias:toolcell={}",
                    sdk.join("toolcell.js").display()
                ))
                .args([
                    "--external:wasi:*",
                    "--external:toolcell:*",
                    "--log-level=warning",
                ])
                .arg(format!("--outfile={}", bundle.display())),
            "bundling app.js with the SDK",
        )?;
        run(
            Command::new(bin.join("componentize-js"))
                .current_dir(scratch.path())
                .arg(&bundle)
                .arg("--wit")
                .arg(&wit)
                .args(["--world-name", "toolcell:plugin/plugin@0.1.0", "-o"])
                .arg(out),
            "componentize-js",
        )
    }

    /// The build tools, installed once per lockfile.
    fn install(cache: &Path) -> Result<PathBuf> {
        let lock = TOOLS
            .iter()
            .map(|(_, text)| *text)
            .collect::<Vec<_>>()
            .concat();
        let name = format!("js-{}", &super::super::digest(lock.as_bytes())[..16]);
        installed(cache, &name, "componentize-js and esbuild (npm)", |dir| {
            for (file, text) in TOOLS {
                let file = Path::new(file).file_name().context("a file name")?;
                std::fs::write(dir.join(file), text)?;
            }
            // The lockfile holds the exact tree; nothing needs install scripts.
            run(
                Command::new("npm")
                    .arg("install")
                    .arg("--prefix")
                    .arg(dir)
                    .args([
                        "--ignore-scripts",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                    ]),
                "npm install",
            )
        })
    }
}
