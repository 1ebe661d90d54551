//! The tools the scenarios `tools-*`, `json-schema-2020-12`, `server-stateless` and
//! `http-custom-header-server-validation` call.

use std::borrow::Cow;
use std::time::Duration;

use toolcell_sdk::schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use toolcell_sdk::serde::Deserialize;
use toolcell_sdk::{Category, Content, Error, Output, Tool, host};

use crate::{RED_PIXEL_PNG, SILENT_WAV};

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
pub(crate) struct Nothing {}

/// The pause between the log lines the scenario asks for ("~50ms").
const LOG_STEP: Duration = Duration::from_millis(50);

/// The pause between progress reports. The scenario says "~50ms" but checks only that three
/// notifications arrive, in order; the host sends at most one progress notification per call
/// every 250 ms (keeping only the latest report), so the reports are spaced wider than that.
const PROGRESS_STEP: Duration = Duration::from_millis(300);

/// A tool of this plugin: category `conformance`, read-only, closed-world.
pub(crate) fn tool<A, F>(name: &str, title: &str, description: &str, handler: F) -> Tool
where
    A: toolcell_sdk::serde::de::DeserializeOwned + JsonSchema,
    F: FnOnce(A) -> Result<Output, Error> + 'static,
{
    Tool::new(name, handler)
        .title(title)
        .description(description)
        .category(Category::Other("conformance".into()))
        .read_only()
        .open_world(false)
}

pub(crate) fn tools() -> Vec<Tool> {
    vec![
        tool(
            "test_simple_text",
            "Simple text",
            "Tests simple text content response",
            |_: Nothing| Ok(Output::text("This is a simple text response for testing.")),
        ),
        tool(
            "test_image_content",
            "Image content",
            "Tests image content response",
            |_: Nothing| Ok(Output::default().with(png())),
        ),
        tool(
            "test_audio_content",
            "Audio content",
            "Tests audio content response",
            |_: Nothing| {
                Ok(Output::default().with(Content::Audio {
                    data: SILENT_WAV.to_vec(),
                    mime_type: "audio/wav".into(),
                }))
            },
        ),
        tool(
            "test_embedded_resource",
            "Embedded resource",
            "Tests embedded resource content response",
            |_: Nothing| {
                Ok(Output::default().with(Content::EmbeddedText {
                    uri: "test://embedded-resource".into(),
                    mime_type: Some("text/plain".into()),
                    text: "This is an embedded resource content.".into(),
                }))
            },
        ),
        tool(
            "test_multiple_content_types",
            "Multiple content types",
            "Tests response with multiple content types (text, image, resource)",
            |_: Nothing| {
                Ok(Output::text("Multiple content types test:")
                    .with(png())
                    .with(Content::EmbeddedText {
                        uri: "test://mixed-content-resource".into(),
                        mime_type: Some("application/json".into()),
                        text: r#"{"test":"data","value":123}"#.into(),
                    }))
            },
        ),
        tool(
            "test_error_handling",
            "Error handling",
            "Tests error response handling",
            |_: Nothing| {
                Err(Error::new(
                    "This tool intentionally returns an error for testing",
                ))
            },
        ),
        tool(
            "test_tool_with_logging",
            "Tool with logging",
            "Tests tool that emits log messages during execution",
            |_: Nothing| {
                host::log(host::LogLevel::Info, "Tool execution started");
                std::thread::sleep(LOG_STEP);
                host::log(host::LogLevel::Info, "Tool processing data");
                std::thread::sleep(LOG_STEP);
                host::log(host::LogLevel::Info, "Tool execution completed");
                Ok(Output::text("Tool with logging executed successfully"))
            },
        ),
        tool(
            "test_tool_with_progress",
            "Tool with progress",
            "Tests tool that reports progress notifications",
            |_: Nothing| {
                for (step, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if step > 0 {
                        std::thread::sleep(PROGRESS_STEP);
                    }
                    let message = format!("Completed step {progress} of 100");
                    host::progress(progress, Some(100.0), Some(&message));
                }
                Ok(Output::text("Progress reported: 0, 50 and 100 of 100"))
            },
        ),
        tool(
            "json_schema_2020_12_tool",
            "JSON Schema 2020-12",
            "Tool with JSON Schema 2020-12 features",
            |args: SchemaFeatures| {
                Ok(Output::text(format!(
                    "JSON Schema 2020-12 tool called with: {args:?}"
                )))
            },
        ),
        tool(
            "test_logging_tool",
            "Logging tool",
            "Emits a log message; the server must not send it unless the request asked for a \
             log level",
            |_: Nothing| {
                host::log(host::LogLevel::Info, "test_logging_tool ran");
                Ok(Output::text("Logged one message at level info"))
            },
        ),
        tool(
            "test_custom_header",
            "Custom header",
            "Echoes `value`, a parameter mirrored into the `Mcp-Param-Value` header",
            |args: CustomHeader| Ok(Output::text(args.value)),
        ),
    ]
}

