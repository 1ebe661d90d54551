//! The `fs` plugin's write tools (`write_file`, `edit_file`, `append_file`, `mkdir`, `rename`,
//! `copy_file`): what each does, what each refuses with nothing changed on disk, how per-tool
//! mounts and limits narrow them, and that they are served only with the `write` category.
//!
//! Every refusal is checked on disk with [`Snapshot`]: the whole tree (files, directories and
//! symlinks, links not followed) before and after must be equal.

use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::fs::{bounded_call, special_files};
use crate::support::{Fixture, INVALID_PARAMS, Server, cli};

/// The six write tools, in the order the plugin lists them.
const WRITE_TOOLS: [&str; 6] = [
    "write_file",
    "edit_file",
    "append_file",
    "mkdir",
    "rename",
    "copy_file",
];

/// The read tools of the same plugin.
const READ_TOOLS: [&str; 4] = ["read_file", "tail", "file_info", "list_directory"];

/// Marks every secret file's contents; no tool result may ever contain it.
const SECRET: &str = "TOOLCELL-SECRET";

/// A config enabling `read` and `write`, with the fs plugin granted `mounts` (TOML), and
/// `extra` appended after the `[[plugin]]` table (for `[[plugin.tool]]` entries).
fn fs_config(fixture: &Fixture, mounts: &str, extra: &str) -> PathBuf {
    fixture.config(&format!(
        r#"
[server]
categories = ["read", "write"]

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = {mounts}
{extra}
"#
    ))
}

/// A fixture with `data/` mounted read-write, and a server for it.
async fn rw_data(fixture: &Fixture) -> Server {
    fixture.mkdir("data");
    let config = fs_config(fixture, r#"[{ host = "data", mode = "rw" }]"#, "");
    Server::start(&config).await
}

/// One entry of a [`Snapshot`].
#[derive(PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
    /// A named pipe, socket or device: never opened (a pipe would block).
    Special,
}

impl Entry {
    /// A short description for a failure message.
    fn describe(&self) -> String {
        match self {
            Entry::File(bytes) => {
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]);
                format!("a file of {} bytes starting {text:?}", bytes.len())
            }
            Entry::Dir => "a directory".to_string(),
            Entry::Link(target) => format!("a symlink to {}", target.display()),
            Entry::Special => "a special file".to_string(),
        }
    }
}

/// Everything under a directory, by relative path, symlinks not followed.
#[derive(PartialEq, Eq)]
struct Snapshot(BTreeMap<PathBuf, Entry>);

