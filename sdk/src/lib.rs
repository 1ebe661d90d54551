//! Write [Toolcell](https://github.com/toolcell/toolcell) plugins in Rust.
//!
//! A plugin is a WebAssembly component that offers MCP tools. Toolcell runs
//! each call in a fresh sandbox that can reach only what `plugins.toml`
//! grants: mounted directories, named environment variables and outbound
//! hosts. This crate hides the WIT bindings: a plugin depends on
//! `toolcell-sdk` alone.
//!
//! The main types:
//! - [`Tool`] describes one tool: its name, title, description, category,
//!   annotations and handler. The input schema is derived from the handler's
//!   argument type with [`schemars`], and the arguments are decoded with
//!   [`serde`]. The derived schemas are made portable (see [`Tool::new`]).
//! - [`Output`] is what a handler returns on success; [`Error`] is a failure
//!   the model can act on, sent as a result with `isError: true`.
//! - [`export_plugin!`] exports a function that lists the plugin's tools.
//! - [`fs`] resolves paths: a relative path is resolved against the plugin's
//!   first mount (the guest has no current directory of its own); its
//!   [`fs::AtomicFile`] replaces a file whole or not at all.
//! - [`host`] logs, reports progress, checks for cancellation and reads the
//!   plugin's `config` table.
//!
//! # Example
//!
//! A complete plugin with one tool. Build it with
//! `cargo build --release --target wasm32-wasip2` from a `cdylib` crate; the
//! `.wasm` file in `target/wasm32-wasip2/release/` is the component to list
//! in `plugins.toml`.
//!
//! ```
//! use toolcell_sdk::schemars::JsonSchema;
//! use toolcell_sdk::serde::Deserialize;
//! use toolcell_sdk::{Category, Error, Output, Tool};
//!
//! /// Arguments of `count_lines`. Doc comments become schema descriptions.
//! #[derive(Deserialize, JsonSchema)]
//! // The derives find serde and schemars through the SDK, so the plugin
//! // needs no dependency of its own on them.
//! #[serde(crate = "toolcell_sdk::serde")]
//! #[schemars(crate = "toolcell_sdk::schemars")]
//! struct CountLines {
//!     /// The file to count, absolute or relative to the first mount.
//!     path: String,
//! }
//!
//! fn count_lines(args: CountLines) -> Result<Output, Error> {
//!     let path = toolcell_sdk::fs::resolve(&args.path)?;
//!     let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
//!     Ok(Output::text(format!("{} lines", text.lines().count())))
//! }
//!
//! fn tools() -> Vec<Tool> {
//!     vec![
//!         Tool::new("count_lines", count_lines)
//!             .title("Count lines")
//!             .description("Count the lines of a text file.")
//!             .category(Category::Read)
//!             .read_only(),
//!     ]
//! }
//!
//! toolcell_sdk::export_plugin!(tools);
//! # fn main() {}
//! ```

// The generated bindings name this crate by its absolute path, which must
// resolve inside the crate too.
extern crate self as toolcell_sdk;

use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use schemars;
pub use serde;
pub use serde_json;
pub use wit_bindgen;

#[doc(hidden)]
pub mod __private {
    //! Used by [`export_plugin!`](crate::export_plugin); not part of the API.

    #[allow(unsafe_code, missing_docs, clippy::all)]
    pub mod bindings {
        wit_bindgen::generate!({
            path: "../wit",
            world: "toolcell:plugin/plugin@0.1.0",
            pub_export_macro: true,
            export_macro_name: "__export_plugin_world",
            default_bindings_module: "$crate::__private::bindings",
            runtime_path: "::toolcell_sdk::wit_bindgen::rt",
            bitflags_path: "::toolcell_sdk::wit_bindgen::rt::bitflags",
            generate_all,
        });
    }

    use bindings::exports::toolcell::plugin::tools as wit;
    pub use bindings::exports::toolcell::plugin::tools::Guest;
    pub use wit::{Call, ToolDescriptor, ToolResult};

    use crate::{IntoWit, Tool};

    /// Describes every tool, for `list-tools`.
    pub fn list_tools(tools: Vec<Tool>) -> Vec<ToolDescriptor> {
        tools.into_iter().map(Tool::into_descriptor).collect()
    }

