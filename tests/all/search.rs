//! The builtin `search` plugin (`glob`, `grep`, `concat_files`), called through the server on
//! fixture trees: known matches with ignore files, binary files, context, unicode and very long
//! lines; the caps; a bad regex; and every way a path or pattern could try to leave the mount.

use serde_json::{Value, json};

use crate::fs::{bounded_call, mkfifo, special_files};
use crate::support::{CallResult, Fixture, RawServer, Server, bin, within, workspace_root};

/// Marks every secret file's contents; no result may ever contain it.
const SECRET: &str = "TOOLCELL-SECRET";

/// A config serving the search plugin with `data/` mounted read-only; `config` is its `config`
/// table, if any.
fn search_config(fixture: &Fixture, config: &str) -> std::path::PathBuf {
    fixture.config(&format!(
        r#"
[[plugin]]
name = "search"
path = "builtin:search"
mounts = [{{ host = "data", mode = "ro" }}]
{config}
"#
    ))
}

/// The content-search fixture, under `data/`:
///
/// ```text
/// .git/HEAD                    a repository root (hidden: never searched)
/// .gitignore                   ignored/  *.log
/// src/main.rs                  needle on lines 2 and 4
/// src/lib.rs                   no needle
/// ignored/x.rs                 needle (git-ignored directory)
/// debug.log                    needle (git-ignored file)
/// .hidden/h.rs                 needle (hidden)
/// sub/.ignore                  *.gen
/// sub/a.gen                    needle (ignored by sub/.ignore)
/// sub/b.rs                     needle on line 1
/// sub/trace.log                needle (git-ignored by the root's *.log, even when searching sub/)
/// sub/deeper/.gitignore        !keep.log   (re-includes a file the root ignores)
/// sub/deeper/keep.log          needle
/// blob.bin                     needle, then a NUL: binary, skipped
/// unicode.txt                  needle after non-ASCII text, on line 2
/// long.txt                     one 300,000-byte line with needle in the middle, on line 2
/// crlf.txt                     needle with a CRLF terminator
/// ```
fn content_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.write("data/.git/HEAD", "ref: refs/heads/main\nneedle\n");
    fixture.write("data/.gitignore", "ignored/\n*.log\n");
    fixture.write(
        "data/src/main.rs",
        "fn main() {\n    let needle = 1;\n    let hay = 2;\n    needle + hay\n}\n",
    );
    fixture.write("data/src/lib.rs", "pub fn lib() {}\n");
    fixture.write("data/ignored/x.rs", "needle\n");
    fixture.write("data/debug.log", "needle\n");
    fixture.write("data/.hidden/h.rs", "needle\n");
    fixture.write("data/sub/.ignore", "*.gen\n");
    fixture.write("data/sub/a.gen", "needle\n");
    fixture.write("data/sub/b.rs", "needle in b\n");
    fixture.write("data/sub/trace.log", "needle\n");
    fixture.write("data/sub/deeper/.gitignore", "!keep.log\n");
    fixture.write("data/sub/deeper/keep.log", "a kept needle\n");
    fixture.write("data/blob.bin", b"needle\n\0\x01\x02binary\n");
    fixture.write(
        "data/unicode.txt",
        "Grüße aus Köln 🎉\nÄpfel, Birnen und needle — “quoted”\n",
    );
    let long = format!("{}needle{}", "a".repeat(150_000), "b".repeat(149_994));
    fixture.write("data/long.txt", format!("short first line\n{long}\nlast\n"));
    fixture.write("data/crlf.txt", "windows needle\r\nnext\r\n");
    search_config(&fixture, "");
    fixture
}

/// `(path relative to data/, line, text, is_context)` for every line of a grep result.
fn grep_lines(fixture: &Fixture, result: &CallResult) -> Vec<(String, u64, String, bool)> {
    let prefix = format!("{}/", fixture.arg("data"));
    let mut lines = Vec::new();
    for file in result.structured()["files"].as_array().expect("files") {
        let path = file["path"].as_str().expect("a path");
        let relative = path
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{path} is not under {prefix}"));
        for line in file["lines"].as_array().into_iter().flatten() {
            lines.push((
                relative.to_string(),
                line["line"].as_u64().expect("a line number"),
                line["text"].as_str().expect("a text").to_string(),
                line["context"] == json!(true),
            ));
        }
    }
    lines
}

