//! `toolcell new`: a plugin project with one example tool, a README and a
//! `plugins.toml` that serves the built component.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{Embedded, Language, check_name, write_files};

/// The Rust project: a `cdylib` crate on `toolcell-sdk`.
const RUST: &[Embedded] = embed!("sdk/template", "Cargo.toml", "src/lib.rs", ".gitignore");
/// The Python project: a module on the `toolcell` package.
const PYTHON: &[Embedded] = embed!(
    "sdk/python/template",
    "app.py",
    "pyproject.toml",
    ".gitignore"
);
/// The JavaScript project: an ES module on the `toolcell` module.
const JS: &[Embedded] = embed!("sdk/js/template", "app.js", "package.json", ".gitignore");

/// The configuration written beside every new project: the built component,
/// with the project folder mounted read-only.
const PLUGINS_TOML: &str = r#"# Serves this plugin: `toolcell serve --config plugins.toml`, or one call with
# `toolcell call --config plugins.toml hello '{"name": "world"}'`.
# Toolcell's docs/configuration.md documents every key; `toolcell check
# --config plugins.toml` validates the file and loads the plugin.

[server]
# Tools are enabled by category; "write", "execute" and "network" are off
# unless listed here.
categories = ["read", "search", "vcs"]

[[plugin]]
name = "{{name}}"
# The component `toolcell build` writes, relative to this file.
path = "{{name}}.wasm"
# Folders the plugin may see, at their real paths: this project, read-only.
mounts = [{ host = ".", mode = "ro" }]
# Host environment variables passed through, and hosts it may reach (none).
env = []
network = []
"#;

/// What `toolcell new` made.
#[derive(Debug)]
pub struct Created {
    /// The project folder.
    pub dir: PathBuf,
    /// The files written, relative to it.
    pub files: Vec<String>,
}

/// Writes a project named `name` in `language` into `dir` (default
/// `./<name>`), which must not exist or be empty.
pub fn new_project(name: &str, language: Language, dir: Option<&Path>) -> Result<Created> {
    check_name(name)?;
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_path_buf);
    if let Ok(mut entries) = std::fs::read_dir(&dir)
        && entries.next().is_some()
    {
        bail!(
            "{} exists and is not empty; choose another folder with --dir",
            dir.display()
        );
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let sdk = rust_sdk_dependency();
    let values = [("name", name), ("sdk", sdk.as_str())];
    let template = match language {
        Language::Rust => RUST,
        Language::Python => PYTHON,
        Language::Js => JS,
    };
    let readme = readme(language);
    let common = [
        ("plugins.toml", PLUGINS_TOML),
        ("README.md", readme.as_str()),
    ];
    write_files(&dir, template, &values)?;
    write_files(&dir, &common, &values)?;
    let mut files: Vec<String> = template.iter().map(|(file, _)| file.to_string()).collect();
    files.extend(common.iter().map(|(file, _)| file.to_string()));
    Ok(Created { dir, files })
}

/// The `toolcell-sdk` dependency of a new Rust project: the SDK of the
/// checkout this binary was built from when it is still there, else the
/// git repository.
fn rust_sdk_dependency() -> String {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    match dunce::canonicalize(&sdk) {
        Ok(sdk) if sdk.join("Cargo.toml").is_file() => {
            let path = sdk
                .to_string_lossy()
                .replace('\\', "/")
                .replace('"', "\\\"");
            format!("{{ path = \"{path}\" }}")
        }
        _ => format!(
            "{{ git = \"{}\" }}",
            env!("CARGO_PKG_REPOSITORY").trim_end_matches('/')
        ),
    }
}