    /// Runs the named tool, for `call-tool`.
    pub fn call_tool(tools: Vec<Tool>, call: Call) -> ToolResult {
        match tools.into_iter().find(|tool| tool.name == call.tool) {
            Some(tool) => (tool.handler)(&call.arguments).into_wit(),
            None => crate::Error::new(format!("this plugin has no tool `{}`", call.tool))
                .into_result()
                .into_wit(),
        }
    }
}

mod schema;

use __private::bindings::exports::toolcell::plugin::tools as wit;
use __private::bindings::toolcell::plugin::types as wit_types;

/// Exports a plugin whose tools are listed by a function `fn() -> Vec<Tool>`.
///
/// The function is called once per call (each call runs in a fresh
/// instance), so keep it cheap: [`Tool`] derives its schemas lazily, only when
/// the host asks for the descriptors.
///
/// The component's exports exist only in a WebAssembly build. Built for the
/// host (as `cargo build` in a workspace does with every member, and
/// `cargo test` with a plugin's unit tests), the crate exports nothing:
/// native linkers refuse the contract's export names
/// (`cabi_post_toolcell:plugin/tools@0.1.0#call-tool`).
#[macro_export]
macro_rules! export_plugin {
    ($tools:path) => {
        #[doc(hidden)]
        #[allow(dead_code)] // never constructed: the exports call its functions
        struct __ToolcellPlugin;

        impl $crate::__private::Guest for __ToolcellPlugin {
            fn list_tools() -> ::std::vec::Vec<$crate::__private::ToolDescriptor> {
                $crate::__private::list_tools($tools())
            }

            fn call_tool(call: $crate::__private::Call) -> $crate::__private::ToolResult {
                $crate::__private::call_tool($tools(), call)
            }
        }

        #[cfg(target_family = "wasm")]
        $crate::__private::bindings::__export_plugin_world!(
            __ToolcellPlugin with_types_in $crate::__private::bindings
        );
        // Natively nothing calls the tools; this use keeps them (and all
        // they call) from being reported as dead code.
        #[cfg(not(target_family = "wasm"))]
        const _: fn() -> ::std::vec::Vec<$crate::Tool> = $tools;
    };
}

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

type Handler = Box<dyn FnOnce(&str) -> Result<Output, Error>>;

/// One tool: how it presents itself and the function that runs it.
///
/// Defaults, until a builder method changes them: the title is the name, the
/// description is empty, the category is [`Category::Read`], there is no
/// output schema, and the annotations are MCP's cautious defaults: not
/// read-only, destructive, not idempotent, open-world. Call
/// [`read_only`](Tool::read_only) for a tool that changes nothing.
pub struct Tool {
    name: String,
    title: Option<String>,
    description: String,
    category: Category,
    input_schema: fn() -> String,
    output_schema: Option<fn() -> String>,
    annotations: wit_types::Annotations,
    handler: Handler,
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

