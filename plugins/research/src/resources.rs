//! The registry as MCP resources and a prompt.
//!
//! - Each technique is the resource `research://technique/{id}`: its record, as TOML. The
//!   template completes `id` from the registry; `resources/list` lists every technique.
//! - The prompt `review_technique` asks the model to review one technique with its papers: the
//!   record comes embedded, and the papers as links to arXiv.
//!
//! Both read the registry in the plugin's first mount, read-only, like `research_query`.

use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{
    Content, Contents, Error, Message, Prompt, Resource, ResourceTemplate, Variables,
};

use crate::open_registry;
use crate::registry::{Registry, Technique};

/// The URI template of techniques.
const TECHNIQUE_TEMPLATE: &str = "research://technique/{id}";
/// The MIME type of a record.
const RECORD_MIME: &str = "application/toml";

fn technique_uri(id: &str) -> String {
    format!("research://technique/{id}")
}

/// The template of techniques.
pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(
            TECHNIQUE_TEMPLATE,
            "technique",
            |_uri: &str, vars: &Variables| {
                let id = vars.get("id").map(String::as_str).unwrap_or_default();
                let registry = open_registry()?;
                record(&registry, id)
            },
        )
        .title("Research technique")
        .description(
            "One technique of the research registry, by its id: its record (description, \
             papers, status, priority, decision history) as TOML.",
        )
        .mime_type(RECORD_MIME)
        .complete("id", |typed: &str, _: &Variables| technique_ids(typed)),
    ]
}

/// Every technique of the registry, when it is mounted.
pub(crate) fn resources() -> Vec<Resource> {
    let Ok(registry) = open_registry() else {
        return Vec::new();
    };
    registry
        .techniques
        .iter()
        .map(|technique| {
            let id = technique.id.clone();
            Resource::new(technique_uri(&id), id.clone(), move || {
                let registry = open_registry()?;
                record(&registry, &id)
            })
            .title(technique.name.clone())
            .description(technique.description.clone())
            .mime_type(RECORD_MIME)
        })
        .collect()
}

/// The record of technique `id`, as TOML; not found when the registry has none.
fn record(registry: &Registry, id: &str) -> Result<Contents, Error> {
    let technique = find(registry, id)?;
    let text = toml::to_string(technique)
        .map_err(|e| Error::new(format!("cannot write `{id}` as TOML: {e}")))?;
    Ok(Contents::text(text).mime_type(RECORD_MIME))
}

fn find<'a>(registry: &'a Registry, id: &str) -> Result<&'a Technique, Error> {
    registry.get(id).ok_or_else(|| {
        Error::not_found(format!(
            "the registry has no technique `{id}`; research_query lists the techniques"
        ))
    })
}

/// The ids that start with `typed`, sorted.
fn technique_ids(typed: &str) -> Vec<String> {
    let Ok(registry) = open_registry() else {
        return Vec::new();
    };
    registry
        .techniques
        .iter()
        .map(|technique| technique.id.clone())
        .filter(|id| id.starts_with(typed))
        .collect()
}

/// Arguments of `review_technique`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ReviewArgs {
    /// The technique's id, such as `lora`.
    technique_id: String,
}

/// The prompt that reviews a technique.
pub(crate) fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("review_technique", review)
            .title("Review a research technique")
            .description(
                "Review one technique of the research registry with its papers: whether its \
                 status and priority still hold, what its papers support, and what to decide \
                 next.",
            )
            .complete("technique_id", |typed: &str, _: &Variables| {
                technique_ids(typed)
            }),
    ]
}

fn review(args: ReviewArgs) -> Result<Vec<Message>, Error> {
    let registry = open_registry()?;
    let technique = find(&registry, &args.technique_id)?;
    let record_text = toml::to_string(technique)
        .map_err(|e| Error::new(format!("cannot write the record as TOML: {e}")))?;
    let mut messages = vec![Message::user(Content::EmbeddedText {
        uri: technique_uri(&technique.id),
        mime_type: Some(RECORD_MIME.into()),
        text: record_text,
    })];
    for paper in &technique.papers {
        messages.push(Message::user(Content::ResourceLink {
            uri: format!("https://arxiv.org/abs/{}", paper.arxiv),
            name: format!("{} ({})", paper.title, paper.year),
            mime_type: Some("text/html".into()),
            size: None,
        }));
    }
    let papers = match technique.papers.len() {
        0 => "It lists no papers; say what evidence it would need.".to_string(),
        1 => "Its paper is linked above.".to_string(),
        n => format!("Its {n} papers are linked above."),
    };
    messages.push(Message::user(format!(
        "Review the technique `{}` ({}), whose record is above. {papers} Its status is {} at \
         priority {}. Say whether the papers support what the record claims, whether the \
         status and priority still hold given its decision history and dependencies, and what \
         should be decided next, with reasons.",
        technique.id, technique.name, technique.status, technique.priority
    )));
    Ok(messages)
}
