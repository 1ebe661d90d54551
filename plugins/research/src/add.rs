//! `research_add`: fetch a paper's metadata from arXiv and file it as a new technique.
//!
//! The steps, in order, each able to refuse before anything is written: check the arXiv id;
//! refuse a paper some record already lists (no request is made); fetch
//! `{arxiv_base_url}/api/query?id_list=<id>` ([`fetch`]); read the Atom feed
//! ([`arxiv::parse_feed`]); build the record ([`new_record`]) and check that its id is free;
//! render it as TOML and read it back as the registry would ([`render`]); and write it with
//! [`write_new`]: a temporary file beside the target, hard-linked into place so that a record
//! that appeared meanwhile is never replaced. A failure leaves the registry directory as it was.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use toolcell_sdk::fs::AtomicFile;
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output, host};

use crate::arxiv::{self, Entry, Feed};
use crate::registry::{self, Decision, Paper, Priority, Registry, Status, Technique};

/// Where the arXiv API is, unless `arxiv_base_url` says otherwise.
pub(crate) const DEFAULT_ARXIV_BASE_URL: &str = "https://export.arxiv.org";
/// The largest answer read; one entry is a few kilobytes.
const MAX_RESPONSE_BYTES: usize = 2 * 1024 * 1024;
/// The topic of a technique added without one.
const DEFAULT_TOPIC: &str = "unsorted";
/// The most words of a title a derived id keeps.
const MAX_ID_WORDS: usize = 6;

/// Arguments of `research_add`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct AddArgs {
    /// The paper's arXiv identifier: `YYMM.NNNNN`, optionally with a version, such as
    /// `1810.04805` or `1810.04805v2`.
    arxiv_id: String,
    /// The new technique's id: lowercase letters, digits and `-`. Default: derived from the
    /// paper's title (`BERT: Pre-training of ...` gives `bert`).
    technique_id: Option<String>,
    /// The topic to file it under, such as `fine-tuning`. Default `unsorted`.
    topic: Option<String>,
    /// How urgent it is, P1 the most. Default P3.
    #[serde(default)]
    priority: Priority,
    /// Fetch the paper and show the record without writing it. Default false.
    #[serde(default)]
    dry_run: bool,
}

/// What `research_add` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct AddResult {
    /// The new technique's id.
    id: String,
    /// The record's file.
    path: String,
    /// Whether the file was written (false in a dry run).
    written: bool,
    /// The paper, as arXiv describes it.
    paper: PaperInfo,
    /// The record, as TOML.
    record: String,
}

/// A paper fetched from arXiv.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct PaperInfo {
    /// The identifier, as given.
    arxiv_id: String,
    /// The title.
    title: String,
    /// The date of the first version, `YYYY-MM-DD`.
    published: String,
    /// The authors, in order.
    authors: Vec<String>,
}

