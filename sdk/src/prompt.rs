//! Prompts: message templates a client offers its user.
//!
//! A [`Prompt`] has a name, arguments (derived from a type, like a tool's input schema) and a
//! handler that fills it in: it returns [`Message`]s, or a [`PromptReply`] that also describes
//! them.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::__private::bindings::toolcell::plugin0_2_0::types as wit;
use crate::completion::Completers;
use crate::{Content, Error, Variables, schema};

/// Who a prompt message comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    User,
    Assistant,
}

/// One message of a prompt: text, an image, a sound or a resource, from the user or the model.
#[derive(Clone, Debug)]
pub struct Message {
    role: Role,
    content: Content,
}

impl Message {
    /// A message from the user. Text converts from `&str` and `String`.
    pub fn user(content: impl Into<Content>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message from the model (the assistant).
    pub fn assistant(content: impl Into<Content>) -> Message {
        Message {
            role: Role::Assistant,
            content: content.into(),
        }
    }

    fn into_wit(self) -> wit::PromptMessage {
        wit::PromptMessage {
            role: match self.role {
                Role::User => wit::Role::User,
                Role::Assistant => wit::Role::Assistant,
            },
            content: self.content.into_wit(),
        }
    }
}

/// A prompt with its arguments filled in: the messages, and what they are.
///
/// Converts from one [`Message`] and from a `Vec` of them, so a handler may return either.
/// Defaults: no description.
#[derive(Clone, Debug, Default)]
pub struct PromptReply {
    description: Option<String>,
    messages: Vec<Message>,
}

impl PromptReply {
    /// A reply of these messages, in order.
    pub fn new(messages: Vec<Message>) -> PromptReply {
        PromptReply {
            description: None,
            messages,
        }
    }

    /// What this filled-in prompt is.
    pub fn description(mut self, description: impl Into<String>) -> PromptReply {
        self.description = Some(description.into());
        self
    }

    /// Appends a message.
    pub fn with(mut self, message: Message) -> PromptReply {
        self.messages.push(message);
        self
    }

    fn into_wit(self) -> wit::Prompt {
        wit::Prompt {
            description: self.description,
            messages: self.messages.into_iter().map(Message::into_wit).collect(),
        }
    }
}

impl From<Message> for PromptReply {
    fn from(message: Message) -> PromptReply {
        PromptReply::new(vec![message])
    }
}

impl From<Vec<Message>> for PromptReply {
    fn from(messages: Vec<Message>) -> PromptReply {
        PromptReply::new(messages)
    }
}

/// Decodes the arguments (name and value pairs) and fills the prompt in.
type Handler = Box<dyn FnOnce(Vec<(String, String)>) -> Result<PromptReply, Error>>;

/// One prompt: how it presents itself, the function that fills it in, and completions for its
/// arguments.
///
/// Defaults, until a builder method changes them: no title, description or completions.
pub struct Prompt {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: fn() -> Vec<wit::PromptArgument>,
    handler: Handler,
    pub(crate) completers: Completers,
}

impl Prompt {
    /// A prompt named `name` (unique across every plugin a server loads) that `handler` fills
    /// in.
    ///
    /// Its arguments are `A`'s properties, derived with schemars when the host lists the
    /// prompts: each property's name, its doc comment as the description (and a first line
    /// `# Heading`, or `#[schemars(title = "...")]`, as the title), and whether it is required
    /// (a field that is not an `Option` and has no `#[serde(default)]`). MCP sends prompt arguments as text, so the
    /// fields of `A` are `String`s or `Option<String>`s: the arguments become a JSON object of
    /// strings that serde decodes into `A`, and a failed decode (a missing required argument,
    /// say) is `failure::invalid` with serde's message. Arguments are listed in the order of
    /// the schema's properties (by name).
    pub fn new<A, R, F>(name: impl Into<String>, handler: F) -> Prompt
    where
        A: DeserializeOwned + JsonSchema,
        R: Into<PromptReply>,
        F: FnOnce(A) -> Result<R, Error> + 'static,
    {
        Prompt {
            name: name.into(),
            title: None,
            description: None,
            arguments: arguments::<A>,
            handler: Box::new(move |arguments| {
                let object: Map<String, Value> = arguments
                    .into_iter()
                    .map(|(name, value)| (name, Value::String(value)))
                    .collect();
                let args = serde_json::from_value::<A>(Value::Object(object))
                    .map_err(|e| Error::invalid(format!("invalid arguments: {e}")))?;
                handler(args).map(Into::into)
            }),
            completers: Completers::default(),
        }
    }

    /// A short title for people.
    pub fn title(mut self, title: impl Into<String>) -> Prompt {
        self.title = Some(title.into());
        self
    }

    /// What the prompt does.
    pub fn description(mut self, description: impl Into<String>) -> Prompt {
        self.description = Some(description.into());
        self
    }

