//! Word, line and byte counts of a file under the plugin's mounts: the
//! example the Python and JavaScript SDKs also implement.

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Category, Error, Output, Tool};

/// Arguments of `count`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Count {
    /// The file, absolute or relative to the first mount.
    path: String,
}

/// What `count` found, as `wc` counts it.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Counts {
    /// The file, as resolved.
    path: String,
    /// Newline characters.
    lines: u64,
    /// Runs of non-whitespace.
    words: u64,
    /// Bytes.
    bytes: u64,
}

fn count(args: Count) -> Result<Output, Error> {
    let path = toolcell_sdk::fs::resolve(&args.path)?;
    let data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    let text = String::from_utf8_lossy(&data);
    let counts = Counts {
        path: path.display().to_string(),
        lines: data.iter().filter(|&&b| b == b'\n').count() as u64,
        words: text.split_whitespace().count() as u64,
        bytes: data.len() as u64,
    };
    let summary = format!(
        "{}: {} lines, {} words, {} bytes",
        counts.path, counts.lines, counts.words, counts.bytes
    );
    Output::structured(&counts, summary)
}

fn tools() -> Vec<Tool> {
    vec![
        Tool::new("count", count)
            .title("Count words")
            .description("Count the lines, words and bytes of a file, as `wc` does.")
            .category(Category::Read)
            .output_schema::<Counts>()
            .read_only()
            .open_world(false),
    ]
}

toolcell_sdk::export_plugin!(tools);