impl Snapshot {
    fn of(root: &Path) -> Snapshot {
        let mut entries = BTreeMap::new();
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).expect("list a fixture directory") {
                let path = entry.expect("a directory entry").path();
                let relative = path.strip_prefix(root).expect("under root").to_path_buf();
                let kind = std::fs::symlink_metadata(&path).expect("stat").file_type();
                let entry = if kind.is_symlink() {
                    Entry::Link(std::fs::read_link(&path).expect("read a link"))
                } else if kind.is_dir() {
                    pending.push(path.clone());
                    Entry::Dir
                } else if !kind.is_file() {
                    Entry::Special
                } else {
                    Entry::File(std::fs::read(&path).expect("read a fixture file"))
                };
                entries.insert(relative, entry);
            }
        }
        Snapshot(entries)
    }

    /// Asserts that `root` still looks like this snapshot, naming what changed.
    #[track_caller]
    fn assert_unchanged(&self, root: &Path, after: &str) {
        let now = Snapshot::of(root);
        if &now == self {
            return;
        }
        let mut changes = Vec::new();
        for (path, entry) in &self.0 {
            match now.0.get(path) {
                None => changes.push(format!("removed {}", path.display())),
                Some(current) if current != entry => changes.push(format!(
                    "changed {}: was {}, now {}",
                    path.display(),
                    entry.describe(),
                    current.describe()
                )),
                Some(_) => {}
            }
        }
        for (path, entry) in now.0.iter().filter(|(path, _)| !self.0.contains_key(*path)) {
            changes.push(format!("created {}: {}", path.display(), entry.describe()));
        }
        panic!(
            "{after} changed the disk under {}:\n{}",
            root.display(),
            changes.join("\n")
        );
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("list a directory")
        .map(|entry| {
            entry
                .expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

#[tokio::test]
async fn write_file_creates_then_replaces_with_overwrite() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    let path = fixture.arg("data/new.txt");

    let created = server
        .call("write_file", json!({"path": path, "content": "first\n"}))
        .await;
    assert_eq!(
        created.ok_text(),
        format!("wrote 6 bytes to `{path}` (new file)")
    );
    assert_eq!(
        created.structured(),
        &json!({"path": path, "bytes_written": 6, "created": true})
    );
    assert_eq!(read(&fixture.path("data/new.txt")), b"first\n");

    // Relative paths resolve against the first mount.
    let replaced = server
        .call(
            "write_file",
            json!({"path": "new.txt", "content": "second, longer\n", "overwrite": true}),
        )
        .await;
    assert_eq!(
        replaced.ok_text(),
        format!("wrote 15 bytes to `{path}` (replaced the existing file)")
    );
    assert_eq!(replaced.structured()["created"], json!(false));
    assert_eq!(read(&fixture.path("data/new.txt")), b"second, longer\n");

    // Multibyte text is written as UTF-8, byte for byte; no temporary file is left behind.
    server
        .call(
            "write_file",
            json!({"path": "größe.txt", "content": "naïve → ok\n"}),
        )
        .await
        .ok_text();
    assert_eq!(
        read(&fixture.path("data/größe.txt")),
        "naïve → ok\n".as_bytes()
    );

    // A symlink inside the mount is followed: its target is replaced and the link stays.
    fixture.symlink("new.txt", "data/link-in");
    server
        .call(
            "write_file",
            json!({"path": "link-in", "content": "through the link\n", "overwrite": true}),
        )
        .await
        .ok_text();
    assert_eq!(read(&fixture.path("data/new.txt")), b"through the link\n");
    assert_eq!(
        std::fs::read_link(fixture.path("data/link-in")).expect("still a symlink"),
        Path::new("new.txt")
    );
    assert_eq!(
        names(&fixture.path("data")),
        ["größe.txt", "link-in", "new.txt"]
    );
    server.stop().await;
}

#[tokio::test]
async fn edit_file_replaces_once_or_all_and_dry_run_writes_nothing() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    let file = fixture.write("data/notes.txt", "alpha\nbeta\ngamma\n");
    let path = fixture.arg("data/notes.txt");

    let edited = server
        .call(
            "edit_file",
            json!({"path": path, "old_string": "beta", "new_string": "BETA"}),
        )
        .await;
    let diff = format!("--- {path}\n+++ {path}\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n");
    assert_eq!(
        edited.ok_text(),
        format!("replaced 1 occurrence in `{path}`\n\n{diff}")
    );
    assert_eq!(
        edited.structured(),
        &json!({"path": path, "replacements": 1, "dry_run": false, "diff": diff})
    );
    assert_eq!(read(&file), b"alpha\nBETA\ngamma\n");

    // A dry run shows the diff and leaves the file as it was.
    let before = Snapshot::of(&fixture.path("data"));
    let dry = server
        .call(
            "edit_file",
            json!({"path": "notes.txt", "old_string": "gamma\n", "new_string": "gamma\ndelta\n",
                   "dry_run": true}),
        )
        .await;
    let text = dry.ok_text();
    assert!(
        text.starts_with(&format!(
            "dry run: would replace 1 occurrence in `{path}`; nothing was written\n\n"
        )),
        "{text}"
    );
    assert!(text.contains("\n gamma\n+delta\n"), "{text}");
    assert_eq!(dry.structured()["dry_run"], json!(true));
    before.assert_unchanged(&fixture.path("data"), "a dry run");

    // replace_all replaces every occurrence and says how many.
    let many = fixture.write("data/many.txt", "x = 1;\ny = x + x;\n");
    let all = server
        .call(
            "edit_file",
            json!({"path": "many.txt", "old_string": "x", "new_string": "value",
                   "replace_all": true}),
        )
        .await;
    let text = all.ok_text();
    assert!(text.starts_with("replaced 3 occurrences in `"), "{text}");
    assert!(
        text.contains("-x = 1;\n-y = x + x;\n+value = 1;\n+y = value + value;\n"),
        "{text}"
    );
    assert_eq!(all.structured()["replacements"], json!(3));
    assert_eq!(read(&many), b"value = 1;\ny = value + value;\n");

    // Deleting text: an empty new_string.
    server
        .call(
            "edit_file",
            json!({"path": "notes.txt", "old_string": "BETA\n", "new_string": ""}),
        )
        .await
        .ok_text();
    assert_eq!(read(&file), b"alpha\ngamma\n");
    assert_eq!(names(&fixture.path("data")), ["many.txt", "notes.txt"]);
    server.stop().await;
}

#[tokio::test]
async fn append_file_adds_whole_lines_or_exact_text() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    let file = fixture.write("data/log.txt", "one");
    let path = fixture.arg("data/log.txt");

    // The file lacks a final newline, so one goes before the text and one after it.
    let result = server
        .call("append_file", json!({"path": path, "content": "two"}))
        .await;
    assert_eq!(
        result.ok_text(),
        format!("appended 5 bytes to `{path}` (now 8 bytes)")
    );
    assert_eq!(read(&file), b"one\ntwo\n");

    // Text already ending in a newline gets none added.
    server
        .call(
            "append_file",
            json!({"path": "log.txt", "content": "three\n"}),
        )
        .await
        .ok_text();
    assert_eq!(read(&file), b"one\ntwo\nthree\n");

    // newline=false appends exactly what was given.
    server
        .call(
            "append_file",
            json!({"path": "log.txt", "content": "no", "newline": false}),
        )
        .await
        .ok_text();
    server
        .call(
            "append_file",
            json!({"path": "log.txt", "content": "-end", "newline": false}),
        )
        .await
        .ok_text();
    assert_eq!(read(&file), b"one\ntwo\nthree\nno-end");

    // A missing file is created.
    let result = server
        .call(
            "append_file",
            json!({"path": "fresh.txt", "content": "first"}),
        )
        .await;
    assert!(
        result.ok_text().starts_with("appended 6 bytes to `"),
        "{result:?}"
    );
    assert_eq!(read(&fixture.path("data/fresh.txt")), b"first\n");

    // A directory is refused.
    fixture.mkdir("data/dir");
    let result = server
        .call("append_file", json!({"path": "dir", "content": "x"}))
        .await;
    assert!(result.error_text().contains("is a directory"), "{result:?}");
    server.stop().await;
}

