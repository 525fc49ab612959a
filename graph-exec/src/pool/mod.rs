//! [`Pool`]: the worker loop every threaded executor of the workspace runs
//! (the local executor's threads and `taskgraph.dask.get`'s): one lock over
//! the executor's state, the workers asleep on it, the wait for a task to
//! start, and how many tasks a worker takes at once ([`Pace`]).
//!
//! The executor keeps what is its own: how a task runs, what a finished task
//! frees, where spilled results go. A worker's turn is always the same:
//! under the lock, report the tasks it ran and take the next ones
//! ([`Pool::next`]); without it, run them.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use graph_core::NodeId;

mod pace;
mod startable;

pub use pace::{Pace, QUICK_TASK};
use startable::Startable;

/// What a pool needs to know of the executor's state it guards.
pub trait Work {
    /// Whether no task may start any more: the run is done or failed.
    fn is_stopped(&self) -> bool;
    /// Lets no task start any more.
    fn stop(&mut self);
    /// Whether a worker may find a task to take now.
    fn has_next(&self) -> bool;
    /// Whether every task has run.
    fn is_done(&self) -> bool;
}

/// What a worker does after [`Pool::next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Run the tasks taken (or do what the taking left it to do: see
    /// [`Pool::next`]). `plenty`: more tasks could have been taken than
    /// were, which is when the size of a batch matters.
    Run {
        /// Whether a task was left to start, or several were taken.
        plenty: bool,
    },
    /// The wait ran out of patience with nothing to run: look for signals,
    /// then ask again.
    Wait,
    /// The run is over: the worker ends.
    Stop,
}

/// The executor's state under the pool's lock, with the workers asleep on
/// it; dereferences to the state.
#[derive(Debug)]
pub struct Shift<S> {
    state: S,
    /// Workers asleep, waiting for a task.
    idle: usize,
}

impl<S> Deref for Shift<S> {
    type Target = S;

    fn deref(&self) -> &S {
        &self.state
    }
}

impl<S> DerefMut for Shift<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.state
    }
}

/// The workers of one run and the state they share.
///
/// A worker takes the lock ([`Pool::lock`]), reports what it ran, and asks
/// for the next tasks ([`Pool::next`]), which waits while none is ready:
/// first watching a moment for one to become startable (quick tasks finish
/// within microseconds, and sleeping costs two system calls and a switch of
/// threads), then asleep on a condition variable until a finished task
/// wakes it. A worker that takes tasks while more are left wakes one that
/// sleeps, so that idle workers start what is ready. Once the run stops,
/// every worker wakes and ends; [`Pool::is_stopped`] tells them between the
/// tasks of a batch, without the lock.
///
/// # Example
///
/// Two threads drain a queue of ten tasks:
///
/// ```
/// use graph_core::NodeId;
/// use graph_exec::pool::{Pace, Pool, Step, Work};
///
/// struct Queue { left: Vec<NodeId>, running: usize, stop: bool }
///
/// impl Work for Queue {
///     fn is_stopped(&self) -> bool { self.stop }
///     fn stop(&mut self) { self.stop = true }
///     fn has_next(&self) -> bool { !self.left.is_empty() }
///     fn is_done(&self) -> bool { self.left.is_empty() && self.running == 0 }
/// }
///
/// let pool = Pool::new(Queue { left: (0..10).map(NodeId::new).collect(), running: 0, stop: false });
/// let ran = std::sync::atomic::AtomicUsize::new(0);
/// std::thread::scope(|scope| {
///     for _ in 0..2 {
///         scope.spawn(|| {
///             let (mut taken, mut pace) = (Vec::new(), Pace::new(4));
///             loop {
///                 let mut shift = pool.lock();
///                 shift.running -= taken.drain(..).count();
///                 let step = pool.next(shift, &mut taken, None, |queue, taken| {
///                     while taken.len() < pace.size() && let Some(node) = queue.left.pop() {
///                         taken.push(node);
///                         queue.running += 1;
///                     }
///                     !taken.is_empty()
///                 });
///                 let Step::Run { plenty } = step else { break };
///                 ran.fetch_add(taken.len(), std::sync::atomic::Ordering::Relaxed);
///                 pace.ended(taken.len(), plenty);
///             }
///         });
///     }
/// });
/// assert_eq!(ran.into_inner(), 10);
/// ```
#[derive(Debug)]
pub struct Pool<S> {
    shift: Mutex<Shift<S>>,
    wake: Condvar,
    startable: Startable,
    /// Set once the run stops, for workers to look at without the lock.
    stopped: AtomicBool,
}

