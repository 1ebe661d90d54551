//! The tools that ask the client, through the host: the scenarios `tools-call-sampling`,
//! `tools-call-elicitation`, `elicitation-sep1034-defaults` and `elicitation-sep1330-enums`
//! (2025-11-25: the host asks the client), and the 2026-07-28 `input-required-result-*` family
//! and `server-stateless`'s `test_missing_capability` and `test_streaming_elicitation` (the
//! host answers `input_required` and the retry carries the answers). A client that cannot do
//! what a tool asks makes it an error result, as the scenarios say.

use toolcell_sdk::host::{self, Answer, Question, Reply, Sampling};
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
    let mut tools = vec![
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
    ];
    tools.extend(input_required_tools());
    tools
}

/// An elicitation of one required string property `name`.
fn ask_for(property: &str, message: &str) -> Question {
    Question::Elicit {
        message: message.to_string(),
        schema: json!({
            "type": "object",
            "properties": { property: { "type": "string" } },
            "required": [property]
        }),
    }
}

/// The value of `property` in an accepted elicitation, or what the user did instead.
fn accepted(reply: &Reply, property: &str) -> String {
    match reply {
        Reply::Elicit(Answer::Accept(content)) => content[property]
            .as_str()
            .map_or_else(|| content[property].to_string(), str::to_string),
        Reply::Elicit(Answer::Decline) => "(declined)".to_string(),
        Reply::Elicit(Answer::Cancel) => "(cancelled)".to_string(),
        other => format!("{other:?}"),
    }
}

/// The text of a sampling reply.
fn sampled_text(reply: &Reply) -> String {
    match reply {
        Reply::Sample(sampled) => match &sampled.content {
            toolcell_sdk::Content::Text(text) => text.clone(),
            other => format!("{other:?}"),
        },
        other => format!("{other:?}"),
    }
}

/// The URIs of a roots reply.
fn root_uris(reply: &Reply) -> String {
    match reply {
        Reply::Roots(roots) => roots
            .iter()
            .map(|root| root.uri.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        other => format!("{other:?}"),
    }
}

/// Asks `questions` under their keys.
fn ask(questions: Vec<(&str, Question)>) -> Result<Vec<Reply>, Error> {
    host::ask(
        questions
            .into_iter()
            .map(|(key, question)| (key.to_string(), question))
            .collect(),
    )
}

fn input_required_tools() -> Vec<Tool> {
    vec![
        tool(
            "test_input_required_result_elicitation",
            "Input required: elicitation",
            "Asks the user's name through an input_required result (SEP-2322)",
            |_: Nothing| {
                let replies = ask(vec![("user_name", ask_for("name", "What is your name?"))])?;
                Ok(Output::text(format!(
                    "Hello, {}!",
                    accepted(&replies[0], "name")
                )))
            },
        ),
        tool(
            "test_input_required_result_sampling",
            "Input required: sampling",
            "Asks the client's model a question through an input_required result (SEP-2322)",
            |_: Nothing| {
                let question = Sampling::new("What is the capital of France?", 100);
                let replies = ask(vec![("capital_question", Question::Sample(question))])?;
                Ok(Output::text(format!(
                    "The model says: {}",
                    sampled_text(&replies[0])
                )))
            },
        ),
        tool(
            "test_input_required_result_list_roots",
            "Input required: roots",
            "Asks the client's roots through an input_required result (SEP-2322)",
            |_: Nothing| {
                let replies = ask(vec![("client_roots", Question::Roots)])?;
                Ok(Output::text(format!(
                    "Client roots: {}",
                    root_uris(&replies[0])
                )))
            },
        ),
        tool(
            "test_input_required_result_request_state",
            "Input required: request state",
            "Asks for a confirmation; the answer arrives only with a requestState that passed \
             the host's integrity check (SEP-2322)",
            |_: Nothing| {
                let confirm = Question::Elicit {
                    message: "Please confirm".to_string(),
                    schema: json!({
                        "type": "object",
                        "properties": { "ok": { "type": "boolean" } },
                        "required": ["ok"]
                    }),
                };
                let replies = ask(vec![("confirm", confirm)])?;
                Ok(Output::text(format!(
                    "state-ok: confirmed={}",
                    accepted(&replies[0], "ok")
                )))
            },
        ),
        tool(
            "test_input_required_result_multiple_inputs",
            "Input required: several inputs",
            "Asks an elicitation, a sampling request and the roots in one round (SEP-2322)",
            |_: Nothing| {
                let replies = ask(vec![
                    ("user_name", ask_for("name", "What is your name?")),
                    (
                        "greeting",
                        Question::Sample(Sampling::new("Generate a greeting", 50)),
                    ),
                    ("client_roots", Question::Roots),
                ])?;
                Ok(Output::text(format!(
                    "name: {}; greeting: {}; roots: {}",
                    accepted(&replies[0], "name"),
                    sampled_text(&replies[1]),
                    root_uris(&replies[2])
                )))
            },
        ),
        tool(
            "test_input_required_result_multi_round",
            "Input required: two rounds",
            "Asks a name, then a colour, in two rounds (SEP-2322)",
            |_: Nothing| {
                let first = ask(vec![(
                    "step1",
                    ask_for("name", "Step 1: What is your name?"),
                )])?;
                let second = ask(vec![(
                    "step2",
                    ask_for("color", "Step 2: What is your favorite color?"),
                )])?;
                Ok(Output::text(format!(
                    "{}'s favorite color is {}",
                    accepted(&first[0], "name"),
                    accepted(&second[0], "color")
                )))
            },
        ),
        tool(
            "test_input_required_result_tampered_state",
            "Input required: tampered state",
            "Asks for a confirmation; a tampered requestState is refused by the host (SEP-2322)",
            |_: Nothing| {
                let replies = ask(vec![("confirm", ask_for("ok", "Please confirm"))])?;
                Ok(Output::text(format!(
                    "confirmed: {}",
                    accepted(&replies[0], "ok")
                )))
            },
        ),
        tool(
            "test_input_required_result_capabilities",
            "Input required: declared capabilities only",
            "Asks only what the client declared it can answer (SEP-2322)",
            |_: Nothing| {
                let declared = host::client_capabilities();
                let mut questions = Vec::new();
                if declared.elicitation {
                    questions.push(("user_name", ask_for("name", "What is your name?")));
                }
                if declared.sampling {
                    let question = Sampling::new("What is the capital of France?", 100);
                    questions.push(("capital_question", Question::Sample(question)));
                }
                if declared.roots {
                    questions.push(("client_roots", Question::Roots));
                }
                let asked = questions.len();
                ask(questions)?;
                Ok(Output::text(format!("{asked} question(s) answered")))
            },
        ),
        tool(
            "test_missing_capability",
            "Missing capability",
            "Asks the client's model whether or not the client declared sampling: a \
             2026-07-28 client that did not is refused with -32021 (SEP-2575)",
            |_: Nothing| {
                let sampled = host::sample(Sampling::new("Say hello", 20))?;
                Ok(Output::text(format!("{:?}", sampled.content)))
            },
        ),
        tool(
            "test_streaming_elicitation",
            "Elicitation on a stateless request",
            "Asks the user's name: on 2026-07-28 an input_required result, never a request on \
             the response stream (SEP-2575)",
            |_: Nothing| {
                let replies = ask(vec![("user_name", ask_for("name", "What is your name?"))])?;
                Ok(Output::text(format!(
                    "Hello, {}!",
                    accepted(&replies[0], "name")
                )))
            },
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
