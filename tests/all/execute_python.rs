//! The builtin `python` plugin's `run_python`: the compatibility corpus of tests/execute/python
//! against the output CPython 3.11 recorded for it (or CPython 3.14, where that changed), and the
//! sandbox's abuse cases, each followed by a normal call to show the server kept serving.

use serde_json::{Value, json};

use crate::support::{CallResult, Fixture, Server, copy_dir, workspace_root};

/// Snippets of the corpus whose output differs from CPython's for a reason the plugin cannot
/// remove, with the reason. They still run (and must not break the server); only their output
/// is not compared.
/// Each is reported to the lead and listed in docs/plugins/python.md.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// The granted environment variable, and one that is set on the server but not granted.
const GRANTED_VAR: &str = "TOOLCELL_TEST_PY_GRANTED";
const SECRET_VAR: &str = "TOOLCELL_TEST_PY_SECRET";

/// The largest output a run may print in these tests (`max_output_bytes`).
const MAX_OUTPUT: usize = 65536;

/// The fixture: `data/` (the corpus's data files, mounted read-only, the first mount and so the
/// working directory), `out/` (mounted read-write), and outside every mount `secret.txt`,
/// `data-evil/secret` and `data-evil/evil.py` (a sibling sharing `data`'s prefix) and
/// `data/link-out -> ../secret.txt`.
fn sandbox() -> Fixture {
    let fixture = Fixture::new();
    copy_dir(&corpus_dir().join("data"), &fixture.mkdir("data"));
    fixture.mkdir("out");
    fixture.write("secret.txt", "top secret\n");
    fixture.write("data-evil/secret", "evil secret\n");
    fixture.write(
        "data-evil/evil.py",
        "print('imported from outside the mounts')\n",
    );
    fixture.symlink("../secret.txt", "data/link-out");
    fixture.config(&format!(
        r#"
[server]
categories = ["read", "execute"]

[[plugin]]
name = "python"
path = "builtin:python"
mounts = [{{ host = "data", mode = "ro" }}, {{ host = "out", mode = "rw" }}]
env = ["{GRANTED_VAR}"]
config = {{ max_output_bytes = "{MAX_OUTPUT}" }}
limits = {{ timeout_ms = 3000, memory_mb = 256 }}
"#
    ));
    fixture
}

fn corpus_dir() -> std::path::PathBuf {
    workspace_root()
        .join("tests")
        .join("execute")
        .join("python")
}

async fn start(fixture: &Fixture) -> Server {
    Server::start_with_env(
        &fixture.path("plugins.toml"),
        &[(GRANTED_VAR, "granted-value"), (SECRET_VAR, "secret-value")],
    )
    .await
}

async fn run(server: &Server, code: &str) -> CallResult {
    server.call("run_python", json!({ "code": code })).await
}

/// A normal run still works: the server and the plugin survived what came before.
async fn still_serving(server: &Server, after: &str) {
    let result = run(server, "print(6 * 7)").await;
    assert_eq!(
        result.structured()["stdout"],
        json!("42\n"),
        "after {after}, a normal run failed: {result:?}"
    );
}

