//! `git-bench`: times the git plugin's tools through the real host against
//! the `git` command line on the same generated repository.
//!
//! ```sh
//! cargo run --release -p toolcell-bench --bin git-bench
//! ```
//!
//! In one run it:
//! 1. generates a deterministic repository under `target/bench/git-repo`
//!    (unless one with the same parameters is there) with `git fast-import`:
//!    by default 10,000 files and 5,000 commits, one file of 2,000 lines that
//!    a third of the commits change, packed by `git gc`; then changes 100
//!    files in the working tree and adds 10 untracked ones;
//! 2. builds `toolcell` in release mode (unless `--toolcell PATH` is given),
//!    starts `toolcell serve` once with the builtin git plugin mounted on the
//!    repository, and times `tools/call` requests over stdio after a warm-up;
//! 3. times the matching `git` commands, interleaved with the calls;
//! 4. prints medians, the ratio of each tool to git (the goal is at most 3x)
//!    and whether the tool's answer names what git's does (the changed and
//!    untracked paths, the commits, the blamed commits).
//!
//! Options: `--files N`, `--commits N`, `--dir PATH`, `--runs N`,
//! `--toolcell PATH`, `--plugin FILE.wasm` (a git plugin component to serve
//! instead of the builtin one), `--keep-going` (exit 0 even when an answer
//! differs).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use toolcell_bench::{
    Result, Rng, Sample, Server, build_toolcell, children_cpu, ratio, summary, workspace_root,
};

/// The file whose blame is timed, and its length.
const BIG_FILE: &str = "src/big.rs";
const BIG_LINES: usize = 2000;
/// Files changed in the working tree (the timed diff), and untracked files.
const CHANGED: usize = 100;
const UNTRACKED: usize = 10;

struct Args {
    files: usize,
    commits: usize,
    dir: PathBuf,
    runs: usize,
    toolcell: Option<PathBuf>,
    plugin: Option<PathBuf>,
    keep_going: bool,
    /// Tools to time (`--only git_status`); every tool when empty.
    only: Vec<String>,
}

