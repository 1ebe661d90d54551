//! The JSON Schemas a tool publishes, derived with schemars and made portable.
//!
//! [`input_text`] and [`output_text`] generate a root schema (JSON Schema 2020-12) for a type,
//! with the deserialising and the serialising contract respectively: an input's optional field
//! is one the plugin may be sent without, an output's one it may leave out. Both run the
//! [`Portable`] transform over every schema in the result (properties, items, `$defs`, the
//! members of `anyOf`/`oneOf`/`allOf`, ...), which rewrites what schemars emits but many MCP
//! clients reject or warn about:
//!
//! - `format` values that JSON Schema does not define (`uint64`, `int32`, `double`, `ip`, ...)
//!   are dropped; for integer formats the range they stood for is kept as `minimum` and
//!   `maximum`, unless a bound at least as strict is already there;
//! - a property that is not `required` is not also nullable: `"type": ["T", "null"]` becomes
//!   `"type": "T"`, a `{"type": "null"}` member of `anyOf`/`oneOf` is removed (the rest
//!   replaces the `anyOf` when one member is left), and `null` leaves `enum` and `default`;
//! - any `type` array left (a required `Option`) becomes `anyOf` with one type per member,
//!   which means the same and is the spelling single-type dialects (Gemini's) understand.

use schemars::generate::SchemaSettings;
use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};

/// The schema of a tool's arguments, as JSON text.
pub(crate) fn input_text<T: JsonSchema>() -> String {
    input_value::<T>().to_string()
}

/// The schema of a tool's or a prompt's arguments.
pub(crate) fn input_value<T: JsonSchema>() -> Value {
    value::<T>(SchemaSettings::draft2020_12().for_deserialize())
}

/// The schema of a tool's structured content, as JSON text.
///
/// The serialising contract matters here: a field that is always written (an `Option` without
/// `skip_serializing_if`) is `required` and keeps `null`, so the content still validates.
pub(crate) fn output_text<T: JsonSchema>() -> String {
    value::<T>(SchemaSettings::draft2020_12().for_serialize()).to_string()
}

fn value<T: JsonSchema>(settings: SchemaSettings) -> Value {
    settings
        .with_transform(Portable)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// The formats JSON Schema 2020-12 defines (Validation, section 7.3); a validator may not know
/// any other.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The transform described in the module documentation. It applies itself to every subschema.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Portable;

impl Transform for Portable {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            replace_format(object);
            drop_null_from_optional_properties(object);
            split_type_union(object);
        }
        transform_subschemas(self, schema);
    }
}

/// A number bound in a schema: exact for integers, `f64` otherwise.
#[derive(Clone, Copy)]
enum Bound {
    Int(i128),
    Float(f64),
}

impl Bound {
    fn of(value: &Value) -> Option<Bound> {
        if let Some(n) = value.as_i64() {
            Some(Bound::Int(n.into()))
        } else if let Some(n) = value.as_u64() {
            Some(Bound::Int(n.into()))
        } else {
            value.as_f64().map(Bound::Float)
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            // Precision lost only beyond 2^53, where no comparison here is close.
            Bound::Int(n) => n as f64,
            Bound::Float(f) => f,
        }
    }

    fn cmp(self, other: Bound) -> std::cmp::Ordering {
        match (self, other) {
            (Bound::Int(a), Bound::Int(b)) => a.cmp(&b),
            (a, b) => a.as_f64().total_cmp(&b.as_f64()),
        }
    }
}

