//! glibc's allocator gives each thread that allocates while another holds
//! the arena an arena of its own, up to eight per core. Toolcell runs each
//! call on a thread of its own, so eight clients at once make up to sixteen
//! arenas on two cores, each keeping some hundreds of KiB resident after the
//! calls end: 1.8 MiB of a 24.5 MiB peak in `toolcell-perf`'s throughput
//! test. Four arenas cost 1.4 MiB less at that peak and 2% of the 3-byte
//! throughput, within the noise; two cost 9% of it (docs/performance.md).
//! `MALLOC_ARENA_MAX` in the environment still wins.

/// How many arenas the process may have.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENAS: i32 = 4;

/// Caps glibc's malloc arenas at [`ARENAS`], unless `MALLOC_ARENA_MAX` is
/// set. Call it before any thread starts. Elsewhere (macOS, Windows, musl)
/// it does nothing: their allocators have no such per-thread arenas.
pub fn cap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        /// `M_ARENA_MAX` in glibc's `malloc.h`.
        const M_ARENA_MAX: i32 = -8;
        #[allow(unsafe_code)]
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: `mallopt` is glibc's, with this signature; M_ARENA_MAX
        // only bounds how many arenas later allocations may create.
        #[allow(unsafe_code)]
        let _ = unsafe { mallopt(M_ARENA_MAX, ARENAS) };
    }
}