#[tokio::test]
async fn python_corpus_matches_cpython() {
    let fixture = sandbox();
    let server = start(&fixture).await;
    let mut snippets: Vec<_> = std::fs::read_dir(corpus_dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.ends_with(".py") && name.as_bytes()[0].is_ascii_digit()
        })
        .collect();
    snippets.sort();
    assert!(
        snippets.len() >= 40,
        "the corpus has {} snippets",
        snippets.len()
    );

    let mut mismatches = Vec::new();
    let mut compared = 0;
    for snippet in &snippets {
        let name = snippet.file_stem().unwrap().to_string_lossy().into_owned();
        let code = std::fs::read_to_string(snippet).unwrap();
        let expected = std::fs::read_to_string(snippet.with_extension("out")).unwrap();
        // CPython 3.14's stdout, where it differs from 3.11's (record_314.mjs).
        let expected_314 = std::fs::read_to_string(snippet.with_extension("3.14.out")).ok();
        let stdin = std::fs::read_to_string(snippet.with_extension("stdin")).unwrap_or_default();
        let failure = std::fs::read_to_string(snippet.with_extension("err")).ok();
        let result = server
            .call("run_python", json!({ "code": code, "stdin": stdin }))
            .await;
        if KNOWN_DIFFERENCES.iter().any(|(known, _)| *known == name) {
            continue;
        }
        compared += 1;
        let problem = match &failure {
            None if result.is_error() => Some(format!("an error result:\n{}", result.text())),
            None => {
                let got = result.structured()["stdout"].as_str().unwrap_or_default();
                (got != expected && Some(got) != expected_314.as_deref())
                    .then(|| format!("stdout:\n{got}"))
            }
            Some(_) if !result.is_error() => Some(format!(
                "success, but CPython failed; stdout:\n{}",
                result.text()
            )),
            Some(last_line) => {
                // An error result's text is the output so far, then the traceback.
                let text = result.text();
                let last_line = last_line.trim();
                (!text.starts_with(&expected) || !text.contains(last_line))
                    .then(|| format!("an error result:\n{text}"))
            }
        };
        if let Some(got) = problem {
            mismatches.push(format!("--- {name}\nexpected:\n{expected}\ngot {got}"));
        }
    }
    assert!(compared >= 40, "only {compared} snippets were compared");
    assert!(
        mismatches.is_empty(),
        "{} of {compared} snippets differ from CPython:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    still_serving(&server, "the corpus").await;
    server.stop().await;
}

#[tokio::test]
async fn python_files_stay_inside_the_mounts() {
    let fixture = sandbox();
    let server = start(&fixture).await;
    let escapes = [
        ("an absolute path", "/etc/passwd".to_string()),
        ("`..` out of the mount", "../secret.txt".to_string()),
        ("a symlink out", "link-out".to_string()),
        (
            "a sibling sharing the prefix",
            fixture.arg("data-evil/secret"),
        ),
        ("the parent by its absolute path", fixture.arg("secret.txt")),
    ];
    for (what, path) in escapes {
        let code = format!(
            "try:\n    print(open({path:?}).read())\nexcept OSError as e:\n    \
             print('refused', type(e).__name__)\n"
        );
        let result = run(&server, &code).await;
        let text = result.ok_text();
        assert!(
            text.starts_with("refused "),
            "{what} ({path}) was not refused: {text}"
        );
        assert!(!text.contains("secret"), "{what} leaked: {text}");
    }
    // Nor can a module be imported from outside them, whatever `sys.path` says.
    for folder in ["..", "../data-evil", &fixture.arg("data-evil"), "/"] {
        let code = format!(
            "import sys\nsys.path.insert(0, {folder:?})\ntry:\n    import evil\nexcept \
             ModuleNotFoundError as e:\n    print('refused', e.name)\n"
        );
        let result = run(&server, &code).await;
        assert_eq!(
            result.ok_text(),
            "refused evil\n",
            "importing from {folder}"
        );
    }
    // Inside: the working directory is the first mount, and files there read.
    let inside = run(
        &server,
        "import os\nprint(os.getcwd())\nprint(open('sales.csv').readline().strip())",
    )
    .await;
    assert_eq!(
        inside.ok_text(),
        format!("{}\ndate,region,product,units,price\n", fixture.arg("data"))
    );
    // A read-only mount refuses writes; a read-write one takes them, at its host path.
    let refused = run(
        &server,
        "try:\n    open('new.txt', 'w').write('x')\n    print('written')\nexcept OSError as e:\n    \
         print('refused', type(e).__name__)\n",
    )
    .await;
    assert!(
        refused.ok_text().starts_with("refused "),
        "a write to the read-only mount was not refused: {}",
        refused.text()
    );
    assert!(!fixture.path("data/new.txt").exists());
    let out = fixture.arg("out/result.txt");
    let written = run(
        &server,
        &format!("open({out:?}, 'w').write('from python\\n')\nprint(open({out:?}).read(), end='')"),
    )
    .await;
    assert_eq!(written.ok_text(), "from python\n");
    assert_eq!(
        std::fs::read_to_string(fixture.path("out/result.txt")).unwrap(),
        "from python\n"
    );
    still_serving(&server, "the file escapes").await;
    server.stop().await;
}

