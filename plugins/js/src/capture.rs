//! The script's stdout and stderr, kept in memory (never WASI's stdout, which
//! goes to the server's log) up to a byte budget they share.
//!
//! One [`Capture`] per call, in a thread-local: the host runs each call in a
//! fresh instance, so nothing here outlives the call.

use std::cell::RefCell;

/// What the script wrote, and why it stopped early, if it did.
#[derive(Debug, Default)]
pub struct Capture {
    /// Text written to stdout (console.log, process.stdout.write).
    pub stdout: String,
    /// Text written to stderr (console.error, console.warn).
    pub stderr: String,
    /// Bytes the script tried to write in all, kept or not.
    pub attempted: usize,
    /// The budget for stdout and stderr together.
    pub limit: usize,
    /// Whether the budget ran out (the run was stopped there).
    pub truncated: bool,
    /// `process.exit(code)` was called with this code.
    pub exit: Option<i32>,
}

thread_local! {
    static CAPTURE: RefCell<Capture> = RefCell::new(Capture::default());
}

/// Starts a fresh capture with this budget.
pub fn start(limit: usize) {
    CAPTURE.with(|c| {
        *c.borrow_mut() = Capture {
            limit,
            ..Capture::default()
        }
    });
}

/// Appends `text` to stdout (`fd` 1) or stderr (anything else). Returns
/// false when the budget ran out: what fits was kept, and the run must stop.
pub fn write(fd: i32, text: &str) -> bool {
    CAPTURE.with(|c| {
        let mut c = c.borrow_mut();
        c.attempted += text.len();
        let used = c.stdout.len() + c.stderr.len();
        let room = c.limit.saturating_sub(used);
        let kept = if text.len() <= room {
            text
        } else {
            c.truncated = true;
            let mut end = room;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            &text[..end]
        };
        if fd == 1 {
            c.stdout.push_str(kept);
        } else {
            c.stderr.push_str(kept);
        }
        !c.truncated
    })
}

/// Records `process.exit(code)`.
pub fn exit(code: i32) {
    CAPTURE.with(|c| c.borrow_mut().exit = Some(code));
}

/// Whether the run was stopped on purpose (output budget, `process.exit`):
/// the error that unwound the script is then not the script's.
pub fn stopped() -> bool {
    CAPTURE.with(|c| {
        let c = c.borrow();
        c.truncated || c.exit.is_some()
    })
}

/// Ends the capture and returns it.
pub fn finish() -> Capture {
    CAPTURE.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

/// The code `process.exit` was called with, if it was.
pub fn exit_code() -> Option<i32> {
    CAPTURE.with(|c| c.borrow().exit)
}
