//! What contract 0.2.0 adds beside tools: resources, resource templates,
//! prompts and completions. Their descriptors are checked when a plugin
//! loads, and what a plugin returns is checked and converted to MCP here,
//! as tool results are: within the output cap, or refused with a reason.

use anyhow::{Result, bail};
use base64::Engine as _;
use rmcp::model::{
    CompletionInfo, ContentBlock, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
};
use serde_json::Value;

use crate::runtime::contract::{v1, v2};

/// The most resources, templates or prompts one plugin may list.
pub const MAX_LISTED: usize = 1024;
/// The longest URI, URI template or prompt name, in bytes.
pub const MAX_NAME_BYTES: usize = 2048;
/// The most values a completion returns (MCP's own limit).
pub const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

/// What a plugin offers besides tools, as it listed them at load time.
#[derive(Default)]
pub struct Offerings {
    /// Fixed resources listed without mounts.
    pub resources: Vec<Resource>,
    /// Resource templates.
    pub templates: Vec<ResourceTemplate>,
    /// Prompts.
    pub prompts: Vec<Prompt>,
}

/// Why a plugin answered a read, a prompt or a completion with no value.
#[derive(Debug, PartialEq)]
pub enum Failure {
    /// No such resource or prompt.
    NotFound(String),
    /// The arguments are wrong.
    Invalid(String),
    /// Anything else.
    Failed(String),
}

impl From<v2::Failure> for Failure {
    fn from(failure: v2::Failure) -> Failure {
        match failure {
            v2::Failure::NotFound(text) => Failure::NotFound(text),
            v2::Failure::Invalid(text) => Failure::Invalid(text),
            v2::Failure::Failed(text) => Failure::Failed(text),
        }
    }
}

/// Whether `uri` looks like a URI: a scheme (`letter *(letter / digit / + - .)`),
/// a colon, and no whitespace or control characters.
fn valid_uri(uri: &str) -> bool {
    let Some((scheme, _)) = uri.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && uri.len() <= MAX_NAME_BYTES
        && !uri.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn check_count(what: &str, count: usize) -> Result<()> {
    if count > MAX_LISTED {
        bail!("it lists {count} {what}, over the limit of {MAX_LISTED}");
    }
    Ok(())
}

/// Checks a fixed resource's descriptor and converts it.
pub fn resource(descriptor: v2::ResourceDescriptor) -> Result<Resource> {
    if !valid_uri(&descriptor.uri) {
        bail!(
            "resource `{}` has no valid URI (a scheme such as `file:`, at most {MAX_NAME_BYTES} \
             bytes, no spaces)",
            descriptor.uri
        );
    }
    let mut resource = Resource::new(descriptor.uri, descriptor.name);
    resource.title = descriptor.title;
    resource.description = descriptor.description;
    resource.mime_type = descriptor.mime_type;
    resource.size = descriptor.size;
    Ok(resource)
}

/// Checks a resource template and converts it.
pub fn template(descriptor: v2::ResourceTemplate) -> Result<ResourceTemplate> {
    let literal = template_prefix(&descriptor.uri_template);
    let balanced = descriptor.uri_template.matches('{').count()
        == descriptor.uri_template.matches('}').count();
    if !balanced || !valid_uri(&format!("{literal}x")) || !literal.contains(':') {
        bail!(
            "resource template `{}` is not a URI template that starts with a scheme",
            descriptor.uri_template
        );
    }
    let mut template = ResourceTemplate::new(descriptor.uri_template, descriptor.name);
    template.title = descriptor.title;
    template.description = descriptor.description;
    template.mime_type = descriptor.mime_type;
    Ok(template)
}

/// The literal start of a URI template, before its first expression: every
/// URI the template matches starts with it.
pub fn template_prefix(template: &str) -> &str {
    template.split('{').next().unwrap_or_default()
}

/// Checks a prompt's descriptor and converts it.
pub fn prompt(descriptor: v2::PromptDescriptor) -> Result<Prompt> {
    let name = &descriptor.name;
    if name.is_empty() || name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
        bail!("prompt `{name}` has no valid name");
    }
    let mut seen = Vec::new();
    let mut arguments = Vec::with_capacity(descriptor.arguments.len());
    for argument in descriptor.arguments {
        if seen.contains(&argument.name) {
            bail!("prompt `{name}` lists argument `{}` twice", argument.name);
        }
        seen.push(argument.name.clone());
        let mut mcp = PromptArgument::new(argument.name).with_required(argument.required);
        mcp.title = argument.title;
        mcp.description = argument.description;
        arguments.push(mcp);
    }
    let arguments = (!arguments.is_empty()).then_some(arguments);
    let mut prompt = Prompt::new(descriptor.name, descriptor.description, arguments);
    prompt.title = descriptor.title;
    Ok(prompt)
}

