//! The first-party plugins, compiled into the binary by `build.rs`.

use crate::config::KnownBuiltin;

/// A plugin built into the binary.
pub struct Builtin {
    /// The name used in `path = "builtin:NAME"`.
    pub name: &'static str,
    /// The component.
    pub wasm: &'static [u8],
    /// The SHA-256 of `wasm`, computed by `build.rs`.
    pub sha256: &'static [u8; 32],
    /// The keys its `config` table may have (see each plugin's docs).
    pub config_keys: &'static [&'static str],
}

macro_rules! builtin {
    ($name:literal, $keys:expr) => {
        Builtin {
            name: $name,
            wasm: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".wasm")),
            sha256: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".sha256")),
            config_keys: $keys,
        }
    };
}

/// The builtin plugins.
pub const BUILTINS: &[Builtin] = &[
    builtin!("fs", &["max_file_bytes", "max_diff_bytes"]),
    builtin!("search", &["max_output_bytes"]),
    builtin!("research", &["arxiv_base_url"]),
    builtin!("git", &["max_output_bytes"]),
];

/// The builtins the embedded default configuration serves, each with the
/// current directory mounted read-only. `research` is left out: its first
/// mount is its registry, which a configuration has to name.
pub const DEFAULT: &[&str] = &["fs", "search", "git"];

/// The builtins as the configuration knows them: names and config keys.
pub fn known() -> Vec<KnownBuiltin<'static>> {
    BUILTINS
        .iter()
        .map(|builtin| KnownBuiltin {
            name: builtin.name,
            config_keys: builtin.config_keys,
        })
        .collect()
}

/// The builtin plugin called `name`.
pub fn get(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_match_the_embedded_bytes() {
        use sha2::Digest;
        for builtin in BUILTINS {
            let digest: [u8; 32] = sha2::Sha256::digest(builtin.wasm).into();
            assert_eq!(&digest, builtin.sha256, "{}", builtin.name);
        }
    }
}