/// The suite's test image, as an image block.
fn png() -> Content {
    Content::Image {
        data: RED_PIXEL_PNG.to_vec(),
        mime_type: "image/png".into(),
    }
}

/// Arguments of `json_schema_2020_12_tool`. The schema is written out by hand: it is the
/// suite's, with `$defs`, `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else` and
/// `additionalProperties`, which the host must pass on unchanged.
#[derive(Debug, Deserialize)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[allow(dead_code)] // read through Debug only
struct SchemaFeatures {
    name: Option<String>,
    address: Option<Address>,
    #[serde(rename = "contactMethod")]
    contact_method: Option<String>,
    phone: Option<String>,
    email: Option<String>,
}

/// `$defs/address` of [`SchemaFeatures`].
#[derive(Debug, Deserialize)]
#[serde(crate = "toolcell_sdk::serde")]
#[allow(dead_code)] // read through Debug only
struct Address {
    street: Option<String>,
    city: Option<String>,
}

impl JsonSchema for SchemaFeatures {
    fn schema_name() -> Cow<'static, str> {
        "json_schema_2020_12_tool".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // The generator adds `$schema` (2020-12) and `title`.
        json_schema!({
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {
                        "street": { "type": "string" },
                        "city": { "type": "string" }
                    }
                }
            },
            "properties": {
                "name": { "type": "string" },
                "address": { "$ref": "#/$defs/address" },
                "contactMethod": { "type": "string", "enum": ["phone", "email"] },
                "phone": { "type": "string" },
                "email": { "type": "string" }
            },
            "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
            "if": {
                "properties": { "contactMethod": { "const": "phone" } },
                "required": ["contactMethod"]
            },
            "then": { "required": ["phone"] },
            "else": { "required": ["email"] },
            "additionalProperties": false
        })
    }
}

/// Arguments of `test_custom_header`.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolcell_sdk::serde", deny_unknown_fields)]
#[schemars(crate = "toolcell_sdk::schemars")]
struct CustomHeader {
    /// Any text; a 2026-07-28 client mirrors it into the `Mcp-Param-Value` header.
    #[schemars(extend("x-mcp-header" = "Value"))]
    value: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolcell_sdk::serde_json::{Value, json};

    fn schema<T: JsonSchema>() -> Value {
        toolcell_sdk::schemars::generate::SchemaSettings::draft2020_12()
            .into_generator()
            .into_root_schema_for::<T>()
            .to_value()
    }

    #[test]
    fn the_2020_12_schema_keeps_its_keywords() {
        let schema = schema::<SchemaFeatures>();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
        assert_eq!(schema["additionalProperties"], false);
        assert!(schema["allOf"][0]["anyOf"].is_array());
        for key in ["if", "then", "else"] {
            assert!(schema.get(key).is_some(), "{key}");
        }
    }

    #[test]
    fn the_header_parameter_is_annotated() {
        let schema = schema::<CustomHeader>();
        assert_eq!(
            schema["properties"]["value"],
            json!({
                "type": "string",
                "description": "Any text; a 2026-07-28 client mirrors it into the `Mcp-Param-Value` header.",
                "x-mcp-header": "Value"
            })
        );
    }
}
