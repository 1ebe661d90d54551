//! What handlers return: [`Content`] blocks, a tool's [`Output`], and the [`Error`] every
//! handler (tool, resource reader, prompt) fails with.
//!
//! An [`Error`] becomes a tool result with `isError: true`, or the `failure` a read, a prompt
//! or a completion returns; its kind ([`Error::not_found`], [`Error::invalid`], or neither)
//! picks the failure's case.

use std::fmt;
use std::path::Path;

use serde::Serialize;

use crate::__private::bindings::exports::toolcell::plugin0_1_0::tools as wit;
use crate::__private::bindings::toolcell::plugin0_1_0::types as wit_types;
use crate::__private::bindings::toolcell::plugin0_2_0::types::Failure;
use crate::fs;

/// One block of a tool's result, or the content of a prompt message.
///
/// Text converts from `&str` and `String`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Content {
    /// Text for the model.
    Text(String),
    /// An image: bytes and MIME type.
    Image {
        /// The raw bytes.
        data: Vec<u8>,
        /// Such as `image/png`.
        mime_type: String,
    },
    /// A sound: bytes and MIME type.
    Audio {
        /// The raw bytes.
        data: Vec<u8>,
        /// Such as `audio/wav`.
        mime_type: String,
    },
    /// A link to a resource the client may fetch.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// A name for it.
        name: String,
        /// Its MIME type, if known.
        mime_type: Option<String>,
        /// Its size in bytes, if known.
        size: Option<u64>,
    },
    /// A resource with its text contents.
    EmbeddedText {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, if known.
        mime_type: Option<String>,
        /// The contents.
        text: String,
    },
    /// A resource with its binary contents.
    EmbeddedBlob {
        /// The resource's URI.
        uri: String,
        /// Its MIME type, if known.
        mime_type: Option<String>,
        /// The contents.
        data: Vec<u8>,
    },
}

impl From<String> for Content {
    fn from(text: String) -> Content {
        Content::Text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Content {
        Content::Text(text.to_string())
    }
}

impl Content {
    /// The contract's content block as the SDK's.
    pub(crate) fn from_wit(content: wit_types::Content) -> Content {
        use wit_types::Content as C;
        match content {
            C::Text(text) => Content::Text(text),
            C::Image(media) => Content::Image {
                data: media.data,
                mime_type: media.mime_type,
            },
            C::Audio(media) => Content::Audio {
                data: media.data,
                mime_type: media.mime_type,
            },
            C::ResourceLink(link) => Content::ResourceLink {
                uri: link.uri,
                name: link.name,
                mime_type: link.mime_type,
                size: link.size,
            },
            C::EmbeddedResource(resource) => match resource.body {
                wit_types::ResourceBody::Text(text) => Content::EmbeddedText {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text,
                },
                wit_types::ResourceBody::Blob(data) => Content::EmbeddedBlob {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    data,
                },
            },
        }
    }

    pub(crate) fn into_wit(self) -> wit_types::Content {
        use wit_types::Content as C;
        match self {
            Content::Text(text) => C::Text(text),
            Content::Image { data, mime_type } => C::Image(wit_types::Media { data, mime_type }),
            Content::Audio { data, mime_type } => C::Audio(wit_types::Media { data, mime_type }),
            Content::ResourceLink {
                uri,
                name,
                mime_type,
                size,
            } => C::ResourceLink(wit_types::ResourceLink {
                uri,
                name,
                title: None,
                description: None,
                mime_type,
                size,
            }),
            Content::EmbeddedText {
                uri,
                mime_type,
                text,
            } => C::EmbeddedResource(wit_types::EmbeddedResource {
                uri,
                mime_type,
                body: wit_types::ResourceBody::Text(text),
            }),
            Content::EmbeddedBlob {
                uri,
                mime_type,
                data,
            } => C::EmbeddedResource(wit_types::EmbeddedResource {
                uri,
                mime_type,
                body: wit_types::ResourceBody::Blob(data),
            }),
        }
    }
}

/// A successful result: content blocks and optional structured content.
#[derive(Clone, Debug, Default)]
pub struct Output {
    content: Vec<Content>,
    structured: Option<String>,
}

impl Output {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Output {
        Output {
            content: vec![Content::Text(text.into())],
            structured: None,
        }
    }

