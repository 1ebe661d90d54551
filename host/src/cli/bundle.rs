//! `toolcell bundle`: a Claude Desktop extension (an MCP Bundle, `.mcpb`)
//! that holds this binary, or one built for another platform.
//!
//! The bundle is a zip of `manifest.json` (MCPB manifest 0.3), the binary
//! under `server/` and `icon.png`. Its settings let the user choose the
//! folders the tools may read and those the write tools may change; Claude
//! Desktop passes them as `serve --named-only DIR... --writable DIR...`, so
//! that choosing none serves none (never the folder Claude Desktop starts
//! the server in).

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, System, ZipWriter};

/// The MCPB manifest version written (the current one `@anthropic-ai/mcpb`
/// 2.1.2 validates).
pub const MANIFEST_VERSION: &str = "0.3";

/// The icon, drawn by `host/assets/make_icon.py`.
const ICON: &[u8] = include_bytes!("../../assets/icon.png");

#[derive(Args)]
pub struct BundleArgs {
    /// The folder to write the bundle into (created if missing).
    #[arg(long, short, value_name = "DIR", default_value = ".")]
    pub output: PathBuf,

    /// Bundle a binary built for another platform: its Rust target triple,
    /// e.g. aarch64-apple-darwin, x86_64-pc-windows-msvc (with --binary).
    #[arg(long, value_name = "TRIPLE", requires = "binary")]
    pub target: Option<String>,

    /// The toolcell binary built for --target (with --target). It should be
    /// the same version as this one, whose version the manifest states.
    #[arg(long, value_name = "FILE", requires = "target")]
    pub binary: Option<PathBuf>,
}

/// An MCPB platform: `compatibility.platforms` names only the OS; the file
/// name adds the architecture, as Node names both (`process.platform`,
/// `process.arch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Platform {
    /// `darwin`, `win32` or `linux`.
    pub os: &'static str,
    /// `x64`, `arm64`, `ia32`, ...
    pub arch: &'static str,
}

impl Platform {
    /// The platform this binary was built for.
    pub fn current() -> Result<Platform> {
        Platform::from_parts(std::env::consts::OS, std::env::consts::ARCH)
    }

    /// The platform of a Rust target triple (`aarch64-apple-darwin`,
    /// `x86_64-pc-windows-gnu`, `x86_64-unknown-linux-musl`, ...).
    pub fn from_triple(triple: &str) -> Result<Platform> {
        let mut parts = triple.split('-');
        let arch = parts.next().unwrap_or_default();
        let rest: Vec<&str> = parts.collect();
        let os = if rest.contains(&"darwin") {
            "macos"
        } else if rest.contains(&"windows") {
            "windows"
        } else if rest.contains(&"linux") {
            "linux"
        } else {
            bail!(
                "target {triple:?}: Claude Desktop extensions exist for macOS (*-apple-darwin), \
                 Windows (*-pc-windows-*) and Linux (*-linux-*) only"
            )
        };
        Platform::from_parts(os, arch)
            .with_context(|| format!("target {triple:?} is not one a bundle can be made for"))
    }

    /// From Rust's names (`std::env::consts::OS` and `ARCH`, or a triple's
    /// parts) to Node's.
    fn from_parts(os: &str, arch: &str) -> Result<Platform> {
        let os = match os {
            "macos" => "darwin",
            "windows" => "win32",
            "linux" => "linux",
            other => bail!("no Claude Desktop extension exists for {other}"),
        };
        let arch = match arch {
            "x86_64" => "x64",
            "aarch64" | "arm64" => "arm64",
            "x86" | "i386" | "i586" | "i686" => "ia32",
            other => bail!("no Claude Desktop extension exists for the {other} architecture"),
        };
        Ok(Platform { os, arch })
    }

    /// `darwin-arm64`, `win32-x64`, `linux-x64`, ...
    pub fn name(&self) -> String {
        format!("{}-{}", self.os, self.arch)
    }

    /// The binary's name inside the bundle.
    pub fn entry_point(&self) -> &'static str {
        match self.os {
            "win32" => "server/toolcell.exe",
            _ => "server/toolcell",
        }
    }
}

/// The bundle's file name: `toolcell-VERSION-PLATFORM.mcpb`.
pub fn file_name(platform: &Platform) -> String {
    format!(
        "toolcell-{}-{}.mcpb",
        env!("CARGO_PKG_VERSION"),
        platform.name()
    )
}

