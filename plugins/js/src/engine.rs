//! One run of a script in a fresh Boa context: the runtime (timers,
//! microtasks, structuredClone, TextEncoder), the host functions the prelude
//! builds Node's globals on ([`natives`]), the prelude itself, the script, and
//! every job it queued, run to completion.
//!
//! Files go through WASI (`std::fs`), so the sandbox alone decides what is
//! reachable; nothing here checks paths.

use std::cell::RefCell;
use std::io::ErrorKind;
use std::rc::Rc;

use boa_engine::builtins::promise::{OperationType, PromiseState};
use boa_engine::error::{EngineError, PanicError};
use boa_engine::object::builtins::{JsArray, JsPromise};
use boa_engine::object::{JsObject, ObjectInitializer};
use boa_engine::property::Attribute;
use boa_engine::{
    Context, JsArgs, JsError, JsResult, JsString, JsValue, NativeFunction, Source, js_string,
};
use boa_runtime::RuntimeExtension;
use boa_runtime::extensions::{
    Base64Extension, EncodingExtension, MicrotaskExtension, StructuredCloneExtension,
    TimeoutExtension,
};

use crate::capture;

/// How deep calls may nest before the run stops with "Maximum call stack size
/// exceeded". Node allows about 11,000 simple frames.
const RECURSION_LIMIT: usize = 10_000;

/// How many values the VM's stack may hold (Boa's default, 10,240, stops
/// simple recursion at a depth of about 1,000). Its memory counts against the
/// plugin's `memory_mb`.
const STACK_SIZE_LIMIT: usize = 1 << 20;

/// How the script ended, besides what it wrote.
pub enum Ending {
    /// It ran to the end (or called `process.exit(0)`).
    Finished,
    /// It called `process.exit` with a code other than 0.
    Exit(i32),
    /// An uncaught error: its report, Node-style (`Uncaught Error: ...` and a stack).
    Uncaught(String),
}

