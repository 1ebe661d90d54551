//! Write [Toolcell](https://github.com/toolcell/toolcell) plugins in Rust.
//!
//! A plugin is a WebAssembly component that offers MCP tools, and may offer
//! resources, resource templates and prompts. Toolcell runs each call in a
//! fresh sandbox that can reach only what `plugins.toml` grants: mounted
//! directories, named environment variables and outbound hosts. This crate
//! hides the WIT bindings (contract `toolcell:plugin@0.2.0`): a plugin depends
//! on `toolcell-sdk` alone.
//!
//! The main types:
//! - [`Tool`] describes one tool: its name, title, description, category,
//!   annotations and handler. The input schema is derived from the handler's
//!   argument type with [`schemars`], and the arguments are decoded with
//!   [`serde`]. The derived schemas are made portable (see [`Tool::new`]).
//! - [`Output`] is what a tool's handler returns on success; [`Error`] is a
//!   failure the model can act on, sent as a result with `isError: true` (or,
//!   from a resource or a prompt, as the contract's `failure`).
//! - [`Resource`] is data at a fixed URI; [`ResourceTemplate`] a family of
//!   resources whose URIs match an RFC 6570 template. Their readers return
//!   [`Contents`]; a template's reader also gets the [`Variables`] the URI
//!   matched with.
//! - [`Prompt`] is a message template whose arguments are derived from a type,
//!   like a tool's; its handler returns [`Message`]s or a [`PromptReply`].
//! - Prompts and templates complete their arguments with handlers given to
//!   [`Prompt::complete`] and [`ResourceTemplate::complete`].
//! - [`export_plugin!`] exports functions that list the plugin's tools and,
//!   optionally, its resources, templates and prompts.
//! - [`fs`] resolves paths: a relative path is resolved against the plugin's
//!   first mount (the guest has no current directory of its own); its
//!   [`fs::AtomicFile`] replaces a file whole or not at all.
//! - [`host`] logs, reports progress, checks for cancellation and reads the
//!   plugin's `config` table; [`http`] makes outbound requests.
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
//!
//! # Resources and prompts
//!
//! A plugin with a fixed resource, a resource template whose variable the
//! client can complete, and a prompt. Each listing function is called once per
//! call, so build the list cheaply: nothing is read, and no schema derived,
//! until the host asks.
//!
//! ```
//! use toolcell_sdk::schemars::JsonSchema;
//! use toolcell_sdk::serde::Deserialize;
//! use toolcell_sdk::{
//!     Contents, Error, Message, Prompt, Resource, ResourceTemplate, Tool, Variables,
//! };
//!
//! const NOTES: &[(&str, &str)] = &[("groceries", "milk, eggs"), ("garden", "water the figs")];
//!
//! fn resources() -> Vec<Resource> {
//!     vec![
//!         Resource::new("notes://index", "index", || {
//!             let names: Vec<&str> = NOTES.iter().map(|(name, _)| *name).collect();
//!             Ok(Contents::text(names.join("\n")))
//!         })
//!         .title("All notes")
//!         .description("The names of every note, one a line.")
//!         .mime_type("text/plain"),
//!     ]
//! }
//!
//! fn read_note(uri: &str, vars: &Variables) -> Result<Contents, Error> {
//!     let name = &vars["name"];
//!     match NOTES.iter().find(|(n, _)| n == name) {
//!         Some((_, text)) => Ok(Contents::text(*text)),
//!         None => Err(Error::not_found(format!("there is no note `{name}` ({uri})"))),
//!     }
//! }
//!
//! fn templates() -> Vec<ResourceTemplate> {
//!     vec![
//!         ResourceTemplate::new("notes://note/{name}", "note", read_note)
//!             .description("One note, by name.")
//!             .mime_type("text/plain")
//!             // Suggest the names that start with what the user typed.
//!             .complete("name", |typed, _context| {
//!                 NOTES
//!                     .iter()
//!                     .map(|(name, _)| name.to_string())
//!                     .filter(|name| name.starts_with(typed))
//!                     .collect()
//!             }),
//!     ]
//! }
//!
//! /// Arguments of `summarize`: MCP sends prompt arguments as text.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(crate = "toolcell_sdk::serde")]
//! #[schemars(crate = "toolcell_sdk::schemars")]
//! struct Summarize {
//!     /// The note to summarize.
//!     name: String,
//!     /// How long the summary may be, in words.
//!     words: Option<String>,
//! }
//!
//! fn prompts() -> Vec<Prompt> {
//!     vec![
//!         Prompt::new("summarize", |args: Summarize| {
//!             let words = args.words.as_deref().unwrap_or("50");
//!             Ok(vec![
//!                 Message::user(format!("Summarize the note below in {words} words.")),
//!                 Message::user(toolcell_sdk::Content::ResourceLink {
//!                     uri: format!("notes://note/{}", args.name),
//!                     name: args.name,
//!                     mime_type: Some("text/plain".into()),
//!                     size: None,
//!                 }),
//!             ])
//!         })
//!         .description("Summarize one note.")
//!         .complete("name", |typed, _| {
//!             NOTES
//!                 .iter()
//!                 .map(|(name, _)| name.to_string())
//!                 .filter(|name| name.starts_with(typed))
//!                 .collect()
//!         }),
//!     ]
//! }
//!
//! fn tools() -> Vec<Tool> {
//!     Vec::new()
//! }
//!
//! toolcell_sdk::export_plugin! {
//!     tools: tools,
//!     resources: resources,
//!     templates: templates,
//!     prompts: prompts,
//! }
//! # fn main() {}
//! ```

