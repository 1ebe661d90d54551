//! `research_query`: search, group, count and compare the registry's techniques.
//!
//! The tool reads the registry with [`crate::registry::load`] and runs one [`Action`]; each
//! action is a pure function over the techniques ([`search`], [`group_by_status`], [`stats`],
//! [`overlap`]) with unit tests at the end, and [`QueryResult`] carries whichever one ran, plus
//! the registry's warnings.
//!
//! - Search ranks by weighted field hits: each query word (split on whitespace, compared
//!   case-insensitively as a substring) scores the weights of the fields it occurs in
//!   ([`WEIGHTS`]: id 4, name 3, tags 2, topic 2, description 1). Techniques matching more of the
//!   words come first, then the higher score, then the id.
//! - Overlap is the Jaccard similarity |A ∩ B| / |A ∪ B| of the feature sets
//!   tags ∪ {topic} ∪ arXiv ids (lowercased, versions dropped).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::{Deserialize, Serialize};
use toolcell_sdk::{Error, Output};

use crate::arxiv;
use crate::registry::{Priority, Status, Technique};

/// The weight of a query word found in each field, in the order they are checked.
pub(crate) const WEIGHTS: [(&str, u32); 5] = [
    ("id", 4),
    ("name", 3),
    ("tags", 2),
    ("topic", 2),
    ("description", 1),
];

/// Arguments of `research_query`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct QueryArgs {
    /// What to do: `search` (needs `query`), `status` (techniques grouped by status), `stats`
    /// (counts by status, topic and priority) or `overlap` (needs `technique_id`).
    action: Action,
    /// For `overlap`: the technique to compare the others with.
    technique_id: Option<String>,
    /// For `search`: words to look for in ids, names, tags, topics and descriptions.
    query: Option<String>,
    /// Only techniques with this status, for every action. Default `all`.
    #[serde(default)]
    status: StatusFilter,
    /// For `overlap`: the least Jaccard similarity (0-1) to list. Default 0.3.
    #[serde(default = "default_threshold")]
    #[schemars(range(min = 0.0, max = 1.0))]
    threshold: f64,
}

fn default_threshold() -> f64 {
    0.3
}

/// What `research_query` does (see [`QueryArgs::action`]).
///
/// The variants have no doc comments on purpose: schemars then writes a plain `enum` of names,
/// and a wrong value is refused with a message that lists the right ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", rename_all = "lowercase")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) enum Action {
    Search,
    Status,
    Stats,
    Overlap,
}

/// A [`Status`], or `all`; like [`Action`], a plain `enum` in the schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", rename_all = "kebab-case")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) enum StatusFilter {
    #[default]
    All,
    Implemented,
    Planned,
    NotStarted,
    Rejected,
}

impl StatusFilter {
    fn status(self) -> Option<Status> {
        match self {
            StatusFilter::All => None,
            StatusFilter::Implemented => Some(Status::Implemented),
            StatusFilter::Planned => Some(Status::Planned),
            StatusFilter::NotStarted => Some(Status::NotStarted),
            StatusFilter::Rejected => Some(Status::Rejected),
        }
    }

    fn as_str(self) -> &'static str {
        self.status().map_or("all", Status::as_str)
    }

    fn admits(self, technique: &Technique) -> bool {
        self.status().is_none_or(|s| technique.status == s)
    }
}

/// What `research_query` returns as structured content: `action` says which of `matches`,
/// `groups`, `stats` and `overlap` is present.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct QueryResult {
    /// The action that ran.
    action: Action,
    /// The status filter applied (`all` for none).
    status: String,
    /// `search`: the matching techniques, best first.
    #[serde(skip_serializing_if = "Option::is_none")]
    matches: Option<Vec<SearchHit>>,
    /// `status`: the techniques of each status, in the order implemented, planned,
    /// not-started, rejected (only the one asked for when filtered).
    #[serde(skip_serializing_if = "Option::is_none")]
    groups: Option<Vec<StatusGroup>>,
    /// `stats`: the counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<Stats>,
    /// `overlap`: the techniques similar to the one asked about.
    #[serde(skip_serializing_if = "Option::is_none")]
    overlap: Option<Overlap>,
    /// Record files that were skipped (named, with the reason) and dependencies on techniques
    /// the registry lacks.
    warnings: Vec<String>,
}

/// One search result.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct SearchHit {
    /// The technique's id.
    id: String,
    /// Its name.
    name: String,
    /// Its topic.
    topic: String,
    /// Its status.
    status: Status,
    /// Its priority.
    priority: Priority,
    /// The sum, over the query words, of the weights of the fields each occurs in.
    score: u32,
    /// How many of the query words occur somewhere.
    words_matched: usize,
    /// The fields some word occurs in: id, name, tags, topic, description.
    fields: Vec<String>,
}

