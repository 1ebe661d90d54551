//! Every conversion of what plugins offer and return into rmcp's MCP
//! model types, and the output cap on the JSON they make.
//!
//! The runtime speaks the contract (`toolcell:plugin`); MCP starts here.
//! [`Catalog`] is what the toolbox lists, converted once when it loads;
//! [`tool_result`], [`contents`], [`prompt_result`] and [`completion`]
//! convert what one run returned, refusing a result whose JSON would be over
//! the run's `max_output_bytes`. A plugin's questions to the client and
//! their answers are converted beside the rest of that exchange, in
//! [`relay`](super::relay).

use base64::Engine as _;
use rmcp::model::{
    CallToolResult, CompletionInfo, ContentBlock, GetPromptResult, Prompt, PromptArgument,
    PromptMessage, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, Tool,
    ToolAnnotations,
};
use serde_json::Value;

use crate::limits::{MAX_COMPLETIONS, MAX_CONTENT_BLOCKS};
use crate::runtime::contract::{v1, v2};
use crate::runtime::spec::ToolSpec;
use crate::runtime::toolbox::Toolbox;

/// What the toolbox offers, in MCP's form: made once when the plugins have
/// loaded, so that a listing or a lookup converts nothing.
pub struct Catalog {
    /// Every enabled tool, in the order of [`Toolbox::routes`].
    pub tools: Vec<Tool>,
    /// The fixed resources listed at load time.
    pub resources: Vec<Resource>,
    /// The resource templates.
    pub templates: Vec<ResourceTemplate>,
    /// The prompts.
    pub prompts: Vec<Prompt>,
}

impl Catalog {
    /// The MCP form of everything `toolbox` serves.
    pub fn of(toolbox: &Toolbox) -> Catalog {
        Catalog {
            tools: toolbox
                .routes()
                .iter()
                .map(|route| tool(&route.spec))
                .collect(),
            resources: toolbox
                .resources()
                .iter()
                .map(|r| resource(&r.item))
                .collect(),
            templates: toolbox
                .templates()
                .iter()
                .map(|t| template(&t.item))
                .collect(),
            prompts: toolbox.prompts().iter().map(|p| prompt(&p.item)).collect(),
        }
    }
}

/// A tool's MCP description, for `tools/list`.
pub fn tool(spec: &ToolSpec) -> Tool {
    let a = &spec.annotations;
    let annotations = ToolAnnotations::new()
        .read_only(a.read_only)
        .destructive(a.destructive)
        .idempotent(a.idempotent)
        .open_world(a.open_world);
    let mut tool = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        spec.input_schema.clone(),
    )
    .annotate(annotations);
    tool.title = Some(spec.title.clone());
    tool.output_schema = spec.output_schema.clone();
    tool
}

/// A fixed resource's MCP description.
pub fn resource(descriptor: &v2::ResourceDescriptor) -> Resource {
    let mut resource = Resource::new(descriptor.uri.clone(), descriptor.name.clone());
    resource.title = descriptor.title.clone();
    resource.description = descriptor.description.clone();
    resource.mime_type = descriptor.mime_type.clone();
    resource.size = descriptor.size;
    resource
}

/// A resource template's MCP description.
pub fn template(descriptor: &v2::ResourceTemplate) -> ResourceTemplate {
    let mut template =
        ResourceTemplate::new(descriptor.uri_template.clone(), descriptor.name.clone());
    template.title = descriptor.title.clone();
    template.description = descriptor.description.clone();
    template.mime_type = descriptor.mime_type.clone();
    template
}

/// A prompt's MCP description.
pub fn prompt(descriptor: &v2::PromptDescriptor) -> Prompt {
    let arguments: Vec<PromptArgument> = descriptor
        .arguments
        .iter()
        .map(|argument| {
            let mut mcp =
                PromptArgument::new(argument.name.clone()).with_required(argument.required);
            mcp.title = argument.title.clone();
            mcp.description = argument.description.clone();
            mcp
        })
        .collect();
    let arguments = (!arguments.is_empty()).then_some(arguments);
    let mut prompt = Prompt::new(
        descriptor.name.clone(),
        descriptor.description.clone(),
        arguments,
    );
    prompt.title = descriptor.title.clone();
    prompt
}

