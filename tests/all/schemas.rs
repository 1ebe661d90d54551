//! The schemas in `tools/list` are portable: every builtin plugin's `inputSchema` and
//! `outputSchema` uses only the formats JSON Schema defines, no `type` arrays, and no optional
//! property that also accepts `null`. Clients built on the TypeScript SDK (MCP Inspector among
//! them) warn about `unknown format "uint64"`, and single-type dialects (Gemini's) reject
//! `"type": ["integer", "null"]`. The structured content the tools return still matches their
//! output schemas.

use serde_json::{Map, Value, json};

use crate::support::{Fixture, Server};

/// The formats JSON Schema 2020-12 defines (Validation, section 7.3).
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

/// Every tool of the four builtin plugins.
const ALL_TOOLS: [&str; 21] = [
    "append_file",
    "concat_files",
    "copy_file",
    "edit_file",
    "file_info",
    "git_blame",
    "git_branches",
    "git_diff",
    "git_log",
    "git_show",
    "git_status",
    "glob",
    "grep",
    "list_directory",
    "mkdir",
    "read_file",
    "rename",
    "research_add",
    "research_query",
    "tail",
    "write_file",
];

/// `data/` (read-write, with `notes.txt` and a symlink to it) for fs and search, an empty
/// `registry/` for research and a repository with a history in `repo/` for git, with every
/// category that serves one of their tools.
fn all_plugins() -> Fixture {
    let fixture = Fixture::new();
    crate::git::history(&fixture.path("repo"));
    std::fs::write(fixture.path("repo/notes.txt"), "changed\n").unwrap();
    fixture.write("data/notes.txt", "one\ntwo\nthree\n");
    fixture.symlink("notes.txt", "data/link");
    fixture.mkdir("registry");
    fixture.config(
        r#"
[server]
categories = ["read", "search", "vcs", "write", "network"]

[[plugin]]
name = "fs"
path = "builtin:fs"
mounts = [{ host = "data", mode = "rw" }]

[[plugin]]
name = "search"
path = "builtin:search"
mounts = [{ host = "data", mode = "ro" }]

[[plugin]]
name = "research"
path = "builtin:research"
mounts = [{ host = "registry", mode = "rw" }]

[[plugin]]
name = "git"
path = "builtin:git"
mounts = [{ host = "repo", mode = "ro" }]
"#,
    );
    fixture
}

/// The subschemas of `schema`, each with the keyword path that leads to it.
fn subschemas(schema: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut found = Vec::new();
    for (key, value) in schema {
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                for (name, child) in value.as_object().into_iter().flatten() {
                    found.push((format!("{key}.{name}"), child));
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                for (index, child) in value.as_array().into_iter().flatten().enumerate() {
                    found.push((format!("{key}[{index}]"), child));
                }
            }
            "items"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames" => {
                found.push((key.clone(), value));
            }
            _ => {}
        }
    }
    found
}

/// What makes `schema` (at `path`) less than portable, and the same for its subschemas.
fn lint(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(format) = object.get("format").and_then(Value::as_str)
        && !STANDARD_FORMATS.contains(&format)
    {
        problems.push(format!("{path}: non-standard format `{format}`"));
    }
    if let Some(types) = object.get("type").filter(|t| t.is_array()) {
        problems.push(format!("{path}: `type` is an array: {types}"));
    }
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for (name, property) in object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if required.contains(&name.as_str()) {
            continue;
        }
        for key in ["anyOf", "oneOf"] {
            let members = property.get(key).and_then(Value::as_array);
            if members.into_iter().flatten().any(is_null_only) {
                problems.push(format!(
                    "{path}.properties.{name}: optional, yet `{key}` has a null member"
                ));
            }
        }
        if property
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.contains(&Value::Null))
        {
            problems.push(format!(
                "{path}.properties.{name}: optional, yet `enum` holds null"
            ));
        }
    }
    for (key, child) in subschemas(object) {
        lint(child, &format!("{path}.{key}"), problems);
    }
}

/// Whether a schema accepts `null` alone: `{"type": "null"}`, `{"const": null}` and the like.
fn is_null_only(schema: &Value) -> bool {
    let const_null = schema.get("const").is_some_and(Value::is_null);
    schema["type"] == "null"
        || schema["type"] == json!(["null"])
        || const_null
        || schema["enum"] == json!([null])
}