/// The range of values an integer `format` of schemars stands for. `int`/`uint` are `isize` and
/// `usize`, whose width is the target's: this code runs in the plugin that decodes them.
fn integer_range(format: &str) -> Option<(Option<i128>, Option<i128>)> {
    let range = |min: i128, max: i128| Some((Some(min), Some(max)));
    match format {
        "int8" => range(i8::MIN.into(), i8::MAX.into()),
        "int16" => range(i16::MIN.into(), i16::MAX.into()),
        "int32" => range(i32::MIN.into(), i32::MAX.into()),
        "int64" => range(i64::MIN.into(), i64::MAX.into()),
        "int" => range(isize::MIN as i128, isize::MAX as i128),
        "uint8" => range(0, u8::MAX.into()),
        "uint16" => range(0, u16::MAX.into()),
        "uint32" => range(0, u32::MAX.into()),
        "uint64" => range(0, u64::MAX.into()),
        "uint" => range(0, usize::MAX as i128),
        // Beyond what a JSON number holds exactly; the sign is still worth saying.
        "int128" => Some((None, None)),
        "uint128" => Some((Some(0), None)),
        _ => None,
    }
}

/// Drops a non-standard `format`, keeping an integer format's range as bounds.
fn replace_format(object: &mut Map<String, Value>) {
    let Some(format) = object.get("format").and_then(Value::as_str) else {
        return;
    };
    if STANDARD_FORMATS.contains(&format) {
        return;
    }
    if let Some((min, max)) = integer_range(format) {
        if let Some(min) = min {
            tighten(
                object,
                "minimum",
                "exclusiveMinimum",
                min,
                std::cmp::Ordering::Greater,
            );
        }
        if let Some(max) = max {
            tighten(
                object,
                "maximum",
                "exclusiveMaximum",
                max,
                std::cmp::Ordering::Less,
            );
        }
    }
    object.remove("format");
}

/// Sets `key` (`minimum` or `maximum`) to `limit` unless `key` or `exclusive` already bounds
/// at least as strictly; `stricter` is how a stricter bound compares to a looser one.
fn tighten(
    object: &mut Map<String, Value>,
    key: &str,
    exclusive: &str,
    limit: i128,
    stricter: std::cmp::Ordering,
) {
    let limit_bound = Bound::Int(limit);
    let at_least_as_strict = |name: &str| {
        object
            .get(name)
            .and_then(Bound::of)
            .is_some_and(|existing| existing.cmp(limit_bound) != stricter.reverse())
    };
    if at_least_as_strict(key) || at_least_as_strict(exclusive) {
        return;
    }
    let value = match (i64::try_from(limit), u64::try_from(limit)) {
        (Ok(n), _) => Value::from(n),
        (_, Ok(n)) => Value::from(n),
        // Only the 128-bit formats reach past 64 bits, and they set no such bound.
        _ => return,
    };
    object.insert(key.to_string(), value);
}

/// Makes each property that is not `required` non-nullable: leaving it out is how a client
/// says "none", and single-type dialects cannot say `null` at all.
fn drop_null_from_optional_properties(object: &mut Map<String, Value>) {
    let required: Vec<String> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, property) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        if let Some(property) = property.as_object_mut() {
            drop_null(property);
        }
    }
}

/// Removes `null` from what `schema` accepts, where it is one choice among others.
fn drop_null(schema: &mut Map<String, Value>) {
    let mut dropped = false;
    if let Some(Value::Array(types)) = schema.get_mut("type")
        && types.len() > 1
        && types.iter().any(|t| t == "null")
    {
        types.retain(|t| t != "null");
        dropped = true;
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".to_string(), only);
        }
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum")
        && values.len() > 1
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        dropped = true;
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(members)) = schema.get_mut(key) else {
            continue;
        };
        if members.len() < 2 || !members.iter().any(is_null_schema) {
            continue;
        }
        members.retain(|member| !is_null_schema(member));
        dropped = true;
        if members.len() == 1 {
            collapse(schema, key);
        }
    }
    if dropped && schema.get("default").is_some_and(Value::is_null) {
        schema.remove("default");
    }
}

/// Whether `schema` accepts `null` and nothing else.
fn is_null_schema(schema: &Value) -> bool {
    let Some(object) = schema.as_object() else {
        return false;
    };
    match object.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => !types.is_empty() && types.iter().all(|t| t == "null"),
        _ => {
            object.get("const").is_some_and(Value::is_null)
                || object
                    .get("enum")
                    .and_then(Value::as_array)
                    .is_some_and(|values| !values.is_empty() && values.iter().all(Value::is_null))
        }
    }
}

