//! A component's WIT docs, from its `package-docs` custom sections: a
//! version byte (0 or 1), then JSON, as wit-parser's `PackageMetadata`
//! writes it: `{"worlds": {W: {"funcs"|"func_exports": {F: DOC}}},
//! "interfaces": {I: {"funcs": {F: DOC}}}}`, where `DOC` is a string (v0)
//! or `{"docs": "..."}` (v1). Many toolchains leave the section out; then
//! there are no docs, and descriptions come from signatures.

use serde_json::Value;

/// Every `package-docs` section of a component, nested ones included.
#[derive(Default)]
pub struct Docs(Vec<Value>);

impl Docs {
    /// The docs in `wasm`; none if it has no readable section.
    pub fn read(wasm: &[u8]) -> Docs {
        let mut sections = Vec::new();
        for payload in wasmparser::Parser::new(0).parse_all(wasm) {
            let Ok(wasmparser::Payload::CustomSection(section)) = payload else {
                continue;
            };
            if section.name() != "package-docs" {
                continue;
            }
            match section.data().split_first() {
                Some((0 | 1, json)) => match serde_json::from_slice(json) {
                    Ok(value) => sections.push(value),
                    Err(error) => tracing::debug!("unreadable package-docs section: {error}"),
                },
                _ => tracing::debug!("package-docs section of an unknown version"),
            }
        }
        Docs(sections)
    }

    /// The docs of world-level function `name`.
    pub fn world_function(&self, name: &str) -> Option<String> {
        self.0.iter().find_map(|package| {
            let worlds = package.get("worlds")?.as_object()?;
            worlds.values().find_map(|world| {
                ["func_exports", "funcs"]
                    .iter()
                    .find_map(|key| doc(world.get(key)?.get(name)?))
            })
        })
    }

    /// The docs of function `name` of interface `interface`.
    pub fn interface_function(&self, interface: &str, name: &str) -> Option<String> {
        self.0.iter().find_map(|package| {
            let in_package = package.get("interfaces").and_then(|i| i.get(interface));
            let in_worlds = || {
                let worlds = package.get("worlds")?.as_object()?;
                worlds.values().find_map(|world| {
                    ["interface_exports", "interfaces"]
                        .iter()
                        .find_map(|key| world.get(key)?.get(interface))
                })
            };
            let interface = in_package.or_else(in_worlds)?;
            doc(interface.get("funcs")?.get(name)?)
        })
    }
}

fn doc(entry: &Value) -> Option<String> {
    let text = match entry {
        Value::String(text) => text,
        other => other.get("docs")?.as_str()?,
    };
    (!text.trim().is_empty()).then(|| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_formats() {
        let docs = Docs(vec![serde_json::json!({
            "worlds": {"w": {"func_exports": {"add": {"docs": "Adds."}}}},
            "interfaces": {"kit": {"funcs": {"greet": "Greets.", "none": {"stability": {}}}}},
        })]);
        assert_eq!(docs.world_function("add").as_deref(), Some("Adds."));
        assert_eq!(
            docs.interface_function("kit", "greet").as_deref(),
            Some("Greets.")
        );
        assert_eq!(docs.interface_function("kit", "none"), None);
        assert_eq!(docs.world_function("greet"), None);
    }
}