thread_local! {
    static STDIN: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Promises rejected with no handler yet, in the order they were rejected.
#[derive(Default)]
struct Hooks {
    rejected: RefCell<Vec<JsObject>>,
}

impl boa_engine::context::HostHooks for Hooks {
    fn promise_rejection_tracker(
        &self,
        promise: &JsObject<boa_engine::builtins::promise::Promise>,
        operation: OperationType,
        _context: &mut Context,
    ) {
        let promise = promise.clone().upcast();
        let mut rejected = self.rejected.borrow_mut();
        match operation {
            OperationType::Reject => rejected.push(promise),
            OperationType::Handle => rejected.retain(|p| !JsObject::equals(p, &promise)),
        }
    }
}

/// Runs `code` with `stdin` as its standard input and `cwd` as its working
/// directory. What it writes is in [`capture`].
pub fn run(code: &str, stdin: String, cwd: &str) -> Result<Ending, String> {
    STDIN.with(|s| *s.borrow_mut() = stdin);
    let hooks = Rc::new(Hooks::default());
    let mut context = Context::builder()
        .host_hooks(hooks.clone())
        .job_executor(Rc::new(crate::jobs::Jobs::default()))
        .build()
        .map_err(|e| format!("cannot start the JavaScript engine: {e}"))?;
    let context = &mut context;
    let limits = context.runtime_limits_mut();
    limits.set_recursion_limit(RECURSION_LIMIT);
    limits.set_stack_size_limit(STACK_SIZE_LIMIT);
    register_runtime(context).map_err(|e| format!("cannot start the runtime: {e}"))?;
    let util = install_prelude(context, cwd).map_err(|e| format!("the prelude failed: {e}"))?;

    let mut outcome =
        context.eval(Source::from_bytes(code).with_path(std::path::Path::new("[eval]")));
    if outcome.is_ok() {
        outcome = context.run_jobs().map(|()| JsValue::undefined());
    }
    if let Some(code) = capture::exit_code() {
        return Ok(if code == 0 {
            Ending::Finished
        } else {
            Ending::Exit(code)
        });
    }
    if let Err(error) = outcome {
        if capture::stopped() {
            return Ok(Ending::Finished);
        }
        return Ok(Ending::Uncaught(report(context, &util, error)));
    }
    // The first rejection nobody handled ends the run, as in Node.
    let rejected = hooks.rejected.borrow().first().cloned();
    if let Some(promise) = rejected
        && let Ok(promise) = JsPromise::from_object(promise)
        && let PromiseState::Rejected(reason) = promise.state()
    {
        return Ok(Ending::Uncaught(report(
            context,
            &util,
            JsError::from_opaque(reason),
        )));
    }
    let exit_code = context
        .global_object()
        .get(js_string!("process"), context)
        .ok()
        .and_then(|p| p.as_object())
        .and_then(|p| p.get(js_string!("exitCode"), context).ok())
        .and_then(|c| c.as_number())
        .map(|c| c as i32)
        .unwrap_or(0);
    Ok(if exit_code == 0 {
        Ending::Finished
    } else {
        Ending::Exit(exit_code)
    })
}

fn register_runtime(context: &mut Context) -> JsResult<()> {
    (
        Base64Extension,
        TimeoutExtension,
        EncodingExtension,
        MicrotaskExtension,
        StructuredCloneExtension,
    )
        .register(None, context)
}

/// Evaluates inspect.js and the prelude, which defines the Node-like globals
/// on the host functions. Returns inspect.js's value (`inspect`, `format`,
/// `formatError`), used to report uncaught errors.
fn install_prelude(context: &mut Context, cwd: &str) -> JsResult<JsObject> {
    let util = context.eval(Source::from_bytes(include_str!("inspect.js")))?;
    let prelude = context.eval(Source::from_bytes(include_str!("prelude.js")))?;
    let natives = natives(context, cwd);
    let prelude = prelude
        .as_callable()
        .ok_or_else(|| JsError::from_opaque(js_string!("the prelude is not a function").into()))?;
    prelude.call(
        &JsValue::undefined(),
        &[natives.into(), util.clone()],
        context,
    )?;
    util.as_object()
        .ok_or_else(|| JsError::from_opaque(js_string!("inspect.js gave no object").into()))
}

/// Node's report of an uncaught error: `Uncaught` and the error's stack, or
/// the thrown value as `util.inspect` shows it.
fn report(context: &mut Context, util: &JsObject, error: JsError) -> String {
    if let Some(EngineError::RuntimeLimit(limit)) = error.as_engine() {
        return match limit {
            boa_engine::error::RuntimeLimitError::Recursion
            | boa_engine::error::RuntimeLimitError::StackSize => {
                "Uncaught RangeError: Maximum call stack size exceeded (the run was stopped: \
                 calls nested deeper than the engine allows)"
                    .to_string()
            }
            other => format!("Uncaught RangeError: {other}"),
        };
    }
    let fallback = error.to_string();
    let value = match error.into_opaque(context) {
        Ok(value) => value,
        Err(_) => return format!("Uncaught {fallback}"),
    };
    let is_error = value
        .as_object()
        .is_some_and(|o| o.is::<boa_engine::builtins::error::Error>());
    let name = if is_error { "formatError" } else { "inspect" };
    let formatted = util
        .get(JsString::from(name), context)
        .ok()
        .and_then(|f| f.as_callable())
        .and_then(|f| f.call(&JsValue::undefined(), &[value], context).ok())
        .and_then(|text| text.as_string().map(|s| s.to_std_string_escaped()));
    format!("Uncaught {}", formatted.unwrap_or(fallback))
}

/// An error JavaScript cannot catch: it unwinds the whole run.
fn stop(reason: &str) -> JsError {
    EngineError::from(PanicError::new(reason)).into()
}

fn string_arg(args: &[JsValue], index: usize, context: &mut Context) -> JsResult<String> {
    Ok(args
        .get_or_undefined(index)
        .to_string(context)?
        .to_std_string_escaped())
}

/// Node's error code for a failed file operation.
fn code_of(error: &std::io::Error) -> &'static str {
    match error.kind() {
        ErrorKind::NotFound => "ENOENT",
        ErrorKind::PermissionDenied => "EACCES",
        ErrorKind::AlreadyExists => "EEXIST",
        ErrorKind::NotADirectory => "ENOTDIR",
        ErrorKind::IsADirectory => "EISDIR",
        ErrorKind::DirectoryNotEmpty => "ENOTEMPTY",
        ErrorKind::ReadOnlyFilesystem => "EROFS",
        ErrorKind::InvalidInput | ErrorKind::InvalidFilename => "EINVAL",
        ErrorKind::Unsupported => "EPERM",
        _ => "EIO",
    }
}

/// `[null, value]` or `[code, undefined, detail]`, which the prelude turns
/// into a Node-style error (`ENOENT: no such file or directory, open 'x'`).
fn fs_result(result: std::io::Result<JsValue>, context: &mut Context) -> JsValue {
    let items = match result {
        Ok(value) => vec![JsValue::null(), value],
        Err(error) => vec![
            JsString::from(code_of(&error)).into(),
            JsValue::undefined(),
            JsString::from(error.to_string()).into(),
        ],
    };
    JsArray::from_iter(items, context).into()
}

