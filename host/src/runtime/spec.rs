//! A tool as the host knows it: [`ToolSpec`], made once at load time from
//! the descriptor a plugin lists, checked against the contract's rules and
//! the listing caps, with the argument validator compiled on first use.

use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::config::{CATEGORY_RULE, Limits, Mount, TOOL_NAME_RULE, is_category, is_tool_name};
use crate::limits::{
    MAX_DESCRIPTION_BYTES, MAX_LISTING_BYTES, MAX_SCHEMA_BYTES, MAX_TITLE_BYTES,
    MAX_TOOLS_PER_PLUGIN,
};
use crate::runtime::contract::v1;

/// A JSON object, as schemas are.
pub type JsonObject = Map<String, Value>;

/// A tool as the host knows it.
pub struct ToolSpec {
    /// The tool's name, as served: the plugin's own name for it, or its
    /// `rename`, or either with the plugin's `prefix` (see [`ToolSpec::serve_as`]).
    pub name: String,
    /// The name the plugin itself knows the tool by, which calls use; the
    /// key of its `[[plugin.tool]]` overrides.
    pub guest: String,
    /// Its title, for people.
    pub title: String,
    /// Its description, for the model.
    pub description: String,
    /// The category's name (`read`, `search`, ...).
    pub category: String,
    /// What the tool says of itself: read-only, destructive, idempotent,
    /// open-world. If it is read-only, every mount is read-only for it.
    pub annotations: v1::Annotations,
    /// The JSON Schema of its arguments, an object schema.
    pub input_schema: Arc<JsonObject>,
    /// The JSON Schema of its structured content, if it declares one.
    pub output_schema: Option<Arc<JsonObject>>,
    /// The directories this tool sees: its override, or its plugin's.
    pub mounts: Vec<Mount>,
    /// Its limits: server, then plugin, then tool.
    pub limits: Limits,
    /// The input schema compiled, on first use: compiling every tool's
    /// schema at start-up would cost milliseconds for tools never called.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl ToolSpec {
    /// Checks a plugin's descriptor and makes the tool, which sees `mounts`
    /// with `limits`.
    pub fn new(
        descriptor: v1::ToolDescriptor,
        mounts: Vec<Mount>,
        limits: Limits,
    ) -> Result<ToolSpec> {
        if !is_tool_name(&descriptor.name) {
            bail!("names are {TOOL_NAME_RULE}");
        }
        let input_schema = schema_object(&descriptor.input_schema, "the input schema")?;
        let output_schema = descriptor
            .output_schema
            .as_deref()
            .map(|text| schema_object(text, "the output schema"))
            .transpose()?;
        Ok(ToolSpec {
            category: category_name(descriptor.category)?,
            guest: descriptor.name.clone(),
            name: descriptor.name,
            title: descriptor.title,
            description: descriptor.description,
            annotations: descriptor.annotations,
            input_schema: Arc::new(input_schema),
            output_schema: output_schema.map(Arc::new),
            mounts,
            limits,
            validator: OnceLock::new(),
        })
    }

    /// The same tool served under `name` (a `rename`, a `prefix`); calls
    /// still reach the guest by [`ToolSpec::guest`].
    pub fn serve_as(mut self, name: String) -> Result<ToolSpec> {
        if !is_tool_name(&name) {
            bail!("`{name}` is not a valid tool name: names are {TOOL_NAME_RULE}");
        }
        self.name = name;
        Ok(self)
    }

    /// Whether the tool only reads: then every mount is read-only for it.
    pub fn read_only(&self) -> bool {
        self.annotations.read_only
    }

    /// Its annotations in words, for people: `read-only` or `writes`,
    /// `destructive` or not, `idempotent` or not, `open-world` or
    /// `closed-world`.
    pub fn annotation_words(&self) -> [&'static str; 4] {
        let a = &self.annotations;
        let word = |on: bool, yes, no| if on { yes } else { no };
        [
            word(a.read_only, "read-only", "writes"),
            word(a.destructive, "destructive", "non-destructive"),
            word(a.idempotent, "idempotent", "non-idempotent"),
            word(a.open_world, "open-world", "closed-world"),
        ]
    }

    /// Checks that the input schema is a valid JSON Schema (compiling it,
    /// if that has not happened yet).
    pub fn check_schema(&self) -> Result<&jsonschema::Validator, String> {
        self.validator
            .get_or_init(|| {
                jsonschema::validator_for(&Value::Object((*self.input_schema).clone()))
                    .map_err(|error| error.to_string())
            })
            .as_ref()
            .map_err(|error| {
                format!(
                    "the input schema of `{}` is not a valid JSON Schema: {error}",
                    self.name
                )
            })
    }

