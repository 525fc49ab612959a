//! A worker's loop, and what it does under the lock.

use std::borrow::Cow;
use std::sync::MutexGuard;
use std::sync::atomic::Ordering;
use std::time::Instant;

use graph_core::{Dag, NodeId};
use graph_exec::panic_message;
use graph_exec::pool::{Pace, Shift, Step};
use graph_exec::scheduler::{Overflow, Priorities, Ranking};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use super::results::measured_bytes;
use super::{BATCH, SIGNAL_POLL, Shared, State, UNKNOWN_RESULT_BYTES};

/// The state, locked.
pub(super) type Locked<'s> = MutexGuard<'s, Shift<State>>;

impl Shared {
    /// One worker: takes ready tasks (a batch at a time while they are
    /// quick) with the GIL released, runs them with it held, and reports
    /// them finished when it takes the next ones.
    ///
    /// One worker takes one task at a time, to follow the order exactly;
    /// several take a batch while their tasks are quick, and hand back the
    /// rest of one as soon as a task of it is not.
    pub(super) fn work(&self, py: Python<'_>, main: bool) -> PyResult<()> {
        let worker_id = self.get_ident.bind(py).call0()?;
        let mut taken: Vec<NodeId> = Vec::with_capacity(BATCH);
        let mut done: Vec<Done> = Vec::with_capacity(BATCH);
        let mut freed: Vec<NodeId> = Vec::new();
        let mut spill: Vec<NodeId> = Vec::new();
        let mut pace = Pace::new(if self.workers > 1 { BATCH } else { 1 });
        // The main thread wakes now and then to look for Ctrl-C.
        let patience = main.then_some(SIGNAL_POLL);
        loop {
            // A load first: every turn of every worker reads the flag, and
            // a swap would write its cache line each time.
            #[cfg(feature = "test-hooks")]
            assert!(
                !(self.panic_next.load(Ordering::Relaxed)
                    && self.panic_next.swap(false, Ordering::Relaxed)),
                "a worker's loop panicked (injected by a test)"
            );
            let step = py.detach(|| {
                let mut state = self.pool.lock();
                for done in done.drain(..) {
                    state.finished(done, &mut freed, &mut spill);
                }
                let state = self.learn(state);
                let batch = pace.size();
                self.pool.next(state, &mut taken, patience, |state, taken| {
                    while taken.len() < batch
                        && let Some(node) = state.spare.pop()
                    {
                        taken.push(node);
                    }
                    state.take(taken, batch, &mut spill);
                    // Spills are written with the GIL, before the tasks run.
                    !taken.is_empty() || !spill.is_empty()
                })
            });
            self.free(py, &mut freed);
            if let Err(err) = self.spill(py, &mut spill) {
                self.fail(err, None);
            }
            match step {
                Step::Stop => return Ok(()),
                Step::Wait => {
                    if let Err(err) = py.check_signals() {
                        self.fail(err, None);
                    }
                    continue;
                }
                Step::Run { .. } => {}
            }
            let started = Instant::now();
            let mut ran = 0;
            for &node in &taken {
                if self.pool.is_stopped() {
                    return Ok(());
                }
                match self.execute(py, node, &worker_id) {
                    Ok(done_now) => done.push(done_now),
                    Err(err) => {
                        self.fail(err, Some(node));
                        return Ok(());
                    }
                }
                ran += 1;
                if pace.batches() && Pace::slow(started, ran) {
                    break;
                }
            }
            if ran < taken.len() {
                let mut state = self.pool.lock();
                state.spare.extend_from_slice(&taken[ran..]);
                drop(state);
                self.pool.wake_all();
            }
            taken.clear();
            if main && let Err(err) = py.check_signals() {
                self.fail(err, None);
            }
            pace.timed(started, ran);
        }
    }