#[tokio::test]
async fn mkdir_creates_nested_directories_and_is_idempotent() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    let path = fixture.arg("data/a/b/c");

    let created = server.call("mkdir", json!({"path": path})).await;
    assert_eq!(created.ok_text(), format!("created `{path}`"));
    assert!(fixture.path("data/a/b/c").is_dir());

    let again = server.call("mkdir", json!({"path": "a/b/c"})).await;
    assert_eq!(
        again.ok_text(),
        format!("`{path}` already exists; nothing to do")
    );
    assert!(fixture.path("data/a/b/c").is_dir());

    // parents=false needs the parent; with it, one level is made.
    let orphan = server
        .call("mkdir", json!({"path": "x/y", "parents": false}))
        .await;
    assert!(
        orphan.error_text().contains("pass parents=true"),
        "{orphan:?}"
    );
    assert!(!fixture.path("data/x").exists());
    server
        .call("mkdir", json!({"path": "a/d", "parents": false}))
        .await
        .ok_text();
    assert!(fixture.path("data/a/d").is_dir());

    // An existing file is not a directory, and stays a file.
    let file = fixture.write("data/file", "content");
    let result = server.call("mkdir", json!({"path": "file"})).await;
    assert!(
        result
            .error_text()
            .contains("already exists and is not a directory"),
        "{result:?}"
    );
    assert_eq!(read(&file), b"content");
    server.stop().await;
}

#[tokio::test]
async fn rename_moves_files_and_directories() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    fixture.write("data/a.txt", "contents of a\n");
    fixture.mkdir("data/sub");
    let source = fixture.arg("data/a.txt");
    let destination = fixture.arg("data/sub/b.txt");

    let moved = server
        .call(
            "rename",
            json!({"source": source, "destination": destination}),
        )
        .await;
    assert_eq!(
        moved.ok_text(),
        format!("moved `{source}` to `{destination}`")
    );
    assert!(!fixture.path("data/a.txt").exists());
    assert_eq!(read(&fixture.path("data/sub/b.txt")), b"contents of a\n");

    // overwrite=true replaces an existing file.
    fixture.write("data/old.txt", "old\n");
    server
        .call(
            "rename",
            json!({"source": "sub/b.txt", "destination": "old.txt", "overwrite": true}),
        )
        .await
        .ok_text();
    assert_eq!(read(&fixture.path("data/old.txt")), b"contents of a\n");
    assert!(!fixture.path("data/sub/b.txt").exists());

    // A directory moves with its contents.
    fixture.write("data/sub/inner.txt", "inner\n");
    server
        .call("rename", json!({"source": "sub", "destination": "moved"}))
        .await
        .ok_text();
    assert_eq!(read(&fixture.path("data/moved/inner.txt")), b"inner\n");
    assert_eq!(names(&fixture.path("data")), ["moved", "old.txt"]);
    server.stop().await;
}

#[tokio::test]
async fn copy_file_copies_the_bytes() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    // Every byte value, so that nothing is decoded as text on the way.
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3 * 1024 * 1024 + 7).collect();
    let source = fixture.write("data/blob.bin", &bytes);
    let from = fixture.arg("data/blob.bin");
    let to = fixture.arg("data/copy.bin");

    let copied = server
        .call("copy_file", json!({"source": from, "destination": to}))
        .await;
    assert_eq!(
        copied.ok_text(),
        format!("copied {} bytes from `{from}` to `{to}`", bytes.len())
    );
    assert_eq!(read(&fixture.path("data/copy.bin")), bytes);
    assert_eq!(read(&source), bytes, "the source changed");

    // overwrite=true replaces an existing file.
    fixture.write("data/small.txt", "small\n");
    server
        .call(
            "copy_file",
            json!({"source": "small.txt", "destination": "copy.bin", "overwrite": true}),
        )
        .await
        .ok_text();
    assert_eq!(read(&fixture.path("data/copy.bin")), b"small\n");
    assert_eq!(
        names(&fixture.path("data")),
        ["blob.bin", "copy.bin", "small.txt"]
    );
    server.stop().await;
}

