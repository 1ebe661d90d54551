//! Linking a plugin: its compiled code against the sandbox's imports, and
//! what it is, told by what it exports. A plugin is linked as it loads, or,
//! when it is served from a listing the compile cache remembers, later
//! ([`PendingLink`]): in the background once the server has answered
//! `tools/list`, or by its first call, whichever comes first.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, PoisonError};

use anyhow::{Context, Result, anyhow, bail};
use wasmtime::component::InstancePre;

use crate::runtime::call::CallError;
use crate::runtime::command;
use crate::runtime::component_file::Wasm;
use crate::runtime::contract::Exports;
use crate::runtime::engine::Engine;
use crate::runtime::host::{CallState, Imports, LazyImports};
use crate::runtime::plain;

use super::Plugin;

/// What a component is, told by what it exports.
pub(super) enum Kind {
    /// The Toolcell contract (0.1.0 or 0.2.0).
    Contract(Exports),
    /// A WASI command: one tool.
    Command(wasmtime_wasi::p2::bindings::CommandIndices),
    /// A plain component: its exported functions, by their own tool names.
    Plain(Vec<plain::Function>),
}

/// A [`Kind`] without what it holds: known before the plugin is linked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Contract,
    Command,
    Plain,
}

impl Kind {
    pub(super) fn shape(&self) -> Shape {
        match self {
            Kind::Contract(_) => Shape::Contract,
            Kind::Command(_) => Shape::Command,
            Kind::Plain(_) => Shape::Plain,
        }
    }
}

/// A plugin's code linked against the sandbox's imports, ready to
/// instantiate, and what it exports.
pub(super) struct Linked {
    pub(super) pre: InstancePre<CallState>,
    pub(super) kind: Kind,
}

impl Linked {
    pub(super) fn contract(&self) -> Option<&Exports> {
        match &self.kind {
            Kind::Contract(exports) => Some(exports),
            _ => None,
        }
    }
}

/// What linking a plugin later needs.
pub(super) struct PendingLink {
    pub(super) imports: Arc<LazyImports>,
    pub(super) wasm: Wasm,
    pub(super) sha256: [u8; 32],
}

/// Compiles (or loads from the compile cache) the component `wasm`, links
/// it against `imports`, and tells what it is by what it exports, with the
/// functions of a plain component that are not served. A component that
/// serves nothing is an error.
pub(super) fn link(
    engine: &Engine,
    imports: &Imports,
    name: &str,
    wasm: &mut Wasm,
    sha256: &[u8; 32],
) -> Result<(Linked, Vec<plain::Refused>)> {
    let component = engine.compile(name, wasm, sha256)?;
    let pre = imports
        .linker()
        .instantiate_pre(&component)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("plugin `{name}` needs imports the sandbox does not offer"))?;
    let kind = if let Ok(exports) = Exports::find(&pre) {
        Some(Kind::Contract(exports))
    } else {
        command::find(&pre).map(Kind::Command)
    };
    if let Some(kind) = kind {
        return Ok((Linked { pre, kind }, Vec::new()));
    }
    let found = plain::discover(engine.wasmtime(), &component, wasm.get()?);
    for r in &found.refused {
        tracing::warn!(
            plugin = name,
            "function `{}` is not served: {}",
            r.function,
            r.reason
        );
    }
    if found.functions.is_empty() {
        bail!(
            "plugin `{name}` is refused: it serves nothing. It exports neither the \
             toolcell:plugin contract nor wasi:cli/run, and no function it exports can \
             be served (its exports: {}{})",
            if found.exports.is_empty() {
                "none".to_string()
            } else {
                found.exports.join(", ")
            },
            found
                .refused
                .iter()
                .map(|r| format!("; `{}` refused: {}", r.function, r.reason))
                .collect::<String>()
        );
    }
    Ok((
        Linked {
            pre,
            kind: Kind::Plain(found.functions),
        },
        found.refused,
    ))
}

