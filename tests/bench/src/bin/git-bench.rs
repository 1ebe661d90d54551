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
//!
//! ## Real histories
//!
//! `--real REPO` times a real history instead: it clones `REPO` (any local
//! clone; nothing is fetched) into `target/bench/real-NAME` once, leaves the
//! same dirty working tree in it each time (20 tracked files modified, 2
//! deleted, 3 staged, 5 untracked), and times status, logs (50 commits; of
//! `--file`, default `builtin/log.c`; and `follow` of it), the blame of
//! `--file`, the branch and tag listing, and the `--stat` diff of two far
//! apart revisions (`--far N` first-parent commits back, default 1000),
//! each against the goal issue 31 set, with the server's peak resident
//! memory at the end. `--commit-graph` writes a commit-graph file in the
//! clone first (`git commit-graph write --reachable`, as `git gc` does);
//! without it, the clone has none. To make a clone of the git project:
//! `git clone https://github.com/git/git /some/where/git`.

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
    /// Tools or cases to time (`--only git_status`, `--only "git_log max_count=50"`);
    /// every case when empty.
    only: Vec<String>,
    /// A repository whose real history is timed instead of a generated one.
    real: Option<PathBuf>,
    /// The file whose log, `follow` and blame a real history times.
    file: String,
    /// How many first-parent commits apart the far diff's revisions are.
    far: usize,
    /// Whether the real history's clone has a commit-graph file.
    commit_graph: bool,
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
        real: None,
        file: "builtin/log.c".to_string(),
        far: 1000,
        commit_graph: false,
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
            "--real" => args.real = Some(std::fs::canonicalize(value()?)?),
            "--file" => args.file = value()?,
            "--far" => args.far = value()?.parse::<usize>()?.max(1),
            "--commit-graph" => args.commit_graph = true,
            "--help" | "-h" => {
                println!(
                    "git-bench [--files N] [--commits N] [--dir PATH] [--runs N] \
                     [--toolcell PATH] [--plugin FILE.wasm] [--keep-going] [--only TOOL]... \
                     [--real REPO [--file PATH] [--far N] [--commit-graph]]"
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
    label: String,
    tool: &'static str,
    arguments: Value,
    git: Vec<String>,
    /// Checks the tool's answer against git's output; `None` when it agrees,
    /// or what is missing.
    check: fn(tool: &str, git: &str) -> Option<String>,
    /// The most the tool's median may be, as a multiple of git's.
    goal: f64,
}

fn main() -> Result<()> {
    let root = workspace_root()?;
    let args = parse_args(&root)?;
    let (repo, cases) = match &args.real {
        Some(source) => {
            let repo = clone_real(&root, source, args.commit_graph)?;
            let cases = real_cases(&repo, &args)?;
            (repo, cases)
        }
        None => {
            std::fs::create_dir_all(&args.dir)?;
            let repo = std::fs::canonicalize(&args.dir)?;
            generate(&repo, args.files, args.commits)?;
            (repo, generated_cases())
        }
    };
    let toolcell = match &args.toolcell {
        Some(path) => path.clone(),
        None => build_toolcell(&root)?,
    };
    let version = git(&repo, &["--version"])?;
    match &args.real {
        Some(source) => {
            let commits = git(&repo, &["rev-list", "--count", "HEAD"])?;
            let merges = git(&repo, &["rev-list", "--count", "--merges", "HEAD"])?;
            let pack = git(&repo, &["count-objects", "-vH"])?;
            let pack = pack
                .lines()
                .find_map(|line| line.strip_prefix("size-pack: "))
                .unwrap_or("?");
            println!(
                "\nrepository: {}, a clone of {} ({} commits, {} merges, {pack} packed, {}); \
                 20 tracked files modified, 2 deleted, 3 staged, 5 untracked",
                repo.display(),
                source.display(),
                commits.trim(),
                merges.trim(),
                if args.commit_graph {
                    "with a commit-graph"
                } else {
                    "no commit-graph"
                },
            );
        }
        None => println!(
            "\nrepository: {} ({} files, {} commits, packed; {CHANGED} files changed in the \
             working tree, {UNTRACKED} untracked)",
            repo.display(),
            args.files + 1,
            args.commits,
        ),
    }
    println!(
        "baseline: {}\n{} runs of each, interleaved; medians, warm page cache. cpu = user + \
         system time of git or of the toolcell server.",
        version.trim(),
        args.runs,
    );

    let config = repo
        .parent()
        .ok_or("the repository has no parent")?
        .join(format!(
            "{}.toml",
            repo.file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("git-bench")
        ));
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

    println!(
        "\n| operation | git | toolcell | toolcell / git (wall) | (cpu) | goal | same answer |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | --- | --- |");
    let mut all_met = true;
    let mut all_agree = true;
    for case in cases.iter().filter(|case| {
        args.only.is_empty()
            || args
                .only
                .iter()
                .any(|only| only == case.tool || only == &case.label)
    }) {
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
        let met = by_wall <= case.goal;
        println!(
            "| {} | {:.1} ms | {:.1} ms | {by_wall:.2}x | {by_cpu:.2}x | {}x: {} | {} |",
            case.label,
            toolcell_bench::ms(toolcell_bench::wall(&git_times)),
            toolcell_bench::ms(toolcell_bench::wall(&tool_times)),
            case.goal,
            if met { "met" } else { "NOT met" },
            match &difference {
                None => "yes".to_string(),
                Some(missing) => format!("NO: {missing}"),
            }
        );
        all_met &= met;
        all_agree &= difference.is_none();
    }
    let peak = peak_rss(server.pid());
    match peak {
        Some(bytes) => {
            let mib = bytes as f64 / (1024.0 * 1024.0);
            let met = args.real.is_none() || mib < REAL_PEAK_RSS_MIB;
            all_met &= met;
            println!(
                "\npeak resident memory of the server: {mib:.1} MiB{}",
                if args.real.is_some() {
                    format!(
                        " (goal: under {REAL_PEAK_RSS_MIB} MiB: {})",
                        if met { "met" } else { "NOT met" }
                    )
                } else {
                    String::new()
                }
            );
        }
        None => println!("\npeak resident memory of the server: unknown (no /proc)"),
    }
    println!(
        "every goal met: {}; every answer agrees with git: {}",
        if all_met { "yes" } else { "NO" },
        if all_agree { "yes" } else { "NO" }
    );
    if !all_agree && !args.keep_going {
        std::process::exit(1);
    }
    Ok(())
}

/// The most resident memory the server may reach on a real history, in MiB.
const REAL_PEAK_RSS_MIB: f64 = 150.0;

/// `git_status` against `git status`, within `goal` of it.
fn status_case(goal: f64) -> Case {
    Case {
        label: "git_status".into(),
        tool: "git_status",
        arguments: json!({}),
        git: strings(&["status", "--porcelain=v2", "--branch"]),
        check: names_every_path,
        goal,
    }
}

/// The generated repository's cases: each tool within 3x of git.
fn generated_cases() -> Vec<Case> {
    vec![
        status_case(3.0),
        Case {
            label: "git_log max_count=100".into(),
            tool: "git_log",
            arguments: json!({"max_count": 100}),
            git: strings(&["log", "-n", "100", "--format=%H %P%n%an <%ae> %at%n%s"]),
            check: names_every_commit,
            goal: 3.0,
        },
        Case {
            label: "git_diff, 100 changed files".into(),
            tool: "git_diff",
            arguments: json!({}),
            git: strings(&["diff"]),
            check: names_every_diffed_file,
            goal: 3.0,
        },
        Case {
            label: "git_blame, 2,000 lines".into(),
            tool: "git_blame",
            arguments: json!({"path": BIG_FILE}),
            git: strings(&["blame", "--porcelain", "HEAD", "--", BIG_FILE]),
            check: names_every_commit,
            goal: 3.0,
        },
    ]
}

/// A real history's cases, with issue 31's goals.
fn real_cases(repo: &Path, args: &Args) -> Result<Vec<Case>> {
    let file = args.file.as_str();
    if git(repo, &["cat-file", "-e", &format!("HEAD:{file}")]).is_err() {
        return Err(format!("HEAD has no file `{file}`: name one with --file PATH").into());
    }
    let far = format!("HEAD~{}", args.far);
    if git(repo, &["rev-parse", "--verify", "--quiet", &far]).is_err() {
        return Err(format!("{far} does not exist: give a smaller --far N").into());
    }
    let lines = git(repo, &["show", &format!("HEAD:{file}")])?
        .lines()
        .count();
    let format = "--format=%H %P%n%an <%ae> %at%n%s";
    Ok(vec![
        status_case(1.5),
        Case {
            label: "git_log max_count=50".into(),
            tool: "git_log",
            arguments: json!({"max_count": 50}),
            git: strings(&["log", "-n", "50", format]),
            check: names_every_commit,
            goal: 2.0,
        },
        Case {
            label: format!("git_log max_count=50 path={file}"),
            tool: "git_log",
            arguments: json!({"max_count": 50, "path": file}),
            git: strings(&["log", "-n", "50", format, "--", file]),
            check: names_every_commit,
            goal: 2.0,
        },
        Case {
            label: format!("git_log max_count=50 follow {file}"),
            tool: "git_log",
            arguments: json!({"max_count": 50, "path": file, "follow": true}),
            git: strings(&["log", "-n", "50", "--follow", format, "--", file]),
            check: names_every_commit,
            goal: 2.0,
        },
        Case {
            label: format!("git_blame {file} ({lines} lines)"),
            tool: "git_blame",
            arguments: json!({"path": file}),
            git: strings(&["blame", "--porcelain", "HEAD", "--", file]),
            check: names_every_commit,
            goal: 3.0,
        },
        Case {
            label: "git_branches".into(),
            tool: "git_branches",
            arguments: json!({}),
            git: strings(&[
                "for-each-ref",
                "--format=%(if)%(*objectname)%(then)%(*objectname)%(else)%(objectname)%(end) \
                 %(refname:short)",
                "refs/heads",
                "refs/tags",
            ]),
            check: names_every_commit,
            goal: 2.0,
        },
        Case {
            label: format!("git_diff {far} HEAD, stat"),
            tool: "git_diff",
            arguments: json!({"from": far, "to": "HEAD", "stat": true}),
            // A wide stat, so that git shortens no path.
            git: strings(&["diff", "--stat=10000", &far, "HEAD"]),
            check: names_every_stat_file,
            goal: 3.0,
        },
    ])
}

/// Clones `source` under `target/bench` (once), and leaves the benchmark's
/// dirty working tree in the clone: 20 tracked files modified, 2 deleted,
/// 3 modified and staged, 5 untracked, chosen evenly from `git ls-files`;
/// with a commit-graph file if `commit_graph`, else with none.
fn clone_real(root: &Path, source: &Path, commit_graph: bool) -> Result<PathBuf> {
    let name = source
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or("repo");
    let bench = root.join("target/bench");
    std::fs::create_dir_all(&bench)?;
    let dir = bench.join(format!("real-{name}"));
    let head = git(source, &["rev-parse", "HEAD"])?;
    let stamp = format!("source={} head={} v1\n", source.display(), head.trim());
    let marker = dir.join(".git").join("git-bench-params");
    if !std::fs::read_to_string(&marker).is_ok_and(|text| text == stamp) {
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        println!("cloning {} into {} ...", source.display(), dir.display());
        let status = git_command(&bench)
            .args(["clone", "--quiet"])
            .arg(source)
            .arg(&dir)
            .status()?;
        if !status.success() {
            return Err(format!("git clone {} failed", source.display()).into());
        }
        std::fs::write(&marker, stamp)?;
    }
    let info = dir.join(".git/objects/info");
    if commit_graph {
        if !info.join("commit-graph").is_file() {
            git(&dir, &["commit-graph", "write", "--reachable"])?;
        }
    } else {
        for graph in [info.join("commit-graph"), info.join("commit-graphs")] {
            if graph.is_dir() {
                std::fs::remove_dir_all(&graph)?;
            } else if graph.exists() {
                std::fs::remove_file(&graph)?;
            }
        }
    }
    // The same dirty tree on every run: back to HEAD, then the changes.
    git(&dir, &["reset", "-q", "--hard", "HEAD"])?;
    git(&dir, &["clean", "-q", "-f", "-d"])?;
    std::thread::sleep(std::time::Duration::from_millis(1100));
    git_command(&dir)
        .env_remove("GIT_OPTIONAL_LOCKS")
        .args(["update-index", "-q", "--really-refresh"])
        .status()?;
    let files: Vec<String> = git(&dir, &["ls-files", "-s"])?
        .lines()
        // Regular files only (mode 100644 or 100755), not links or submodules.
        .filter(|line| line.starts_with("1006") || line.starts_with("1007"))
        .filter_map(|line| line.split_once('\t').map(|(_, path)| path.to_string()))
        .collect();
    if files.len() < 30 {
        return Err("the repository has fewer than 30 tracked files".into());
    }
    let step = files.len() / 25;
    let mut picked = (0..25).map(|n| &files[n * step]);
    for path in picked.by_ref().take(20) {
        append(&dir.join(path))?;
    }
    for path in picked.by_ref().take(2) {
        std::fs::remove_file(dir.join(path))?;
    }
    for path in picked.take(3) {
        append(&dir.join(path))?;
        git(&dir, &["add", "--", path])?;
    }
    for n in 0..5 {
        std::fs::write(dir.join(format!("bench-notes-{n}.txt")), "untracked\n")?;
    }
    Ok(dir)
}

/// Adds a line at the end of the file at `path`.
fn append(path: &Path) -> Result<()> {
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(b"\nchanged by git-bench\n")?;
    Ok(())
}

/// The peak resident set size of process `pid` (`VmHWM`), in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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

/// Every file `git diff --stat` lists appears in the answer (a long path
/// that git shortens to `.../tail` by its tail; a rename by its new name).
fn names_every_stat_file(answer: &str, git: &str) -> Option<String> {
    let files = git
        .lines()
        .filter_map(|line| line.split_once(" | "))
        .map(|(path, _)| {
            let path = path.trim();
            let path = path.strip_prefix("...").unwrap_or(path);
            match path.split_once(" => ") {
                // `dir/{old => new}/file` or `old => new`
                Some((_, new)) => new.trim_end_matches('}').replace('}', "").to_string(),
                None => path.to_string(),
            }
        })
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
