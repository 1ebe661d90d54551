//! A test-only plugin whose tools misbehave: each one is something a buggy
//! or hostile third-party plugin could do, and the host must turn it into a
//! bounded, readable outcome while the server keeps serving.

use std::sync::atomic::{AtomicU8, Ordering};

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Category, Error, Output, Tool, host};

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Nothing {}

/// A size or count.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Count {
    /// How many (bytes, lines, steps: see the tool).
    n: u64,
}

/// A path to open, how many times, and how long to hold it open.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Hold {
    /// The file, absolute or relative to the first mount.
    path: String,
    /// How many times to open it.
    n: u64,
    /// How long to keep the handles before returning, in milliseconds.
    hold_ms: u64,
}

/// A file of the first mount's directory, and how much of it to read.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ReadStart {
    /// The file's name in the first mount.
    name: String,
    /// The most bytes to read.
    limit: u64,
}

/// A name.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Name {
    /// The name.
    name: String,
}

fn tool<A, F>(name: &str, handler: F) -> Tool
where
    A: toolcell_sdk::serde::de::DeserializeOwned + JsonSchema,
    F: FnOnce(A) -> Result<Output, Error> + 'static,
{
    Tool::new(name, handler)
        .category(Category::Read)
        .read_only()
        .open_world(false)
}