/// `manifest.json` for a bundle of `platform`.
pub fn manifest(platform: &Platform) -> Value {
    let entry_point = platform.entry_point();
    let repository = env!("CARGO_PKG_REPOSITORY");
    json!({
        "manifest_version": MANIFEST_VERSION,
        "name": "toolcell",
        "display_name": "Toolcell",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "File, search and git tools that see only the folders you choose.",
        "long_description": "Toolcell is an MCP server whose tools are WebAssembly components, \
            each run in a sandbox of its own that reaches only the folders you choose in this \
            extension's settings. It reads, lists and searches files and reads git history in \
            those folders, and writes only in the ones you make writable; with no folder chosen, \
            the tools see nothing.",
        "author": author(env!("CARGO_PKG_AUTHORS"), repository),
        "repository": { "type": "git", "url": repository },
        "homepage": repository,
        "license": env!("CARGO_PKG_LICENSE"),
        "icon": "icon.png",
        "server": {
            "type": "binary",
            "entry_point": entry_point,
            "mcp_config": {
                "command": format!("${{__dirname}}/{entry_point}"),
                "args": [
                    "serve",
                    "--named-only",
                    "${user_config.folders}",
                    "--writable",
                    "${user_config.writable_folders}",
                ],
            },
        },
        "tools_generated": true,
        "keywords": ["files", "search", "git", "sandbox", "webassembly"],
        "compatibility": { "platforms": [platform.os] },
        "user_config": {
            "folders": {
                "type": "directory",
                "title": "Folders to read",
                "description": "Folders the tools may read, list and search (read-only). With \
                    none chosen, the tools see no folder at all.",
                "multiple": true,
                "required": false,
                "default": [],
            },
            "writable_folders": {
                "type": "directory",
                "title": "Folders to change",
                "description": "Folders the write tools may also change: create, edit, append \
                    to, copy and move files in. None by default.",
                "multiple": true,
                "required": false,
                "default": [],
            },
        },
    })
}

/// The manifest's `author`: the first of Cargo's authors (`Name <email>`),
/// or, when the package names none, the project with its repository.
fn author(authors: &str, repository: &str) -> Value {
    let first = authors.split(':').map(str::trim).find(|a| !a.is_empty());
    let Some(first) = first else {
        return json!({ "name": "The Toolcell developers", "url": repository });
    };
    match first.split_once('<') {
        Some((name, email)) => json!({
            "name": name.trim(),
            "email": email.trim_end_matches('>').trim(),
        }),
        None => json!({ "name": first }),
    }
}

/// The platform of an executable from `head`, its first bytes: the OS from
/// the format (ELF for Linux, Mach-O for macOS, PE for Windows) and the
/// architecture from its header, when the header names one of
/// [`Platform::from_parts`]'s (`None` for a universal Mach-O, or one it
/// does not know). `None` for anything else.
fn executable_platform(head: &[u8]) -> Option<(&'static str, Option<&'static str>)> {
    let u16_le = |at: usize| Some(u16::from_le_bytes(head.get(at..at + 2)?.try_into().ok()?));
    let u32_le = |at: usize| Some(u32::from_le_bytes(head.get(at..at + 4)?.try_into().ok()?));
    if head.starts_with(b"\x7fELF") {
        // e_machine, little-endian (byte 5 is 1).
        let arch = match (head.get(5), u16_le(18)) {
            (Some(1), Some(0x3e)) => Some("x64"),
            (Some(1), Some(0xb7)) => Some("arm64"),
            (Some(1), Some(0x03)) => Some("ia32"),
            _ => None,
        };
        return Some(("linux", arch));
    }
    if head.starts_with(b"MZ") {
        // The PE header's offset is at 0x3c; its machine follows "PE\0\0".
        let pe = u32_le(0x3c).and_then(|at| usize::try_from(at).ok());
        let machine = pe
            .filter(|&at| head.get(at..at + 4) == Some(b"PE\0\0"))
            .and_then(|at| u16_le(at + 4));
        let arch = match machine {
            Some(0x8664) => Some("x64"),
            Some(0xaa64) => Some("arm64"),
            Some(0x014c) => Some("ia32"),
            _ => None,
        };
        return Some(("win32", arch));
    }
    match u32_le(0)? {
        // 64-bit and 32-bit, little-endian; cputype follows.
        0xfeed_facf | 0xfeed_face => {
            let arch = match u32_le(4)? {
                0x0100_0007 => Some("x64"),
                0x0100_000c => Some("arm64"),
                _ => None,
            };
            Some(("darwin", arch))
        }
        // Universal (big-endian magic 0xcafebabe).
        0xbeba_feca => Some(("darwin", None)),
        _ => None,
    }
}

