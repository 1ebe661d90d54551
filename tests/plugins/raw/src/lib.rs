//! A test-only plugin built on the raw WIT bindings rather than the SDK, so
//! it can break the contract in ways the SDK prevents: invalid UTF-8 in a
//! string, structured content that is not JSON, and, when its config asks
//! for them, a bad descriptor (`bad_descriptor = "yes"`), a tool whose input
//! schema is not a JSON Schema (`bad_schema = "yes"`), a `list-tools`
//! that traps (`trap_in_list = "yes"`) or spins until its time limit stops it
//! (`spin_in_list = "yes"`), one that lists `many_tools = "N"` more tools or a
//! tool with a description of `huge_description = "N"` bytes, and an extra
//! tool named by `extra_tool = "NAME"` (to clash with another plugin's).
#![allow(unsafe_code)] // invalid UTF-8 can only be made unsafely
#![allow(missing_docs)] // the generated bindings are not documented

wit_bindgen::generate!({
    path: "../../../wit",
    world: "toolcell:plugin/plugin@0.1.0",
    generate_all,
});

use exports::toolcell::plugin0_1_0::tools::{Call, Guest, ToolDescriptor, ToolResult};
use toolcell::plugin0_1_0::host;
use toolcell::plugin0_1_0::types::{Annotations, Category, Content};

#[allow(dead_code)] // constructed by the exports, which exist only in wasm
struct Raw;

fn descriptor(name: &str) -> ToolDescriptor {
    ToolDescriptor {
        name: name.to_string(),
        title: name.to_string(),
        description: format!("raw test tool {name}"),
        input_schema: r#"{"type":"object"}"#.to_string(),
        output_schema: None,
        category: Category::Read,
        annotations: Annotations {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
    }
}

impl Guest for Raw {
    fn list_tools() -> Vec<ToolDescriptor> {
        if host::get_config("trap_in_list").as_deref() == Some("yes") {
            panic!("list-tools trapped on purpose");
        }
        if host::get_config("spin_in_list").as_deref() == Some("yes") {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        let mut tools: Vec<ToolDescriptor> = ["bad_utf8", "bad_json", "good"]
            .into_iter()
            .map(descriptor)
            .collect();
        if host::get_config("bad_descriptor").as_deref() == Some("yes") {
            tools.push(descriptor("has spaces"));
        }
        let number = |key: &str| host::get_config(key).and_then(|n| n.parse::<usize>().ok());
        if let Some(n) = number("many_tools") {
            tools.extend((0..n).map(|i| descriptor(&format!("tool_{i}"))));
        }
        if let Some(bytes) = number("huge_description") {
            let mut huge = descriptor("huge");
            huge.description = "d".repeat(bytes);
            tools.push(huge);
        }
        if let Some(name) = host::get_config("extra_tool") {
            tools.push(descriptor(&name));
        }
        if host::get_config("bad_schema").as_deref() == Some("yes") {
            let mut bad = descriptor("bad_schema");
            bad.input_schema = r#"{"type":"object","properties":{"x":{"type":12}}}"#.to_string();
            tools.push(bad);
        }
        tools
    }

    fn call_tool(call: Call) -> ToolResult {
        match call.tool.as_str() {
            "bad_utf8" => ToolResult {
                // SAFETY: deliberately not UTF-8; the host must refuse it
                // when it lifts the string, as a trap, not crash.
                content: vec![Content::Text(unsafe {
                    String::from_utf8_unchecked(vec![b'o', b'k', 0xff, 0xfe])
                })],
                structured_content: None,
                is_error: false,
            },
            "bad_json" => ToolResult {
                content: vec![Content::Text("see structured".to_string())],
                structured_content: Some("{not json".to_string()),
                is_error: false,
            },
            _ => ToolResult {
                content: vec![Content::Text("good".to_string())],
                structured_content: None,
                is_error: false,
            },
        }
    }
}

// Native builds (`cargo build --workspace`) cannot link the contract's export names.
#[cfg(target_family = "wasm")]
export!(Raw);
