//! Resources: data a client reads by URI.
//!
//! A [`Resource`] has a fixed URI; a [`ResourceTemplate`] stands for every URI that matches
//! an RFC 6570 template (see [`ResourceTemplate::new`] for what matches). Either one's reader
//! returns [`Contents`], text or bytes. A read goes to the resource with exactly the URI asked
//! for, else to the first template the URI matches, else fails with `failure::not-found`.

use std::collections::BTreeMap;

use crate::__private::bindings::toolcell::plugin0_1_0::types::ResourceBody;
use crate::__private::bindings::toolcell::plugin0_2_0::types as wit;
use crate::Error;
use crate::completion::Completers;
use crate::uri_template::UriTemplate;

/// Named values: the variables a URI matched a template with, or the arguments a completion
/// request says are already filled in.
pub type Variables = BTreeMap<String, String>;

/// The contents of one resource, as a read returns them: text or bytes.
///
/// Defaults: the URI is the one read, and the MIME type is the one the resource or template
/// declares ([`Resource::mime_type`]), if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    uri: Option<String>,
    mime_type: Option<String>,
    body: Body,
}

/// What [`Contents`] hold.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Body {
    Text(String),
    Blob(Vec<u8>),
}

impl Contents {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> Contents {
        Contents {
            uri: None,
            mime_type: None,
            body: Body::Text(text.into()),
        }
    }

    /// Binary contents of MIME type `mime_type`, such as `image/png`. The host sends them
    /// base64-encoded.
    pub fn blob(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Contents {
        Contents {
            uri: None,
            mime_type: Some(mime_type.into()),
            body: Body::Blob(data.into()),
        }
    }

    /// Sets the MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Contents {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the URI, for contents that are not the resource read itself (one entry of a
    /// directory read as several contents, say).
    pub fn uri(mut self, uri: impl Into<String>) -> Contents {
        self.uri = Some(uri.into());
        self
    }

    /// The contract's contents, with the defaults filled in.
    fn into_wit(self, uri: &str, mime_type: Option<&str>) -> wit::ResourceContents {
        wit::ResourceContents {
            uri: self.uri.unwrap_or_else(|| uri.to_string()),
            mime_type: self.mime_type.or_else(|| mime_type.map(str::to_string)),
            body: match self.body {
                Body::Text(text) => ResourceBody::Text(text),
                Body::Blob(data) => ResourceBody::Blob(data),
            },
        }
    }
}

impl From<Contents> for Vec<Contents> {
    fn from(contents: Contents) -> Vec<Contents> {
        vec![contents]
    }
}

/// Reads a fixed resource.
type Reader = Box<dyn FnOnce() -> Result<Vec<Contents>, Error>>;

/// A resource with a fixed URI: how it presents itself and the function that reads it.
///
/// Defaults, until a builder method changes them: no title, description, MIME type or size.
pub struct Resource {
    uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    size: Option<u64>,
    reader: Reader,
}

impl Resource {
    /// A resource at `uri` (unique across every plugin a server loads) called `name`, whose
    /// contents `reader` returns: one [`Contents`] or several (a `Vec`).
    ///
    /// The reader runs only when a client reads `uri`, read-only, with the plugin's mounts.
    pub fn new<C, F>(uri: impl Into<String>, name: impl Into<String>, reader: F) -> Resource
    where
        C: Into<Vec<Contents>>,
        F: FnOnce() -> Result<C, Error> + 'static,
    {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            reader: Box::new(move || reader().map(Into::into)),
        }
    }

    /// A short title for people.
    pub fn title(mut self, title: impl Into<String>) -> Resource {
        self.title = Some(title.into());
        self
    }

    /// What the resource is, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Resource {
        self.description = Some(description.into());
        self
    }

    /// The MIME type; also the default of the contents a read returns.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Resource {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The size in bytes, if known before a read.
    pub fn size(mut self, size: u64) -> Resource {
        self.size = Some(size);
        self
    }

    pub(crate) fn into_descriptor(self) -> wit::ResourceDescriptor {
        wit::ResourceDescriptor {
            uri: self.uri,
            name: self.name,
            title: self.title,
            description: self.description,
            mime_type: self.mime_type,
            size: self.size,
        }
    }
}

/// Reads a resource a template matched: its URI and variables.
type TemplateReader = Box<dyn FnOnce(&str, &Variables) -> Result<Vec<Contents>, Error>>;

/// A family of resources whose URIs follow an RFC 6570 template: how it presents itself, the
/// function that reads one of them, and completions for its variables.
///
/// Defaults, until a builder method changes them: no title, description or MIME type, and no
/// completions.
pub struct ResourceTemplate {
    uri_template: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    reader: TemplateReader,
    pub(crate) completers: Completers,
}

