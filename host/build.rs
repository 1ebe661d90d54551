//! Embeds the first-party plugins listed in `src/builtins.rs`: leaves each
//! component in `OUT_DIR` with its SHA-256 beside it (so that finding one in
//! the compile cache does not mean hashing megabytes at every start), and a
//! table, `embedded.rs`, that `src/runtime/builtin.rs` includes to embed
//! them. It also writes `OUT_DIR/SHA256SUMS`, the manifest that
//! `tests/package/stage.sh` copies into a package.
//!
//! Where the components come from depends on where this crate is built:
//!
//! - In the repository (`../plugins` exists): built from source for
//!   wasm32-wasip2 by a nested cargo with its own target directory (so it
//!   never waits on the outer build's lock), after installing the target
//!   with rustup when it is missing.
//! - In a packaged crate (`cargo package`, crates.io; `../plugins` is
//!   absent): the components built and staged by `tests/package/stage.sh`
//!   into `packaged/plugins/`, each checked against its SHA-256 in
//!   `packaged/plugins/SHA256SUMS`. Neither the target nor a nested build is
//!   needed. The other files of the repository that the crate embeds (the
//!   WIT, the SDKs' templates) are staged in `packaged/` under the same
//!   relative paths.
//!
//! In the repository, it also compiles the builtins that are
//! `precompiled()` to native code for the target, with `host/precompile`
//! (built for this machine), and the table embeds that code too, so that a
//! first start need not compile them. A packaged crate, or a target of
//! another architecture than this machine's, embeds none.
//!
//! Either way it tells the crate where those files are: the environment
//! variable `TOOLCELL_SOURCES` (the repository's root, or a copy of
//! `packaged/` in `OUT_DIR` with the names `stage.sh` had to change given
//! back), for `include_str!`, and the cfg `toolcell_packaged`, for the WIT
//! bindings (`bindgen!` takes a literal path: `packaged/wit`).
//!
//! In a release build for Linux on x86-64 it also lays out the binary's
//! code, the functions a server runs first and together (`hot-code/link.rs`).

#![allow(clippy::expect_used)] // a build script reports failure by panicking

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

#[allow(dead_code)] // `find` is for the crate, not for this script
#[path = "src/builtins.rs"]
mod builtins;

#[path = "hot-code/link.rs"]
mod hot_code;

use builtins::{BUILTINS, Build};

const TARGET: &str = "wasm32-wasip2";

/// The folder of a packaged crate that holds the staged files, relative to
/// this crate's root.
const PACKAGED: &str = "packaged";