impl PendingLink {
    /// Links the plugin `name`, which was served from its remembered listing
    /// and so must be a contract plugin. A failure is logged here, since no
    /// load reports it.
    pub(super) fn link(mut self, engine: &Engine, name: &str) -> Result<Linked, String> {
        let started = std::time::Instant::now();
        let linked = settle(name, || {
            let imports = self.imports.get()?;
            let (linked, _) = link(engine, imports, name, &mut self.wasm, &self.sha256)?;
            match linked.kind {
                Kind::Contract(_) => Ok(linked),
                _ => Err(anyhow!("it no longer exports the toolcell:plugin contract")),
            }
        });
        if linked.is_ok() {
            tracing::debug!(
                plugin = name,
                elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
                "plugin linked after its listing was served"
            );
        }
        linked
    }
}

/// Runs a deferred link (`attempt`) of the plugin `name` and says why it
/// failed, a panic included, logged at error level: no load reports it, and
/// every call of the plugin answers with it, so a panic must not leave the
/// plugin unlinked with no reason given (nor end the background thread that
/// links the plugins after it).
fn settle<T>(name: &str, attempt: impl FnOnce() -> Result<T>) -> Result<T, String> {
    let outcome = match std::panic::catch_unwind(AssertUnwindSafe(attempt)) {
        Ok(result) => result.map_err(|error| format!("{error:#}")),
        Err(payload) => Err(format!("linking it panicked: {}", panic_text(&*payload))),
    };
    outcome.map_err(|reason| {
        let error = format!("plugin `{name}` could not be linked: {reason}");
        tracing::error!(plugin = name, "{error}");
        error
    })
}

/// What a panic said, when it said it with a string.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

impl Plugin {
    /// Links the plugin now, on this thread, if it was loaded before it was
    /// linked and nothing has started to link it yet. A failure is logged,
    /// and every call of the plugin then answers with it.
    pub fn link_now(&self) {
        if let Some(pending) = self.take_pending() {
            let linked = pending.link(&self.engine, &self.name);
            let _ = self.linked.set(linked);
        }
    }

    /// Whether the plugin was loaded before it was linked, and nothing has
    /// started to link it yet.
    pub fn awaits_link(&self) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The link still to do, taken by whoever does it.
    fn take_pending(&self) -> Option<PendingLink> {
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Waits until the plugin is linked (linking it on a thread of its own
    /// if nothing has started to), and says why it could not be, if it
    /// could not: what `toolcell check` reports of a plugin it loaded before
    /// linking it.
    pub async fn ready(&self) -> Result<(), String> {
        self.link_soon();
        match self.linked.wait().await {
            Ok(_) => Ok(()),
            Err(error) => Err(error.clone()),
        }
    }

    /// Starts the pending link on a blocking-pool thread, if there is one.
    fn link_soon(&self) {
        if self.linked.initialized() {
            return;
        }
        if let Some(pending) = self.take_pending() {
            let (engine, name, cell) = (
                Arc::clone(&self.engine),
                Arc::clone(&self.name),
                Arc::clone(&self.linked),
            );
            tokio::task::spawn_blocking(move || {
                let _ = cell.set(pending.link(&engine, &name));
            });
        }
    }

    /// The plugin's linked code, waiting for it if it is being linked, so
    /// that the wait is bounded like the call (`what`) that waits.
    pub(super) async fn linked(&self, what: &str) -> Result<&Linked, CallError> {
        if let Some(Ok(linked)) = self.linked.get() {
            return Ok(linked);
        }
        self.link_soon();
        self.linked
            .wait()
            .await
            .as_ref()
            .map_err(|reason| CallError::Setup {
                tool: what.to_string(),
                reason: reason.clone(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferred_link_that_fails_says_why() {
        let failed = settle::<()>("fs", || Err(anyhow!("the cache is gone")));
        assert_eq!(
            failed.unwrap_err(),
            "plugin `fs` could not be linked: the cache is gone"
        );
    }

    #[test]
    fn a_deferred_link_that_panics_becomes_its_error() {
        let panicked = settle::<()>("git", || panic!("out of slots: {}", 3));
        assert_eq!(
            panicked.unwrap_err(),
            "plugin `git` could not be linked: linking it panicked: out of slots: 3"
        );
        let literal = settle::<()>("git", || panic!("plain"));
        assert!(literal.unwrap_err().ends_with("linking it panicked: plain"));
        assert_eq!(settle("git", || Ok(7)), Ok(7));
    }
}