/// Checks and converts what a plugin listed at load time.
pub fn offerings(
    resources: Vec<v2::ResourceDescriptor>,
    templates: Vec<v2::ResourceTemplate>,
    prompts: Vec<v2::PromptDescriptor>,
) -> Result<Offerings> {
    check_count("resources", resources.len())?;
    check_count("resource templates", templates.len())?;
    check_count("prompts", prompts.len())?;
    let offerings = Offerings {
        resources: resources.into_iter().map(resource).collect::<Result<_>>()?,
        templates: templates.into_iter().map(template).collect::<Result<_>>()?,
        prompts: prompts.into_iter().map(prompt).collect::<Result<_>>()?,
    };
    if let Some(uri) = first_repeat(offerings.resources.iter().map(|r| &r.uri)) {
        bail!("it lists resource `{uri}` twice");
    }
    if let Some(template) = first_repeat(offerings.templates.iter().map(|t| &t.uri_template)) {
        bail!("it lists resource template `{template}` twice");
    }
    if let Some(name) = first_repeat(offerings.prompts.iter().map(|p| &p.name)) {
        bail!("it lists prompt `{name}` twice");
    }
    Ok(offerings)
}

fn first_repeat<'a>(items: impl Iterator<Item = &'a String>) -> Option<&'a String> {
    let mut seen = std::collections::HashSet::new();
    items.into_iter().find(|item| !seen.insert(*item))
}

/// Converts a read's contents, refusing them past `max_bytes` of JSON.
pub fn contents(
    contents: Vec<v2::ResourceContents>,
    max_bytes: u64,
) -> Result<ReadResourceResult, String> {
    let at_least: usize = contents
        .iter()
        .map(|c| body_len(&c.body) + c.uri.len())
        .sum();
    check_size(at_least as u64, max_bytes)?;
    let contents = contents
        .into_iter()
        .map(|c| resource_contents(c.uri, c.mime_type, c.body))
        .collect();
    let result = ReadResourceResult::new(contents);
    check_size(serialized_len(&result), max_bytes)?;
    Ok(result)
}

/// Converts a filled-in prompt, refusing it past `max_bytes` of JSON.
pub fn prompt_result(prompt: v2::Prompt, max_bytes: u64) -> Result<GetPromptResult, String> {
    let messages = prompt
        .messages
        .into_iter()
        .map(|message| {
            let role = match message.role {
                v2::Role::User => Role::User,
                v2::Role::Assistant => Role::Assistant,
            };
            content_block(message.content).map(|content| PromptMessage::new(role, content))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut result = GetPromptResult::new(messages);
    result.description = prompt.description;
    check_size(serialized_len(&result), max_bytes)?;
    Ok(result)
}

/// Converts a completion: at most [`MAX_COMPLETIONS`] values, `has_more`
/// set when some were left out.
pub fn completion(completion: v2::Completion) -> CompletionInfo {
    let mut values = completion.values;
    let cut = values.len() > MAX_COMPLETIONS;
    values.truncate(MAX_COMPLETIONS);
    let mut info = CompletionInfo::default();
    info.values = values;
    info.total = completion.total;
    info.has_more = Some(completion.has_more || cut);
    info
}

fn check_size(size: u64, max_bytes: u64) -> Result<(), String> {
    if size > max_bytes {
        return Err(format!(
            "the result is {size} bytes, over the limit of {max_bytes} bytes"
        ));
    }
    Ok(())
}

fn body_len(body: &v1::ResourceBody) -> usize {
    match body {
        v1::ResourceBody::Text(text) => text.len(),
        v1::ResourceBody::Blob(data) => data.len() / 3 * 4,
    }
}

fn base64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn resource_contents(
    uri: String,
    mime_type: Option<String>,
    body: v1::ResourceBody,
) -> ResourceContents {
    match body {
        v1::ResourceBody::Text(text) => ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            meta: None,
        },
        v1::ResourceBody::Blob(data) => ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob: base64(&data),
            meta: None,
        },
    }
}