#[tokio::test]
async fn refusals_change_nothing_on_disk() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    fixture.write("data/existing.txt", "original\n");
    fixture.write("data/repeated.txt", "x\nx\nx\n");
    fixture.write("data/other.txt", "other\n");
    let data = fixture.path("data");
    let before = Snapshot::of(&data);
    let existing = fixture.arg("data/existing.txt");

    let result = server
        .call(
            "write_file",
            json!({"path": existing, "content": "CHANGED"}),
        )
        .await;
    assert_eq!(
        result.error_text(),
        format!(
            "`{existing}` already exists; pass overwrite=true to replace it whole, or use \
             edit_file to change part of it"
        )
    );
    before.assert_unchanged(&data, "write_file without overwrite");

    let result = server
        .call(
            "edit_file",
            json!({"path": "existing.txt", "old_string": "missing", "new_string": "CHANGED"}),
        )
        .await;
    assert!(
        result
            .error_text()
            .starts_with(&format!("old_string was not found in `{existing}`")),
        "{result:?}"
    );
    before.assert_unchanged(&data, "edit_file with a missing old_string");

    let repeated = fixture.arg("data/repeated.txt");
    let result = server
        .call(
            "edit_file",
            json!({"path": "repeated.txt", "old_string": "x", "new_string": "y"}),
        )
        .await;
    assert_eq!(
        result.error_text(),
        format!(
            "old_string appears 3 times in `{repeated}`; include more surrounding lines to make \
             it unique, or pass replace_all=true to replace every occurrence"
        )
    );
    before.assert_unchanged(&data, "edit_file with an ambiguous old_string");

    for (old, new) in [("", "x"), ("x", "x")] {
        let result = server
            .call(
                "edit_file",
                json!({"path": "repeated.txt", "old_string": old, "new_string": new,
                       "replace_all": true}),
            )
            .await;
        result.error_text();
        before.assert_unchanged(&data, &format!("edit_file {old:?} -> {new:?}"));
    }

    let other = fixture.arg("data/other.txt");
    for tool in ["rename", "copy_file"] {
        let result = server
            .call(
                tool,
                json!({"source": "other.txt", "destination": "existing.txt"}),
            )
            .await;
        assert_eq!(
            result.error_text(),
            format!("`{existing}` already exists; pass overwrite=true to replace it"),
            "{tool}"
        );
        before.assert_unchanged(&data, &format!("{tool} onto an existing file"));
    }

    // A directory is never the destination, even with overwrite.
    fixture.mkdir("data/dir");
    let before = Snapshot::of(&data);
    for tool in ["rename", "copy_file"] {
        let result = server
            .call(
                tool,
                json!({"source": other, "destination": "dir", "overwrite": true}),
            )
            .await;
        assert!(
            result.error_text().contains("is an existing directory"),
            "{tool}: {result:?}"
        );
        before.assert_unchanged(&data, &format!("{tool} onto a directory"));
    }
    let result = server
        .call(
            "write_file",
            json!({"path": "dir", "content": "x", "overwrite": true}),
        )
        .await;
    assert!(result.error_text().contains("is a directory"), "{result:?}");
    before.assert_unchanged(&data, "write_file onto a directory");
    server.stop().await;
}

#[tokio::test]
async fn writes_to_a_read_only_mount_are_refused() {
    let fixture = Fixture::new();
    fixture.write("data/hello.txt", "hello\n");
    fixture.write("ro/existing.txt", "original\n");
    fixture.mkdir("ro/sub");
    let config = fs_config(
        &fixture,
        r#"[{ host = "data", mode = "rw" }, { host = "ro", mode = "ro" }]"#,
        "",
    );
    let server = Server::start(&config).await;
    let ro = fixture.arg("ro");
    let data = fixture.arg("data");
    let before = Snapshot::of(fixture.root());

    let attempts = [
        (
            "write_file",
            json!({"path": format!("{ro}/new.txt"), "content": "CHANGED"}),
        ),
        (
            "write_file",
            json!({"path": format!("{ro}/existing.txt"), "content": "CHANGED", "overwrite": true}),
        ),
        (
            "edit_file",
            json!({"path": format!("{ro}/existing.txt"), "old_string": "original",
                   "new_string": "CHANGED"}),
        ),
        (
            "append_file",
            json!({"path": format!("{ro}/existing.txt"), "content": "CHANGED"}),
        ),
        (
            "append_file",
            json!({"path": format!("{ro}/new.txt"), "content": "CHANGED"}),
        ),
        ("mkdir", json!({"path": format!("{ro}/newdir")})),
        ("mkdir", json!({"path": format!("{ro}/sub/deeper/still")})),
        (
            "rename",
            json!({"source": format!("{ro}/existing.txt"), "destination": format!("{ro}/moved.txt")}),
        ),
        // Out of the read-only mount would remove the source from it.
        (
            "rename",
            json!({"source": format!("{ro}/existing.txt"), "destination": format!("{data}/moved.txt")}),
        ),
        (
            "rename",
            json!({"source": format!("{data}/hello.txt"), "destination": format!("{ro}/hello.txt")}),
        ),
        (
            "rename",
            json!({"source": format!("{ro}/sub"), "destination": format!("{data}/sub")}),
        ),
        (
            "copy_file",
            json!({"source": format!("{data}/hello.txt"), "destination": format!("{ro}/copy.txt")}),
        ),
        (
            "copy_file",
            json!({"source": format!("{data}/hello.txt"),
                   "destination": format!("{ro}/existing.txt"), "overwrite": true}),
        ),
    ];
    for (tool, arguments) in attempts {
        let what = format!("{tool} {arguments}");
        let result = server.call(tool, arguments).await;
        assert!(result.is_error(), "{what} should be refused: {result:?}");
        before.assert_unchanged(fixture.root(), &what);
    }

    // Control: reading from the read-only mount is fine, so the refusals are about writing.
    let copied = server
        .call(
            "copy_file",
            json!({"source": format!("{ro}/existing.txt"), "destination": "copy.txt"}),
        )
        .await;
    copied.ok_text();
    assert_eq!(read(&fixture.path("data/copy.txt")), b"original\n");
    assert_eq!(read(&fixture.path("ro/existing.txt")), b"original\n");
    server.stop().await;
}