/// The manifest of the components: `<SHA-256 in hex>  <NAME>.wasm` lines
/// (the format of `sha256sum`, which can check it too).
const SUMS: &str = "SHA256SUMS";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .parent()
        .expect("host/ sits in the workspace root");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    println!("cargo::rustc-check-cfg=cfg(toolcell_packaged)");
    hot_code::apply(&manifest_dir, &out_dir);

    let (components, precompiled) = if root.join("plugins").is_dir() {
        println!("cargo::rustc-env=TOOLCELL_SOURCES={}", root.display());
        let target_dir = plugins_target_dir(root, &out_dir);
        // Cranelift builds while the plugins do: each has long stretches on
        // one core.
        let precompiler = Precompiler::start(root, &target_dir);
        let components = build_from_source(root, &target_dir);
        let precompiled = match precompiler {
            Some(precompiler) => precompiler.compile(&target_dir, &out_dir),
            None => vec![None; BUILTINS.len()],
        };
        (components, precompiled)
    } else {
        let packaged = manifest_dir.join(PACKAGED);
        println!("cargo::rerun-if-changed={}", packaged.display());
        let sources = out_dir.join("sources");
        if sources.exists() {
            std::fs::remove_dir_all(&sources)
                .unwrap_or_else(|e| panic!("cannot remove {}: {e}", sources.display()));
        }
        unstage(&packaged, &sources);
        println!("cargo::rustc-env=TOOLCELL_SOURCES={}", sources.display());
        println!("cargo::rustc-cfg=toolcell_packaged");
        // A packaged crate has no precompiler: its builtins compile at the
        // first start.
        (
            staged(&packaged.join("plugins")),
            vec![None; BUILTINS.len()],
        )
    };

    // The runtime embeds every builtin with this table (see
    // `runtime::builtin`): name, component, its SHA-256 and its compiled
    // code, if any.
    // SHA256SUMS lists what a packaged crate carries: the builtins `in_crate`.
    let mut embedded = String::from("&[\n");
    let mut sums = String::new();
    for ((builtin, bytes), compiled) in BUILTINS.iter().zip(components).zip(precompiled) {
        let Some(bytes) = bytes else { continue };
        let dest = out_dir.join(format!("{}.wasm", builtin.name));
        std::fs::write(&dest, &bytes)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
        let sha256 = Sha256::digest(&bytes);
        let digest = out_dir.join(format!("{}.sha256", builtin.name));
        std::fs::write(&digest, sha256)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", digest.display()));
        let compiled = match compiled {
            Some(path) => format!("Some(include_bytes!({:?}))", path.display().to_string()),
            None => "None".to_owned(),
        };
        embedded.push_str(&format!(
            "    ({:?}, include_bytes!({:?}), include_bytes!({:?}), {compiled}),\n",
            builtin.name,
            dest.display().to_string(),
            digest.display().to_string(),
        ));
        if builtin.in_crate {
            sums.push_str(&format!("{}  {}.wasm\n", hex(&sha256), builtin.name));
        }
    }
    embedded.push_str("]\n");
    let table = out_dir.join("embedded.rs");
    std::fs::write(&table, embedded)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", table.display()));
    let manifest = out_dir.join(SUMS);
    std::fs::write(&manifest, sums)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", manifest.display()));
}

/// Where the nested builds put their files: `<target>/wasm-plugins`.
fn plugins_target_dir(root: &Path, out_dir: &Path) -> PathBuf {
    // OUT_DIR is <target>/[<triple>/]<profile>/build/<pkg>-<hash>/out: build
    // in <target>/wasm-plugins, which `cargo clean` removes too, and which
    // the debug and release builds and every host target share (the plugins
    // are always built in release, and for wasm whatever the host), so
    // `cargo test` after `cargo build --release`, or a Windows build after a
    // Linux one, builds none again. (Not by looking for cargo's
    // CACHEDIR.TAG: a cross build's <target>/<triple> has one too, and
    // building the interpreters again there cost CI ten minutes per target.)
    let triple = env::var("TARGET").unwrap_or_default();
    out_dir
        .ancestors()
        .nth(4)
        .map(|dir| match dir.parent() {
            Some(parent) if dir.file_name().is_some_and(|name| *name == *triple) => parent,
            _ => dir,
        })
        .map(|target| target.join("wasm-plugins"))
        .unwrap_or_else(|| root.join("target").join("wasm-plugins"))
}

/// Builds every builtin from the repository at `root` into `target_dir`;
/// returns their components in the order of `BUILTINS`.
fn build_from_source(root: &Path, target_dir: &Path) -> Vec<Option<Vec<u8>>> {
    for watched in ["plugins", "sdk", "wit", "Cargo.lock"] {
        println!("cargo::rerun-if-changed={}", root.join(watched).display());
    }

    ensure_target();

    for builtin in BUILTINS {
        let selection = match builtin.build {
            Build::Package(package) => ["-p", package],
            Build::Workspace(manifest) => ["--manifest-path", manifest],
        };
        build(root, target_dir, &selection, builtin.initial_memory_mib);
    }
    BUILTINS
        .iter()
        .map(|builtin| {
            let built = target_dir.join(TARGET).join("release").join(builtin.file);
            let bytes = std::fs::read(&built);
            Some(bytes.unwrap_or_else(|e| panic!("cannot read {}: {e}", built.display())))
        })
        .collect()
}

/// `host/precompile`, built for this machine in a target directory of its
/// own; it compiles the builtins that are `precompiled()` to native code
/// for the target.
struct Precompiler {
    /// The cargo building it; waited for by [`Precompiler::compile`], killed
    /// if the build script fails first.
    cargo: std::process::Child,
    exe: PathBuf,
}

