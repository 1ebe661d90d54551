//! Host services: logging, progress, cancellation and configuration; and
//! asking the client, through the host, for the user's input ([`elicit`]), a
//! message from its model ([`sample`]) or its roots ([`roots`]).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::__private::bindings::toolcell::plugin0_1_0::host as wit_host;
use crate::__private::bindings::toolcell::plugin0_2_0::client as wit_client;
use crate::__private::bindings::toolcell::plugin0_2_0::types as wit_types;
use crate::{Content, Error};

pub use wit_host::LogLevel;

/// Writes a line to the host's log, tagged with the plugin and tool.
pub fn log(level: LogLevel, message: &str) {
    wit_host::log(level, message);
}

/// Reports progress on the current call; `progress` should increase
/// with each report, and `total` is the value it will reach, if known.
pub fn progress(progress: f64, total: Option<f64>, message: Option<&str>) {
    wit_host::report_progress(progress, total, message);
}

/// Whether the client cancelled the current call.
pub fn is_cancelled() -> bool {
    wit_host::is_cancelled()
}

/// One value of the plugin's `config` table in `plugins.toml`.
pub fn config(key: &str) -> Option<String> {
    wit_host::get_config(key)
}

/// Every value of the plugin's `config` table, sorted by key.
pub fn config_entries() -> Vec<(String, String)> {
    wit_host::config_entries()
}

/// The user's answer to an elicitation.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer<T> {
    /// The user answered.
    Accept(T),
    /// The user said no.
    Decline,
    /// The user dismissed the question without choosing.
    Cancel,
}

/// Asks the user for a `T` through the client: `message` says what and why. The schema sent is
/// derived from `T` (a struct of strings, numbers, booleans and enums, as MCP elicitation
/// allows; doc comments become descriptions), and an accepted answer is decoded into `T`.
///
/// Fails with a message the model can act on when the client cannot elicit (it did not declare
/// the capability, or the request uses a protocol revision Toolcell does not relay it on), when
/// the request fails, or when the answer does not decode.
pub fn elicit<T: DeserializeOwned + JsonSchema>(message: &str) -> Result<Answer<T>, Error> {
    let answer = elicit_with_schema(message, &crate::schema::input_value::<T>())?;
    Ok(match answer {
        Answer::Accept(value) => Answer::Accept(
            serde_json::from_value(value)
                .map_err(|e| Error::new(format!("the user's answer does not decode: {e}")))?,
        ),
        Answer::Decline => Answer::Decline,
        Answer::Cancel => Answer::Cancel,
    })
}

/// [`elicit`] with a schema written by hand: a JSON Schema of an object whose properties are
/// primitive (with `default`s, `enum`s, `oneOf` titles, as MCP allows). The answer is the JSON
/// object the user filled in.
pub fn elicit_with_schema(message: &str, schema: &Value) -> Result<Answer<Value>, Error> {
    elicit_answer(wit_client::elicit(message, &schema.to_string()).map_err(client_error)?)
}

fn elicit_answer(answer: wit_client::ElicitAnswer) -> Result<Answer<Value>, Error> {
    match answer {
        wit_client::ElicitAnswer::Accept(text) => {
            let value = serde_json::from_str(&text)
                .map_err(|e| Error::new(format!("the user's answer is not JSON: {e}")))?;
            Ok(Answer::Accept(value))
        }
        wit_client::ElicitAnswer::Decline => Ok(Answer::Decline),
        wit_client::ElicitAnswer::Cancel => Ok(Answer::Cancel),
    }
}

/// A request for a message from the client's model; see [`sample`].
#[derive(Clone, Debug)]
pub struct Sampling {
    messages: Vec<(Role, Content)>,
    system_prompt: Option<String>,
    max_tokens: u32,
    model_hints: Vec<String>,
    cost_priority: Option<f64>,
    speed_priority: Option<f64>,
    intelligence_priority: Option<f64>,
}

/// Who says a message of a sampling request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

impl Sampling {
    /// A request whose conversation is one user message, answered in at most `max_tokens`.
    pub fn new(user: impl Into<Content>, max_tokens: u32) -> Sampling {
        Sampling {
            messages: vec![(Role::User, user.into())],
            system_prompt: None,
            max_tokens,
            model_hints: Vec::new(),
            cost_priority: None,
            speed_priority: None,
            intelligence_priority: None,
        }
    }

    /// Adds a message to the conversation: text, an image or a sound.
    pub fn message(mut self, role: Role, content: impl Into<Content>) -> Sampling {
        self.messages.push((role, content.into()));
        self
    }

    /// A system prompt, which the client may change or leave out.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Sampling {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// A model name to prefer (a hint; the client chooses). Hints count in the order given.
    pub fn model_hint(mut self, name: impl Into<String>) -> Sampling {
        self.model_hints.push(name.into());
        self
    }

    /// How much cost, speed and intelligence matter, each from 0 to 1.
    pub fn priorities(mut self, cost: f64, speed: f64, intelligence: f64) -> Sampling {
        self.cost_priority = Some(cost);
        self.speed_priority = Some(speed);
        self.intelligence_priority = Some(intelligence);
        self
    }
}