/// The escape fixture: `<root>/data` is mounted read-write and everything else is secret.
///
/// ```text
/// <root>/secret.txt
/// <root>/outside/secret.txt
/// <root>/data-evil/secret.txt          sibling sharing the prefix `<root>/data`
/// <root>/data/hello.txt
/// <root>/data/link-out     -> <root>/secret.txt     (a file, absolute)
/// <root>/data/rel-link-out -> ../secret.txt          (a file, relative)
/// <root>/data/dir-out      -> <root>/outside        (a directory)
/// ```
fn escape_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.write("secret.txt", format!("{SECRET}-root\n"));
    fixture.write("outside/secret.txt", format!("{SECRET}-outside\n"));
    fixture.write("data-evil/secret.txt", format!("{SECRET}-sibling\n"));
    fixture.write("data/hello.txt", "hello\n");
    fixture.symlink(fixture.path("secret.txt"), "data/link-out");
    fixture.symlink("../secret.txt", "data/rel-link-out");
    fixture.symlink(fixture.path("outside"), "data/dir-out");
    fixture
}

#[tokio::test]
async fn writes_cannot_leave_the_read_write_mount() {
    let fixture = escape_fixture();
    let config = fs_config(&fixture, r#"[{ host = "data", mode = "rw" }]"#, "");
    let server = Server::start(&config).await;
    let root = fixture.root().display().to_string();
    let data = fixture.arg("data");
    let hello = format!("{data}/hello.txt");

    // Paths that lead out: absolute, `..` (relative and absolute), a directory symlink out,
    // a file symlink out (absolute and relative target), and the sibling with a shared prefix.
    let new_outside = [
        format!("{root}/escaped"),
        "../escaped".to_string(),
        format!("{data}/../escaped"),
        format!("{data}/dir-out/escaped"),
        "dir-out/escaped".to_string(),
        format!("{data}-evil/escaped"),
        "/escaped-toolcell-test".to_string(),
    ];
    let existing_outside = [
        format!("{root}/secret.txt"),
        "../secret.txt".to_string(),
        format!("{data}/dir-out/secret.txt"),
        format!("{data}/link-out"),
        "link-out".to_string(),
        format!("{data}/rel-link-out"),
        format!("{data}-evil/secret.txt"),
    ];

    let mut attempts: Vec<(&str, Value)> = Vec::new();
    for path in new_outside.iter().chain(&existing_outside) {
        attempts.push((
            "write_file",
            json!({"path": path, "content": "ESCAPED", "overwrite": true}),
        ));
        attempts.push(("write_file", json!({"path": path, "content": "ESCAPED"})));
        attempts.push(("append_file", json!({"path": path, "content": "ESCAPED"})));
        attempts.push(("mkdir", json!({"path": path})));
        attempts.push((
            "copy_file",
            json!({"source": hello, "destination": path, "overwrite": true}),
        ));
        attempts.push(("copy_file", json!({"source": hello, "destination": path})));
        // A rename replaces a symlink at the destination, not its target (as `mv` does), so
        // onto a link inside the mount it stays inside: not an escape.
        if !path.contains("link-out") {
            attempts.push((
                "rename",
                json!({"source": hello, "destination": path, "overwrite": true}),
            ));
        }
    }
    for path in &existing_outside {
        attempts.push((
            "edit_file",
            json!({"path": path, "old_string": SECRET, "new_string": "ESCAPED"}),
        ));
        attempts.push((
            "edit_file",
            json!({"path": path, "old_string": SECRET, "new_string": "ESCAPED", "dry_run": true}),
        ));
        // Reading from outside through copy or rename would bring a secret in.
        attempts.push((
            "copy_file",
            json!({"source": path, "destination": "stolen.txt"}),
        ));
        if !path.contains("link-out") {
            // Renaming a symlink moves the link itself, which stays inside.
            attempts.push((
                "rename",
                json!({"source": path, "destination": "stolen.txt"}),
            ));
        }
    }
    attempts.push((
        "rename",
        json!({"source": format!("{root}/outside"), "destination": "stolen-dir"}),
    ));
    attempts.push(("mkdir", json!({"path": format!("{data}/dir-out/a/b/c")})));

    let before = Snapshot::of(fixture.root());
    for (tool, arguments) in attempts {
        let what = format!("{tool} {arguments}");
        let result = server.call(tool, arguments).await;
        assert!(result.is_error(), "{what} should be refused: {result:?}");
        assert!(
            !result.0.to_string().contains(SECRET),
            "{what} leaked a secret: {result:?}"
        );
        before.assert_unchanged(fixture.root(), &what);
    }
    assert!(!Path::new("/escaped-toolcell-test").exists());

    // Control: inside the mount, the same tools write.
    server
        .call(
            "write_file",
            json!({"path": "inside.txt", "content": "ok\n"}),
        )
        .await
        .ok_text();
    assert_eq!(read(&fixture.path("data/inside.txt")), b"ok\n");
    server.stop().await;
}

#[tokio::test]
async fn a_per_tool_mount_confines_write_file_while_read_tools_see_the_project() {
    let fixture = Fixture::new();
    fixture.write("README.md", "# project\n");
    fixture.write("src/lib.rs", "pub fn f() {}\n");
    fixture.write("out-evil/keep.txt", "sibling\n");
    fixture.mkdir("out");
    let config = fs_config(
        &fixture,
        r#"[{ host = ".", mode = "ro" }]"#,
        r#"
[[plugin.tool]]
name = "write_file"
mounts = [{ host = "out", mode = "rw" }]
"#,
    );
    let server = Server::start(&config).await;
    let root = fixture.root().display().to_string();
    let out = fixture.arg("out");

    // write_file writes under out/, by absolute path and relative to its own first mount.
    let result = server
        .call(
            "write_file",
            json!({"path": format!("{out}/report.txt"), "content": "report\n"}),
        )
        .await;
    result.ok_text();
    assert_eq!(read(&fixture.path("out/report.txt")), b"report\n");
    let result = server
        .call(
            "write_file",
            json!({"path": "relative.txt", "content": "rel\n"}),
        )
        .await;
    assert_eq!(
        result.ok_text(),
        format!("wrote 4 bytes to `{out}/relative.txt` (new file)")
    );
    assert_eq!(read(&fixture.path("out/relative.txt")), b"rel\n");

    // ...and nowhere else in the project, though the plugin can read all of it.
    let before = Snapshot::of(fixture.root());
    for (path, overwrite) in [
        (format!("{root}/README.md"), true),
        (format!("{root}/src/new.rs"), false),
        (format!("{root}/src/lib.rs"), true),
        (format!("{root}/new.txt"), false),
        ("../README.md".to_string(), true),
        (format!("{out}/../src/new.rs"), false),
        (format!("{root}/out-evil/keep.txt"), true),
        (format!("{root}/out-evil/new.txt"), false),
    ] {
        let what = format!("write_file {path}");
        let result = server
            .call(
                "write_file",
                json!({"path": path, "content": "CHANGED", "overwrite": overwrite}),
            )
            .await;
        assert!(result.is_error(), "{what} should be refused: {result:?}");
        before.assert_unchanged(fixture.root(), &what);
    }

    // The other write tools keep the plugin's read-only mount.
    let result = server
        .call(
            "edit_file",
            json!({"path": format!("{root}/README.md"), "old_string": "project",
                   "new_string": "CHANGED"}),
        )
        .await;
    assert!(result.is_error(), "edit_file on a ro mount: {result:?}");
    let result = server
        .call(
            "append_file",
            json!({"path": format!("{out}/report.txt"), "content": "CHANGED"}),
        )
        .await;
    assert!(result.is_error(), "append_file on a ro mount: {result:?}");
    before.assert_unchanged(fixture.root(), "edit_file and append_file");

    // read_file reads the whole project, including what write_file wrote.
    for (path, contents) in [
        (format!("{root}/README.md"), "# project\n"),
        ("src/lib.rs".to_string(), "pub fn f() {}\n"),
        (format!("{out}/report.txt"), "report\n"),
    ] {
        let result = server.call("read_file", json!({"path": path})).await;
        assert_eq!(result.ok_text(), contents, "read_file {path}");
    }
    server.stop().await;
}

/// The rows of `toolcell tools`, by tool name.
fn tool_rows(stdout: &str) -> BTreeMap<String, String> {
    // The table ends at the first blank line; a note on the tools not enabled may follow.
    stdout
        .lines()
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| {
            let name = line.split_whitespace().next()?;
            Some((name.to_string(), line.to_string()))
        })
        .collect()
}