/// Runs `research_add` against the registry in the first mount.
pub(crate) fn research_add(args: AddArgs) -> Result<Output, Error> {
    let arxiv_id = args.arxiv_id.trim();
    if !arxiv::is_id(arxiv_id) {
        return Err(Error::new(format!(
            "`{arxiv_id}` is not an arXiv identifier: expected YYMM.NNNNN with 4 or 5 digits \
             after the dot and an optional version, such as 1810.04805 or 1810.04805v2"
        )));
    }
    if let Some(id) = &args.technique_id
        && !registry::is_technique_id(id)
    {
        return Err(Error::new(format!(
            "`{id}` is not a technique id: use 1-{} lowercase letters, digits and single `-`",
            registry::MAX_ID_CHARS
        )));
    }
    let topic = args.topic.as_deref().map_or(DEFAULT_TOPIC, str::trim);
    if topic.is_empty() {
        return Err(Error::new("`topic` is empty; leave it out for `unsorted`"));
    }
    let base = base_url()?;

    let registry = crate::open_registry()?;
    if let Some(existing) = registry.with_paper(arxiv_id) {
        return Err(Error::new(format!(
            "arXiv {} is already in the registry: technique `{}` ({}.toml) lists it",
            arxiv::base_id(arxiv_id),
            existing.id,
            existing.id
        )));
    }
    if let Some(id) = &args.technique_id {
        check_free(&registry, id)?;
    }

    let url = arxiv::query_url(&base, arxiv_id);
    let body = fetch(&url)?;
    let entry = match arxiv::parse_feed(&body, arxiv_id) {
        Ok(Feed::Found(entry)) => entry,
        Ok(Feed::NotFound(message)) => {
            let detail = message
                .map(|m| format!(" (arXiv says: {m})"))
                .unwrap_or_default();
            return Err(Error::new(format!(
                "arXiv has no paper `{arxiv_id}`{detail}; check the identifier"
            )));
        }
        Err(reason) => {
            return Err(Error::new(format!(
                "cannot read arXiv's answer for `{arxiv_id}` from `{url}`: {reason}"
            )));
        }
    };

    let technique = new_record(
        &entry,
        arxiv_id,
        args.technique_id.as_deref(),
        topic,
        args.priority,
        &today(),
    );
    check_free(&registry, &technique.id)?;
    let record = render(&technique)?;
    let path = registry.dir.join(format!("{}.toml", technique.id));
    if !args.dry_run {
        write_new(&path, &record)?;
    }

    let result = AddResult {
        id: technique.id.clone(),
        path: toolcell_sdk::fs::display(&path),
        written: !args.dry_run,
        paper: PaperInfo {
            arxiv_id: arxiv_id.to_string(),
            title: entry.title,
            published: entry.published,
            authors: entry.authors,
        },
        record,
    };
    let headline = if args.dry_run {
        format!(
            "dry run: would add technique `{}` as `{}`; nothing was written",
            result.id, result.path
        )
    } else {
        format!("added technique `{}` as `{}`", result.id, result.path)
    };
    let text = format!("{headline}\n\n{}", result.record);
    Output::structured(&result, text)
}

/// The `arxiv_base_url` config value, or the default; http or https only.
fn base_url() -> Result<String, Error> {
    let base = host::config("arxiv_base_url").unwrap_or_else(|| DEFAULT_ARXIV_BASE_URL.into());
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return Err(Error::new(format!(
            "the plugin's `arxiv_base_url` is `{base}`; it must start with https:// or http://"
        )));
    }
    Ok(base)
}

/// Refuses `id` if a record has it or its file exists (even one that does not parse).
fn check_free(registry: &Registry, id: &str) -> Result<(), Error> {
    let file = registry.dir.join(format!("{id}.toml"));
    if registry.get(id).is_some() || fs::symlink_metadata(&file).is_ok() {
        return Err(Error::new(format!(
            "technique `{id}` already exists (`{}`); pass another `technique_id`",
            toolcell_sdk::fs::display(&file)
        )));
    }
    Ok(())
}

/// GETs `url` and returns the body of a 200 answer as text.
fn fetch(url: &str) -> Result<String, Error> {
    let response = toolcell_sdk::http::get(url, MAX_RESPONSE_BYTES)
        .map_err(|e| Error::new(format!("cannot fetch `{url}`: {}", e.message())))?;
    if let Some(problem) = status_problem(response.status) {
        return Err(Error::new(format!("arXiv {problem} for `{url}`")));
    }
    String::from_utf8(response.body)
        .map_err(|_| Error::new(format!("arXiv's answer from `{url}` is not UTF-8 text")))
}

/// What is wrong with an answer of HTTP `status`, if anything.
fn status_problem(status: u16) -> Option<String> {
    match status {
        200 => None,
        404 => Some(
            "answered 404 Not Found: the API is not at this address (check the plugin's \
             `arxiv_base_url`)"
                .to_string(),
        ),
        429 => Some("answered 429 Too Many Requests: wait a few seconds and try again".into()),
        500..=599 => Some(format!(
            "failed with HTTP {status}, a server error: try again later"
        )),
        _ => Some(format!("answered HTTP {status}, expected 200")),
    }
}

