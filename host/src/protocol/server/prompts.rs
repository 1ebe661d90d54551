//! `prompts/get` and `completion/complete`: a prompt filled in by its
//! plugin, and values for a prompt's argument or a template's variable.

use std::sync::Arc;

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Reference,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;

use super::Server;
use super::resources::failure_error;
use crate::protocol::mcp;
use crate::runtime::call::{CallContext, CallError};
use crate::runtime::contract::v2;
use crate::runtime::offerings::Failure;
use crate::runtime::plugin::Plugin;
use crate::runtime::toolbox::Toolbox;

impl Server {
    /// Answers `prompts/get`.
    pub(super) async fn prompt(
        &self,
        request: GetPromptRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let served = self
            .offering("prompts/get", "prompts", |toolbox| {
                !toolbox.prompts().is_empty()
            })
            .await?;
        let name = request.name;
        let Some(offered) = served.toolbox.prompt(&name).cloned() else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown prompt `{name}`; prompts/list shows the prompts this server offers"
                ),
                None,
            ));
        };
        let asker = self.asker(
            &cx,
            ("prompts/get", &name),
            || Value::Object(request.arguments.clone().unwrap_or_default()),
            request.request_state.as_deref(),
            request.input_responses,
        )?;
        let arguments = prompt_arguments(&offered.item, request.arguments)?;
        let what = format!("prompt `{name}`");
        let work = async move |plugin: Arc<Plugin>, cx: CallContext| {
            let got = plugin.get_prompt(&name, arguments, &cx).await?;
            let max = plugin.limits().max_output_bytes;
            match got {
                Ok(prompt) => mcp::prompt_result(prompt, max).map(Ok).map_err(|reason| {
                    CallError::InvalidResult {
                        tool: format!("prompts/get {name}"),
                        reason,
                    }
                }),
                Err(failure) => Ok(Err(failure)),
            }
        };
        let got = self
            .feature(
                &offered.plugin,
                &what,
                cx.ct.clone(),
                Some(asker.client()),
                work,
            )
            .await?;
        let got = got.map(|got: Result<GetPromptResult, Failure>| {
            got.map_err(|failure| failure_error(failure, None))
        });
        asker.settle(&self.state_key, got)
    }

    /// Answers `completion/complete`.
    pub(super) async fn completion(
        &self,
        request: CompleteRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let served = self
            .offering("completion/complete", "completions", Toolbox::completes)
            .await?;
        let toolbox = &served.toolbox;
        let (target, plugin) = match &request.r#ref {
            Reference::Prompt(reference) => {
                let offered = toolbox.prompt(&reference.name).ok_or_else(|| {
                    ErrorData::invalid_params(format!("unknown prompt `{}`", reference.name), None)
                })?;
                (
                    v2::CompletionTarget::Prompt(reference.name.clone()),
                    offered.plugin.clone(),
                )
            }
            Reference::Resource(reference) => {
                let offered = toolbox.template(&reference.uri).ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!("unknown resource template `{}`", reference.uri),
                        None,
                    )
                })?;
                (
                    v2::CompletionTarget::ResourceTemplate(reference.uri.clone()),
                    offered.plugin.clone(),
                )
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("cannot complete for {other:?}: only prompts and resource templates"),
                    None,
                ));
            }
        };
        let mut context: Vec<(String, String)> = request
            .context
            .and_then(|context| context.arguments)
            .unwrap_or_default()
            .into_iter()
            .collect();
        context.sort();
        let asked = v2::CompletionRequest {
            target,
            argument: request.argument.name,
            value: request.argument.value,
            context,
        };
        let completed = self
            .feature(
                &plugin,
                "completion",
                cx.ct,
                None,
                async move |plugin, cx| plugin.complete(asked, &cx).await,
            )
            .await?;
        match completed {
            Ok(completed) => completed
                .map(|completion| CompleteResult::new(mcp::completion(completion)))
                .map_err(|failure| failure_error(failure, None)),
            Err(interruption) => Err(ErrorData::internal_error(
                format!("a completion cannot ask the client: {interruption}"),
                None,
            )),
        }
    }
}

/// A prompt's arguments as name and value pairs, checked against its
/// descriptor: every required one given, none unknown, all strings.
fn prompt_arguments(
    prompt: &v2::PromptDescriptor,
    given: Option<serde_json::Map<String, Value>>,
) -> Result<Vec<(String, String)>, ErrorData> {
    let declared = &prompt.arguments;
    let invalid = |message: String| ErrorData::invalid_params(message, None);
    let mut arguments = Vec::new();
    for (key, value) in given.unwrap_or_default() {
        if !declared.iter().any(|argument| argument.name == key) {
            return Err(invalid(format!(
                "prompt `{}` has no argument `{key}`",
                prompt.name
            )));
        }
        let Value::String(value) = value else {
            return Err(invalid(format!(
                "argument `{key}` of prompt `{}` must be a string",
                prompt.name
            )));
        };
        arguments.push((key, value));
    }
    for argument in declared {
        let given = arguments.iter().any(|(key, _)| *key == argument.name);
        if argument.required && !given {
            return Err(invalid(format!(
                "prompt `{}` needs argument `{}`",
                prompt.name, argument.name
            )));
        }
    }
    Ok(arguments)
}
