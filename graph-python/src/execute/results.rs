//! The results: freed, spilled, read back, measured.

use graph_core::NodeId;
use graph_exec::pool::lock;
use graph_exec::scheduler::Overflow;
use pyo3::exceptions::{PyException, PyMemoryError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyList;
use std::sync::PoisonError;

use super::Shared;

impl Shared {
    /// Drops the results no task reads any more, and their spill files.
    pub(super) fn free(&self, py: Python<'_>, freed: &mut Vec<NodeId>) {
        let values = self.values.bind(py);
        for node in freed.drain(..) {
            let i = node.index();
            if self.is_output[i] {
                continue;
            }
            if let (Some(spiller), Ok(slot)) = (&self.spiller, values.get_item(i))
                && slot.is(&self.spilled_mark)
            {
                // A file not removed now goes with the directory at the end.
                let _ = spiller.call_method1(py, intern!(py, "discard"), (i,));
            }
            // In range: every node has a slot.
            let _ = values.set_item(i, py.None());
        }
    }

    /// Writes the results the scheduler chose to disk and drops them from
    /// memory; one that cannot be written stays, and the scheduler counts
    /// it there again.
    pub(super) fn spill(&self, py: Python<'_>, nodes: &mut Vec<NodeId>) -> PyResult<()> {
        let Some(spiller) = &self.spiller else {
            nodes.clear();
            return Ok(());
        };
        if self.pool.is_stopped() {
            // The run is over: nothing is read back any more.
            nodes.clear();
            return Ok(());
        }
        let values = self.values.bind(py);
        let mut kept = Vec::new();
        for node in nodes.drain(..) {
            let i = node.index();
            let value = values.get_item(i)?;
            if value.is(&self.spilled_mark) || value.is_none() {
                continue;
            }
            let key = self.graph.keys[i].bind(py);
            let written = spiller
                .call_method1(py, intern!(py, "write"), (i, &value, key))?
                .is_truthy(py)?;
            if written {
                values.set_item(i, &self.spilled_mark)?;
            } else {
                kept.push(node);
            }
        }
        if !kept.is_empty() {
            let mut state = self.pool.lock();
            for node in kept {
                state
                    .core
                    .with_dependent_mut(|_, scheduler| scheduler.unspillable(node));
            }
        }
        Ok(())
    }

    /// The result of `node`, read back from disk if it was spilled. Its
    /// file goes once it is read, so several tasks that need it at once
    /// take turns: one reads it, the others wait for it in memory.
    pub(super) fn value<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyList>,
        node: NodeId,
    ) -> PyResult<Bound<'py, PyAny>> {
        let i = node.index();
        let Some(spiller) = &self.spiller else {
            return values.get_item(i);
        };
        loop {
            let value = values.get_item(i)?;
            if !value.is(&self.spilled_mark) {
                return Ok(value);
            }
            // Nothing between the look at the slot and the claim lets
            // another thread take the GIL.
            if let Some(_reading) = ReadingBack::claim(self, i) {
                let key = self.graph.keys[i].bind(py);
                let value = spiller
                    .bind(py)
                    .call_method1(intern!(py, "read"), (i, key))?;
                values.set_item(i, &value)?;
                return Ok(value);
            }
            py.detach(|| {
                let mut reading = lock(&self.reading);
                while reading.contains(&i) {
                    reading = self
                        .read_back
                        .wait(reading)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            });
        }
    }

    /// The error for a task the memory limit cannot hold.
    pub(super) fn overflow_error(&self, py: Python<'_>, overflow: Overflow) -> PyErr {
        let key = self.graph.keys[overflow.node.index()].bind(py);
        let key = key
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "<key>".to_owned());
        let what = if overflow.with_inputs {
            "with its inputs"
        } else {
            "for its result alone"
        };
        PyMemoryError::new_err(format!(
            "task {key} needs {} bytes {what}, more than the memory limit of {} bytes",
            overflow.bytes, overflow.limit
        ))
    }
}

/// A spilled result one worker is reading back, claimed in
/// [`Shared::reading`] until it is dropped; the workers waiting for it are
/// then woken, to find it in memory (or, if the read failed, to try it
/// themselves).
struct ReadingBack<'a> {
    run: &'a Shared,
    node: usize,
}

impl<'a> ReadingBack<'a> {
    /// Claims `node`, unless another worker is reading it back. (The
    /// guard is made only for a claim: one made and dropped for a refusal
    /// would take the lock still held here, and free another's claim.)
    fn claim(run: &'a Shared, node: usize) -> Option<ReadingBack<'a>> {
        let claimed = lock(&run.reading).insert(node);
        claimed.then(|| ReadingBack { run, node })
    }
}

impl Drop for ReadingBack<'_> {
    fn drop(&mut self) {
        lock(&self.run.reading).remove(&self.node);
        self.run.read_back.notify_all();
    }
}

/// What a result counts for when `sizeof` cannot tell (as
/// `distributed.sizeof.safe_sizeof` counts it).
pub(super) const FALLBACK_RESULT_BYTES: u64 = 1_000_000;

/// The most bytes a result is taken to take: more than any machine holds
/// (256 TiB), and far enough below 2^64 that sums of them do not overflow.
const MAX_RESULT_BYTES: u64 = 1 << 48;

/// `sizeof(value)` as bytes: [`FALLBACK_RESULT_BYTES`] where it raises an
/// `Exception` or gives anything but an integer from 0 to
/// [`MAX_RESULT_BYTES`] (a measure only observes: it never fails the run).
/// `taskgraph._sizes.SafeSizeof` does the same and warns.
pub(super) fn measured_bytes(
    py: Python<'_>,
    sizeof: &Py<PyAny>,
    value: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    match sizeof.call1(py, (value,)) {
        Ok(bytes) => Ok(bytes
            .extract::<u64>(py)
            .ok()
            .filter(|&bytes| bytes <= MAX_RESULT_BYTES)
            .unwrap_or(FALLBACK_RESULT_BYTES)),
        Err(err) if err.is_instance_of::<PyException>(py) => Ok(FALLBACK_RESULT_BYTES),
        // Ctrl-C, or a task's `SystemExit` in `__sizeof__`: not a measure.
        Err(err) => Err(err),
    }
}