#[tokio::test]
async fn read_tools_get_read_only_mounts_when_the_plugin_has_read_write() {
    let fixture = Fixture::new();
    fixture.mkdir("out");
    let config = fs_config(
        &fixture,
        r#"[{ host = ".", mode = "rw" }]"#,
        r#"
[[plugin.tool]]
name = "write_file"
mounts = [{ host = "out", mode = "rw" }]

[[plugin.tool]]
name = "tail"
mounts = [{ host = "out", mode = "rw" }]
"#,
    );
    let config = config.display().to_string();
    let root = fixture.root().display().to_string();
    let tools = cli(&["tools", "--config", &config]).await;
    assert_eq!(tools.code(), 0, "{tools:?}");
    let rows = tool_rows(&tools.stdout);

    // Read-only tools get every mount read-only, whether granted `rw` by the plugin or by
    // their own `[[plugin.tool]]` entry (tail's).
    for tool in READ_TOOLS {
        let row = rows
            .get(tool)
            .unwrap_or_else(|| panic!("no row for `{tool}`:\n{}", tools.stdout));
        let mount = if tool == "tail" {
            format!("{root}/out (ro)")
        } else {
            format!("{root} (ro)")
        };
        assert!(
            row.trim_end().ends_with(&mount),
            "`{tool}` should get its rw mount read-only: {row}"
        );
        assert!(!row.contains("(rw)"), "{row}");
    }
    for tool in WRITE_TOOLS {
        let row = rows
            .get(tool)
            .unwrap_or_else(|| panic!("no row for `{tool}`:\n{}", tools.stdout));
        let mount = if tool == "write_file" {
            format!("{root}/out (rw)")
        } else {
            format!("{root} (rw)")
        };
        assert!(row.trim_end().ends_with(&mount), "`{tool}`: {row}");
    }
}