impl ResourceTemplate {
    /// Resources whose URIs match `uri_template` (unique across every plugin a server loads),
    /// called `name`, read by `reader` from the URI and the variables it matched with.
    ///
    /// The template is matched, not expanded: `{id}` matches one path segment (no `/`, `?` or
    /// `#`), `{+path}` any text, `{/id}` a `/` and a segment, `{.ext}` a `.` and a label,
    /// `{#part}` a `#` and any text, and `{?a,b}`, `{&a,b}` and `{;a,b}` named parameters,
    /// each optional. Values are percent-decoded. Where a URI could match in several ways, the
    /// earliest expression takes as much as it can. The reader runs read-only, with the
    /// plugin's mounts.
    pub fn new<C, F>(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        reader: F,
    ) -> ResourceTemplate
    where
        C: Into<Vec<Contents>>,
        F: FnOnce(&str, &Variables) -> Result<C, Error> + 'static,
    {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            reader: Box::new(move |uri, variables| reader(uri, variables).map(Into::into)),
            completers: Completers::default(),
        }
    }

    /// A short title for people.
    pub fn title(mut self, title: impl Into<String>) -> ResourceTemplate {
        self.title = Some(title.into());
        self
    }

    /// What the resources are, for the model.
    pub fn description(mut self, description: impl Into<String>) -> ResourceTemplate {
        self.description = Some(description.into());
        self
    }

    /// The MIME type all of them have; also the default of the contents a read returns.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> ResourceTemplate {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Completes `variable`: `handler` gets what the user has typed of it and the values of
    /// the other variables already filled in, and returns suggestions, best first. The host
    /// sends at most 100 of them.
    pub fn complete<F>(mut self, variable: impl Into<String>, handler: F) -> ResourceTemplate
    where
        F: FnOnce(&str, &Variables) -> Vec<String> + 'static,
    {
        self.completers.insert(variable.into(), Box::new(handler));
        self
    }

    /// The URI template, as given.
    pub(crate) fn uri_template(&self) -> &str {
        &self.uri_template
    }

    pub(crate) fn into_descriptor(self) -> wit::ResourceTemplate {
        wit::ResourceTemplate {
            uri_template: self.uri_template,
            name: self.name,
            title: self.title,
            description: self.description,
            mime_type: self.mime_type,
        }
    }
}

/// Reads `uri`: the resource with exactly this URI, else the first template it matches.
pub(crate) fn read(
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
    uri: &str,
) -> Result<Vec<wit::ResourceContents>, wit::Failure> {
    let convert = |contents: Vec<Contents>, mime_type: Option<&str>| {
        contents
            .into_iter()
            .map(|c| c.into_wit(uri, mime_type))
            .collect()
    };
    if let Some(resource) = resources.into_iter().find(|r| r.uri == uri) {
        return match (resource.reader)() {
            Ok(contents) => Ok(convert(contents, resource.mime_type.as_deref())),
            Err(error) => Err(error.into_failure()),
        };
    }
    for template in templates {
        // A malformed template matches nothing; it is the plugin's bug, not the client's.
        let Ok(parsed) = UriTemplate::parse(&template.uri_template) else {
            continue;
        };
        if let Some(variables) = parsed.match_uri(uri) {
            return match (template.reader)(uri, &variables) {
                Ok(contents) => Ok(convert(contents, template.mime_type.as_deref())),
                Err(error) => Err(error.into_failure()),
            };
        }
    }
    Err(wit::Failure::NotFound(format!(
        "no resource has the URI `{uri}`, and it matches no resource template of this plugin"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources() -> Vec<Resource> {
        vec![
            Resource::new("test://static-text", "static-text", || {
                Ok(Contents::text("static"))
            })
            .mime_type("text/plain"),
            Resource::new("test://several", "several", || {
                Ok(vec![
                    Contents::text("a").uri("test://several/a"),
                    Contents::blob(vec![1, 2], "image/png"),
                ])
            }),
            Resource::new("test://gone", "gone", || -> Result<Contents, Error> {
                Err(Error::not_found("gone away"))
            }),
        ]
    }

    fn templates() -> Vec<ResourceTemplate> {
        vec![
            ResourceTemplate::new("test://{broken", "broken", |_, _| {
                Ok(Contents::text("never"))
            }),
            ResourceTemplate::new("test://template/{id}/data", "template", |uri, vars| {
                Ok(Contents::text(format!("{uri} {}", vars["id"])))
            })
            .mime_type("application/json"),
            ResourceTemplate::new("test://{+rest}", "catch-all", |_, vars| {
                Ok(Contents::text(vars["rest"].clone()).mime_type("text/x-rest"))
            }),
        ]
    }

    fn text(body: &ResourceBody) -> &str {
        match body {
            ResourceBody::Text(text) => text,
            ResourceBody::Blob(_) => panic!("a blob"),
        }
    }

    #[test]
    fn a_fixed_uri_reads_its_resource_with_defaults() {
        let contents = read(resources(), templates(), "test://static-text").unwrap();
        assert_eq!(contents.len(), 1);
        assert_eq!(contents[0].uri, "test://static-text");
        assert_eq!(contents[0].mime_type.as_deref(), Some("text/plain"));
        assert_eq!(text(&contents[0].body), "static");
    }

    #[test]
    fn a_read_may_return_several_contents() {
        let contents = read(resources(), templates(), "test://several").unwrap();
        assert_eq!(contents.len(), 2);
        assert_eq!(contents[0].uri, "test://several/a");
        assert_eq!(contents[0].mime_type, None);
        assert_eq!(contents[1].uri, "test://several");
        assert_eq!(contents[1].mime_type.as_deref(), Some("image/png"));
        assert!(matches!(&contents[1].body, ResourceBody::Blob(data) if data == &[1, 2]));
    }

    #[test]
    fn the_first_matching_template_reads_the_rest() {
        let contents = read(resources(), templates(), "test://template/123/data").unwrap();
        assert_eq!(text(&contents[0].body), "test://template/123/data 123");
        assert_eq!(contents[0].mime_type.as_deref(), Some("application/json"));
        let contents = read(resources(), templates(), "test://template/1/2/data").unwrap();
        assert_eq!(text(&contents[0].body), "template/1/2/data");
        assert_eq!(contents[0].mime_type.as_deref(), Some("text/x-rest"));
    }

    #[test]
    fn failures_keep_their_kind_and_name_the_uri() {
        match read(resources(), templates(), "test://gone") {
            Err(wit::Failure::NotFound(message)) => assert_eq!(message, "gone away"),
            other => panic!("{other:?}"),
        }
        match read(resources(), Vec::new(), "other://x") {
            Err(wit::Failure::NotFound(message)) => assert!(message.contains("`other://x`")),
            other => panic!("{other:?}"),
        }
    }
}