/// The length of `value` as JSON, without keeping the JSON.
pub fn serialized_len(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len() as u64;
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to `Count` cannot fail, and MCP results always serialise.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// Converts one content block of a tool result or a prompt message.
pub fn content_block(block: v1::Content) -> Result<ContentBlock, String> {
    let value = match block {
        v1::Content::Text(text) => return Ok(ContentBlock::text(text)),
        v1::Content::Image(media) => {
            return Ok(ContentBlock::image(base64(&media.data), media.mime_type));
        }
        v1::Content::Audio(media) => {
            return Ok(ContentBlock::audio(base64(&media.data), media.mime_type));
        }
        v1::Content::ResourceLink(link) => {
            let mut value = serde_json::json!({
                "type": "resource_link",
                "uri": link.uri,
                "name": link.name,
            });
            for (key, field) in [
                ("title", link.title),
                ("description", link.description),
                ("mimeType", link.mime_type),
            ] {
                if let Some(field) = field {
                    value[key] = Value::String(field);
                }
            }
            if let Some(size) = link.size {
                value["size"] = Value::from(size);
            }
            value
        }
        v1::Content::EmbeddedResource(resource) => {
            let contents = resource_contents(resource.uri, resource.mime_type, resource.body);
            serde_json::json!({ "type": "resource", "resource": contents })
        }
    };
    serde_json::from_value(value).map_err(|e| format!("a content block is malformed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(uri: &str) -> v2::ResourceDescriptor {
        v2::ResourceDescriptor {
            uri: uri.to_string(),
            name: "r".to_string(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    fn template_of(uri_template: &str) -> v2::ResourceTemplate {
        v2::ResourceTemplate {
            uri_template: uri_template.to_string(),
            name: "t".to_string(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    #[test]
    fn resource_uris_need_a_scheme() {
        assert!(resource(descriptor("test://static-text")).is_ok());
        assert!(resource(descriptor("file:///a/b.txt")).is_ok());
        for bad in ["", "no-scheme", "1x://a", "test://with space", "://x"] {
            assert!(resource(descriptor(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn templates_start_with_a_scheme_and_balance_their_braces() {
        assert!(template(template_of("test://template/{id}/data")).is_ok());
        assert!(template(template_of("file:///{+path}")).is_ok());
        assert_eq!(template_prefix("file:///{+path}"), "file:///");
        for bad in ["{scheme}://x", "test://{id", "no scheme {id}"] {
            assert!(template(template_of(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn repeated_names_are_refused() {
        let twice = offerings(
            vec![descriptor("test://a"), descriptor("test://a")],
            vec![],
            vec![],
        );
        let error = twice.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains("`test://a` twice"), "{error}");
    }

    #[test]
    fn completions_are_capped() {
        let info = completion(v2::Completion {
            values: (0..150).map(|i| i.to_string()).collect(),
            total: Some(150),
            has_more: false,
        });
        assert_eq!(info.values.len(), MAX_COMPLETIONS);
        assert_eq!(info.has_more, Some(true));
    }

    #[test]
    fn oversized_contents_are_refused() {
        let big = v2::ResourceContents {
            uri: "test://big".to_string(),
            mime_type: None,
            body: v1::ResourceBody::Text("x".repeat(2000)),
        };
        assert!(contents(vec![big], 1000).is_err());
        let blob = v2::ResourceContents {
            uri: "test://blob".to_string(),
            mime_type: Some("image/png".to_string()),
            body: v1::ResourceBody::Blob(vec![1, 2, 3]),
        };
        let read = contents(vec![blob], 1000).map_err(|e| e.to_string());
        let json = serde_json::to_value(read.unwrap_or_else(|e| panic!("{e}"))).unwrap_or_default();
        assert_eq!(json["contents"][0]["blob"], "AQID");
        assert_eq!(json["contents"][0]["mimeType"], "image/png");
    }
}
