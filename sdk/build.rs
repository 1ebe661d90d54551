//! Tells the crate where the WIT is: `../wit` in the repository, or
//! `packaged/wit` in a packaged crate (`cargo package`, crates.io), where
//! `tests/package/stage.sh` copies it before packaging. The bindings'
//! `generate!` takes a literal path, so this is the cfg `toolcell_packaged`.

#![allow(clippy::expect_used)] // a build script reports failure by panicking

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    println!("cargo::rustc-check-cfg=cfg(toolcell_packaged)");
    println!("cargo::rerun-if-changed=build.rs");
    let repository = manifest_dir.join("../wit");
    if repository.is_dir() {
        println!("cargo::rerun-if-changed={}", repository.display());
        return;
    }
    let packaged = manifest_dir.join("packaged/wit");
    if !packaged.is_dir() {
        panic!(
            "neither {} nor {} exists: this crate is packaged without the repository's wit/, \
             so it needs the copy that `tests/package/stage.sh` stages before `cargo package`",
            repository.display(),
            packaged.display()
        );
    }
    println!("cargo::rerun-if-changed={}", packaged.display());
    println!("cargo::rustc-cfg=toolcell_packaged");
}
