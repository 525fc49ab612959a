//! Ctrl-C during long work in Rust: loops that hold the GIL look for signals
//! every few thousand steps, and work done without the GIL runs on a thread
//! of its own while the caller's thread looks for them.
//!
//! Python runs a signal's handler (the one of SIGINT raises
//! `KeyboardInterrupt`) only when the thread that holds the GIL asks for it,
//! which the interpreter does between bytecodes and Rust code does with
//! `check_signals`; a loop that never asks delays a Ctrl-C until it ends.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

use pyo3::prelude::*;

/// Steps of a loop holding the GIL between two looks for signals. A look is
/// an atomic load unless a signal came; a step (reading a key or a task) is
/// 0.1 to 2 µs, so this looks every millisecond or so and costs nothing
/// measurable.
const SIGNALS_EVERY: usize = 4096;

/// How often the caller's thread looks for signals while work runs without
/// the GIL (see [`beside`]).
const POLL: Duration = Duration::from_millis(10);

/// What work done without the GIL asks now and then: whether to give up.
pub(crate) type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

/// Looks for signals at every [`SIGNALS_EVERY`]-th `step` of a loop that
/// holds the GIL, raising the handler's error (`KeyboardInterrupt`).
pub(crate) fn check_every(py: Python<'_>, step: usize) -> PyResult<()> {
    if step.is_multiple_of(SIGNALS_EVERY) {
        py.check_signals()
    } else {
        Ok(())
    }
}

/// Runs `work` with the GIL released on a thread of its own, and `meanwhile`
/// on this thread with the GIL held; then, until `work` returns, looks for
/// signals every [`POLL`]. On a signal, the `stop` that `work` is handed
/// says yes, `work` is waited for (it gives up soon after: nothing of it is
/// left running) and the handler's error is raised.
///
/// A panic in `work` is resumed here.
pub(crate) fn beside<T: Send, U>(
    py: Python<'_>,
    work: impl FnOnce(Stop<'_>) -> T + Send,
    meanwhile: impl FnOnce() -> U,
) -> PyResult<(T, U)> {
    py.check_signals()?;
    let stopped = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let caller = std::thread::current();
    std::thread::scope(|scope| {
        let running = scope.spawn(|| {
            let res = work(&|| stopped.load(Relaxed));
            // Woken, the caller stops waiting at once rather than at its
            // next look.
            done.store(true, Relaxed);
            caller.unpark();
            res
        });
        let beside = meanwhile();
        let mut interrupted = None;
        while !py.detach(|| {
            if !done.load(Relaxed) {
                std::thread::park_timeout(POLL);
            }
            done.load(Relaxed) || running.is_finished()
        }) {
            if let Err(err) = py.check_signals() {
                stopped.store(true, Relaxed);
                interrupted = Some(err);
                break;
            }
        }
        let res = py
            .detach(|| running.join())
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match interrupted {
            Some(err) => Err(err),
            None => Ok((res, beside)),
        }
    })
}

/// [`beside`] with nothing to do meanwhile.
pub(crate) fn detach_interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(Stop<'_>) -> T + Send,
) -> PyResult<T> {
    beside(py, work, || ()).map(|(res, ())| res)
}
