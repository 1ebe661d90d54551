//! The first-party plugins, compiled into the binary by `build.rs`.

/// A plugin built into the binary.
pub struct Builtin {
    /// The name used in `path = "builtin:NAME"`.
    pub name: &'static str,
    /// The component.
    pub wasm: &'static [u8],
    /// The SHA-256 of `wasm`, computed by `build.rs`.
    pub sha256: &'static [u8; 32],
}

macro_rules! builtin {
    ($name:literal) => {
        Builtin {
            name: $name,
            wasm: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".wasm")),
            sha256: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".sha256")),
        }
    };
}

/// The builtin plugins.
pub const BUILTINS: &[Builtin] = &[builtin!("fs"), builtin!("search"), builtin!("research")];

/// The builtins the embedded default configuration serves, each with the
/// current directory mounted read-only. `research` is left out: its first
/// mount is its registry, which a configuration has to name.
pub const DEFAULT: &[&str] = &["fs", "search"];

/// The builtin names, for configuration checks.
pub fn names() -> Vec<&'static str> {
    BUILTINS.iter().map(|builtin| builtin.name).collect()
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
