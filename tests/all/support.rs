//! The harness: fixtures on disk and the real `toolcell` binary, driven three ways.
//!
//! - [`Fixture`] is a temporary directory (canonicalised, since mounts appear to the guest at
//!   their canonical path) holding a `plugins.toml`, the files the tools see and the ones they
//!   must not.
//! - [`Server`] runs `toolcell serve` behind rmcp's own client, for tests about what tools do.
//! - [`RawServer`] runs `toolcell serve` and speaks newline-delimited JSON-RPC by hand, for tests
//!   about the stream itself: malformed lines, stray output, protocol versions, shutdown.
//! - [`cli`] runs one of the other subcommands to completion.
//!
//! Both servers collect the child's stderr (its log) in a [`Log`]. Every wait is bounded by
//! [`TIMEOUT`], so a hung server fails its test instead of hanging the run.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorData};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

/// How long any one step may take before the test fails.
///
/// Generous, because a debug build compiles each component with Cranelift and the tests start
/// many servers in parallel.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The protocol version the raw tests ask for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The JSON-RPC error code for invalid params, which MCP uses for an unknown tool.
pub const INVALID_PARAMS: i32 = -32602;

/// The JSON-RPC error code for a line that is not JSON.
pub const PARSE_ERROR: i32 = -32700;

/// The `toolcell` binary under test: this build's, or the one `TOOLCELL_TEST_BIN` names (to
/// run the suite against another build, an older one say).
pub fn bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        std::env::var_os("TOOLCELL_TEST_BIN").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_toolcell")),
            PathBuf::from,
        )
    })
}

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::fs::canonicalize(root).expect("the workspace root exists")
}

/// The test plugins, built together the first time any is asked for.
const TEST_PLUGINS: &[&str] = &[
    "toolcell-test-probe",
    "toolcell-test-hostile",
    "toolcell-test-raw",
    "toolcell-test-conformance",
    "toolcell-test-plain",
    "toolcell-test-command",
];

/// The `probe` test plugin (`tests/plugins/probe`).
pub fn probe_wasm() -> PathBuf {
    test_plugin("toolcell-test-probe")
}

/// The `hostile` test plugin (`tests/plugins/hostile`).
pub fn hostile_wasm() -> PathBuf {
    test_plugin("toolcell-test-hostile")
}

/// The `conformance` test plugin (`tests/plugins/conformance`): the official suite's fixtures,
/// built against contract 0.2.0.
pub fn conformance_wasm() -> PathBuf {
    test_plugin("toolcell-test-conformance")
}

/// The `plain` test component (`tests/plugins/plain`): wit-bindgen alone, no contract.
pub fn plain_wasm() -> PathBuf {
    test_plugin("toolcell-test-plain")
}

/// The `command` test component (`tests/plugins/command`): a plain Rust CLI, a WASI command.
/// A binary keeps the `-` of its package's name.
pub fn command_wasm() -> PathBuf {
    let plain = plain_wasm();
    plain.with_file_name("toolcell-test-command.wasm")
}

/// The `raw` test plugin (`tests/plugins/raw`).
pub fn raw_wasm() -> PathBuf {
    test_plugin("toolcell-test-raw")
}

fn test_plugin(package: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(build_test_plugins);
    let wasm = dir.join(format!("{}.wasm", package.replace('-', "_")));
    assert!(
        wasm.is_file(),
        "cargo built {package} but `{}` is missing",
        wasm.display()
    );
    wasm
}

