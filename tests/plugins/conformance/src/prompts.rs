//! The prompts the scenarios `prompts-*` get, and the completions `completion-complete` asks
//! for.

use toolcell_sdk::host::{self, Answer, Question, Reply};
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::serde_json::json;
use toolcell_sdk::{Content, Message, Prompt};

use crate::{RED_PIXEL_PNG, completions, resources};

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Nothing {}

/// Arguments of `test_prompt_with_arguments`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct TwoArguments {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

/// Arguments of `test_prompt_with_embedded_resource`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", rename_all = "camelCase")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct EmbeddedResource {
    /// URI of the resource to embed
    resource_uri: String,
}

/// What `arg1` and `arg2` complete from: the suite's example (`par` gives `paris`, `park`,
/// `party`) and the values its scenarios send.
const WORDS: &[&str] = &[
    "hello",
    "paris",
    "park",
    "party",
    "test",
    "testValue1",
    "testValue2",
    "world",
];

pub(crate) fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new("test_simple_prompt", |_: Nothing| {
            Ok(Message::user("This is a simple prompt for testing."))
        })
        .title("Simple Test Prompt")
        .description("A simple prompt without arguments"),
        Prompt::new("test_prompt_with_arguments", |args: TwoArguments| {
            Ok(Message::user(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                args.arg1, args.arg2
            )))
        })
        .title("Prompt With Arguments")
        .description("A prompt with required arguments")
        .complete("arg1", |typed, _| completions(WORDS, typed))
        .complete("arg2", |typed, _| completions(WORDS, typed)),
        Prompt::new(
            "test_prompt_with_embedded_resource",
            |args: EmbeddedResource| {
                Ok(vec![
                    Message::user(Content::EmbeddedText {
                        uri: args.resource_uri,
                        mime_type: Some("text/plain".into()),
                        text: "Embedded resource content for testing.".into(),
                    }),
                    Message::user("Please process the embedded resource above."),
                ])
            },
        )
        .title("Prompt With Embedded Resource")
        .description("A prompt that includes an embedded resource")
        .complete("resourceUri", |typed, _| {
            completions(resources::URIS, typed)
        }),
        Prompt::new("test_prompt_with_image", |_: Nothing| {
            Ok(vec![
                Message::user(Content::Image {
                    data: RED_PIXEL_PNG.to_vec(),
                    mime_type: "image/png".into(),
                }),
                Message::user("Please analyze the image above."),
            ])
        })
        .title("Prompt With Image")
        .description("A prompt that includes image content"),
        Prompt::new("test_input_required_result_prompt", |_: Nothing| {
            let question = Question::Elicit {
                message: "What context should the prompt use?".to_string(),
                schema: json!({
                    "type": "object",
                    "properties": { "context": { "type": "string" } },
                    "required": ["context"]
                }),
            };
            let replies = host::ask(vec![("user_context".to_string(), question)])?;
            let context = match &replies[0] {
                Reply::Elicit(Answer::Accept(content)) => {
                    content["context"].as_str().unwrap_or_default().to_string()
                }
                _ => "no context".to_string(),
            };
            Ok(Message::user(format!(
                "Answer with this context: {context}"
            )))
        })
        .title("Prompt With Input Required")
        .description("A prompt that asks the user for its context first (SEP-2322)"),
    ]
}
