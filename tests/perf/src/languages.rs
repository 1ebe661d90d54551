//! `--languages`: the SDK examples (the same word-count plugin in Rust,
//! Python and JavaScript), each built with `toolcell build` and measured
//! through the host: component size, first load (spawn to `tools/list` with
//! an empty compile cache), warm start, and `count` latency on the 27 KB
//! file, with the Rust plugin as the baseline of the same run.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::client::{Launch, Session};
use crate::setup::{Binaries, Fixture, target_dir, workspace_root};
use crate::{Args, Goal, Percentiles, goal, median};

/// (language, the example's folder relative to the workspace root)
const EXAMPLES: &[(&str, &str)] = &[
    ("Rust", "sdk/examples/wordcount"),
    ("Python", "sdk/python/examples/wordcount"),
    ("JavaScript", "sdk/js/examples/wordcount"),
];

struct Row {
    language: &'static str,
    size: u64,
    build: Duration,
    cold: Duration,
    warm: Duration,
    call: Percentiles,
    rss_kib: u64,
}

/// Builds and measures every example; returns a Markdown table.
pub async fn run(args: &Args, bin: &Binaries, fixture: &Fixture) -> Result<String> {
    let root = workspace_root()?;
    let target = target_dir(&root);
    let mut rows = Vec::new();
    for &(language, example) in EXAMPLES {
        let dir = fixture
            .root()
            .join(format!("example-{}", language.to_lowercase()));
        std::fs::create_dir_all(&dir)?;
        copy_example(&root.join(example), &dir, &root.join("sdk"))?;
        std::fs::write(dir.join("bench.txt"), &fixture.medium_text)?;

        eprintln!("languages: building the {language} example");
        let began = Instant::now();
        let status = Command::new(&bin.toolcell)
            .arg("build")
            .arg(&dir)
            .arg("--cache-dir")
            .arg(target.join("perf-tools"))
            .env("CARGO_TARGET_DIR", target.join("perf-authoring"))
            .stdout(std::process::Stdio::null())
            .status()
            .context("cannot run toolcell build")?;
        if !status.success() {
            bail!("toolcell build of the {language} example failed ({status})");
        }
        let build = began.elapsed();
        let size = std::fs::metadata(dir.join("wordcount.wasm"))?.len();
        let config = dir.join("plugins.toml");

        eprintln!("languages: {language}, start-up with a cold cache");
        let mut colds = Vec::new();
        for i in 0..args.cold_starts.max(1) {
            let cache = fixture.cache(&format!("{language}-cold-{i}"))?;
            let session = start(bin, fixture, (&dir, &config, &cache), "languages").await?;
            colds.push(session.started_in);
            session.close().await?;
        }
        let warm_cache = fixture.cache(&format!("{language}-warm"))?;
        start(bin, fixture, (&dir, &config, &warm_cache), "languages")
            .await?
            .close()
            .await?;
        crate::setup::let_the_cache_settle().await;
        eprintln!("languages: {language}, start-up with a warm cache");
        let mut warms = Vec::new();
        for _ in 0..args.starts.max(1) {
            let session = start(bin, fixture, (&dir, &config, &warm_cache), "languages").await?;
            warms.push(session.started_in);
            session.close().await?;
        }

        eprintln!("languages: {language}, `count` one call at a time");
        let session = start(bin, fixture, (&dir, &config, &warm_cache), "languages").await?;
        let arguments = json!({ "path": "bench.txt" });
        let reply = session.call("count", &arguments).await?;
        let words = fixture.medium_text.split_whitespace().count();
        if !reply.contains(&format!("\"words\":{words}")) {
            bail!("the {language} example counted wrong: {reply}");
        }
        for _ in 0..args.warmup.min(100) {
            session.call("count", &arguments).await?;
        }
        let mut times = Vec::new();
        for _ in 0..args.language_calls {
            let began = Instant::now();
            session.call("count", &arguments).await?;
            times.push(began.elapsed());
        }
        let rss_kib = session.peak_rss_kib()?;
        session.close().await?;
        rows.push(Row {
            language,
            size,
            build,
            cold: median(&colds),
            warm: median(&warms),
            call: Percentiles::of(times),
            rss_kib,
        });
    }
    Ok(table(&rows, args))
}

