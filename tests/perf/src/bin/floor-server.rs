//! `floor-server`: the benchmark's floor, a native rmcp stdio server with no
//! sandbox.
//!
//! It serves one tool, `read_file`, with the arguments and the result shape
//! of the fs plugin's `read_file` (`path`, `offset?`, `limit?`,
//! `line_numbers?`; one text block holding the lines and, when more remain, a
//! note saying how to continue). The file is read with `std::fs` right in the
//! handler: no WebAssembly, no WASI, no argument validation, no blocking
//! thread. What Toolcell adds on top of this is the cost of its sandbox.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// The fs plugin's defaults.
const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
const DEFAULT_READ_LIMIT: usize = 2000;
const BINARY_PROBE_BYTES: usize = 8192;

#[derive(Clone)]
struct Floor {
    tool: Tool,
    /// Relative paths resolve against the directory the server started in,
    /// as they do against the fs plugin's first mount.
    root: PathBuf,
}

impl Floor {
    fn new(root: PathBuf) -> Floor {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": { "type": "string" },
                "offset": { "type": ["integer", "null"], "minimum": 1 },
                "limit": { "type": ["integer", "null"], "minimum": 1 },
                "line_numbers": { "type": "boolean", "default": false }
            },
            "required": ["path"],
            "additionalProperties": false
        });
        let schema: JsonObject = match schema {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        };
        let tool = Tool::new("read_file", "Read a text file by lines.", Arc::new(schema))
            .annotate(ToolAnnotations::new().read_only(true).open_world(false));
        Floor { tool, root }
    }

    fn read_file(&self, arguments: &JsonObject) -> Result<String, String> {
        let path = arguments
            .get("path")
            .and_then(Value::as_str)
            .ok_or("invalid arguments: `path` is required")?;
        let path = self.root.join(Path::new(path));
        let bytes = std::fs::read(&path).map_err(|e| format!("`{}`: {e}", path.display()))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!("`{}` is over the size limit", path.display()));
        }
        let probe = &bytes[..bytes.len().min(BINARY_PROBE_BYTES)];
        if probe.contains(&0) {
            return Err(format!("`{}` looks like a binary file", path.display()));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("`{}` is not UTF-8 text", path.display()))?;
        let number = |key: &str| arguments.get(key).and_then(Value::as_u64);
        let first = number("offset").unwrap_or(1).max(1);
        let limit = number("limit").map_or(DEFAULT_READ_LIMIT, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        });
        let line_numbers = arguments
            .get("line_numbers")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let skip = usize::try_from(first - 1).unwrap_or(usize::MAX);
        let total = text.lines().count();
        if skip >= total && total > 0 {
            return Err(format!("offset {first} is past the end"));
        }
        let mut out = String::with_capacity(text.len().min(1 << 20));
        let mut shown = 0;
        for (index, line) in text.lines().enumerate().skip(skip).take(limit) {
            if line_numbers {
                out.push_str(&format!("{:>6}\t", index + 1));
            }
            out.push_str(line);
            out.push('\n');
            shown += 1;
        }
        let last = skip + shown;
        if last < total {
            out.push_str(&format!(
                "\n[lines {}-{last} of {total}; continue with offset={}]\n",
                skip + 1,
                last + 1
            ));
        }
        Ok(out)
    }
}

impl ServerHandler for Floor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("floor-server", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == "read_file").then(|| self.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "read_file" {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let result = match self.read_file(&arguments) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(CallToolResponse::from(result))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let root = std::env::current_dir()?;
    let running = Floor::new(root).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