    /// Runs `f`, a worker's loop: a panic in it (a bug) fails the run with
    /// an error naming it, so that the other workers stop rather than wait
    /// for this one's tasks for ever.
    pub(super) fn guarded(&self, f: impl FnOnce() -> PyResult<()>) -> PyResult<()> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
            let message = format!(
                "a worker thread of the run failed: {}",
                panic_message(&*payload)
            );
            self.fail(PyRuntimeError::new_err(message), None);
            Ok(())
        })
    }

    /// Records the run's first error and stops it.
    ///
    /// The error is normalized first, without the lock: pyo3 lets the GIL
    /// go while it normalizes one, and a thread that waits for the GIL with
    /// the lock held (reading the error later) would wait for ever on one
    /// that holds the GIL and waits for the lock (`abandon`'s watch).
    pub(super) fn fail(&self, error: PyErr, node: Option<NodeId>) {
        Python::attach(|py| {
            error.value(py);
        });
        let mut state = self.pool.lock();
        if state.error.is_none() && state.overflow.is_none() {
            state.error = Some(error);
            state.failed = node;
        }
        self.pool.stop(&mut state);
        drop(state);
        self.pool.wake_all();
    }

    /// Once the run has measured enough results to decide, measures no
    /// more and, where their bytes matter, goes on by an order in them (see
    /// [`crate::learn`]).
    pub(super) fn learn<'s>(&'s self, mut state: Locked<'s>) -> Locked<'s> {
        let Some(learning) = state.learning.take_if(|l| l.ready()) else {
            return state;
        };
        let sizes = learning.decide();
        self.measuring.store(false, Ordering::Relaxed);
        match sizes {
            Some(sizes) => self.reorder(state, &sizes),
            None => state,
        }
    }

    /// Orders the graph again by `sizes`, and has the scheduler go on by
    /// that order; the run goes on by its first order where the order gives
    /// up (the run stopped). The lock stays held: other workers
    /// would otherwise go on by the first order meanwhile, far past where
    /// the second takes over (a run orders again once, as long as it took
    /// to order at first).
    fn reorder<'s>(&'s self, mut state: Locked<'s>, sizes: &[u64]) -> Locked<'s> {
        let Some(reorder) = &self.reorder else {
            return state;
        };
        let order = reorder.order(&self.topology, sizes, &|| self.pool.is_stopped());
        if let Ok(order) = order {
            state.resume(order.priorities(), self.workers);
        }
        state
    }

    /// Runs `node`'s task with its hooks and keeps its result, measuring it
    /// where results are measured.
    pub(super) fn execute(
        &self,
        py: Python<'_>,
        node: NodeId,
        worker_id: &Bound<'_, PyAny>,
    ) -> PyResult<Done> {
        let key = self.graph.keys[node.index()].bind(py);
        if let Some(pretask) = &self.pretask {
            pretask.call1(py, (key,))?;
        }
        let value = self.evaluate(py, node)?;
        let bytes = match &self.sizeof {
            Some(sizeof) => Some(measured_bytes(py, sizeof, &value)?),
            None => None,
        };
        let learned = match (&self.learn_sizeof, bytes) {
            (_, Some(bytes)) => Some(bytes),
            (Some(sizeof), None) if self.measuring.load(Ordering::Relaxed) => {
                Some(measured_bytes(py, sizeof, &value)?)
            }
            _ => None,
        };
        self.values.bind(py).set_item(node.index(), &value)?;
        if let Some(posttask) = &self.posttask {
            posttask.call1(py, (key, value, worker_id))?;
        }
        Ok(Done {
            node,
            bytes: bytes.unwrap_or(0),
            learned,
        })
    }

    /// Computes `node`'s result from its inputs, as dask 2026.8 runs a task.
    pub(super) fn evaluate<'py>(
        &self,
        py: Python<'py>,
        node: NodeId,
    ) -> PyResult<Bound<'py, PyAny>> {
        let task = self.tasks[node.index()].bind(py);
        let values = self.values.bind(py);
        self.graph
            .evaluate(task, self.topology.dependencies(node), &mut |dep| {
                self.value(py, values, dep)
            })
    }
}

/// A task a worker has run.
pub(super) struct Done {
    node: NodeId,
    /// Its result's bytes as `sizeof` measured them (0 where results are
    /// not measured).
    bytes: u64,
    /// Its result's bytes, where measured for the run to learn from.
    learned: Option<u64>,
}

impl State {
    /// Reports a task finished; the results no task reads any more go to
    /// `freed`.
    pub(super) fn finished(
        &mut self,
        done: Done,
        freed: &mut Vec<NodeId>,
        spill: &mut Vec<NodeId>,
    ) {
        let Done {
            node,
            bytes,
            learned,
        } = done;
        if let (Some(learning), Some(learned)) = (&mut self.learning, learned) {
            learning.measured(node, learned);
        }
        let result = self
            .core
            .with_dependent_mut(|_, scheduler| scheduler.finished(node, bytes, freed, spill));
        if let Err(overflow) = result {
            self.overflowed(overflow);
        }
    }

    /// Goes on by the order of `priorities` (one per node): the tasks
    /// started keep their places, the others follow by it, and with
    /// several workers the bound on the results held is drawn from what it
    /// holds from the first task not started on. The bound still counts
    /// results: one in bytes held two workers back to the time of one on
    /// the TPC-H-like query of `scripts/real_work_bench.py` (6.2 s against
    /// 4.9 s), for little on the graph of `test_bytes.py`'s producers.
    fn resume(&mut self, priorities: &[u32], workers: usize) {
        self.core.with_dependent_mut(|inputs, scheduler| {
            let Ok(ranks) = scheduler.resumed_ranks(&inputs.needed, priorities) else {
                return;
            };
            let topology = &inputs.topology;
            let Ok(resumed) = Ranking::new(
                topology,
                topology,
                &inputs.needed,
                Priorities::Ranks(Cow::Owned(ranks)),
                &[],
                UNKNOWN_RESULT_BYTES,
                workers,
            ) else {
                return;
            };
            if inputs.resumed.set(resumed).is_err() {
                return;
            }
            if let Some(resumed) = inputs.resumed.get() {
                let (held, held_bytes) = scheduler.holding();
                let head = scheduler.started();
                let held_limit = resumed
                    .profile()
                    .map(|profile| profile.held_limit_from(workers, head, held, held_bytes));
                scheduler.reorder(resumed.ranks(), held_limit);
            }
        });
    }

    /// Stops the run for a task the memory limit cannot hold.
    fn overflowed(&mut self, overflow: Overflow) {
        if self.error.is_none() && self.overflow.is_none() {
            self.overflow = Some(overflow);
            self.failed = Some(overflow.node);
        }
        self.stop = true;
    }

    /// Starts tasks until `taken` holds `up_to` or none is ready; the
    /// results to spill first go to `spill`.
    pub(super) fn take(&mut self, taken: &mut Vec<NodeId>, up_to: usize, spill: &mut Vec<NodeId>) {
        while taken.len() < up_to && !self.stop {
            match self
                .core
                .with_dependent_mut(|_, scheduler| scheduler.start_next(spill))
            {
                Ok(Some(node)) => taken.push(node),
                Ok(None) => break,
                Err(overflow) => self.overflowed(overflow),
            }
        }
    }
}
