//! JSON to component values and back, by type, as [`super::schema`] maps
//! them. Arguments have already passed the input schema; what it cannot
//! say (a base64 string that does not decode, say) is refused here, naming
//! the field.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};
use wasmtime::component::Val;
use wasmtime::component::types::Type;

/// The value of type `ty` that `json` stands for; `path` names it in errors.
pub fn from_json(ty: &Type, json: &Value, path: &str) -> Result<Val, String> {
    let wrong = |what: &str| format!("`{path}`: expected {what}, found {json}");
    let int = |what: &str| -> Result<i128, String> {
        json.as_i64()
            .map(i128::from)
            .or_else(|| json.as_u64().map(i128::from))
            .ok_or_else(|| wrong(what))
    };
    let ranged = |what: &str| -> Result<i128, String> { int(what) };
    macro_rules! narrow {
        ($variant:ident, $t:ty, $what:literal) => {{
            let n = ranged($what)?;
            Val::$variant(<$t>::try_from(n).map_err(|_| wrong($what))?)
        }};
    }
    Ok(match ty {
        Type::Bool => Val::Bool(json.as_bool().ok_or_else(|| wrong("a boolean"))?),
        Type::S8 => narrow!(S8, i8, "an s8 integer"),
        Type::U8 => narrow!(U8, u8, "a u8 integer"),
        Type::S16 => narrow!(S16, i16, "an s16 integer"),
        Type::U16 => narrow!(U16, u16, "a u16 integer"),
        Type::S32 => narrow!(S32, i32, "an s32 integer"),
        Type::U32 => narrow!(U32, u32, "a u32 integer"),
        Type::S64 => narrow!(S64, i64, "an s64 integer"),
        Type::U64 => narrow!(U64, u64, "a u64 integer"),
        // f32 loses precision by design.
        #[allow(clippy::cast_possible_truncation)]
        Type::Float32 => Val::Float32(json.as_f64().ok_or_else(|| wrong("a number"))? as f32),
        Type::Float64 => Val::Float64(json.as_f64().ok_or_else(|| wrong("a number"))?),
        Type::Char => {
            let text = json.as_str().ok_or_else(|| wrong("one character"))?;
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return Err(wrong("one character")),
            }
        }
        Type::String => Val::String(json.as_str().ok_or_else(|| wrong("a string"))?.to_owned()),
        Type::List(list) => match list.ty() {
            Type::U8 => {
                let text = json.as_str().ok_or_else(|| wrong("a base64 string"))?;
                let bytes = BASE64
                    .decode(text)
                    .map_err(|e| format!("`{path}`: not valid base64 ({e})"))?;
                Val::List(bytes.into_iter().map(Val::U8).collect())
            }
            item => Val::List(items(&item, json, path, &wrong)?),
        },
        Type::FixedLengthList(list) => {
            let values = items(&list.ty(), json, path, &wrong)?;
            if values.len() != list.len() as usize {
                return Err(wrong(&format!("an array of {} items", list.len())));
            }
            Val::FixedLengthList(values)
        }
        Type::Map(map) => {
            let pairs = json.as_array().ok_or_else(|| wrong("an array of pairs"))?;
            let mut out = Vec::with_capacity(pairs.len());
            for (i, pair) in pairs.iter().enumerate() {
                let at = format!("{path}.{i}");
                match pair.as_array().map(Vec::as_slice) {
                    Some([k, v]) => out.push((
                        from_json(&map.key(), k, &format!("{at}.0"))?,
                        from_json(&map.value(), v, &format!("{at}.1"))?,
                    )),
                    _ => return Err(format!("`{at}`: expected a [key, value] pair")),
                }
            }
            Val::Map(out)
        }
        Type::Record(record) => {
            let object = json.as_object().ok_or_else(|| wrong("an object"))?;
            let fields = record.fields().map(|f| (f.name.to_string(), f.ty));
            Val::Record(named(fields, object, path)?)
        }
        Type::Tuple(tuple) => {
            let array = json.as_array().ok_or_else(|| wrong("an array"))?;
            if array.len() != tuple.types().len() {
                return Err(wrong(&format!("an array of {} items", tuple.types().len())));
            }
            let values = tuple
                .types()
                .zip(array)
                .enumerate()
                .map(|(i, (t, v))| from_json(&t, v, &format!("{path}.{i}")))
                .collect::<Result<_, _>>()?;
            Val::Tuple(values)
        }
        Type::Variant(variant) => {
            let (name, payload) = case(json, &wrong)?;
            let Some(found) = variant.cases().find(|c| c.name == name) else {
                let names: Vec<&str> = variant.cases().map(|c| c.name).collect();
                return Err(format!(
                    "`{path}`: no case `{name}`; expected one of {}",
                    names.join(", ")
                ));
            };
            let value = match (&found.ty, payload) {
                (Some(ty), Some(payload)) => {
                    Some(Box::new(from_json(ty, payload, &format!("{path}.{name}"))?))
                }
                (None, None) => None,
                (Some(_), None) => return Err(format!("`{path}`: case `{name}` needs a value")),
                (None, Some(_)) => return Err(format!("`{path}`: case `{name}` takes no value")),
            };
            Val::Variant(name.to_owned(), value)
        }
        Type::Enum(e) => {
            let name = json.as_str().ok_or_else(|| wrong("a name"))?;
            if !e.names().any(|n| n == name) {
                return Err(wrong(&format!(
                    "one of {}",
                    e.names().collect::<Vec<_>>().join(", ")
                )));
            }
            Val::Enum(name.to_owned())
        }
        Type::Flags(flags) => {
            let array = json.as_array().ok_or_else(|| wrong("an array of names"))?;
            let mut set = Vec::new();
            for item in array {
                match item.as_str() {
                    Some(name) if flags.names().any(|n| n == name) => set.push(name.to_owned()),
                    _ => {
                        return Err(wrong(&format!(
                            "names among {}",
                            flags.names().collect::<Vec<_>>().join(", ")
                        )));
                    }
                }
            }
            Val::Flags(set)
        }
        Type::Option(option) => match json {
            Value::Null => Val::Option(None),
            value => Val::Option(Some(Box::new(from_json(&option.ty(), value, path)?))),
        },
        Type::Result(result) => {
            let (name, payload) = case(json, &wrong)?;
            let side = |ty: Option<Type>, at: &str| -> Result<Option<Box<Val>>, String> {
                match ty {
                    Some(ty) => {
                        let value = payload.unwrap_or(&Value::Null);
                        Ok(Some(Box::new(from_json(&ty, value, at)?)))
                    }
                    None => Ok(None),
                }
            };
            match name {
                "ok" => Val::Result(Ok(side(result.ok(), &format!("{path}.ok"))?)),
                "err" => Val::Result(Err(side(result.err(), &format!("{path}.err"))?)),
                _ => return Err(wrong("{\"ok\": ...} or {\"err\": ...}")),
            }
        }
        Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            return Err(format!("`{path}`: this type cannot be passed as JSON"));
        }
    })
}

