//! The job queue, in Node's order: every promise job (microtask) runs before
//! the next timer, and timers run in the order they fall due, waiting for the
//! clock when the next one is not due yet (the host's deadline still ends a
//! run that waits too long).
//!
//! Boa's `SimpleJobExecutor` runs due timers before pending microtasks, so
//! `setTimeout(f, 0)` could overtake `Promise.resolve().then(g)`.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use boa_engine::context::time::JsInstant;
use boa_engine::job::{GenericJob, IntervalJob, Job, JobExecutor, PromiseJob, TimeoutJob};
use boa_engine::{Context, JsResult};

enum Timer {
    Timeout(TimeoutJob),
    Interval(IntervalJob),
}

/// The queues of one run.
#[derive(Default)]
pub struct Jobs {
    promise: RefCell<VecDeque<PromiseJob>>,
    generic: RefCell<VecDeque<GenericJob>>,
    /// By due time, then by the order they were set.
    timers: RefCell<BTreeMap<(JsInstant, u64), Timer>>,
    next: Cell<u64>,
}

impl Jobs {
    fn add_timer(&self, due: JsInstant, timer: Timer) {
        let seq = self.next.get();
        self.next.set(seq + 1);
        self.timers.borrow_mut().insert((due, seq), timer);
    }
}

impl JobExecutor for Jobs {
    fn enqueue_job(self: Rc<Self>, job: Job, context: &mut Context) {
        match job {
            Job::PromiseJob(job) => self.promise.borrow_mut().push_back(job),
            Job::GenericJob(job) => self.generic.borrow_mut().push_back(job),
            Job::TimeoutJob(job) => {
                let due = context.clock().now() + job.timeout();
                self.add_timer(due, Timer::Timeout(job));
            }
            Job::IntervalJob(job) => {
                let due = context.clock().now() + job.interval();
                self.add_timer(due, Timer::Interval(job));
            }
            // Async jobs (fetch, module loading) and finalization-registry
            // cleanups: nothing this runtime registers queues them.
            _ => {}
        }
    }

    fn run_jobs(self: Rc<Self>, context: &mut Context) -> JsResult<()> {
        loop {
            loop {
                let job = self.promise.borrow_mut().pop_front();
                let Some(job) = job else { break };
                job.call(context)?;
            }
            let generic = self.generic.borrow_mut().pop_front();
            if let Some(job) = generic {
                job.call(context)?;
                continue;
            }
            context.clear_kept_objects();
            let next = self.timers.borrow_mut().pop_first();
            let Some(((due, _), timer)) = next else {
                return Ok(());
            };
            let now = context.clock().now();
            if due > now {
                std::thread::sleep((due - now).into());
            }
            match timer {
                Timer::Timeout(job) => {
                    if !job.cancelled() {
                        job.call(context)?;
                    }
                }
                Timer::Interval(job) => {
                    if !job.cancelled() {
                        job.call(context)?;
                        if !job.cancelled() {
                            let due = context.clock().now() + job.interval();
                            self.add_timer(due, Timer::Interval(job));
                        }
                    }
                }
            }
        }
    }
}
