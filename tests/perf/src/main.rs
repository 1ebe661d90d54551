//! `toolcell-perf`: Toolcell's performance benchmark.
//!
//! `cargo run --release -p toolcell-perf` builds `toolcell` and
//! `floor-server` in release and the perf plugin for wasm32-wasip2, then
//! measures, with this process as the MCP client over stdio:
//! - start-up: spawn to the `tools/list` response, with the embedded default
//!   configuration and with 1, 10 and 100 copies of the perf plugin, each
//!   with an empty compile cache (cold) and a filled one (warm);
//! - `read_file` latency (p50, p99) of a 3-byte and a 27 KB file, one call at
//!   a time, for Toolcell and for `floor-server` (the same tool, native, no
//!   sandbox), in alternating rounds so that drift in the machine hits both;
//! - throughput: calls per second with several client tasks pipelining
//!   requests over one connection;
//! - peak RSS (`VmHWM`) of each server before it exits.
//!
//! It prints a Markdown table (docs/performance.md holds one)
//! and, with `--json`, the raw figures. `--languages` measures the SDK
//! examples instead, and `--execute` the builtin interpreters against
//! `python3` and `node`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Parser;
use serde_json::{Value, json};

mod client;
mod execute;
mod languages;
mod setup;

use client::{Launch, Session};
use setup::{Binaries, Fixture};

/// Toolcell's performance benchmark: start-up, call latency, throughput and
/// peak memory, against a native rmcp server with the same tool.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// Benchmark this toolcell binary instead of building target/release/toolcell.
    #[arg(long, value_name = "PATH")]
    toolcell: Option<PathBuf>,

    /// Timed calls per file and server, one at a time.
    #[arg(long, default_value_t = 2000)]
    calls: usize,

    /// Untimed calls per file and server before timing.
    #[arg(long, default_value_t = 200)]
    warmup: usize,

    /// Start-ups timed per warm-cache scenario.
    #[arg(long, default_value_t = 20)]
    starts: usize,

    /// Start-ups timed per cold-cache scenario (each with an empty cache).
    #[arg(long, default_value_t = 3)]
    cold_starts: usize,

    /// Concurrent client tasks for the throughput test.
    #[arg(long, default_value_t = 8)]
    clients: usize,

    /// Calls each client task makes in the throughput test.
    #[arg(long, default_value_t = 500)]
    calls_per_client: usize,

    /// Plugin counts for the start-up growth rows.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 10, 100])]
    plugin_counts: Vec<usize>,

    /// Skip the start-up scenarios (the calls still start one server).
    #[arg(long)]
    skip_start: bool,

    /// Skip the calls, throughput and their peak RSS.
    #[arg(long)]
    skip_calls: bool,

    /// Also print every figure as JSON.
    #[arg(long)]
    json: bool,

    /// Small counts, for checking that the benchmark runs.
    #[arg(long)]
    quick: bool,

    /// Measure the SDK examples instead (the same plugin in Rust, Python and
    /// JavaScript, built with `toolcell build`): size, first load, warm
    /// start and per-call latency.
    #[arg(long)]
    languages: bool,

    /// Measure the builtin interpreters instead (`run_python`, `run_js`),
    /// against `python3` and `node` on this machine: first start, warm start,
    /// `print(1)` latency and a million-iteration loop.
    #[arg(long)]
    execute: bool,

    /// Timed calls per language with --languages (and --execute, at most 200).
    #[arg(long, default_value_t = 500)]
    language_calls: usize,
}

/// How many rounds the sequential calls are split into, alternating servers.
const ROUNDS: usize = 10;

fn main() -> Result<()> {
    let mut args = Args::parse();
    if args.quick {
        args.calls = 100;
        args.warmup = 20;
        args.starts = 3;
        args.cold_starts = 1;
        args.calls_per_client = 50;
        args.language_calls = 50;
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this client is a debug build; its own overhead inflates every figure \
             (run with --release)"
        );
    }
    let binaries = setup::build(args.toolcell.clone())?;
    // One thread: the client stays out of the servers' way on a small machine.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if args.execute {
        let fixture = Fixture::new()?;
        let table = runtime.block_on(execute::run(&args, &binaries, &fixture))?;
        println!("{table}");
        return Ok(());
    }
    if args.languages {
        let fixture = Fixture::new()?;
        let table = runtime.block_on(languages::run(&args, &binaries, &fixture))?;
        println!("{table}");
        return Ok(());
    }
    let report = runtime.block_on(run(&args, &binaries))?;
    println!("{}", report.table());
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.json)?);
    }
    Ok(())
}

