//! WIT types as JSON Schema, and as WIT text for generated descriptions.
//!
//! The mapping (documented in docs/components.md, "How values cross"):
//! `bool` is a boolean; each integer width an integer with its minimum and
//! maximum; `f32`/`f64` a number; `char` a string of one character;
//! `string` a string; `list<u8>` a base64 string; `list<T>` an array;
//! `tuple` an array of fixed length; `record` an object of its fields (an
//! `option` field optional); `variant` a case name (no payload) or a
//! one-key object `{"case": payload}`; `enum` one of its names; `flags` an
//! array of its names; `option<T>` the value or `null` (an optional
//! property, not nullable, for a parameter or a record field); `result` an
//! object `{"ok": T}` or `{"err": E}`. Every schema is portable: no `type`
//! arrays, no non-standard `format`, no optional property that also
//! accepts `null`.

use serde_json::{Value, json};
use wasmtime::component::types::Type;

/// Why a type cannot cross JSON: it names the type.
#[derive(Debug)]
pub struct Unsupported(pub &'static str);

/// The JSON Schema of a value of type `ty`.
pub fn of(ty: &Type) -> Result<Value, Unsupported> {
    Ok(match ty {
        Type::Bool => json!({"type": "boolean"}),
        Type::S8 => int(i8::MIN.into(), i8::MAX.into()),
        Type::U8 => uint(u8::MAX.into()),
        Type::S16 => int(i16::MIN.into(), i16::MAX.into()),
        Type::U16 => uint(u16::MAX.into()),
        Type::S32 => int(i32::MIN.into(), i32::MAX.into()),
        Type::U32 => uint(u32::MAX.into()),
        Type::S64 => int(i64::MIN, i64::MAX),
        Type::U64 => uint(u64::MAX),
        Type::Float32 | Type::Float64 => json!({"type": "number"}),
        Type::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        Type::String => json!({"type": "string"}),
        Type::List(list) => match list.ty() {
            Type::U8 => json!({
                "type": "string",
                "contentEncoding": "base64",
                "description": "bytes, base64-encoded",
            }),
            item => json!({"type": "array", "items": of(&item)?}),
        },
        Type::FixedLengthList(list) => json!({
            "type": "array",
            "items": of(&list.ty())?,
            "minItems": list.len(),
            "maxItems": list.len(),
        }),
        Type::Map(map) => json!({
            "type": "array",
            "description": "key-value pairs",
            "items": pair(of(&map.key())?, of(&map.value())?),
        }),
        Type::Record(record) => {
            let fields = record.fields().map(|f| (f.name.to_string(), f.ty));
            object(fields)?
        }
        Type::Tuple(tuple) => {
            let items = tuple
                .types()
                .map(|t| of(&t))
                .collect::<Result<Vec<_>, _>>()?;
            let n = items.len();
            json!({"type": "array", "prefixItems": items, "minItems": n, "maxItems": n})
        }
        Type::Variant(variant) => {
            let mut cases = Vec::new();
            for case in variant.cases() {
                cases.push(match &case.ty {
                    None => json!({"type": "string", "const": case.name}),
                    Some(ty) => one_key(case.name, of(ty)?),
                });
            }
            json!({"oneOf": cases})
        }
        Type::Enum(names) => json!({"type": "string", "enum": names.names().collect::<Vec<_>>()}),
        Type::Flags(flags) => json!({
            "type": "array",
            "items": {"type": "string", "enum": flags.names().collect::<Vec<_>>()},
            "uniqueItems": true,
        }),
        Type::Option(option) => json!({"anyOf": [of(&option.ty())?, {"type": "null"}]}),
        Type::Result(result) => {
            let side = |ty: Option<Type>| ty.map_or(Ok(json!({"type": "null"})), |t| of(&t));
            json!({"oneOf": [
                one_key("ok", side(result.ok())?),
                one_key("err", side(result.err())?),
            ]})
        }
        Type::Own(_) | Type::Borrow(_) => return Err(Unsupported("a resource handle")),
        Type::Future(_) => return Err(Unsupported("a future")),
        Type::Stream(_) => return Err(Unsupported("a stream")),
        Type::ErrorContext => return Err(Unsupported("an error-context")),
    })
}

/// The object schema of named values (a function's parameters, a record's
/// fields): every one required but an `option`, which may be left out.
pub fn object(fields: impl Iterator<Item = (String, Type)>) -> Result<Value, Unsupported> {
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    for (name, ty) in fields {
        let schema = match &ty {
            Type::Option(option) => of(&option.ty())?,
            other => {
                required.push(Value::String(name.clone()));
                of(other)?
            }
        };
        properties.insert(name, schema);
    }
    Ok(json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }))
}

fn int(min: i64, max: i64) -> Value {
    json!({"type": "integer", "minimum": min, "maximum": max})
}

fn uint(max: u64) -> Value {
    json!({"type": "integer", "minimum": 0, "maximum": max})
}

fn pair(key: Value, value: Value) -> Value {
    json!({"type": "array", "prefixItems": [key, value], "minItems": 2, "maxItems": 2})
}

fn one_key(key: &str, schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": {key: schema},
        "required": [key],
        "additionalProperties": false,
    })
}

/// `ty` as WIT text, for descriptions generated from a signature. Named
/// types are spelled out by their shape: the component keeps no names.
pub fn wit(ty: &Type) -> String {
    let join = |items: Vec<String>| items.join(", ");
    match ty {
        Type::Bool => "bool".into(),
        Type::S8 => "s8".into(),
        Type::U8 => "u8".into(),
        Type::S16 => "s16".into(),
        Type::U16 => "u16".into(),
        Type::S32 => "s32".into(),
        Type::U32 => "u32".into(),
        Type::S64 => "s64".into(),
        Type::U64 => "u64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(list) => format!("list<{}>", wit(&list.ty())),
        Type::FixedLengthList(list) => format!("list<{}, {}>", wit(&list.ty()), list.len()),
        Type::Map(map) => format!("map<{}, {}>", wit(&map.key()), wit(&map.value())),
        Type::Record(record) => {
            let fields = record
                .fields()
                .map(|f| format!("{}: {}", f.name, wit(&f.ty)));
            format!("record {{ {} }}", join(fields.collect()))
        }
        Type::Tuple(tuple) => format!("tuple<{}>", join(tuple.types().map(|t| wit(&t)).collect())),
        Type::Variant(variant) => {
            let cases = variant.cases().map(|c| match &c.ty {
                Some(ty) => format!("{}({})", c.name, wit(ty)),
                None => c.name.to_string(),
            });
            format!("variant {{ {} }}", join(cases.collect()))
        }
        Type::Enum(e) => format!("enum {{ {} }}", join(e.names().map(String::from).collect())),
        Type::Flags(f) => format!(
            "flags {{ {} }}",
            join(f.names().map(String::from).collect())
        ),
        Type::Option(option) => format!("option<{}>", wit(&option.ty())),
        Type::Result(result) => {
            let side = |ty: Option<Type>| ty.map_or("_".to_string(), |t| wit(&t));
            format!("result<{}, {}>", side(result.ok()), side(result.err()))
        }
        Type::Own(_) => "own<resource>".into(),
        Type::Borrow(_) => "borrow<resource>".into(),
        Type::Future(_) => "future".into(),
        Type::Stream(_) => "stream".into(),
        Type::ErrorContext => "error-context".into(),
    }
}
