//! The `js` plugin: `run_js` runs a JavaScript snippet in the Boa engine
//! (pure Rust, ES2023) inside the sandbox.
//!
//! - `engine.rs` runs one script in a fresh context: the runtime, the
//!   Node-like globals of `prelude.js` (console, process, require of fs,
//!   path, util, os) on host functions, and every queued job to the end.
//! - `inspect.js` prints values as Node's `util.inspect` and `util.format` do
//!   in the common cases (written from what Node 20 prints), so `console.log`
//!   prints what Node prints.
//! - `jobs.rs` runs promise jobs and timers in Node's order.
//! - `capture.rs` keeps stdout and stderr in memory up to the output budget;
//!   past it the run is stopped.
//!
//! Configuration (`[plugin.config]` in `plugins.toml`):
//! - `max_output_bytes`: the budget for stdout and stderr together (default
//!   256 KiB).

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Category, Error, Output, Tool};

mod capture;
mod engine;
mod jobs;

/// The output budget when `max_output_bytes` is not configured.
const DEFAULT_MAX_OUTPUT_BYTES: usize = 256 * 1024;

/// Arguments of `run_js`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct RunJs {
    /// The JavaScript source, run as a CommonJS script (`require`, not `import`).
    code: String,
    /// Text the script reads as its standard input: `fs.readFileSync(0, 'utf8')`.
    stdin: Option<String>,
}

/// What a run wrote.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct RunResult {
    /// What the script wrote to standard output (console.log, process.stdout.write).
    stdout: String,
    /// What the script wrote to standard error (console.error, console.warn).
    stderr: String,
    /// Whether the output passed the budget: the run was stopped there.
    truncated: bool,
}

const DESCRIPTION: &str = "Run JavaScript (ES2023, the Boa engine; not Node or V8) and return \
    what it printed. Each call is a fresh instance: no variable, file handle or module state \
    survives between calls. console.log/error/warn/info/dir print like Node. Node-like globals: \
    require('fs') (readFileSync, writeFileSync, appendFileSync, existsSync, readdirSync, \
    statSync, mkdirSync, unlinkSync, rmSync, renameSync, and callback and promise forms of \
    them), require('path') (POSIX), require('util') (inspect, format), require('os'), process \
    (argv, env, exit, exitCode, cwd, stdout.write), setTimeout and promises run to completion, \
    structuredClone, TextEncoder, atob/btoa. Files: only under the folders granted to this \
    tool, at their host paths; the working directory is the first granted folder. No network, \
    no subprocesses (child_process), no native addons, no npm packages, no ES `import`. \
    `stdin` is the text `fs.readFileSync(0, 'utf8')` returns. An uncaught error is an error \
    result with the output so far and the error's stack.";

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("run_js", run_js)
            .title("Run JavaScript")
            .description(DESCRIPTION)
            .category(Category::Execute)
            .output_schema::<RunResult>()
            .destructive(true)
            .idempotent(false)
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);

fn max_output_bytes() -> Result<usize, Error> {
    match toolcell_sdk::host::config("max_output_bytes") {
        None => Ok(DEFAULT_MAX_OUTPUT_BYTES),
        Some(text) => text.trim().parse().map_err(|_| {
            Error::invalid(format!(
                "the js plugin's config `max_output_bytes` is `{text}`: give a whole number of \
                 bytes, such as 262144"
            ))
        }),
    }
}

fn run_js(args: RunJs) -> Result<Output, Error> {
    let limit = max_output_bytes()?;
    let cwd = toolcell_sdk::fs::mounts()
        .into_iter()
        .next()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| "/".to_string());
    // Relative paths are resolved by the prelude against `cwd`; this makes
    // WASI's own view agree where the libc supports it.
    let _ = std::env::set_current_dir(&cwd);
    capture::start(limit);
    let ending = engine::run(&args.code, args.stdin.unwrap_or_default(), &cwd);
    let capture = capture::finish();
    let ending = ending.map_err(Error::new)?;
    let result = RunResult {
        stdout: capture.stdout,
        stderr: capture.stderr,
        truncated: capture.truncated,
    };
    let mut text = render(&result);
    if capture.truncated {
        text.push_str(&format!(
            "\n[output passed {limit} bytes (the script tried to write {} bytes); the run was \
             stopped there. Print less, or summarize before printing.]",
            capture.attempted
        ));
    }
    match ending {
        engine::Ending::Finished => Output::structured(&result, text),
        engine::Ending::Exit(code) => Err(Error::new(format!(
            "{text}\nThe script called process.exit({code})."
        ))),
        engine::Ending::Uncaught(report) => Err(Error::new(if text.is_empty() {
            report
        } else {
            format!("{text}\n{report}")
        })),
    }
}

/// The output as text for the model: stdout, then stderr under a marker.
fn render(result: &RunResult) -> String {
    let mut text = result.stdout.clone();
    if !result.stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[stderr]\n");
        text.push_str(&result.stderr);
    }
    text
}