// The generated bindings name this crate by its absolute path, which must
// resolve inside the crate too.
extern crate self as toolcell_sdk;

pub use schemars;
pub use serde;
pub use serde_json;
pub use wit_bindgen;

/// `wit_bindgen::generate!` on the contract's WIT: `../wit` in the
/// repository, the copy in `packaged/wit` in a packaged crate (see
/// `build.rs`).
#[cfg(not(toolcell_packaged))]
macro_rules! generate {
    ({ $($options:tt)* }) => {
        wit_bindgen::generate!({ path: "../wit", $($options)* });
    };
}
#[cfg(toolcell_packaged)]
macro_rules! generate {
    ({ $($options:tt)* }) => {
        wit_bindgen::generate!({ path: "packaged/wit", $($options)* });
    };
}

#[doc(hidden)]
pub mod __private {
    //! Used by [`export_plugin!`](crate::export_plugin); not part of the API.

    #[allow(unsafe_code, missing_docs, clippy::all)]
    pub mod bindings {
        generate!({
            world: "toolcell:plugin/plugin@0.2.0",
            pub_export_macro: true,
            export_macro_name: "__export_plugin_world",
            default_bindings_module: "$crate::__private::bindings",
            runtime_path: "::toolcell_sdk::wit_bindgen::rt",
            bitflags_path: "::toolcell_sdk::wit_bindgen::rt::bitflags",
            generate_all,
        });
    }

    /// `toolcell:files`, the host's extension (see `fs::Directory`), on the
    /// WASI types of [`bindings`]: 0.2.0's `metadata` and 0.3.0's
    /// `contents`. The world is the SDK's own, so a plugin can bind a
    /// `toolcell:files/files` world itself: two bindings of one world in one
    /// component would give it two custom sections of the same name, which
    /// `wasm-component-ld` refuses.
    #[allow(unsafe_code, missing_docs, clippy::all)]
    pub mod files {
        generate!({
            inline: "
                package toolcell-sdk:private;
                world files {
                    import toolcell:files/metadata@0.2.0;
                    import toolcell:files/contents@0.3.0;
                }
            ",
            world: "toolcell-sdk:private/files",
            runtime_path: "::toolcell_sdk::wit_bindgen::rt",
            bitflags_path: "::toolcell_sdk::wit_bindgen::rt::bitflags",
            with: {
                "toolcell:files/metadata@0.2.0": generate,
                "toolcell:files/contents@0.3.0": generate,
                "wasi:filesystem/types@0.2.12": crate::__private::bindings::wasi::filesystem::types,
                "wasi:io/streams@0.2.12": crate::__private::bindings::wasi::io::streams,
                "wasi:io/error@0.2.12": crate::__private::bindings::wasi::io::error,
                "wasi:io/poll@0.2.12": crate::__private::bindings::wasi::io::poll,
                "wasi:clocks/wall-clock@0.2.12": crate::__private::bindings::wasi::clocks::wall_clock,
            },
        });
    }

    pub use bindings::exports::toolcell::plugin0_1_0::tools::{
        Call, Guest as ToolsGuest, ToolDescriptor, ToolResult,
    };
    pub use bindings::exports::toolcell::plugin0_2_0::completions::Guest as CompletionsGuest;
    pub use bindings::exports::toolcell::plugin0_2_0::prompts::Guest as PromptsGuest;
    pub use bindings::exports::toolcell::plugin0_2_0::resources::Guest as ResourcesGuest;
    pub use bindings::toolcell::plugin0_2_0::types::{
        Completion, CompletionRequest, Failure, Prompt as FilledPrompt, PromptDescriptor,
        ResourceContents, ResourceDescriptor, ResourceTemplate as TemplateDescriptor,
    };

