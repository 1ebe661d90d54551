//! The registry: a directory of technique records, one TOML file each.
//!
//! [`Technique`] is one record (with its [`Paper`]s and [`Decision`]s); [`load`] reads every
//! `*.toml` file of a directory into a [`Registry`], which keeps the records that parse and
//! validate and lists the others as [`Skipped`], by file name and reason. A bad record is never
//! fatal: the rest of the registry stays usable.
//!
//! A record's `id` is its file name without `.toml`, so ids are unique by construction and a
//! record is found by name alone.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Deserializer, Serialize};

use crate::arxiv;

/// The largest record file read; a larger one is skipped.
const MAX_RECORD_BYTES: u64 = 1024 * 1024;
/// The longest technique id.
pub(crate) const MAX_ID_CHARS: usize = 64;

/// Where a technique stands.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema,
)]
#[serde(crate = "toolcell_sdk::serde", rename_all = "kebab-case")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) enum Status {
    /// Built and in use.
    Implemented,
    /// Accepted, not built yet.
    Planned,
    /// Recorded, not yet decided on.
    NotStarted,
    /// Decided against.
    Rejected,
}

impl Status {
    /// Every status, in the order results show them.
    pub(crate) const ALL: [Status; 4] = [
        Status::Implemented,
        Status::Planned,
        Status::NotStarted,
        Status::Rejected,
    ];

    /// The name records use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Implemented => "implemented",
            Status::Planned => "planned",
            Status::NotStarted => "not-started",
            Status::Rejected => "rejected",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How urgent a technique is: P1 (the most) to P4.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Deserialize,
    Serialize,
    JsonSchema,
)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) enum Priority {
    // No doc comments on the variants, so that the schema is a plain `enum` (see
    // `query::Action`).
    P1,
    P2,
    #[default]
    P3,
    P4,
}

impl Priority {
    /// Every priority, most urgent first.
    pub(crate) const ALL: [Priority; 4] = [Priority::P1, Priority::P2, Priority::P3, Priority::P4];

    /// The name records use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Priority::P1 => "P1",
            Priority::P2 => "P2",
            Priority::P3 => "P3",
            Priority::P4 => "P4",
        }
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How much work a technique is to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", rename_all = "kebab-case")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) enum Complexity {
    /// Days.
    Low,
    /// Weeks.
    Medium,
    /// Months.
    High,
}

/// One technique record, as its TOML file holds it.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
pub(crate) struct Technique {
    /// Lowercase letters, digits and `-`; the file is `<id>.toml`.
    pub id: String,
    /// A short name.
    pub name: String,
    /// What the technique is.
    pub description: String,
    /// One topic, such as `fine-tuning`.
    pub topic: String,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Where it stands.
    pub status: Status,
    /// How urgent it is.
    pub priority: Priority,
    /// How much work it is; absent until someone has assessed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub complexity: Option<Complexity>,
    /// The ids of techniques it builds on.
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// The papers it comes from.
    #[serde(default)]
    pub papers: Vec<Paper>,
    /// Decisions about it, oldest first.
    #[serde(default)]
    pub history: Vec<Decision>,
}

/// A source paper.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
pub(crate) struct Paper {
    /// The arXiv identifier, such as `1706.03762`.
    pub arxiv: String,
    /// The paper's title.
    pub title: String,
    /// The year it first appeared on arXiv.
    pub year: u16,
    /// Its authors, if recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub authors: Vec<String>,
}

/// One decision in a technique's history.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
pub(crate) struct Decision {
    /// `YYYY-MM-DD`; a TOML date or a string.
    #[serde(deserialize_with = "date")]
    pub date: String,
    /// What was decided, such as `planned` or `rejected`.
    pub decision: String,
    /// Why.
    pub reason: String,
}