/// The paths of a glob result, relative to `data/` when under it.
fn glob_paths(fixture: &Fixture, result: &CallResult) -> Vec<String> {
    let prefix = format!("{}/", fixture.arg("data"));
    result.structured()["paths"]
        .as_array()
        .expect("paths")
        .iter()
        .map(|path| {
            let path = path.as_str().expect("a path string");
            path.strip_prefix(&prefix).unwrap_or(path).to_string()
        })
        .collect()
}

#[tokio::test]
async fn search_tools_are_served_by_default_read_only_with_schemas() {
    let fixture = content_fixture();
    let server = Server::start(&fixture.path("plugins.toml")).await;
    let tools = server.tools().await;
    for name in ["glob", "grep", "concat_files"] {
        let tool = tools
            .iter()
            .find(|tool| tool["name"] == name)
            .unwrap_or_else(|| panic!("`{name}` is not listed: {tools:?}"));
        assert_eq!(tool["annotations"]["readOnlyHint"], json!(true), "{tool}");
        assert_eq!(
            tool["annotations"]["destructiveHint"],
            json!(false),
            "{tool}"
        );
        assert_eq!(tool["annotations"]["openWorldHint"], json!(false), "{tool}");
        let has_output_schema = tool.get("outputSchema").is_some_and(|s| !s.is_null());
        assert_eq!(has_output_schema, name != "concat_files", "{tool}");
    }
    server.stop().await;

    // The embedded default (no plugins.toml where toolcell starts) serves it too.
    let output = within(
        "`toolcell tools` with the embedded default",
        tokio::process::Command::new(bin())
            .arg("tools")
            .current_dir(fixture.path("data/src"))
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .env(
                "TOOLCELL_CACHE_DIR",
                workspace_root().join("target").join("test-cache"),
            )
            .output(),
    )
    .await
    .expect("run toolcell tools");
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    for name in ["glob", "grep", "concat_files"] {
        assert!(
            table
                .lines()
                .any(|row| row.split_whitespace().next() == Some(name) && row.contains("search")),
            "`{name}` is not in the default table:\n{table}"
        );
    }
}

#[tokio::test]
async fn grep_finds_known_matches_like_ripgrep() {
    let fixture = content_fixture();
    let server = Server::start(&fixture.path("plugins.toml")).await;
    let result = server.call("grep", json!({"pattern": "needle"})).await;
    let text = result.ok_text();
    let long_line = grep_lines(&fixture, &result)
        .into_iter()
        .find(|(path, ..)| path == "long.txt")
        .expect("long.txt matches");
    let lines: Vec<(String, u64, String, bool)> = grep_lines(&fixture, &result)
        .into_iter()
        .filter(|(path, ..)| path != "long.txt")
        .collect();
    let expected = [
        ("crlf.txt", 1, "windows needle"),
        ("src/main.rs", 2, "    let needle = 1;"),
        ("src/main.rs", 4, "    needle + hay"),
        ("sub/b.rs", 1, "needle in b"),
        ("sub/deeper/keep.log", 1, "a kept needle"),
        ("unicode.txt", 2, "Äpfel, Birnen und needle — “quoted”"),
    ];
    assert_eq!(
        lines,
        expected
            .iter()
            .map(|(path, line, text)| (path.to_string(), *line, text.to_string(), false))
            .collect::<Vec<_>>(),
        "ignored, hidden and binary files are skipped; paths come sorted\n{text}"
    );

    // The 300,000-byte line is shown as a window around the match, and says so.
    let (_, number, shown, _) = long_line;
    assert_eq!(number, 2);
    assert!(shown.contains("needle"), "{shown}");
    assert!(shown.len() < 1000, "a {}-byte window", shown.len());
    assert!(
        shown.contains("[line of 300000 bytes, shortened]"),
        "{shown}"
    );

    let structured = result.structured();
    assert_eq!(structured["matches"], json!(7));
    assert_eq!(structured["truncated"], json!(false));
    // Searched: crlf, long, main, lib, b, keep.log, unicode, and blob.bin up to its NUL.
    assert_eq!(structured["files_searched"], json!(8));
    assert!(
        structured["note"]
            .as_str()
            .is_some_and(|note| note.contains("1 binary file")),
        "{structured}"
    );

    // The readable text: ripgrep's heading layout.
    let main = fixture.arg("data/src/main.rs");
    assert!(
        text.contains(&format!(
            "{main}\n2:    let needle = 1;\n4:    needle + hay\n"
        )),
        "{text}"
    );
    assert!(text.contains("7 matching lines in 6 files"), "{text}");
    server.stop().await;
}