/// The techniques of one status.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct StatusGroup {
    /// The status.
    status: Status,
    /// How many techniques have it.
    count: usize,
    /// The techniques, by priority and then id.
    techniques: Vec<Brief>,
}

/// A technique in a list.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct Brief {
    /// The id.
    id: String,
    /// The name.
    name: String,
    /// The topic.
    topic: String,
    /// The priority.
    priority: Priority,
}

/// Counts of techniques.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct Stats {
    /// Every technique counted.
    total: usize,
    /// By status; every status is present, zero or not.
    by_status: BTreeMap<String, usize>,
    /// By topic; only topics in use.
    by_topic: BTreeMap<String, usize>,
    /// By priority; every priority is present, zero or not.
    by_priority: BTreeMap<String, usize>,
}

/// The techniques similar to one technique.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct Overlap {
    /// The technique compared with the others.
    technique_id: String,
    /// Its features: tags ∪ {topic} ∪ arXiv ids, lowercased, sorted.
    features: Vec<String>,
    /// The least similarity listed.
    threshold: f64,
    /// The techniques whose Jaccard similarity is at least `threshold` (and above 0), most
    /// similar first, then by id.
    similar: Vec<Similar>,
}

/// One technique similar to another.
#[derive(Debug, PartialEq, Serialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct Similar {
    /// The id.
    id: String,
    /// The name.
    name: String,
    /// |A ∩ B| / |A ∪ B| of the two feature sets, 0-1.
    similarity: f64,
    /// The features both have, sorted.
    shared: Vec<String>,
    /// How many features the two have between them (|A ∪ B|).
    union: usize,
}

/// Runs `research_query` on the registry in the first mount.
pub(crate) fn research_query(args: QueryArgs) -> Result<Output, Error> {
    let missing = match args.action {
        Action::Search if args.query.is_none() => Some("query"),
        Action::Overlap if args.technique_id.is_none() => Some("technique_id"),
        _ => None,
    };
    if let Some(field) = missing {
        return Err(Error::new(format!(
            "action `{}` needs the argument `{field}`",
            action_name(args.action)
        )));
    }
    let registry = crate::open_registry()?;
    let warnings = registry.warnings();
    let chosen: Vec<&Technique> = registry
        .techniques
        .iter()
        .filter(|t| args.status.admits(t))
        .collect();

    let mut result = QueryResult {
        action: args.action,
        status: args.status.as_str().to_string(),
        matches: None,
        groups: None,
        stats: None,
        overlap: None,
        warnings,
    };
    let mut text = match args.action {
        Action::Search => {
            let query = args.query.unwrap_or_default();
            if query.split_whitespace().next().is_none() {
                return Err(Error::new("`query` is empty: give one or more words"));
            }
            let hits = search(&chosen, &query);
            let text = render_search(&query, &hits);
            result.matches = Some(hits);
            text
        }
        Action::Status => {
            let groups = group_by_status(&chosen, args.status.status());
            let text = render_groups(&groups);
            result.groups = Some(groups);
            text
        }
        Action::Stats => {
            let stats = stats(&chosen);
            let text = render_stats(&stats);
            result.stats = Some(stats);
            text
        }
        Action::Overlap => {
            let id = args.technique_id.unwrap_or_default();
            let Some(subject) = registry.get(&id) else {
                let known: Vec<&str> = registry.techniques.iter().map(|t| t.id.as_str()).collect();
                return Err(Error::new(format!(
                    "no technique `{id}` in the registry; the ids are: {}",
                    known.join(", ")
                )));
            };
            let overlap = overlap(subject, &chosen, args.threshold);
            let text = render_overlap(&overlap);
            result.overlap = Some(overlap);
            text
        }
    };
    for warning in &result.warnings {
        let _ = writeln!(text, "warning: {warning}");
    }
    Output::structured(&result, text)
}

fn action_name(action: Action) -> &'static str {
    match action {
        Action::Search => "search",
        Action::Status => "status",
        Action::Stats => "stats",
        Action::Overlap => "overlap",
    }
}