/// Replaces a one-member `anyOf`/`oneOf` at `key` by the member's own keywords, where that
/// changes no keyword `schema` already has (otherwise the one-member array stays, which means
/// the same).
fn collapse(schema: &mut Map<String, Value>, key: &str) {
    let Some(Value::Array(members)) = schema.get(key) else {
        return;
    };
    let Some(Value::Object(member)) = members.first() else {
        return;
    };
    let clashes = member
        .iter()
        .any(|(name, value)| schema.get(name).is_some_and(|own| own != value));
    if clashes {
        return;
    }
    let member = member.clone();
    schema.remove(key);
    for (name, value) in member {
        schema.insert(name, value);
    }
}

/// Rewrites `"type": [A, B, ..]` as `"anyOf": [{"type": A}, {"type": B}, ..]`.
fn split_type_union(object: &mut Map<String, Value>) {
    let is_union = matches!(object.get("type"), Some(Value::Array(types)) if types.len() > 1);
    if !is_union || object.contains_key("anyOf") {
        return;
    }
    if let Some(Value::Array(types)) = object.remove("type") {
        let members = types
            .into_iter()
            .map(|t| {
                let mut member = Map::new();
                member.insert("type".to_string(), t);
                Value::Object(member)
            })
            .collect();
        object.insert("anyOf".to_string(), Value::Array(members));
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use schemars::json_schema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    fn portable(mut schema: Schema) -> Value {
        Portable.transform(&mut schema);
        schema.to_value()
    }

    fn input<T: JsonSchema>() -> Value {
        serde_json::from_str(&input_text::<T>()).unwrap()
    }

    fn output<T: JsonSchema>() -> Value {
        serde_json::from_str(&output_text::<T>()).unwrap()
    }

    /// Every `format` and every `type` array anywhere in `value`, with its JSON pointer.
    fn offenders(value: &Value, at: &str, found: &mut Vec<String>) {
        match value {
            Value::Object(object) => {
                if let Some(format) = object.get("format").and_then(Value::as_str)
                    && !STANDARD_FORMATS.contains(&format)
                {
                    found.push(format!("{at}: format {format}"));
                }
                if object.get("type").is_some_and(Value::is_array) {
                    found.push(format!("{at}: type {}", object["type"]));
                }
                for (key, child) in object {
                    offenders(child, &format!("{at}/{key}"), found);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    offenders(child, &format!("{at}/{index}"), found);
                }
            }
            _ => {}
        }
    }

    fn assert_portable(schema: &Value) {
        let mut found = Vec::new();
        offenders(schema, "", &mut found);
        assert!(found.is_empty(), "{found:?} in {schema:#}");
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Numbers {
        a: u8,
        b: u16,
        c: u32,
        d: u64,
        e: usize,
        f: i8,
        g: i16,
        h: i32,
        i: i64,
        j: isize,
        k: f32,
        l: f64,
        m: u128,
        n: i128,
        o: std::num::NonZeroU64,
        p: std::net::IpAddr,
        q: std::net::Ipv4Addr,
        #[schemars(range(min = 1, max = 10))]
        r: u64,
        #[schemars(range(min = -5))]
        s: u8,
    }

    #[test]
    fn integer_formats_become_ranges() {
        let schema = input::<Numbers>();
        assert_portable(&schema);
        let range = |name: &str| {
            let property = &schema["properties"][name];
            (property["minimum"].clone(), property["maximum"].clone())
        };
        assert_eq!(range("a"), (json!(0), json!(255)));
        assert_eq!(range("b"), (json!(0), json!(65535)));
        assert_eq!(range("c"), (json!(0), json!(4294967295u64)));
        assert_eq!(range("d"), (json!(0), json!(u64::MAX)));
        assert_eq!(range("e"), (json!(0), json!(usize::MAX)));
        assert_eq!(range("f"), (json!(-128), json!(127)));
        assert_eq!(range("g"), (json!(-32768), json!(32767)));
        assert_eq!(range("h"), (json!(i32::MIN), json!(i32::MAX)));
        assert_eq!(range("i"), (json!(i64::MIN), json!(i64::MAX)));
        assert_eq!(range("j"), (json!(isize::MIN), json!(isize::MAX)));
        assert_eq!(range("k"), (Value::Null, Value::Null));
        assert_eq!(range("l"), (Value::Null, Value::Null));
        assert_eq!(range("m"), (json!(0), Value::Null));
        assert_eq!(range("n"), (Value::Null, Value::Null));
        // A stricter bound already there is kept.
        assert_eq!(range("o"), (json!(1), json!(u64::MAX)));
        assert_eq!(range("r"), (json!(1), json!(10)));
        // A looser one is replaced by the type's.
        assert_eq!(range("s"), (json!(0), json!(255)));
        for name in ["k", "l", "m", "n", "p"] {
            assert!(schema["properties"][name].get("format").is_none(), "{name}");
        }
        assert_eq!(schema["properties"]["k"]["type"], "number");
        assert_eq!(
            schema["properties"]["q"]["format"], "ipv4",
            "a standard format stays"
        );
    }

    #[test]
    fn exclusive_bounds_count_as_bounds() {
        let schema = json_schema!({
            "type": "integer",
            "format": "uint8",
            "exclusiveMinimum": 3,
            "exclusiveMaximum": 300,
        });
        assert_eq!(
            portable(schema),
            json!({"type": "integer", "exclusiveMinimum": 3, "maximum": 255, "exclusiveMaximum": 300})
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        Slow,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// Optional and nested.
        depth: Option<u32>,
        name: String,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    #[serde(untagged)]
    enum Either {
        Number(u8),
        Text(String),
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Optional {
        /// A path.
        path: Option<String>,
        count: Option<u64>,
        mode: Option<Mode>,
        inner: Option<Inner>,
        list: Option<Vec<Inner>>,
        either: Option<Either>,
        #[serde(default)]
        flag: Option<bool>,
    }

    #[test]
    fn optional_properties_are_not_nullable() {
        let schema = input::<Optional>();
        let properties = &schema["properties"];
        assert_eq!(
            properties["path"],
            json!({"type": "string", "description": "A path."})
        );
        assert_eq!(
            properties["count"],
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        );
        assert_eq!(properties["mode"], json!({"$ref": "#/$defs/Mode"}));
        assert_eq!(properties["inner"], json!({"$ref": "#/$defs/Inner"}));
        assert_eq!(
            properties["list"],
            json!({"type": "array", "items": {"$ref": "#/$defs/Inner"}})
        );
        assert_eq!(properties["either"], json!({"$ref": "#/$defs/Either"}));
        // `"default": null` goes with the `null`.
        assert_eq!(properties["flag"], json!({"type": "boolean"}));
        // Recursion: a definition's own optional property.
        assert_eq!(
            schema["$defs"]["Inner"]["properties"]["depth"],
            json!({"type": "integer", "minimum": 0, "maximum": u32::MAX, "description": "Optional and nested."})
        );
        assert_portable(&schema);
    }

    #[test]
    fn null_members_and_values_leave_optional_properties() {
        let schema = json_schema!({
            "type": "object",
            "required": ["kept"],
            "properties": {
                "choice": {
                    "description": "d",
                    "oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}],
                },
                "clash": {
                    "description": "outer",
                    "anyOf": [{"description": "inner", "type": "string"}, {"const": null}],
                },
                "level": {"type": ["string", "null"], "enum": ["a", "b", null], "default": null},
                "only_null": {"type": "null"},
                "kept": {"type": ["string", "null"]},
            },
        });
        assert_eq!(
            portable(schema),
            json!({
                "type": "object",
                "required": ["kept"],
                "properties": {
                    "choice": {"description": "d", "oneOf": [{"type": "string"}, {"type": "integer"}]},
                    "clash": {
                        "description": "outer",
                        "anyOf": [{"description": "inner", "type": "string"}],
                    },
                    "level": {"type": "string", "enum": ["a", "b"]},
                    "only_null": {"type": "null"},
                    "kept": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                },
            })
        );
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Report {
        /// Always written, so required, and `null` when unknown.
        modified: Option<String>,
        /// Left out when unknown.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        size: u64,
        items: Vec<Item>,
    }

    #[derive(Serialize, JsonSchema)]
    #[allow(dead_code)]
    struct Item {
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<u64>,
    }

    #[test]
    fn output_schemas_follow_what_is_serialised() {
        let schema = output::<Report>();
        assert_portable(&schema);
        assert_eq!(schema["required"], json!(["modified", "size", "items"]));
        assert_eq!(
            schema["properties"]["modified"]["anyOf"],
            json!([{"type": "string"}, {"type": "null"}])
        );
        assert_eq!(schema["properties"]["note"]["type"], "string");
        assert_eq!(
            schema["$defs"]["Item"]["properties"]["line"],
            json!({"type": "integer", "minimum": 0, "maximum": u64::MAX})
        );
        // What serde writes validates against it.
        let value = serde_json::to_value(Report {
            modified: None,
            note: None,
            size: 3,
            items: vec![Item { line: None }, Item { line: Some(2) }],
        })
        .unwrap();
        let mut found = Vec::new();
        check(&schema, &schema, &value, "", &mut found);
        assert!(found.is_empty(), "{found:?}");
    }

    /// A minimal validator for the keywords these tests produce (`type`, `required`,
    /// `properties`, `items`, `$ref` into `$defs`, `anyOf`, `minimum`, `maximum`).
    fn check(root: &Value, schema: &Value, value: &Value, at: &str, found: &mut Vec<String>) {
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.trim_start_matches("#/$defs/");
            return check(root, &root["$defs"][name], value, at, found);
        }
        if let Some(members) = schema["anyOf"].as_array() {
            let ok = members.iter().any(|member| {
                let mut inner = Vec::new();
                check(root, member, value, at, &mut inner);
                inner.is_empty()
            });
            if !ok {
                found.push(format!("{at}: no anyOf member matches {value}"));
            }
        }
        let type_ok = match schema["type"].as_str() {
            None => true,
            Some("null") => value.is_null(),
            Some("string") => value.is_string(),
            Some("integer") => value.is_u64() || value.is_i64(),
            Some("array") => value.is_array(),
            Some("object") => value.is_object(),
            Some(other) => panic!("unexpected type {other}"),
        };
        if !type_ok {
            found.push(format!("{at}: {value} is not {}", schema["type"]));
        }
        if let Some(min) = schema["minimum"].as_f64()
            && value.as_f64().is_some_and(|v| v < min)
        {
            found.push(format!("{at}: below minimum"));
        }
        for name in schema["required"].as_array().into_iter().flatten() {
            if value.get(name.as_str().unwrap()).is_none() {
                found.push(format!("{at}: {name} is missing"));
            }
        }
        if let (Some(properties), Some(object)) =
            (schema["properties"].as_object(), value.as_object())
        {
            for (name, child) in object {
                if let Some(property) = properties.get(name) {
                    check(root, property, child, &format!("{at}/{name}"), found);
                }
            }
        }
        if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
            for (index, child) in array.iter().enumerate() {
                check(root, items, child, &format!("{at}/{index}"), found);
            }
        }
    }

    #[test]
    fn nested_objects_and_items_are_reached() {
        let schema = json_schema!({
            "type": "object",
            "properties": {
                "outer": {
                    "type": "object",
                    "properties": {
                        "n": {"type": ["integer", "null"], "format": "uint16"},
                    },
                },
                "list": {
                    "type": "array",
                    "items": {"type": "integer", "format": "int8"},
                },
            },
        });
        assert_eq!(
            portable(schema),
            json!({
                "type": "object",
                "properties": {
                    "outer": {
                        "type": "object",
                        "properties": {
                            "n": {"type": "integer", "minimum": 0, "maximum": 65535},
                        },
                    },
                    "list": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": -128, "maximum": 127},
                    },
                },
            })
        );
    }
}
