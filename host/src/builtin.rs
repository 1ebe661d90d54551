//! The first-party plugins, compiled into the binary by `build.rs`.

/// The builtin plugins: the name used in `path = "builtin:NAME"` and the
/// component's bytes.
pub const BUILTINS: &[(&str, &[u8])] = &[
    ("fs", include_bytes!(concat!(env!("OUT_DIR"), "/fs.wasm"))),
    (
        "search",
        include_bytes!(concat!(env!("OUT_DIR"), "/search.wasm")),
    ),
    (
        "research",
        include_bytes!(concat!(env!("OUT_DIR"), "/research.wasm")),
    ),
];

/// The builtins the embedded default configuration serves, each with the
/// current directory mounted read-only. `research` is left out: its first
/// mount is its registry, which a configuration has to name.
pub const DEFAULT: &[&str] = &["fs", "search"];

/// The builtin names, for configuration checks.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|(name, _)| *name).collect()
}

/// The bytes of a builtin plugin.
pub fn get(name: &str) -> Option<&'static [u8]> {
    BUILTINS
        .iter()
        .find(|(builtin, _)| *builtin == name)
        .map(|(_, bytes)| *bytes)
}
