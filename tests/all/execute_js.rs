//! `builtin:js` (`run_js`): the compatibility corpus of tests/execute/js (each snippet's stdout
//! against what Node 20 printed), and the abuse cases: file escapes, read-only mounts, the
//! deadline, the memory limit, output floods, deep recursion, subprocess and network modules
//! (also through eval and Function), and environment variables. The server must keep answering
//! after each.

use serde_json::json;

use crate::support::{Fixture, Server, copy_dir, workspace_root};

/// Snippets whose output differs from Node's for a reason the engine cannot fix, each with the
/// reason. Every other snippet must match exactly.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

#[tokio::test]
async fn run_js_prints_what_node_prints_for_the_corpus() {
    let corpus = workspace_root().join("tests/execute/js");
    let fixture = Fixture::new();
    copy_dir(&corpus.join("data"), &fixture.path("corpus/data"));
    let config = fixture.config(
        r#"
[server]
categories = ["read", "execute"]

[[plugin]]
name = "js"
path = "builtin:js"
mounts = [{ host = "corpus", mode = "ro" }]
"#,
    );
    let server = Server::start(&config).await;

    let mut snippets: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "js"))
        .collect();
    snippets.sort();
    assert!(
        snippets.len() >= 25,
        "the corpus has {} snippets; it needs at least 25",
        snippets.len()
    );

    let mut mismatches = Vec::new();
    let mut matched = 0;
    for snippet in &snippets {
        let name = snippet.file_stem().unwrap().to_string_lossy().into_owned();
        let code = std::fs::read_to_string(snippet).unwrap();
        let expected = std::fs::read_to_string(snippet.with_extension("out"))
            .unwrap_or_else(|e| panic!("{name}.out is missing ({e}): run record.sh"));
        let mut arguments = json!({ "code": code });
        if let Ok(stdin) = std::fs::read_to_string(snippet.with_extension("stdin")) {
            arguments["stdin"] = json!(stdin);
        }
        let result = server.call("run_js", arguments).await;
        let got = if result.is_error() {
            format!("(an error result)\n{}", result.text())
        } else {
            result.structured()["stdout"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let known = KNOWN_DIFFERENCES.iter().any(|(known, _)| *known == name);
        if got == expected {
            matched += 1;
        } else if !known {
            mismatches.push(format!("--- {name}\nexpected:\n{expected}\ngot:\n{got}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} snippets differ from Node's output:\n{}",
        mismatches.len(),
        snippets.len(),
        mismatches.join("\n")
    );
    assert!(
        matched >= 25,
        "only {matched} snippets matched Node's output"
    );
    server.stop().await;
}

/// Runs `code` and returns the result; the caller asserts on it.
async fn run(server: &Server, code: &str) -> crate::support::CallResult {
    server.call("run_js", json!({ "code": code })).await
}

/// The server still runs code after whatever came before.
async fn still_serving(server: &Server) {
    let result = run(server, "console.log(6 * 7)").await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.structured()["stdout"], "42\n");
}

#[tokio::test]
async fn run_js_stays_inside_the_sandbox() {
    let fixture = Fixture::new();
    fixture.write("data/inside.txt", "inside");
    fixture.write("data-evil/secret.txt", "sibling secret");
    fixture.write("outside.txt", "outside secret");
    fixture.symlink(fixture.path("outside.txt"), "data/link-out");
    fixture.mkdir("out");
    let config = fixture.config(
        r#"
[server]
categories = ["read", "execute"]

[[plugin]]
name = "js"
path = "builtin:js"
mounts = [{ host = "data", mode = "ro" }, { host = "out", mode = "rw" }]
env = ["TOOLCELL_JS_GRANTED"]
limits = { timeout_ms = 3000, memory_mb = 128 }
config = { max_output_bytes = "10000" }
"#,
    );
    let server = Server::start_with_env(
        &config,
        &[
            ("TOOLCELL_JS_GRANTED", "granted-value"),
            ("TOOLCELL_JS_HIDDEN", "hidden-value"),
        ],
    )
    .await;

    // The working directory is the first mount; a file inside it reads.
    let result = run(
        &server,
        "const fs = require('fs'); console.log(process.cwd()); \
         console.log(fs.readFileSync('inside.txt', 'utf8'));",
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(
        result.structured()["stdout"],
        format!("{}\ninside\n", fixture.arg("data"))
    );

    // Every escape class: absolute path, `..`, a symlink out, a sibling sharing the prefix.
    let escapes = [
        "/etc/passwd".to_string(),
        "../outside.txt".to_string(),
        "link-out".to_string(),
        fixture.arg("data-evil/secret.txt"),
        fixture.arg("outside.txt"),
    ];
    for path in &escapes {
        let code = format!(
            "try {{ console.log(require('fs').readFileSync({path:?}, 'utf8')); }} \
             catch (e) {{ console.log('refused', e.code); }}"
        );
        let result = run(&server, &code).await;
        assert!(!result.is_error(), "{path}: {}", result.text());
        let stdout = result.structured()["stdout"].as_str().unwrap().to_string();
        assert!(
            stdout.starts_with("refused E"),
            "{path} was not refused: {stdout}"
        );
        assert!(!stdout.contains("secret"), "{path} leaked: {stdout}");
    }

    // Writes: refused in the read-only mount (and nothing appears), allowed in the rw one.
    let result = run(
        &server,
        &format!(
            "const fs = require('fs'); \
             try {{ fs.writeFileSync('new.txt', 'x'); console.log('wrote'); }} \
             catch (e) {{ console.log('refused', e.code); }} \
             fs.writeFileSync({:?}, 'written'); console.log('rw ok');",
            fixture.arg("out/result.txt")
        ),
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    let stdout = result.structured()["stdout"].as_str().unwrap().to_string();
    assert!(stdout.starts_with("refused E"), "{stdout}");
    assert!(stdout.ends_with("rw ok\n"), "{stdout}");
    assert!(!fixture.path("data/new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(fixture.path("out/result.txt")).unwrap(),
        "written"
    );

    // Only granted environment variables are visible.
    let result = run(
        &server,
        "console.log(process.env.TOOLCELL_JS_GRANTED, process.env.TOOLCELL_JS_HIDDEN, \
         'HOME' in process.env)",
    )
    .await;
    assert_eq!(
        result.structured()["stdout"],
        "granted-value undefined false\n"
    );

    // Subprocess, network and native bindings fail with an error the script can catch, also
    // through eval and Function.
    let result = run(
        &server,
        r#"
const attempts = {
  child_process: () => require('child_process').execSync('id'),
  net: () => require('net').connect(80, 'example.com'),
  http: () => require('node:http').get('http://example.com'),
  binding: () => process.binding('spawn_sync'),
  eval: () => eval("require('child_process')"),
  Function: () => new Function("return require('net')")(),
};
for (const [name, attempt] of Object.entries(attempts)) {
  try { attempt(); console.log(name, 'ALLOWED'); } catch (e) { console.log(name, '|', e.message); }
}
"#,
    )
    .await;
    assert!(!result.is_error(), "{}", result.text());
    let stdout = result.structured()["stdout"].as_str().unwrap().to_string();
    assert!(!stdout.contains("ALLOWED"), "{stdout}");
    assert_eq!(stdout.lines().count(), 6, "{stdout}");
    assert!(
        stdout.contains("child_process | require('child_process'): the module 'child_process' is not available in the sandbox"),
        "{stdout}"
    );
    assert!(
        stdout.contains("net | require('net'): the module 'net' is not available in the sandbox"),
        "{stdout}"
    );
    assert!(
        stdout.contains("binding | process.binding('spawn_sync') is not available in the sandbox"),
        "{stdout}"
    );
    assert!(stdout.contains("Function | require('net')"), "{stdout}");
    still_serving(&server).await;

    // An uncaught error is an error result with the output so far and the stack.
    let result = run(
        &server,
        "console.log('before');\nfunction boom() { throw new TypeError('bad input'); }\nboom();",
    )
    .await;
    assert!(result.is_error());
    let text = result.text();
    assert!(text.starts_with("before\n"), "{text}");
    assert!(text.contains("Uncaught TypeError: bad input"), "{text}");
    assert!(text.contains("at boom"), "{text}");

    // An endless loop is ended by the deadline.
    let result = run(&server, "for (;;) {}").await;
    assert!(result.is_error());
    assert!(result.text().contains("timed out"), "{}", result.text());
    still_serving(&server).await;

    // A memory bomb is ended by the memory limit.
    let result = run(&server, "let s = 'xy'; while (true) s = s + s;").await;
    assert!(result.is_error());
    assert!(result.text().contains("memory"), "{}", result.text());
    still_serving(&server).await;

    // An output flood is stopped at max_output_bytes, not at the deadline.
    let result = run(&server, "while (true) console.log('flood');").await;
    assert!(!result.is_error(), "{}", result.text());
    assert_eq!(result.structured()["truncated"], true);
    let stdout = result.structured()["stdout"].as_str().unwrap();
    assert_eq!(stdout.len(), 10_000);
    assert!(
        result.text().contains("output passed 10000 bytes")
            && result.text().contains("the run was stopped"),
        "{}",
        &result.text()[result.text().len().saturating_sub(300)..]
    );
    // A catch around the writes does not keep the flood going.
    let result = run(
        &server,
        "for (;;) { try { console.log('x'.repeat(100)); } catch (e) {} }",
    )
    .await;
    assert_eq!(result.structured()["truncated"], true);

    // Deep recursion is an error result, and the server goes on.
    let result = run(&server, "function f(n) { return f(n + 1) + 1; } f(0);").await;
    assert!(result.is_error());
    assert!(
        result.text().contains("Maximum call stack size exceeded"),
        "{}",
        result.text()
    );
    // Recursion as deep as Node allows for a simple function works.
    let result = run(
        &server,
        "function depth(n) { return n === 0 ? 0 : 1 + depth(n - 1); } console.log(depth(9000));",
    )
    .await;
    assert_eq!(result.structured()["stdout"], "9000\n", "{}", result.text());

    // process.exit with a code other than 0 is an error result that keeps the output.
    let result = run(
        &server,
        "console.log('partial'); process.exit(3); console.log('never');",
    )
    .await;
    assert!(result.is_error());
    assert!(result.text().starts_with("partial\n"), "{}", result.text());
    assert!(
        result.text().contains("process.exit(3)"),
        "{}",
        result.text()
    );

    // stdin is what fs.readFileSync(0) returns.
    let result = server
        .call(
            "run_js",
            json!({ "code": "console.log(require('fs').readFileSync(0, 'utf8').toUpperCase())", "stdin": "abc" }),
        )
        .await;
    assert_eq!(result.structured()["stdout"], "ABC\n");

    // No state survives between calls.
    run(&server, "globalThis.leftover = 1;").await;
    let result = run(&server, "console.log(typeof leftover)").await;
    assert_eq!(result.structured()["stdout"], "undefined\n");

    still_serving(&server).await;
    server.stop().await;
}