#[tokio::test]
async fn python_runaway_code_is_bounded() {
    let fixture = sandbox();
    let server = start(&fixture).await;

    let endless = run(&server, "while True:\n    pass\n").await;
    let text = endless.error_text();
    assert!(
        text.contains("3000 ms") || text.contains("timed out"),
        "{text}"
    );
    still_serving(&server, "an endless loop").await;

    let bomb = run(
        &server,
        "x = []\nwhile True:\n    x.append(bytearray(16 * 1024 * 1024))\n",
    )
    .await;
    let text = bomb.error_text();
    assert!(text.to_lowercase().contains("memory"), "{text}");
    still_serving(&server, "a memory bomb").await;

    let flood = run(&server, "while True:\n    print('x' * 999)\n").await;
    let text = flood.ok_text();
    assert_eq!(flood.structured()["truncated"], json!(true), "{}", flood.0);
    let stdout = flood.structured()["stdout"].as_str().unwrap();
    assert!(stdout.len() <= MAX_OUTPUT && stdout.len() > MAX_OUTPUT - 1000);
    assert!(
        text.ends_with(&format!(
            "[output passed {MAX_OUTPUT} bytes; the run was stopped]"
        )),
        "{}",
        &text[text.len() - 200..]
    );
    still_serving(&server, "an output flood").await;

    // Catching the stop does not let the code print on.
    let caught = run(
        &server,
        "try:\n    while True:\n        print('y' * 999)\nexcept BaseException:\n    pass\n\
         print('after the stop')\n",
    )
    .await;
    assert_eq!(caught.structured()["truncated"], json!(true));
    assert!(!caught.text().contains("after the stop"));
    still_serving(&server, "a caught output stop").await;

    let recursion = run(&server, "def f(n):\n    return f(n + 1)\nf(0)\n").await;
    assert!(
        recursion.error_text().contains("RecursionError"),
        "{}",
        recursion.text()
    );
    still_serving(&server, "deep recursion").await;

    // Recursion through builtins takes more native stack per level: it may end as a crash
    // (the wasm stack) rather than a RecursionError, but always as an error result.
    let native = run(
        &server,
        "class C:\n    def __getattr__(self, name):\n        return getattr(self, name + 'x')\n\
         C().a\n",
    )
    .await;
    assert!(native.is_error(), "{}", native.0);
    still_serving(&server, "deep recursion through builtins").await;
    server.stop().await;
}

#[tokio::test]
async fn python_forbidden_things_fail_cleanly() {
    let fixture = sandbox();
    let server = start(&fixture).await;
    let cases = [
        (
            "import subprocess\nsubprocess.run(['ls'])",
            "ImportError: No module named 'subprocess': run_python runs in a sandbox and it \
             cannot start processes",
        ),
        (
            "import os\nos.system('ls')",
            "PermissionError: os.system is not available",
        ),
        (
            // `os.popen` is written in Python over `subprocess`.
            "import os\nos.popen('ls')",
            "ImportError: No module named 'subprocess': run_python runs in a sandbox",
        ),
        (
            "import socket\nsocket.create_connection(('example.com', 80))",
            "PermissionError: socket.getaddrinfo is not available: run_python runs in a sandbox \
             that has no network sockets",
        ),
        (
            // What imports `socket` at its top imports; reaching the network fails.
            "import urllib.request\nurllib.request.urlopen('http://example.com/')",
            "<urlopen error socket.getaddrinfo is not available: run_python runs in a sandbox \
             that has no network sockets>",
        ),
        (
            "import ctypes\nctypes.CDLL(None)",
            "ImportError: No module named 'ctypes': run_python runs in a sandbox and it cannot \
             load native code",
        ),
        (
            "eval(\"__import__('subprocess')\").run(['ls'])",
            "ImportError: No module named 'subprocess'",
        ),
        (
            "exec('import os; os.system(\"id\")')",
            "PermissionError: os.system is not available",
        ),
        (
            "import importlib\nimportlib.import_module('_socket').socket()",
            "PermissionError: socket.socket is not available: run_python runs in a sandbox that \
             has no network sockets",
        ),
    ];
    for (code, message) in cases {
        // Uncaught: an error result with the traceback.
        let result = run(&server, code).await;
        let text = result.error_text();
        assert!(text.contains(message), "`{code}`: {text}");
        assert!(text.contains("Traceback"), "`{code}`: {text}");
        // Caught: the code goes on.
        let indented = code.replace('\n', "\n    ");
        let caught = run(
            &server,
            &format!("try:\n    {indented}\nexcept Exception as e:\n    print('caught', type(e).__name__)\n"),
        )
        .await;
        assert!(
            caught.ok_text().starts_with("caught "),
            "`{code}`: {}",
            caught.text()
        );
    }
    still_serving(&server, "the forbidden calls").await;

    let env = run(
        &server,
        &format!(
            "import os\nprint(os.environ.get({GRANTED_VAR:?}), os.environ.get({SECRET_VAR:?}), \
             'HOME' in os.environ)"
        ),
    )
    .await;
    assert_eq!(env.ok_text(), "granted-value None False\n");
    server.stop().await;
}