/// The host functions the prelude uses.
fn natives(context: &mut Context, cwd: &str) -> JsObject {
    let env = ObjectInitializer::new(context).build();
    for (key, value) in std::env::vars() {
        // A fresh, ordinary object: defining a data property cannot fail.
        let _ = env.set(JsString::from(key), JsString::from(value), false, context);
    }
    let mut natives = ObjectInitializer::new(context);
    natives
        .property(js_string!("cwdPath"), JsString::from(cwd), Attribute::all())
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let fd = args.get_or_undefined(0).to_i32(context)?;
                let text = string_arg(args, 1, context)?;
                if capture::write(fd, &text) {
                    Ok(JsValue::undefined())
                } else {
                    Err(stop("the output budget ran out"))
                }
            }),
            js_string!("write"),
            2,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let code = args.get_or_undefined(0).to_i32(context)?;
                capture::exit(code);
                Err(stop("process.exit"))
            }),
            js_string!("exit"),
            1,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, _, _| {
                let text = STDIN.with(|s| s.borrow().clone());
                Ok(JsString::from(text).into())
            }),
            js_string!("readStdin"),
            0,
        )
        .function(
            NativeFunction::from_fn_ptr(|this, _, context| {
                this.as_object()
                    .map(|o| o.get(js_string!("cwdPath"), context))
                    .unwrap_or(Ok(JsValue::undefined()))
            }),
            js_string!("cwd"),
            0,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                let result = std::fs::read(&path)
                    .map(|bytes| JsString::from(String::from_utf8_lossy(&bytes).as_ref()).into());
                Ok(fs_result(result, context))
            }),
            js_string!("readFile"),
            1,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                let text = string_arg(args, 1, context)?;
                let append = args.get_or_undefined(2).to_boolean();
                let result = if append {
                    use std::io::Write;
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .and_then(|mut f| f.write_all(text.as_bytes()))
                } else {
                    std::fs::write(&path, text.as_bytes())
                };
                Ok(fs_result(result.map(|()| JsValue::undefined()), context))
            }),
            js_string!("writeFile"),
            3,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                Ok(std::fs::metadata(&path).is_ok().into())
            }),
            js_string!("exists"),
            1,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                let names = std::fs::read_dir(&path).and_then(|entries| {
                    let mut names = entries
                        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                        .collect::<std::io::Result<Vec<_>>>()?;
                    // Node (libuv's scandir) lists names sorted by their bytes.
                    names.sort();
                    Ok(names)
                });
                let result = names.map(|names| {
                    let values = names.into_iter().map(|n| JsString::from(n).into());
                    JsArray::from_iter(values, context).into()
                });
                Ok(fs_result(result, context))
            }),
            js_string!("readdir"),
            1,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                let result = std::fs::metadata(&path).map(|meta| {
                    let kind = if meta.is_dir() {
                        "dir"
                    } else if meta.is_file() {
                        "file"
                    } else {
                        "other"
                    };
                    let mtime = meta
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
                    ObjectInitializer::new(context)
                        .property(js_string!("kind"), JsString::from(kind), Attribute::all())
                        .property(js_string!("size"), meta.len() as f64, Attribute::all())
                        .property(js_string!("mtimeMs"), mtime, Attribute::all())
                        .build()
                        .into()
                });
                Ok(fs_result(result, context))
            }),
            js_string!("stat"),
            1,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                let result = if args.get_or_undefined(1).to_boolean() {
                    std::fs::create_dir_all(&path)
                } else {
                    std::fs::create_dir(&path)
                };
                Ok(fs_result(result.map(|()| JsValue::undefined()), context))
            }),
            js_string!("mkdir"),
            2,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let path = string_arg(args, 0, context)?;
                let recursive = args.get_or_undefined(1).to_boolean();
                let result = match std::fs::symlink_metadata(&path) {
                    Ok(meta) if meta.is_dir() && recursive => std::fs::remove_dir_all(&path),
                    Ok(meta) if meta.is_dir() => std::fs::remove_dir(&path),
                    Ok(_) => std::fs::remove_file(&path),
                    Err(e) => Err(e),
                };
                Ok(fs_result(result.map(|()| JsValue::undefined()), context))
            }),
            js_string!("remove"),
            2,
        )
        .function(
            NativeFunction::from_fn_ptr(|_, args, context| {
                let from = string_arg(args, 0, context)?;
                let to = string_arg(args, 1, context)?;
                let result = std::fs::rename(&from, &to);
                Ok(fs_result(result.map(|()| JsValue::undefined()), context))
            }),
            js_string!("rename"),
            2,
        )
        .property(js_string!("envVars"), env, Attribute::all())
        .function(
            NativeFunction::from_fn_ptr(|this, _, context| {
                this.as_object()
                    .map(|o| o.get(js_string!("envVars"), context))
                    .unwrap_or(Ok(JsValue::undefined()))
            }),
            js_string!("env"),
            0,
        );
    natives.build()
}