/// The record for `entry`: status `not-started`, no tags, the paper, and one history entry.
fn new_record(
    entry: &Entry,
    arxiv_id: &str,
    technique_id: Option<&str>,
    topic: &str,
    priority: Priority,
    today: &str,
) -> Technique {
    let (name, derived) = name_and_id(&entry.title, arxiv_id);
    let description = if entry.summary.is_empty() {
        entry.title.clone()
    } else {
        entry.summary.clone()
    };
    Technique {
        id: technique_id.map_or(derived, str::to_string),
        name,
        description,
        topic: topic.to_string(),
        tags: Vec::new(),
        status: Status::NotStarted,
        priority,
        complexity: None,
        dependencies: Vec::new(),
        papers: vec![Paper {
            arxiv: arxiv_id.to_string(),
            title: entry.title.clone(),
            year: entry.year(),
            authors: entry.authors.clone(),
        }],
        history: vec![Decision {
            date: today.to_string(),
            decision: "added".to_string(),
            reason: format!("Added from arXiv {arxiv_id} by research_add."),
        }],
    }
}

/// A technique's name and id from a paper's title: the part before a colon when it is at most
/// three words (`BERT: Pre-training ...` gives `BERT` and `bert`), else the whole title, whose
/// id keeps the first [`MAX_ID_WORDS`] words. A title with no ASCII letter or digit gives
/// `arxiv-YYMM-NNNNN`.
pub(crate) fn name_and_id(title: &str, arxiv_id: &str) -> (String, String) {
    let short = title
        .split_once(':')
        .map(|(head, _)| head.trim())
        .filter(|head| !head.is_empty() && head.split_whitespace().count() <= 3);
    let name = short.unwrap_or(title).to_string();
    let mut id = String::new();
    let words = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(MAX_ID_WORDS);
    for word in words {
        if id.len() + 1 + word.len() > registry::MAX_ID_CHARS {
            break;
        }
        if !id.is_empty() {
            id.push('-');
        }
        id.push_str(&word.to_ascii_lowercase());
    }
    if id.is_empty() {
        id = format!("arxiv-{}", arxiv::base_id(arxiv_id).replace('.', "-"));
    }
    (name, id)
}

/// The record as TOML, checked by reading it back as the registry will.
fn render(technique: &Technique) -> Result<String, Error> {
    let text = toml::to_string(technique)
        .map_err(|e| Error::new(format!("cannot write the record as TOML: {e}")))?;
    registry::parse_record(&text, &technique.id).map_err(|e| {
        Error::new(format!(
            "internal error: the new record would not load ({e}); nothing was written"
        ))
    })?;
    Ok(text)
}

/// Creates `path` holding `text`, atomically, refusing if it exists.
fn write_new(path: &Path, text: &str) -> Result<(), Error> {
    let mut file = AtomicFile::create(path).map_err(|e| {
        if e.kind() == ErrorKind::PermissionDenied {
            Error::new(format!(
                "cannot create `{}`: the registry directory is not writable (research_add needs \
                 the plugin's first mount to be `rw` in plugins.toml)",
                toolcell_sdk::fs::display(path)
            ))
        } else {
            Error::io(path, e)
        }
    })?;
    file.write_all(text.as_bytes())
        .map_err(|e| Error::io(path, e))?;
    // A record written meanwhile by another call is never replaced.
    file.commit(false).map_err(|e| {
        if e.kind() == ErrorKind::AlreadyExists {
            Error::new(format!(
                "`{}` already exists; pass another `technique_id`",
                toolcell_sdk::fs::display(path)
            ))
        } else {
            Error::io(path, e)
        }
    })
}