/// For each property of the root object that is not `required`: whether `null` passes its
/// schema, decided by a validator (so a `$ref` to a nullable definition counts too).
fn optional_properties_accepting_null(schema: &Value) -> Vec<String> {
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    let mut found = Vec::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if required.contains(&json!(name)) {
            continue;
        }
        let mut alone = property.as_object().cloned().unwrap_or_default();
        for key in ["$schema", "$defs"] {
            if let Some(value) = schema.get(key) {
                alone.insert(key.to_string(), value.clone());
            }
        }
        let validator = jsonschema::validator_for(&Value::Object(alone))
            .unwrap_or_else(|e| panic!("property `{name}` of {schema}: {e}"));
        if validator.is_valid(&Value::Null) {
            found.push(name.clone());
        }
    }
    found
}

// One server for the three checks: with a cold compile cache, each server compiles all three
// plugins, and several at once on a small machine can outlast the harness's timeout.
#[tokio::test]
async fn builtin_schemas_are_portable_and_results_match_them() {
    let fixture = all_plugins();
    let server = Server::start(&fixture.path("plugins.toml")).await;
    let tools = server.tools().await;
    assert_eq!(server.tool_names().await, ALL_TOOLS, "the tools served");
    schemas_are_portable(&tools);
    structured_content_matches_the_output_schemas(&fixture, &server, &tools).await;
    null_for_an_optional_argument_means_absent(&fixture, &server).await;
    server.stop().await;
}

/// Lints every schema in `tools`.
fn schemas_are_portable(tools: &[Value]) {
    let schemas = lint_schemas(tools);
    // 21 input schemas, and the output schemas of file_info, write_file, edit_file, glob, grep,
    // research_query, research_add, git_status, git_log, git_diff, git_blame and git_branches.
    assert_eq!(schemas, 33, "schemas checked");

    // What the formats stood for is still there.
    let read_file = tools
        .iter()
        .find(|tool| tool["name"] == "read_file")
        .expect("read_file is served");
    let offset = &read_file["inputSchema"]["properties"]["offset"];
    assert_eq!(offset["type"], "integer", "{offset}");
    assert_eq!(offset["minimum"], 1, "the stricter bound stays: {offset}");
    assert_eq!(offset["maximum"], json!(u64::MAX), "{offset}");
}

/// The schemas derived from a plain component's WIT types (every kind of type) and a WASI
/// command's pass the same lint as the builtins'.
#[tokio::test]
async fn schemas_derived_from_wit_are_portable() {
    let (_fixture, config) = crate::plain::fixture();
    let server = Server::start(&config).await;
    let tools = server.tools().await;
    let derived: Vec<Value> = tools
        .iter()
        .filter(|tool| {
            let name = tool["name"].as_str().unwrap_or_default();
            name.starts_with("kit_") || name == "sum" || name == "x_cmd"
        })
        .cloned()
        .collect();
    assert!(derived.len() >= 10, "{derived:#?}");
    // Each has an input schema, and one whose function returns a value an output schema.
    let outputs = derived
        .iter()
        .filter(|tool| tool["outputSchema"].is_object())
        .count();
    assert!(outputs >= derived.len() - 2, "{derived:#?}");
    assert_eq!(lint_schemas(&derived), derived.len() + outputs);
    server.stop().await;
}