/// A tool result that says what went wrong, for the model to read.
pub fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Converts a tool's result to MCP, refusing one of more than
/// [`MAX_CONTENT_BLOCKS`] blocks or whose JSON form is over `max_bytes`.
pub fn tool_result(result: v1::ToolResult, max_bytes: u64) -> Result<CallToolResult, String> {
    let blocks = result.content.len();
    if blocks > MAX_CONTENT_BLOCKS {
        return Err(format!(
            "the result has {blocks} content blocks, over the limit of {MAX_CONTENT_BLOCKS}; \
             return fewer, larger blocks"
        ));
    }
    let too_big = |size: u64| {
        format!(
            "the result is {size} bytes, over the limit of {max_bytes} bytes; ask for less \
             (a smaller range, fewer files)"
        )
    };
    // Serialised, every byte of every string is at least one byte and binary
    // data four thirds: a result this big is refused before it is converted.
    let text = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    let at_least: usize = result
        .content
        .iter()
        .map(|block| match block {
            v1::Content::Text(text) => text.len(),
            v1::Content::Image(media) | v1::Content::Audio(media) => {
                media.data.len() / 3 * 4 + media.mime_type.len()
            }
            v1::Content::ResourceLink(link) => {
                link.uri.len()
                    + link.name.len()
                    + text(&link.title)
                    + text(&link.description)
                    + text(&link.mime_type)
            }
            v1::Content::EmbeddedResource(resource) => {
                let body = match &resource.body {
                    v1::ResourceBody::Text(text) => text.len(),
                    v1::ResourceBody::Blob(data) => data.len() / 3 * 4,
                };
                body + resource.uri.len() + text(&resource.mime_type)
            }
        })
        .sum::<usize>()
        + text(&result.structured_content);
    if at_least as u64 > max_bytes {
        return Err(too_big(at_least as u64));
    }
    let structured = result
        .structured_content
        .map(|text| {
            serde_json::from_str::<Value>(&text)
                .map_err(|e| format!("its structured content is not valid JSON: {e}"))
        })
        .transpose()?;
    let content = result
        .content
        .into_iter()
        .map(content_block)
        .collect::<Result<Vec<_>, _>>()?;
    let mut mcp = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    mcp.structured_content = structured;
    // Escaping makes JSON text at most six times as long (`\u0001`), and
    // each block adds a few dozen bytes of framing: most results are far
    // enough under the cap that measuring them exactly would be wasted work.
    let at_most = (at_least as u64)
        .saturating_mul(6)
        .saturating_add(64 * (blocks as u64 + 1));
    if at_most > max_bytes {
        let size = serialized_len(&mcp);
        if size > max_bytes {
            return Err(too_big(size));
        }
    }
    Ok(mcp)
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

    #[test]
    fn completions_are_capped_at_mcp_s_own_limit() {
        assert_eq!(MAX_COMPLETIONS, CompletionInfo::MAX_VALUES);
    }

    #[test]
    fn oversized_result_is_refused() {
        let result = v1::ToolResult {
            content: vec![v1::Content::Text("x".repeat(100))],
            structured_content: None,
            is_error: false,
        };
        let error = tool_result(result, 10).unwrap_err();
        assert!(error.contains("100 bytes"), "{error}");
    }

    #[test]
    fn invalid_structured_content_is_refused() {
        let result = v1::ToolResult {
            content: vec![],
            structured_content: Some("{nope".into()),
            is_error: false,
        };
        assert!(
            tool_result(result, 1000)
                .unwrap_err()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn every_content_kind_converts() {
        let blocks = vec![
            v1::Content::Text("hi".into()),
            v1::Content::Image(v1::Media {
                data: vec![1, 2, 3],
                mime_type: "image/png".into(),
            }),
            v1::Content::Audio(v1::Media {
                data: vec![4],
                mime_type: "audio/wav".into(),
            }),
            v1::Content::ResourceLink(v1::ResourceLink {
                uri: "file:///a".into(),
                name: "a".into(),
                title: Some("A".into()),
                description: None,
                mime_type: Some("text/plain".into()),
                size: Some(3),
            }),
            v1::Content::EmbeddedResource(v1::EmbeddedResource {
                uri: "file:///b".into(),
                mime_type: None,
                body: v1::ResourceBody::Blob(vec![0xff]),
            }),
        ];
        let result = tool_result(
            v1::ToolResult {
                content: blocks,
                structured_content: Some(r#"{"n":1}"#.into()),
                is_error: true,
            },
            1000,
        )
        .unwrap();
        let json = serde_json::to_value(&result).unwrap();
        assert_eq!(json["isError"], true);
        assert_eq!(json["structuredContent"]["n"], 1);
        let content = json["content"].as_array().unwrap();
        assert_eq!(content[1]["data"], "AQID");
        assert_eq!(content[2]["mimeType"], "audio/wav");
        assert_eq!(content[3]["type"], "resource_link");
        assert_eq!(content[3]["size"], 3);
        assert_eq!(content[4]["resource"]["blob"], "/w==");
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