fn parse_args(root: &Path) -> Result<Args> {
    let mut args = Args {
        files: 10_000,
        commits: 5_000,
        dir: root.join("target/bench/git-repo"),
        runs: 11,
        toolcell: None,
        plugin: None,
        keep_going: false,
        only: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--files" => args.files = value()?.parse::<usize>()?.max(CHANGED),
            "--commits" => args.commits = value()?.parse::<usize>()?.max(2),
            "--dir" => args.dir = PathBuf::from(value()?),
            "--runs" => args.runs = value()?.parse::<usize>()?.max(1),
            "--toolcell" => args.toolcell = Some(PathBuf::from(value()?)),
            "--plugin" => args.plugin = Some(std::fs::canonicalize(value()?)?),
            "--keep-going" => args.keep_going = true,
            "--only" => args.only.push(value()?),
            "--help" | "-h" => {
                println!(
                    "git-bench [--files N] [--commits N] [--dir PATH] [--runs N] \
                     [--toolcell PATH] [--plugin FILE.wasm] [--keep-going] [--only TOOL]..."
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (try --help)").into()),
        }
    }
    Ok(args)
}

/// One timed case: a tool call and the git command that answers the same.
struct Case {
    label: &'static str,
    tool: &'static str,
    arguments: Value,
    git: Vec<String>,
    /// Checks the tool's answer against git's output; `None` when it agrees,
    /// or what is missing.
    check: fn(tool: &str, git: &str) -> Option<String>,
}

fn main() -> Result<()> {
    let root = workspace_root()?;
    let args = parse_args(&root)?;
    std::fs::create_dir_all(&args.dir)?;
    let repo = std::fs::canonicalize(&args.dir)?;
    generate(&repo, args.files, args.commits)?;
    let toolcell = match &args.toolcell {
        Some(path) => path.clone(),
        None => build_toolcell(&root)?,
    };
    let version = git(&repo, &["--version"])?;
    println!(
        "\nrepository: {} ({} files, {} commits, packed; {CHANGED} files changed in the working \
         tree, {UNTRACKED} untracked)\nbaseline: {}\n{} runs of each, interleaved; medians, warm \
         page cache. cpu = user + system time of git or of the toolcell server.",
        repo.display(),
        args.files + 1,
        args.commits,
        version.trim(),
        args.runs,
    );

    let cases = [
        Case {
            label: "git_status",
            tool: "git_status",
            arguments: json!({}),
            git: strings(&["status", "--porcelain=v2", "--branch"]),
            check: names_every_path,
        },
        Case {
            label: "git_log max_count=100",
            tool: "git_log",
            arguments: json!({"max_count": 100}),
            git: strings(&["log", "-n", "100", "--format=%H %P%n%an <%ae> %at%n%s"]),
            check: names_every_commit,
        },
        Case {
            label: "git_diff, 100 changed files",
            tool: "git_diff",
            arguments: json!({}),
            git: strings(&["diff"]),
            check: names_every_diffed_file,
        },
        Case {
            label: "git_blame, 2,000 lines",
            tool: "git_blame",
            arguments: json!({"path": BIG_FILE}),
            git: strings(&["blame", "--porcelain", "HEAD", "--", BIG_FILE]),
            check: names_every_commit,
        },
    ];

    let config = repo
        .parent()
        .ok_or("the repository has no parent")?
        .join("git-bench.toml");
    let plugin = match &args.plugin {
        Some(path) => toml_string(path)?,
        None => "\"builtin:git\"".to_string(),
    };
    // Generous time and output limits: the benchmark wants whole answers,
    // not the defaults' caps. Memory stays at the default (256 MiB): every
    // tool must work within it.
    std::fs::write(
        &config,
        format!(
            "[limits]\ntimeout_ms = 600000\nmax_output_bytes = 67108864\n\n\
             [[plugin]]\nname = \"git\"\npath = {plugin}\n\
             mounts = [{{ host = {}, mode = \"ro\" }}]\nconfig = {{ max_output_bytes = \"60000000\" }}\n",
            toml_string(&repo)?
        ),
    )?;
    let mut server = Server::start(&toolcell, &config, "git-bench")?;

    println!("\n| operation | git | toolcell | toolcell / git (wall) | (cpu) | same answer |");
    println!("| --- | ---: | ---: | ---: | ---: | --- |");
    let mut worst: f64 = 0.0;
    let mut all_agree = true;
    for case in cases
        .iter()
        .filter(|case| args.only.is_empty() || args.only.iter().any(|tool| tool == case.tool))
    {
        // Warm-up, and the answers to compare.
        let (_, expected) = run_git(&repo, &case.git)?;
        let (_, answer) = server.call(case.tool, case.arguments.clone())?;
        let answer = answer_text(&answer);
        let difference = (case.check)(&answer, &expected);
        let mut git_times = Vec::new();
        let mut tool_times = Vec::new();
        for _ in 0..args.runs {
            git_times.push(run_git(&repo, &case.git)?.0);
            tool_times.push(server.call(case.tool, case.arguments.clone())?.0);
        }
        let (by_wall, by_cpu) = ratio(&tool_times, &git_times);
        eprintln!("{}:\n  git      {}", case.label, summary(&git_times));
        eprintln!("  toolcell {}", summary(&tool_times));
        println!(
            "| {} | {:.1} ms | {:.1} ms | {by_wall:.2}x | {by_cpu:.2}x | {} |",
            case.label,
            toolcell_bench::ms(toolcell_bench::wall(&git_times)),
            toolcell_bench::ms(toolcell_bench::wall(&tool_times)),
            match &difference {
                None => "yes".to_string(),
                Some(missing) => format!("NO: {missing}"),
            }
        );
        worst = worst.max(by_wall);
        all_agree &= difference.is_none();
    }
    println!(
        "\nworst wall-time ratio: {worst:.2}x (goal: at most 3x); every answer agrees with git: {}",
        if all_agree { "yes" } else { "NO" }
    );
    if !all_agree && !args.keep_going {
        std::process::exit(1);
    }
    Ok(())
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| item.to_string()).collect()
}

/// `path` as a TOML basic string.
fn toml_string(path: &Path) -> Result<String> {
    let text = path.to_str().ok_or("a path is not UTF-8")?;
    Ok(serde_json::to_string(text)?)
}

/// Everything the tool answered, as one text: its text blocks and its
/// structured content.
fn answer_text(result: &Value) -> String {
    let mut text = String::new();
    for block in result["content"].as_array().into_iter().flatten() {
        text.push_str(block["text"].as_str().unwrap_or_default());
        text.push('\n');
    }
    text.push_str(&result["structuredContent"].to_string());
    text
}

/// What `expected` has that `answer` lacks, as a short note; `None` if nothing.
fn missing(answer: &str, expected: BTreeSet<String>) -> Option<String> {
    let total = expected.len();
    let absent: Vec<String> = expected
        .into_iter()
        .filter(|item| !answer.contains(item.as_str()))
        .collect();
    absent
        .first()
        .map(|first| format!("{} of {total} missing, e.g. `{first}`", absent.len()))
}

/// Every path `git status --porcelain=v2` lists appears in the answer.
fn names_every_path(answer: &str, git: &str) -> Option<String> {
    let paths = git
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.rsplit(' ').next())
        .map(str::to_string)
        .collect();
    missing(answer, paths)
}

/// Every commit (the first 7 hex digits of each 40-digit id at the start of
/// a line) appears in the answer.
fn names_every_commit(answer: &str, git: &str) -> Option<String> {
    let commits = git
        .lines()
        .filter_map(|line| line.split(' ').next())
        .filter(|word| word.len() == 40 && word.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|id| id[..7].to_string())
        .collect();
    missing(answer, commits)
}

/// Every file `git diff` shows a change of appears in the answer.
fn names_every_diffed_file(answer: &str, git: &str) -> Option<String> {
    let files = git
        .lines()
        .filter_map(|line| line.strip_prefix("+++ b/"))
        .map(str::to_string)
        .collect();
    missing(answer, files)
}