    /// Checks `arguments` against the input schema; the error names each
    /// offending field. Many clients send `null` for an optional argument
    /// they mean to leave out: where the schema has no use for that null,
    /// the argument is dropped rather than refused.
    pub fn validate(&self, arguments: &mut Value) -> Result<(), String> {
        let validator = self.check_schema().map_err(|error| {
            tracing::error!("{error}");
            format!("{error}; the plugin needs fixing before this tool can be called")
        })?;
        if validator.is_valid(arguments) {
            return Ok(());
        }
        if let Some(stripped) = self.without_optional_nulls(arguments)
            && validator.is_valid(&stripped)
        {
            *arguments = stripped;
            return Ok(());
        }
        let problems: Vec<String> = validator
            .iter_errors(arguments)
            .take(5)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() {
                    error.to_string()
                } else {
                    format!(
                        "`{}`: {error}",
                        path.trim_start_matches('/').replace('/', ".")
                    )
                }
            })
            .collect();
        Err(format!(
            "invalid arguments for `{}`: {}",
            self.name,
            problems.join("; ")
        ))
    }

    /// `arguments` without the top-level `null`s of properties the schema
    /// does not require, if there are any.
    fn without_optional_nulls(&self, arguments: &Value) -> Option<Value> {
        let object = arguments.as_object()?;
        let required = self.input_schema.get("required").and_then(Value::as_array);
        let optional_null = |(name, value): &(&String, &Value)| {
            value.is_null() && !required.is_some_and(|required| required.iter().any(|r| r == *name))
        };
        if !object.iter().any(|entry| optional_null(&entry)) {
            return None;
        }
        let kept = object
            .iter()
            .filter(|entry| !optional_null(entry))
            .map(|(name, value)| (name.clone(), value.clone()));
        Some(Value::Object(kept.collect()))
    }
}

/// Refuses a listing over the load-time caps, naming the cap: a plugin
/// cannot make `tools/list` unbounded.
pub fn check_listing_size(descriptors: &[v1::ToolDescriptor]) -> Result<()> {
    if descriptors.len() > MAX_TOOLS_PER_PLUGIN {
        bail!(
            "it lists {} tools, over the limit of {MAX_TOOLS_PER_PLUGIN} per plugin",
            descriptors.len()
        );
    }
    let mut total = 0;
    for d in descriptors {
        let name: String = d.name.chars().take(64).collect();
        let fields = [
            ("title", d.title.len(), MAX_TITLE_BYTES),
            ("description", d.description.len(), MAX_DESCRIPTION_BYTES),
            ("input schema", d.input_schema.len(), MAX_SCHEMA_BYTES),
            (
                "output schema",
                d.output_schema.as_ref().map_or(0, String::len),
                MAX_SCHEMA_BYTES,
            ),
        ];
        for (what, len, max) in fields {
            if len > max {
                bail!("the {what} of tool `{name}` is {len} bytes, over the limit of {max} bytes");
            }
            total += len;
        }
        total += d.name.len();
    }
    if total > MAX_LISTING_BYTES {
        bail!(
            "its tool descriptors add up to {total} bytes, over the limit of \
             {MAX_LISTING_BYTES} bytes per plugin"
        );
    }
    Ok(())
}

fn category_name(category: v1::Category) -> Result<String> {
    use v1::Category as C;
    Ok(match category {
        C::Read => "read".into(),
        C::Search => "search".into(),
        C::Write => "write".into(),
        C::Execute => "execute".into(),
        C::Vcs => "vcs".into(),
        C::Network => "network".into(),
        C::Other(name) => {
            if !is_category(&name) {
                bail!("category `{name}` is not {CATEGORY_RULE}");
            }
            name
        }
    })
}

fn schema_object(text: &str, what: &str) -> Result<JsonObject> {
    let value: Value =
        serde_json::from_str(text).with_context(|| format!("{what} is not valid JSON"))?;
    let Value::Object(object) = value else {
        bail!("{what} is not a JSON object");
    };
    if object.get("type").and_then(Value::as_str) != Some("object") {
        bail!("{what} must have \"type\": \"object\"");
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_must_be_objects() {
        assert!(schema_object(r#"{"type":"object"}"#, "s").is_ok());
        assert!(schema_object(r#"{"type":"string"}"#, "s").is_err());
        assert!(schema_object("[]", "s").is_err());
        assert!(schema_object("{", "s").is_err());
    }
}
