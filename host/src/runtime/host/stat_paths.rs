//! `toolcell:files/metadata`, the host's extension for plugins that look at
//! many files: the metadata of a list of paths in one call, statted on
//! several threads (`wit/deps/files-0.1.0.wit` is the contract).
//!
//! A status of a working tree stats every tracked file. Through
//! `wasi:filesystem` that is one host call per file, one after the other on
//! the call's thread; git itself stats on several threads. Here a plugin
//! hands over the whole list at once, and the host splits it between up to
//! [`STAT_PATHS_THREADS`] threads, each walking its share in order.
//!
//! Resolution is as strict as it gets: a path is `/`-separated plain names
//! beneath the descriptor; each directory on the way is opened from the one
//! before with cap-primitives, not following a symlink (a path through one
//! fails with `loop`); the last name is statted without following it. The
//! answers are [`fs_lookups`](super::fs_lookups)' (wasmtime-wasi's) for the same
//! path: the tests compare them. Only the directory `dir` names is reached.
//! A thread keeps the directories on the way to the last path's open, so
//! that the next path in sorted order opens only what it does not share
//! with it: at most [`STAT_PATHS_OPEN_DIRS`] of them, and one more below.
//!
//! The work stops with the call: every thread checks, before every 16th
//! path and each directory it opens on the way, whether the call is over (its
//! deadline passed, or it was cancelled), and answers the paths it did not
//! get to with `interrupted`. A call made to stat many deep paths (each
//! directory opened a name at a time) therefore ends its threads at its
//! deadline instead of burning CPU long after it was answered.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use cap_primitives::fs::FollowSymlinks;
use wasmtime::component::{Linker, Resource, ResourceType, WasmList, WasmStr};
use wasmtime::{AsContextMut, StoreContextMut};
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::{DescriptorStat, ErrorCode};

use super::fs_lookups::LookupView;
use super::stat::{descriptor_stat, directory};
use crate::limits::{
    STAT_PATHS_MAX, STAT_PATHS_MAX_PATH_BYTES, STAT_PATHS_OPEN_DIRS, STAT_PATHS_PENDING,
    STAT_PATHS_PENDING_BYTES, STAT_PATHS_THREADS,
};
use crate::runtime::call::CallContext;

/// The interface, as plugins import it: 0.1.0 (`stat-paths`), and 0.2.0,
/// which adds stats that run while the plugin goes on (`start-stat-paths`).
pub const METADATA: &str = "toolcell:files/metadata@0.1.0";
/// See [`METADATA`].
pub const METADATA_0_2: &str = "toolcell:files/metadata@0.2.0";

/// The fewest paths per thread worth starting a thread for.
const PER_THREAD: usize = 512;

/// One path's answer.
type Answer = Result<DescriptorStat, ErrorCode>;

/// The arguments of `stat-paths` and `start-stat-paths`.
type PathsArgs = (Resource<Descriptor>, WasmList<WasmStr>);

/// Adds `toolcell:files/metadata` 0.1.0 and 0.2.0 to `linker`.
pub fn add_to_linker<T: LookupView + 'static>(linker: &mut Linker<T>) -> Result<()> {
    linker
        .instance(METADATA)?
        .func_wrap("stat-paths", stat_paths::<T>)?;
    let mut metadata = linker.instance(METADATA_0_2)?;
    metadata.func_wrap("stat-paths", stat_paths::<T>)?;
    metadata.resource(
        "pending-stats",
        ResourceType::host::<PendingStats>(),
        |mut store, rep| {
            let state = store.data_mut();
            state
                .ctx()
                .table
                .delete(Resource::<PendingStats>::new_own(rep))?;
            *state.pending_stats() -= 1;
            Ok(())
        },
    )?;
    metadata.func_wrap(
        "start-stat-paths",
        |mut store: StoreContextMut<'_, T>, (dir, paths): PathsArgs| {
            if *store.data_mut().pending_stats() >= STAT_PATHS_PENDING {
                return Err(wasmtime::Error::msg(format!(
                    "start-stat-paths: a call holds at most {STAT_PATHS_PENDING} pending-stats \
                     at a time; finish or drop one first"
                )));
            }
            let root = directory(store.data_mut().ctx().table, &dir)?;
            let cx = store.data().call().clone();
            let texts: Vec<String> = read_paths(&mut store, &paths, STAT_PATHS_PENDING_BYTES)?
                .into_iter()
                .map(std::borrow::Cow::into_owned)
                .collect();
            let pending = match root {
                Some(root) if !texts.is_empty() => PendingStats::start(root, texts, cx)?,
                Some(_) => PendingStats::answered(Vec::new()),
                None => PendingStats::answered(vec![Err(ErrorCode::NotDirectory); texts.len()]),
            };
            let state = store.data_mut();
            let pending = state.ctx().table.push(pending)?;
            *state.pending_stats() += 1;
            Ok((pending,))
        },
    )?;
    metadata.func_wrap(
        "[static]pending-stats.finish",
        |mut store: StoreContextMut<'_, T>, (pending,): (Resource<PendingStats>,)| {
            let state = store.data_mut();
            let pending = state.ctx().table.delete(pending)?;
            *state.pending_stats() -= 1;
            Ok((pending.finish(),))
        },
    )?;
    Ok(())
}