impl Precompiler {
    /// Starts building the precompiler, when the target has this machine's
    /// architecture: the precompiler's Cranelift generates code for that one
    /// (a macOS check or build for aarch64 on x86-64 embeds none, and its
    /// first start compiles).
    fn start(root: &Path, target_dir: &Path) -> Option<Precompiler> {
        let target = env::var("TARGET").expect("set by cargo");
        let host = env::var("HOST").expect("set by cargo");
        let arch = |triple: &str| triple.split('-').next().unwrap_or_default().to_owned();
        if arch(&target) != arch(&host) {
            return None;
        }
        for watched in ["host/precompile", "host/src/runtime/codegen.rs"] {
            println!("cargo::rerun-if-changed={}", root.join(watched).display());
        }
        // Its own target directory, and the workspace's `precompiler`
        // profile: a build of Cranelift that is fast to make and fast enough
        // to run once (the same code whatever the profile: Cranelift's output
        // does not depend on how Cranelift was compiled).
        let dir = target_dir.join("precompiler");
        let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .current_dir(root)
            .args([
                "build",
                "--profile",
                "precompiler",
                "-p",
                "toolcell-precompile",
            ])
            .arg("--target-dir")
            .arg(&dir);
        clear_outer_build(&mut command);
        let cargo = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
        let exe = dir
            .join("precompiler")
            .join(format!("toolcell-precompile{}", env::consts::EXE_SUFFIX));
        Some(Precompiler { cargo, exe })
    }

    /// Waits for the precompiler's build, then compiles the builtins built
    /// in `target_dir`; returns the files written in `out_dir`, in the
    /// order of `BUILTINS`, `None` for the others.
    fn compile(mut self, target_dir: &Path, out_dir: &Path) -> Vec<Option<PathBuf>> {
        let status = self.cargo.wait().expect("wait for cargo");
        if !status.success() {
            panic!("building host/precompile failed (see the output above)");
        }
        let mut command = Command::new(&self.exe);
        command.arg(env::var("TARGET").expect("set by cargo"));
        let mut outputs = vec![None; BUILTINS.len()];
        for (builtin, output) in BUILTINS.iter().zip(&mut outputs) {
            if !builtin.precompiled() {
                continue;
            }
            let input = target_dir.join(TARGET).join("release").join(builtin.file);
            let compiled = out_dir.join(format!("{}.cwasm", builtin.name));
            command.arg(&input).arg(&compiled);
            *output = Some(compiled);
        }
        if outputs.iter().any(Option::is_some) {
            run(&mut command, "precompiling the builtins");
        }
        outputs
    }
}

impl Drop for Precompiler {
    fn drop(&mut self) {
        // Already waited for, this does nothing; else the build script is
        // failing, and the build must not outlive it.
        let _ = self.cargo.kill();
        let _ = self.cargo.wait();
    }
}

