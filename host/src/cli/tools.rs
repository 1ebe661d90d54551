//! `toolcell tools`: what a configuration serves, as a table.

use std::process::ExitCode;

use anyhow::Result;
use toolcell::runtime::toolbox::Offered;

use super::{Common, load_config, load_toolbox};

/// Runs `toolcell tools`.
pub fn run(common: &Common) -> Result<ExitCode> {
    let (config, _) = load_config(common)?;
    let toolbox = load_toolbox(common, &config)?;
    let mut rows = vec![[
        "TOOL".to_string(),
        "PLUGIN".to_string(),
        "CATEGORY".to_string(),
        "ANNOTATIONS".to_string(),
        "MOUNTS".to_string(),
    ]];
    for route in toolbox.routes() {
        let annotations = route.spec.annotation_words().join(",");
        let mounts = route
            .spec
            .mounts
            .iter()
            .map(|mount| {
                let mode = if mount.writable && !route.spec.read_only() {
                    "rw"
                } else {
                    "ro"
                };
                format!("{} ({mode})", mount.host.display())
            })
            .collect::<Vec<_>>()
            .join(", ");
        rows.push([
            route.spec.name.clone(),
            route.plugin.name().to_string(),
            route.spec.category.clone(),
            annotations,
            if mounts.is_empty() {
                "-".into()
            } else {
                mounts
            },
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|col| {
            rows.iter()
                .map(|row| row[col].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col == 4 {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[col]));
            }
        }
        println!("{}", line.trim_end());
    }
    if !toolbox.disabled().is_empty() {
        let names: Vec<&str> = toolbox
            .disabled()
            .iter()
            .map(|r| r.spec.name.as_str())
            .collect();
        println!(
            "\n{} more tool(s) not enabled by [server] categories or `tools`: {}",
            names.len(),
            names.join(", ")
        );
    }
    print_offered("resources", toolbox.resources(), |r| &r.uri);
    print_offered("resource templates", toolbox.templates(), |t| {
        &t.uri_template
    });
    print_offered("prompts", toolbox.prompts(), |p| &p.name);
    for failure in toolbox.failures() {
        eprintln!(
            "error: plugin `{}` did not load: {}",
            failure.plugin, failure.error
        );
    }
    for error in toolbox.errors() {
        eprintln!("error: {error}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what plugins offer besides tools (contract 0.2.0), if any: each
/// item named by `key`, with its plugin.
fn print_offered<T>(what: &str, offered: &[Offered<T>], key: impl Fn(&T) -> &String) {
    if offered.is_empty() {
        return;
    }
    println!("\n{what}:");
    let width = offered
        .iter()
        .map(|o| key(&o.item).chars().count())
        .max()
        .unwrap_or(0);
    for item in offered {
        println!("  {:<width$}  {}", key(&item.item), item.plugin.name());
    }
}