    fn into_descriptor(self) -> wit::ToolDescriptor {
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

/// One block of a tool's result.
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

impl Content {
    fn into_wit(self) -> wit_types::Content {
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
    /// tool's [output schema](Tool::output_schema)) and `text`, a readable
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

/// A failure the model can act on, sent as a result with `isError: true`.
///
/// Any `std::error::Error` converts into it, so `?` works in handlers; prefer
/// a message that says what to do differently, and [`Error::io`] for file
/// errors, which names the path and explains sandbox refusals.
#[derive(Clone, Debug)]
pub struct Error {
    message: String,
}

impl Error {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
        }
    }

    /// An error for a failed file operation on `path`.
    ///
    /// When `path` lies outside every mount the message says so and lists
    /// the mounts: inside the sandbox such a path simply does not exist.
    pub fn io(path: &Path, error: std::io::Error) -> Error {
        let mounts = fs::mounts();
        let inside = mounts.iter().any(|mount| path.starts_with(mount));
        if !inside && path.is_absolute() {
            let list = mounts
                .iter()
                .map(|m| m.display().to_string())
                .collect::<Vec<_>>()
                .join(", ");
            let list = if list.is_empty() {
                "none".to_string()
            } else {
                list
            };
            return Error::new(format!(
                "`{}` is outside the directories this tool may access (granted: {list})",
                path.display()
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
        Error::new(format!("cannot access `{}`: {reason}", path.display()))
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    fn into_result(self) -> Result<Output, Error> {
        Err(self)
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

trait IntoWit {
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

/// Paths inside the sandbox.
///
/// Every mount appears at the same path as on the host, so absolute paths
/// the model sees are real paths. The guest has no current directory: a
/// relative path is resolved against the plugin's **first mount**.
pub mod fs {
    use super::*;
    use crate::__private::bindings::wasi::filesystem::preopens;

    /// The directories mounted for this call, in `plugins.toml` order.
    pub fn mounts() -> Vec<PathBuf> {
        preopens::get_directories()
            .into_iter()
            .map(|(_, path)| PathBuf::from(path))
            .collect()
    }

    /// Resolves `path`: an absolute path is returned as it is; a relative
    /// one is joined to the first mount. Fails for a relative path when the
    /// plugin has no mount. Containment is not checked here: the sandbox
    /// itself refuses anything outside the mounts.
    pub fn resolve(path: &str) -> Result<PathBuf, Error> {
        let path = Path::new(path);
        if path.is_absolute() {
            return Ok(path.to_path_buf());
        }
        match mounts().into_iter().next() {
            Some(first) => Ok(first.join(path)),
            None => Err(Error::new(format!(
                "`{}` is relative, but this tool has no mounted directory to resolve it against",
                path.display()
            ))),
        }
    }

    /// What temporary names contain: `.<name>.toolcell-tmp-<16 hex digits>`.
    pub const TEMP_MARKER: &str = ".toolcell-tmp-";

    /// The longest file name most filesystems take, in bytes.
    const MAX_NAME_BYTES: usize = 255;

    /// A file written under a temporary name beside its target and moved
    /// into place only once complete, so that no reader ever sees half of
    /// it.
    ///
    /// [`AtomicFile::create`] makes `.<name>.toolcell-tmp-<random>` in the
    /// target's directory; [`AtomicFile::commit`] syncs it and renames it
    /// over the target, or, when the target must not be replaced, hard-links
    /// it there, which fails if the target exists, so the check cannot race
    /// another writer. (Where hard links are unsupported, it checks, then
    /// renames.) Dropping an uncommitted file removes it; a call stopped by a
    /// trap cannot, and may leave the temporary file behind, but never a
    /// half-written target.
    pub struct AtomicFile {
        path: PathBuf,
        target: PathBuf,
        file: Option<std::fs::File>,
        committed: bool,
    }

    impl AtomicFile {
        /// Creates an empty temporary file beside `target`.
        pub fn create(target: &Path) -> std::io::Result<AtomicFile> {
            use std::hash::{BuildHasher, RandomState};
            use std::io::{Error, ErrorKind};
            let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
                return Err(Error::new(ErrorKind::InvalidInput, "not a file path"));
            };
            let name = name.to_string_lossy();
            let state = RandomState::new();
            let mut attempt = 0u32;
            loop {
                let path = dir.join(temp_name(&name, state.hash_one(attempt)));
                let created = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path);
                match created {
                    Ok(file) => {
                        return Ok(AtomicFile {
                            path,
                            target: target.to_path_buf(),
                            file: Some(file),
                            committed: false,
                        });
                    }
                    Err(e) if e.kind() == ErrorKind::AlreadyExists && attempt < 8 => {
                        attempt += 1;
                    }
                    Err(e) => return Err(e),
                }
            }
        }

        /// Appends `bytes`.
        pub fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            use std::io::Write;
            match self.file.as_mut() {
                Some(file) => file.write_all(bytes),
                None => Err(std::io::Error::other("the temporary file is closed")),
            }
        }

        /// Syncs the file and moves it to its target. With `replace` false,
        /// an existing target is left alone and the error's kind is
        /// `AlreadyExists`.
        pub fn commit(mut self, replace: bool) -> std::io::Result<()> {
            use std::io::{Error, ErrorKind};
            if let Some(file) = self.file.take() {
                file.sync_all()?;
            }
            if !replace {
                let exists = || Error::new(ErrorKind::AlreadyExists, "the target exists");
                match std::fs::hard_link(&self.path, &self.target) {
                    // Dropping `self` removes the temporary name.
                    Ok(()) => return Ok(()),
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(exists()),
                    Err(_) if std::fs::symlink_metadata(&self.target).is_ok() => {
                        return Err(exists());
                    }
                    Err(_) => {}
                }
            }
            std::fs::rename(&self.path, &self.target)?;
            self.committed = true;
            Ok(())
        }
    }

    impl Drop for AtomicFile {
        fn drop(&mut self) {
            drop(self.file.take());
            if !self.committed {
                // Best effort: the error that brought us here matters more.
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }

    /// The temporary name for a target called `name`, shortened (at a
    /// character boundary) to keep the whole within [`MAX_NAME_BYTES`].
    fn temp_name(name: &str, random: u64) -> String {
        let suffix = format!("{TEMP_MARKER}{random:016x}");
        let room = MAX_NAME_BYTES - 1 - suffix.len();
        let mut end = name.len().min(room);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        format!(".{}{suffix}", &name[..end])
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn scratch(name: &str) -> PathBuf {
            let dir = std::env::temp_dir().join(format!(
                "toolcell-sdk-{name}-{}-{:?}",
                std::process::id(),
                std::time::SystemTime::now()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            dir
        }

        fn names(dir: &Path) -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }

        #[test]
        fn commit_creates_and_leaves_no_temp_file() {
            let dir = scratch("create");
            let target = dir.join("new.txt");
            let mut file = AtomicFile::create(&target).unwrap();
            file.write_all(b"hello").unwrap();
            file.commit(false).unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"hello");
            assert_eq!(names(&dir), ["new.txt"]);
            std::fs::remove_dir_all(&dir).unwrap();
        }

        #[test]
        fn commit_without_replace_keeps_an_existing_target() {
            let dir = scratch("refuse");
            let target = dir.join("old.txt");
            std::fs::write(&target, "old").unwrap();
            let mut file = AtomicFile::create(&target).unwrap();
            file.write_all(b"new").unwrap();
            let error = file.commit(false).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
            assert_eq!(std::fs::read(&target).unwrap(), b"old");
            assert_eq!(names(&dir), ["old.txt"]);
            std::fs::remove_dir_all(&dir).unwrap();
        }

        #[test]
        fn commit_replaces_when_asked() {
            let dir = scratch("replace");
            let target = dir.join("old.txt");
            std::fs::write(&target, "old").unwrap();
            let mut file = AtomicFile::create(&target).unwrap();
            file.write_all(b"new").unwrap();
            file.commit(true).unwrap();
            assert_eq!(std::fs::read(&target).unwrap(), b"new");
            assert_eq!(names(&dir), ["old.txt"]);
            std::fs::remove_dir_all(&dir).unwrap();
        }

        #[test]
        fn an_uncommitted_file_is_removed() {
            let dir = scratch("drop");
            let mut file = AtomicFile::create(&dir.join("t.txt")).unwrap();
            file.write_all(b"partial").unwrap();
            assert_eq!(names(&dir).len(), 1);
            drop(file);
            assert!(names(&dir).is_empty());
            std::fs::remove_dir_all(&dir).unwrap();
        }

        #[test]
        fn temp_names_fit_and_keep_characters_whole() {
            assert_eq!(
                temp_name("notes.txt", 0xab),
                ".notes.txt.toolcell-tmp-00000000000000ab"
            );
            let long = "é".repeat(200);
            let name = temp_name(&long, u64::MAX);
            assert!(name.len() <= MAX_NAME_BYTES, "{}", name.len());
            assert!(name.ends_with(".toolcell-tmp-ffffffffffffffff"));
        }
    }
}

/// Host services: logging, progress, cancellation and configuration.
pub mod host {
    use crate::__private::bindings::toolcell::plugin::host as wit_host;

    pub use wit_host::LogLevel;

    /// Writes a line to the host's log, tagged with the plugin and tool.
    pub fn log(level: LogLevel, message: &str) {
        wit_host::log(level, message);
    }

    /// Reports progress on the current call; `progress` should increase
    /// with each report, and `total` is the value it will reach, if known.
    pub fn progress(progress: f64, total: Option<f64>, message: Option<&str>) {
        wit_host::report_progress(progress, total, message);
    }

    /// Whether the client cancelled the current call.
    pub fn is_cancelled() -> bool {
        wit_host::is_cancelled()
    }

    /// One value of the plugin's `config` table in `plugins.toml`.
    pub fn config(key: &str) -> Option<String> {
        wit_host::get_config(key)
    }

    /// Every value of the plugin's `config` table, sorted by key.
    pub fn config_entries() -> Vec<(String, String)> {
        wit_host::config_entries()
    }
}

/// Outbound HTTP(S), for plugins granted `network = [...]` in `plugins.toml`.
///
/// The host refuses a request to any host the grant does not name, before a
/// connection is made; [`get`](http::get) turns that refusal into an
/// [`Error`] naming the host.
pub mod http {
    use crate::__private::bindings::wasi::http::outgoing_handler;
    use crate::__private::bindings::wasi::http::types::{
        ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, Scheme,
    };
    use crate::__private::bindings::wasi::io::streams::StreamError;
    use crate::Error;

    /// A response: status, headers and the whole body.
    #[derive(Clone, Debug)]
    pub struct Response {
        /// The status code, such as 200.
        pub status: u16,
        /// The headers, names in lowercase, values as text (lossy).
        pub headers: Vec<(String, String)>,
        /// The body.
        pub body: Vec<u8>,
    }

    impl Response {
        /// The first value of header `name` (lowercase).
        pub fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        }
    }

    /// GETs `url` (`http://` or `https://`), reading at most `max_bytes` of
    /// body; a longer body is an error rather than a silent cut.
    pub fn get(url: &str, max_bytes: usize) -> Result<Response, Error> {
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (Scheme::Https, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (Scheme::Http, rest)
        } else {
            return Err(Error::new(format!(
                "`{url}` is not an http:// or https:// URL"
            )));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        if authority.is_empty() {
            return Err(Error::new(format!("`{url}` has no host")));
        }
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };

        let headers = Fields::new();
        headers
            .append("user-agent", b"toolcell-plugin")
            .map_err(|e| Error::new(format!("cannot set a header: {e:?}")))?;
        let request = OutgoingRequest::new(headers);
        let invalid = |what: &str| Error::new(format!("`{url}` has an invalid {what}"));
        request
            .set_method(&Method::Get)
            .map_err(|()| invalid("method"))?;
        request
            .set_scheme(Some(&scheme))
            .map_err(|()| invalid("scheme"))?;
        request
            .set_authority(Some(authority))
            .map_err(|()| invalid("host"))?;
        request
            .set_path_with_query(Some(&path))
            .map_err(|()| invalid("path"))?;
        let body = request
            .body()
            .map_err(|()| Error::new("cannot open the request body"))?;
        OutgoingBody::finish(body, None).map_err(|e| request_error(authority, &e))?;

        let pending =
            outgoing_handler::handle(request, None).map_err(|e| request_error(authority, &e))?;
        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(e))) => return Err(request_error(authority, &e)),
            Some(Err(())) | None => {
                return Err(Error::new(format!(
                    "the request to `{authority}` ended without a response"
                )));
            }
        };
        let status = response.status();
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(name, value)| {
                (
                    name.to_ascii_lowercase(),
                    String::from_utf8_lossy(&value).into_owned(),
                )
            })
            .collect();
        let incoming = response
            .consume()
            .map_err(|()| Error::new("cannot read the response body"))?;
        let stream = incoming
            .stream()
            .map_err(|()| Error::new("cannot read the response body"))?;
        let mut body = Vec::new();
        loop {
            match stream.blocking_read(64 * 1024) {
                Ok(chunk) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > max_bytes {
                        return Err(Error::new(format!(
                            "the response from `{authority}` is larger than {max_bytes} bytes"
                        )));
                    }
                }
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(Error::new(format!(
                        "reading the response from `{authority}` failed: {}",
                        e.to_debug_string()
                    )));
                }
            }
        }
        drop(stream);
        let _trailers = IncomingBody::finish(incoming);
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    fn request_error(authority: &str, code: &ErrorCode) -> Error {
        match code {
            ErrorCode::HttpRequestDenied => Error::new(format!(
                "the sandbox refused the request to `{authority}`: that host is not in this \
                 plugin's `network` grant in plugins.toml"
            )),
            ErrorCode::DnsError(_) => Error::new(format!("cannot resolve `{authority}`")),
            ErrorCode::ConnectionRefused => {
                Error::new(format!("`{authority}` refused the connection"))
            }
            ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => {
                Error::new(format!("`{authority}` timed out"))
            }
            other => Error::new(format!("the request to `{authority}` failed: {other:?}")),
        }
    }
}