#[tokio::test]
async fn python_results_carry_stdout_stderr_and_tracebacks() {
    let fixture = sandbox();
    let server = start(&fixture).await;
    let both = run(
        &server,
        "import sys\nprint('out')\nprint('err', file=sys.stderr)",
    )
    .await;
    assert_eq!(
        both.structured(),
        &json!({"stdout": "out\n", "stderr": "err\n", "truncated": false})
    );
    assert_eq!(both.ok_text(), "out\n--- stderr ---\nerr\n");

    let failed = run(
        &server,
        "print('so far')\ndef f():\n    raise KeyError('k')\nf()",
    )
    .await;
    let text = failed.error_text();
    assert!(text.starts_with("so far\n--- error ---\nTraceback (most recent call last):\n"));
    assert!(
        text.contains("line 4, in <module>") && text.contains("line 3, in f"),
        "{text}"
    );
    assert!(text.ends_with("KeyError: 'k'\n"), "{text}");

    // OS errors read as CPython's (the C library's message, not Rust's with the number again),
    // from `os` and from `open`, and the traceback has only the code's own frames.
    let os_errors = run(
        &server,
        "import os\ntry:\n    os.listdir('no-dir')\nexcept OSError as e:\n    print(e, e.args)\n\
         open('no-file.txt')",
    )
    .await;
    let text = os_errors.error_text();
    assert!(
        text.starts_with(
            "[Errno 44] No such file or directory: 'no-dir' (44, 'No such file or directory')\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with("FileNotFoundError: [Errno 44] No such file or directory: 'no-file.txt'\n"),
        "{text}"
    );
    assert!(
        text.contains("line 6, in <module>") && !text.contains("<prelude>"),
        "{text}"
    );

    let exited = run(&server, "import sys\nsys.exit('bad input')").await;
    assert!(
        exited.error_text().contains("bad input"),
        "{}",
        exited.text()
    );
    let fine = run(&server, "import sys\nprint('x')\nsys.exit(0)").await;
    assert_eq!(fine.ok_text(), "x\n");

    let stdin = server
        .call(
            "run_python",
            json!({"code": "print(input()[::-1])", "stdin": "abc\n"}),
        )
        .await;
    assert_eq!(stdin.ok_text(), "cba\n");

    // No state survives between calls.
    run(&server, "import builtins\nbuiltins.leftover = 1").await;
    let fresh = run(&server, "print(hasattr(__builtins__, 'leftover'))").await;
    assert_eq!(fresh.ok_text(), "False\n");

    let tools = server.tools().await;
    let tool: &Value = tools.iter().find(|t| t["name"] == "run_python").unwrap();
    assert!(
        tool["description"]
            .as_str()
            .unwrap()
            .contains("fresh interpreter")
    );
    assert!(tool["outputSchema"]["properties"]["truncated"].is_object());
    server.stop().await;
}