/// Lints every schema in `tools`, panicking with every problem found; returns how many
/// schemas were checked.
fn lint_schemas(tools: &[Value]) -> usize {
    let mut problems = Vec::new();
    let mut schemas = 0;
    for tool in tools {
        let name = tool["name"].as_str().expect("a tool has a name");
        for key in ["inputSchema", "outputSchema"] {
            let Some(schema) = tool.get(key).filter(|s| !s.is_null()) else {
                continue;
            };
            schemas += 1;
            if let Err(e) = jsonschema::validator_for(schema) {
                problems.push(format!("{name}.{key} does not compile: {e}"));
            }
            lint(schema, &format!("{name}.{key}"), &mut problems);
            for property in optional_properties_accepting_null(schema) {
                problems.push(format!(
                    "{name}.{key}.properties.{property}: optional, yet accepts null"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    schemas
}

#[test]
fn the_lint_finds_what_schemars_emits_unchanged() {
    // What `schemars::schema_for!` gives without the SDK's rewriting: the lint must see every
    // problem in it, or the test above proves nothing.
    let raw = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "offset": {"type": ["integer", "null"], "format": "uint64", "minimum": 1},
            "kind": {"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]},
            "level": {"type": ["string", "null"], "enum": ["a", null]},
        },
        "required": ["path"],
        "$defs": {"Kind": {"type": "string", "enum": ["file", "dir"], "format": "int"}},
    });
    let mut problems = Vec::new();
    lint(&raw, "raw", &mut problems);
    problems.sort();
    assert_eq!(
        problems,
        [
            "raw.$defs.Kind: non-standard format `int`",
            "raw.properties.kind: optional, yet `anyOf` has a null member",
            "raw.properties.level: `type` is an array: [\"string\",\"null\"]",
            "raw.properties.level: optional, yet `enum` holds null",
            "raw.properties.offset: `type` is an array: [\"integer\",\"null\"]",
            "raw.properties.offset: non-standard format `uint64`",
        ]
    );
    let mut nullable = optional_properties_accepting_null(&raw);
    nullable.sort();
    assert_eq!(nullable, ["kind", "level", "offset"]);
}

/// Calls the tools with output schemas and validates their structured content.
async fn structured_content_matches_the_output_schemas(
    fixture: &Fixture,
    server: &Server,
    tools: &[Value],
) {
    let notes = fixture.arg("data/notes.txt");
    let link = fixture.arg("data/link");
    let data = fixture.arg("data");
    let calls = [
        // A file has no symlink target (null); a symlink has one.
        ("file_info", json!({"path": notes})),
        ("file_info", json!({"path": link})),
        (
            "write_file",
            json!({"path": fixture.arg("data/new.txt"), "content": "x\n"}),
        ),
        (
            "edit_file",
            json!({"path": notes, "old_string": "two", "new_string": "2"}),
        ),
        ("glob", json!({"pattern": "*.txt", "path": data})),
        (
            "grep",
            json!({"pattern": "one", "path": data, "context": 1}),
        ),
        ("research_query", json!({"action": "stats"})),
        ("git_status", json!({})),
        ("git_log", json!({})),
        ("git_log", json!({"max_count": 1, "path": "notes.txt"})),
        ("git_branches", json!({"remote": true})),
        ("git_diff", json!({})),
        (
            "git_diff",
            json!({"from": "HEAD~5", "to": "HEAD", "stat": true}),
        ),
        ("git_blame", json!({"path": "notes.txt", "start_line": 2})),
    ];
    for (name, arguments) in calls {
        let schema = tools
            .iter()
            .find(|tool| tool["name"] == name)
            .map(|tool| tool["outputSchema"].clone())
            .unwrap_or_else(|| panic!("`{name}` is not served"));
        let validator = jsonschema::validator_for(&schema).expect("a valid output schema");
        let result = server.call(name, arguments.clone()).await;
        assert!(!result.is_error(), "{name} {arguments}: {}", result.text());
        let errors: Vec<String> = validator
            .iter_errors(result.structured())
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{name} {arguments}: {errors:?}\n{}",
            result.structured()
        );
    }
}

/// The schemas no longer allow `null` for a field that may be left out, and the server
/// validates arguments against them: the model is told which field to leave out.
async fn null_for_an_optional_argument_means_absent(fixture: &Fixture, server: &Server) {
    // The schemas do not accept null for optional arguments, but many clients send it to mean
    // "left out": the host drops such a null instead of refusing the call.
    let notes = fixture.arg("data/notes.txt");
    let absent = server
        .call("read_file", json!({"path": notes}))
        .await
        .ok_text();
    let null = server
        .call(
            "read_file",
            json!({"path": notes, "limit": null, "offset": null}),
        )
        .await
        .ok_text();
    assert_eq!(null, absent);
    // A required argument stays required, and a wrong type is still refused, naming it.
    let refused = server
        .call("read_file", json!({"path": null}))
        .await
        .error_text();
    assert!(refused.contains("path"), "{refused}");
    let refused = server
        .call("read_file", json!({"path": notes, "limit": "many"}))
        .await
        .error_text();
    assert!(refused.contains("limit"), "{refused}");
}
