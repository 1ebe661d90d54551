//! The benchmark's MCP client: newline-delimited JSON-RPC over a child's
//! stdin and stdout, by hand.
//!
//! [`Session::start`] spawns a server, runs the handshake and `tools/list`,
//! and reports how long that took from just before the spawn. Requests carry
//! increasing ids; one reader task hands each response to the request that
//! waits for it, so any number of tasks may call at once over the one
//! connection (pipelined, as MCP allows). The client is deliberately thin (no
//! rmcp, no schema work, responses decoded only as far as `id` and `isError`)
//! so that what it measures is the server. [`Session::peak_rss_kib`] reads
//! the server's `VmHWM`.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The protocol version the client asks for.
const PROTOCOL_VERSION: &str = "2025-11-25";

/// How long any one response may take before the benchmark gives up.
const TIMEOUT: Duration = Duration::from_secs(120);

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<String>>>>;

/// A running server and the client's end of its stdio.
pub struct Session {
    child: Child,
    pid: u32,
    stdin: tokio::sync::Mutex<ChildStdin>,
    pending: Pending,
    next_id: AtomicU64,
    reader: JoinHandle<()>,
    /// From just before the spawn to the `tools/list` response.
    pub started_in: Duration,
    /// How many tools `tools/list` returned.
    pub tools: usize,
}

/// How to start a server.
pub struct Launch<'a> {
    /// The executable.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [&'a str],
    /// Its working directory.
    pub cwd: &'a Path,
    /// Extra environment variables.
    pub env: &'a [(&'a str, &'a Path)],
    /// Where its stderr goes (its log), so a failure can be explained.
    pub stderr_to: &'a Path,
}

impl Session {
    /// Spawns the server, initialises the session and lists the tools.
    pub async fn start(launch: &Launch<'_>) -> Result<Session> {
        let log = std::fs::File::create(launch.stderr_to)
            .with_context(|| format!("cannot create {}", launch.stderr_to.display()))?;
        let mut command = Command::new(launch.program);
        command
            .args(launch.args)
            .current_dir(launch.cwd)
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .kill_on_drop(true);
        for (key, value) in launch.env {
            command.env(key, value);
        }
        let began = Instant::now();
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot run {}", launch.program.display()))?;
        let pid = child.id().context("the server exited at once")?;
        let stdin = child.stdin.take().context("stdin is piped")?;
        let stdout = child.stdout.take().context("stdout is piped")?;
        let pending: Pending = Arc::default();
        let reader = tokio::spawn(read_responses(BufReader::new(stdout), pending.clone()));
        let mut session = Session {
            child,
            pid,
            stdin: tokio::sync::Mutex::new(stdin),
            pending,
            next_id: AtomicU64::new(1),
            reader,
            started_in: Duration::ZERO,
            tools: 0,
        };
        let init = session.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "toolcell-perf", "version": env!("CARGO_PKG_VERSION") },
            }),
        );
        let init = session.explain(init.await, launch.stderr_to)?;
        if init.get("error").is_some() {
            bail!("initialize failed: {init}");
        }
        session
            .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
            .await?;
        let list = session.request("tools/list", json!({}));
        let list = session.explain(list.await, launch.stderr_to)?;
        session.started_in = began.elapsed();
        session.tools = list["result"]["tools"]
            .as_array()
            .with_context(|| format!("tools/list returned no tools: {list}"))?
            .len();
        Ok(session)
    }

    /// Adds the server's log to an error, which is usually where the reason is.
    fn explain<T>(&self, result: Result<T>, log: &Path) -> Result<T> {
        result.with_context(|| {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            format!("the server's log:\n{}", text.trim_end())
        })
    }

    /// Sends a request and returns its whole response.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value> {
        let line = self.request_line(method, params).await?;
        serde_json::from_str(&line).context("the response is not JSON")
    }

    /// Calls a tool; returns the response line, after checking that it is a
    /// result and not an error.
    pub async fn call(&self, tool: &str, arguments: &Value) -> Result<String> {
        let line = self
            .request_line(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await?;
        let reply: Reply = serde_json::from_str(&line).context("the response is not JSON")?;
        match reply {
            Reply {
                result: Some(result),
                ..
            } if !result.is_error => Ok(line),
            _ => bail!("`{tool}` failed: {line}"),
        }
    }

    async fn request_line(&self, method: &str, params: Value) -> Result<String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await?;
        match tokio::time::timeout(TIMEOUT, rx).await {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(_)) => bail!("the server closed stdout before answering `{method}`"),
            Err(_) => bail!("no answer to `{method}` within {TIMEOUT:?}"),
        }
    }

    async fn send(&self, message: &Value) -> Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        let mut stdin = self.stdin.lock().await;
        stdin
            .write_all(&line)
            .await
            .context("cannot write to the server")?;
        stdin.flush().await?;
        Ok(())
    }

    /// The server's peak resident set size (`VmHWM`) so far, in KiB.
    pub fn peak_rss_kib(&self) -> Result<u64> {
        let path = format!("/proc/{}/status", self.pid);
        let status =
            std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("no VmHWM in {path}"))
    }

    /// Closes stdin and waits for the server to exit, as a client would.
    pub async fn close(mut self) -> Result<()> {
        drop(self.stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
        self.reader.abort();
        match status {
            Ok(status) => {
                status?;
                Ok(())
            }
            Err(_) => {
                self.child.kill().await?;
                bail!("the server did not exit within 10 s of stdin closing")
            }
        }
    }
}

/// As much of a response as the timed calls decode.
#[derive(serde::Deserialize)]
struct Reply {
    result: Option<CallResult>,
}

#[derive(serde::Deserialize)]
struct CallResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
}

/// Just the id, to route a response line to its request.
#[derive(serde::Deserialize)]
struct Id {
    id: Option<u64>,
}

async fn read_responses<R: tokio::io::AsyncBufRead + Unpin>(mut stdout: R, pending: Pending) {
    loop {
        let mut line = String::new();
        match stdout.read_line(&mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Notifications and requests from the server carry no id we sent.
        let Ok(Id { id: Some(id) }) = serde_json::from_str::<Id>(&line) else {
            continue;
        };
        if let Some(tx) = lock(&pending).remove(&id) {
            let _ = tx.send(line);
        }
    }
    // Dropping the senders tells every waiting request that the server is gone.
    lock(&pending).clear();
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