/// Why the file whose first bytes are `head` cannot go into a bundle for
/// `platform`, if it cannot.
fn wrong_executable(head: &[u8], platform: &Platform) -> Option<String> {
    let format = match platform.os {
        "linux" => "an ELF file",
        "win32" => "a .exe (PE) file",
        _ => "a Mach-O file",
    };
    match executable_platform(head) {
        Some((os, _)) if os != platform.os => Some(format!(
            "it is an executable for {os}, and a bundle for {} needs {format}",
            platform.name()
        )),
        Some((_, Some(arch))) if arch != platform.arch => Some(format!(
            "it is built for {arch}, and a bundle for {} needs {}",
            platform.name(),
            platform.arch
        )),
        Some(_) => None,
        None => Some(format!(
            "it is not an executable; a bundle for {} needs {format}",
            platform.name()
        )),
    }
}

/// Writes the bundle of `binary` for `platform` into `out`.
fn write_bundle(out: impl Write + io::Seek, platform: &Platform, binary: &Path) -> Result<()> {
    let mut manifest = serde_json::to_vec_pretty(&manifest(platform))?;
    manifest.push(b'\n');
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .system(System::Unix);
    let mut zip = ZipWriter::new(out);
    zip.start_file("manifest.json", options.unix_permissions(0o644))?;
    zip.write_all(&manifest)?;
    zip.start_file("icon.png", options.unix_permissions(0o644))?;
    zip.write_all(ICON)?;
    let mut file =
        File::open(binary).with_context(|| format!("cannot open {}", binary.display()))?;
    zip.start_file(platform.entry_point(), options.unix_permissions(0o755))?;
    io::copy(&mut file, &mut zip).with_context(|| format!("cannot read {}", binary.display()))?;
    zip.finish()?.flush()?;
    Ok(())
}

