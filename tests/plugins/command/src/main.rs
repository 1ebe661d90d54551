//! A test-only WASI command, a plain Rust CLI: `command [--exit N] [--escape] [FILE...]`.
//! It prints its arguments and stdin to stdout, each FILE's text (or why it could not be read)
//! to stdout, a line to stderr, and exits with N (default 0). `--escape` tries `../x`,
//! `/etc/passwd` and the symlink `link` beside the first FILE, each of which the sandbox refuses.
#![allow(missing_docs)]

use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    println!("argv: {}", args.join(" "));
    let mut stdin = String::new();
    _ = std::io::stdin().read_to_string(&mut stdin);
    println!("stdin: {stdin}");
    let mut code = 0;
    let mut files = Vec::new();
    let mut rest = args.iter().skip(1);
    let mut escape = false;
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--exit" => code = rest.next().and_then(|n| n.parse().ok()).unwrap_or(1),
            "--escape" => escape = true,
            _ => files.push(arg.clone()),
        }
    }
    for file in &files {
        match std::fs::read_to_string(file) {
            Ok(text) => println!("{file}: {text}"),
            Err(error) => println!("{file}: error: {error}"),
        }
    }
    if escape {
        let base = files
            .first()
            .and_then(|f| std::path::Path::new(f).parent())
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        for target in [base.join("../x"), "/etc/passwd".into(), base.join("link")] {
            match std::fs::read_to_string(&target) {
                Ok(_) => println!("escaped: {}", target.display()),
                Err(_) => println!("refused: {}", target.display()),
            }
        }
    }
    eprintln!("to stderr");
    std::process::exit(code);
}