/// `stat-paths`: the answers, statted while the guest waits.
fn stat_paths<T: LookupView>(
    mut store: StoreContextMut<'_, T>,
    (dir, paths): PathsArgs,
) -> wasmtime::Result<(Vec<Answer>,)> {
    let Some(root) = directory(store.data_mut().ctx().table, &dir)? else {
        // Relative to a file, as `stat-at` answers.
        return Ok((vec![Err(ErrorCode::NotDirectory); paths.len()],));
    };
    let cx = store.data().call().clone();
    let texts = read_paths(
        &mut store,
        &paths,
        STAT_PATHS_MAX * STAT_PATHS_MAX_PATH_BYTES,
    )?;
    Ok((stat_all(&root, &texts, &cx),))
}

/// The paths of a call, read from the guest's memory; more than
/// [`STAT_PATHS_MAX`] of them, or more than `max_bytes` of text in all,
/// traps.
fn read_paths<'s, T: 'static>(
    store: &'s mut StoreContextMut<'_, T>,
    paths: &WasmList<WasmStr>,
    max_bytes: usize,
) -> wasmtime::Result<Vec<std::borrow::Cow<'s, str>>> {
    if paths.len() > STAT_PATHS_MAX {
        return Err(wasmtime::Error::msg(format!(
            "stat-paths was given {} paths, and takes at most {STAT_PATHS_MAX} per call",
            paths.len()
        )));
    }
    let paths = paths
        .iter(store.as_context_mut())?
        .collect::<wasmtime::Result<Vec<WasmStr>>>()?;
    let store: &'s StoreContextMut<'_, T> = store;
    // Strings may overlap in the guest's memory: bound what is read.
    let mut read = 0;
    let mut texts = Vec::with_capacity(paths.len());
    for path in &paths {
        let text = path.to_str(store)?;
        read += text.len();
        if read > max_bytes {
            return Err(wasmtime::Error::msg(format!(
                "stat-paths was given more than {max_bytes} bytes of paths"
            )));
        }
        texts.push(text);
    }
    Ok(texts)
}

/// Stats that run on threads of their own while the guest goes on
/// (`pending-stats`). Dropped before it is finished, it tells its threads to
/// stop at their next look at the call (every 16 paths and each directory
/// opened), as the end of the call does.
pub struct PendingStats {
    threads: Vec<std::thread::JoinHandle<Vec<Answer>>>,
    answered: Vec<Answer>,
    dropped: Arc<AtomicBool>,
}

impl PendingStats {
    /// Starts statting `paths` beneath `root` on as many threads as
    /// [`stat_all`] would use; the paths of each stay in order.
    fn start(root: Arc<File>, mut paths: Vec<String>, cx: CallContext) -> wasmtime::Result<Self> {
        let share = paths.len().div_ceil(threads_for(paths.len())).max(1);
        let mut parts = Vec::new();
        while paths.len() > share {
            let rest = paths.split_off(share);
            parts.push(std::mem::replace(&mut paths, rest));
        }
        parts.push(paths);
        // Built first: if a thread cannot be started, dropping it stops those
        // that were.
        let mut pending = PendingStats::answered(Vec::new());
        for part in parts {
            let (root, cx, dropped) = (root.clone(), cx.clone(), pending.dropped.clone());
            let thread = std::thread::Builder::new()
                .name("toolcell-stats".into())
                .spawn(move || {
                    let stop = Stop {
                        cx: &cx,
                        dropped: Some(&dropped),
                    };
                    stat_run(&root, &part, &stop)
                })?;
            pending.threads.push(thread);
        }
        Ok(pending)
    }

