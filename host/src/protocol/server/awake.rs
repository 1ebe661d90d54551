//! One call thread that stays awake for a moment between calls, so that a
//! client making calls one after another does not pay for waking a parked
//! thread on the way to its guest.
//!
//! A call is handed to this thread when it is free, and to the blocking
//! pool otherwise: a call stuck in the kernel here holds nothing another
//! call needs, since the next one simply goes to the pool.
//!
//! After a call the thread watches for the next for [`LINGER`] before it
//! parks, but only when the next is likely to come soon: the call was the
//! only one running (with others running, the cores are theirs), and it
//! came within [`SOON`] of the end of the one before (a client calling back
//! to back). A client whose calls are further apart gains nothing from the
//! watch and loses by it: the watching thread holds a core that the client
//! itself, woken by the answer, may be waiting for.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long the thread watches for the next call after one ends. It costs
/// at most this much CPU per call, and only while no call comes.
const LINGER: Duration = Duration::from_micros(150);

/// A call that came within this of the end of the one before is taken for
/// a client calling back to back, which the thread then watches for: a
/// client's turn-around (reading a 27 KB answer, writing the next request)
/// is about 200 µs on a two-core machine. With calls 1 ms apart, watching
/// made each 90 µs slower.
const SOON: Duration = Duration::from_micros(500);

/// The thread is parked or watching, with no call.
const FREE: u8 = 0;
/// A call is being handed to it.
const HANDING: u8 = 1;
/// A call waits in `job`.
const HANDED: u8 = 2;
/// It is running a call.
const RUNNING: u8 = 3;

type Job = Box<dyn FnOnce() + Send>;

/// The awake call thread, started with the first call.
pub(super) struct Awake {
    shared: Arc<Shared>,
    /// The thread, once started; `None` if it could not be.
    thread: OnceLock<Option<Thread>>,
}

struct Shared {
    state: AtomicU8,
    job: Mutex<Option<Job>>,
    /// Calls running now, this thread's included.
    running: Arc<AtomicUsize>,
}

impl Awake {
    /// An awake thread for calls counted in `running` (the server's calls
    /// in flight).
    pub(super) fn new(running: Arc<AtomicUsize>) -> Awake {
        Awake {
            shared: Arc::new(Shared {
                state: AtomicU8::new(FREE),
                job: Mutex::new(None),
                running,
            }),
            thread: OnceLock::new(),
        }
    }

    /// Runs `job` on the awake thread if it is free; gives `job` back if it
    /// is not (or the thread could not be started).
    pub(super) fn run<J: FnOnce() + Send + 'static>(&self, job: J) -> Result<(), J> {
        let Some(thread) = self.thread.get_or_init(|| start(&self.shared)) else {
            return Err(job);
        };
        let shared = &self.shared;
        if shared
            .state
            .compare_exchange(FREE, HANDING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(job);
        }
        *lock(&shared.job) = Some(Box::new(job));
        shared.state.store(HANDED, Ordering::Release);
        // Cheap unless the thread is parked: then it is the wake-up.
        thread.unpark();
        Ok(())
    }
}

fn start(shared: &Arc<Shared>) -> Option<Thread> {
    let mine = shared.clone();
    let spawned = std::thread::Builder::new()
        .name("toolcell-call".to_string())
        .spawn(move || serve(&mine));
    match spawned {
        Ok(handle) => Some(handle.thread().clone()),
        Err(error) => {
            tracing::warn!("cannot start the awake call thread ({error}): calls use the pool");
            None
        }
    }
}

fn serve(shared: &Shared) {
    let mut linger = false;
    loop {
        let free = Instant::now();
        wait(shared, linger);
        let idle = free.elapsed();
        shared.state.store(RUNNING, Ordering::Relaxed);
        let job = lock(&shared.job).take();
        if let Some(job) = job {
            // A panic ends the call (its answer is dropped, which the caller
            // reports), not the thread.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
        // Its own call is still counted until its caller takes the answer.
        linger = idle < SOON && shared.running.load(Ordering::Acquire) <= 1;
        shared.state.store(FREE, Ordering::Release);
    }
}

/// Returns once a call has been handed over: watching for [`LINGER`] first
/// if `linger`, parked after that.
fn wait(shared: &Shared, linger: bool) {
    if linger {
        let since = Instant::now();
        let mut turns = 0u32;
        loop {
            if shared.state.load(Ordering::Acquire) == HANDED {
                return;
            }
            turns = turns.wrapping_add(1);
            if turns.is_multiple_of(64) && since.elapsed() >= LINGER {
                break;
            }
            std::hint::spin_loop();
        }
    }
    while shared.state.load(Ordering::Acquire) != HANDED {
        std::thread::park();
    }
}

fn lock(job: &Mutex<Option<Job>>) -> std::sync::MutexGuard<'_, Option<Job>> {
    job.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn runs_calls_one_at_a_time_and_refuses_while_busy() {
        let awake = Awake::new(Arc::default());
        let (tx, rx) = mpsc::channel();
        let (release, hold) = mpsc::channel::<()>();
        let first = tx.clone();
        assert!(
            awake
                .run(move || {
                    hold.recv().unwrap();
                    first.send(1).unwrap();
                })
                .is_ok()
        );
        // Busy: the next call is given back, to go to the pool.
        let second = tx.clone();
        assert!(awake.run(move || second.send(2).unwrap()).is_err());
        release.send(()).unwrap();
        assert_eq!(rx.recv().unwrap(), 1);
        // Free again, whether it is still watching or has parked.
        for pause in [0, 5] {
            std::thread::sleep(Duration::from_millis(pause));
            let mut job = Some({
                let tx = tx.clone();
                move || tx.send(3).unwrap()
            });
            let started = Instant::now();
            while let Err(back) = awake.run(job.take().unwrap()) {
                assert!(started.elapsed() < Duration::from_secs(5), "never free");
                job = Some(back);
                std::thread::yield_now();
            }
            assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), 3);
        }
    }

    #[test]
    fn a_panicking_call_leaves_the_thread_serving() {
        let awake = Awake::new(Arc::default());
        let started = Instant::now();
        let mut job: Option<Box<dyn FnOnce() + Send>> = Some(Box::new(|| panic!("a bad call")));
        while let Err(back) = awake.run(job.take().unwrap()) {
            job = Some(back);
            std::thread::yield_now();
        }
        let (tx, rx) = mpsc::channel();
        let mut job = Some(move || tx.send(()).unwrap());
        while let Err(back) = awake.run(job.take().unwrap()) {
            assert!(started.elapsed() < Duration::from_secs(5), "never free");
            job = Some(back);
            std::thread::yield_now();
        }
        rx.recv_timeout(Duration::from_secs(5)).unwrap();
    }
}
