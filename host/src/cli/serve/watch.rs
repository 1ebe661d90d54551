//! Reloading while serving: the drop folders, and `plugins.toml` with
//! `--watch`, are looked at every [`POLL`]; once a change has settled, the
//! configuration is built again and a new toolbox loaded and swapped in
//! ([`Loading::replace`]), which tells connected clients the lists changed.
//!
//! Polling rather than the OS's file events: it needs no dependency, works
//! the same on every OS and file system (network shares and containers'
//! bind mounts, where events are unreliable), and a folder holds at most
//! [`MAX_DROPIN_FILES`](toolcell::limits::MAX_DROPIN_FILES) files, so a
//! look is a few hundred `stat`s at most. A file counts as written once its
//! size and modification time have stayed the same for [`SETTLE`] (at least
//! two looks): a component still being copied is never loaded half, and
//! what fails to load then is a stable file, whose ERROR is worth reading.
//! A reload whose `plugins.toml` no longer validates keeps the previous
//! configuration serving and logs every error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use toolcell::config::{Config, folder_files};
use toolcell::protocol::server::Loading;
use toolcell::runtime::engine::Engine;

use crate::cli::{Common, load_config_with, load_toolbox_in, log_loaded, new_engine};

/// How often the watched files are looked at.
pub const POLL: Duration = Duration::from_millis(250);
/// How long a change must stay the same before it is loaded.
pub const SETTLE: Duration = Duration::from_millis(500);

/// What a file looked like: its size and modification time, or `None`
/// when it (or its folder) cannot be read.
pub type Look = BTreeMap<PathBuf, Option<(u64, Option<SystemTime>)>>;

/// What the watcher needs to reload.
pub struct Watch {
    /// The options the server started with.
    pub common: Common,
    /// `--plugins` folders, canonical.
    pub extra_dirs: Vec<PathBuf>,
    /// `plugins.toml`, with `--watch`.
    pub config_file: Option<PathBuf>,
    /// The largest `memory_mb` the engine's pool was sized for.
    pub memory_mb: u64,
}

/// The files to look at for `config`: its drop folders (those of
/// `plugins.toml` and `--plugins`), and `config_file`.
fn look(dirs: &[PathBuf], config_file: Option<&Path>) -> Look {
    let mut look = Look::new();
    let stat = |path: &Path| {
        std::fs::metadata(path)
            .ok()
            .map(|meta| (meta.len(), meta.modified().ok()))
    };
    for dir in dirs {
        match folder_files(dir) {
            Ok(files) => {
                for file in files {
                    let seen = stat(&file);
                    look.insert(file, seen);
                }
            }
            Err(_) => {
                look.insert(dir.clone(), None);
            }
        }
    }
    if let Some(file) = config_file {
        look.insert(file.to_path_buf(), stat(file));
    }
    look
}

impl Watch {
    /// What the watched files of `config` look like now: taken before
    /// the first load, so that a change made while it loads is seen.
    pub fn first_look(&self, config: &Config) -> Look {
        look(&config.plugin_dirs, self.config_file.as_deref())
    }

    /// Watches until the task is aborted; `config` is what is served now,
    /// loaded in `engine` from the files as `applied` saw them.
    pub async fn run(
        mut self,
        mut engine: Arc<Engine>,
        loading: Loading,
        config: Config,
        mut applied: Look,
    ) {
        let mut dirs = config.plugin_dirs.clone();
        let look_now = |dirs: Vec<PathBuf>, file: Option<PathBuf>| async move {
            tokio::task::spawn_blocking(move || look(&dirs, file.as_deref()))
                .await
                .unwrap_or_default()
        };
        let mut current = applied.clone();
        let mut since = Instant::now();
        loop {
            tokio::time::sleep(POLL).await;
            let now = look_now(dirs.clone(), self.config_file.clone()).await;
            if now != current {
                current = now;
                since = Instant::now();
                continue;
            }
            if current == applied || since.elapsed() < SETTLE {
                continue;
            }
            let changed: Vec<String> = changes(&applied, &current);
            tracing::info!("reloading: {} changed", changed.join(", "));
            applied = current.clone();
            let reloader = Reloader {
                common: self.common.clone(),
                extra_dirs: self.extra_dirs.clone(),
                engine: engine.clone(),
                memory_mb: self.memory_mb,
            };
            let reloaded = tokio::task::spawn_blocking(move || reloader.reload()).await;
            match reloaded {
                Ok(Some((now, config, toolbox))) => {
                    engine = now;
                    self.memory_mb = self.memory_mb.max(config.largest_memory_mb());
                    dirs = config.plugin_dirs.clone();
                    loading.replace(toolbox);
                }
                Ok(None) => {}
                Err(error) => tracing::error!("reloading failed: {error}"),
            }
        }
    }
}

/// The files that differ between two looks.
fn changes(before: &Look, after: &Look) -> Vec<String> {
    let mut changed: Vec<String> = after
        .iter()
        .filter(|(path, seen)| before.get(*path) != Some(seen))
        .map(|(path, _)| path.display().to_string())
        .collect();
    let removed = before.keys().filter(|path| !after.contains_key(*path));
    changed.extend(removed.map(|path| format!("{} (removed)", path.display())));
    changed
}

/// One reload, on a blocking thread.
struct Reloader {
    common: Common,
    extra_dirs: Vec<PathBuf>,
    engine: Arc<Engine>,
    memory_mb: u64,
}

impl Reloader {
    /// The configuration built again and its toolbox loaded, with the
    /// engine it runs in; `None` (logged) when the configuration no longer
    /// validates or loading failed, and the previous one keeps serving.
    #[allow(clippy::type_complexity)]
    fn reload(
        self,
    ) -> Option<(
        Arc<Engine>,
        Config,
        Arc<toolcell::runtime::toolbox::Toolbox>,
    )> {
        let started = Instant::now();
        let config = match load_config_with(&self.common, &self.extra_dirs) {
            Ok((config, _)) => config,
            Err(error) => {
                tracing::error!(
                    "not reloaded, the previous configuration keeps serving: {error:#}"
                );
                return None;
            }
        };
        // A larger memory limit than the engine's pool was sized for needs
        // an engine of its own; calls running in the old one finish there.
        let engine = if self.memory_mb >= config.largest_memory_mb() {
            self.engine
        } else {
            match new_engine(&self.common, &config) {
                Ok(engine) => engine,
                Err(error) => {
                    tracing::error!("not reloaded: {error:#}");
                    return None;
                }
            }
        };
        match load_toolbox_in(&engine, &config) {
            Ok(toolbox) => {
                log_loaded(&config, &toolbox);
                tracing::info!(
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "reloaded"
                );
                Some((engine, config, toolbox))
            }
            Err(error) => {
                tracing::error!("not reloaded, the previous plugins keep serving: {error:#}");
                None
            }
        }
    }
}