// The plugin skips a text file that lacks the literal every match holds, found by a loop of its
// own that takes 64 bytes a turn (plugins/search/src/literal.rs): it must find the literal at
// every offset of a block, in the last block (which overlaps the one before) and in files
// shorter than a block, and pass over near misses.
#[tokio::test]
async fn grep_finds_a_literal_at_every_offset_in_files_of_every_size() {
    let fixture = Fixture::new();
    let mut expected = Vec::new();
    for len in 5..=200usize {
        let mut text = vec![b'.'; len];
        // Near misses: the pair of rare bytes without the rest.
        let miss = (len / 2).min(len - 4);
        text[miss..miss + 4].copy_from_slice(b"Queu");
        let name = format!("n{len:03}.txt");
        if len % 4 != 0 {
            let at = (len * 37) % (len - 4);
            text[at..at + 5].copy_from_slice(b"Queue");
            expected.push((
                name.clone(),
                1,
                String::from_utf8(text.clone()).unwrap(),
                false,
            ));
        }
        fixture.write(&format!("data/{name}"), &text);
    }
    search_config(&fixture, "");
    let server = Server::start(&fixture.path("plugins.toml")).await;
    // The literal itself; an inner piece of a concatenation; no single literal; a set of cases.
    for (pattern, ignore_case) in [
        ("Queue", false),
        (r"\.*Queue\.*", false),
        (r"[A-Z]ueue\b|Queue", false),
        ("Queue", true),
    ] {
        let result = server
            .call(
                "grep",
                json!({"pattern": pattern, "ignore_case": ignore_case, "max_results": 1000}),
            )
            .await;
        result.ok_text();
        let mut lines = grep_lines(&fixture, &result);
        lines.sort();
        assert_eq!(
            lines, expected,
            "pattern {pattern}, ignore_case {ignore_case}"
        );
        assert_eq!(result.structured()["files_searched"], json!(196));
    }
    server.stop().await;
}

#[tokio::test]
async fn grep_context_case_fixed_strings_globs_and_paths() {
    let fixture = content_fixture();
    let server = Server::start(&fixture.path("plugins.toml")).await;

    // Context lines, merged and marked.
    let result = server
        .call(
            "grep",
            json!({"pattern": "needle", "path": "src", "context": 1}),
        )
        .await;
    let lines: Vec<(u64, bool)> = grep_lines(&fixture, &result)
        .into_iter()
        .map(|(_, line, _, context)| (line, context))
        .collect();
    assert_eq!(
        lines,
        [(1, true), (2, false), (3, true), (4, false), (5, true)]
    );
    assert!(
        result
            .ok_text()
            .contains("1-fn main() {\n2:    let needle = 1;\n3-    let hay = 2;\n"),
        "{}",
        result.ok_text()
    );

    // Unicode case folding, and a Unicode class.
    let result = server
        .call("grep", json!({"pattern": "äPFEL", "ignore_case": true}))
        .await;
    assert_eq!(
        grep_lines(&fixture, &result).len(),
        1,
        "{}",
        result.ok_text()
    );
    let result = server.call("grep", json!({"pattern": r"K\w+n 🎉"})).await;
    assert_eq!(
        grep_lines(&fixture, &result)[0].2,
        "Grüße aus Köln 🎉",
        "{}",
        result.ok_text()
    );

    // Regex metacharacters taken literally.
    fixture.write("data/meta.txt", "a.b(c)\naxb(c)\n");
    let literal = server
        .call("grep", json!({"pattern": "a.b(c)", "fixed_strings": true}))
        .await;
    assert_eq!(grep_lines(&fixture, &literal).len(), 1);
    let regex = server.call("grep", json!({"pattern": r"a.b\(c\)"})).await;
    assert_eq!(grep_lines(&fixture, &regex).len(), 2);

    // Globs include and exclude, and override ignore files (as ripgrep's --glob does) but do
    // not reach into an ignored directory, which is never entered.
    let files_of = |result: &CallResult| -> Vec<String> {
        result.structured()["files"]
            .as_array()
            .expect("files")
            .iter()
            .filter_map(|file| file["path"].as_str().map(str::to_string))
            .collect()
    };
    let result = server
        .call(
            "grep",
            json!({"pattern": "needle", "glob": ["*.rs", "!sub/**"], "files_with_matches": true}),
        )
        .await;
    assert_eq!(
        files_of(&result),
        [fixture.arg("data/src/main.rs")],
        "{}",
        result.ok_text()
    );
    let result = server
        .call("grep", json!({"pattern": "needle", "glob": ["*.log"]}))
        .await;
    assert_eq!(
        files_of(&result),
        [
            fixture.arg("data/debug.log"),
            fixture.arg("data/sub/deeper/keep.log"),
            fixture.arg("data/sub/trace.log"),
        ],
        "{}",
        result.ok_text()
    );

    // A subdirectory still honours its parents' ignore files (sub/trace.log stays out); a file
    // path is searched as given.
    let result = server
        .call(
            "grep",
            json!({"pattern": "needle", "path": fixture.arg("data/sub")}),
        )
        .await;
    let paths: Vec<String> = grep_lines(&fixture, &result)
        .into_iter()
        .map(|l| l.0)
        .collect();
    assert_eq!(paths, ["sub/b.rs", "sub/deeper/keep.log"]);
    let result = server
        .call("grep", json!({"pattern": "needle", "path": "debug.log"}))
        .await;
    assert_eq!(
        grep_lines(&fixture, &result).len(),
        1,
        "an explicit file is searched"
    );
    let result = server.call("grep", json!({"pattern": "absent"})).await;
    assert!(
        result.ok_text().contains("No matches"),
        "{}",
        result.ok_text()
    );
    server.stop().await;
}