async fn run(args: &Args, bin: &Binaries) -> Result<Report> {
    let fixture = Fixture::new()?;
    let mut report = Report::new(args, bin)?;
    // The calls run on the default configuration with a cache that the
    // start-up runs filled; without them, the first start fills it.
    let warm_cache = fixture.cache("calls")?;
    if !args.skip_start {
        measure_starts(args, bin, &fixture, &warm_cache, &mut report).await?;
    }
    if !args.skip_calls {
        measure_calls(args, bin, &fixture, &warm_cache, &mut report).await?;
    }
    report.finish();
    Ok(report)
}

/// Spawn to `tools/list`: the floor, the default plugins, and each count of
/// perf plugins, with a cold cache and a warm one. The warm starts run in
/// rounds (the floor, then each scenario), so that a change in the machine's
/// load hits them all alike.
async fn measure_starts(
    args: &Args,
    bin: &Binaries,
    fixture: &Fixture,
    default_cache: &Path,
    report: &mut Report,
) -> Result<()> {
    let mut scenarios = vec![(
        None,
        "default plugins".to_string(),
        default_cache.to_path_buf(),
    )];
    for &count in &args.plugin_counts {
        let config = fixture.many_plugins(&bin.plugin, count)?;
        let cache = fixture.cache(&format!("warm-{count}"))?;
        scenarios.push((Some(config), format!("{count} perf plugin(s)"), cache));
    }
    let mut colds = Vec::new();
    for (index, (config, what, warm_cache)) in scenarios.iter().enumerate() {
        eprintln!("start-up: toolcell, {what}, cold cache");
        let config = config.as_deref();
        let mut cold = Starts::default();
        for i in 0..args.cold_starts.max(1) {
            let cache = fixture.cache(&format!("cold-{index}-{i}"))?;
            cold.add(start_toolcell(bin, fixture, config, &cache, "cold").await?)
                .await?;
        }
        colds.push(cold);
        // Fill the warm cache; this start is not counted.
        start_toolcell(bin, fixture, config, warm_cache, "fill")
            .await?
            .close()
            .await?;
    }
    setup::let_the_cache_settle().await;
    eprintln!("start-up: the floor and toolcell, warm cache, in rounds");
    let mut floor = Starts::default();
    let mut warms = vec![Starts::default(); scenarios.len()];
    for _ in 0..args.starts.max(1) {
        floor.add(start_floor(bin, fixture).await?).await?;
        for ((config, _, cache), warm) in scenarios.iter().zip(&mut warms) {
            let session = start_toolcell(bin, fixture, config.as_deref(), cache, "warm").await?;
            warm.add(session).await?;
        }
    }
    report.floor_start = Some(median(&floor.times));
    for ((config, what, _), (cold, warm)) in scenarios.iter().zip(colds.into_iter().zip(warms)) {
        let is_default = config.is_none();
        let what = if is_default {
            report.default_tools = warm.tools;
            format!("{what} ({} tools)", warm.tools)
        } else {
            what.clone()
        };
        report.start_rows.push(StartRow {
            what: format!("{what}, cold cache"),
            start: cold,
            // Issue 32's first run: the builtins' compiled code ready at once.
            goal: is_default.then_some(Goal::Below(300.0, "ms")),
        });
        report.start_rows.push(StartRow {
            what: format!("{what}, warm cache"),
            start: warm,
            goal: is_default.then_some(Goal::Below(8.0, "ms")),
        });
    }
    Ok(())
}

