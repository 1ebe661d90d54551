//! WASI commands: a component exporting `wasi:cli/run` (a CLI built for
//! `wasm32-wasip2`) served as one tool, named after its plugin.
//!
//! The tool takes `args` (its arguments, `argv[0]` being the plugin's name)
//! and an optional `stdin`; it runs the command's `run` in the instance the
//! plugin made for the call, with stdout and stderr kept in memory
//! ([`Captured`], each up to a quarter of the output cap, so that
//! the result, which carries both twice, fits it), and returns them with
//! the exit code: non-zero is `is-error`.

use serde_json::{Value, json};
use wasmtime::Store;
use wasmtime::component::Instance;
use wasmtime_wasi::I32Exit;
use wasmtime_wasi::p2::bindings::CommandIndices;

use crate::runtime::contract::v1;
use crate::runtime::host::CallState;
use crate::runtime::sandbox::{Captured, CommandStdio};

/// The tool of command plugin `plugin`.
pub fn descriptor(plugin: &str) -> v1::ToolDescriptor {
    let input = json!({
        "type": "object",
        "properties": {
            "args": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the command's arguments (without the program name)",
            },
            "stdin": {"type": "string", "description": "what the command reads on stdin"},
        },
        "required": ["args"],
        "additionalProperties": false,
    });
    let output = json!({
        "type": "object",
        "properties": {
            "exit_code": {"type": "integer"},
            "stdout": {"type": "string"},
            "stderr": {"type": "string"},
            "truncated": {"type": "boolean", "description": "output past the cap was dropped"},
        },
        "required": ["exit_code", "stdout", "stderr", "truncated"],
    });
    v1::ToolDescriptor {
        name: plugin.replace('-', "_"),
        title: format!("{plugin} (command)"),
        description: format!(
            "Runs the command `{plugin}` with `args` and optional `stdin`; returns its exit code, \
             stdout and stderr. A non-zero exit code is an error. It sees only the folders \
             granted to it."
        ),
        input_schema: input.to_string(),
        output_schema: Some(output.to_string()),
        category: v1::Category::Read,
        annotations: v1::Annotations {
            read_only: true,
            destructive: false,
            idempotent: false,
            open_world: false,
        },
    }
}

/// The standard streams of one run of `plugin` with `arguments` (the tool's
/// validated JSON); `max_output_bytes` is the call's output cap.
pub fn stdio(plugin: &str, arguments: &str, max_output_bytes: u64) -> CommandStdio {
    let arguments: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let mut argv = vec![plugin.to_string()];
    if let Some(args) = arguments.get("args").and_then(Value::as_array) {
        argv.extend(args.iter().filter_map(Value::as_str).map(str::to_string));
    }
    let stdin = arguments
        .get("stdin")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let cap = usize::try_from(max_output_bytes / 4)
        .unwrap_or(usize::MAX)
        .saturating_sub(1024);
    CommandStdio {
        argv,
        stdin: bytes::Bytes::copy_from_slice(stdin.as_bytes()),
        stdout: Captured::new(cap),
        stderr: Captured::new(cap),
    }
}

/// Runs the command in `instance`; its streams are `stdio`'s.
pub async fn run(
    store: &mut Store<CallState>,
    instance: &Instance,
    indices: &CommandIndices,
    stdio: &CommandStdio,
) -> wasmtime::Result<v1::ToolResult> {
    let command = indices.load(&mut *store, instance)?;
    let exit_code = match command.wasi_cli_run().call_run(&mut *store).await {
        Ok(Ok(())) => 0,
        Ok(Err(())) => 1,
        Err(error) => match error.downcast_ref::<I32Exit>() {
            Some(I32Exit(code)) => *code,
            None => return Err(error),
        },
    };
    Ok(result(exit_code, &stdio.stdout, &stdio.stderr))
}

fn result(exit_code: i32, stdout: &Captured, stderr: &Captured) -> v1::ToolResult {
    let (out, out_cut) = stdout.take();
    let (err, err_cut) = stderr.take();
    let (out, err) = (String::from_utf8_lossy(&out), String::from_utf8_lossy(&err));
    let truncated = out_cut || err_cut;
    let mut text = format!("exit code {exit_code}\n--- stdout ---\n{out}");
    if !err.is_empty() {
        text.push_str(&format!("\n--- stderr ---\n{err}"));
    }
    if truncated {
        text.push_str("\n(output past the cap was dropped)");
    }
    let structured = json!({
        "exit_code": exit_code,
        "stdout": out,
        "stderr": err,
        "truncated": truncated,
    });
    v1::ToolResult {
        content: vec![v1::Content::Text(text)],
        structured_content: Some(structured.to_string()),
        is_error: exit_code != 0,
    }
}

/// The command's indices, if the component behind `pre` is a command.
pub fn find(pre: &wasmtime::component::InstancePre<CallState>) -> Option<CommandIndices> {
    CommandIndices::new(pre).ok()
}