/// The techniques matching any word of `query`, ranked (see the module's documentation).
pub(crate) fn search(techniques: &[&Technique], query: &str) -> Vec<SearchHit> {
    let mut words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    words.sort();
    words.dedup();
    let mut hits: Vec<SearchHit> = techniques
        .iter()
        .filter_map(|technique| {
            let fields = [
                technique.id.to_lowercase(),
                technique.name.to_lowercase(),
                technique.tags.join("\n").to_lowercase(),
                technique.topic.to_lowercase(),
                technique.description.to_lowercase(),
            ];
            let mut score = 0;
            let mut words_matched = 0;
            let mut hit_fields = [false; WEIGHTS.len()];
            for word in &words {
                let mut matched = false;
                for (index, (field, (_, weight))) in fields.iter().zip(WEIGHTS).enumerate() {
                    if field.contains(word.as_str()) {
                        score += weight;
                        hit_fields[index] = true;
                        matched = true;
                    }
                }
                words_matched += usize::from(matched);
            }
            (words_matched > 0).then(|| SearchHit {
                id: technique.id.clone(),
                name: technique.name.clone(),
                topic: technique.topic.clone(),
                status: technique.status,
                priority: technique.priority,
                score,
                words_matched,
                fields: WEIGHTS
                    .iter()
                    .zip(hit_fields)
                    .filter(|(_, hit)| *hit)
                    .map(|((name, _), _)| name.to_string())
                    .collect(),
            })
        })
        .collect();
    hits.sort_by(|a, b| {
        b.words_matched
            .cmp(&a.words_matched)
            .then(b.score.cmp(&a.score))
            .then_with(|| a.id.cmp(&b.id))
    });
    hits
}

/// The techniques grouped by status: every status when `only` is `None`, else that one.
pub(crate) fn group_by_status(techniques: &[&Technique], only: Option<Status>) -> Vec<StatusGroup> {
    Status::ALL
        .into_iter()
        .filter(|status| only.is_none_or(|o| o == *status))
        .map(|status| {
            let mut members: Vec<&&Technique> =
                techniques.iter().filter(|t| t.status == status).collect();
            members.sort_by(|a, b| a.priority.cmp(&b.priority).then_with(|| a.id.cmp(&b.id)));
            StatusGroup {
                status,
                count: members.len(),
                techniques: members.into_iter().map(|t| brief(t)).collect(),
            }
        })
        .collect()
}

fn brief(technique: &Technique) -> Brief {
    Brief {
        id: technique.id.clone(),
        name: technique.name.clone(),
        topic: technique.topic.clone(),
        priority: technique.priority,
    }
}

/// Counts by status, topic and priority.
pub(crate) fn stats(techniques: &[&Technique]) -> Stats {
    let mut by_status: BTreeMap<String, usize> = Status::ALL
        .iter()
        .map(|s| (s.as_str().to_string(), 0))
        .collect();
    let mut by_priority: BTreeMap<String, usize> = Priority::ALL
        .iter()
        .map(|p| (p.as_str().to_string(), 0))
        .collect();
    let mut by_topic: BTreeMap<String, usize> = BTreeMap::new();
    for technique in techniques {
        *by_status
            .entry(technique.status.as_str().to_string())
            .or_default() += 1;
        *by_priority
            .entry(technique.priority.as_str().to_string())
            .or_default() += 1;
        *by_topic.entry(technique.topic.clone()).or_default() += 1;
    }
    Stats {
        total: techniques.len(),
        by_status,
        by_topic,
        by_priority,
    }
}

/// tags ∪ {topic} ∪ arXiv ids, lowercased and trimmed, versions dropped.
pub(crate) fn features(technique: &Technique) -> BTreeSet<String> {
    technique
        .tags
        .iter()
        .map(|tag| tag.trim().to_lowercase())
        .chain([technique.topic.trim().to_lowercase()])
        .chain(
            technique
                .papers
                .iter()
                .map(|paper| arxiv::base_id(paper.arxiv.trim()).to_lowercase()),
        )
        .collect()
}

/// |a ∩ b| / |a ∪ b|, and 0 for two empty sets.
pub(crate) fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// The techniques other than `subject` at least `threshold` similar to it, most similar first.
pub(crate) fn overlap(subject: &Technique, techniques: &[&Technique], threshold: f64) -> Overlap {
    // A similarity is a ratio of small counts; allow for rounding so that 3/10 passes 0.3.
    const EPSILON: f64 = 1e-9;
    let mine = features(subject);
    let mut similar: Vec<Similar> = techniques
        .iter()
        .filter(|t| t.id != subject.id)
        .filter_map(|t| {
            let theirs = features(t);
            let similarity = jaccard(&mine, &theirs);
            (similarity > 0.0 && similarity + EPSILON >= threshold).then(|| Similar {
                id: t.id.clone(),
                name: t.name.clone(),
                similarity,
                shared: mine.intersection(&theirs).cloned().collect(),
                union: mine.union(&theirs).count(),
            })
        })
        .collect();
    similar.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then_with(|| a.id.cmp(&b.id))
    });
    Overlap {
        technique_id: subject.id.clone(),
        features: mine.into_iter().collect(),
        threshold,
        similar,
    }
}