/// `read_file` latency and throughput on one long-lived session per server,
/// then each server's peak RSS.
async fn measure_calls(
    args: &Args,
    bin: &Binaries,
    fixture: &Fixture,
    cache: &Path,
    report: &mut Report,
) -> Result<()> {
    eprintln!("calls: starting both servers");
    // Fill the cache first (a no-op after the start-up runs), so that the
    // peak RSS is that of a warm start.
    start_toolcell(bin, fixture, None, cache, "fill")
        .await?
        .close()
        .await?;
    let toolcell = Arc::new(start_toolcell(bin, fixture, None, cache, "calls").await?);
    let floor = Arc::new(start_floor(bin, fixture).await?);
    report.default_tools = toolcell.tools;
    let files = [
        ("3 B", &fixture.small, setup::SMALL),
        ("27 KB", &fixture.medium, fixture.medium_text.as_str()),
    ];
    for (label, path, contents) in files {
        let arguments = json!({ "path": path });
        for (name, session) in [("toolcell", &toolcell), ("floor-server", &floor)] {
            check_read(session, &arguments, contents)
                .await
                .with_context(|| format!("{name}: read_file {label}"))?;
        }
        eprintln!("calls: read_file {label}, one at a time");
        for _ in 0..args.warmup {
            toolcell.call("read_file", &arguments).await?;
            floor.call("read_file", &arguments).await?;
        }
        let mut times = [Vec::new(), Vec::new()];
        for round in 0..ROUNDS {
            let n = args.calls / ROUNDS + usize::from(round < args.calls % ROUNDS);
            for (slot, session) in [&toolcell, &floor].into_iter().enumerate() {
                for _ in 0..n {
                    let began = Instant::now();
                    session.call("read_file", &arguments).await?;
                    times[slot].push(began.elapsed());
                }
            }
        }
        let [toolcell_times, floor_times] = times;
        report.latency_rows.push(LatencyRow {
            file: label,
            toolcell: Percentiles::of(toolcell_times),
            floor: Percentiles::of(floor_times),
        });

        eprintln!("calls: read_file {label}, {} clients at once", args.clients);
        let mut rates = [0.0f64; 2];
        for _ in 0..2 {
            for (slot, session) in [&toolcell, &floor].into_iter().enumerate() {
                rates[slot] = rates[slot].max(throughput(session, &arguments, args).await?);
            }
        }
        report.throughput_rows.push(ThroughputRow {
            file: label,
            toolcell: rates[0],
            floor: rates[1],
        });
    }
    report.toolcell_rss_kib = Some(toolcell.peak_rss_kib()?);
    report.floor_rss_kib = Some(floor.peak_rss_kib()?);
    for session in [toolcell, floor] {
        Arc::into_inner(session)
            .context("a client task still holds the session")?
            .close()
            .await?;
    }
    Ok(())
}

async fn start_floor(bin: &Binaries, fixture: &Fixture) -> Result<Session> {
    let log = fixture.log("floor");
    Session::start(&Launch {
        program: &bin.floor,
        args: &[],
        cwd: &fixture.default_dir(),
        env: &[],
        stderr_to: &log,
    })
    .await
}

async fn start_toolcell(
    bin: &Binaries,
    fixture: &Fixture,
    config: Option<&Path>,
    cache: &Path,
    name: &str,
) -> Result<Session> {
    let log = fixture.log(name);
    let mut args = vec!["serve"];
    let config_text;
    if let Some(config) = config {
        config_text = config.to_str().context("the config path is not UTF-8")?;
        args.extend(["--config", config_text]);
    }
    Session::start(&Launch {
        program: &bin.toolcell,
        args: &args,
        cwd: &fixture.default_dir(),
        env: &[("TOOLCELL_CACHE_DIR", cache)],
        stderr_to: &log,
    })
    .await
}

/// Start-up times of one scenario, and the peak RSS the servers reached.
#[derive(Clone, Default)]
struct Starts {
    times: Vec<Duration>,
    rss_kib: Vec<u64>,
    tools: usize,
}

impl Starts {
    /// Records a session's start-up time and peak RSS, and closes it.
    async fn add(&mut self, session: Session) -> Result<()> {
        self.times.push(session.started_in);
        self.rss_kib.push(session.peak_rss_kib()?);
        self.tools = session.tools;
        session.close().await
    }
}

/// Checks that `read_file` returns the file's contents, whole, as one text
/// block: both servers must do the same work.
async fn check_read(session: &Session, arguments: &Value, contents: &str) -> Result<()> {
    let line = session.call("read_file", arguments).await?;
    let response: Value = serde_json::from_str(&line)?;
    let content = &response["result"]["content"];
    let text = content[0]["text"].as_str();
    if content.as_array().map(Vec::len) != Some(1) || text != Some(contents) {
        bail!("read_file returned something other than the file: {line}");
    }
    Ok(())
}

