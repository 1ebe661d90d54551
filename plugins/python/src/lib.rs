//! The `python` plugin: `run_python`, Python 3 code run by RustPython inside the sandbox.
//!
//! Each call is a fresh instance (the host guarantees it), so each call builds a fresh
//! interpreter ([`run`]): no state survives between calls. The code's `stdout` and `stderr`
//! are captured in memory, never written to WASI's (which go to the server's log), and capped
//! at `max_output_bytes`: past it the run is stopped. Files are the plugin's mounts, reached
//! through WASI alone; the working directory is the first mount.
//!
//! Configuration (`[plugin.config]` in `plugins.toml`):
//! - `max_output_bytes`: the most stdout and stderr together that a run may print before it
//!   is stopped (default 256 KiB).

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Category, Error, Output, Tool, host};

mod run;

/// The default of `max_output_bytes`.
const DEFAULT_MAX_OUTPUT_BYTES: usize = 256 * 1024;

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("run_python", run_python)
            .title("Run Python")
            .description(
                "Run Python 3 code (RustPython 0.5, the Python 3.14 language, with most of the \
                 standard library: json, csv, re, math, statistics, datetime, collections, \
                 itertools, functools, pathlib, decimal, fractions, random, hashlib, \
                 dataclasses, difflib, unicodedata, ...) and return what it printed. Each call \
                 starts a fresh interpreter: no variables, imports or files in memory survive \
                 between calls, so put everything a run needs in its `code`. `stdin` is what \
                 the code reads from `sys.stdin` / `input()`. The code can read files under \
                 the granted folders at their host paths (and write them where the folder is \
                 granted read-write); the working directory is the first granted folder, and \
                 `import` finds `.py` modules and packages there (and in folders the code adds \
                 to `sys.path`). There \
                 is no network, no subprocess (`subprocess`, `os.system`), no native \
                 extensions (`ctypes`, C modules, pip) and no threads. An uncaught exception \
                 is an error result with the output so far and the traceback. Output past the \
                 limit stops the run.",
            )
            .category(Category::Execute)
            .output_schema::<RunResult>()
            .destructive(true)
            .idempotent(false)
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);

/// The arguments of `run_python`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct RunArgs {
    /// The Python 3 source to run, as a script (`__name__ == "__main__"`).
    code: String,
    /// Text the code reads from `sys.stdin` (and `input()`); empty if left out.
    #[serde(default)]
    stdin: Option<String>,
}

/// What a run printed.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct RunResult {
    /// What the code wrote to `sys.stdout`.
    stdout: String,
    /// What the code wrote to `sys.stderr`.
    stderr: String,
    /// Whether the output passed `max_output_bytes`, so the run was stopped there.
    truncated: bool,
}

fn run_python(args: RunArgs) -> Result<Output, Error> {
    let limit = match host::config("max_output_bytes") {
        None => DEFAULT_MAX_OUTPUT_BYTES,
        Some(text) => text.trim().parse::<usize>().map_err(|_| {
            Error::new(format!(
                "the python plugin's `max_output_bytes` is `{text}`, not a number of bytes: \
                 fix it in plugins.toml"
            ))
        })?,
    };
    let cwd = toolcell_sdk::fs::mounts().into_iter().next();
    let outcome = run::run(&args.code, args.stdin.as_deref().unwrap_or(""), cwd, limit);
    let stopped = outcome
        .truncated
        .then(|| format!("[output passed {limit} bytes; the run was stopped]"));
    let mut text = outcome.stdout.clone();
    if !outcome.stderr.is_empty() {
        section(&mut text, "stderr", &outcome.stderr);
    }
    if let Some(failure) = &outcome.failure {
        section(&mut text, "error", failure);
    }
    if let Some(stopped) = &stopped {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(stopped);
    }
    if outcome.failure.is_some() {
        return Err(Error::new(text));
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    let result = RunResult {
        stdout: outcome.stdout,
        stderr: outcome.stderr,
        truncated: outcome.truncated,
    };
    Output::structured(&result, text)
}

/// Appends `body` to `text` under a `--- name ---` line (without it when `text` is empty and
/// `body` is the traceback: it needs no title).
fn section(text: &mut String, name: &str, body: &str) {
    if text.is_empty() && name == "error" {
        text.push_str(body);
        return;
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("--- ");
    text.push_str(name);
    text.push_str(" ---\n");
    text.push_str(body);
}
