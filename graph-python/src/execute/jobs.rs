//! The run on a pool of the caller's: one job per task.

use std::sync::Arc;

use graph_core::NodeId;
use graph_exec::pool::Step;
use pyo3::prelude::*;

use super::{SIGNAL_POLL, Shared};

impl Shared {
    /// Waits until no job of the run is running on the pool, once the run
    /// is stopped (none starts after that), without the GIL; the main
    /// thread looks for Ctrl-C meanwhile.
    pub(super) fn settle(&self, py: Python<'_>, main: bool) -> PyResult<()> {
        loop {
            let settled = py.detach(|| {
                let state = self.pool.lock();
                if state.jobs == 0 {
                    return true;
                }
                let (state, _) = self.pool.wait(state, Some(SIGNAL_POLL));
                state.jobs == 0
            });
            if settled {
                return Ok(());
            }
            if main {
                py.check_signals()?;
            }
        }
    }

    /// Hands the run's tasks to the pool through `submit`, at most
    /// `workers` at once, until the run is over; errors end the run.
    pub(super) fn submit_to(
        &self,
        py: Python<'_>,
        this: &Arc<Shared>,
        submit: &Bound<'_, PyAny>,
        main: bool,
    ) {
        let mut taken = Vec::new();
        let mut spill = Vec::new();
        loop {
            // Not a worker's turn (`Pool::next`): what the submitter may
            // take is bounded by the room among the jobs running, so it
            // sleeps until a job ends even while tasks are ready.
            let step = py.detach(|| {
                let mut state = self.pool.lock();
                loop {
                    if state.stop {
                        self.pool.stop(&mut state);
                        return Step::Stop;
                    }
                    let room = self
                        .workers
                        .saturating_sub(state.core.borrow_dependent().running());
                    state.take(&mut taken, room, &mut spill);
                    if !taken.is_empty() || !spill.is_empty() {
                        return Step::Run { plenty: false };
                    }
                    if state.core.borrow_dependent().is_done() {
                        self.pool.stop(&mut state);
                        return Step::Stop;
                    }
                    let timed_out;
                    (state, timed_out) = self.pool.wait(state, Some(SIGNAL_POLL));
                    if timed_out {
                        return Step::Wait;
                    }
                }
            });
            if main && let Err(err) = py.check_signals() {
                self.fail(err, None);
                return;
            }
            match step {
                Step::Stop => return,
                Step::Wait => continue,
                Step::Run { .. } => {}
            }
            if let Err(err) = self.spill(py, &mut spill) {
                self.fail(err, None);
                return;
            }
            for node in taken.drain(..) {
                let job = Job {
                    run: Arc::clone(this),
                    node,
                };
                if let Err(err) = submit.call1((job,)) {
                    self.fail(err, None);
                    return;
                }
            }
        }
    }
}

/// One task of a run, submitted to a pool: calling it runs the task.
#[pyclass(frozen, module = "taskgraph._native")]
struct Job {
    run: Arc<Shared>,
    node: NodeId,
}

#[pymethods]
impl Job {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let run = &self.run;
        // Counted while it runs, so that the call waits for it; a job the
        // pool calls after the run ended does nothing.
        let Some(_running) = Running::enter(run) else {
            return Ok(());
        };
        run.guarded(|| {
            self.call(py);
            Ok(())
        })
    }
}

/// A job of the run running on the pool, counted in [`State::jobs`] from
/// [`Running::enter`] until it is dropped (called with the GIL held, as is
/// every lock of the state but in `detach`).
struct Running<'a> {
    run: &'a Shared,
}

impl<'a> Running<'a> {
    /// Counts a job in, unless the run is over.
    fn enter(run: &'a Shared) -> Option<Running<'a>> {
        let mut state = run.pool.lock();
        if state.stop {
            return None;
        }
        state.jobs += 1;
        Some(Running { run })
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = self.run.pool.lock();
        state.jobs -= 1;
        let settled = state.jobs == 0;
        drop(state);
        if settled {
            self.run.pool.wake_all();
        }
    }
}

impl Job {
    fn call(&self, py: Python<'_>) {
        let run = &self.run;
        if run.pool.is_stopped() {
            return;
        }
        let worker_id = run.get_ident.bind(py).call0();
        let done = match worker_id.and_then(|id| run.execute(py, self.node, &id)) {
            Ok(done) => done,
            Err(err) => {
                run.fail(err, Some(self.node));
                return;
            }
        };
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        py.detach(|| {
            let mut state = run.pool.lock();
            state.finished(done, &mut freed, &mut spill);
            drop(run.learn(state));
            run.pool.wake_all();
        });
        run.free(py, &mut freed);
        if let Err(err) = run.spill(py, &mut spill) {
            run.fail(err, None);
        }
    }
}