/// Calls per second with `args.clients` tasks calling at once over one
/// connection.
async fn throughput(session: &Arc<Session>, arguments: &Value, args: &Args) -> Result<f64> {
    let began = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.clients {
        let session = session.clone();
        let arguments = arguments.clone();
        let calls = args.calls_per_client;
        tasks.spawn(async move {
            for _ in 0..calls {
                session.call("read_file", &arguments).await?;
            }
            anyhow::Ok(())
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined??;
    }
    let total = (args.clients * args.calls_per_client) as f64;
    Ok(total / began.elapsed().as_secs_f64())
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

/// p50 and p99 of a set of latencies.
#[derive(Clone, Copy)]
struct Percentiles {
    p50: Duration,
    p99: Duration,
}

impl Percentiles {
    fn of(mut times: Vec<Duration>) -> Percentiles {
        times.sort();
        let at = |q: f64| {
            let rank = ((times.len() as f64) * q).ceil() as usize;
            times
                .get(rank.saturating_sub(1))
                .copied()
                .unwrap_or_default()
        };
        Percentiles {
            p50: at(0.50),
            p99: at(0.99),
        }
    }
}

struct StartRow {
    what: String,
    start: Starts,
    goal: Option<Goal>,
}

struct LatencyRow {
    file: &'static str,
    toolcell: Percentiles,
    floor: Percentiles,
}

struct ThroughputRow {
    file: &'static str,
    toolcell: f64,
    floor: f64,
}

/// A target from issue #6, reported against, never asserted.
#[derive(Clone, Copy)]
enum Goal {
    /// The figure should be below this, in the unit named.
    Below(f64, &'static str),
    /// Toolcell's figure should be at most this many times the floor's.
    RatioAtMost(f64),
    /// Toolcell's figure should be at least this many times the floor's.
    RatioAtLeast(f64),
}

/// Everything measured, and how.
struct Report {
    machine: String,
    counts: String,
    floor_start: Option<Duration>,
    default_tools: usize,
    start_rows: Vec<StartRow>,
    latency_rows: Vec<LatencyRow>,
    throughput_rows: Vec<ThroughputRow>,
    toolcell_rss_kib: Option<u64>,
    floor_rss_kib: Option<u64>,
    json: Value,
}

impl Report {
    fn new(args: &Args, bin: &Binaries) -> Result<Report> {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines()
                    .find_map(|line| line.strip_prefix("model name"))
                    .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_string())
            })
            .unwrap_or_else(|| "unknown CPU".into());
        let cores = std::thread::available_parallelism().map_or(0, usize::from);
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let plugin_kib = std::fs::metadata(&bin.plugin)?.len() / 1024;
        let load = load_average();
        Ok(Report {
            machine: format!(
                "{cpu}, {cores} cores, Linux {kernel}; load average {load} at the start"
            ),
            counts: format!(
                "Calls: {} timed per file and server after {} untimed, one at a time, in \
                 {ROUNDS} rounds alternating servers; throughput: {} client tasks x {} calls \
                 pipelined over one connection, best of 2. Start-up: median of {} runs with a \
                 warm cache and {} with an empty one (a fresh TOOLCELL_CACHE_DIR); the perf \
                 plugin is {plugin_kib} KiB. Peak RSS is the server's VmHWM just before it \
                 exits",
                args.calls,
                args.warmup,
                args.clients,
                args.calls_per_client,
                args.starts,
                args.cold_starts
            ),
            floor_start: None,
            default_tools: 0,
            start_rows: Vec::new(),
            latency_rows: Vec::new(),
            throughput_rows: Vec::new(),
            toolcell_rss_kib: None,
            floor_rss_kib: None,
            json: Value::Null,
        })
    }

    fn finish(&mut self) {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        self.json = json!({
            "machine": self.machine,
            "floor_start_ms": self.floor_start.map(ms),
            "start": self.start_rows.iter().map(|row| json!({
                "scenario": row.what,
                "times_ms": row.start.times.iter().map(|&d| ms(d)).collect::<Vec<_>>(),
                "peak_rss_kib": row.start.rss_kib,
            })).collect::<Vec<_>>(),
            "latency": self.latency_rows.iter().map(|row| json!({
                "file": row.file,
                "toolcell_p50_ms": ms(row.toolcell.p50),
                "toolcell_p99_ms": ms(row.toolcell.p99),
                "floor_p50_ms": ms(row.floor.p50),
                "floor_p99_ms": ms(row.floor.p99),
            })).collect::<Vec<_>>(),
            "throughput": self.throughput_rows.iter().map(|row| json!({
                "file": row.file,
                "toolcell_calls_per_s": row.toolcell,
                "floor_calls_per_s": row.floor,
            })).collect::<Vec<_>>(),
            "toolcell_peak_rss_kib": self.toolcell_rss_kib,
            "floor_peak_rss_kib": self.floor_rss_kib,
        });
    }

    /// The results as a Markdown table, then how they were measured.
    fn table(&self) -> String {
        let mut rows: Vec<[String; 5]> = Vec::new();
        let floor_start = self.floor_start.map(|d| d.as_secs_f64() * 1000.0);
        for row in &self.start_rows {
            let t = median(&row.start.times).as_secs_f64() * 1000.0;
            let f = floor_start.unwrap_or(0.0);
            rows.push([
                format!("spawn to `tools/list`, {}", row.what),
                format_ms(t),
                floor_start.map(format_ms).unwrap_or_default(),
                ratio(t, f),
                goal(row.goal, t, 0.0, "floor"),
            ]);
        }
        for row in &self.latency_rows {
            for (name, toolcell, floor, target) in [
                (
                    "p50",
                    row.toolcell.p50,
                    row.floor.p50,
                    Some(Goal::RatioAtMost(1.2)),
                ),
                ("p99", row.toolcell.p99, row.floor.p99, None),
            ] {
                let (t, f) = (
                    toolcell.as_secs_f64() * 1000.0,
                    floor.as_secs_f64() * 1000.0,
                );
                rows.push([
                    format!("`read_file` {}, one call at a time, {name}", row.file),
                    format_ms(t),
                    format_ms(f),
                    ratio(t, f),
                    goal(target, t, t / f, "floor"),
                ]);
            }
        }
        for row in &self.throughput_rows {
            rows.push([
                format!("`read_file` {}, concurrent clients, calls/s", row.file),
                format!("{:.0}", row.toolcell),
                format!("{:.0}", row.floor),
                ratio(row.toolcell, row.floor),
                goal(
                    Some(Goal::RatioAtLeast(1.0)),
                    row.toolcell,
                    row.toolcell / row.floor,
                    "floor",
                ),
            ]);
        }
        let mib = |kib: u64| kib as f64 / 1024.0;
        if let (Some(toolcell), Some(floor)) = (self.toolcell_rss_kib, self.floor_rss_kib) {
            rows.push([
                format!(
                    "peak RSS after all calls, default plugins ({} tools)",
                    self.default_tools
                ),
                format!("{:.1} MiB", mib(toolcell)),
                format!("{:.1} MiB", mib(floor)),
                ratio(mib(toolcell), mib(floor)),
                // The goal is in MB (10^6 bytes), a little under 25 MiB.
                {
                    let mb = toolcell as f64 * 1024.0 / 1e6;
                    let verdict = if mb < 25.0 { "met" } else { "not met" };
                    format!("< 25 MB ({mb:.2} MB): {verdict}")
                },
            ]);
        }
        for row in &self.start_rows {
            let peak = row.start.rss_kib.iter().copied().max().unwrap_or(0);
            rows.push([
                format!("peak RSS at `tools/list`, {}", row.what),
                format!("{:.1} MiB", mib(peak)),
                String::new(),
                String::new(),
                String::new(),
            ]);
        }

        let mut out = String::from("| measure | Toolcell | floor | Toolcell / floor | goal |\n");
        out.push_str("| --- | ---: | ---: | ---: | --- |\n");
        for row in rows {
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        out.push_str(&format!("\nMachine: {}. {}.\n", self.machine, self.counts));
        out
    }
}

/// The 1-minute load average: anything else running skews the figures.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

fn format_ms(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 10.0 {
        format!("{ms:.1} ms")
    } else if ms >= 1.0 {
        format!("{ms:.2} ms")
    } else {
        format!("{ms:.3} ms")
    }
}

fn ratio(a: f64, b: f64) -> String {
    if b > 0.0 {
        format!("{:.2}x", a / b)
    } else {
        String::new()
    }
}

/// A goal and whether it is met: `value` for a `Below` goal, `ratio` (to the
/// baseline named `baseline`) for the others.
fn goal(goal: Option<Goal>, value: f64, ratio: f64, baseline: &str) -> String {
    match goal {
        None => String::new(),
        Some(Goal::Below(limit, unit)) => {
            let verdict = if value < limit { "met" } else { "not met" };
            format!("< {limit} {unit}: {verdict}")
        }
        Some(Goal::RatioAtMost(limit)) => {
            let verdict = if ratio <= limit { "met" } else { "not met" };
            format!("<= {limit}x {baseline}: {verdict}")
        }
        Some(Goal::RatioAtLeast(limit)) => {
            let verdict = if ratio >= limit { "met" } else { "not met" };
            format!(">= {limit}x {baseline}: {verdict}")
        }
    }
}
