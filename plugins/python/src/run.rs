//! One run of Python code: a fresh RustPython interpreter, the prelude
//! (`prelude.py`), the code, and what it printed.
//!
//! Output is captured in [`CAPTURE`], which the prelude's `sys.stdout` and
//! `sys.stderr` write into through the native `_toolcell_write`. When the output
//! passes the limit the write says so and the prelude raises
//! `OutputLimitExceeded` (a `BaseException`); every later write raises again,
//! so code that catches it cannot go on printing.

use std::cell::RefCell;
use std::path::PathBuf;

use rustpython::InterpreterBuilderExt;
use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::builtins::PyStrRef;
use rustpython_vm::scope::Scope;
use rustpython_vm::{AsObject, PyObjectRef, Settings};
use rustpython_vm::{InterpreterBuilder, PyResult, VirtualMachine};

/// Python's recursion limit in the sandbox: CPython's. The host gives each call
/// a 2 MiB wasm stack (`MAX_WASM_STACK_BYTES`), which holds this many levels of
/// plain Python recursion, so a runaway one ends with a `RecursionError`;
/// recursion through builtins (`map`, `getattr`, `sorted`'s key) takes more
/// native stack per level and may exhaust it first, which the host reports as
/// a crash (measured: see docs/plugins/python.md).
const RECURSION_LIMIT: usize = 1000;

/// The name the code's tracebacks show for it.
const SOURCE_NAME: &str = "<run_python>";

/// What a run printed, and how it ended.
pub struct Outcome {
    /// What the code wrote to `sys.stdout`, up to the limit.
    pub stdout: String,
    /// What the code wrote to `sys.stderr`, up to the limit.
    pub stderr: String,
    /// Whether the output passed the limit and the run was stopped.
    pub truncated: bool,
    /// Why the run failed: an uncaught exception's traceback, or a nonzero exit.
    pub failure: Option<String>,
}

/// The output so far of the one run this instance makes.
#[derive(Default)]
struct Capture {
    stdout: String,
    stderr: String,
    limit: usize,
    truncated: bool,
}

impl Capture {
    /// Appends `text` to stream `fd`; returns whether the run must stop.
    fn write(&mut self, fd: i32, text: &str) -> bool {
        if self.truncated {
            return true;
        }
        let room = self
            .limit
            .saturating_sub(self.stdout.len() + self.stderr.len());
        let stream = if fd == 2 {
            &mut self.stderr
        } else {
            &mut self.stdout
        };
        if text.len() <= room {
            stream.push_str(text);
            return false;
        }
        let mut end = room;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        stream.push_str(&text[..end]);
        self.truncated = true;
        true
    }
}

thread_local! {
    static CAPTURE: RefCell<Capture> = RefCell::new(Capture::default());
}

/// Runs `code` with `stdin` as its standard input, in `cwd` if given, with
/// at most `limit` bytes of output.
pub fn run(code: &str, stdin: &str, cwd: Option<PathBuf>, limit: usize) -> Outcome {
    CAPTURE.with_borrow_mut(|capture| {
        *capture = Capture {
            limit,
            ..Capture::default()
        }
    });
    let mut failure = None;
    if let Some(dir) = cwd
        && let Err(e) = std::env::set_current_dir(&dir)
    {
        failure = Some(format!(
            "cannot make `{}` the working directory: {e}",
            dir.display()
        ));
    }
    if failure.is_none() {
        let mut settings = Settings::default();
        settings.import_site = false;
        settings.isolated = true;
        settings.ignore_environment = true;
        settings.user_site_directory = false;
        settings.write_bytecode = false;
        // Not RustPython's path-based importer, which costs every call milliseconds to set up:
        // the prelude's own finder imports the code's modules, and only when it asks for one.
        settings.allow_external_library = false;
        // UTF-8 mode (PEP 540): text is UTF-8 unless the code says otherwise, as under
        // CPython in a UTF-8 locale. Otherwise creating `sys.stdout` and every `open()`
        // without an encoding would import `locale` to ask: over a third of a run's start.
        settings.utf8_mode = 1;
        settings.argv = vec![String::new()];
        let interpreter = InterpreterBuilder::new()
            .settings(settings)
            .init_stdlib()
            .interpreter();
        failure = interpreter.enter(|vm| {
            vm.recursion_limit.set(RECURSION_LIMIT);
            let (scope, format) = match prepare(vm, stdin, limit) {
                Ok(prepared) => prepared,
                Err(exc) => {
                    return Some(format!(
                        "the Python interpreter failed to start:\n{}",
                        traceback(vm, &exc, None)
                    ));
                }
            };
            match vm.run_string(scope, code, SOURCE_NAME.to_owned()) {
                Ok(_) => None,
                Err(exc) => ended(vm, exc, &format),
            }
        });
    }
    let capture = CAPTURE.take();
    Outcome {
        stdout: capture.stdout,
        stderr: capture.stderr,
        // A run stopped at the limit is not also a failure: whatever it raised
        // then is the stop.
        failure: failure.filter(|_| !capture.truncated),
        truncated: capture.truncated,
    }
}

