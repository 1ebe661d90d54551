//! [`Tool`] describes one tool and runs it; [`Category`] says which `plugins.toml` switch
//! enables it.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::__private::bindings::exports::toolcell::plugin0_1_0::tools as wit;
use crate::__private::bindings::toolcell::plugin0_1_0::types as wit_types;
use crate::{Error, Output, schema};

/// What kind of work a tool does; `plugins.toml` enables tools by category.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Category {
    /// Reads files or other local state without changing it.
    Read,
    /// Searches local content.
    Search,
    /// Creates, changes or deletes local state.
    Write,
    /// Runs programs or code.
    Execute,
    /// Works with version control.
    Vcs,
    /// Reaches hosts over the network.
    Network,
    /// Any other category: lowercase ASCII letters, digits and `-`.
    Other(String),
}

impl Category {
    fn into_wit(self) -> wit_types::Category {
        use wit_types::Category as C;
        match self {
            Category::Read => C::Read,
            Category::Search => C::Search,
            Category::Write => C::Write,
            Category::Execute => C::Execute,
            Category::Vcs => C::Vcs,
            Category::Network => C::Network,
            Category::Other(name) => C::Other(name),
        }
    }
}

/// Decodes the arguments (JSON text) and runs the tool.
type Handler = Box<dyn FnOnce(&str) -> Result<Output, Error>>;

/// One tool: how it presents itself and the function that runs it.
///
/// Defaults, until a builder method changes them: the title is the name, the
/// description is empty, the category is [`Category::Read`], there is no
/// output schema, and the annotations are MCP's cautious defaults: not
/// read-only, destructive, not idempotent, open-world. Call
/// [`read_only`](Tool::read_only) for a tool that changes nothing.
pub struct Tool {
    pub(crate) name: String,
    title: Option<String>,
    description: String,
    category: Category,
    input_schema: fn() -> String,
    output_schema: Option<fn() -> String>,
    annotations: wit_types::Annotations,
    pub(crate) handler: Handler,
}

impl Tool {
    /// A tool named `name` (`[a-zA-Z0-9_-]{1,64}`) that runs `handler`.
    ///
    /// The input schema is derived from `A`; the host validates arguments
    /// against it before the plugin runs, and the SDK decodes them into `A`.
    ///
    /// The derived schema is rewritten so that every MCP client takes it: a
    /// `format` JSON Schema does not define (schemars' `uint64`, `int32`,
    /// `double`, ...) is dropped, an integer's range kept as `minimum` and
    /// `maximum`; and an optional field (`Option<T>`, or `#[serde(default)]`)
    /// accepts `T` but not `null`: a client leaves the field out instead.
    pub fn new<A, F>(name: impl Into<String>, handler: F) -> Tool
    where
        A: DeserializeOwned + JsonSchema,
        F: FnOnce(A) -> Result<Output, Error> + 'static,
    {
        Tool {
            name: name.into(),
            title: None,
            description: String::new(),
            category: Category::Read,
            input_schema: schema::input_text::<A>,
            output_schema: None,
            annotations: wit_types::Annotations {
                read_only: false,
                destructive: true,
                idempotent: false,
                open_world: true,
            },
            handler: Box::new(move |arguments| {
                let args = serde_json::from_str::<A>(arguments)
                    .map_err(|e| Error::new(format!("invalid arguments: {e}")))?;
                handler(args)
            }),
        }
    }

    /// A short name for people.
    pub fn title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// What the tool does and when to use it, written for the model.
    pub fn description(mut self, description: impl Into<String>) -> Tool {
        self.description = description.into();
        self
    }

    /// The category the tool is enabled by.
    pub fn category(mut self, category: Category) -> Tool {
        self.category = category;
        self
    }

    /// Declares that successful results carry structured content shaped
    /// like `T` (see [`Output::structured`]).
    ///
    /// The schema describes `T` as serde serialises it, made portable as in
    /// [`Tool::new`]: a field left out by `skip_serializing_if` is optional
    /// and not nullable; an `Option` always written is required and may be
    /// `null` (as `anyOf`, not a `type` array).
    pub fn output_schema<T: JsonSchema>(mut self) -> Tool {
        self.output_schema = Some(schema::output_text::<T>);
        self
    }

    /// The tool changes nothing: read-only, not destructive, idempotent.
    /// The host then mounts every directory read-only for it.
    pub fn read_only(mut self) -> Tool {
        self.annotations.read_only = true;
        self.annotations.destructive = false;
        self.annotations.idempotent = true;
        self
    }

    /// Sets whether the tool may destroy or overwrite data.
    pub fn destructive(mut self, yes: bool) -> Tool {
        self.annotations.destructive = yes;
        self
    }

    /// Sets whether repeating a call with the same arguments has no further effect.
    pub fn idempotent(mut self, yes: bool) -> Tool {
        self.annotations.idempotent = yes;
        self
    }

    /// Sets whether the tool talks to an open world (the web) rather than
    /// a closed one (the granted directories).
    pub fn open_world(mut self, yes: bool) -> Tool {
        self.annotations.open_world = yes;
        self
    }

    pub(crate) fn into_descriptor(self) -> wit::ToolDescriptor {
        wit::ToolDescriptor {
            title: self.title.unwrap_or_else(|| self.name.clone()),
            name: self.name,
            description: self.description,
            input_schema: (self.input_schema)(),
            output_schema: self.output_schema.map(|schema| schema()),
            category: self.category.into_wit(),
            annotations: self.annotations,
        }
    }
}