/// The values of named fields (a function's parameters, a record's), in
/// order, from `object`; an `option` left out is `none`.
pub fn named(
    fields: impl Iterator<Item = (String, Type)>,
    object: &Map<String, Value>,
    path: &str,
) -> Result<Vec<(String, Val)>, String> {
    let mut values = Vec::new();
    for (name, ty) in fields {
        let at = if path.is_empty() {
            name.clone()
        } else {
            format!("{path}.{name}")
        };
        let value = match (object.get(&name), &ty) {
            (None | Some(Value::Null), Type::Option(_)) => Val::Option(None),
            (None, _) => return Err(format!("`{at}`: missing")),
            (Some(value), Type::Option(option)) => {
                Val::Option(Some(Box::new(from_json(&option.ty(), value, &at)?)))
            }
            (Some(value), ty) => from_json(ty, value, &at)?,
        };
        values.push((name, value));
    }
    Ok(values)
}

fn items(
    ty: &Type,
    json: &Value,
    path: &str,
    wrong: &dyn Fn(&str) -> String,
) -> Result<Vec<Val>, String> {
    let array = json.as_array().ok_or_else(|| wrong("an array"))?;
    array
        .iter()
        .enumerate()
        .map(|(i, v)| from_json(ty, v, &format!("{path}.{i}")))
        .collect()
}

