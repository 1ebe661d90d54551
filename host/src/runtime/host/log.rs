//! The contract's `host` interface: a plugin's log lines and progress
//! reports (to `tracing` and the call's observer), whether its call was
//! cancelled, and its `config` table.

use super::CallState;
use crate::runtime::call::LogLevel;
use crate::runtime::contract::{self, v1, v2};

impl contract::host::Host for CallState {
    fn log(&mut self, level: LogLevel, message: String) {
        let (plugin, tool) = (&*self.plugin, &*self.tool);
        match level {
            LogLevel::Trace => tracing::trace!(plugin, tool, "{message}"),
            LogLevel::Debug => tracing::debug!(plugin, tool, "{message}"),
            LogLevel::Info => tracing::info!(plugin, tool, "{message}"),
            LogLevel::Warning => tracing::warn!(plugin, tool, "{message}"),
            LogLevel::Error => tracing::error!(plugin, tool, "{message}"),
        }
        if let Some(observer) = &self.cx.observer {
            observer.log(level, &message);
        }
    }

    fn report_progress(&mut self, progress: f64, total: Option<f64>, message: Option<String>) {
        // MCP requires progress to increase with each notification; drop
        // reports that do not, and any that are not finite.
        if !progress.is_finite() || self.last_progress.is_some_and(|last| progress <= last) {
            return;
        }
        self.last_progress = Some(progress);
        if let Some(observer) = &self.cx.observer {
            observer.progress(progress, total.filter(|t| t.is_finite()), message);
        }
    }

    fn is_cancelled(&mut self) -> bool {
        self.cx.is_cancelled()
    }

    fn get_config(&mut self, key: String) -> Option<String> {
        self.config.get(&key).cloned()
    }

    fn config_entries(&mut self) -> Vec<(String, String)> {
        self.config
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl v1::Host for CallState {}
impl v2::Host for CallState {}