    /// Completes `argument`: `handler` gets what the user has typed of it and the values of the
    /// other arguments already filled in, and returns suggestions, best first. The host sends
    /// at most 100 of them.
    pub fn complete<F>(mut self, argument: impl Into<String>, handler: F) -> Prompt
    where
        F: FnOnce(&str, &Variables) -> Vec<String> + 'static,
    {
        self.completers.insert(argument.into(), Box::new(handler));
        self
    }

    /// The prompt's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn into_descriptor(self) -> wit::PromptDescriptor {
        wit::PromptDescriptor {
            name: self.name,
            title: self.title,
            description: self.description,
            arguments: (self.arguments)(),
        }
    }
}

/// The arguments of a prompt whose handler takes `A`.
fn arguments<A: JsonSchema>() -> Vec<wit::PromptArgument> {
    let schema = schema::input_value::<A>();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let text = |property: &Value, key: &str| {
        property
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    properties
        .iter()
        .map(|(name, property)| wit::PromptArgument {
            name: name.clone(),
            title: text(property, "title"),
            description: text(property, "description"),
            required: required.contains(&name.as_str()),
        })
        .collect()
}

/// Fills in the prompt called `name` with `arguments`.
pub(crate) fn get(
    prompts: Vec<Prompt>,
    name: &str,
    arguments: Vec<(String, String)>,
) -> Result<wit::Prompt, wit::Failure> {
    let Some(prompt) = prompts.into_iter().find(|prompt| prompt.name == name) else {
        return Err(wit::Failure::NotFound(format!(
            "this plugin has no prompt `{name}`"
        )));
    };
    (prompt.handler)(arguments)
        .map(PromptReply::into_wit)
        .map_err(Error::into_failure)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Content;
    use crate::serde::Deserialize;

    /// Arguments of `greet`.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "camelCase")]
    struct Greet {
        /// Who to greet.
        name: String,
        /// # The tone
        ///
        /// Friendly unless said otherwise.
        tone: Option<String>,
        /// How to sign.
        #[serde(default)]
        sign_off: String,
    }

    #[derive(Deserialize, JsonSchema)]
    struct Nothing {}

    fn prompts() -> Vec<Prompt> {
        vec![
            Prompt::new("greet", |args: Greet| {
                let tone = args.tone.unwrap_or_else(|| "friendly".into());
                Ok(PromptReply::new(vec![
                    Message::user(format!("Greet {} ({tone}){}", args.name, args.sign_off)),
                    Message::assistant(Content::Image {
                        data: vec![1],
                        mime_type: "image/png".into(),
                    }),
                ])
                .description("a greeting"))
            })
            .title("Greet")
            .description("Greets someone."),
            Prompt::new("fails", |_: Nothing| -> Result<Message, Error> {
                Err(Error::new("broken"))
            }),
        ]
    }

    fn pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn arguments_come_from_the_schema() {
        let descriptor = prompts().remove(0).into_descriptor();
        assert_eq!(descriptor.name, "greet");
        assert_eq!(descriptor.title.as_deref(), Some("Greet"));
        let arguments: Vec<_> = descriptor
            .arguments
            .iter()
            .map(|a| {
                (
                    a.name.as_str(),
                    a.title.as_deref(),
                    a.description.as_deref(),
                    a.required,
                )
            })
            .collect();
        assert_eq!(
            arguments,
            [
                ("name", None, Some("Who to greet."), true),
                ("signOff", None, Some("How to sign."), false),
                (
                    "tone",
                    Some("The tone"),
                    Some("Friendly unless said otherwise."),
                    false
                ),
            ]
        );
        let descriptor = prompts().remove(1).into_descriptor();
        assert!(descriptor.arguments.is_empty());
    }

    #[test]
    fn arguments_are_decoded_and_the_prompt_filled_in() {
        let prompt = get(
            prompts(),
            "greet",
            pairs(&[("name", "Ada"), ("signOff", "!")]),
        )
        .unwrap();
        assert_eq!(prompt.description.as_deref(), Some("a greeting"));
        assert_eq!(prompt.messages.len(), 2);
        assert_eq!(prompt.messages[0].role, wit::Role::User);
        assert!(matches!(
            &prompt.messages[0].content,
            wit::Content::Text(text) if text == "Greet Ada (friendly)!"
        ));
        assert_eq!(prompt.messages[1].role, wit::Role::Assistant);
        assert!(matches!(
            &prompt.messages[1].content,
            wit::Content::Image(_)
        ));
    }

    #[test]
    fn a_missing_argument_is_invalid() {
        match get(prompts(), "greet", pairs(&[("tone", "dry")])) {
            Err(wit::Failure::Invalid(message)) => {
                assert_eq!(message, "invalid arguments: missing field `name`")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn failures_and_unknown_prompts() {
        match get(prompts(), "fails", Vec::new()) {
            Err(wit::Failure::Failed(message)) => assert_eq!(message, "broken"),
            other => panic!("{other:?}"),
        }
        match get(prompts(), "nope", Vec::new()) {
            Err(wit::Failure::NotFound(message)) => assert!(message.contains("`nope`")),
            other => panic!("{other:?}"),
        }
    }
}