#[tokio::test]
async fn grep_reports_a_bad_regex_as_an_error_quoting_it() {
    let fixture = content_fixture();
    let server = Server::start(&fixture.path("plugins.toml")).await;
    let error = server
        .call("grep", json!({"pattern": "fn (main"}))
        .await
        .error_text();
    assert!(error.contains("fn (main"), "{error}");
    assert!(error.contains("unclosed group"), "{error}");
    let error = server
        .call("grep", json!({"pattern": "x", "glob": ["{unclosed"]}))
        .await
        .error_text();
    assert!(error.contains("glob"), "{error}");
    server.stop().await;
}

#[tokio::test]
async fn grep_stops_at_max_results_and_at_the_output_cap() {
    let fixture = Fixture::new();
    // Three million matching lines (12 MB).
    fixture.write("data/huge.txt", "hit\n".repeat(3_000_000));
    let config = search_config(&fixture, "");
    let server = Server::start(&config).await;

    let result = server.call("grep", json!({"pattern": "hit"})).await;
    let structured = result.structured();
    assert_eq!(structured["matches"], json!(500), "the default max_results");
    assert_eq!(structured["truncated"], json!(true));
    assert!(
        structured["note"]
            .as_str()
            .is_some_and(|note| note.contains("max_results=500")),
        "{structured}"
    );

    // Asking for 100,000 lines: the output cap (900 KiB by default) stops it, under the host's
    // 1 MiB limit, with a note.
    let result = server
        .call("grep", json!({"pattern": "hit", "max_results": 100000}))
        .await;
    let size = result.ok_text().len() + result.structured().to_string().len();
    assert!(size <= 900 * 1024, "{size} bytes");
    assert!(
        size > 800 * 1024,
        "the budget should be mostly used: {size} bytes"
    );
    let structured = result.structured();
    assert_eq!(structured["truncated"], json!(true));
    assert!(
        structured["note"]
            .as_str()
            .is_some_and(|note| note.contains("size cap")),
        "{structured}"
    );
    server.stop().await;

    // A lower `max_output_bytes` in the plugin's config lowers the cap.
    let config = search_config(&fixture, r#"config = { max_output_bytes = "20000" }"#);
    let server = Server::start(&config).await;
    for (tool, arguments) in [
        ("grep", json!({"pattern": "hit", "max_results": 100000})),
        (
            "grep",
            json!({"pattern": "hit", "max_results": 100000, "files_with_matches": true}),
        ),
        ("glob", json!({"pattern": "*"})),
    ] {
        let result = server.call(tool, arguments.clone()).await;
        let size = result.ok_text().len() + result.structured().to_string().len();
        assert!(size <= 20000, "{tool} {arguments}: {size} bytes");
    }
    server.stop().await;
}

#[tokio::test]
async fn glob_lists_sorted_paths_with_kinds_excludes_and_caps() {
    let fixture = content_fixture();
    fixture.write("data/node_modules/pkg/index.rs", "");
    let server = Server::start(&fixture.path("plugins.toml")).await;

    let result = server.call("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        glob_paths(&fixture, &result),
        [
            ".hidden/h.rs",
            "ignored/x.rs",
            "node_modules/pkg/index.rs",
            "src/lib.rs",
            "src/main.rs",
            "sub/b.rs",
        ],
        "sorted; hidden and ignored paths included; {}",
        result.ok_text()
    );
    assert_eq!(result.structured()["truncated"], json!(false));

    let result = server
        .call(
            "glob",
            json!({"pattern": "**/*.rs", "exclude": ["node_modules", ".*", "src/lib.rs"]}),
        )
        .await;
    assert_eq!(
        glob_paths(&fixture, &result),
        ["ignored/x.rs", "src/main.rs", "sub/b.rs"]
    );

    let result = server.call("glob", json!({"pattern": "*.txt"})).await;
    assert_eq!(
        glob_paths(&fixture, &result),
        ["crlf.txt", "long.txt", "unicode.txt"],
        "`*` stays in one directory"
    );
    let result = server
        .call(
            "glob",
            json!({"pattern": "*", "path": "sub", "kind": "dir"}),
        )
        .await;
    assert_eq!(glob_paths(&fixture, &result), ["sub/deeper"]);
    let result = server
        .call("glob", json!({"pattern": "s*/**", "kind": "any"}))
        .await;
    assert!(
        glob_paths(&fixture, &result).contains(&"sub/.ignore".to_string()),
        "{}",
        result.ok_text()
    );
    let absolute = format!("{}/**/*.gen", fixture.arg("data"));
    let result = server.call("glob", json!({"pattern": absolute})).await;
    assert_eq!(glob_paths(&fixture, &result), ["sub/a.gen"]);

    let result = server
        .call("glob", json!({"pattern": "**/*", "max_results": 3}))
        .await;
    assert_eq!(glob_paths(&fixture, &result).len(), 3);
    assert_eq!(result.structured()["truncated"], json!(true));
    assert!(
        result.ok_text().contains("max_results=3"),
        "{}",
        result.ok_text()
    );

    let error = server
        .call("glob", json!({"pattern": "src/[z-a]"}))
        .await
        .error_text();
    assert!(error.contains("invalid glob"), "{error}");
    server.stop().await;
}

#[tokio::test]
async fn concat_files_lists_then_concatenates_under_a_cap() {
    let fixture = Fixture::new();
    fixture.write("data/a.txt", "alpha\n");
    fixture.write("data/b.txt", "bravo\n");
    fixture.write("data/c.md", "charlie\n");
    fixture.write("data/big.txt", "x".repeat(5000));
    fixture.write("data/bin.txt", b"\0binary");
    let config = search_config(&fixture, "");
    let server = Server::start(&config).await;

    let dry = server
        .call("concat_files", json!({"paths": ["c.md"], "glob": "*.txt"}))
        .await
        .ok_text();
    assert!(dry.starts_with("5 files, 5027 bytes in all"), "{dry}");
    assert!(dry.contains("dry run"), "{dry}");
    assert!(!dry.contains("alpha"), "a dry run reads nothing: {dry}");

    let text = server
        .call(
            "concat_files",
            json!({"paths": ["c.md"], "glob": "*.txt", "dry_run": false, "max_bytes": 100}),
        )
        .await
        .ok_text();
    let data = fixture.arg("data");
    assert!(
        text.starts_with(&format!(
            "==> {data}/c.md <==\ncharlie\n\n==> {data}/a.txt <==\nalpha\n\n==> {data}/b.txt <==\nbravo\n"
        )),
        "{text}"
    );
    assert!(
        text.contains("partial result: 3 of 5 files included")
            && text.contains(&format!("{data}/big.txt"))
            && !text.contains("xxxx"),
        "{text}"
    );

    let text = server
        .call(
            "concat_files",
            json!({"paths": ["bin.txt", "a.txt"], "dry_run": false}),
        )
        .await
        .ok_text();
    assert!(
        text.contains("[binary file, skipped]") && text.contains("alpha"),
        "{text}"
    );

    let error = server
        .call("concat_files", json!({"dry_run": false}))
        .await
        .error_text();
    assert!(error.contains("paths"), "{error}");
    server.stop().await;
}

/// The escape fixture: `<root>/data` is mounted and everything else is secret.
///
/// ```text
/// <root>/secret.txt
/// <root>/outside/secret.txt
/// <root>/data-evil/secret.txt          sibling sharing the prefix `<root>/data`
/// <root>/data/hello.txt
/// <root>/data/sub/inner.txt
/// <root>/data/link-out     -> <root>/secret.txt     (absolute)
/// <root>/data/rel-link-out -> ../secret.txt          (relative)
/// <root>/data/dir-out      -> <root>/outside        (a directory)
/// <root>/data/sub/up       -> ../..                 (a directory above the mount)
/// ```
fn escape_fixture() -> Fixture {
    let fixture = Fixture::new();
    fixture.write("secret.txt", format!("{SECRET}-root\n"));
    fixture.write("outside/secret.txt", format!("{SECRET}-outside\n"));
    fixture.write("data-evil/secret.txt", format!("{SECRET}-sibling\n"));
    fixture.write("data/hello.txt", "hello\n");
    fixture.write("data/sub/inner.txt", "inner\n");
    fixture.symlink(fixture.path("secret.txt"), "data/link-out");
    fixture.symlink("../secret.txt", "data/rel-link-out");
    fixture.symlink(fixture.path("outside"), "data/dir-out");
    fixture.symlink("../..", "data/sub/up");
    search_config(&fixture, "");
    fixture
}

/// Asserts that `result` is an error and shows none of `forbidden`.
#[track_caller]
fn assert_refused(what: &str, result: &Value, forbidden: &[&str]) {
    assert_eq!(
        result["isError"],
        json!(true),
        "{what} should be refused, got {result}"
    );
    assert_no_leak(what, result, forbidden);
}

#[track_caller]
fn assert_no_leak(what: &str, result: &Value, forbidden: &[&str]) {
    let text = result.to_string();
    for needle in forbidden {
        assert!(!text.contains(needle), "{what} leaked {needle:?}: {result}");
    }
}

#[tokio::test]
async fn search_tools_cannot_leave_the_mount() {
    let fixture = escape_fixture();
    let server = Server::start(&fixture.path("plugins.toml")).await;
    let data = fixture.arg("data");
    let root = fixture.root().display().to_string();
    // Listings must not show a name from outside; errors may echo the path asked for, but
    // never a file's contents.
    let leaks = [SECRET, "secret.txt", "passwd", "plugins.toml", "outside/"];
    let content_leaks = [SECRET, "root:x:0", "root:*:0"];

    // Control: the mount itself is searchable, and symlinks are not followed out of it.
    let inside = server
        .call("grep", json!({"pattern": "hello|inner|TOOLCELL"}))
        .await;
    assert_eq!(
        inside.structured()["matches"],
        json!(2),
        "{}",
        inside.ok_text()
    );
    assert_no_leak("grep over the mount", &inside.0, &leaks);
    let inside = server
        .call("glob", json!({"pattern": "**/*", "kind": "any"}))
        .await;
    inside.ok_text();
    assert_no_leak("glob over the mount", &inside.0, &leaks);
    let inside = server
        .call("concat_files", json!({"glob": "**/*", "dry_run": false}))
        .await;
    assert!(inside.ok_text().contains("hello"), "{}", inside.ok_text());
    assert_no_leak("concat_files over the mount", &inside.0, &leaks);

    // `path` for grep and glob: `..`, absolute paths, symlinks out, the prefix sibling.
    let paths = [
        "..".to_string(),
        "../secret.txt".to_string(),
        format!("{data}/.."),
        format!("{data}/../secret.txt"),
        "sub/../..".to_string(),
        "sub/up".to_string(),
        "sub/up/secret.txt".to_string(),
        root.clone(),
        format!("{root}/secret.txt"),
        "/".to_string(),
        "/etc".to_string(),
        "/etc/passwd".to_string(),
        "link-out".to_string(),
        "rel-link-out".to_string(),
        format!("{data}/dir-out"),
        "dir-out".to_string(),
        "dir-out/secret.txt".to_string(),
        format!("{data}-evil"),
        format!("{data}-evil/secret.txt"),
    ];
    for path in &paths {
        let result = server
            .call("grep", json!({"pattern": "TOOLCELL|root", "path": path}))
            .await;
        assert_refused(&format!("grep path={path}"), &result.0, &content_leaks);
        let result = server
            .call(
                "glob",
                json!({"pattern": "**", "path": path, "kind": "any"}),
            )
            .await;
        assert_refused(&format!("glob path={path}"), &result.0, &content_leaks);
        let result = server
            .call("concat_files", json!({"paths": [path], "dry_run": false}))
            .await;
        assert_refused(
            &format!("concat_files paths=[{path}]"),
            &result.0,
            &content_leaks,
        );
    }

    // Patterns that try to leave: `..`, absolute globs, through symlinks, the sibling.
    let patterns = [
        "../**".to_string(),
        "../*".to_string(),
        "../secret.txt".to_string(),
        "sub/../../**".to_string(),
        "sub/up/**".to_string(),
        format!("{root}/**"),
        format!("{root}/*.txt"),
        "/**/secret.txt".to_string(),
        "/etc/*".to_string(),
        "/*".to_string(),
        "dir-out/*".to_string(),
        "dir-out/**".to_string(),
        format!("{data}/../**"),
        format!("{data}-evil/*"),
        format!("{data}*/**"),
    ];
    for pattern in &patterns {
        for kind in ["file", "any"] {
            let result = server
                .call("glob", json!({"pattern": pattern, "kind": kind}))
                .await;
            let what = format!("glob pattern={pattern} kind={kind}");
            // A pattern whose literal part stays inside (`{data}*/**` starts at the mount's
            // parent) is refused; none may list a name from outside.
            assert_refused(&what, &result.0, &content_leaks);
        }
        let result = server
            .call("concat_files", json!({"glob": pattern, "dry_run": false}))
            .await;
        assert_refused(
            &format!("concat_files glob={pattern}"),
            &result.0,
            &content_leaks,
        );
        // grep's `glob` filters paths under `path`; it cannot widen the search.
        let result = server
            .call("grep", json!({"pattern": "TOOLCELL", "glob": [pattern]}))
            .await;
        assert_no_leak(&format!("grep glob={pattern}"), &result.0, &leaks);
    }
    server.stop().await;
}

// See: read_file on a named pipe blocked forever in open(2); the search tools open files too.
#[tokio::test]
async fn search_tools_never_open_special_files() {
    let fixture = Fixture::new();
    fixture.write("data/a.txt", "needle one\n");
    fixture.write("data/sub/b.txt", "needle two\n");
    let _socket = special_files(&fixture, "data/sub");
    // A named pipe where grep looks for ignore rules without a listing to say what it is.
    fixture.write("data/repo/.git/HEAD", "ref: refs/heads/main\n");
    mkfifo(&fixture.mkdir("data/repo/.git/info").join("exclude"));
    fixture.write("data/repo/c.txt", "needle three\n");
    let config = search_config(&fixture, "");
    let server = Server::start(&config).await;
    let data = fixture.arg("data");

    let grep = bounded_call(&server, "grep", json!({"pattern": "needle", "path": data})).await;
    let found: Vec<(String, u64, String, bool)> = grep_lines(&fixture, &grep);
    assert_eq!(
        found,
        [
            ("a.txt".to_string(), 1, "needle one".to_string(), false),
            (
                "repo/c.txt".to_string(),
                1,
                "needle three".to_string(),
                false
            ),
            ("sub/b.txt".to_string(), 1, "needle two".to_string(), false),
        ]
    );
    assert_eq!(grep.structured()["files_searched"], 3, "{:?}", grep.0);
    assert!(grep.structured().get("note").is_none(), "{:?}", grep.0);

    let pipe = fixture.arg("data/sub/pipe");
    let refused = bounded_call(&server, "grep", json!({"pattern": "x", "path": pipe}))
        .await
        .error_text();
    assert_eq!(
        refused,
        format!(
            "`{pipe}` is a special file (a named pipe, a socket or a device), not a regular file; \
             grep searches regular files and directories"
        )
    );

    // concat_files leaves them out of a glob, and refuses one named explicitly.
    let concat = bounded_call(
        &server,
        "concat_files",
        json!({"glob": "sub/*", "dry_run": false}),
    )
    .await
    .ok_text();
    assert_eq!(concat, format!("==> {data}/sub/b.txt <==\nneedle two\n"));
    for name in ["pipe", "socket", "link-to-pipe"] {
        let path = fixture.arg(&format!("data/sub/{name}"));
        let refused = bounded_call(
            &server,
            "concat_files",
            json!({"paths": [path], "dry_run": false}),
        )
        .await
        .error_text();
        assert_eq!(
            refused,
            format!(
                "`{path}` is a special file (a named pipe, a socket or a device), not a regular \
                 file; concat_files reads regular files only"
            )
        );
    }

    // glob lists them when asked for any kind of entry; it opens nothing.
    let files = bounded_call(&server, "glob", json!({"pattern": "sub/*"})).await;
    assert_eq!(glob_paths(&fixture, &files), ["sub/b.txt"]);
    let any = bounded_call(&server, "glob", json!({"pattern": "sub/*", "kind": "any"})).await;
    assert_eq!(
        glob_paths(&fixture, &any),
        ["sub/b.txt", "sub/link-to-pipe", "sub/pipe", "sub/socket"]
    );
    server.stop().await;
}

/// `notifications/progress` messages for `token` among `messages`: `(progress, message)`.
fn progress_reports(messages: &[Value], token: &str) -> Vec<(f64, String)> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .filter(|m| m["params"]["progressToken"] == token)
        .map(|m| {
            assert!(
                m["params"].get("total").is_none(),
                "no total while walking: {m}"
            );
            (
                m["params"]["progress"]
                    .as_f64()
                    .expect("progress is a number"),
                m["params"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn long_searches_report_progress() {
    // 3,000 files in 30 directories; `needle` in every 1,000th.
    let fixture = Fixture::new();
    for i in 0..3000 {
        let text = if i % 1000 == 7 {
            "hay\nneedle\n"
        } else {
            "hay\n"
        };
        fixture.write(&format!("data/d{:02}/f{i:04}.txt", i % 30), text);
    }
    let config = search_config(&fixture, "");
    let mut server = RawServer::spawn(&config, &[]);
    server.initialize().await;

    let call = |id: i64, name: &str, arguments: Value| json!({"name": name, "arguments": arguments, "_meta": {"progressToken": format!("p{id}")}});
    let response = server
        .request(
            1,
            "tools/call",
            call(1, "grep", json!({"pattern": "needle"})),
        )
        .await;
    let result = &response["result"];
    assert_eq!(result["isError"], json!(false), "{response}");
    assert_eq!(result["structuredContent"]["matches"], 3, "{response}");
    assert_eq!(
        result["structuredContent"]["files_searched"], 3000,
        "{response}"
    );
    let reports = progress_reports(&server.received, "p1");
    assert!(
        !reports.is_empty(),
        "no progress from grep: {:?}",
        server.received
    );
    assert!(
        reports.windows(2).all(|pair| pair[0].0 < pair[1].0),
        "progress must increase: {reports:?}"
    );
    assert!(
        reports.len() <= 6,
        "at most one report per 500 files: {reports:?}"
    );
    let (progress, message) = &reports[0];
    assert!(
        message.starts_with(&format!("searched {progress} files")),
        "{reports:?}"
    );

    server.received.clear();
    let response = server
        .request(
            2,
            "tools/call",
            call(
                2,
                "glob",
                json!({"pattern": "**/*.txt", "max_results": 5000}),
            ),
        )
        .await;
    let paths = response["result"]["structuredContent"]["paths"].as_array();
    assert_eq!(paths.map(Vec::len), Some(3000), "{response}");
    let reports = progress_reports(&server.received, "p2");
    assert!(
        reports
            .first()
            .is_some_and(|(_, m)| m.starts_with("scanned ") && m.contains("entries")),
        "glob: {reports:?}"
    );

    server.received.clear();
    let response = server
        .request(
            3,
            "tools/call",
            call(3, "concat_files", json!({"glob": "**/*.txt"})),
        )
        .await;
    let text = response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("1000 files"), "{response}");
    assert!(
        !progress_reports(&server.received, "p3").is_empty(),
        "concat_files: {:?}",
        server.received
    );

    // Without a token, none.
    server.received.clear();
    server.call(4, "grep", json!({"pattern": "needle"})).await;
    assert!(
        server
            .received
            .iter()
            .all(|m| m["method"] != "notifications/progress"),
        "{:?}",
        server.received
    );
    server.finish().await;
}