/// Runs `toolcell bundle`: writes the bundle and prints its path.
pub fn run(args: &BundleArgs) -> Result<ExitCode> {
    let (platform, binary) = match (&args.target, &args.binary) {
        (Some(triple), Some(binary)) => (Platform::from_triple(triple)?, binary.clone()),
        (None, None) => (
            Platform::current()?,
            std::env::current_exe().context("cannot find this program's own file")?,
        ),
        _ => bail!("--target and --binary go together"),
    };
    let mut head = Vec::new();
    File::open(&binary)
        .and_then(|file| file.take(4096).read_to_end(&mut head))
        .with_context(|| format!("cannot read {}", binary.display()))?;
    if let Some(why) = wrong_executable(&head, &platform) {
        bail!("{}: {why}", binary.display());
    }
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
    let path = std::path::absolute(args.output.join(file_name(&platform)))?;
    // Written beside its final place and renamed there: an interrupted run
    // leaves no half-written bundle under the bundle's name.
    let partial = path.with_extension("mcpb.partial");
    let written = File::create(&partial)
        .map_err(anyhow::Error::from)
        .and_then(|file| write_bundle(io::BufWriter::new(file), &platform, &binary))
        .and_then(|()| Ok(std::fs::rename(&partial, &path)?));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(error.context(format!("cannot write {}", path.display())));
    }
    println!("{}", path.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn platform_names_from_triples() {
        let cases = [
            ("aarch64-apple-darwin", "darwin-arm64", "server/toolcell"),
            ("x86_64-apple-darwin", "darwin-x64", "server/toolcell"),
            ("x86_64-pc-windows-msvc", "win32-x64", "server/toolcell.exe"),
            ("x86_64-pc-windows-gnu", "win32-x64", "server/toolcell.exe"),
            (
                "aarch64-pc-windows-msvc",
                "win32-arm64",
                "server/toolcell.exe",
            ),
            ("i686-pc-windows-msvc", "win32-ia32", "server/toolcell.exe"),
            ("x86_64-unknown-linux-gnu", "linux-x64", "server/toolcell"),
            ("x86_64-unknown-linux-musl", "linux-x64", "server/toolcell"),
            (
                "aarch64-unknown-linux-gnu",
                "linux-arm64",
                "server/toolcell",
            ),
        ];
        for (triple, name, entry_point) in cases {
            let platform = Platform::from_triple(triple).unwrap();
            assert_eq!(platform.name(), name, "{triple}");
            assert_eq!(platform.entry_point(), entry_point, "{triple}");
        }
        for triple in [
            "wasm32-wasip2",
            "x86_64-unknown-freebsd",
            "riscv64gc-unknown-linux-gnu",
            "",
        ] {
            assert!(Platform::from_triple(triple).is_err(), "{triple:?}");
        }
        let current = Platform::current().unwrap();
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert_eq!(current.name(), "linux-x64");
        }
        assert_eq!(
            file_name(&current),
            format!(
                "toolcell-{}-{}.mcpb",
                env!("CARGO_PKG_VERSION"),
                current.name()
            )
        );
    }

    #[test]
    fn manifest_has_the_required_fields() {
        let platform = Platform::from_triple("x86_64-pc-windows-msvc").unwrap();
        let manifest = manifest(&platform);
        assert_eq!(manifest["manifest_version"], "0.3");
        assert_eq!(manifest["name"], "toolcell");
        assert_eq!(manifest["display_name"], "Toolcell");
        assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"));
        for key in ["description", "long_description", "license", "icon"] {
            let text = manifest[key].as_str().unwrap_or_default();
            assert!(!text.is_empty(), "{key}");
        }
        assert!(manifest["author"]["name"].is_string());
        assert_eq!(manifest["repository"]["type"], "git");
        assert!(
            manifest["repository"]["url"]
                .as_str()
                .is_some_and(|url| url.starts_with("https://"))
        );
        let server = &manifest["server"];
        assert_eq!(server["type"], "binary");
        assert_eq!(server["entry_point"], "server/toolcell.exe");
        assert_eq!(
            server["mcp_config"]["command"],
            "${__dirname}/server/toolcell.exe"
        );
        assert_eq!(
            server["mcp_config"]["args"],
            json!([
                "serve",
                "--named-only",
                "${user_config.folders}",
                "--writable",
                "${user_config.writable_folders}"
            ])
        );
        assert_eq!(manifest["tools_generated"], true);
        assert_eq!(manifest["compatibility"]["platforms"], json!(["win32"]));
        for key in ["folders", "writable_folders"] {
            let option = &manifest["user_config"][key];
            assert_eq!(option["type"], "directory", "{key}");
            assert_eq!(option["multiple"], true, "{key}");
            assert_eq!(option["required"], false, "{key}");
            assert_eq!(option["default"], json!([]), "{key}");
            assert!(option["title"].is_string() && option["description"].is_string());
        }
        // Every `${user_config.KEY}` names an option.
        for arg in server["mcp_config"]["args"].as_array().unwrap() {
            if let Some(key) = arg
                .as_str()
                .and_then(|arg| arg.strip_prefix("${user_config."))
            {
                let key = key.trim_end_matches('}');
                assert!(manifest["user_config"][key].is_object(), "{key}");
            }
        }
    }

    #[test]
    fn authors() {
        let repo = "https://example.com/toolcell";
        assert_eq!(
            author("", repo),
            json!({ "name": "The Toolcell developers", "url": repo })
        );
        assert_eq!(
            author("Ada Lovelace <ada@example.com>:Bob", repo),
            json!({ "name": "Ada Lovelace", "email": "ada@example.com" })
        );
        assert_eq!(author("Bob", repo), json!({ "name": "Bob" }));
    }

    #[test]
    fn executables_by_platform() {
        let platform = |triple| Platform::from_triple(triple).unwrap();
        let linux = platform("x86_64-unknown-linux-gnu");
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(20, 0);
        elf[18] = 0x3e;
        assert_eq!(wrong_executable(&elf, &linux), None);
        elf[18] = 0xb7;
        assert_eq!(executable_platform(&elf), Some(("linux", Some("arm64"))));
        let why = wrong_executable(&elf, &linux).unwrap();
        assert!(why.contains("built for arm64"), "{why}");
        // The test binary itself.
        let mut own = Vec::new();
        let file = File::open(std::env::current_exe().unwrap()).unwrap();
        file.take(4096).read_to_end(&mut own).unwrap();
        assert_eq!(wrong_executable(&own, &Platform::current().unwrap()), None);

        let windows = platform("x86_64-pc-windows-gnu");
        let mut pe = b"MZ".to_vec();
        pe.resize(0x80, 0);
        pe[0x3c] = 0x80;
        pe.extend(b"PE\0\0\x64\x86");
        assert_eq!(executable_platform(&pe), Some(("win32", Some("x64"))));
        assert_eq!(wrong_executable(&pe, &windows), None);
        let why = wrong_executable(&pe, &linux).unwrap();
        assert!(why.contains("for win32"), "{why}");

        let mac = platform("aarch64-apple-darwin");
        let macho = [0xcf, 0xfa, 0xed, 0xfe, 0x0c, 0x00, 0x00, 0x01];
        assert_eq!(executable_platform(&macho), Some(("darwin", Some("arm64"))));
        assert_eq!(wrong_executable(&macho, &mac), None);
        assert!(wrong_executable(&macho, &platform("x86_64-apple-darwin")).is_some());
        let universal = [0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2];
        assert_eq!(wrong_executable(&universal, &mac), None);

        assert_eq!(executable_platform(b"#!/bin/sh\n"), None);
        assert!(wrong_executable(b"", &windows).is_some());
    }
}