/// Accepts `date = 2024-05-01` (a TOML local date) or `date = "2024-05-01"`.
fn date<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(crate = "toolcell_sdk::serde", untagged)]
    enum Raw {
        Text(String),
        Toml(toml::value::Datetime),
    }
    let text = match Raw::deserialize(deserializer)? {
        Raw::Text(text) => text,
        Raw::Toml(datetime) => datetime.to_string(),
    };
    if is_date(&text) {
        Ok(text)
    } else {
        Err(toolcell_sdk::serde::de::Error::custom(format!(
            "invalid date `{text}`: expected YYYY-MM-DD"
        )))
    }
}

/// Whether `text` is `YYYY-MM-DD` with a plausible month and day.
pub(crate) fn is_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let month: u8 = text[5..7].parse().unwrap_or(0);
    let day: u8 = text[8..10].parse().unwrap_or(0);
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// Whether `id` is a valid technique id: 1-64 of lowercase ASCII letters, digits and `-`, not
/// starting or ending with `-` nor holding `--`.
pub(crate) fn is_technique_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
        && !id.contains("--")
}

/// A record file that was left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// The file name, such as `broken.toml`.
    pub file: String,
    /// Why it was skipped, on one line.
    pub reason: String,
}

/// The records of one registry directory.
#[derive(Debug)]
pub(crate) struct Registry {
    /// The directory.
    pub dir: PathBuf,
    /// The records that parsed and validated, sorted by id.
    pub techniques: Vec<Technique>,
    /// The record files left out, sorted by file name.
    pub skipped: Vec<Skipped>,
}

impl Registry {
    /// The technique called `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&Technique> {
        self.techniques.iter().find(|t| t.id == id)
    }

    /// The technique that lists arXiv paper `arxiv_id` (versions ignored), if any.
    pub(crate) fn with_paper(&self, arxiv_id: &str) -> Option<&Technique> {
        let wanted = arxiv::base_id(arxiv_id);
        self.techniques.iter().find(|t| {
            t.papers
                .iter()
                .any(|paper| arxiv::base_id(&paper.arxiv) == wanted)
        })
    }

    /// One line per skipped file, then one per dependency on a technique the registry lacks.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let mut warnings: Vec<String> = self
            .skipped
            .iter()
            .map(|s| format!("skipped `{}`: {}", s.file, s.reason))
            .collect();
        let known: BTreeSet<&str> = self.techniques.iter().map(|t| t.id.as_str()).collect();
        for technique in &self.techniques {
            for dependency in &technique.dependencies {
                if !known.contains(dependency.as_str()) {
                    warnings.push(format!(
                        "`{}` depends on `{dependency}`, which is not in the registry",
                        technique.id
                    ));
                }
            }
        }
        warnings
    }
}

/// Reads every `*.toml` file directly in `dir` (not in subdirectories; names starting with `.`
/// are ignored, so temporary files never count).
pub(crate) fn load(dir: &Path) -> io::Result<Registry> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !name.ends_with(".toml") {
            continue;
        }
        files.push((name, entry.path()));
    }
    files.sort();

    let mut techniques = Vec::new();
    let mut skipped = Vec::new();
    for (name, path) in files {
        match read_record(&name, &path) {
            Ok(technique) => techniques.push(technique),
            Err(reason) => skipped.push(Skipped { file: name, reason }),
        }
    }
    techniques.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(Registry {
        dir: dir.to_path_buf(),
        techniques,
        skipped,
    })
}

fn read_record(name: &str, path: &Path) -> Result<Technique, String> {
    let meta = fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_string());
    }
    if meta.len() > MAX_RECORD_BYTES {
        return Err(format!(
            "{} bytes, over the limit of {MAX_RECORD_BYTES} bytes for one record",
            meta.len()
        ));
    }
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let stem = name.strip_suffix(".toml").unwrap_or(name);
    parse_record(&text, stem)
}

