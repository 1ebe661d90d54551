//! The engine settings that compiled code depends on: one list for the
//! runtime's [`Engine`](super::engine::Engine) and for `host/precompile`,
//! which compiles the builtins at build time and includes this file (so it
//! uses nothing but wasmtime). Code compiled under other settings does not
//! load: wasmtime compares them, and the builtins' test
//! (`runtime::builtin`) loads every precompiled builtin in the default
//! engine, so drift between the two fails a test instead of silently
//! compiling at every first start.

/// Applies the settings compiled code depends on to `config`.
pub fn configure(config: &mut wasmtime::Config) {
    config.wasm_component_model(true);
    config.epoch_interruption(true);
}

/// The CPU features code compiled ahead of time for `arch` may use: a
/// baseline that every machine a desktop runs on has, so that one build
/// serves all of them. A machine without one of them refuses the code when
/// it loads, and the runtime then compiles for that machine instead.
///
/// x86-64: x86-64-v2 (SSE3 to SSE4.2, POPCNT, CMPXCHG16B), which every
/// x86-64 CPU since 2009 has and Windows 11 requires; without SSSE3 and
/// SSE4.1, Cranelift lowers many SIMD instructions to long sequences.
/// Other architectures: Cranelift's baseline for them (aarch64's includes
/// NEON).
pub fn baseline_cpu_features(arch: &str) -> &'static [&'static str] {
    match arch {
        "x86_64" => &[
            "has_sse3",
            "has_ssse3",
            "has_sse41",
            "has_sse42",
            "has_popcnt",
            "has_cmpxchg16b",
        ],
        _ => &[],
    }
}
