//! The plugin contract's host bindings, generated from `wit/`.
//!
//! The world is `toolcell:plugin/plugin@0.2.0`, which includes 0.1.0's: a
//! component built against 0.1.0 exports `tools` alone, and one built
//! against 0.2.0 may also export `resources`, `prompts` and `completions`.
//! [`Exports`] finds which a component has, so the host serves exactly those.

#![allow(missing_docs)] // the generated items are documented in the WIT

use anyhow::{Context, Result};
use wasmtime::component::InstancePre;

/// The bindings, from the WIT at `$path`: `../wit` in the repository, the
/// copy in `packaged/wit` in a packaged crate (see `build.rs`).
macro_rules! contract {
    ($path:literal) => {
        wasmtime::component::bindgen!({
            path: $path,
            world: "toolcell:plugin/plugin@0.2.0",
            with: {
                "wasi:http": wasmtime_wasi_http::p2::bindings::http,
                "wasi": wasmtime_wasi::p2::bindings,
            },
            imports: {
                "toolcell:plugin/client.elicit": async | trappable,
                "toolcell:plugin/client.sample": async | trappable,
                "toolcell:plugin/client.list-roots": async | trappable,
                "toolcell:plugin/client.ask": async | trappable,
            },
            exports: { default: async },
            require_store_data_send: true,
            // What a plugin lists is remembered in the compile cache's
            // `listings/` (see `cache::listings`).
            additional_derives: [serde::Serialize, serde::Deserialize],
        });
    };
}
#[cfg(not(toolcell_packaged))]
contract!("../wit");
#[cfg(toolcell_packaged)]
contract!("packaged/wit");

pub use self::exports::toolcell::plugin0_1_0::tools;
pub use self::exports::toolcell::plugin0_2_0::{completions, prompts, resources};
pub use self::toolcell::plugin0_1_0::host;
/// Contract 0.1.0's data: tools, their results, content blocks.
pub use self::toolcell::plugin0_1_0::types as v1;
pub use self::toolcell::plugin0_2_0::client;
/// Contract 0.2.0's data: resources, prompts, completions.
pub use self::toolcell::plugin0_2_0::types as v2;

/// Where a component's exported functions are, found once at load time.
pub struct Exports {
    /// `tools`, which every plugin exports.
    pub tools: tools::GuestIndices,
    /// `resources`, if exported (0.2.0).
    pub resources: Option<resources::GuestIndices>,
    /// `prompts`, if exported (0.2.0).
    pub prompts: Option<prompts::GuestIndices>,
    /// `completions`, if exported (0.2.0).
    pub completions: Option<completions::GuestIndices>,
}

impl Exports {
    /// Finds the exports of the component behind `pre`: `tools` must be
    /// there, the others may be.
    pub fn find<T>(pre: &InstancePre<T>) -> Result<Exports> {
        Ok(Exports {
            tools: tools::GuestIndices::new(pre)
                .map_err(anyhow::Error::from)
                .context("it does not export toolcell:plugin/tools@0.1.0")?,
            resources: resources::GuestIndices::new(pre).ok(),
            prompts: prompts::GuestIndices::new(pre).ok(),
            completions: completions::GuestIndices::new(pre).ok(),
        })
    }
}
