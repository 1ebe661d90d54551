//! Compiles components to native code ahead of time, under the settings of
//! Toolcell's engine, so that the builtins ship compiled and a first start
//! reaches `tools/list` without running a code generator.
//!
//! `host/build.rs` runs it as
//! `toolcell-precompile TARGET INPUT.wasm OUTPUT.cwasm [INPUT OUTPUT]...`;
//! the host embeds each output beside its component, and loads it only
//! when wasmtime finds it fits the running engine and CPU (else it
//! compiles, as for any other component).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

#[path = "../../src/runtime/codegen.rs"]
mod codegen;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("toolcell-precompile: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let Some(target) = args.next() else {
        bail!("usage: toolcell-precompile TARGET INPUT.wasm OUTPUT.cwasm [INPUT OUTPUT]...");
    };
    let target = target.to_str().context("the target triple is not UTF-8")?;
    let paths: Vec<PathBuf> = args.map(PathBuf::from).collect();
    if paths.is_empty() || !paths.len().is_multiple_of(2) {
        bail!("expected pairs of INPUT.wasm OUTPUT.cwasm after the target");
    }

    let mut config = wasmtime::Config::new();
    codegen::configure(&mut config);
    config.target(target)?;
    let arch = target.split('-').next().unwrap_or_default();
    for feature in codegen::baseline_cpu_features(arch) {
        // SAFETY: the flags name CPU features the compiled code may use; the
        // engine that loads it checks each one against the CPU it runs on
        // and refuses the code where one is missing.
        #[allow(unsafe_code)]
        unsafe {
            config.cranelift_flag_enable(feature);
        }
    }
    let engine = wasmtime::Engine::new(&config)
        .map_err(anyhow::Error::from)
        .context("cannot create the compiler")?;

    for pair in paths.chunks(2) {
        let [input, output] = pair else { continue };
        let wasm =
            std::fs::read(input).with_context(|| format!("cannot read {}", input.display()))?;
        let compiled = engine
            .precompile_component(&wasm)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("cannot compile {}", input.display()))?;
        std::fs::write(output, compiled)
            .with_context(|| format!("cannot write {}", output.display()))?;
    }
    Ok(())
}
