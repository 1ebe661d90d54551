//! The first-party plugins: the one table that `build.rs` builds them from,
//! the configuration checks `path = "builtin:NAME"` and `config` keys
//! against, and the runtime embeds (see `runtime::builtin`).
//!
//! `build.rs` includes this file as a module of its own, so it uses nothing
//! but `core`.

/// A first-party plugin, as built and configured.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// The name in `path = "builtin:NAME"`, and the plugin's name in the
    /// embedded default.
    pub name: &'static str,
    /// How cargo builds it: a package of the root workspace, or a workspace
    /// of its own.
    pub build: Build,
    /// The file name cargo gives the component.
    pub file: &'static str,
    /// The keys its `config` table may have (see each plugin's docs).
    pub config_keys: &'static [&'static str],
    /// The linear memory its component starts with, in MiB, when a typical
    /// call needs more heap than the toolchain's default leaves (it starts
    /// with about 1 MiB: the stack and the static data). A call that grows
    /// its memory makes the next instantiation in the same pooled slot shrink
    /// the slot's accessible range back, an `mprotect` whose TLB flush
    /// interrupts the other cores running the server: with 8 clients reading
    /// a 27 KB file, `read_file` served about a fifth more calls a second
    /// with 2 MiB (6,600 to 8,100; docs/performance.md).
    /// Pages the call never touches cost nothing. `None`: the default.
    pub initial_memory_mib: Option<u32>,
    /// Whether the embedded default configuration serves it.
    pub by_default: bool,
    /// The category every one of its tools is in, when that category is off by default
    /// (`execute`): the embedded default serves it only when the category is enabled, a
    /// configuration that lists it without enabling the category does not load it, and its
    /// calls are capped per plugin (`limits::DEFAULT_GATED_CONCURRENT_CALLS`) unless its
    /// `[[plugin]]` table says otherwise.
    pub gated_by: Option<&'static str>,
    /// Whether the crate published to crates.io carries it: crates.io takes
    /// crates of at most 10 MiB, and `python`'s component alone is over 9 MiB
    /// compressed. A toolcell built from that crate serves every other
    /// builtin and says where to get the rest.
    pub in_crate: bool,
}

/// How cargo builds a builtin.
#[derive(Clone, Copy, Debug)]
pub enum Build {
    /// `-p PACKAGE` in the root workspace.
    Package(&'static str),
    /// `--manifest-path MANIFEST` (relative to the repository root): a
    /// workspace of its own, whose `[patch]`es apply to it alone.
    Workspace(&'static str),
}

/// Every first-party plugin.
///
/// `research` is not served by default: its first mount is its registry,
/// which a configuration has to name. `python` and `js` run code the model
/// writes: served only with the `execute` category enabled, and with few runs
/// of each at once, so runaway runs never take every call slot.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "fs",
        build: Build::Package("toolcell-plugin-fs"),
        file: "toolcell_plugin_fs.wasm",
        config_keys: &["max_file_bytes", "max_diff_bytes"],
        initial_memory_mib: Some(2),
        by_default: true,
        gated_by: None,
        in_crate: true,
    },
    Builtin {
        name: "search",
        build: Build::Package("toolcell-plugin-search"),
        file: "toolcell_plugin_search.wasm",
        config_keys: &["max_output_bytes"],
        initial_memory_mib: Some(2),
        by_default: true,
        gated_by: None,
        in_crate: true,
    },
    Builtin {
        name: "research",
        build: Build::Package("toolcell-plugin-research"),
        file: "toolcell_plugin_research.wasm",
        config_keys: &["arxiv_base_url"],
        initial_memory_mib: None,
        by_default: false,
        gated_by: None,
        in_crate: true,
    },
    Builtin {
        name: "git",
        build: Build::Workspace("plugins/git/Cargo.toml"),
        file: "toolcell_plugin_git.wasm",
        config_keys: &["max_output_bytes"],
        initial_memory_mib: None,
        by_default: true,
        gated_by: None,
        in_crate: true,
    },
    Builtin {
        name: "python",
        build: Build::Workspace("plugins/python/Cargo.toml"),
        file: "toolcell_plugin_python.wasm",
        config_keys: &["max_output_bytes"],
        initial_memory_mib: None,
        by_default: true,
        gated_by: Some("execute"),
        in_crate: false,
    },
    Builtin {
        name: "js",
        build: Build::Workspace("plugins/js/Cargo.toml"),
        file: "toolcell_plugin_js.wasm",
        config_keys: &["max_output_bytes"],
        initial_memory_mib: None,
        by_default: true,
        gated_by: Some("execute"),
        in_crate: true,
    },
];

impl Builtin {
    /// Whether the binary carries it compiled to native code (see
    /// `host/precompile`), so that a first start need not compile it: the
    /// builtins the embedded default serves with no category enabled. The
    /// others (`research`, and the interpreters, whose compiled code is 60 MB
    /// and more) compile on first use and are cached like any component.
    pub const fn precompiled(&self) -> bool {
        self.by_default && self.gated_by.is_none()
    }
}

/// The builtin called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|builtin| builtin.name == name)
}
