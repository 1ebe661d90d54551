//! `--execute`: the builtin interpreters (`run_python`, `run_js`) measured
//! through the host, against CPython (`python3`) and Node (`node`) on the
//! same machine in the same run: the first start with an empty compile cache
//! (the components are compiled then), a warm start, `print(1)` /
//! `console.log(1)` latency, and a million-iteration sum loop.
//!
//! A native interpreter that is not installed is reported as missing; the
//! rows through the host are measured anyway.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::languages::start;
use crate::setup::{Binaries, Fixture};
use crate::{Args, Percentiles, median};

/// One interpreter: its plugin and tool, the native program to compare
/// with, and the snippets.
struct Language {
    name: &'static str,
    plugin: &'static str,
    tool: &'static str,
    native: &'static str,
    native_flag: &'static str,
    hello: &'static str,
    sum: &'static str,
}

const LANGUAGES: &[Language] = &[
    Language {
        name: "Python",
        plugin: "python",
        tool: "run_python",
        native: "python3",
        native_flag: "-c",
        hello: "print(1)",
        sum: "s = 0\nfor i in range(1000000):\n    s += i\nprint(s)",
    },
    Language {
        name: "JavaScript",
        plugin: "js",
        tool: "run_js",
        native: "node",
        native_flag: "-e",
        hello: "console.log(1)",
        sum: "let s = 0; for (let i = 0; i < 1000000; i++) { s += i; } console.log(s);",
    },
];

/// The sum the loop prints.
const SUM: &str = "499999500000";

/// Runs of the loop, through the host and natively.
const LOOP_RUNS: usize = 5;

struct Row {
    language: &'static str,
    cold: Duration,
    warm: Duration,
    hello: Percentiles,
    native_hello: Option<Duration>,
    sum: Duration,
    native_sum: Option<Duration>,
    rss_kib: u64,
}

/// Measures both interpreters; returns a Markdown table.
pub async fn run(args: &Args, bin: &Binaries, fixture: &Fixture) -> Result<String> {
    let mut rows = Vec::new();
    for language in LANGUAGES {
        let dir = fixture.root().join(format!("execute-{}", language.plugin));
        std::fs::create_dir_all(&dir)?;
        let config = dir.join("plugins.toml");
        std::fs::write(
            &config,
            format!(
                "[server]\ncategories = [\"execute\"]\n\n[[plugin]]\nname = \"{0}\"\n\
                 path = \"builtin:{0}\"\nmounts = [{{ host = \".\", mode = \"ro\" }}]\n",
                language.plugin
            ),
        )?;

        eprintln!(
            "execute: {}, first start (the component compiles)",
            language.name
        );
        let mut colds = Vec::new();
        for i in 0..args.cold_starts.max(1) {
            let cache = fixture.cache(&format!("execute-{}-cold-{i}", language.plugin))?;
            let session = start(bin, fixture, (&dir, &config, &cache), "execute").await?;
            colds.push(session.started_in);
            session.close().await?;
        }
        let warm_cache = fixture.cache(&format!("execute-{}-warm", language.plugin))?;
        start(bin, fixture, (&dir, &config, &warm_cache), "execute")
            .await?
            .close()
            .await?;
        crate::setup::let_the_cache_settle().await;
        eprintln!("execute: {}, warm starts", language.name);
        let mut warms = Vec::new();
        for _ in 0..args.starts.max(1) {
            let session = start(bin, fixture, (&dir, &config, &warm_cache), "execute").await?;
            warms.push(session.started_in);
            session.close().await?;
        }

        eprintln!(
            "execute: {}, `{}` one call at a time",
            language.name, language.hello
        );
        let session = start(bin, fixture, (&dir, &config, &warm_cache), "execute").await?;
        let hello = json!({ "code": language.hello });
        let reply = session.call(language.tool, &hello).await?;
        if !reply.contains("\"stdout\":\"1\\n\"") {
            bail!("{} printed something else: {reply}", language.tool);
        }
        for _ in 0..args.warmup.min(20) {
            session.call(language.tool, &hello).await?;
        }
        let mut times = Vec::new();
        for _ in 0..args.language_calls.min(200) {
            let began = Instant::now();
            session.call(language.tool, &hello).await?;
            times.push(began.elapsed());
        }

        eprintln!("execute: {}, a million-iteration loop", language.name);
        let sum = json!({ "code": language.sum });
        let mut sums = Vec::new();
        for _ in 0..LOOP_RUNS {
            let began = Instant::now();
            let reply = session.call(language.tool, &sum).await?;
            sums.push(began.elapsed());
            if !reply.contains(SUM) {
                bail!("{}'s loop printed the wrong sum: {reply}", language.tool);
            }
        }
        let rss_kib = session.peak_rss_kib()?;
        session.close().await?;

        rows.push(Row {
            language: language.name,
            cold: median(&colds),
            warm: median(&warms),
            hello: Percentiles::of(times),
            native_hello: native(language, language.hello, "1")?,
            sum: median(&sums),
            native_sum: native(language, language.sum, SUM)?,
            rss_kib,
        });
    }
    Ok(table(&rows, args))
}

/// The median wall time of `LOOP_RUNS` runs of `code` by the native
/// interpreter, process start included; `None` when it is not installed.
fn native(language: &Language, code: &str, expected: &str) -> Result<Option<Duration>> {
    let mut times = Vec::new();
    for _ in 0..LOOP_RUNS {
        let began = Instant::now();
        let output = match Command::new(language.native)
            .args([language.native_flag, code])
            .output()
        {
            Ok(output) => output,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                return Err(error).with_context(|| format!("cannot run {}", language.native));
            }
        };
        times.push(began.elapsed());
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() || stdout.trim() != expected {
            bail!(
                "{} printed {stdout:?} ({}), expected {expected}",
                language.native,
                output.status
            );
        }
    }
    Ok(Some(median(&times)))
}

fn table(rows: &[Row], args: &Args) -> String {
    let ms = |d: Duration| crate::format_ms(d.as_secs_f64() * 1000.0);
    let native = |d: Option<Duration>| d.map_or_else(|| "not installed".to_owned(), ms);
    let versus = |ours: Duration, theirs: Option<Duration>| {
        theirs.map_or_else(
            || "-".to_owned(),
            |theirs| crate::ratio(ours.as_secs_f64(), theirs.as_secs_f64()),
        )
    };
    let mut out = String::from(
        "| language | first start (compile) | warm start | hello p50 | p99 | native hello | \
         1M-iteration loop | native loop | loop / native | peak RSS |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for row in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} MiB |\n",
            row.language,
            ms(row.cold),
            ms(row.warm),
            ms(row.hello.p50),
            ms(row.hello.p99),
            native(row.native_hello),
            ms(row.sum),
            native(row.native_sum),
            versus(row.sum, row.native_sum),
            row.rss_kib as f64 / 1024.0,
        ));
    }
    out.push_str(&format!(
        "\nThrough the host: {} cold start(s) and {} warm ones (medians; spawn to `tools/list`), \
         {} timed `print(1)` / `console.log(1)` calls after {} untimed ones, the loop {LOOP_RUNS} \
         times (median; each run a fresh interpreter, its start included). Natively: the median \
         of {LOOP_RUNS} runs of `python3 -c` / `node -e`, process start included. Load average \
         {} at the end.\n",
        args.cold_starts.max(1),
        args.starts.max(1),
        args.language_calls.min(200),
        args.warmup.min(20),
        crate::load_average(),
    ));
    out
}