#[tokio::test]
async fn a_copy_stopped_by_the_time_limit_leaves_the_destination_intact() {
    let fixture = Fixture::new();
    let source = fixture.path("data/big.bin");
    fixture.mkdir("data");
    // 200 MB, sparse, so the test writes it at once; a debug build copies it in seconds.
    std::fs::File::create(&source)
        .and_then(|file| file.set_len(200 * 1024 * 1024))
        .expect("create a sparse file");
    let destination = fixture.write("data/dest.bin", "old bytes\n");
    let config = fs_config(
        &fixture,
        r#"[{ host = "data", mode = "rw" }]"#,
        r#"
[[plugin.tool]]
name = "copy_file"
limits = { timeout_ms = 100 }
"#,
    );
    let server = Server::start(&config).await;

    let result = server
        .call(
            "copy_file",
            json!({"source": "big.bin", "destination": "dest.bin", "overwrite": true}),
        )
        .await;
    assert_eq!(
        result.error_text(),
        "`copy_file` timed out after 100 ms and was stopped"
    );
    assert_eq!(read(&destination), b"old bytes\n");
    // The interrupted copy may leave its temporary file (the plugin documents this), but
    // nothing else.
    let left = names(&fixture.path("data"));
    let extra: Vec<&String> = left
        .iter()
        .filter(|name| *name != "big.bin" && *name != "dest.bin")
        .collect();
    assert!(
        extra.len() <= 1
            && extra
                .iter()
                .all(|name| name.starts_with(".dest.bin.toolcell-tmp-")),
        "unexpected files after the timeout: {left:?}"
    );

    // The server still serves, and reads the old bytes.
    let read_back = server.call("read_file", json!({"path": "dest.bin"})).await;
    assert_eq!(read_back.ok_text(), "old bytes\n");

    // The next write to the same file removes what stopped writes left once it is ten
    // minutes old (the copy's, and one planted in another slot), but not a recent one,
    // which may belong to a write under way.
    let stale = fixture.write("data/.dest.bin.toolcell-tmp-0000000000000005", "stopped");
    let recent = fixture.write("data/.dest.bin.toolcell-tmp-0000000000000006", "running");
    let eleven_minutes_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(660);
    for name in extra
        .iter()
        .map(|name| fixture.path(&format!("data/{name}")))
    {
        set_modified(&name, eleven_minutes_ago);
    }
    set_modified(&stale, eleven_minutes_ago);
    let written = server
        .call(
            "write_file",
            json!({"path": "dest.bin", "content": "new bytes\n", "overwrite": true}),
        )
        .await;
    written.ok_text();
    assert_eq!(read(&destination), b"new bytes\n");
    assert_eq!(
        names(&fixture.path("data")),
        [
            ".dest.bin.toolcell-tmp-0000000000000006",
            "big.bin",
            "dest.bin"
        ],
        "only the recent temporary file is left"
    );
    assert!(recent.exists());
    server.stop().await;
}

/// Sets the modification time of the file at `path`.
fn set_modified(path: &std::path::Path, at: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|file| file.set_modified(at))
        .unwrap_or_else(|e| panic!("set the time of {}: {e}", path.display()));
}

#[tokio::test]
async fn writes_stopped_by_the_memory_limit_leave_the_file_intact() {
    let fixture = Fixture::new();
    // About 8.4 MiB, under edit_file's 10 MiB limit; the old and new text together are over 16.
    let text: String = (0..500_000).map(|i| format!("line {i} alpha\n")).collect();
    let big = fixture.write("data/big.txt", &text);
    let small = fixture.write("data/small.txt", "old\n");
    let config = fs_config(
        &fixture,
        r#"[{ host = "data", mode = "rw" }]"#,
        r#"
[[plugin.tool]]
name = "edit_file"
limits = { memory_mb = 16 }

[[plugin.tool]]
name = "write_file"
limits = { memory_mb = 8 }
"#,
    );
    let server = Server::start(&config).await;

    let result = server
        .call(
            "edit_file",
            json!({"path": "big.txt", "old_string": "line 5 alpha\n", "new_string": "line 5 beta\n"}),
        )
        .await;
    assert_eq!(
        result.error_text(),
        "`edit_file` ran out of memory: it tried to use more than its limit of 16 MiB"
    );
    assert!(read(&big) == text.as_bytes(), "edit_file changed big.txt");

    let result = server
        .call(
            "write_file",
            json!({"path": "small.txt", "content": "x".repeat(6 * 1024 * 1024), "overwrite": true}),
        )
        .await;
    assert_eq!(
        result.error_text(),
        "`write_file` ran out of memory: it tried to use more than its limit of 8 MiB"
    );
    assert_eq!(read(&small), b"old\n");
    for name in names(&fixture.path("data")) {
        assert!(
            ["big.txt", "small.txt"].contains(&name.as_str()) || name.contains(".toolcell-tmp-"),
            "unexpected file {name}"
        );
    }

    // Control: within the limit, the same tools work.
    server
        .call(
            "write_file",
            json!({"path": "small.txt", "content": "new\n", "overwrite": true}),
        )
        .await
        .ok_text();
    assert_eq!(read(&small), b"new\n");
    server.stop().await;
}