/// A variant case or result side: `"name"`, or `{"name": payload}`.
fn case<'a>(
    json: &'a Value,
    wrong: &dyn Fn(&str) -> String,
) -> Result<(&'a str, Option<&'a Value>), String> {
    match json {
        Value::String(name) => Ok((name, None)),
        Value::Object(object) if object.len() == 1 => {
            let (name, payload) = object.iter().next().ok_or_else(|| wrong("a case"))?;
            Ok((name, Some(payload)))
        }
        _ => Err(wrong("a case name, or an object with one key, the case")),
    }
}

/// `val` (of type `ty`) as JSON.
pub fn to_json(ty: &Type, val: &Val) -> Value {
    match (ty, val) {
        (_, Val::Bool(b)) => json!(b),
        (_, Val::S8(n)) => json!(n),
        (_, Val::U8(n)) => json!(n),
        (_, Val::S16(n)) => json!(n),
        (_, Val::U16(n)) => json!(n),
        (_, Val::S32(n)) => json!(n),
        (_, Val::U32(n)) => json!(n),
        (_, Val::S64(n)) => json!(n),
        (_, Val::U64(n)) => json!(n),
        (_, Val::Float32(n)) => json!(n),
        (_, Val::Float64(n)) => json!(n),
        (_, Val::Char(c)) => json!(c.to_string()),
        (_, Val::String(s)) => json!(s),
        (Type::List(list), Val::List(values)) => match list.ty() {
            Type::U8 => {
                let bytes: Vec<u8> = values
                    .iter()
                    .map(|v| if let Val::U8(b) = v { *b } else { 0 })
                    .collect();
                json!(BASE64.encode(bytes))
            }
            item => Value::Array(values.iter().map(|v| to_json(&item, v)).collect()),
        },
        (Type::FixedLengthList(list), Val::FixedLengthList(values)) => {
            Value::Array(values.iter().map(|v| to_json(&list.ty(), v)).collect())
        }
        (Type::Map(map), Val::Map(pairs)) => Value::Array(
            pairs
                .iter()
                .map(|(k, v)| json!([to_json(&map.key(), k), to_json(&map.value(), v)]))
                .collect(),
        ),
        (Type::Record(record), Val::Record(fields)) => {
            let mut object = Map::new();
            for (field, (name, value)) in record.fields().zip(fields) {
                if matches!(value, Val::Option(None)) {
                    continue;
                }
                let value = match (&field.ty, value) {
                    (Type::Option(option), Val::Option(Some(inner))) => {
                        to_json(&option.ty(), inner)
                    }
                    (ty, value) => to_json(ty, value),
                };
                object.insert(name.clone(), value);
            }
            Value::Object(object)
        }
        (Type::Tuple(tuple), Val::Tuple(values)) => Value::Array(
            tuple
                .types()
                .zip(values)
                .map(|(t, v)| to_json(&t, v))
                .collect(),
        ),
        (Type::Variant(variant), Val::Variant(name, payload)) => {
            let ty = variant.cases().find(|c| c.name == name).and_then(|c| c.ty);
            match (ty, payload) {
                (Some(ty), Some(payload)) => json!({name.as_str(): to_json(&ty, payload)}),
                _ => json!(name),
            }
        }
        (_, Val::Enum(name)) => json!(name),
        (_, Val::Flags(names)) => json!(names),
        (Type::Option(option), Val::Option(value)) => value
            .as_ref()
            .map_or(Value::Null, |v| to_json(&option.ty(), v)),
        (Type::Result(result), Val::Result(value)) => {
            let side = |ty: Option<Type>, v: &Option<Box<Val>>| match (ty, v) {
                (Some(ty), Some(v)) => to_json(&ty, v),
                _ => Value::Null,
            };
            match value {
                Ok(v) => json!({"ok": side(result.ok(), v)}),
                Err(v) => json!({"err": side(result.err(), v)}),
            }
        }
        _ => Value::Null,
    }
}