/// Runs the prelude and returns the scope of `__main__` for the code, and the prelude's
/// `_toolcell_format`, which writes a traceback.
fn prepare(vm: &VirtualMachine, stdin: &str, limit: usize) -> PyResult<(Scope, PyObjectRef)> {
    let prelude = vm.new_scope_with_builtins();
    let write = vm.new_function("_toolcell_write", |fd: i32, text: PyStrRef| {
        let text = text.as_wtf8().to_string_lossy();
        CAPTURE.with_borrow_mut(|capture| capture.write(fd, &text))
    });
    prelude
        .globals
        .set_item("_toolcell_write", write.into(), vm)?;
    prelude
        .globals
        .set_item("_toolcell_stdin", vm.ctx.new_str(stdin).into(), vm)?;
    prelude.globals.set_item(
        "_toolcell_csv_port",
        vm.ctx.new_str(include_str!("csv_port.py")).into(),
        vm,
    )?;
    prelude.globals.set_item(
        "_toolcell_expat_port",
        vm.ctx.new_str(include_str!("expat_port.py")).into(),
        vm,
    )?;
    let stop = format!("output passed {limit} bytes; the run was stopped");
    prelude
        .globals
        .set_item("_toolcell_stop", vm.ctx.new_str(stop).into(), vm)?;
    vm.run_string(
        prelude.clone(),
        include_str!("prelude.py"),
        "<prelude>".to_owned(),
    )?;
    let format = prelude.globals.get_item("_toolcell_format", vm)?;
    Ok((vm.new_scope_with_main()?, format))
}

/// How a run that raised `exc` ended: `None` for `sys.exit(0)`, else why it failed.
fn ended(vm: &VirtualMachine, exc: PyBaseExceptionRef, format: &PyObjectRef) -> Option<String> {
    if exc.fast_isinstance(vm.ctx.exceptions.system_exit) {
        // Writes a message argument to sys.stderr, as CPython does.
        let status = vm.handle_exit_exception(exc);
        return (status != 0).then(|| format!("the code exited with status {status}"));
    }
    Some(traceback(vm, &exc, Some(format)))
}

/// `exc` with its traceback, as CPython prints it: by the prelude's `format` (the `traceback`
/// module without the prelude's own frames), which also shows each frame's source line (the
/// code is in `linecache`); RustPython's own writer (`KeyError: k` for `KeyError: 'k'`, no
/// source lines) if the prelude did not run or that fails.
fn traceback(
    vm: &VirtualMachine,
    exc: &PyBaseExceptionRef,
    format: Option<&PyObjectRef>,
) -> String {
    let formatted = format
        .map(|format| format.call((exc.clone(),), vm))
        .and_then(Result::ok)
        .and_then(|text| text.str(vm).ok());
    if let Some(text) = formatted {
        return text.as_wtf8().to_string_lossy().into_owned();
    }
    let mut text = String::new();
    if vm.write_exception(&mut text, exc).is_err() {
        text.push_str("(the traceback could not be written)");
    }
    text
}