    /// A result with structured content `value` (which should match the
    /// tool's [output schema](crate::Tool::output_schema)) and `text`, a readable
    /// rendering of it for clients that show only text.
    pub fn structured(value: &impl Serialize, text: impl Into<String>) -> Result<Output, Error> {
        let structured = serde_json::to_string(value)
            .map_err(|e| Error::new(format!("cannot encode the result: {e}")))?;
        Ok(Output {
            content: vec![Content::Text(text.into())],
            structured: Some(structured),
        })
    }

    /// Appends a content block.
    pub fn with(mut self, content: Content) -> Output {
        self.content.push(content);
        self
    }
}

/// A failure the model can act on: a tool's is sent as a result with `isError: true`; a
/// resource reader's, a prompt's or a completion's as the contract's `failure`.
///
/// Any `std::error::Error` converts into it, so `?` works in handlers; prefer
/// a message that says what to do differently, and [`Error::io`] for file
/// errors, which names the path and explains sandbox refusals.
///
/// Its kind matters only outside tools: [`Error::not_found`] is `failure::not-found`,
/// [`Error::invalid`] is `failure::invalid`, and any other error is `failure::failed`.
#[derive(Clone, Debug)]
pub struct Error {
    message: String,
    kind: Kind,
}

/// Which `failure` case an [`Error`] becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Failed,
    NotFound,
    Invalid,
}

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            kind: Kind::Failed,
        }
    }

    /// There is no such thing (a resource, a file a template names): `failure::not-found`.
    /// The message should name what was asked for.
    pub fn not_found(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            kind: Kind::NotFound,
        }
    }

    /// The request is wrong (a missing or malformed argument): `failure::invalid`.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            kind: Kind::Invalid,
        }
    }

    /// An error for a failed file operation on `path`.
    ///
    /// When `path` lies outside every mount the message says so and lists
    /// the mounts: inside the sandbox such a path simply does not exist.
    /// A missing file (and a path outside the mounts) is a
    /// [not-found](Error::not_found) error.
    pub fn io(path: &Path, error: std::io::Error) -> Error {
        let mounts = fs::mounts();
        let inside = mounts.iter().any(|mount| path.starts_with(mount));
        if !inside && path.is_absolute() {
            let list = mounts
                .iter()
                .map(|m| fs::display(m))
                .collect::<Vec<_>>()
                .join(", ");
            let list = if list.is_empty() {
                "none".to_string()
            } else {
                list
            };
            return Error::not_found(format!(
                "`{}` is outside the directories this tool may access (granted: {list})",
                fs::display(path)
            ));
        }
        let reason = match error.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
            std::io::ErrorKind::PermissionDenied => {
                "permission denied (the sandbox refuses paths that leave a granted directory, \
                 including through `..` or a symlink, and writes to read-only mounts)"
                    .to_string()
            }
            std::io::ErrorKind::Unsupported => {
                "not supported (the sandbox does not open named pipes, sockets or devices)"
                    .to_string()
            }
            _ => error.to_string(),
        };
        let message = format!("cannot access `{}`: {reason}", fs::display(path));
        if error.kind() == std::io::ErrorKind::NotFound {
            Error::not_found(message)
        } else {
            Error::new(message)
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The contract's `failure` for this error.
    pub(crate) fn into_failure(self) -> Failure {
        match self.kind {
            Kind::Failed => Failure::Failed(self.message),
            Kind::NotFound => Failure::NotFound(self.message),
            Kind::Invalid => Failure::Invalid(self.message),
        }
    }
}

impl<E: std::error::Error> From<E> for Error {
    fn from(error: E) -> Error {
        Error::new(error.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Conversion of a tool handler's outcome into the contract's result.
pub(crate) trait IntoWit {
    fn into_wit(self) -> wit::ToolResult;
}

impl IntoWit for Result<Output, Error> {
    fn into_wit(self) -> wit::ToolResult {
        match self {
            Ok(output) => wit::ToolResult {
                content: output.content.into_iter().map(Content::into_wit).collect(),
                structured_content: output.structured,
                is_error: false,
            },
            Err(error) => wit::ToolResult {
                content: vec![wit_types::Content::Text(error.message)],
                structured_content: None,
                is_error: true,
            },
        }
    }
}
