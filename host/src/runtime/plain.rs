//! Plain components: every exported function, at the world's level or in an
//! exported interface, served as a tool.
//!
//! [`discover`] walks the component's export types once at load time (no
//! instance is made): each function whose parameters and result can cross
//! JSON becomes a [`Function`], with an input schema made from its WIT
//! parameter types (`schema`), an output schema from its result, and a
//! description from the component's WIT docs (`docs`, the `package-docs`
//! custom section) or, without them, from its signature. A function that
//! uses a resource handle, a stream or a future is refused alone
//! ([`Refused`]). [`call`] then calls one dynamically, with values built
//! from the validated JSON (`values`), in the instance the plugin made for
//! the call.
//!
//! Tool names (docs/components.md, "Tool names"): a world-level function is
//! served by its own name, an interface's function as `INTERFACE_FUNCTION`
//! (the interface's name without its package or version), each with `-` as
//! `_`: `add`, `kit_greet`.

use serde_json::{Value, json};
use wasmtime::component::types::{ComponentFunc, ComponentItem, Type};
use wasmtime::component::{Component, ComponentExportIndex, Instance, Val};
use wasmtime::{Engine, Store};

use crate::config::is_tool_name;
use crate::runtime::contract::v1;
use crate::runtime::host::CallState;

mod docs;
pub mod schema;
pub mod values;

/// One exported function, served as a tool.
pub struct Function {
    /// Its export path: `add`, or `test:plain/kit@0.1.0#greet`.
    pub export_name: String,
    /// Where it is in the component.
    export: ComponentExportIndex,
    params: Vec<(String, Type)>,
    result: Option<Type>,
    /// The tool as listed (its category and annotations are set by the
    /// plugin from its grants).
    pub descriptor: v1::ToolDescriptor,
}

/// An exported function that is not served, and why.
pub struct Refused {
    /// Its export path.
    pub function: String,
    /// Why, for the log and `toolcell inspect`.
    pub reason: String,
}

/// What a plain component serves and refuses.
#[derive(Default)]
pub struct Discovery {
    /// The functions served, in export order.
    pub functions: Vec<Function>,
    /// The functions refused.
    pub refused: Vec<Refused>,
    /// Every export, as `toolcell inspect` and refusals name them.
    pub exports: Vec<String>,
}

/// Finds every function `component` exports and what it would serve;
/// `wasm` is its bytes, for its WIT docs.
pub fn discover(engine: &Engine, component: &Component, wasm: &[u8]) -> Discovery {
    let docs = docs::Docs::read(wasm);
    let mut found = Discovery::default();
    let ty = component.component_type();
    for (name, item) in ty.exports(engine) {
        found.exports.push(name.to_string());
        match item.ty {
            ComponentItem::ComponentFunc(func) => {
                let Some(index) = component.get_export_index(None, name) else {
                    continue;
                };
                let doc = docs.world_function(name);
                found.add(None, name, index, &func, doc);
            }
            ComponentItem::ComponentInstance(instance) => {
                let Some(outer) = component.get_export_index(None, name) else {
                    continue;
                };
                let interface = interface_name(name);
                for (func_name, item) in instance.exports(engine) {
                    let ComponentItem::ComponentFunc(func) = item.ty else {
                        continue;
                    };
                    let Some(index) = component.get_export_index(Some(&outer), func_name) else {
                        continue;
                    };
                    let doc = docs.interface_function(interface, func_name);
                    found.add(Some((name, interface)), func_name, index, &func, doc);
                }
            }
            _ => {}
        }
    }
    found
}

impl Discovery {
    fn add(
        &mut self,
        interface: Option<(&str, &str)>,
        name: &str,
        export: ComponentExportIndex,
        func: &ComponentFunc,
        doc: Option<String>,
    ) {
        let export_name = match interface {
            Some((full, _)) => format!("{full}#{name}"),
            None => name.to_string(),
        };
        let mut refuse = |reason: String| {
            self.refused.push(Refused {
                function: export_name.clone(),
                reason,
            });
        };
        if name.starts_with('[') {
            refuse("it is a resource's constructor, method or static function".into());
            return;
        }
        let tool = tool_name(interface.map(|(_, short)| short), name);
        if !is_tool_name(&tool) || tool.len() > 64 {
            refuse(format!(
                "its tool name `{tool}` is not a portable tool name (1 to 64 of A-Z, a-z, 0-9, \
                 `_`, `-`); rename it in `[[plugin.tool]]`"
            ));
            return;
        }
        if self.functions.iter().any(|f| f.descriptor.name == tool) {
            refuse(format!("another exported function is also named `{tool}`"));
            return;
        }
        let params: Vec<(String, Type)> = func.params().map(|(n, t)| (n.to_string(), t)).collect();
        let result = func.results().next();
        let input = match schema::object(params.iter().cloned()) {
            Ok(input) => input,
            Err(schema::Unsupported(what)) => {
                refuse(format!("a parameter is {what}, which cannot cross JSON"));
                return;
            }
        };
        let output = match result.as_ref().map(output_schema).transpose() {
            Ok(output) => output.flatten(),
            Err(schema::Unsupported(what)) => {
                refuse(format!("its result is {what}, which cannot cross JSON"));
                return;
            }
        };
        let signature = signature(&params, result.as_ref());
        let description = match doc {
            Some(doc) => format!("{}\n\nWIT: `{name}: {signature}`", doc.trim()),
            None => format!("Calls `{export_name}`: `{name}: {signature}`."),
        };
        self.functions.push(Function {
            export_name: export_name.clone(),
            export,
            params,
            result,
            descriptor: v1::ToolDescriptor {
                name: tool,
                title: export_name,
                description,
                input_schema: input.to_string(),
                output_schema: output.map(|o| o.to_string()),
                category: v1::Category::Read,
                annotations: v1::Annotations {
                    read_only: true,
                    destructive: false,
                    idempotent: false,
                    open_world: false,
                },
            },
        });
    }
}