fn tools() -> Vec<Tool> {
    vec![
        tool("ok", |_: Nothing| Ok(Output::text("ok"))),
        tool("spin", |_: Nothing| {
            let mut x: u64 = 0;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        }),
        tool("allocate", |_: Nothing| {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1; 1 << 20]);
                std::hint::black_box(&hoard);
            }
        }),
        tool("recurse", |args: Count| {
            Ok(Output::text(format!("{}", recurse(args.n))))
        }),
        tool("panic", |_: Nothing| -> Result<Output, Error> {
            panic!("the hostile plugin panicked on purpose")
        }),
        tool("print", |args: Count| {
            // `n` bytes to stdout, in lines of 100.
            let line = "x".repeat(99);
            for _ in 0..args.n / 100 {
                println!("{line}");
            }
            Ok(Output::text("printed"))
        }),
        tool("big_output", |args: Count| {
            Ok(Output::text("y".repeat(args.n as usize)))
        }),
        tool("progress", |args: Count| {
            // Reports progress `n` times, 1 ms apart, without ever checking
            // for cancellation: the host has to stop it.
            for step in 1..=args.n {
                host::progress(step as f64, Some(args.n as f64), Some("working"));
                host::log(host::LogLevel::Info, &format!("step {step}"));
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            Ok(Output::text(format!("done {}", args.n)))
        }),
        tool("env", |args: Name| match std::env::var(&args.name) {
            Ok(value) => Ok(Output::text(value)),
            Err(_) => Err(Error::new(format!("`{}` is not set", args.name))),
        }),
        tool("env_all", |_: Nothing| {
            let names: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
            Ok(Output::text(names.join("\n")))
        }),
        tool("socket", |args: Name| {
            match std::net::TcpStream::connect(args.name.as_str()) {
                Ok(_) => Ok(Output::text("connected")),
                Err(e) => Err(Error::new(format!("connect failed: {e}"))),
            }
        }),
        tool("fetch", |args: Name| fetch(&args.name)),
        // The same, under another name, so two plugins in one server can each offer it.
        tool("fetch2", |args: Name| fetch(&args.name)),
        tool("sleep", |args: Count| {
            // `n` milliseconds in a WASI clock poll, never in wasm code.
            std::thread::sleep(std::time::Duration::from_millis(args.n));
            Ok(Output::text("slept"))
        }),
        tool("read_path", |args: Name| {
            // Opens and reads whatever the path is, a FIFO included.
            let path = toolcell_sdk::fs::resolve(&args.name)?;
            let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            Ok(Output::text(format!("read {} bytes", bytes.len())))
        }),
        tool("hold_files", |args: Hold| {
            // Opens the file `n` times (stopping at the first error), holds
            // every handle for `hold_ms`, then says how many it had.
            let path = toolcell_sdk::fs::resolve(&args.path)?;
            let mut held = Vec::new();
            let mut stopped = String::new();
            for _ in 0..args.n {
                match std::fs::File::open(&path) {
                    Ok(file) => held.push(file),
                    Err(e) => {
                        stopped = format!(", then: {e}");
                        break;
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(args.hold_ms));
            Ok(Output::text(format!("held {}{stopped}", held.len())))
        }),
        tool("hold_listings", |args: Hold| {
            // Starts listing the directory `n` times (one entry read from
            // each, so the host has begun every listing), holds them all for
            // `hold_ms`, then says how many it had.
            let path = toolcell_sdk::fs::resolve(&args.path)?;
            let mut held = Vec::new();
            let mut stopped = String::new();
            for _ in 0..args.n {
                match std::fs::read_dir(&path) {
                    Ok(mut listing) => {
                        let _first = listing.next();
                        held.push(listing);
                    }
                    Err(e) => {
                        stopped = format!(", then: {e}");
                        break;
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(args.hold_ms));
            Ok(Output::text(format!("held {}{stopped}", held.len())))
        }),
        tool("start_stats", |args: Hold| {
            // Starts `n` background stats of ten paths in the directory at
            // once (`toolcell:files@0.2.0`), then finishes them all and says
            // how many paths were answered.
            let root = toolcell_sdk::fs::Directory::open(&toolcell_sdk::fs::resolve(&args.path)?)?;
            let paths = vec!["a-name"; 10];
            let held: Vec<_> = (0..args.n)
                .map(|_| root.start_metadata_of_paths(&paths))
                .collect();
            let answered: usize = held.into_iter().map(|pending| pending.finish().len()).sum();
            Ok(Output::text(format!("answered {answered}")))
        }),
        tool("read_start", |args: ReadStart| {
            // Reads a file's start with one host call (`toolcell:files@0.3.0`,
            // through the SDK's `Directory::read_file`) and says how much it
            // got, whether that was all, and a checksum of the bytes.
            let root = toolcell_sdk::fs::Directory::open(&toolcell_sdk::fs::resolve(".")?)?;
            let contents = root.read_file(&args.name, args.limit as usize)?;
            let sum = contents.bytes.iter().fold(0u64, |sum, byte| {
                sum.wrapping_mul(31).wrapping_add(u64::from(*byte))
            });
            Ok(Output::text(format!(
                "{} {} {sum}",
                contents.bytes.len(),
                contents.whole
            )))
        }),
        tool("blocks", |args: Count| {
            // `n` text blocks of one byte each.
            let mut output = Output::text("0");
            for _ in 1..args.n {
                output = output.with(toolcell_sdk::Content::Text("x".into()));
            }
            Ok(output)
        }),
        tool("escapes", |args: Count| {
            // `n` control characters: n bytes here, 6n bytes as JSON.
            Ok(Output::text("\u{1}".repeat(args.n as usize)))
        }),
        tool("scribble", |_: Nothing| {
            // Says whether the pages of `PAGES` are as the component's image
            // has them, then writes to every other page: more disjoint runs
            // of written pages than one scan of the slot reports at once, so
            // the slot's reset has to find them all.
            let dirty = PAGES
                .iter()
                .step_by(PAGE)
                .position(|cell| cell.load(Ordering::Relaxed) != PRISTINE);
            for cell in PAGES.iter().step_by(2 * PAGE) {
                cell.store(!PRISTINE, Ordering::Relaxed);
            }
            Ok(Output::text(match dirty {
                None => "pristine".to_owned(),
                Some(page) => format!("page {page} was written by an earlier call"),
            }))
        }),
        tool("log", |args: Name| {
            host::log(host::LogLevel::Warning, &args.name);
            host::log(host::LogLevel::Debug, "a debug line");
            Ok(Output::text("logged"))
        }),
    ]
}

/// A page of linear memory.
const PAGE: usize = 4096;
/// What every byte of `PAGES` holds in the component's image.
const PRISTINE: u8 = 0x5a;
/// 512 KiB of initialised data (in the image, not zeroed at start-up), for
/// `scribble`.
static PAGES: [AtomicU8; 128 * PAGE] = [const { AtomicU8::new(PRISTINE) }; 128 * PAGE];

fn fetch(url: &str) -> Result<Output, Error> {
    let response = toolcell_sdk::http::get(url, 1 << 20)?;
    Ok(Output::text(format!(
        "{} {}",
        response.status,
        String::from_utf8_lossy(&response.body)
    )))
}

fn recurse(depth: u64) -> u64 {
    if depth == 0 {
        return 0;
    }
    // The array keeps each frame large and stops the optimiser from turning
    // the recursion into a loop.
    let frame = std::hint::black_box([depth; 64]);
    1 + recurse(depth - 1) + frame[(depth % 64) as usize] % 2
}

toolcell_sdk::export_plugin!(tools);
