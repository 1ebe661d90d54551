//! The tools that ask the client, through the host: the scenarios `tools-call-sampling`,
//! `tools-call-elicitation`, `elicitation-sep1034-defaults` and `elicitation-sep1330-enums`.
//! A client that cannot do what a tool asks makes it an error result, as the scenarios say.

use toolcell_sdk::host::{self, Answer, Sampling};
use toolcell_sdk::schemars::JsonSchema;
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::serde_json::{Value, json};
use toolcell_sdk::{Error, Output, Tool};

use crate::tools::{Nothing, tool};

/// Arguments of `test_sampling`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

/// Arguments of `test_elicitation`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

/// What `test_elicitation` asks for.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde")]
#[schemars(crate = "toolcell_sdk::schemars")]
struct Contact {
    /// User's response
    username: String,
    /// User's email address
    email: String,
}

pub(crate) fn tools() -> Vec<Tool> {
    vec![
        tool(
            "test_sampling",
            "Sampling",
            "Tests server-initiated sampling (LLM completion request)",
            |args: SamplingArgs| {
                let sampled = host::sample(Sampling::new(args.prompt, 100))?;
                let text = match sampled.content {
                    toolcell_sdk::Content::Text(text) => text,
                    other => format!("{other:?}"),
                };
                Ok(Output::text(format!("LLM response: {text}")))
            },
        ),
        tool(
            "test_elicitation",
            "Elicitation",
            "Tests server-initiated elicitation (user input request)",
            |args: ElicitationArgs| {
                let text = match host::elicit::<Contact>(&args.message)? {
                    Answer::Accept(contact) => format!(
                        "User response: action=accept, content={}",
                        json!({"username": contact.username, "email": contact.email})
                    ),
                    Answer::Decline => "User response: action=decline".to_string(),
                    Answer::Cancel => "User response: action=cancel".to_string(),
                };
                Ok(Output::text(text))
            },
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Elicitation with defaults",
            "Tests elicitation with default values for every primitive type (SEP-1034)",
            |_: Nothing| elicit_completed(&defaults_schema()),
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Elicitation with enums",
            "Tests elicitation with every enum form (SEP-1330)",
            |_: Nothing| elicit_completed(&enums_schema()),
        ),
    ]
}

/// Elicits with `schema` and says how it went, as the SEP scenarios ask.
fn elicit_completed(schema: &Value) -> Result<Output, Error> {
    let (action, content) =
        match host::elicit_with_schema("Please review and update the form fields", schema)? {
            Answer::Accept(content) => ("accept", content),
            Answer::Decline => ("decline", json!({})),
            Answer::Cancel => ("cancel", json!({})),
        };
    Ok(Output::text(format!(
        "Elicitation completed: action={action}, content={content}"
    )))
}

/// SEP-1034: a default for every primitive type.
fn defaults_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    })
}

/// SEP-1330: the five forms of enum.
fn enums_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Choose an option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Choose a titled option",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]
            },
            "legacyEnum": {
                "type": "string",
                "description": "Choose a legacy option",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Choose multiple options",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Choose multiple titled options",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]
                }
            }
        },
        "required": []
    })
}