/// Builds the test plugins for wasm32-wasip2 in their own target directory, so that it neither
/// waits on nor invalidates the build that runs these tests; returns where the `.wasm` files are.
fn build_test_plugins() -> PathBuf {
    let root = workspace_root();
    let target_dir = root.join("target").join("test-plugins");
    let cargo = option_env!("CARGO").unwrap_or("cargo");
    let mut command = std::process::Command::new(cargo);
    command
        .current_dir(&root)
        .args(["build", "--release", "--target", "wasm32-wasip2"])
        .arg("--target-dir")
        .arg(&target_dir);
    for package in TEST_PLUGINS {
        command.args(["-p", package]);
    }
    // The outer build's settings are for the host target, not for the plugin.
    for var in [
        "CARGO_TARGET_DIR",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        command.env_remove(var);
    }
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{cargo}` to build the test plugins: {e}"));
    if !output.status.success() {
        panic!(
            "building the test plugins for wasm32-wasip2 failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    target_dir.join("wasm32-wasip2").join("release")
}

/// Waits for `future`, failing the test after [`TIMEOUT`].
pub async fn within<F: Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(TIMEOUT, future).await {
        Ok(output) => output,
        Err(_) => panic!("timed out after {TIMEOUT:?} waiting for {what}"),
    }
}

/// A temporary directory for one test, removed when dropped.
pub struct Fixture {
    // Held for its Drop, which removes the directory.
    _dir: TempDir,
    root: PathBuf,
}

impl Fixture {
    /// An empty directory.
    pub fn new() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("toolcell-test-")
            .tempdir()
            .expect("create a temporary directory");
        // The guest sees each mount at its canonical path; the temporary directory may sit
        // under a symlink (macOS /var, say), so compare and call with canonical paths only.
        let root = std::fs::canonicalize(dir.path()).expect("canonicalise the temporary dir");
        Fixture { _dir: dir, root }
    }

    /// The directory's canonical path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `relative` under the root.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// `relative` under the root, as a string for tool arguments.
    pub fn arg(&self, relative: &str) -> String {
        self.path(relative).display().to_string()
    }

    /// Writes `contents` to `relative`, creating its parent directories.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent directories");
        }
        std::fs::write(&path, contents).expect("write a fixture file");
        path
    }

    /// Creates the directory `relative` and its parents.
    pub fn mkdir(&self, relative: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(&path).expect("create a fixture directory");
        path
    }

    /// Creates a symlink at `relative` pointing to `target`, taken as it is.
    pub fn symlink(&self, target: impl AsRef<Path>, relative: &str) -> PathBuf {
        let path = self.path(relative);
        std::os::unix::fs::symlink(target, &path).expect("create a fixture symlink");
        path
    }

    /// Writes `toml` as `plugins.toml` in the root and returns its path.
    pub fn config(&self, toml: &str) -> PathBuf {
        self.write("plugins.toml", toml)
    }

    /// Copies the probe plugin into the root and returns its path relative to the root, as
    /// `plugins.toml` names it.
    pub fn probe(&self) -> &'static str {
        let relative = "plugins/probe.wasm";
        self.write(
            relative,
            std::fs::read(probe_wasm()).expect("read probe.wasm"),
        );
        relative
    }

    /// Copies the raw plugin into the root and returns its `[[plugin]]`
    /// entry, named `raw`, with `extra` lines added.
    pub fn raw(&self, extra: &str) -> String {
        self.write(
            "plugins/raw.wasm",
            std::fs::read(raw_wasm()).expect("read raw.wasm"),
        );
        format!("\n[[plugin]]\nname = \"raw\"\npath = \"plugins/raw.wasm\"\n{extra}\n")
    }

    /// Copies the conformance plugin into the root and returns its `[[plugin]]` entry, named
    /// `name`, with `extra` lines added.
    pub fn conformance(&self, name: &str, extra: &str) -> String {
        let relative = format!("plugins/{name}.wasm");
        self.write(
            &relative,
            std::fs::read(conformance_wasm()).expect("read conformance.wasm"),
        );
        format!("\n[[plugin]]\nname = \"{name}\"\npath = \"{relative}\"\n{extra}\n")
    }

    /// The raw plugin's entry with a list-tools that spins until its
    /// `timeout_ms` stops it: a plugin that is slow to load.
    pub fn slow_loading(&self, timeout_ms: u64) -> String {
        self.raw(&format!(
            "config = {{ spin_in_list = \"yes\" }}\nlimits = {{ timeout_ms = {timeout_ms} }}"
        ))
    }
}

/// A fixture whose `data` directory holds `hello.txt`, mounted read-only for the hostile test
/// plugin and the builtin fs plugin, with `limits` as the `[limits]` table; returns it and the
/// configuration's path.
pub fn hostile_fixture(limits: &str) -> (Fixture, PathBuf) {
    let fixture = Fixture::new();
    fixture.write("data/hello.txt", "hello\n");
    fixture.write(
        "plugins/hostile.wasm",
        std::fs::read(hostile_wasm()).expect("read hostile.wasm"),
    );
    let config = fixture.config(&format!(
        r#"
[limits]
{limits}

[[plugin]]
name = "hostile"
path = "plugins/hostile.wasm"
mounts = [{{ host = "data", mode = "ro" }}]

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{{ host = "data", mode = "ro" }}]
"#
    ));
    (fixture, config)
}

/// A child's stderr, collected as it arrives.
#[derive(Clone)]
pub struct Log {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl Log {
    /// Starts draining `stream` (so the child never blocks on a full pipe) into a `Log`.
    fn collect(stream: impl AsyncRead + Unpin + Send + 'static) -> (Log, JoinHandle<()>) {
        let log = Log {
            bytes: Arc::new(Mutex::new(Vec::new())),
        };
        let sink = log.clone();
        let task = tokio::spawn(async move {
            let mut stream = stream;
            let mut buffer = [0u8; 8192];
            loop {
                match stream.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => sink
                        .bytes
                        .lock()
                        .expect("log lock")
                        .extend_from_slice(&buffer[..n]),
                }
            }
        });
        (log, task)
    }

    /// Everything so far, without terminal colour codes.
    pub fn text(&self) -> String {
        let bytes = self.bytes.lock().expect("log lock");
        strip_ansi(&String::from_utf8_lossy(&bytes))
    }

    /// Waits until the log contains `needle`, failing the test with the log after [`TIMEOUT`].
    pub async fn wait_for(&self, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            let text = self.text();
            if text.contains(needle) {
                return text;
            }
            if tokio::time::Instant::now() >= deadline {
                panic!("the server's log never mentioned {needle:?}; it was:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Removes ANSI escape sequences (`ESC [ ... letter`), in case the log is coloured.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `toolcell serve --config CONFIG ARGS..`, with piped stdio and a clean environment.
fn serve_command(config: &Path, args: &[&str]) -> Command {
    let mut command = base_command();
    command.arg("serve").arg("--config").arg(config).args(args);
    command
}

/// The binary with an environment that does not depend on the developer's shell, started
/// outside the fixture so that relative paths must resolve against the config file, not the
/// working directory.
fn base_command() -> Command {
    let mut command = Command::new(bin());
    harness_environment(&mut command);
    command
}

/// Where the servers under test cache compiled components.
pub fn cache_dir() -> PathBuf {
    workspace_root().join("target").join("test-cache")
}

/// Fills the compile cache with every builtin and test plugin, once per test run, before the
/// first server starts: otherwise dozens of servers started at once would each compile the
/// same components on a cold cache, and a slow machine would time them out.
fn warm_cache() {
    static WARM: OnceLock<()> = OnceLock::new();
    WARM.get_or_init(|| {
        let dir = tempfile::tempdir().expect("create a temporary directory");
        // `execute` on, or the interpreters (the largest components) would not be loaded.
        let mut config = String::from("[server]\ncategories = [\"read\", \"execute\"]\n\n");
        for (name, path) in [
            ("fs", "builtin:fs".to_string()),
            ("search", "builtin:search".to_string()),
            ("research", "builtin:research".to_string()),
            ("git", "builtin:git".to_string()),
            ("python", "builtin:python".to_string()),
            ("js", "builtin:js".to_string()),
            ("probe", probe_wasm().display().to_string()),
            ("hostile", hostile_wasm().display().to_string()),
            ("raw", raw_wasm().display().to_string()),
        ] {
            config.push_str(&format!(
                "[[plugin]]\nname = {name:?}\npath = {path:?}\nmounts = [{{ host = \".\", mode = \"ro\" }}]\n\n"
            ));
        }
        let config_path = dir.path().join("plugins.toml");
        std::fs::write(&config_path, config).expect("write the warm-up configuration");
        // Success or not, it compiled what it could; the tests report real failures.
        let _ = std::process::Command::new(bin())
            .arg("check")
            .arg("--config")
            .arg(&config_path)
            .env("TOOLCELL_CACHE_DIR", cache_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    });
}

/// The environment, working directory and pipes every process under test gets.
fn harness_environment(command: &mut Command) {
    warm_cache();
    command
        .current_dir(std::env::temp_dir())
        .env_remove("RUST_LOG")
        .env("NO_COLOR", "1")
        // Compiled components are cached between runs; keep the tests' cache out of the
        // developer's own.
        .env("TOOLCELL_CACHE_DIR", cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
}

/// `toolcell serve` behind rmcp's client.
pub struct Server {
    client: RunningService<RoleClient, ()>,
    log: Log,
}

impl Server {
    /// Starts a server for `config` and completes the MCP handshake.
    pub async fn start(config: &Path) -> Server {
        Server::start_with_env(config, &[]).await
    }

    /// Like [`Server::start`], with extra variables in the server's own environment.
    pub async fn start_with_env(config: &Path, env: &[(&str, &str)]) -> Server {
        let mut command = serve_command(config, &[]);
        command.envs(env.iter().copied());
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn `toolcell serve`");
        let (log, _) = Log::collect(stderr.expect("stderr is piped"));
        match tokio::time::timeout(TIMEOUT, ().serve(transport)).await {
            Ok(Ok(client)) => Server { client, log },
            Ok(Err(e)) => {
                // Let the last of the log arrive before showing it.
                tokio::time::sleep(Duration::from_millis(300)).await;
                panic!("MCP handshake failed: {e}\nserver log:\n{}", log.text())
            }
            Err(_) => panic!(
                "timed out after {TIMEOUT:?} in the MCP handshake\nserver log:\n{}",
                log.text()
            ),
        }
    }

    /// The server's log so far.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Waits for `future`, failing the test with the server's log after [`TIMEOUT`].
    async fn within<F: Future>(&self, what: &str, future: F) -> F::Output {
        match tokio::time::timeout(TIMEOUT, future).await {
            Ok(output) => output,
            Err(_) => panic!(
                "timed out after {TIMEOUT:?} waiting for {what}\nserver log:\n{}",
                self.log.text()
            ),
        }
    }

    /// Every tool in `tools/list`, as its JSON.
    pub async fn tools(&self) -> Vec<Value> {
        let tools = self
            .within("tools/list", self.client.list_all_tools())
            .await
            .unwrap_or_else(|e| panic!("tools/list failed: {e}\nserver log:\n{}", self.log.text()));
        tools
            .iter()
            .map(|tool| serde_json::to_value(tool).expect("a tool serialises"))
            .collect()
    }

    /// The names in `tools/list`, sorted.
    pub async fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tools()
            .await
            .iter()
            .map(|tool| {
                tool["name"]
                    .as_str()
                    .expect("a tool has a name")
                    .to_string()
            })
            .collect();
        names.sort();
        names
    }

    /// Calls `tool`; `Err` is a JSON-RPC error (or a broken connection).
    pub async fn try_call(&self, tool: &str, arguments: Value) -> Result<CallResult, ServiceError> {
        let Value::Object(arguments) = arguments else {
            panic!("tool arguments must be a JSON object, not {arguments}");
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let result = self
            .within(
                &format!("a result from `{tool}`"),
                self.client.call_tool(params),
            )
            .await?;
        Ok(CallResult(
            serde_json::to_value(&result).expect("a result serialises"),
        ))
    }

    /// Calls `tool`, failing the test on a JSON-RPC error: the result may still have `isError`.
    pub async fn call(&self, tool: &str, arguments: Value) -> CallResult {
        match self.try_call(tool, arguments).await {
            Ok(result) => result,
            Err(e) => panic!(
                "calling `{tool}` got a JSON-RPC error instead of a result: {e}\nserver log:\n{}",
                self.log.text()
            ),
        }
    }

    /// Calls `tool`, expecting a JSON-RPC error, and returns it.
    pub async fn call_error(&self, tool: &str, arguments: Value) -> ErrorData {
        match self.try_call(tool, arguments).await {
            Ok(result) => panic!("calling `{tool}` should be a JSON-RPC error, got {result:?}"),
            Err(ServiceError::McpError(error)) => error,
            Err(e) => panic!("calling `{tool}` broke the connection: {e}"),
        }
    }

    /// Closes the session: stdin is closed and the child waited for (rmcp kills it if slow).
    pub async fn stop(self) {
        let log = self.log.clone();
        match tokio::time::timeout(TIMEOUT, self.client.cancel()).await {
            Ok(_) => {}
            Err(_) => panic!(
                "the server did not stop within {TIMEOUT:?}\nserver log:\n{}",
                log.text()
            ),
        }
    }
}

/// A `CallToolResult` as it travelled, in JSON.
#[derive(Clone, Debug)]
pub struct CallResult(pub Value);

impl CallResult {
    /// Whether the result has `isError: true`.
    pub fn is_error(&self) -> bool {
        self.0["isError"] == json!(true)
    }

    /// The text blocks, joined.
    pub fn text(&self) -> String {
        self.0["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|block| block["type"] == "text")
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// `structuredContent`, or `null`.
    pub fn structured(&self) -> &Value {
        &self.0["structuredContent"]
    }

    /// Asserts success and returns the text.
    #[track_caller]
    pub fn ok_text(&self) -> String {
        assert!(
            !self.is_error(),
            "expected success, got an error result: {}",
            self.0
        );
        self.text()
    }

    /// Asserts `isError: true` and returns the text.
    #[track_caller]
    pub fn error_text(&self) -> String {
        assert!(self.is_error(), "expected an error result, got: {}", self.0);
        self.text()
    }
}

/// `toolcell serve` spoken to line by line.
pub struct RawServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    /// Every line the server wrote to stdout, in order.
    pub stdout_lines: Vec<String>,
    /// Every message read while waiting for another one.
    pub received: Vec<Value>,
    log: Log,
    log_task: JoinHandle<()>,
}

/// How a [`RawServer`] ended.
pub struct Finished {
    /// The exit status.
    pub status: ExitStatus,
    /// Every line it wrote to stdout.
    pub stdout_lines: Vec<String>,
    /// Its whole stderr.
    pub log: String,
}

impl RawServer {
    /// Starts `toolcell serve --config CONFIG ARGS..`.
    pub fn spawn(config: &Path, args: &[&str]) -> RawServer {
        RawServer::start(serve_command(config, args))
    }

    /// Runs `program` with the harness's environment, then as `configure` sets it up: a shell
    /// that sets limits first, say, or `toolcell serve` in another directory.
    pub fn spawn_with(program: &Path, configure: impl FnOnce(&mut Command)) -> RawServer {
        let mut command = Command::new(program);
        harness_environment(&mut command);
        configure(&mut command);
        RawServer::start(command)
    }

    fn start(mut command: Command) -> RawServer {
        let mut child = command.spawn().expect("spawn `toolcell serve`");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        let (log, log_task) = Log::collect(child.stderr.take().expect("stderr is piped"));
        RawServer {
            child,
            stdin,
            stdout,
            stdout_lines: Vec::new(),
            received: Vec::new(),
            log,
            log_task,
        }
    }

    /// Writes `line` and a newline.
    pub async fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        let write = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        within("writing to the server's stdin", write)
            .await
            .expect("write to the server's stdin");
    }

    /// The server's log so far.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// Kills the server and waits for it.
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }

    /// The server's process id, while it runs (for the tests that read `/proc`).
    #[cfg(target_os = "linux")]
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Writes `bytes` as they are, in one go.
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        within("writing to the server's stdin", write)
            .await
            .expect("write to the server's stdin");
    }

    /// Writes `message` as one line.
    pub async fn send(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Reads the next message; `None` at end of stream. Fails the test on a line that is not
    /// a JSON object: anything else on stdout corrupts the protocol.
    pub async fn recv(&mut self) -> Option<Value> {
        let line = match tokio::time::timeout(TIMEOUT, self.stdout.next_line()).await {
            Ok(line) => line.expect("read the server's stdout"),
            Err(_) => panic!(
                "timed out after {TIMEOUT:?} waiting for a line on stdout\nserver log:\n{}",
                self.log.text()
            ),
        }?;
        self.stdout_lines.push(line.clone());
        match serde_json::from_str::<Value>(&line) {
            Ok(message) if message.is_object() => Some(message),
            _ => panic!("the server wrote a line that is not a JSON-RPC message: {line:?}"),
        }
    }

    /// The response with `id`: one already read (and kept in `received`), or the next to come,
    /// keeping the others in `received`.
    pub async fn response(&mut self, id: i64) -> Value {
        let read = self.received.iter().position(|message| {
            message.get("id") == Some(&json!(id)) && message.get("method").is_none()
        });
        if let Some(index) = read {
            return self.received.remove(index);
        }
        loop {
            let Some(message) = self.recv().await else {
                panic!(
                    "stdout ended before the response to request {id}\nserver log:\n{}",
                    self.log.text()
                );
            };
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            self.received.push(message);
        }
    }

    /// Sends a request and returns its response.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(id).await
    }

    /// Runs the handshake as request 0 with [`PROTOCOL_VERSION`] and returns its result.
    pub async fn initialize(&mut self) -> Value {
        let response = self
            .request(
                0,
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "toolcell-tests", "version": "0"},
                }),
            )
            .await;
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("initialize failed: {response}"))
            .clone();
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        result
    }

    /// Calls `tool` as request `id` and returns the response (result or error).
    pub async fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
        .await
    }

    /// Closes stdin, reads stdout to its end and waits for the process to exit.
    pub async fn finish(mut self) -> Finished {
        drop(self.stdin.take());
        while self.recv().await.is_some() {}
        let status = match tokio::time::timeout(TIMEOUT, self.child.wait()).await {
            Ok(status) => status.expect("wait for the server"),
            Err(_) => panic!(
                "the server did not exit within {TIMEOUT:?} of stdin closing\nserver log:\n{}",
                self.log.text()
            ),
        };
        within("the end of the server's stderr", self.log_task)
            .await
            .expect("the log task ends");
        Finished {
            status,
            stdout_lines: self.stdout_lines,
            log: self.log.text(),
        }
    }
}

/// What a finished CLI run printed.
#[derive(Debug)]
pub struct CliOutput {
    /// The exit status.
    pub status: ExitStatus,
    /// Standard output.
    pub stdout: String,
    /// Standard error, without colour codes.
    pub stderr: String,
}

impl CliOutput {
    /// The exit code; fails the test if a signal ended the process.
    #[track_caller]
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("killed by a signal: {self:?}"))
    }
}

/// Runs `toolcell ARGS..` with stdin closed and waits for it.
pub async fn cli(args: &[&str]) -> CliOutput {
    cli_with(args, |_| {}).await
}

/// Like [`cli`], with the command set up further by `configure` (a working directory, a
/// variable).
pub async fn cli_with(args: &[&str], configure: impl FnOnce(&mut Command)) -> CliOutput {
    cli_within(TIMEOUT, args, configure).await
}

/// Like [`cli_with`], failing the test after `limit` instead of [`TIMEOUT`] (for builds).
pub async fn cli_within(
    limit: Duration,
    args: &[&str],
    configure: impl FnOnce(&mut Command),
) -> CliOutput {
    let mut command = base_command();
    command.args(args).stdin(Stdio::null());
    configure(&mut command);
    let what = format!("`toolcell {}`", args.join(" "));
    let output = tokio::time::timeout(limit, command.output())
        .await
        .unwrap_or_else(|_| panic!("timed out after {limit:?} waiting for {what}"))
        .expect("run toolcell");
    CliOutput {
        status: output.status,
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: strip_ansi(&String::from_utf8_lossy(&output.stderr)),
    }
}

/// The peak resident memory of process `pid`, in bytes (Linux's `VmHWM`).
#[cfg(target_os = "linux")]
pub fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|kb| kb.parse().ok())
        .expect("VmHWM in kB");
    kb * 1024
}

/// Copies `from` (files and folders) into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