fn render_search(query: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("no technique matches \"{query}\"\n");
    }
    let mut text = format!(
        "{} technique{} match \"{query}\" (best first):\n",
        hits.len(),
        plural(hits.len())
    );
    for hit in hits {
        let _ = writeln!(
            text,
            "- {} ({}) [{}, {}, {}] score {}, in {}",
            hit.id,
            hit.name,
            hit.status,
            hit.priority,
            hit.topic,
            hit.score,
            hit.fields.join(", ")
        );
    }
    text
}

fn render_groups(groups: &[StatusGroup]) -> String {
    let mut text = String::new();
    for group in groups {
        let _ = writeln!(text, "{} ({}):", group.status, group.count);
        for t in &group.techniques {
            let _ = writeln!(
                text,
                "- {} ({}) [{}, {}]",
                t.id, t.name, t.priority, t.topic
            );
        }
    }
    text
}

fn render_stats(stats: &Stats) -> String {
    let line = |map: &BTreeMap<String, usize>| {
        map.iter()
            .map(|(key, count)| format!("{key} {count}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // Statuses in workflow order rather than alphabetical.
    let by_status = Status::ALL
        .iter()
        .map(|s| format!("{s} {}", stats.by_status.get(s.as_str()).unwrap_or(&0)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} technique{}\nby status: {by_status}\nby priority: {}\nby topic: {}\n",
        stats.total,
        plural(stats.total),
        line(&stats.by_priority),
        line(&stats.by_topic)
    )
}

fn render_overlap(overlap: &Overlap) -> String {
    let mut text = format!(
        "techniques overlapping `{}` (Jaccard over tags, topic and papers, threshold {}):\n",
        overlap.technique_id, overlap.threshold
    );
    if overlap.similar.is_empty() {
        text.push_str("none\n");
    }
    for s in &overlap.similar {
        let _ = writeln!(
            text,
            "- {} ({}) {:.3}: shares {}",
            s.id,
            s.name,
            s.similarity,
            s.shared.join(", ")
        );
    }
    text
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    use super::*;
    use crate::registry;

    fn technique(id: &str, topic: &str, tags: &[&str], papers: &[&str]) -> Technique {
        let mut text = format!(
            "id = \"{id}\"\nname = \"{id} name\"\ndescription = \"about {id}\"\n\
             topic = \"{topic}\"\nstatus = \"planned\"\npriority = \"P2\"\ntags = {tags:?}\n"
        );
        for paper in papers {
            text.push_str(&format!(
                "[[papers]]\narxiv = \"{paper}\"\ntitle = \"t\"\nyear = 2020\n"
            ));
        }
        registry::parse_record(&text, id).unwrap()
    }

    fn sample() -> Vec<Technique> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("registry");
        registry::load(&dir).unwrap().techniques
    }

    fn ids<T>(items: &[T], id: impl Fn(&T) -> &str) -> Vec<String> {
        items.iter().map(|i| id(i).to_string()).collect()
    }

    #[test]
    fn jaccard_is_intersection_over_union() {
        let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        assert_eq!(jaccard(&set(&["a", "b"]), &set(&["b", "c"])), 1.0 / 3.0);
        assert_eq!(jaccard(&set(&["a"]), &set(&["a"])), 1.0);
        assert_eq!(jaccard(&set(&["a"]), &set(&["b"])), 0.0);
        assert_eq!(jaccard(&set(&[]), &set(&[])), 0.0);
    }

    #[test]
    fn features_are_tags_topic_and_papers_normalised() {
        let t = technique(
            "x",
            "Fine-Tuning",
            &["Low-Rank", " adapters "],
            &["2106.09685v2"],
        );
        assert_eq!(
            features(&t).into_iter().collect::<Vec<_>>(),
            ["2106.09685", "adapters", "fine-tuning", "low-rank"]
        );
    }

    #[test]
    fn overlap_ranks_by_similarity_and_applies_the_threshold() {
        let a = technique("a", "t", &["x", "y", "z"], &["1111.11111"]);
        let b = technique("b", "t", &["x", "y", "z"], &["2222.22222"]); // 4/6
        let c = technique("c", "t", &["x"], &[]); // 2/5
        let d = technique("d", "u", &["x"], &[]); // 1/6
        let e = technique("e", "v", &["w"], &[]); // 0
        let all = [&a, &b, &c, &d, &e];
        let result = overlap(&a, &all, 0.3);
        assert_eq!(ids(&result.similar, |s| &s.id), ["b", "c"]);
        assert_eq!(result.similar[0].similarity, 4.0 / 6.0);
        assert_eq!(result.similar[0].shared, ["t", "x", "y", "z"]);
        assert_eq!(result.similar[0].union, 6);
        assert_eq!(result.similar[1].similarity, 2.0 / 5.0);
        assert_eq!(ids(&overlap(&a, &all, 0.4).similar, |s| &s.id), ["b", "c"]);
        assert_eq!(
            ids(&overlap(&a, &all, 0.0).similar, |s| &s.id),
            ["b", "c", "d"]
        );
        assert!(overlap(&a, &all, 1.0).similar.is_empty());
    }

    #[test]
    fn overlap_threshold_is_inclusive_despite_rounding() {
        // 3 shared of 10: 0.3 exactly, which floating point may put a hair either side.
        let a = technique("a", "t", &["1", "2", "3", "4", "5", "6"], &[]);
        let b = technique("b", "t", &["1", "2", "7", "8", "9"], &[]);
        let result = overlap(&a, &[&a, &b], 0.3);
        assert_eq!(ids(&result.similar, |s| &s.id), ["b"]);
        assert_eq!(result.similar[0].union, 10);
    }

    #[test]
    fn search_weights_fields_and_prefers_more_words() {
        let mut lora = technique("lora", "fine-tuning", &["low-rank"], &[]);
        lora.name = "LoRA".into();
        lora.description = "Adapts weights with a low-rank update.".into();
        let mut other = technique("rank-other", "ranking", &[], &[]);
        other.description = "Nothing about adapters.".into();
        let all = [&lora, &other];

        let hits = search(&all, "RANK");
        // lora: tags 2 + description 1; rank-other: id 4 + name 3 + topic 2.
        assert_eq!(ids(&hits, |h| &h.id), ["rank-other", "lora"]);
        assert_eq!(hits[0].score, 9);
        assert_eq!(hits[0].fields, ["id", "name", "topic"]);
        assert_eq!(hits[1].score, 3);
        assert_eq!(hits[1].fields, ["tags", "description"]);

        // Two words beat one, however heavy.
        let hits = search(&all, "rank lora");
        assert_eq!(ids(&hits, |h| &h.id), ["lora", "rank-other"]);
        assert_eq!(hits[0].words_matched, 2);
        assert_eq!(hits[0].score, 3 + 4 + 3);

        assert!(search(&all, "quantum").is_empty());
        // A repeated word counts once.
        assert_eq!(search(&all, "lora LORA")[0].score, 7);
    }

    #[test]
    fn groups_and_stats_cover_every_status() {
        let mut a = technique("a", "t", &[], &[]);
        a.status = Status::Implemented;
        a.priority = Priority::P3;
        let mut b = technique("b", "t", &[], &[]);
        b.status = Status::Implemented;
        b.priority = Priority::P1;
        let c = technique("c", "u", &[], &[]);
        let all = [&a, &b, &c];
        let groups = group_by_status(&all, None);
        assert_eq!(groups.len(), 4);
        assert_eq!(ids(&groups[0].techniques, |t| &t.id), ["b", "a"]);
        assert_eq!(groups[1].count, 1);
        assert_eq!(groups[3].count, 0);
        let only = group_by_status(&all, Some(Status::Planned));
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].status, Status::Planned);

        let stats = stats(&all);
        assert_eq!(stats.total, 3);
        assert_eq!(stats.by_status["implemented"], 2);
        assert_eq!(stats.by_status["rejected"], 0);
        assert_eq!(stats.by_priority["P2"], 1);
        assert_eq!(stats.by_priority["P4"], 0);
        assert_eq!(stats.by_topic.len(), 2);
    }

    #[test]
    fn the_sample_registry_overlaps_as_documented() {
        let sample = sample();
        let all: Vec<&Technique> = sample.iter().collect();
        let lora = all.iter().find(|t| t.id == "lora").unwrap();
        let result = overlap(lora, &all, 0.3);
        assert_eq!(ids(&result.similar, |s| &s.id), ["qlora"]);
        assert_eq!(result.similar[0].similarity, 3.0 / 8.0);
    }

    #[test]
    fn the_output_schema_is_an_object() {
        let schema = toolcell_sdk::schemars::schema_for!(QueryResult);
        let value = schema.as_value();
        assert_eq!(value["type"], "object");
        let required = value["required"].as_array().unwrap();
        assert!(required.iter().any(|r| r == "warnings"));
        assert!(!required.iter().any(|r| r == "matches"));
    }
}
