//! Builds the first-party plugins listed in `src/builtins.rs` for
//! wasm32-wasip2 and leaves them in `OUT_DIR`, each with its SHA-256 beside
//! it (so that finding one in the compile cache does not mean hashing
//! megabytes at every start), and a table, `embedded.rs`, that
//! `src/runtime/builtin.rs` includes to embed them.
//!
//! It installs the target with rustup when it is missing, and runs a nested
//! cargo with its own target directory so it never waits on the outer
//! build's lock.

#![allow(clippy::expect_used)] // a build script reports failure by panicking

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

#[allow(dead_code)] // `find` is for the crate, not for this script
#[path = "src/builtins.rs"]
mod builtins;

use builtins::{BUILTINS, Build};

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest_dir
        .parent()
        .expect("host/ sits in the workspace root");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    for watched in ["plugins", "sdk", "wit", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }

    ensure_target();

    // OUT_DIR is <target>/[<triple>/]<profile>/build/<pkg>-<hash>/out: build
    // in <target>/wasm-plugins, which `cargo clean` removes too, and which
    // the debug and release builds and every host target share (the plugins
    // are always built in release, and for wasm whatever the host), so
    // `cargo test` after `cargo build --release`, or a Windows build after a
    // Linux one, builds none again. Cargo marks its target directory with a
    // CACHEDIR.TAG.
    let target_dir = out_dir
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
        .or_else(|| out_dir.ancestors().nth(4))
        .map(|target| target.join("wasm-plugins"))
        .unwrap_or_else(|| root.join("target").join("wasm-plugins"));

    let mut packages = Vec::new();
    for builtin in BUILTINS {
        if let Build::Package(package) = builtin.build {
            packages.extend(["-p", package]);
        }
    }
    build(root, &target_dir, &packages);
    for builtin in BUILTINS {
        if let Build::Workspace(manifest) = builtin.build {
            build(root, &target_dir, &["--manifest-path", manifest]);
        }
    }
    // The runtime embeds every builtin with this table (see
    // `runtime::builtin`): name, component and its SHA-256.
    let mut embedded = String::from("&[\n");
    for builtin in BUILTINS {
        let built = target_dir.join(TARGET).join("release").join(builtin.file);
        let dest = out_dir.join(format!("{}.wasm", builtin.name));
        let bytes = std::fs::read(&built)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", built.display()));
        std::fs::write(&dest, &bytes)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", dest.display()));
        let digest = out_dir.join(format!("{}.sha256", builtin.name));
        std::fs::write(&digest, Sha256::digest(&bytes))
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", digest.display()));
        embedded.push_str(&format!(
            "    ({:?}, include_bytes!({:?}), include_bytes!({:?})),\n",
            builtin.name,
            dest.display().to_string(),
            digest.display().to_string(),
        ));
    }
    embedded.push_str("]\n");
    let table = out_dir.join("embedded.rs");
    std::fs::write(&table, embedded)
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", table.display()));
}

/// Runs `cargo build --release --target wasm32-wasip2` in `root` with
/// `args`, into `target_dir`; panics when it fails.
fn build(root: &Path, target_dir: &Path, args: &[&str]) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["build", "--release", "--target", TARGET, "--target-dir"])
        .arg(target_dir)
        .args(args);
    // The outer build's flags are for the host, not for wasm.
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
    let status = command
        .status()
        .expect("failed to run cargo for the plugins");
    if !status.success() {
        panic!("building the first-party plugins for {TARGET} failed (see the output above)");
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
    println!("cargo:warning=installing the {TARGET} target with rustup");
    let status = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status()
        .expect("the wasm32-wasip2 target is missing and rustup could not be run");
    if !status.success() {
        panic!("`rustup target add {TARGET}` failed");
    }
}