/// Today's date in UTC, `YYYY-MM-DD`.
fn today() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (year, month, day) = civil_from_days(seconds / 86_400);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::hash::{BuildHasher, RandomState};
    use std::path::PathBuf;

    fn bert() -> Entry {
        Entry {
            id: "http://arxiv.org/abs/1810.04805v2".into(),
            title: "BERT: Pre-training of Deep Bidirectional Transformers for Language \
                    Understanding"
                .into(),
            summary: "We introduce a new language representation model called \"BERT\".".into(),
            published: "2018-10-11".into(),
            authors: vec!["Jacob Devlin".into(), "Ming-Wei Chang".into()],
        }
    }

    #[test]
    fn names_and_ids_come_from_the_title() {
        let cases = [
            (
                "BERT: Pre-training of Deep Bidirectional Transformers",
                "BERT",
                "bert",
            ),
            (
                "Attention Is All You Need",
                "Attention Is All You Need",
                "attention-is-all-you-need",
            ),
            (
                "Training Compute-Optimal Large Language Models",
                "Training Compute-Optimal Large Language Models",
                "training-compute-optimal-large-language-models",
            ),
            (
                "Outrageously Large Neural Networks: The Sparsely-Gated Mixture-of-Experts Layer",
                "Outrageously Large Neural Networks: The Sparsely-Gated Mixture-of-Experts Layer",
                "outrageously-large-neural-networks-the-sparsely",
            ),
            (
                "GPT-4 Technical Report",
                "GPT-4 Technical Report",
                "gpt-4-technical-report",
            ),
            ("Über: ψ", "Über", "ber"),
            ("ψ: φ", "ψ", "arxiv-1234-56789"),
        ];
        for (title, name, id) in cases {
            assert_eq!(
                name_and_id(title, "1234.56789v1"),
                (name.to_string(), id.to_string()),
                "{title}"
            );
            assert!(registry::is_technique_id(id), "{id}");
        }
        let long = "Supercalifragilisticexpialidocious ".repeat(4);
        let (_, id) = name_and_id(&long, "1234.56789");
        assert!(registry::is_technique_id(&id) && id.len() <= 64, "{id}");
    }

    #[test]
    fn a_new_record_round_trips_through_toml() {
        let record = new_record(
            &bert(),
            "1810.04805",
            None,
            "nlp",
            Priority::P2,
            "2024-05-01",
        );
        let text = render(&record).unwrap();
        assert_eq!(
            text,
            r#"id = "bert"
name = "BERT"
description = 'We introduce a new language representation model called "BERT".'
topic = "nlp"
tags = []
status = "not-started"
priority = "P2"
dependencies = []

[[papers]]
arxiv = "1810.04805"
title = "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding"
year = 2018
authors = ["Jacob Devlin", "Ming-Wei Chang"]

[[history]]
date = "2024-05-01"
decision = "added"
reason = "Added from arXiv 1810.04805 by research_add."
"#
        );
        let back = registry::parse_record(&text, "bert").unwrap();
        assert_eq!(back.status, Status::NotStarted);
        assert_eq!(back.papers[0].authors.len(), 2);
        let chosen = new_record(
            &bert(),
            "1810.04805v2",
            Some("bert-base"),
            "t",
            Priority::P3,
            "x",
        );
        assert_eq!(chosen.id, "bert-base");
        assert_eq!(chosen.papers[0].arxiv, "1810.04805v2");
    }

    #[test]
    fn status_problems_say_what_happened() {
        assert_eq!(status_problem(200), None);
        assert!(status_problem(404).unwrap().contains("404 Not Found"));
        assert!(
            status_problem(503)
                .unwrap()
                .contains("HTTP 503, a server error")
        );
        assert!(
            status_problem(301)
                .unwrap()
                .contains("HTTP 301, expected 200")
        );
    }

    #[test]
    fn dates_from_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(19_783), (2024, 3, 1));
        assert!(registry::is_date(&today()));
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "toolcell-research-{name}-{}-{:x}",
            std::process::id(),
            RandomState::new().hash_one(0)
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_new_creates_and_leaves_no_temp_file() {
        let dir = scratch("write");
        let target = dir.join("bert.toml");
        write_new(&target, "x = 1\n").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "x = 1\n");
        assert_eq!(names(&dir), ["bert.toml"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn write_new_never_replaces_and_cleans_up() {
        let dir = scratch("refuse");
        let target = dir.join("bert.toml");
        fs::write(&target, "old").unwrap();
        let error = write_new(&target, "new").unwrap_err();
        assert!(
            error.message().contains("already exists"),
            "{}",
            error.message()
        );
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(names(&dir), ["bert.toml"]);
        fs::remove_dir_all(&dir).unwrap();
    }
}