/// Parses and validates the record in `text`, whose file is `<stem>.toml`; the error is one
/// line, with the line and column of a syntax or type error.
pub(crate) fn parse_record(text: &str, stem: &str) -> Result<Technique, String> {
    let technique: Technique = toml::from_str(text).map_err(|e| {
        let message = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                format!("line {line}, column {column}: {message}")
            }
            None => message,
        }
    })?;
    validate(&technique, stem)?;
    Ok(technique)
}

/// The 1-based line and column (in characters) of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before, |at| &before[at + 1..])
        .chars()
        .count()
        + 1;
    (line, column)
}

/// Checks what the types alone do not.
fn validate(technique: &Technique, stem: &str) -> Result<(), String> {
    if !is_technique_id(&technique.id) {
        return Err(format!(
            "invalid id `{}`: expected 1-{MAX_ID_CHARS} lowercase letters, digits and single `-`",
            technique.id
        ));
    }
    if technique.id != stem {
        return Err(format!(
            "its id `{}` does not match its file name: a record's file is `<id>.toml`",
            technique.id
        ));
    }
    for (field, value) in [
        ("name", &technique.name),
        ("description", &technique.description),
        ("topic", &technique.topic),
    ] {
        if value.trim().is_empty() {
            return Err(format!("`{field}` is empty"));
        }
    }
    if technique.tags.iter().any(|tag| tag.trim().is_empty()) {
        return Err("a tag is empty".to_string());
    }
    if let Some(dependency) = technique.dependencies.iter().find(|d| !is_technique_id(d)) {
        return Err(format!("dependency `{dependency}` is not a technique id"));
    }
    if technique.dependencies.contains(&technique.id) {
        return Err("it depends on itself".to_string());
    }
    for paper in &technique.papers {
        if !arxiv::is_id(&paper.arxiv) {
            return Err(format!(
                "paper `{}` is not an arXiv identifier such as 1706.03762",
                paper.arxiv
            ));
        }
        if paper.title.trim().is_empty() {
            return Err(format!("paper `{}` has an empty title", paper.arxiv));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    const LORA: &str = r#"
id = "lora"
name = "LoRA"
description = "Low-rank adapters."
topic = "fine-tuning"
tags = ["low-rank"]
status = "implemented"
priority = "P1"
complexity = "medium"
dependencies = ["transformer"]

[[papers]]
arxiv = "2106.09685"
title = "LoRA: Low-Rank Adaptation of Large Language Models"
year = 2021

[[history]]
date = 2024-02-01
decision = "implemented"
reason = "Shipped."

[[history]]
date = "2024-03-01"
decision = "reviewed"
reason = "Still good."
"#;

    #[test]
    fn a_full_record_parses() {
        let t = parse_record(LORA, "lora").unwrap();
        assert_eq!(t.id, "lora");
        assert_eq!(t.status, Status::Implemented);
        assert_eq!(t.priority, Priority::P1);
        assert_eq!(t.complexity, Some(Complexity::Medium));
        assert_eq!(t.papers[0].year, 2021);
        assert_eq!(t.history[0].date, "2024-02-01", "a TOML date");
        assert_eq!(t.history[1].date, "2024-03-01", "a string");
    }

    #[test]
    fn a_minimal_record_parses() {
        let text = "id = \"x\"\nname = \"X\"\ndescription = \"d\"\ntopic = \"t\"\n\
                    status = \"not-started\"\npriority = \"P4\"\n";
        let t = parse_record(text, "x").unwrap();
        assert!(t.tags.is_empty() && t.papers.is_empty() && t.history.is_empty());
        assert_eq!(t.complexity, None);
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let text = LORA.replace("status = \"implemented\"", "status = \"done\"");
        let error = parse_record(&text, "lora").unwrap_err();
        assert!(
            error.starts_with("line 7, column 10: unknown variant `done`"),
            "{error}"
        );
        assert!(!error.contains('\n'));

        let text = LORA.replace("topic =", "topik =");
        let error = parse_record(&text, "lora").unwrap_err();
        assert!(error.contains("unknown field `topik`"), "{error}");

        let text = LORA.replace("date = 2024-02-01", "date = \"2024-13-01\"");
        let error = parse_record(&text, "lora").unwrap_err();
        assert!(error.contains("invalid date `2024-13-01`"), "{error}");

        let error = parse_record("id = [", "x").unwrap_err();
        assert!(error.starts_with("line 1, column"), "{error}");
    }

    #[test]
    fn validation_catches_what_types_do_not() {
        let error = parse_record(LORA, "other").unwrap_err();
        assert!(error.contains("does not match its file name"), "{error}");
        let error = parse_record(&LORA.replace("\"lora\"", "\"LoRA\""), "LoRA").unwrap_err();
        assert!(error.contains("invalid id `LoRA`"), "{error}");
        let error = parse_record(&LORA.replace("2106.09685", "2106.965"), "lora").unwrap_err();
        assert!(error.contains("paper `2106.965`"), "{error}");
        let error =
            parse_record(&LORA.replace("[\"transformer\"]", "[\"lora\"]"), "lora").unwrap_err();
        assert_eq!(error, "it depends on itself");
        let error = parse_record(
            &LORA.replace("topic = \"fine-tuning\"", "topic = \" \""),
            "lora",
        )
        .unwrap_err();
        assert_eq!(error, "`topic` is empty");
    }

    #[test]
    fn technique_ids() {
        for good in ["a", "lora", "flash-attention-2", "x1"] {
            assert!(is_technique_id(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", &"x".repeat(65)] {
            assert!(!is_technique_id(bad), "{bad}");
        }
    }

    #[test]
    fn dates() {
        assert!(is_date("2024-02-29"));
        for bad in [
            "2024-2-29",
            "2024-00-01",
            "2024-01-32",
            "24-01-01x",
            "2024/01/01",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé d", 7), (2, 4));
        assert_eq!(line_column("abc", 0), (1, 1));
    }

    #[test]
    fn the_sample_registry_loads_without_warnings() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("registry");
        let registry = load(&dir).unwrap();
        assert_eq!(registry.skipped, []);
        assert_eq!(registry.warnings(), Vec::<String>::new());
        assert!((8..=12).contains(&registry.techniques.len()));
        for technique in &registry.techniques {
            assert!(!technique.papers.is_empty(), "{}", technique.id);
            assert!(!technique.history.is_empty(), "{}", technique.id);
        }
    }

    #[test]
    fn bad_records_are_skipped_by_name() {
        let dir = std::env::temp_dir().join(format!(
            "toolcell-research-load-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("lora.toml"), LORA).unwrap();
        fs::write(dir.join("broken.toml"), "id = [").unwrap();
        fs::write(dir.join("binary.toml"), [0xff, 0xfe]).unwrap();
        fs::write(dir.join("notes.md"), "ignored").unwrap();
        fs::write(dir.join(".lora.toml.toolcell-tmp-1"), "ignored").unwrap();
        fs::create_dir_all(dir.join("sub.toml")).unwrap();
        let registry = load(&dir).unwrap();
        assert_eq!(
            registry
                .techniques
                .iter()
                .map(|t| &t.id)
                .collect::<Vec<_>>(),
            ["lora"]
        );
        let files: Vec<&str> = registry.skipped.iter().map(|s| s.file.as_str()).collect();
        assert_eq!(files, ["binary.toml", "broken.toml", "sub.toml"]);
        assert_eq!(registry.skipped[0].reason, "not UTF-8 text");
        assert_eq!(registry.skipped[2].reason, "not a regular file");
        let warnings = registry.warnings();
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert_eq!(
            warnings[3],
            "`lora` depends on `transformer`, which is not in the registry"
        );
        assert!(registry.with_paper("2106.09685v3").is_some());
        assert!(registry.with_paper("2106.09686").is_none());
        fs::remove_dir_all(&dir).unwrap();
    }
}