impl<S: Work> Pool<S> {
    /// A pool over `state`, no worker asleep.
    pub fn new(state: S) -> Pool<S> {
        Pool {
            shift: Mutex::new(Shift { state, idle: 0 }),
            wake: Condvar::new(),
            startable: Startable::default(),
            stopped: AtomicBool::new(false),
        }
    }

    /// Takes the lock. A poisoned one is still usable: a worker's panic is
    /// caught and fails the run, and every critical section leaves the
    /// state consistent.
    pub fn lock(&self) -> MutexGuard<'_, Shift<S>> {
        lock(&self.shift)
    }

    /// Takes tasks for a worker: `take` moves tasks to start into `taken`
    /// (up to the worker's batch) and says whether the worker has something
    /// to do now (tasks taken, or anything else the executor does outside
    /// the lock, such as writing results to disk); while it has not, waits.
    /// The wait sleeps until a worker wakes it, or with `patience` at most
    /// that long, then [`Step::Wait`]. Once the state is stopped, or done
    /// (which stops it), every worker is woken and [`Step::Stop`] returned.
    /// The lock is let go on return.
    pub fn next<'p>(
        &'p self,
        mut shift: MutexGuard<'p, Shift<S>>,
        taken: &mut Vec<NodeId>,
        patience: Option<Duration>,
        mut take: impl FnMut(&mut S, &mut Vec<NodeId>) -> bool,
    ) -> Step {
        loop {
            if shift.state.is_stopped() {
                self.stop(&mut shift);
                drop(shift);
                self.wake.notify_all();
                return Step::Stop;
            }
            if take(&mut shift.state, taken) {
                break;
            }
            if shift.state.is_stopped() {
                continue;
            }
            if shift.state.is_done() {
                shift.state.stop();
                continue;
            }
            // Watch a moment for a task to become startable before sleeping.
            self.startable.clear();
            drop(shift);
            self.startable.watch();
            shift = self.lock();
            if shift.state.has_next() || shift.state.is_stopped() {
                continue;
            }
            shift.idle += 1;
            let timed_out;
            (shift, timed_out) = self.wait(shift, patience);
            shift.idle -= 1;
            if timed_out {
                return Step::Wait;
            }
        }
        let startable = shift.state.has_next();
        self.startable.set(startable);
        if startable && shift.idle > 0 {
            self.wake.notify_one();
        }
        Step::Run {
            plenty: startable || taken.len() > 1,
        }
    }

    /// Stops the run: no task starts any more, and workers see it between
    /// tasks ([`Pool::is_stopped`]). Wake them with [`Pool::wake_all`] once
    /// the lock is let go.
    pub fn stop(&self, shift: &mut Shift<S>) {
        shift.state.stop();
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// Whether the run has stopped, read without the lock (it may have
    /// stopped a moment ago without this saying so yet).
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Wakes every worker asleep: after the run stopped, or something a
    /// waiter waits for changed.
    pub fn wake_all(&self) {
        self.wake.notify_all();
    }

    /// Sleeps until woken, with `patience` at most that long; whether the
    /// patience ran out.
    pub fn wait<'p>(
        &'p self,
        shift: MutexGuard<'p, Shift<S>>,
        patience: Option<Duration>,
    ) -> (MutexGuard<'p, Shift<S>>, bool) {
        match patience {
            Some(patience) => {
                let (shift, wait) = self
                    .wake
                    .wait_timeout(shift, patience)
                    .unwrap_or_else(PoisonError::into_inner);
                (shift, wait.timed_out())
            }
            None => {
                let shift = self
                    .wake
                    .wait(shift)
                    .unwrap_or_else(PoisonError::into_inner);
                (shift, false)
            }
        }
    }

    /// The state, once the workers are gone.
    pub fn into_inner(self) -> S {
        self.shift
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .state
    }
}

/// Locks a mutex; a poisoned one is still usable, since every critical
/// section of the workspace's executors leaves its data consistent.
pub fn lock<U>(mutex: &Mutex<U>) -> MutexGuard<'_, U> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