/// The client model's answer to a [`Sampling`] request.
#[derive(Clone, Debug)]
pub struct Sampled {
    /// What it says: text, an image or a sound.
    pub content: Content,
    /// The model that answered.
    pub model: String,
    /// Why it stopped, such as `endTurn` or `maxTokens`.
    pub stop_reason: Option<String>,
}

/// Asks the client's model for a message. Fails with a message the model can act on when the
/// client cannot sample, or the request fails.
pub fn sample(request: Sampling) -> Result<Sampled, Error> {
    let answer = wit_client::sample(&request.into_wit()).map_err(client_error)?;
    Ok(sampled(answer))
}

impl Sampling {
    fn into_wit(self) -> wit_client::SamplingRequest {
        let role = |role: Role| match role {
            Role::User => wit_types::Role::User,
            Role::Assistant => wit_types::Role::Assistant,
        };
        wit_client::SamplingRequest {
            messages: self
                .messages
                .into_iter()
                .map(|(who, content)| wit_client::SamplingMessage {
                    role: role(who),
                    content: content.into_wit(),
                })
                .collect(),
            system_prompt: self.system_prompt,
            max_tokens: self.max_tokens,
            model_hints: self.model_hints,
            cost_priority: self.cost_priority,
            speed_priority: self.speed_priority,
            intelligence_priority: self.intelligence_priority,
        }
    }
}

fn sampled(answer: wit_client::SamplingResult) -> Sampled {
    Sampled {
        content: Content::from_wit(answer.content),
        model: answer.model,
        stop_reason: answer.stop_reason,
    }
}

/// A folder or file the client works in, as its roots list names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Root {
    /// Its URI, such as `file:///home/me/project`.
    pub uri: String,
    /// A name for it.
    pub name: Option<String>,
}

/// The client's roots. They widen no grant: the plugin still reaches only its mounts.
pub fn roots() -> Result<Vec<Root>, Error> {
    Ok(roots_of(wit_client::list_roots().map_err(client_error)?))
}

fn roots_of(roots: Vec<wit_client::Root>) -> Vec<Root> {
    roots
        .into_iter()
        .map(|root| Root {
            uri: root.uri,
            name: root.name,
        })
        .collect()
}

/// What the client of this request declared it can answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientCapabilities {
    /// [`elicit`].
    pub elicitation: bool,
    /// [`sample`].
    pub sampling: bool,
    /// [`roots`].
    pub roots: bool,
}

/// What the client of this request can answer. On MCP 2026-07-28, asking for
/// something it did not declare fails the whole request (-32021), so a
/// plugin that can do without an answer asks this first.
pub fn client_capabilities() -> ClientCapabilities {
    let declared = wit_client::capabilities();
    ClientCapabilities {
        elicitation: declared.elicitation,
        sampling: declared.sampling,
        roots: declared.roots,
    }
}

/// One question of [`ask`].
#[derive(Clone, Debug)]
pub enum Question {
    /// An elicitation: a message and a JSON Schema, as [`elicit_with_schema`] takes them.
    Elicit {
        /// What to ask and why.
        message: String,
        /// The schema of the answer.
        schema: Value,
    },
    /// A sampling request, as [`sample`] takes it.
    Sample(Sampling),
    /// The client's roots, as [`roots`] lists them.
    Roots,
}

/// The answer to one question of [`ask`].
#[derive(Clone, Debug)]
pub enum Reply {
    /// The user's answer to an elicitation: a JSON object when accepted.
    Elicit(Answer<Value>),
    /// The model's answer to a sampling request.
    Sample(Sampled),
    /// The client's roots.
    Roots(Vec<Root>),
}

/// Asks several questions at once, each under a key unique within the call; the replies come
/// in the order of the questions. A client on MCP 2026-07-28 gets them all in one round trip,
/// keyed so (its retry runs the handler again with the answers: ask the same questions in the
/// same order, and do nothing before them that must not happen twice); a 2025-11-25 client gets
/// them one after another. [`elicit`], [`sample`] and [`roots`] each ask one question under a
/// key the host numbers.
pub fn ask(questions: Vec<(String, Question)>) -> Result<Vec<Reply>, Error> {
    let questions: Vec<(String, wit_client::Question)> = questions
        .into_iter()
        .map(|(key, question)| {
            let question = match question {
                Question::Elicit { message, schema } => {
                    wit_client::Question::Elicit((message, schema.to_string()))
                }
                Question::Sample(request) => wit_client::Question::Sample(request.into_wit()),
                Question::Roots => wit_client::Question::ListRoots,
            };
            (key, question)
        })
        .collect();
    let replies = wit_client::ask(&questions).map_err(client_error)?;
    replies
        .into_iter()
        .map(|reply| {
            Ok(match reply {
                wit_client::Reply::Elicit(answer) => Reply::Elicit(elicit_answer(answer)?),
                wit_client::Reply::Sample(result) => Reply::Sample(sampled(result)),
                wit_client::Reply::ListRoots(roots) => Reply::Roots(roots_of(roots)),
            })
        })
        .collect()
}

fn client_error(error: wit_client::ClientError) -> Error {
    match error {
        wit_client::ClientError::Unsupported(message)
        | wit_client::ClientError::Failed(message) => Error::new(message),
    }
}
