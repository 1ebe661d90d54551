//! The first-party plugins of [`crate::builtins`], compiled into the binary
//! by `build.rs`.

/// Every embedded builtin's name, component and the component's SHA-256, in
/// the order of [`crate::builtins::BUILTINS`]; written by `build.rs`. Built
/// from a packaged crate, it holds only the builtins marked `in_crate`.
const EMBEDDED: &[(&str, &[u8], &[u8; 32])] = include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// A builtin plugin's component.
#[derive(Clone, Copy)]
pub struct Embedded {
    /// The component.
    pub wasm: &'static [u8],
    /// The SHA-256 of `wasm`, computed by `build.rs`.
    pub sha256: &'static [u8; 32],
}

/// The component of the builtin plugin called `name`.
pub fn get(name: &str) -> Option<Embedded> {
    EMBEDDED
        .iter()
        .find(|(embedded, _, _)| *embedded == name)
        .map(|&(_, wasm, sha256)| Embedded { wasm, sha256 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::BUILTINS;

    #[test]
    fn every_builtin_is_embedded_with_the_digest_of_its_bytes() {
        use sha2::Digest;
        let names: Vec<&str> = EMBEDDED.iter().map(|(name, _, _)| *name).collect();
        // A packaged crate leaves out the builtins that are not `in_crate`.
        let listed: Vec<&str> = BUILTINS
            .iter()
            .filter(|builtin| builtin.in_crate || !cfg!(toolcell_packaged))
            .map(|builtin| builtin.name)
            .collect();
        assert_eq!(names, listed);
        for (name, wasm, sha256) in EMBEDDED {
            let digest: [u8; 32] = sha2::Sha256::digest(wasm).into();
            assert_eq!(&&digest, sha256, "{name}");
        }
    }
}
