//! Completion of prompt arguments and template variables.
//!
//! [`Prompt::complete`](crate::Prompt::complete) and
//! [`ResourceTemplate::complete`](crate::ResourceTemplate::complete) register a handler per
//! argument in [`Completers`]; [`complete`] routes a request to the prompt or template it
//! names and to the handler of its argument, and caps what the handler returns.

use crate::__private::bindings::toolcell::plugin0_2_0::types as wit;
use crate::{Prompt, ResourceTemplate, Variables};

/// The most values a completion carries: MCP's limit.
const MAX_VALUES: usize = 100;

/// Suggests values of one argument from what the user typed and the arguments filled in.
pub(crate) type Completer = Box<dyn FnOnce(&str, &Variables) -> Vec<String>>;

/// The completion handlers of one prompt or template, by argument name.
#[derive(Default)]
pub(crate) struct Completers(Vec<(String, Completer)>);

impl Completers {
    /// Sets the handler of `argument`, replacing any earlier one.
    pub(crate) fn insert(&mut self, argument: String, completer: Completer) {
        self.0.retain(|(name, _)| *name != argument);
        self.0.push((argument, completer));
    }

    /// Runs the handler of `argument`; no handler suggests nothing.
    fn run(self, argument: &str, value: &str, context: &Variables) -> wit::Completion {
        let values = self
            .0
            .into_iter()
            .find(|(name, _)| name == argument)
            .map(|(_, completer)| completer(value, context))
            .unwrap_or_default();
        capped(values)
    }
}

/// At most [`MAX_VALUES`] of `values`, with the total and whether some were left out.
fn capped(mut values: Vec<String>) -> wit::Completion {
    let total = values.len();
    values.truncate(MAX_VALUES);
    wit::Completion {
        has_more: total > values.len(),
        total: u32::try_from(total).ok(),
        values,
    }
}

/// Answers a completion request with the handler of the prompt or template it names.
pub(crate) fn complete(
    prompts: Vec<Prompt>,
    templates: Vec<ResourceTemplate>,
    request: wit::CompletionRequest,
) -> Result<wit::Completion, wit::Failure> {
    let context: Variables = request.context.into_iter().collect();
    let completers = match request.target {
        wit::CompletionTarget::Prompt(name) => prompts
            .into_iter()
            .find(|prompt| prompt.name() == name)
            .map(|prompt| prompt.completers)
            .ok_or_else(|| wit::Failure::NotFound(format!("this plugin has no prompt `{name}`")))?,
        wit::CompletionTarget::ResourceTemplate(uri_template) => templates
            .into_iter()
            .find(|template| template.uri_template() == uri_template)
            .map(|template| template.completers)
            .ok_or_else(|| {
                wit::Failure::NotFound(format!(
                    "this plugin has no resource template `{uri_template}`"
                ))
            })?,
    };
    Ok(completers.run(&request.argument, &request.value, &context))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schemars::JsonSchema;
    use crate::serde::Deserialize;
    use crate::{Contents, Message};

    #[derive(Deserialize, JsonSchema)]
    struct Args {
        #[allow(dead_code)]
        city: String,
    }

    fn prompts() -> Vec<Prompt> {
        vec![
            Prompt::new("trip", |_: Args| Ok(Message::user("go"))).complete(
                "city",
                |typed, context| {
                    ["paris", "park", "rome"]
                        .iter()
                        .filter(|city| city.starts_with(typed))
                        .map(|city| format!("{city}{}", context.get("suffix").map_or("", |s| s)))
                        .collect()
                },
            ),
        ]
    }

    fn templates() -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new("test://n/{n}", "numbers", |_, _| Ok(Contents::text("")))
                .complete("n", |_, _| (0..250).map(|n| n.to_string()).collect()),
        ]
    }

    fn request(
        target: wit::CompletionTarget,
        argument: &str,
        value: &str,
    ) -> wit::CompletionRequest {
        wit::CompletionRequest {
            target,
            argument: argument.to_string(),
            value: value.to_string(),
            context: vec![("suffix".to_string(), "!".to_string())],
        }
    }

    #[test]
    fn a_prompt_argument_is_completed_by_its_handler() {
        let target = wit::CompletionTarget::Prompt("trip".to_string());
        let completion = complete(prompts(), templates(), request(target, "city", "par")).unwrap();
        assert_eq!(completion.values, ["paris!", "park!"]);
        assert_eq!(completion.total, Some(2));
        assert!(!completion.has_more);
    }

    #[test]
    fn an_argument_without_a_handler_completes_to_nothing() {
        let target = wit::CompletionTarget::Prompt("trip".to_string());
        let completion = complete(prompts(), templates(), request(target, "other", "")).unwrap();
        assert!(completion.values.is_empty());
        assert_eq!(completion.total, Some(0));
        assert!(!completion.has_more);
    }

    #[test]
    fn values_are_capped_at_100() {
        let target = wit::CompletionTarget::ResourceTemplate("test://n/{n}".to_string());
        let completion = complete(prompts(), templates(), request(target, "n", "")).unwrap();
        assert_eq!(completion.values.len(), 100);
        assert_eq!(completion.values[99], "99");
        assert_eq!(completion.total, Some(250));
        assert!(completion.has_more);
    }

    #[test]
    fn an_unknown_target_is_not_found() {
        for target in [
            wit::CompletionTarget::Prompt("nope".to_string()),
            wit::CompletionTarget::ResourceTemplate("test://nope".to_string()),
        ] {
            match complete(prompts(), templates(), request(target, "x", "")) {
                Err(wit::Failure::NotFound(message)) => assert!(message.contains("nope")),
                other => panic!("{other:?}"),
            }
        }
    }
}