    use crate::output::IntoWit;
    use crate::{Prompt, Resource, ResourceTemplate, Tool};

    /// Describes every tool, for `list-tools`.
    pub fn list_tools(tools: Vec<Tool>) -> Vec<ToolDescriptor> {
        tools.into_iter().map(Tool::into_descriptor).collect()
    }

    /// Runs the named tool, for `call-tool`.
    pub fn call_tool(tools: Vec<Tool>, call: Call) -> ToolResult {
        match tools.into_iter().find(|tool| tool.name == call.tool) {
            Some(tool) => (tool.handler)(&call.arguments).into_wit(),
            None => Err(crate::Error::new(format!(
                "this plugin has no tool `{}`",
                call.tool
            )))
            .into_wit(),
        }
    }

    /// Describes every fixed resource, for `list-resources`.
    pub fn list_resources(resources: Vec<Resource>) -> Vec<ResourceDescriptor> {
        resources
            .into_iter()
            .map(Resource::into_descriptor)
            .collect()
    }

    /// Describes every resource template, for `list-templates`.
    pub fn list_templates(templates: Vec<ResourceTemplate>) -> Vec<TemplateDescriptor> {
        templates
            .into_iter()
            .map(ResourceTemplate::into_descriptor)
            .collect()
    }

    /// Reads a resource, for `read-resource`.
    pub fn read_resource(
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
        uri: String,
    ) -> Result<Vec<ResourceContents>, Failure> {
        crate::resource::read(resources, templates, &uri)
    }

    /// Describes every prompt, for `list-prompts`.
    pub fn list_prompts(prompts: Vec<Prompt>) -> Vec<PromptDescriptor> {
        prompts.into_iter().map(Prompt::into_descriptor).collect()
    }

    /// Fills in a prompt, for `get-prompt`.
    pub fn get_prompt(
        prompts: Vec<Prompt>,
        name: String,
        arguments: Vec<(String, String)>,
    ) -> Result<FilledPrompt, Failure> {
        crate::prompt::get(prompts, &name, arguments)
    }

    /// Completes an argument, for `complete`.
    pub fn complete(
        prompts: Vec<Prompt>,
        templates: Vec<ResourceTemplate>,
        request: CompletionRequest,
    ) -> Result<Completion, Failure> {
        crate::completion::complete(prompts, templates, request)
    }
}

mod completion;
pub mod fs;
pub mod host;
pub mod http;
mod output;
mod prompt;
mod resource;
mod schema;
mod tool;
mod uri_template;

pub use output::{Content, Error, Output};
pub use prompt::{Message, Prompt, PromptReply};
pub use resource::{Contents, Resource, ResourceTemplate, Variables};
pub use tool::{Category, Tool};