/// The new project's README: how to build, test and grant it.
fn readme(language: Language) -> String {
    let (source, edit) = match language {
        Language::Rust => (
            "src/lib.rs",
            "Each tool is a function that takes a struct of arguments (its JSON Schema is \
             derived with schemars) and returns `Result<Output, Error>`; an `Err` reaches the \
             model as a result with `isError: true`. The SDK's crate docs (`cargo doc --open`) \
             describe `Tool`, `Output`, `Error`, `toolcell_sdk::fs` and `toolcell_sdk::host`.\n\n\
             `Cargo.toml` takes `toolcell-sdk` from a Toolcell checkout by path; to build \
             without one, use its git repository instead:\n\n\
             ```toml\ntoolcell-sdk = { git = \"https://github.com/toolcell/toolcell\" }\n```",
        ),
        Language::Python => (
            "app.py",
            "Each tool is a function decorated with `@plugin.tool(...)`; its type hints give \
             the input schema, its docstring the description, and an exception (`toolcell.Error` \
             for a message meant for the model) becomes a result with `isError: true`. \
             `toolcell.fs.resolve` resolves a path against the first mount and `toolcell.host` \
             logs, reports progress, checks for cancellation and reads the `config` table.\n\n\
             `toolcell build` installs componentize-py into Toolcell's cache directory the \
             first time (it needs `python3`); the component bundles CPython, so it is tens of \
             megabytes.",
        ),
        Language::Js => (
            "app.js",
            "Each tool is registered with `plugin.tool({...}, handler)`, with its input schema \
             as a JSON Schema object; a thrown `ToolError` (or any exception) becomes a result \
             with `isError: true`. `fs` reads files under the mounts (a relative path resolves \
             against the first one) and `host` logs, reports progress, checks for cancellation \
             and reads the `config` table.\n\n\
             `toolcell build` installs componentize-js and esbuild into Toolcell's cache directory \
             the first time (it needs `node` and `npm`).",
        ),
    };
    format!(
        "# {{{{name}}}}\n\n\
         A [Toolcell](https://github.com/toolcell/toolcell) plugin written in {language}: \
         a WebAssembly component whose tools run in a sandbox that reaches only what \
         `plugins.toml` grants.\n\n\
         ## Build\n\n\
         ```sh\ntoolcell build\n```\n\n\
         writes `{{{{name}}}}.wasm` here. `toolcell inspect {{{{name}}}}.wasm` shows its tools \
         and the capabilities it asks for.\n\n\
         ## Try it\n\n\
         ```sh\ntoolcell call --config plugins.toml hello '{{\"name\": \"world\"}}'\n```\n\n\
         prints `Hello, world!`. `toolcell serve --config plugins.toml` serves the tools over \
         MCP on stdio; point a client (Claude Desktop, an agent) at that command.\n\n\
         ## Grant it\n\n\
         `plugins.toml` mounts this folder read-only. A plugin sees nothing else: give it more \
         with `mounts` (`mode = \"rw\"` for writes, and add `\"write\"` to `categories`), \
         `env` (host environment variables by name) and `network` (hosts it may reach). To \
         serve it beside other plugins, copy its `[[plugin]]` table into that `plugins.toml` \
         with `path` pointing at the `.wasm` file.\n\n\
         ## Change it\n\n\
         The tools are in `{source}`. {edit}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_project_is_complete_and_refuses_to_overwrite() {
        let root = tempfile::tempdir().unwrap();
        for language in [Language::Rust, Language::Python, Language::Js] {
            let dir = root.path().join(format!("{language:?}"));
            let created = new_project("greeter", language, Some(&dir)).unwrap();
            assert!(created.files.contains(&"plugins.toml".to_string()));
            for file in &created.files {
                let text = std::fs::read_to_string(dir.join(file)).unwrap();
                assert!(!text.contains("{{"), "{file} keeps a placeholder:\n{text}");
            }
            let plugins = std::fs::read_to_string(dir.join("plugins.toml")).unwrap();
            assert!(plugins.contains("path = \"greeter.wasm\""), "{plugins}");
            let project = super::super::Project::find(&dir).unwrap();
            assert_eq!(
                (project.language, project.name.as_str()),
                (language, "greeter")
            );
            let again = new_project("greeter", language, Some(&dir));
            assert!(again.unwrap_err().to_string().contains("not empty"));
        }
    }

    #[test]
    fn a_rust_project_depends_on_this_checkouts_sdk() {
        let dependency = rust_sdk_dependency();
        assert!(dependency.starts_with("{ path = \""), "{dependency}");
        assert!(dependency.ends_with("/sdk\" }"), "{dependency}");
    }
}