/// `kit` of `test:plain/kit@0.1.0`; a plain instance name stays as it is.
fn interface_name(export: &str) -> &str {
    let path = export.split('@').next().unwrap_or(export);
    path.rsplit('/').next().unwrap_or(path)
}

/// The tool name of function `name`, in `interface` if it is in one.
pub fn tool_name(interface: Option<&str>, name: &str) -> String {
    let name = match interface {
        Some(interface) => format!("{interface}_{name}"),
        None => name.to_string(),
    };
    name.replace(['-', ':', '/', '@', '.', '#'], "_")
}

/// The output schema of a function returning `ty`: an object whose
/// `result` is the value (MCP wants an object); for `result<T, E>`, `T`'s,
/// or none when `T` is absent.
fn output_schema(ty: &Type) -> Result<Option<Value>, schema::Unsupported> {
    let value = match ty {
        Type::Result(result) => {
            // The error side is rendered as text, but must cross too.
            if let Some(err) = result.err() {
                schema::of(&err)?;
            }
            match result.ok() {
                Some(ok) => schema::of(&ok)?,
                None => return Ok(None),
            }
        }
        other => schema::of(other)?,
    };
    Ok(Some(json!({
        "type": "object",
        "properties": {"result": value},
        "required": ["result"],
    })))
}

fn signature(params: &[(String, Type)], result: Option<&Type>) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|(n, t)| format!("{n}: {}", schema::wit(t)))
        .collect();
    match result {
        Some(ty) => format!("func({}) -> {}", params.join(", "), schema::wit(ty)),
        None => format!("func({})", params.join(", ")),
    }
}

/// Calls `function` in `instance` with `arguments` (a JSON object the input
/// schema has accepted). A bad argument or an `err` result is a result with
/// `is-error`; a trap is an error.
pub async fn call(
    store: &mut Store<CallState>,
    instance: &Instance,
    function: &Function,
    arguments: &str,
) -> wasmtime::Result<v1::ToolResult> {
    let fail = |message: String| v1::ToolResult {
        content: vec![v1::Content::Text(message)],
        structured_content: None,
        is_error: true,
    };
    let object = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(object)) => object,
        _ => return Ok(fail("the arguments must be a JSON object".into())),
    };
    let params = match values::named(function.params.iter().cloned(), &object, "") {
        Ok(params) => params.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        Err(problem) => {
            return Ok(fail(format!(
                "invalid arguments for `{}`: {problem}",
                function.descriptor.name
            )));
        }
    };
    let func = instance
        .get_func(&mut *store, function.export)
        .ok_or_else(|| wasmtime::format_err!("`{}` is not exported", function.export_name))?;
    let mut results = vec![Val::Bool(false); usize::from(function.result.is_some())];
    func.call_async(&mut *store, &params, &mut results).await?;
    Ok(render(function.result.as_ref(), results.first()))
}

/// A function's result as a tool result: `structuredContent` `{"result": ..}`
/// and its text; `err` of a `result` as `is-error`.
fn render(ty: Option<&Type>, val: Option<&Val>) -> v1::ToolResult {
    let (Some(ty), Some(val)) = (ty, val) else {
        return text_result("done (the function returns nothing)".into(), None, false);
    };
    if let (Type::Result(result), Val::Result(outcome)) = (ty, val) {
        return match outcome {
            Ok(Some(ok)) => match result.ok() {
                Some(ok_ty) => structured(values::to_json(&ok_ty, ok)),
                None => text_result("ok".into(), None, false),
            },
            Ok(None) => text_result("ok".into(), None, false),
            Err(err) => {
                let message = match (result.err(), err) {
                    (Some(err_ty), Some(err)) => match values::to_json(&err_ty, err) {
                        Value::String(text) => text,
                        other => other.to_string(),
                    },
                    _ => "the function returned an error".into(),
                };
                text_result(format!("error: {message}"), None, true)
            }
        };
    }
    structured(values::to_json(ty, val))
}

fn structured(value: Value) -> v1::ToolResult {
    let text = match &value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let content = json!({ "result": value }).to_string();
    text_result(text, Some(content), false)
}

fn text_result(text: String, structured: Option<String>, is_error: bool) -> v1::ToolResult {
    v1::ToolResult {
        content: vec![v1::Content::Text(text)],
        structured_content: structured,
        is_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_join_interface_and_function() {
        assert_eq!(tool_name(None, "add"), "add");
        assert_eq!(tool_name(Some("kit"), "greet-person"), "kit_greet_person");
        assert_eq!(interface_name("test:plain/kit@0.1.0"), "kit");
        assert_eq!(interface_name("kit"), "kit");
    }
}