    /// Answers known from the start.
    fn answered(answers: Vec<Answer>) -> Self {
        PendingStats {
            threads: Vec::new(),
            answered: answers,
            dropped: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The answers, in order, once every thread is done.
    fn finish(mut self) -> Vec<Answer> {
        let mut answers = std::mem::take(&mut self.answered);
        for thread in std::mem::take(&mut self.threads) {
            match thread.join() {
                Ok(part) => answers.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        answers
    }
}

impl Drop for PendingStats {
    fn drop(&mut self) {
        self.dropped.store(true, Ordering::Relaxed);
    }
}

/// When a thread's stats should stop: the call is over, or the
/// `pending-stats` they answer was dropped.
struct Stop<'a> {
    cx: &'a CallContext,
    dropped: Option<&'a AtomicBool>,
}

impl Stop<'_> {
    fn now(&self) -> bool {
        self.cx.is_over()
            || self
                .dropped
                .is_some_and(|dropped| dropped.load(Ordering::Relaxed))
    }
}

/// How many threads stat `count` paths.
fn threads_for(count: usize) -> usize {
    crate::runtime::cores()
        .min(STAT_PATHS_THREADS)
        .min(count / PER_THREAD)
        .max(1)
}

/// The answers for `paths` beneath `root`, in order, statted on as many
/// threads as the machine and the list's length warrant; once `cx` is over,
/// the paths not yet statted are answered `interrupted`.
pub fn stat_all<P: AsRef<str> + Sync>(root: &File, paths: &[P], cx: &CallContext) -> Vec<Answer> {
    let threads = threads_for(paths.len());
    let stop = &Stop { cx, dropped: None };
    if threads == 1 {
        return stat_run(root, paths, stop);
    }
    let share = paths.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let helpers: Vec<_> = paths
            .chunks(share)
            .skip(1)
            .map(|part| scope.spawn(move || stat_run(root, part, stop)))
            .collect();
        let mut answers = stat_run(root, &paths[..share], stop);
        for helper in helpers {
            match helper.join() {
                Ok(part) => answers.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        answers
    })
}

/// The answers for `paths`, one after the other. The directories on the way
/// to each path's are kept open for the paths after it ([`Parents`]): paths
/// in sorted order share them.
fn stat_run<P: AsRef<str>>(root: &File, paths: &[P], stop: &Stop<'_>) -> Vec<Answer> {
    let mut parents = Parents::default();
    let mut over = false;
    paths
        .iter()
        .enumerate()
        .map(|(at, path)| {
            over = over || (at % OVER_CHECK_EVERY == 0 && stop.now());
            if over {
                return Err(ErrorCode::Interrupted);
            }
            let path = path.as_ref();
            if path.len() > STAT_PATHS_MAX_PATH_BYTES {
                return Err(ErrorCode::NameTooLong);
            }
            let (directory, name) = split(path).ok_or(ErrorCode::Invalid)?;
            let dir = match directory {
                None => root,
                Some(directory) => parents.reach(root, directory, stop)?,
            };
            cap_primitives::fs::stat(dir, Path::new(name), FollowSymlinks::No)
                .map(|meta| descriptor_stat(&meta))
                .map_err(ErrorCode::from)
        })
        .collect()
}

/// How many paths a thread stats between two looks at whether the call is
/// over (it also looks before each directory it opens).
const OVER_CHECK_EVERY: usize = 16;

/// The directories a thread holds open: the chain from the root to the last
/// directory reached, up to [`STAT_PATHS_OPEN_DIRS`] deep; below that, the
/// last directory reached alone. Each is opened from the one above it, a
/// name at a time, never following a symlink.
#[derive(Default)]
struct Parents<'p> {
    /// Outermost first, each with its path beneath the root.
    chain: Vec<(&'p str, File)>,
    /// The last directory reached below the chain's depth.
    deep: Option<(&'p str, File)>,
    /// The last directory that could not be opened, and why.
    failed: Option<(&'p str, ErrorCode)>,
}

impl<'p> Parents<'p> {
    /// The directory `directory` beneath `root`; `interrupted` if `stop`
    /// says so on the way.
    fn reach(
        &mut self,
        root: &File,
        directory: &'p str,
        stop: &Stop<'_>,
    ) -> Result<&File, ErrorCode> {
        if let Some((failed, code)) = self.failed
            && failed == directory
        {
            return Err(code);
        }
        if self
            .deep
            .as_ref()
            .is_some_and(|(open, _)| *open == directory)
        {
            return self
                .deep
                .as_ref()
                .map(|(_, dir)| dir)
                .ok_or(ErrorCode::Invalid);
        }
        self.deep = None;
        // Keep the directories `directory` is in (or is).
        while let Some((open, _)) = self.chain.last() {
            if within(directory, open) {
                break;
            }
            self.chain.pop();
        }
        let reached = self.chain.last().map_or(0, |(open, _)| open.len());
        let rest = match reached {
            0 => directory,
            _ => directory.get(reached + 1..).unwrap_or_default(),
        };
        let mut end = reached;
        let mut deep: Option<File> = None;
        for name in rest.split('/').filter(|name| !name.is_empty()) {
            end = if end == 0 {
                name.len()
            } else {
                end + 1 + name.len()
            };
            let opened = if stop.now() {
                Err(ErrorCode::Interrupted)
            } else {
                let from = match &deep {
                    Some(dir) => dir,
                    None => self.chain.last().map_or(root, |(_, dir)| dir),
                };
                open_child(from, name)
            };
            let dir = match opened {
                Ok(dir) => dir,
                Err(code) => {
                    self.failed = Some((directory, code));
                    return Err(code);
                }
            };
            if deep.is_none() && self.chain.len() < STAT_PATHS_OPEN_DIRS {
                self.chain.push((&directory[..end], dir));
            } else {
                deep = Some(dir);
            }
        }
        if let Some(dir) = deep {
            return Ok(&self.deep.insert((directory, dir)).1);
        }
        self.chain
            .last()
            .filter(|(open, _)| *open == directory)
            .map(|(_, dir)| dir)
            .ok_or(ErrorCode::Invalid)
    }
}

/// Whether `directory` is `parent` or lies beneath it.
fn within(directory: &str, parent: &str) -> bool {
    directory
        .strip_prefix(parent)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn open_child(dir: &File, name: &str) -> Result<File, ErrorCode> {
    cap_primitives::fs::open_dir_nofollow(dir, Path::new(name)).map_err(ErrorCode::from)
}

/// `path` as its directory (`None` for a name at the top) and its last
/// name, when it is `/`-separated plain names: none empty, `.` or `..`.
fn split(path: &str) -> Option<(Option<&str>, &str)> {
    if path.split('/').any(|name| matches!(name, "" | "." | "..")) {
        return None;
    }
    Some(match path.rsplit_once('/') {
        Some((directory, name)) => (Some(directory), name),
        None => (None, path),
    })
}

#[cfg(all(test, unix))]
mod tests {
    use wasmtime_wasi::WasiView;
    use wasmtime_wasi::p2::bindings::filesystem::types::{ErrorCode, PathFlags};

    use super::{PER_THREAD, PendingStats, Stop, stat_all, stat_run};
    use crate::limits::STAT_PATHS_MAX_PATH_BYTES;
    use crate::runtime::call::CallContext;
    use crate::runtime::host::fs_lookups::fixture::{PATHS, borrow, mount, wasmtime_stat};
    use crate::runtime::host::stat::directory;

    /// Paths that are not plain names beneath the directory.
    const INVALID: &[&str] = &[
        "dir/../file",
        "./file",
        "dir/./file",
        "dir//file",
        "dir/file/",
        "dir/",
        ".",
        "..",
        "",
        "/etc/passwd",
        "../outside/secret",
        "../root-evil/x",
    ];

    /// Paths through a symlink, in the mount or out of it.
    const THROUGH_SYMLINKS: &[&str] = &[
        "link-dir/file",
        "link-dir/sub/file",
        "link-out/secret",
        "dir/link-up/file",
        "dir/link-up/link-up/sub/file",
        "dir/link-escape/secret",
        "dangling/x",
    ];

    #[tokio::test]
    async fn answers_are_stat_ats_and_no_symlink_is_followed() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let root = directory(state.ctx().table, &borrow(rep))
            .expect("no trap")
            .expect("a directory");
        let answers = stat_all(&root, PATHS, &CallContext::default());
        assert_eq!(answers.len(), PATHS.len());
        for (path, ours) in PATHS.iter().zip(answers) {
            if INVALID.contains(path) {
                assert!(
                    matches!(ours, Err(ErrorCode::Invalid)),
                    "{path:?}: {ours:?}"
                );
            } else if THROUGH_SYMLINKS.contains(path) {
                assert!(
                    matches!(ours, Err(ErrorCode::Loop | ErrorCode::NotDirectory)),
                    "{path:?}: {ours:?}"
                );
            } else {
                let theirs = wasmtime_stat(&mut state, rep, PathFlags::empty(), path).await;
                assert_eq!(format!("{ours:?}"), theirs, "{path:?}");
            }
        }
    }

    #[test]
    fn a_path_too_long_is_refused_unread() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let root = std::fs::File::open(dir.path()).expect("the directory");
        let long = "a/".repeat(STAT_PATHS_MAX_PATH_BYTES / 2) + "b";
        let answers = stat_all(&root, &[long.as_str(), "missing"], &CallContext::default());
        assert!(
            matches!(answers[0], Err(ErrorCode::NameTooLong)),
            "{answers:?}"
        );
        assert!(matches!(answers[1], Err(ErrorCode::NoEntry)), "{answers:?}");
    }

    /// See: issue "Bounded everywhere", item 5: stat-paths through a deep
    /// directory chain burned CPU long after its call was answered.
    #[test]
    fn a_call_that_is_over_stats_nothing_more() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut chain = dir.path().to_path_buf();
        let mut paths = Vec::new();
        let mut relative = String::new();
        for _ in 0..64 {
            chain.push("d");
            relative.push_str("d/");
            std::fs::create_dir(&chain).expect("a directory");
            std::fs::write(chain.join("f"), "x").expect("a file");
            paths.push(format!("{relative}f"));
        }
        while paths.len() < 4 * PER_THREAD {
            paths.extend_from_within(..64);
        }
        let root = std::fs::File::open(dir.path()).expect("the directory");
        let live = stat_all(&root, &paths, &CallContext::default());
        assert!(live.iter().all(Result::is_ok), "{:?}", live.first());
        let cancelled = tokio_util::sync::CancellationToken::new();
        cancelled.cancel();
        let past = tokio::time::Instant::now() - std::time::Duration::from_millis(1);
        for cx in [
            CallContext {
                cancel: vec![cancelled],
                ..CallContext::default()
            },
            CallContext {
                deadline: Some(past),
                ..CallContext::default()
            },
        ] {
            let answers = stat_all(&root, &paths, &cx);
            assert_eq!(answers.len(), paths.len());
            assert!(
                answers
                    .iter()
                    .all(|answer| matches!(answer, Err(ErrorCode::Interrupted))),
                "{:?}",
                answers.iter().find(|answer| answer.is_ok())
            );
        }
    }

    /// The directories a thread keeps open between paths give each path the answer it gets
    /// alone: in sorted order and shuffled, through siblings sharing a prefix (`a` and `a-b`),
    /// deeper than the chain kept open, with missing directories and a file taken for one.
    #[test]
    fn kept_directories_answer_as_each_path_alone() {
        use crate::limits::STAT_PATHS_OPEN_DIRS;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut paths = Vec::new();
        let mut relative = String::new();
        for level in 0..STAT_PATHS_OPEN_DIRS + 8 {
            for sibling in ["a", "a-b", "b"] {
                let here = format!("{relative}{sibling}");
                std::fs::create_dir_all(dir.path().join(&here)).expect("a directory");
                std::fs::write(dir.path().join(&here).join("f"), "x").expect("a file");
                paths.push(format!("{here}/f"));
                paths.push(format!("{here}/missing"));
                paths.push(format!("{here}/gone/f"));
                paths.push(format!("{here}/f/f"));
            }
            paths.push(format!("{relative}a"));
            relative.push_str(if level % 2 == 0 { "a/" } else { "a-b/" });
        }
        let root = std::fs::File::open(dir.path()).expect("the directory");
        let alone: Vec<String> = paths
            .iter()
            .map(|path| {
                let answer = stat_all(&root, std::slice::from_ref(path), &CallContext::default());
                format!("{answer:?}")
            })
            .collect();
        let mut order: Vec<usize> = (0..paths.len()).collect();
        order.sort_by(|&x, &y| paths[x].cmp(&paths[y]));
        let mut shuffled = order.clone();
        // A fixed interleaving of the two halves: deep and shallow paths alternate.
        let half = shuffled.len() / 2;
        let (front, back) = shuffled.split_at(half);
        shuffled = front
            .iter()
            .zip(back.iter().rev())
            .flat_map(|(x, y)| [*x, *y])
            .chain(back.get(front.len()..).unwrap_or_default().iter().copied())
            .collect();
        for order in [order, shuffled] {
            let asked: Vec<&str> = order.iter().map(|&at| paths[at].as_str()).collect();
            let answers = stat_all(&root, &asked, &CallContext::default());
            assert_eq!(answers.len(), asked.len());
            for (&at, answer) in order.iter().zip(answers) {
                assert_eq!(format!("{:?}", [answer]), alone[at], "{:?}", paths[at]);
            }
        }
        let deepest = paths.iter().filter(|path| path.ends_with("/f")).count();
        assert!(deepest > 3 * STAT_PATHS_OPEN_DIRS, "{deepest}");
    }

    #[tokio::test]
    async fn threads_answer_as_one_thread_in_the_same_order() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let root = directory(state.ctx().table, &borrow(rep))
            .expect("no trap")
            .expect("a directory");
        // Enough paths for several threads, each directory's together.
        let mut paths: Vec<String> = Vec::new();
        while paths.len() < 4 * PER_THREAD {
            paths.extend(PATHS.iter().map(|path| path.to_string()));
        }
        paths.sort();
        let together = stat_all(&root, &paths, &CallContext::default());
        assert_eq!(together.len(), paths.len());
        for (path, answer) in paths.iter().zip(together) {
            let alone = stat_all(&root, std::slice::from_ref(path), &CallContext::default());
            assert_eq!(format!("{:?}", [answer]), format!("{alone:?}"), "{path:?}");
        }
    }

    /// Paths enough for several threads, each directory's together.
    fn many_paths() -> Vec<String> {
        let mut paths: Vec<String> = Vec::new();
        while paths.len() < 4 * PER_THREAD {
            paths.extend(PATHS.iter().map(|path| path.to_string()));
        }
        paths.sort();
        paths
    }

    #[tokio::test]
    async fn stats_started_in_the_background_answer_as_stat_paths() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let root = directory(state.ctx().table, &borrow(rep))
            .expect("no trap")
            .expect("a directory");
        let paths = many_paths();
        let waited = stat_all(&root, &paths, &CallContext::default());
        let pending = PendingStats::start(root.clone(), paths.clone(), CallContext::default())
            .expect("threads start");
        assert!(
            pending.threads.len() > 1
                || std::thread::available_parallelism().is_ok_and(|n| n.get() == 1)
        );
        let background = pending.finish();
        assert_eq!(format!("{background:?}"), format!("{waited:?}"));
        let none =
            PendingStats::start(root, Vec::new(), CallContext::default()).expect("a thread starts");
        assert!(none.finish().is_empty());
    }

    #[tokio::test]
    async fn background_stats_stop_when_the_call_is_over_or_they_are_dropped() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let (mut state, rep) = mount(dir.path());
        let root = directory(state.ctx().table, &borrow(rep))
            .expect("no trap")
            .expect("a directory");
        let over = CallContext {
            deadline: Some(tokio::time::Instant::now()),
            ..CallContext::default()
        };
        let answers = PendingStats::start(root.clone(), many_paths(), over)
            .expect("threads start")
            .finish();
        assert!(
            answers
                .iter()
                .all(|answer| matches!(answer, Err(ErrorCode::Interrupted))),
            "{answers:?}"
        );
        // What a thread of a dropped `pending-stats` sees.
        let dropped = std::sync::atomic::AtomicBool::new(true);
        let stop = Stop {
            cx: &CallContext::default(),
            dropped: Some(&dropped),
        };
        let answers = stat_run(&root, &many_paths(), &stop);
        assert!(
            answers
                .iter()
                .all(|answer| matches!(answer, Err(ErrorCode::Interrupted))),
            "{answers:?}"
        );
    }
}
