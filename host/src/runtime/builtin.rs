//! The first-party plugins of [`crate::builtins`], compiled into the binary
//! by `build.rs`.

/// Every embedded builtin's name, component, the component's SHA-256 and
/// its compiled code, in the order of [`crate::builtins::BUILTINS`]; written
/// by `build.rs`. Built from a packaged crate, it holds only the builtins
/// marked `in_crate`, and no compiled code.
type Table = &'static [(
    &'static str,
    &'static [u8],
    &'static [u8; 32],
    Option<&'static [u8]>,
)];
const EMBEDDED: Table = include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// A builtin plugin's component.
#[derive(Clone, Copy)]
pub struct Embedded {
    /// The component.
    pub wasm: &'static [u8],
    /// The SHA-256 of `wasm`, computed by `build.rs`.
    pub sha256: &'static [u8; 32],
    /// `wasm` compiled at build time by `host/precompile` for this target,
    /// for the builtins that are [`precompiled`](crate::builtins::Builtin::precompiled)
    /// when the build machine could: what `Component::deserialize` takes,
    /// and refuses if it does not fit the engine or the CPU.
    pub compiled: Option<&'static [u8]>,
}

/// The component of the builtin plugin called `name`.
pub fn get(name: &str) -> Option<Embedded> {
    EMBEDDED
        .iter()
        .find(|(embedded, ..)| *embedded == name)
        .map(|&(_, wasm, sha256, compiled)| Embedded {
            wasm,
            sha256,
            compiled,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::BUILTINS;

    #[test]
    fn every_builtin_is_embedded_with_the_digest_of_its_bytes() {
        use sha2::Digest;
        let names: Vec<&str> = EMBEDDED.iter().map(|(name, ..)| *name).collect();
        // A packaged crate leaves out the builtins that are not `in_crate`.
        let listed: Vec<&str> = BUILTINS
            .iter()
            .filter(|builtin| builtin.in_crate || !cfg!(toolcell_packaged))
            .map(|builtin| builtin.name)
            .collect();
        assert_eq!(names, listed);
        for (name, wasm, sha256, _) in EMBEDDED {
            let digest: [u8; 32] = sha2::Sha256::digest(wasm).into();
            assert_eq!(&&digest, sha256, "{name}");
        }
    }

    /// A builtin given an initial memory in `builtins.rs` is built with it
    /// (`build.rs` passes it to the linker for that component alone).
    #[test]
    fn a_builtin_starts_with_the_memory_its_entry_gives() {
        let sized: Vec<_> = BUILTINS
            .iter()
            .filter_map(|builtin| Some((builtin.name, builtin.initial_memory_mib?)))
            .collect();
        assert!(!sized.is_empty());
        for (name, mib) in sized {
            let embedded = get(name).unwrap();
            let mut initial_pages = Vec::new();
            for payload in wasmparser::Parser::new(0).parse_all(embedded.wasm) {
                if let wasmparser::Payload::MemorySection(memories) = payload.unwrap() {
                    for memory in memories {
                        initial_pages.push(memory.unwrap().initial);
                    }
                }
            }
            // 64 KiB pages.
            assert_eq!(initial_pages, [u64::from(mib) * 16], "{name}");
        }
    }

    /// The code `build.rs` compiled loads in the engine the server makes,
    /// with no compiling: if the engine's settings drift from
    /// `host/precompile`'s, this fails rather than every first start
    /// quietly compiling. Then a second engine finds it in the cache.
    #[test]
    fn the_precompiled_builtins_load_without_compiling() {
        use super::super::component_file::Wasm;
        use super::super::engine::{Capacity, Engine};
        let cache = tempfile::tempdir().unwrap();
        let precompiled: Vec<_> = BUILTINS
            .iter()
            .filter(|builtin| builtin.precompiled())
            .map(|builtin| (builtin.name, get(builtin.name).unwrap()))
            .collect();
        assert!(!precompiled.is_empty());
        for dir in [None, Some(cache.path()), Some(cache.path())] {
            let engine = Engine::new(dir.map(ToOwned::to_owned), Capacity::default()).unwrap();
            for (name, embedded) in &precompiled {
                // A packaged crate has no precompiler: its builtins compile.
                if cfg!(toolcell_packaged) {
                    assert!(embedded.compiled.is_none(), "{name}");
                    continue;
                }
                let compiled = embedded.compiled;
                assert!(compiled.is_some(), "{name} was not compiled at build time");
                let mut wasm =
                    Wasm::bytes(std::borrow::Cow::Borrowed(embedded.wasm)).with_compiled(compiled);
                engine.compile(name, &mut wasm, embedded.sha256).unwrap();
            }
            assert!(
                !engine.made_compiler() || cfg!(toolcell_packaged),
                "a builtin was compiled, not loaded"
            );
        }
        for builtin in BUILTINS.iter().filter(|builtin| !builtin.precompiled()) {
            let compiled = get(builtin.name).and_then(|embedded| embedded.compiled);
            assert!(compiled.is_none(), "{}", builtin.name);
        }
    }
}