/// Runs `git` in `repo` with the environment the benchmark fixes: its
/// sample (the child's CPU time) and its standard output.
fn run_git(repo: &Path, args: &[String]) -> Result<(Sample, String)> {
    let cpu_before = children_cpu()?;
    let start = Instant::now();
    let output = git_command(repo).args(args).output()?;
    let wall = start.elapsed();
    let cpu = children_cpu()?.saturating_sub(cpu_before);
    if !output.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok((Sample { wall, cpu }, String::from_utf8(output.stdout)?))
}

/// `git` in `repo`, reading no system or user configuration, and taking no
/// optional locks (so `status` does not rewrite the index, which the
/// read-only tool cannot do either).
fn git_command(repo: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(repo)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    command
}

fn git(repo: &Path, args: &[&str]) -> Result<String> {
    Ok(run_git(repo, &strings(args))?.1)
}

const WORDS: &[&str] = &[
    "queue", "zone", "handler", "buffer", "index", "packet", "frame", "cursor", "ledger", "shard",
    "token", "socket", "window", "record", "bucket", "signal",
];

fn line(rng: &mut Rng, number: usize) -> String {
    let a = rng.pick(WORDS);
    let b = rng.pick(WORDS);
    format!(
        "    let {a}_{number} = {b}_table.get({}); // {a} {b}\n",
        rng.below(100_000)
    )
}

fn file_path(index: usize) -> String {
    format!("src/m{:03}/f{index:05}.rs", index / 100)
}

/// Writes the repository unless `dir` already holds one made with the same
/// parameters.
fn generate(dir: &Path, files: usize, commits: usize) -> Result<()> {
    let stamp = format!("files={files} commits={commits} big={BIG_LINES} changed={CHANGED} v1\n");
    let marker = dir.join(".git").join("git-bench-params");
    if std::fs::read_to_string(&marker).is_ok_and(|text| text == stamp) {
        return Ok(());
    }
    println!(
        "generating {} ({files} files, {commits} commits) ...",
        dir.display()
    );
    std::fs::remove_dir_all(dir)?;
    std::fs::create_dir_all(dir)?;
    git(dir, &["init", "-q", "-b", "main"])?;

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut contents: Vec<Vec<String>> = (0..files)
        .map(|_| (0..20).map(|n| line(&mut rng, n)).collect())
        .collect();
    let mut big: Vec<String> = (0..BIG_LINES).map(|n| line(&mut rng, n)).collect();

    let mut importer = git_command(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()?;
    let mut stream =
        std::io::BufWriter::new(importer.stdin.take().ok_or("fast-import has no stdin")?);
    for commit in 0..commits {
        let time = 1_700_000_000 + commit as u64 * 3600;
        let author = ["Ada", "Brian", "Chidi", "Dana"][commit % 4];
        let message = format!("change {commit}: touch the {} path", WORDS[commit % 16]);
        write!(
            stream,
            "commit refs/heads/main\nauthor {author} <{}@example.com> {time} +0000\n\
             committer {author} <{}@example.com> {time} +0000\ndata {}\n{message}\n",
            author.to_lowercase(),
            author.to_lowercase(),
            message.len()
        )?;
        let mut touched = Vec::new();
        if commit == 0 {
            touched.extend(0..files);
        } else {
            for _ in 0..2 {
                let index = rng.below(files);
                let at = rng.below(20);
                contents[index][at] = line(&mut rng, at);
                touched.push(index);
            }
        }
        for index in touched {
            let text = contents[index].concat();
            write!(
                stream,
                "M 100644 inline {}\ndata {}\n{text}\n",
                file_path(index),
                text.len()
            )?;
        }
        if commit == 0 || commit % 3 == 0 {
            let at = rng.below(BIG_LINES - 5);
            for (n, text) in big.iter_mut().enumerate().skip(at).take(5) {
                *text = line(&mut rng, n);
            }
            let text = big.concat();
            write!(
                stream,
                "M 100644 inline {BIG_FILE}\ndata {}\n{text}\n",
                text.len()
            )?;
        }
    }
    drop(stream);
    if !importer.wait()?.success() {
        return Err("git fast-import failed".into());
    }
    git(dir, &["gc", "-q"])?;
    git(dir, &["reset", "-q", "--hard", "main"])?;
    // Let the index be older than the files' times, then refresh it once, so
    // that no entry is "racily clean" and every status is a pure stat walk.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    git_command(dir)
        .env_remove("GIT_OPTIONAL_LOCKS")
        .args(["update-index", "-q", "--really-refresh"])
        .status()?;
    for index in (0..files).step_by(files / CHANGED).take(CHANGED) {
        let path = dir.join(file_path(index));
        let mut text = std::fs::read_to_string(&path)?;
        text.push_str("    // changed in the working tree\n");
        std::fs::write(&path, text)?;
    }
    for n in 0..UNTRACKED {
        std::fs::write(dir.join(format!("notes-{n}.txt")), "untracked\n")?;
    }
    std::fs::write(marker, stamp)?;
    Ok(())
}
