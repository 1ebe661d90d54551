//! The builtin `fs` plugin's tools, called through the server on a fixture tree.

use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{CallResult, Fixture, Server};

/// The fixture: `data/` mounted read-only, holding
/// `notes.txt` (20 lines), `blob.bin`, `.hidden`, `sub/inner.txt` and `link-in -> notes.txt`.
struct Tree {
    fixture: Fixture,
    notes: String,
}

impl Tree {
    fn new() -> Tree {
        Tree::with_plugin_extra("")
    }

    /// `extra` is appended to the `[[plugin]]` table.
    fn with_plugin_extra(extra: &str) -> Tree {
        let fixture = Fixture::new();
        fixture.write("data/notes.txt", numbered_lines(1..=20));
        fixture.write("data/blob.bin", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10");
        fixture.write("data/.hidden", "hidden\n");
        fixture.write("data/sub/inner.txt", "inner\n");
        fixture.symlink("notes.txt", "data/link-in");
        fixture.config(&format!(
            r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{{ host = "data", mode = "ro" }}]
{extra}
"#
        ));
        let notes = fixture.arg("data/notes.txt");
        Tree { fixture, notes }
    }

    async fn server(&self) -> Server {
        Server::start(&self.fixture.path("plugins.toml")).await
    }
}

/// `line N\n` for each N.
fn numbered_lines(range: std::ops::RangeInclusive<u32>) -> String {
    range.map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn read_file_whole_by_range_and_numbered() {
    let tree = Tree::new();
    let server = tree.server().await;

    let whole = server.call("read_file", json!({"path": tree.notes})).await;
    assert_eq!(whole.ok_text(), numbered_lines(1..=20));

    let range = server
        .call(
            "read_file",
            json!({"path": tree.notes, "offset": 5, "limit": 3}),
        )
        .await
        .ok_text();
    assert!(
        range.starts_with(&numbered_lines(5..=7)),
        "offset 5, limit 3: {range:?}"
    );
    assert!(!range.contains("line 4\n"), "offset 5, limit 3: {range:?}");
    assert!(!range.contains("line 8\n"), "offset 5, limit 3: {range:?}");
    assert!(
        range.contains("offset=8"),
        "the note should say how to continue: {range:?}"
    );

    let tail_part = server
        .call("read_file", json!({"path": tree.notes, "offset": 18}))
        .await
        .ok_text();
    assert_eq!(tail_part, numbered_lines(18..=20), "offset 18 to the end");

    let numbered = server
        .call(
            "read_file",
            json!({"path": tree.notes, "line_numbers": true, "limit": 12}),
        )
        .await
        .ok_text();
    let lines: Vec<&str> = numbered.lines().collect();
    assert_eq!(lines[0].trim_start(), "1\tline 1", "{numbered:?}");
    assert_eq!(lines[11].trim_start(), "12\tline 12", "{numbered:?}");
    assert!(!numbered.contains("line 13\n"), "{numbered:?}");

    let relative = server
        .call("read_file", json!({"path": "notes.txt"}))
        .await
        .ok_text();
    assert_eq!(
        relative,
        numbered_lines(1..=20),
        "a relative path resolves against the first mount"
    );

    let through_link = server
        .call("read_file", json!({"path": "link-in"}))
        .await
        .ok_text();
    assert_eq!(
        through_link,
        numbered_lines(1..=20),
        "a symlink inside the mount is followed"
    );
    server.stop().await;
}

#[tokio::test]
async fn read_file_refuses_binary_files_directories_and_missing_files() {
    let tree = Tree::new();
    let server = tree.server().await;

    let blob = tree.fixture.arg("data/blob.bin");
    let binary = server
        .call("read_file", json!({"path": blob}))
        .await
        .error_text();
    assert!(binary.contains("binary"), "{binary}");
    assert!(!binary.contains("IHDR"), "the bytes leaked: {binary}");

    let sub = tree.fixture.arg("data/sub");
    let directory = server
        .call("read_file", json!({"path": sub}))
        .await
        .error_text();
    assert!(directory.contains("directory"), "{directory}");

    let missing = tree.fixture.arg("data/absent.txt");
    let absent = server
        .call("read_file", json!({"path": missing}))
        .await
        .error_text();
    assert!(absent.contains("absent.txt"), "{absent}");
    server.stop().await;
}

#[tokio::test]
async fn read_file_refuses_a_file_over_the_configured_limit() {
    let tree = Tree::with_plugin_extra(r#"config = { max_file_bytes = "64" }"#);
    let server = tree.server().await;
    let big = server
        .call("read_file", json!({"path": tree.notes}))
        .await
        .error_text();
    assert!(big.contains("limit"), "{big}");
    assert!(!big.contains("line 1\n"), "{big}");

    // A file under the limit still reads.
    let inner = tree.fixture.arg("data/sub/inner.txt");
    let small = server.call("read_file", json!({"path": inner})).await;
    assert_eq!(small.ok_text(), "inner\n");
    server.stop().await;
}

#[tokio::test]
async fn tail_returns_the_last_lines() {
    let tree = Tree::new();
    let server = tree.server().await;

    let three = server
        .call("tail", json!({"path": tree.notes, "lines": 3}))
        .await
        .ok_text();
    assert_eq!(three, numbered_lines(18..=20));

    let default = server
        .call("tail", json!({"path": tree.notes}))
        .await
        .ok_text();
    assert_eq!(
        default,
        numbered_lines(11..=20),
        "tail defaults to 10 lines"
    );

    let more_than_there_are = server
        .call("tail", json!({"path": tree.notes, "lines": 500}))
        .await
        .ok_text();
    assert_eq!(more_than_there_are, numbered_lines(1..=20));

    let blob = tree.fixture.arg("data/blob.bin");
    let binary = server
        .call("tail", json!({"path": blob}))
        .await
        .error_text();
    assert!(binary.contains("binary"), "{binary}");
    server.stop().await;
}

#[tokio::test]
async fn file_info_returns_structured_content() {
    let tree = Tree::new();
    let server = tree.server().await;

    let file = server.call("file_info", json!({"path": tree.notes})).await;
    assert!(!file.is_error(), "{:?}", file);
    let info = file.structured();
    assert_eq!(info["path"], tree.notes, "{info}");
    assert_eq!(info["kind"], "file", "{info}");
    let size = numbered_lines(1..=20).len();
    assert_eq!(info["size"], json!(size), "{info}");
    let modified = info["modified"]
        .as_str()
        .unwrap_or_else(|| panic!("no modified time: {info}"));
    assert!(
        modified.len() >= 20 && modified.ends_with('Z'),
        "modified is not RFC 3339 UTC: {modified}"
    );
    assert!(info["permissions"]["readonly"].is_boolean(), "{info}");
    let text = file.text();
    assert!(text.contains("kind: file"), "{text}");
    assert!(text.contains(&size.to_string()), "{text}");

    let dir = tree.fixture.arg("data/sub");
    let directory = server.call("file_info", json!({"path": dir})).await;
    assert_eq!(directory.structured()["kind"], "directory", "{directory:?}");

    let link = tree.fixture.arg("data/link-in");
    let symlink = server.call("file_info", json!({"path": link})).await;
    assert_eq!(symlink.structured()["kind"], "symlink", "{symlink:?}");
    assert_eq!(
        symlink.structured()["symlink_target"],
        "notes.txt",
        "{symlink:?}"
    );

    let missing = tree.fixture.arg("data/absent.txt");
    let absent = server.call("file_info", json!({"path": missing})).await;
    assert!(absent.error_text().contains("absent.txt"), "{absent:?}");
    server.stop().await;
}

#[tokio::test]
async fn list_directory_plain_all_and_long() {
    let tree = Tree::new();
    let server = tree.server().await;
    let data = tree.fixture.arg("data");

    let plain = server
        .call("list_directory", json!({"path": data}))
        .await
        .ok_text();
    assert_eq!(plain, "blob.bin\nlink-in\nnotes.txt\nsub/\n");

    let all = server
        .call("list_directory", json!({"path": data, "all": true}))
        .await
        .ok_text();
    assert_eq!(all, ".hidden\nblob.bin\nlink-in\nnotes.txt\nsub/\n");

    let long = server
        .call("list_directory", json!({"path": data, "long": true}))
        .await
        .ok_text();
    let lines: Vec<&str> = long.lines().collect();
    assert_eq!(lines.len(), 4, "{long}");
    let size = numbered_lines(1..=20).len().to_string();
    let notes_line = lines
        .iter()
        .find(|line| line.ends_with(" notes.txt"))
        .unwrap_or_else(|| panic!("no notes.txt line: {long}"));
    assert!(notes_line.starts_with("file"), "{notes_line}");
    assert!(
        notes_line.split_whitespace().any(|word| word == size),
        "notes.txt's size {size} is missing: {notes_line}"
    );
    let sub_line = lines
        .iter()
        .find(|line| line.ends_with(" sub/"))
        .unwrap_or_else(|| panic!("no sub/ line: {long}"));
    assert!(sub_line.starts_with("directory"), "{sub_line}");
    assert!(!long.contains(".hidden"), "{long}");

    let relative = server
        .call("list_directory", json!({"path": "sub"}))
        .await
        .ok_text();
    assert_eq!(relative, "inner.txt\n");

    let not_a_directory = server
        .call("list_directory", json!({"path": tree.notes}))
        .await
        .error_text();
    assert!(
        not_a_directory.contains("not a directory"),
        "{not_a_directory}"
    );
    server.stop().await;
}

/// How long a call on a special file may take. Opening a named pipe blocks until a writer
/// comes, so a regression hangs: this bounds it well under the harness's own timeout.
const SPECIAL_FILE_BOUND: Duration = Duration::from_secs(10);

/// Calls `tool`, failing the test if the call does not end within [`SPECIAL_FILE_BOUND`].
pub(crate) async fn bounded_call(server: &Server, tool: &str, arguments: Value) -> CallResult {
    match tokio::time::timeout(SPECIAL_FILE_BOUND, server.call(tool, arguments.clone())).await {
        Ok(result) => result,
        Err(_) => panic!(
            "`{tool}` {arguments} did not finish within {SPECIAL_FILE_BOUND:?}: did it open a \
             special file?\nserver log:\n{}",
            server.log().text()
        ),
    }
}

/// Makes a named pipe at `path` with `mkfifo`.
pub(crate) fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(status.success(), "mkfifo {} failed", path.display());
}

/// A named pipe `pipe`, a Unix socket `socket` (alive while the returned listener is) and a
/// symlink `link-to-pipe`, in `dir` under the fixture.
pub(crate) fn special_files(fixture: &Fixture, dir: &str) -> UnixListener {
    fixture.mkdir(dir);
    mkfifo(&fixture.path(&format!("{dir}/pipe")));
    fixture.symlink("pipe", &format!("{dir}/link-to-pipe"));
    UnixListener::bind(fixture.path(&format!("{dir}/socket"))).expect("bind a Unix socket")
}

/// What the fs plugin says about a special file it will not open: the sandbox does not tell a
/// named pipe from a socket (wasmtime-wasi reports both as `unknown`), only devices.
fn refusal(path: &str, rule: &str) -> String {
    format!(
        "`{path}` is a special file (a named pipe, a socket or a device), not a regular file; \
         {rule}"
    )
}

// See: read_file on a named pipe blocked forever in open(2).
#[tokio::test]
async fn read_tools_refuse_special_files_without_blocking() {
    let fixture = Fixture::new();
    fixture.write("data/notes.txt", numbered_lines(1..=3));
    let _socket = special_files(&fixture, "data");
    // /dev holds character devices an unprivileged test cannot make in a fixture.
    let config = fixture.config(
        r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "ro" }, { host = "/dev", mode = "ro" }]
"#,
    );
    let server = Server::start(&config).await;

    for name in ["pipe", "socket", "link-to-pipe"] {
        let path = fixture.arg(&format!("data/{name}"));
        for (tool, rule) in [
            ("read_file", "read_file reads regular files only"),
            ("tail", "tail reads regular files only"),
        ] {
            let text = bounded_call(&server, tool, json!({"path": path}))
                .await
                .error_text();
            assert_eq!(text, refusal(&path, rule), "{tool} on {name}");
        }
    }
    for tool in ["read_file", "tail"] {
        let text = bounded_call(&server, tool, json!({"path": "/dev/null"}))
            .await
            .error_text();
        assert_eq!(
            text,
            format!(
                "`/dev/null` is a character device, not a regular file; {tool} reads regular \
                 files only"
            )
        );
    }

    // Looking at them opens nothing either.
    let pipe = fixture.arg("data/pipe");
    let info = bounded_call(&server, "file_info", json!({"path": pipe})).await;
    assert_eq!(info.structured()["kind"], "other", "{info:?}");
    let listing = bounded_call(&server, "list_directory", json!({"path": "."}))
        .await
        .ok_text();
    assert_eq!(listing, "link-to-pipe\nnotes.txt\npipe\nsocket\n");

    // And the server still serves.
    let notes = bounded_call(&server, "read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(notes.ok_text(), numbered_lines(1..=3));
    server.stop().await;
}