/// Exports a plugin: its tools and, optionally, its resources, resource
/// templates and prompts, each listed by a function.
///
/// Two forms:
///
/// ```text
/// export_plugin!(tools);
///
/// export_plugin! {
///     tools: tools,          // fn() -> Vec<Tool>
///     resources: resources,  // fn() -> Vec<Resource>          (optional)
///     templates: templates,  // fn() -> Vec<ResourceTemplate>  (optional)
///     prompts: prompts,      // fn() -> Vec<Prompt>            (optional)
/// }
/// ```
///
/// In the second form the parts come in this order, and any but `tools` may
/// be left out: the plugin then lists none of them. Completions are routed to
/// the handlers the listed prompts and templates register.
///
/// ```
/// # use toolcell_sdk::{Message, Prompt, Tool};
/// # #[derive(toolcell_sdk::serde::Deserialize, toolcell_sdk::schemars::JsonSchema)]
/// # #[serde(crate = "toolcell_sdk::serde")]
/// # #[schemars(crate = "toolcell_sdk::schemars")]
/// # struct Nothing {}
/// fn tools() -> Vec<Tool> {
///     Vec::new()
/// }
///
/// fn prompts() -> Vec<Prompt> {
///     vec![Prompt::new("hello", |_: Nothing| Ok(Message::user("Say hello.")))]
/// }
///
/// // No resources or templates: the plugin lists none.
/// toolcell_sdk::export_plugin! { tools: tools, prompts: prompts }
/// # fn main() {}
/// ```
///
/// Each function is called once per call (each call runs in a fresh
/// instance), so keep them cheap: [`Tool`] and [`Prompt`] derive their
/// schemas lazily, and readers and handlers run only when called.
///
/// The component's exports exist only in a WebAssembly build. Built for the
/// host (as `cargo build` in a workspace does with every member, and
/// `cargo test` with a plugin's unit tests), the crate exports nothing:
/// native linkers refuse the contract's export names
/// (`cabi_post_toolcell:plugin/tools@0.1.0#call-tool`).
#[macro_export]
macro_rules! export_plugin {
    (
        tools: $tools:path
        $(, resources: $resources:path)?
        $(, templates: $templates:path)?
        $(, prompts: $prompts:path)?
        $(,)?
    ) => {
        #[doc(hidden)]
        #[allow(dead_code)] // never constructed: the exports call its functions
        struct __ToolcellPlugin;

        impl $crate::__private::ToolsGuest for __ToolcellPlugin {
            fn list_tools() -> ::std::vec::Vec<$crate::__private::ToolDescriptor> {
                $crate::__private::list_tools($tools())
            }

            fn call_tool(call: $crate::__private::Call) -> $crate::__private::ToolResult {
                $crate::__private::call_tool($tools(), call)
            }
        }

        impl $crate::__private::ResourcesGuest for __ToolcellPlugin {
            fn list_resources() -> ::std::vec::Vec<$crate::__private::ResourceDescriptor> {
                $crate::__private::list_resources($crate::__export_plugin_part!($($resources)?))
            }

            fn list_templates() -> ::std::vec::Vec<$crate::__private::TemplateDescriptor> {
                $crate::__private::list_templates($crate::__export_plugin_part!($($templates)?))
            }

            fn read_resource(
                uri: ::std::string::String,
            ) -> ::std::result::Result<
                ::std::vec::Vec<$crate::__private::ResourceContents>,
                $crate::__private::Failure,
            > {
                $crate::__private::read_resource(
                    $crate::__export_plugin_part!($($resources)?),
                    $crate::__export_plugin_part!($($templates)?),
                    uri,
                )
            }
        }

        impl $crate::__private::PromptsGuest for __ToolcellPlugin {
            fn list_prompts() -> ::std::vec::Vec<$crate::__private::PromptDescriptor> {
                $crate::__private::list_prompts($crate::__export_plugin_part!($($prompts)?))
            }

            fn get_prompt(
                name: ::std::string::String,
                arguments: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
            ) -> ::std::result::Result<$crate::__private::FilledPrompt, $crate::__private::Failure>
            {
                $crate::__private::get_prompt(
                    $crate::__export_plugin_part!($($prompts)?),
                    name,
                    arguments,
                )
            }
        }

        impl $crate::__private::CompletionsGuest for __ToolcellPlugin {
            fn complete(
                request: $crate::__private::CompletionRequest,
            ) -> ::std::result::Result<$crate::__private::Completion, $crate::__private::Failure>
            {
                $crate::__private::complete(
                    $crate::__export_plugin_part!($($prompts)?),
                    $crate::__export_plugin_part!($($templates)?),
                    request,
                )
            }
        }

        #[cfg(target_family = "wasm")]
        $crate::__private::bindings::__export_plugin_world!(
            __ToolcellPlugin with_types_in $crate::__private::bindings
        );
        // Natively nothing calls the listing functions; these uses keep them
        // (and all they call) from being reported as dead code.
        #[cfg(not(target_family = "wasm"))]
        const _: fn() -> ::std::vec::Vec<$crate::Tool> = $tools;
        $(
            #[cfg(not(target_family = "wasm"))]
            const _: fn() -> ::std::vec::Vec<$crate::Resource> = $resources;
        )?
        $(
            #[cfg(not(target_family = "wasm"))]
            const _: fn() -> ::std::vec::Vec<$crate::ResourceTemplate> = $templates;
        )?
        $(
            #[cfg(not(target_family = "wasm"))]
            const _: fn() -> ::std::vec::Vec<$crate::Prompt> = $prompts;
        )?
    };
    ($tools:path) => {
        $crate::export_plugin! { tools: $tools }
    };
}

/// One part of [`export_plugin!`]: the listing function's result, or an empty list.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_plugin_part {
    () => {
        ::std::vec::Vec::new()
    };
    ($part:path) => {
        $part()
    };
}