/// Starts `toolcell serve --config CONFIG` in `dir` with the compile cache
/// `cache`, its log in the fixture's `log` file; returns once it has listed
/// its tools.
pub async fn start(
    bin: &Binaries,
    fixture: &Fixture,
    (dir, config, cache): (&Path, &Path, &Path),
    log: &str,
) -> Result<Session> {
    let config = config.to_str().context("the config path is not UTF-8")?;
    Session::start(&Launch {
        program: &bin.toolcell,
        args: &["serve", "--config", config],
        cwd: dir,
        env: &[("TOOLCELL_CACHE_DIR", cache)],
        stderr_to: &fixture.log(log),
    })
    .await
}

/// Copies an example (not its build output), pointing a Rust example's
/// relative SDK path at `sdk`.
fn copy_example(from: &Path, to: &Path, sdk: &Path) -> Result<()> {
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "target" || name == "node_modules" || name.ends_with(".wasm") {
            continue;
        }
        let dest: PathBuf = to.join(&name);
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&dest)?;
            copy_example(&entry.path(), &dest, sdk)?;
        } else if name == "Cargo.toml" {
            let text = std::fs::read_to_string(entry.path())?;
            let sdk = sdk.to_str().context("the SDK path is not UTF-8")?;
            std::fs::write(
                &dest,
                text.replace("{ path = \"../..\" }", &format!("{{ path = {sdk:?} }}")),
            )?;
        } else {
            std::fs::copy(entry.path(), &dest)?;
        }
    }
    Ok(())
}

/// Issue 32's goals for the Python and JavaScript examples: a warm start
/// under 15 ms...
const WARM_START_GOAL: Goal = Goal::Below(15.0, "ms");
/// ...and a call's p50 at most 3 times the Rust example's.
const CALL_GOAL: Goal = Goal::RatioAtMost(3.0);

fn table(rows: &[Row], args: &Args) -> String {
    let ms = |d: Duration| crate::format_ms(d.as_secs_f64() * 1000.0);
    let base = rows.first().map_or(1.0, |row| row.call.p50.as_secs_f64());
    let mut out = String::from(
        "| language | component | build | first load (cold cache) | warm start | `count` p50 | p99 | p50 / Rust | peak RSS | goals |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for (index, row) in rows.iter().enumerate() {
        let ratio = row.call.p50.as_secs_f64() / base;
        // The first row is the Rust example, the baseline.
        let goals = if index == 0 {
            String::new()
        } else {
            let warm = row.warm.as_secs_f64() * 1000.0;
            format!(
                "warm start {}; p50 {}",
                goal(Some(WARM_START_GOAL), warm, 0.0, "Rust"),
                goal(Some(CALL_GOAL), 0.0, ratio, "Rust"),
            )
        };
        out.push_str(&format!(
            "| {} | {:.2} MiB | {:.1} s | {} | {} | {} | {} | {ratio:.2}x | {:.1} MiB | {goals} |\n",
            row.language,
            row.size as f64 / (1024.0 * 1024.0),
            row.build.as_secs_f64(),
            ms(row.cold),
            ms(row.warm),
            ms(row.call.p50),
            ms(row.call.p99),
            row.rss_kib as f64 / 1024.0,
        ));
    }
    out.push_str(&format!(
        "\n{} cold start(s) and {} warm ones per language (medians), {} timed calls of `count` \
         on the 27 KB file after {} untimed ones; load average {} at the end.\n",
        args.cold_starts.max(1),
        args.starts.max(1),
        args.language_calls,
        args.warmup.min(100),
        crate::load_average(),
    ));
    out
}
