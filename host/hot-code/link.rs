//! The build script's part that lays out the release binary's code: the
//! functions a server runs (listed in `hot-code/symbols.txt`) go first and
//! together, in an output section `.text.hot` placed before `.text`.
//!
//! Why: a file's pages come into a process 64 KiB at a time (the kernel's
//! fault-around), so a function that runs costs its whole 64 KiB window of
//! the binary in resident memory. Scattered over 24 MiB of code, the 2.6 MB
//! a server runs touched about 200 windows (13 MiB resident); packed, it
//! touches about 45.
//!
//! Only where the layout is known to be taken: Linux on x86-64, whose
//! default linker is LLD (since Rust 1.90), in a build with the `release`
//! settings. A linker script with `INSERT` keeps the linker's own layout
//! and adds the section; GNU ld reads it the same way. A name that matches
//! no function costs nothing, so a stale list only loses packing, and
//! `hot-code/collect.sh` makes it anew. `TOOLCELL_NO_HOT_CODE=1` leaves the
//! layout to the linker (for a linker that takes no script, such as mold).

use std::path::Path;

/// The list of functions, one symbol name per line, relative to this crate.
const SYMBOLS: &str = "hot-code/symbols.txt";

/// Writes the linker script into `out_dir` and passes it to the link of the
/// `toolcell` binary, when the build is one it applies to.
#[cfg_attr(test, allow(dead_code))] // the crate's tests test the script only
pub fn apply(manifest_dir: &Path, out_dir: &Path) {
    println!("cargo::rerun-if-env-changed=TOOLCELL_NO_HOT_CODE");
    let symbols = manifest_dir.join(SYMBOLS);
    println!("cargo::rerun-if-changed={}", symbols.display());
    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu"
        || profile != "release"
        || std::env::var_os("TOOLCELL_NO_HOT_CODE").is_some_and(|v| !v.is_empty() && v != "0")
    {
        return;
    }
    // A packaged crate ships the list too; a copy without it links as usual.
    let Ok(names) = std::fs::read_to_string(&symbols) else {
        return;
    };
    let script = out_dir.join("hot-code.ld");
    std::fs::write(&script, linker_script(&names))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", script.display()));
    let script = script.display().to_string();
    // `-Wl,` splits its argument at commas.
    if script.contains(',') {
        println!("cargo::warning=not ordering the code: the build directory's path has a comma");
        return;
    }
    println!("cargo::rustc-link-arg-bin=toolcell=-Wl,--script={script}");
}

/// The linker script for `names`: each function's section in the order of
/// the list, whether the compiler put it in `.text.NAME` or, for a cold
/// function, `.text.unlikely.NAME`. A `*` in a name matches anything (the
/// list leaves hashes open with it; see `collect.sh`). A line with anything
/// but a symbol's characters is skipped, so that no line can change the
/// script's syntax.
fn linker_script(names: &str) -> String {
    let mut script = String::from("SECTIONS {\n  .text.hot : {\n");
    for name in names.lines().map(str::trim) {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_$.*".contains(&b))
        {
            continue;
        }
        script.push_str(&format!("    *(.text.{name} .text.unlikely.{name})\n"));
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_places_its_section_and_its_cold_twin() {
        let script = linker_script("_ZN4main17h0123456789abcdefE\n_ZN3one3two17h*\n");
        assert!(script.starts_with("SECTIONS {\n  .text.hot : {\n"));
        assert!(script.contains(
            "*(.text._ZN4main17h0123456789abcdefE .text.unlikely._ZN4main17h0123456789abcdefE)"
        ));
        assert!(script.contains("*(.text._ZN3one3two17h* .text.unlikely._ZN3one3two17h*)"));
        assert!(script.ends_with("INSERT BEFORE .text;\n"));
    }

    #[test]
    fn a_line_that_could_change_the_syntax_is_skipped() {
        let script = linker_script("ok\n) } /DISCARD/ : { *(*)\n\n  \nbad name\n");
        assert_eq!(script.matches("*(.text.").count(), 1, "{script}");
        assert!(!script.contains("DISCARD"));
    }

    #[test]
    fn every_line_of_the_committed_list_is_used() {
        let names = include_str!("symbols.txt");
        let script = linker_script(names);
        let lines = names.lines().count();
        assert!(lines > 1000, "the list has {lines} names");
        assert_eq!(script.matches("*(.text.").count(), lines);
    }
}
