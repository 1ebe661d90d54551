//! Every cap Toolcell puts on what a client or a plugin can make it spend,
//! and the defaults of the limits `plugins.toml` can set: one constant each,
//! in one place.
//!
//! `docs/security.md` has a table with one row per constant here, named
//! by its constant; a test below keeps the two in step. Tuning values that
//! bound nothing (the epoch tick, buffer sizes) live beside the code they
//! tune.

use std::time::Duration;

/// Declares the caps and [`NAMES`], the list of their names.
macro_rules! caps {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)+) => {
        $($(#[$doc])* pub const $name: $ty = $value;)+
        /// The name of every constant in this module, in order.
        pub const NAMES: &[&str] = &[$(stringify!($name)),+];
    };
}

caps! {
    /// Default of `timeout_ms`: the wall-clock time a call may take, counted
    /// from when the server accepts it.
    DEFAULT_TIMEOUT_MS: u64 = 30_000;
    /// Default of `memory_mb`: the linear memory a plugin instance may grow to.
    DEFAULT_MEMORY_MB: u64 = 256;
    /// The largest `memory_mb` a configuration may set.
    MAX_MEMORY_MB: u64 = 4096;
    /// Default of `max_output_bytes`: the size of a call's result as JSON.
    DEFAULT_MAX_OUTPUT_BYTES: u64 = 1_048_576;
    /// Default of `max_concurrent_calls`: calls running at once, server-wide.
    DEFAULT_MAX_CONCURRENT_CALLS: usize = 16;
    /// Default of a plugin's own `max_concurrent_calls` for the builtins
    /// of a category that is off by default (`python` and `js`, category
    /// `execute`): runaway runs wait for one of these, never for the
    /// server's slots, so the other tools keep answering.
    DEFAULT_GATED_CONCURRENT_CALLS: usize = 2;
    /// Default of `max_component_mb`: the largest component file loaded (a
    /// Python plugin, which carries its interpreter, is about 20 MiB).
    DEFAULT_MAX_COMPONENT_MB: u64 = 256;
    /// The largest `max_component_mb` a configuration may set.
    MAX_COMPONENT_MB: u64 = 4096;
    /// The most `.wasm` and `.toml` files one drop folder may hold; a
    /// folder with more is refused whole.
    MAX_DROPIN_FILES: usize = 1024;
    /// The largest drop-in `NAME.toml`, in bytes.
    MAX_DROPIN_TOML_BYTES: u64 = 64 * 1024;

    /// The most content blocks one tool result may have.
    MAX_CONTENT_BLOCKS: usize = 1000;
    /// The wasm stack of one call, in bytes (wasmtime's default is 512 KiB):
    /// deeper recursion ends that call with an error result. The
    /// interpreters of `run_python` and `run_js` spend several native frames
    /// per level of the guest's own recursion.
    MAX_WASM_STACK_BYTES: usize = 2 << 20;
    /// The most WASI handles one call may hold, however many descriptors the
    /// process has.
    MAX_HANDLES_PER_CALL: usize = 256;
    /// The fewest handles a call is given: a recursive walk holds one
    /// directory per level.
    MIN_HANDLES_PER_CALL: usize = 32;
    /// Descriptors kept for the server itself (stdio, sockets, the runtime,
    /// each running call's mounts) when the calls' shares are worked out.
    RESERVED_DESCRIPTORS: u64 = 128;
    /// How far the soft `RLIMIT_NOFILE` is raised at most at start-up.
    DESCRIPTOR_TARGET: u64 = 65_536;
    /// Directories the host's lookups keep open for a call, taken out of the
    /// call's handles.
    LOOKUP_PARENTS: usize = 4;
    /// The most elements a guest's function tables may grow to.
    MAX_TABLE_ELEMENTS: usize = 1_000_000;

    /// The most tools one plugin may offer.
    MAX_TOOLS_PER_PLUGIN: usize = 256;
    /// The longest tool title, in bytes.
    MAX_TITLE_BYTES: usize = 256;
    /// The longest tool description, in bytes.
    MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
    /// The largest input or output schema, in bytes of JSON.
    MAX_SCHEMA_BYTES: usize = 64 * 1024;
    /// The most one plugin's tool descriptors may add up to, in bytes.
    MAX_LISTING_BYTES: usize = 1024 * 1024;
    /// The most resources, resource templates or prompts one plugin may list.
    MAX_LISTED: usize = 1024;
    /// The longest URI, URI template or prompt name, in bytes.
    MAX_NAME_BYTES: usize = 2048;
    /// The most values one completion returns (MCP's own limit).
    MAX_COMPLETIONS: usize = 100;

    /// What a call's guest may write to stdout and stderr together; it is
    /// logged, never sent to the client.
    GUEST_OUTPUT_LOG_BYTES: usize = 256 * 1024;
    /// The longest line of guest output logged as one event; longer ones
    /// are split.
    GUEST_LOG_LINE_BYTES: usize = 4096;

    /// The most paths one `stat-paths` call (toolcell:files) may ask about.
    STAT_PATHS_MAX: usize = 1 << 16;
    /// The longest path `stat-paths` answers, in bytes.
    STAT_PATHS_MAX_PATH_BYTES: usize = 4096;
    /// The most threads one `stat-paths` call uses.
    STAT_PATHS_THREADS: usize = 4;
    /// The most `pending-stats` (stats started with `start-stat-paths`) one
    /// call holds at once: starting another traps the call.
    STAT_PATHS_PENDING: usize = 1;
    /// The most path text one `start-stat-paths` call takes, in bytes: the
    /// host keeps a copy of it while its threads work (`stat-paths` reads
    /// the paths in place).
    STAT_PATHS_PENDING_BYTES: usize = 16 << 20;
    /// The most directories each `stat-paths` thread keeps open (the chain
    /// to the last path's directory); one more below them.
    STAT_PATHS_OPEN_DIRS: usize = 16;
    /// The most bytes one `read-file` call (toolcell:files 0.3.0) reads: the
    /// host holds them until they are copied into the guest's memory.
    READ_FILE_MAX_BYTES: usize = 8 << 20;

    /// Progress notifications go out at most once in this interval per call;
    /// the last report is always sent.
    PROGRESS_INTERVAL: Duration = Duration::from_millis(250);
    /// Log messages one call may have queued for the client; more are dropped.
    QUEUED_REPORTS: usize = 256;
    /// Default of `max_subscriptions`: the most resources one connection
    /// (a stdio client, an HTTP session, a 2026-07-28 request's stream) may
    /// follow, its `resources/subscribe`s and `subscriptions/listen` streams
    /// together.
    DEFAULT_MAX_SUBSCRIPTIONS: usize = 64;
    /// Default of `max_followed_resources`: the most distinct resources the
    /// server follows at once, across connections; each is read once per
    /// interval however many follow it.
    DEFAULT_MAX_FOLLOWED_RESOURCES: usize = 256;
    /// The most follows (one connection following one resource) the server
    /// keeps at once, across connections.
    MAX_FOLLOWS: usize = 4096;
    /// How often a followed resource is read again to see whether it changed.
    WATCH_INTERVAL: Duration = Duration::from_secs(2);
    /// The longest wait between reads of a followed resource that cannot be
    /// read (over the output cap, failing, timing out) and is not a file the
    /// host can look at: the wait doubles from [`WATCH_INTERVAL`] after each
    /// failed read, up to this. (A file is read again when it changes.)
    WATCH_BACKOFF_MAX: Duration = Duration::from_secs(64);

    /// The longest JSON-RPC line read from stdin.
    MAX_STDIO_LINE: usize = 64 * 1024 * 1024;
    /// Answers queued for stdout before reading more requests waits.
    PENDING_REPLIES: usize = 64;
    /// The most events kept per HTTP stream for resumption.
    MAX_EVENTS: usize = 1024;
    /// How long a finished HTTP stream's events are kept for resumption.
    KEEP_ENDED: Duration = Duration::from_secs(60);
    /// The most finished streams kept per HTTP session; older ones go first.
    MAX_ENDED: usize = 64;
    /// Default of `--replay-budget-mb`: what the events kept for resumption
    /// may add up to, server-wide, in MiB of JSON.
    DEFAULT_REPLAY_BUDGET_MB: u64 = 64;
    /// Default of `--max-sessions`: live HTTP sessions at once; `initialize`
    /// past it gets 503 with `Retry-After`.
    DEFAULT_MAX_SESSIONS: usize = 256;
    /// Default of `--session-idle-secs`: how long an HTTP session lives with
    /// no request from its client and no stream of it connected.
    DEFAULT_SESSION_IDLE_SECS: u64 = 300;
    /// Default of `--max-connections`: open HTTP connections at once; more are
    /// answered 503 and closed.
    DEFAULT_MAX_CONNECTIONS: usize = 512;
    /// Default of `--max-connections-per-ip`: open HTTP connections from one
    /// peer address.
    DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;
    /// Default of `--header-timeout-ms`: how long a connection may take to
    /// send a request's headers, and how long it may stay idle between
    /// requests.
    DEFAULT_HEADER_TIMEOUT_MS: u64 = 10_000;
    /// Default of `--body-timeout-ms`: how long a request's body may take to
    /// arrive once its headers have.
    DEFAULT_BODY_TIMEOUT_MS: u64 = 30_000;
    /// The largest HTTP request body read.
    MAX_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;

    /// How long `initialize` and `server/discover` wait for the plugins to
    /// load; past it, every capability a plugin could offer is declared.
    CAPABILITIES_WAIT: Duration = Duration::from_secs(3);
    /// How long a call waits for a client's first `roots/list` answer before
    /// it runs with the configured mounts.
    ROOTS_WAIT: Duration = Duration::from_secs(5);
    /// How long after its deadline a call's thread may take to stop before
    /// the server answers without it.
    STRAGGLE: Duration = Duration::from_millis(250);
    /// At HTTP shutdown, how long answers still being sent are waited for.
    ANSWERS_WAIT: Duration = Duration::from_secs(1);
    /// Default of `--shutdown-grace-ms`: how long running HTTP calls may take
    /// to finish at shutdown before they are interrupted.
    DEFAULT_SHUTDOWN_GRACE_MS: u64 = 10_000;

    /// The largest manifest (or token answer, or signature payload) read
    /// from an OCI registry; the component itself is bounded by
    /// `max_component_mb`.
    OCI_MAX_MANIFEST_BYTES: u64 = 1024 * 1024;
    /// How long connecting to a registry (or its token service, or a blob
    /// host it redirects to) may take.
    OCI_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// How long a registry may take to answer a request, and the longest
    /// pause while a body streams.
    OCI_READ_TIMEOUT: Duration = Duration::from_secs(30);
    /// The most redirects followed for one blob.
    OCI_MAX_REDIRECTS: usize = 5;

    /// How long a compiled component may go unused before the compile cache
    /// removes it.
    CACHE_KEEP_UNUSED: Duration = Duration::from_secs(30 * 24 * 3600);
    /// What the compile cache's entries may add up to, in MiB; past it, the
    /// least recently used go (never one used in the last day).
    CACHE_MAX_MB: u64 = 2048;
    /// The most remembered component-file digests the cache keeps; past it,
    /// the oldest go.
    CACHE_MAX_DIGESTS: usize = 1024;
    /// The most remembered plugin listings (what a component listed under
    /// one configuration) the cache keeps; past it, the least recently used
    /// go.
    CACHE_MAX_LISTINGS: usize = 1024;
    /// The largest remembered listing, in bytes; a larger one is listed
    /// afresh at every start instead.
    CACHE_MAX_LISTING_BYTES: u64 = 4 * 1024 * 1024;
    /// What the pull cache's blobs (plugins from registries) may add up to,
    /// in MiB; past it, the least recently used go (never one used in the
    /// last day).
    OCI_CACHE_MAX_MB: u64 = 2048;
}

// A call always keeps handles of its own after the lookups take theirs.
const _: () = assert!(LOOKUP_PARENTS < MIN_HANDLES_PER_CALL);
const _: () = assert!(MIN_HANDLES_PER_CALL <= MAX_HANDLES_PER_CALL);

#[cfg(test)]
mod tests {
    use super::*;

    /// The constant named in each row of the limits table of
    /// `docs/security.md`: the first code span of the row's first cell.
    fn documented() -> Vec<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/security.md");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut names = Vec::new();
        for line in text.lines() {
            let Some(first) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
                continue;
            };
            let mut spans = first.split('`').skip(1).step_by(2);
            if let Some(name) = spans.next()
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && !name.is_empty()
            {
                names.push(name.to_string());
            }
        }
        names
    }

    #[test]
    fn the_documented_table_has_a_row_for_every_cap_in_order() {
        assert_eq!(documented(), NAMES, "docs/security.md's limits table");
    }
}
