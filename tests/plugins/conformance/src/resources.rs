//! The resources the scenarios `resources-*` read and subscribe to, and the template
//! `resources-templates-read` reads.

use toolcell_sdk::serde_json::{Value, json};
use toolcell_sdk::{Contents, Error, Resource, ResourceTemplate, Variables};

use crate::{RED_PIXEL_PNG, completions};

/// The fixed URIs, for completing `test_prompt_with_embedded_resource`'s `resourceUri`.
pub(crate) const URIS: &[&str] = &[
    "test://static-text",
    "test://static-binary",
    "test://watched-resource",
];

pub(crate) fn resources() -> Vec<Resource> {
    vec![
        Resource::new("test://static-text", "static-text", || {
            Ok(Contents::text(
                "This is the content of the static text resource.",
            ))
        })
        .title("Static Text Resource")
        .description("A static text resource for testing")
        .mime_type("text/plain"),
        Resource::new("test://static-binary", "static-binary", || {
            Ok(Contents::blob(RED_PIXEL_PNG, "image/png"))
        })
        .title("Static Binary Resource")
        .description("A static binary resource (image) for testing")
        .mime_type("image/png")
        .size(RED_PIXEL_PNG.len() as u64),
        Resource::new("test://watched-resource", "watched-resource", || {
            Ok(Contents::text("Watched resource content"))
        })
        .title("Watched Resource")
        .description("A resource that clients subscribe to and unsubscribe from")
        .mime_type("text/plain"),
    ]
}

pub(crate) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new("test://template/{id}/data", "template", template_data)
            .title("Resource Template")
            .description("A resource template with parameter substitution")
            .mime_type("application/json")
            .complete("id", |typed, _| completions(&["123", "456", "789"], typed)),
    ]
}

/// `test://template/{id}/data`: JSON that names the `id`.
fn template_data(_uri: &str, variables: &Variables) -> Result<Contents, Error> {
    let id = variables
        .get("id")
        .ok_or_else(|| Error::invalid("the URI has no `id`"))?;
    Ok(Contents::text(data(id).to_string()))
}

/// What `test://template/{id}/data` holds.
fn data(id: &str) -> Value {
    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_names_its_id() {
        assert_eq!(
            data("123"),
            json!({ "id": "123", "templateTest": true, "data": "Data for ID: 123" })
        );
        let variables = Variables::from([("id".to_string(), "123".to_string())]);
        let contents = template_data("test://template/123/data", &variables).unwrap();
        assert_eq!(contents, Contents::text(data("123").to_string()));
        assert!(template_data("test://template//data", &Variables::new()).is_err());
    }
}