#[tokio::test]
async fn write_tools_are_served_only_with_the_write_category() {
    let fixture = Fixture::new();
    fixture.mkdir("data");
    let with = fs_config(&fixture, r#"[{ host = "data", mode = "rw" }]"#, "");
    let with_write = with.display().to_string();
    // The default categories: read, search and vcs.
    let without = fixture.write(
        "without.toml",
        r#"
[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "rw" }]
"#,
    );
    let without_write = without.display().to_string();

    let listed = cli(&["tools", "--config", &with_write]).await;
    assert_eq!(listed.code(), 0, "{listed:?}");
    let rows = tool_rows(&listed.stdout);
    for tool in WRITE_TOOLS {
        let row = rows
            .get(tool)
            .unwrap_or_else(|| panic!("no row for `{tool}`:\n{}", listed.stdout));
        assert!(row.contains(" write "), "`{tool}` category: {row}");
    }
    let unlisted = cli(&["tools", "--config", &without_write]).await;
    assert_eq!(unlisted.code(), 0, "{unlisted:?}");
    let rows = tool_rows(&unlisted.stdout);
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        ["file_info", "list_directory", "read_file", "tail"],
        "{}",
        unlisted.stdout
    );
    assert!(
        unlisted.stdout.contains(&format!(
            "6 more tool(s) not enabled by [server] categories or `tools`: {}",
            WRITE_TOOLS.join(", ")
        )),
        "{}",
        unlisted.stdout
    );

    let server = Server::start(&with).await;
    let mut expected: Vec<String> = READ_TOOLS
        .iter()
        .chain(&WRITE_TOOLS)
        .map(|name| name.to_string())
        .collect();
    expected.sort();
    assert_eq!(server.tool_names().await, expected);
    server.stop().await;

    let server = Server::start(&without).await;
    let mut expected: Vec<String> = READ_TOOLS.iter().map(|name| name.to_string()).collect();
    expected.sort();
    assert_eq!(server.tool_names().await, expected);
    let target = fixture.path("data/created.txt");
    let error = server
        .call_error(
            "write_file",
            json!({"path": target.display().to_string(), "content": "x"}),
        )
        .await;
    assert_eq!(error.code.0, INVALID_PARAMS, "{error:?}");
    assert!(error.message.contains("write_file"), "{error:?}");
    assert!(
        !target.exists(),
        "a disabled write_file wrote {}",
        target.display()
    );
    server.stop().await;
}

#[tokio::test]
async fn write_tools_have_the_documented_annotations() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    let tools = server.tools().await;
    for name in WRITE_TOOLS {
        let tool = tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` is not in tools/list: {tools:?}"));
        let destructive = matches!(name, "write_file" | "edit_file" | "rename");
        let idempotent = name == "mkdir";
        assert_eq!(
            tool["annotations"],
            json!({
                "readOnlyHint": false,
                "destructiveHint": destructive,
                "idempotentHint": idempotent,
                "openWorldHint": false,
            }),
            "`{name}`: {tool}"
        );
        assert!(
            tool["title"].as_str().is_some_and(|t| !t.is_empty()),
            "`{name}` has no title: {tool}"
        );
    }
    server.stop().await;
}

// See: read_file on a named pipe blocked forever in open(2); the write tools open files too.
#[tokio::test]
async fn write_tools_refuse_special_files_without_blocking() {
    let fixture = Fixture::new();
    let server = rw_data(&fixture).await;
    let _socket = special_files(&fixture, "data/special");
    fixture.write("data/notes.txt", "one\n");
    let before = Snapshot::of(&fixture.path("data"));
    let notes = fixture.arg("data/notes.txt");

    for name in ["pipe", "socket", "link-to-pipe"] {
        let path = fixture.arg(&format!("data/special/{name}"));
        let calls = [
            (
                "edit_file",
                json!({"path": path, "old_string": "a", "new_string": "b"}),
                "edit_file edits regular files only",
            ),
            (
                "append_file",
                json!({"path": path, "content": "x"}),
                "append_file appends to regular files only",
            ),
            (
                "write_file",
                json!({"path": path, "content": "x", "overwrite": true}),
                "write_file replaces regular files only",
            ),
            (
                "copy_file",
                json!({"source": path, "destination": fixture.arg("data/copy.txt")}),
                "copy_file copies regular files only",
            ),
            (
                "copy_file",
                json!({"source": notes, "destination": path, "overwrite": true}),
                "copy_file replaces regular files only",
            ),
        ];
        for (tool, arguments, rule) in calls {
            let text = bounded_call(&server, tool, arguments.clone())
                .await
                .error_text();
            assert_eq!(
                text,
                format!(
                    "`{path}` is a special file (a named pipe, a socket or a device), not a \
                     regular file; {rule}"
                ),
                "{tool} {arguments}"
            );
        }
    }
    before.assert_unchanged(&fixture.path("data"), "a write tool on a special file");

    // The server still serves, and a special file can still be moved, as `mv` does.
    let appended = bounded_call(
        &server,
        "append_file",
        json!({"path": notes, "content": "two"}),
    )
    .await
    .ok_text();
    assert!(appended.starts_with("appended 4 bytes"), "{appended}");
    let moved = fixture.arg("data/special/moved-pipe");
    bounded_call(
        &server,
        "rename",
        json!({"source": fixture.arg("data/special/pipe"), "destination": moved}),
    )
    .await
    .ok_text();
    let moved = std::fs::symlink_metadata(fixture.path("data/special/moved-pipe"))
        .expect("the pipe was moved");
    assert!(moved.file_type().is_fifo(), "{moved:?}");
    server.stop().await;
}