/// Reads every `in_crate` builtin's component from `dir` (a packaged crate's
/// `packaged/plugins`), checked against its SHA-256 in `dir/SHA256SUMS`;
/// returns them in the order of `BUILTINS`, `None` for the others. Panics,
/// saying how to fix it, when one is missing or differs, or the manifest
/// names any other file.
fn staged(dir: &Path) -> Vec<Option<Vec<u8>>> {
    const RESTAGE: &str = "this crate is packaged without `../plugins`, so it embeds the \
        components staged by `tests/package/stage.sh` (run it in the repository before \
        `cargo package`)";
    let sums_path = dir.join(SUMS);
    let sums = std::fs::read_to_string(&sums_path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}; {RESTAGE}", sums_path.display()));
    let mut listed = Vec::new();
    for line in sums.lines().filter(|line| !line.trim().is_empty()) {
        let (sha256, file) = line.split_once("  ").unwrap_or_else(|| {
            panic!(
                "{}: `{line}` is not `<SHA-256 in hex>  <NAME>.wasm`",
                sums_path.display()
            )
        });
        listed.push((sha256.to_ascii_lowercase(), file.to_owned()));
    }
    for (_, file) in &listed {
        if !BUILTINS
            .iter()
            .any(|builtin| builtin.in_crate && *file == format!("{}.wasm", builtin.name))
        {
            panic!(
                "{} lists {file}, which is no builtin of src/builtins.rs; {RESTAGE}",
                sums_path.display()
            );
        }
    }
    BUILTINS
        .iter()
        .map(|builtin| {
            if !builtin.in_crate {
                return None;
            }
            let file = format!("{}.wasm", builtin.name);
            let expected = listed
                .iter()
                .find(|(_, listed)| *listed == file)
                .map(|(sha256, _)| sha256)
                .unwrap_or_else(|| {
                    panic!("{} does not list {file}; {RESTAGE}", sums_path.display())
                });
            let path = dir.join(&file);
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}; {RESTAGE}", path.display()));
            let actual = hex(&Sha256::digest(&bytes));
            if actual != *expected {
                panic!(
                    "{} has SHA-256 {actual}, but {} says {expected}: the staged files are \
                     damaged or mixed up; {RESTAGE}",
                    path.display(),
                    sums_path.display()
                );
            }
            Some(bytes)
        })
        .collect()
}

/// Copies the staged files of the repository, every folder of `packaged`
/// but `plugins`, to `dest`, giving back their names to the files staged
/// as `NAME.staged`: `cargo package` leaves out every folder holding a
/// `Cargo.toml` (it takes it for another package), so `stage.sh` stages the
/// Rust template's as `Cargo.toml.staged`.
fn unstage(packaged: &Path, dest: &Path) {
    let entries = std::fs::read_dir(packaged)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", packaged.display()));
    std::fs::create_dir_all(dest)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dest.display()));
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", packaged.display()));
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() {
            if packaged.ends_with(PACKAGED) && name == "plugins" {
                continue;
            }
            unstage(&path, &dest.join(&name));
        } else {
            let to = dest.join(name.strip_suffix(".staged").unwrap_or(&name));
            std::fs::copy(&path, &to).unwrap_or_else(|e| {
                panic!("cannot copy {} to {}: {e}", path.display(), to.display())
            });
        }
    }
}

/// `bytes` in lower-case hexadecimal.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Builds the component of the package `selection` names with `cargo rustc
/// --release --target wasm32-wasip2 --lib` in `root`, into `target_dir`,
/// with `initial_memory_mib` of linear memory to start with if given (a
/// link argument for that component alone: its dependencies are built as
/// `cargo build` builds them); panics when it fails.
fn build(root: &Path, target_dir: &Path, selection: &[&str], initial_memory_mib: Option<u32>) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args([
            "rustc",
            "--release",
            "--lib",
            "--target",
            TARGET,
            "--target-dir",
        ])
        .arg(target_dir)
        .args(selection);
    if let Some(mib) = initial_memory_mib {
        command.arg("--").arg(format!(
            "-Clink-arg=--initial-memory={}",
            u64::from(mib) << 20
        ));
    }
    clear_outer_build(&mut command);
    run(
        &mut command,
        &format!("building the first-party plugins for {TARGET}"),
    );
}

/// Removes from `command` the outer build's settings, which are for its
/// target, not for the nested build's.
fn clear_outer_build(command: &mut Command) {
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        command.env_remove(var);
    }
}

/// Runs `command` for `what`; panics when it cannot be run or fails.
fn run(command: &mut Command, what: &str) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("{what}: cannot run {command:?}: {e}"));
    if !status.success() {
        panic!("{what} failed (see the output above)");
    }
}

/// Installs the wasm32-wasip2 standard library if this toolchain lacks it.
fn ensure_target() {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    let installed = |sysroot: &Path| sysroot.join("lib/rustlib").join(TARGET).is_dir();
    if sysroot.as_deref().is_some_and(installed) {
        return;
    }
    println!("cargo::warning=installing the {TARGET} target with rustup");
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .expect("the wasm32-wasip2 target is missing and rustup could not be run");
    if !status.success() {
        panic!("`rustup target add {TARGET}` failed");
    }
}
