//! What the tool benchmarks (`grep-bench`, `git-bench`) share: timing samples
//! and their medians, CPU time of this process, of its children and of the
//! server, a release build of `toolcell`, and `toolcell serve` spoken to over
//! stdio.

use std::error::Error;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeVal;
use serde_json::{Value, json};

/// The benchmarks' result type.
pub type Result<T, E = Box<dyn Error>> = std::result::Result<T, E>;

/// One timed run: elapsed time, and the CPU time (user + system) the
/// working process spent, which a busy machine distorts much less.
#[derive(Clone, Copy)]
pub struct Sample {
    /// Elapsed time.
    pub wall: Duration,
    /// CPU time of the process that did the work.
    pub cpu: Duration,
}

/// `duration` in milliseconds.
pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// The median of `times` (the upper one of an even count).
pub fn median(times: impl Iterator<Item = Duration>) -> Duration {
    let mut sorted: Vec<Duration> = times.collect();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

/// The median elapsed time of `samples`.
pub fn wall(samples: &[Sample]) -> Duration {
    median(samples.iter().map(|sample| sample.wall))
}

/// The median CPU time of `samples`.
pub fn cpu(samples: &[Sample]) -> Duration {
    median(samples.iter().map(|sample| sample.cpu))
}

/// `samples` as one line: median and minimum wall time, median CPU time.
pub fn summary(samples: &[Sample]) -> String {
    let min = samples.iter().map(|s| s.wall).min().unwrap_or_default();
    format!(
        "wall {:7.1} ms (min {:7.1}), cpu {:7.1} ms",
        ms(wall(samples)),
        ms(min),
        ms(cpu(samples)),
    )
}

/// The ratio of `a`'s medians to `b`'s: (wall, cpu).
pub fn ratio(a: &[Sample], b: &[Sample]) -> (f64, f64) {
    (ms(wall(a)) / ms(wall(b)), ms(cpu(a)) / ms(cpu(b)))
}

/// The CPU time of this process's finished children.
pub fn children_cpu() -> Result<Duration> {
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN)?;
    Ok(timeval(usage.user_time()) + timeval(usage.system_time()))
}

/// The CPU time of this process.
pub fn own_cpu() -> Result<Duration> {
    let usage = getrusage(UsageWho::RUSAGE_SELF)?;
    Ok(timeval(usage.user_time()) + timeval(usage.system_time()))
}

fn timeval(time: TimeVal) -> Duration {
    let micros = time.tv_sec() * 1_000_000 + time.tv_usec();
    Duration::from_micros(u64::try_from(micros).unwrap_or(0))
}

/// The CPU time all threads of process `pid` have used so far (the first
/// field of each `/proc/PID/task/TID/schedstat`, in nanoseconds).
pub fn process_cpu(pid: u32) -> Duration {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Duration::ZERO;
    };
    let nanos: u64 = tasks
        .filter_map(|task| task.ok())
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

/// A small, fast, deterministic generator (xorshift64*) for generated trees.
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// The workspace root.
pub fn workspace_root() -> Result<PathBuf> {
    Ok(std::fs::canonicalize(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../.."
    ))?)
}

/// Builds `toolcell` in release mode and returns the binary's path.
pub fn build_toolcell(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    println!("\nbuilding toolcell (release) ...");
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["build", "--release", "-p", "toolcell", "--bin", "toolcell"])
        .status()?;
    if !status.success() {
        return Err("cargo build --release -p toolcell failed".into());
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    Ok(target.join("release").join("toolcell"))
}

/// `toolcell serve` spoken to in newline-delimited JSON-RPC.
pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Server {
    /// Starts `toolcell serve --config config` and initializes a session as
    /// `client`.
    pub fn start(toolcell: &Path, config: &Path, client: &str) -> Result<Server> {
        let mut child = Command::new(toolcell)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", toolcell.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut server = Server {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": client, "version": "0"}
            }),
        )?;
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(server)
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.stdin.write_all(&line)?;
        self.stdin.flush()?;
        Ok(())
    }

    /// Sends a request and returns its result; a JSON-RPC error is an error.
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err("the server closed its stdout".into());
            }
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == json!(id) {
                if let Some(error) = message.get("error") {
                    return Err(format!("{method} failed: {error}").into());
                }
                return Ok(message["result"].clone());
            }
        }
    }

    /// One `tools/call`, timed: its sample (the server's CPU time) and its
    /// result; a result with `isError` is an error.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<(Sample, Value)> {
        let pid = self.child.id();
        let cpu_before = process_cpu(pid);
        let start = Instant::now();
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        let wall = start.elapsed();
        let cpu = process_cpu(pid).saturating_sub(cpu_before);
        if result["isError"] == json!(true) {
            return Err(format!("{tool} failed: {}", result["content"]).into());
        }
        Ok((Sample { wall, cpu }, result))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Closing stdin ends the server; kill it if it lingers.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
