//! dask graphs on worker processes: the native half of
//! `taskgraph.dask.get(..., processes=N)` and of `python -m taskgraph
//! worker`.
//!
//! The caller reads, checks, orders and places the graph once
//! ([`plan_processes`]) and hands every worker process the plan with the
//! tasks (pickled by the Python side). Each worker process is an
//! interpreter whose [`WorkerRun`] runs its share of the plan on
//! `graph-distributed`: one timely worker per process, each task on the
//! process the placement names, results sent from process to process
//! pickled with protocol 5 and their out-of-band buffers ([`PyValue`]),
//! never through the caller. After the loss of a process, the survivors
//! report what they ran and hold and run the next attempt the caller tells
//! them ([`WorkerRun::recover`]).

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use graph_assign::{ListConfig, Workers, assign_list};
use graph_core::{Dag, Key, NodeId, TaskGraph, Topology};
use graph_distributed::recovery::{Attempt, Holdings, Leftovers, Stopped};
use graph_distributed::{CancelHandle, Cluster, Error, Job, Progress, Run, Runner, RunnerError};
use graph_exec::TaskFailure;
use graph_exec::pool::lock;
use pyo3::exceptions::{PyKeyboardInterrupt, PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};
use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::eval::TaskKeys;
use crate::execute::ReadRun;

/// Reads, checks, orders and places `dsk` for a run of `keys` (a flat list)
/// on `processes` worker processes: a dict of the keys of every node
/// (`"keys"`), the tasks' values (`"tasks"`), each task's dependencies
/// (`"offsets"` and `"targets"`, a CSR of node numbers), the order
/// (`"priorities"`), the placement (`"placement"`, by `graph-assign`'s list
/// scheduling, with sizes where known), each node's bytes (`"sizes"`) and
/// the requested nodes (`"outputs"`). Errors are `taskgraph.dask.get`'s: a
/// missing key, a cycle, a needed key the graph lacks.
#[pyfunction]
#[pyo3(signature = (dsk, keys, *, processes, strategy="auto", sizes=None, layers=None))]
pub(crate) fn plan_processes<'py>(
    dsk: &Bound<'py, PyAny>,
    keys: &Bound<'py, PyList>,
    processes: usize,
    strategy: &str,
    sizes: Option<&Bound<'py, PyAny>>,
    layers: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let py = dsk.py();
    let read = ReadRun::new(dsk, keys, strategy, sizes, layers)?;
    let workers = Workers::new(processes.max(1))
        .map_err(|err| PyValueError::new_err(format!("processes={processes}: {err}")))?;
    let sizes = &read.sizes.filled;
    let placement = py
        .detach(|| {
            let config = ListConfig {
                sizes: (!sizes.is_empty()).then_some(sizes.as_slice()),
                ..ListConfig::default()
            };
            assign_list(&read.topology, &workers, &config)
        })
        .map_err(|err| PyRuntimeError::new_err(err.to_string()))?;
    let out = PyDict::new(py);
    let task_count = read.tasks.len();
    let topology = &read.topology;
    let (mut offsets, mut targets) = (Vec::with_capacity(task_count + 1), Vec::new());
    offsets.push(0u32);
    for node in 0..topology.node_count() {
        targets.extend(
            topology
                .dependencies(NodeId::new(node))
                .iter()
                .map(|d| d.as_u32()),
        );
        offsets.push(u32::try_from(targets.len()).expect("a graph's edges fit in u32"));
    }
    out.set_item("keys", PyList::new(py, &read.keys)?)?;
    out.set_item("tasks", PyList::new(py, &read.tasks)?)?;
    out.set_item("offsets", u32_bytes(py, &offsets))?;
    out.set_item("targets", u32_bytes(py, &targets))?;
    out.set_item("priorities", u32_bytes(py, read.order.priorities()))?;
    out.set_item("placement", u32_bytes(py, placement.as_slice()))?;
    let sizes: Vec<u8> = sizes.iter().flat_map(|s| s.to_le_bytes()).collect();
    out.set_item("sizes", PyBytes::new(py, &sizes))?;
    let outputs: Vec<u32> = read.outputs.iter().map(|n| n.as_u32()).collect();
    out.set_item("outputs", outputs)?;
    Ok(out)
}

/// The `host:port` of every process a hostfile lists, read as `taskgraph
/// run --hostfile` reads it (blank lines and `#` lines skipped); a bad line
/// raises `ValueError` naming it.
#[pyfunction]
pub(crate) fn read_hostfile(path: std::path::PathBuf) -> PyResult<Vec<String>> {
    Cluster::from_hostfile(&path, 0, 1)
        .map(|cluster| cluster.addresses().to_vec())
        .map_err(|err| PyValueError::new_err(err.to_string()))
}

/// `values` as little-endian bytes.
fn u32_bytes<'py>(py: Python<'py>, values: &[u32]) -> Bound<'py, PyBytes> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    PyBytes::new(py, &bytes)
}

/// The numbers little-endian `bytes` hold, or why they are not numbers.
fn read_u32s(bytes: &[u8], what: &str) -> PyResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(PyValueError::new_err(format!(
            "{what}: {} bytes are not a list of 32-bit numbers",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("chunks of 4")))
        .collect())
}

/// The numbers little-endian `bytes` hold, or why they are not numbers.
fn read_u64s(bytes: &[u8], what: &str) -> PyResult<Vec<u64>> {
    if !bytes.len().is_multiple_of(8) {
        return Err(PyValueError::new_err(format!(
            "{what}: {} bytes are not a list of 64-bit numbers",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("chunks of 8")))
        .collect())
}

/// A task's result as it travels between processes: the object, and its
/// pickle (protocol 5, with its out-of-band buffers) while it has yet to
/// go somewhere. A result that leaves its process is pickled as its task
/// ends, on the worker that ran it, and its pickle is let go once it has
/// gone to every process that reads it; one that arrives is unpickled when
/// a task first reads it, and its pickle let go then. So a result is held
/// once, not twice. Clones share both.
#[derive(Clone)]
pub(crate) struct PyValue(Arc<Held>);

struct Held {
    object: OnceLock<Py<PyAny>>,
    /// The pickle, and how many more times it is to be sent.
    pickled: Mutex<Option<(Arc<Pickled>, usize)>>,
}

/// A pickle and its out-of-band buffers.
struct Pickled {
    data: Vec<u8>,
    buffers: Vec<Vec<u8>>,
}

impl Pickled {
    fn len(&self) -> u64 {
        (self.data.len() + self.buffers.iter().map(Vec::len).sum::<usize>()) as u64
    }
}

impl PyValue {
    fn new(object: Py<PyAny>) -> PyValue {
        let held = Held {
            object: OnceLock::new(),
            pickled: Mutex::new(None),
        };
        let _ = held.object.set(object);
        PyValue(Arc::new(held))
    }

    /// The object, unpickled on first use (its pickle let go then).
    fn object<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if let Some(object) = self.0.object.get() {
            return Ok(object.bind(py).clone());
        }
        let mut pickled = lock(&self.0.pickled);
        if let Some(object) = self.0.object.get() {
            return Ok(object.bind(py).clone());
        }
        let (held, _) = pickled
            .as_ref()
            .expect("a value holds its object or its pickle");
        let buffers = PyList::empty(py);
        for buffer in &held.buffers {
            buffers.append(PyByteArray::new(py, buffer))?;
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("buffers", buffers)?;
        let object = py
            .import(intern!(py, "pickle"))?
            .getattr(intern!(py, "loads"))?
            .call((PyBytes::new(py, &held.data),), Some(&kwargs))?;
        let _ = self.0.object.set(object.clone().unbind());
        *pickled = None;
        Ok(object)
    }

    /// Pickles the object, to be sent `sends` times.
    fn pickle_for(&self, py: Python<'_>, sends: usize) -> PyResult<()> {
        let object = self.object(py)?;
        let made = pickle(&object)?;
        *lock(&self.0.pickled) = Some((Arc::new(made), sends));
        Ok(())
    }

    /// The pickle to send once: the one kept (let go after its last send),
    /// else one made now and let go after.
    fn pickle_to_send(&self) -> PyResult<Arc<Pickled>> {
        let mut kept = lock(&self.0.pickled);
        let Some((pickled, sends)) = kept.as_mut() else {
            drop(kept);
            let made = Python::attach(|py| pickle(&self.object(py)?))?;
            return Ok(Arc::new(made));
        };
        let pickled = Arc::clone(pickled);
        *sends = sends.saturating_sub(1);
        // A received value's pickle stays until it is unpickled; a value of
        // this process's lets its pickle go after the last send.
        if *sends == 0 && self.0.object.get().is_some() {
            *kept = None;
        }
        Ok(pickled)
    }
}

/// `object` pickled with protocol 5, its buffers out of band; with
/// cloudpickle where plain pickle cannot (a lambda in a result).
fn pickle(object: &Bound<'_, PyAny>) -> PyResult<Pickled> {
    let py = object.py();
    let dump = |module: &str| -> PyResult<Pickled> {
        let buffers = PyList::empty(py);
        let kwargs = PyDict::new(py);
        kwargs.set_item("protocol", 5)?;
        kwargs.set_item("buffer_callback", buffers.getattr("append")?)?;
        let data = py
            .import(module)?
            .getattr(intern!(py, "dumps"))?
            .call((object,), Some(&kwargs))?;
        let data = data.cast::<PyBytes>()?.as_bytes().to_vec();
        let mut raw = Vec::with_capacity(buffers.len());
        for buffer in buffers.iter() {
            let view = buffer.call_method0(intern!(py, "raw"))?;
            let bytes = view.call_method0(intern!(py, "tobytes"))?;
            raw.push(bytes.cast::<PyBytes>()?.as_bytes().to_vec());
        }
        Ok(Pickled { data, buffers: raw })
    };
    dump("pickle").or_else(|first| dump("cloudpickle").map_err(|_| first))
}

/// Bytes that serde writes as one byte string.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

/// A byte string read back.
struct ByteBuf(Vec<u8>);

impl<'de> Deserialize<'de> for ByteBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ByteBuf, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = ByteBuf;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<ByteBuf, E> {
                Ok(ByteBuf(bytes.to_vec()))
            }
            fn visit_byte_buf<E>(self, bytes: Vec<u8>) -> Result<ByteBuf, E> {
                Ok(ByteBuf(bytes))
            }
        }
        deserializer.deserialize_byte_buf(Read)
    }
}

/// A value goes as a sequence of byte strings: the pickle, then its
/// buffers.
impl Serialize for PyValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let pickled = self
            .pickle_to_send()
            .map_err(|err| serde::ser::Error::custom(err.to_string()))?;
        let mut seq = serializer.serialize_seq(Some(1 + pickled.buffers.len()))?;
        seq.serialize_element(&Bytes(&pickled.data))?;
        for buffer in &pickled.buffers {
            seq.serialize_element(&Bytes(buffer))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for PyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PyValue, D::Error> {
        struct Read;
        impl<'de> Visitor<'de> for Read {
            type Value = PyValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a pickle and its buffers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<PyValue, A::Error> {
                let ByteBuf(data) = seq
                    .next_element()?
                    .ok_or_else(|| serde::de::Error::invalid_length(0, &self))?;
                let mut buffers = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(ByteBuf(buffer)) = seq.next_element()? {
                    buffers.push(buffer);
                }
                Ok(PyValue(Arc::new(Held {
                    object: OnceLock::new(),
                    pickled: Mutex::new(Some((Arc::new(Pickled { data, buffers }), 0))),
                })))
            }
        }
        deserializer.deserialize_seq(Read)
    }
}

/// What every worker of a process reads: the tasks, their keys, and the
/// first failure, kept as the Python exception.
struct Tasks {
    keys: TaskKeys,
    tasks: Vec<Py<PyAny>>,
    topology: Arc<Topology>,
    /// `dask.sizeof.sizeof`, under a memory limit.
    sizeof: Option<Py<PyAny>>,
    /// The first task of this process that raised, and its exception.
    failure: Mutex<Option<(NodeId, PyErr)>>,
}

/// Runs a process's tasks in an attempt.
struct PyRunner {
    tasks: Arc<Tasks>,
    /// Per node: how many times its result leaves this process in the
    /// attempt (see [`leaving`]).
    sends: Arc<Vec<u32>>,
}

impl Runner for PyRunner {
    type Value = PyValue;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<PyValue>,
    ) -> Result<PyValue, TaskFailure> {
        let tasks = &*self.tasks;
        let sends = self.sends[node.index()];
        Python::attach(|py| {
            let result = (|| -> PyResult<PyValue> {
                let task = tasks.tasks[node.index()].bind(py);
                let deps = tasks.topology.dependencies(node);
                let object = tasks.keys.evaluate(task, deps, &mut |dep| {
                    input(dep)
                        .ok_or_else(|| {
                            PyRuntimeError::new_err(format!(
                                "the input {} of task {} has not arrived",
                                task_key(py, &tasks.keys, dep),
                                task_key(py, &tasks.keys, node)
                            ))
                        })?
                        .object(py)
                })?;
                let value = PyValue::new(object.unbind());
                if sends > 0 {
                    value
                        .pickle_for(py, sends as usize)
                        .map_err(|err| cannot_pickle(py, &task_key(py, &tasks.keys, node), err))?;
                }
                Ok(value)
            })();
            result.map_err(|err| {
                let message = err.to_string();
                let mut failure = lock(&tasks.failure);
                if failure.is_none() {
                    *failure = Some((node, err));
                }
                TaskFailure::new("python", message)
            })
        })
    }

    fn bytes(&self, _node: NodeId, value: &PyValue) -> u64 {
        if let Some(sizeof) = &self.tasks.sizeof {
            return Python::attach(|py| {
                let object = value.object(py).ok()?;
                sizeof.call1(py, (object,)).ok()?.extract::<u64>(py).ok()
            })
            .unwrap_or(64);
        }
        lock(&value.0.pickled)
            .as_ref()
            .map_or(64, |(pickled, _)| pickled.len())
    }
}

/// The error for `key`'s result, which cannot travel to another process.
fn cannot_pickle(py: Python<'_>, key: &str, err: PyErr) -> PyErr {
    let new = PyRuntimeError::new_err(format!(
        "the result of task {key} cannot be pickled to go to another process: {err}"
    ));
    new.set_cause(py, Some(err));
    new
}

/// `node`'s key as Python spells it (`repr`).
fn task_key(py: Python<'_>, keys: &TaskKeys, node: NodeId) -> String {
    let key = keys.keys[node.index()].bind(py);
    key.repr()
        .map_or_else(|_| key.to_string(), |r| r.to_string())
}

/// One call's run in a worker process: built from the plan the caller
/// sent, run by [`WorkerRun::run`], and after the loss of another process
/// set for the next attempt by [`WorkerRun::recover`].
#[pyclass(frozen, module = "taskgraph._native")]
pub(crate) struct WorkerRun {
    tasks: Arc<Tasks>,
    graph: Arc<TaskGraph>,
    state: Mutex<Attempting>,
    cancel: CancelHandle,
    progress: Progress,
    secret: Vec<u8>,
    heartbeat_timeout: Duration,
}

/// Where a run is between attempts.
struct Attempting {
    job: Job,
    attempt: Option<Attempt<PyValue>>,
    leftovers: Option<Box<Leftovers<PyValue>>>,
    /// The attempt's cluster, once run.
    cluster: Option<Cluster>,
    /// Set to make a process still connecting for the attempt stop.
    lost: CancelHandle,
}

#[pymethods]
impl WorkerRun {
    /// A run of `plan` (what [`plan_processes`] returned, as the caller
    /// sent it) under `memory_limit` bytes per process if given (results
    /// then measured by `sizeof`), joining other processes with `secret`.
    #[new]
    #[pyo3(signature = (plan, *, secret, memory_limit=None, sizeof=None, heartbeat_timeout=5.0))]
    fn new(
        plan: &Bound<'_, PyDict>,
        secret: &[u8],
        memory_limit: Option<u64>,
        sizeof: Option<Py<PyAny>>,
        heartbeat_timeout: f64,
    ) -> PyResult<WorkerRun> {
        let py = plan.py();
        static QUIET: std::sync::Once = std::sync::Once::new();
        QUIET.call_once(graph_distributed::quiet_timely_panics);
        let item = |name: &str| -> PyResult<Bound<'_, PyAny>> {
            plan.get_item(name)?
                .ok_or_else(|| PyValueError::new_err(format!("the plan has no {name:?}")))
        };
        let bytes = |name: &str| -> PyResult<Vec<u32>> {
            read_u32s(item(name)?.cast::<PyBytes>()?.as_bytes(), name)
        };
        let keys: Vec<Py<PyAny>> = item("keys")?.extract()?;
        let tasks: Vec<Py<PyAny>> = item("tasks")?.extract()?;
        let offsets = bytes("offsets")?;
        let targets = bytes("targets")?;
        let priorities = bytes("priorities")?;
        let placement = bytes("placement")?;
        let outputs: Vec<u32> = item("outputs")?.extract()?;
        let sizes = read_u64s(item("sizes")?.cast::<PyBytes>()?.as_bytes(), "sizes")?;
        let n = keys.len();
        let sized = sizes.is_empty() || sizes.len() == n;
        if offsets.len() != n + 1 || tasks.len() > n || placement.len() != n || !sized {
            return Err(PyValueError::new_err(
                "the plan's parts disagree on its size",
            ));
        }
        let topology = Topology::from_dependency_rows(offsets, targets)
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        // The run's graph: each node named by its number, its task opaque
        // (the Python task is run by the runner), with its size.
        let mut graph = TaskGraph::with_capacity(n);
        for node in 0..n {
            let deps: Vec<Key> = topology
                .dependencies(NodeId::new(node))
                .iter()
                .map(|d| Key::from(d.index().to_string()))
                .collect();
            let id = graph
                .insert_opaque(node.to_string(), deps)
                .map_err(|err| PyValueError::new_err(err.to_string()))?;
            graph.task_mut(id).size = sizes.get(node).copied();
        }
        let hashes = keys
            .iter()
            .map(|key| key.bind(py).hash())
            .collect::<PyResult<Vec<isize>>>()?;
        let mut job = Job::new(outputs.iter().map(|&o| NodeId::from_u32(o)), placement)
            .with_priorities(priorities);
        if let Some(bytes) = memory_limit {
            job = job.with_memory_limit(bytes);
        }
        Ok(WorkerRun {
            tasks: Arc::new(Tasks {
                keys: TaskKeys::new(py, keys, hashes)?,
                tasks,
                topology: Arc::new(topology),
                sizeof,
                failure: Mutex::new(None),
            }),
            graph: Arc::new(graph),
            state: Mutex::new(Attempting {
                job,
                attempt: None,
                leftovers: None,
                cluster: None,
                lost: CancelHandle::new(),
            }),
            cancel: CancelHandle::new(),
            progress: Progress::new(),
            secret: secret.to_vec(),
            heartbeat_timeout: Duration::from_secs_f64(heartbeat_timeout.max(0.1)),
        })
    }

    /// Runs this process's share as process `process` of the processes
    /// listening at `addresses`, the GIL released meanwhile. Returns
    /// `("done", outputs, stats)`, at process 0 with the outputs (a list of
    /// `(node, value)`) and the run's figures (a dict: `tasks_run`, and
    /// over the processes the largest `peak_held` and `peak_bytes`, the
    /// sum of `spilled_bytes` and `values_sent`), elsewhere with None; or
    /// `("lost", finished, held, why)` when another process was lost: the
    /// tasks this one ran and the results it holds, by node, for the caller
    /// to plan the next attempt, and the error that stopped it. Raises a
    /// task's own exception (with its node as `taskgraph_node`), or
    /// `RuntimeError` for a run that could not go on.
    fn run<'py>(
        &self,
        py: Python<'py>,
        addresses: Vec<String>,
        process: usize,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (job, attempt, lost) = {
            let mut state = lock(&self.state);
            (state.job.clone(), state.attempt.take(), state.lost.clone())
        };
        let processes = addresses.len();
        let cluster = if processes <= 1 {
            Cluster::local(1)
        } else {
            Cluster::new(addresses, process, 1)
                .and_then(|cluster| cluster.with_secret(&self.secret))
                .map_err(|err| PyRuntimeError::new_err(err.to_string()))?
                .with_heartbeat_timeout(self.heartbeat_timeout)
        }
        .with_cancel(self.cancel.clone())
        .with_lost_signal(lost)
        .with_progress(self.progress.clone());
        let sends = Arc::new(leaving(&self.tasks.topology, &job, process));
        let runner = runner_for(Arc::clone(&self.tasks), sends);
        let graph = Arc::clone(&self.graph);
        let result = py.detach(|| {
            Run::new(graph, job, &cluster, runner)
                .attempt(attempt)
                .run_keeping()
        });
        lock(&self.state).cluster = Some(cluster);
        match result {
            Ok(outcome) => {
                let (values, stats) = match outcome {
                    Some(outcome) => {
                        let stats = PyDict::new(py);
                        let workers = &outcome.workers;
                        stats.set_item("tasks_run", outcome.tasks_run())?;
                        stats.set_item("peak_held", workers.iter().map(|w| w.peak_held).max())?;
                        stats.set_item("peak_bytes", workers.iter().map(|w| w.peak_bytes).max())?;
                        let spilled: u64 = workers.iter().map(|w| w.spilled_bytes).sum();
                        stats.set_item("spilled_bytes", spilled)?;
                        stats.set_item("values_sent", outcome.values_sent())?;
                        let list = PyList::empty(py);
                        for (node, value) in outcome.values {
                            list.append((node.as_u32(), value.object(py)?))?;
                        }
                        (list.into_any(), stats.into_any())
                    }
                    None => (py.None().into_bound(py), py.None().into_bound(py)),
                };
                let done = pyo3::types::PyString::new(py, "done").into_any();
                PyTuple::new(py, [done, values, stats])
            }
            Err(Stopped {
                error,
                leftovers: Some(leftovers),
            }) => {
                let finished: Vec<u32> = leftovers.finished().iter().map(|n| n.as_u32()).collect();
                let held: Vec<u32> = leftovers.held().iter().map(|(n, _)| n.as_u32()).collect();
                lock(&self.state).leftovers = Some(leftovers);
                let why = error.to_string();
                PyTuple::new(
                    py,
                    [
                        "lost".into_pyobject(py)?.into_any(),
                        finished.into_pyobject(py)?.into_any(),
                        held.into_pyobject(py)?.into_any(),
                        why.into_pyobject(py)?.into_any(),
                    ],
                )
            }
            Err(Stopped { error, .. }) => Err(self.run_error(py, error)),
        }
    }

    /// Sets the run for its next attempt after the loss of `lost` (numbers
    /// in the attempt that stopped): `reports` are every survivor's
    /// `(process, finished, held)` and, for each lost process, the tasks it
    /// was heard to have run (`(process, finished, [])`).
    fn recover(&self, lost: Vec<usize>, reports: Vec<(u32, Vec<u32>, Vec<u32>)>) -> PyResult<()> {
        let mut state = lock(&self.state);
        let cluster = state
            .cluster
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("no attempt has run to recover from"))?;
        let leftovers = state
            .leftovers
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("the last attempt lost no process"))?;
        let mut holdings = Holdings::new(self.graph.len());
        for (process, finished, held) in &reports {
            for &node in finished {
                holdings.finished(NodeId::from_u32(node));
            }
            for &node in held {
                holdings.hold(NodeId::from_u32(node), *process);
            }
        }
        let next = graph_distributed::recovery::next_attempt(
            &self.graph,
            state.job.clone(),
            &cluster,
            &lost,
            &holdings,
            *leftovers,
        )
        .map_err(|err| PyRuntimeError::new_err(err.to_string()))?;
        state.job = next.job;
        state.attempt = Some(next.attempt);
        state.lost = CancelHandle::new();
        Ok(())
    }

    /// The tasks run in this process since the last call, by node.
    fn progress(&self) -> Vec<u32> {
        self.progress.take().iter().map(|n| n.as_u32()).collect()
    }

    /// Stops the run: no task starts any more and [`WorkerRun::run`]
    /// raises `KeyboardInterrupt`.
    fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Says that another process of the current attempt was lost: a run
    /// still connecting to it (or yet to start) stops and reports.
    fn lost(&self) {
        lock(&self.state).lost.cancel();
    }
}

impl WorkerRun {
    /// A stopped run as a Python exception: a task's own, where it raised
    /// in this process.
    fn run_error(&self, py: Python<'_>, error: Error) -> PyErr {
        match error {
            Error::Task { key, message, .. } => {
                if let Some((node, err)) = lock(&self.tasks.failure).take() {
                    let _ = err.value(py).setattr("taskgraph_node", node.as_u32());
                    return err;
                }
                let node = self.graph.node_id(&key);
                let name = node.map_or_else(
                    || key.to_string(),
                    |node| task_key(py, &self.tasks.keys, node),
                );
                let err = PyRuntimeError::new_err(format!("task {name} failed: {message}"));
                if let Some(node) = node {
                    let _ = err.value(py).setattr("taskgraph_node", node.as_u32());
                    let _ = err.value(py).setattr("taskgraph_elsewhere", true);
                }
                err
            }
            Error::Interrupted => PyKeyboardInterrupt::new_err("the run was interrupted"),
            error @ Error::TooLarge { .. } => PyMemoryError::new_err(error.to_string()),
            other => PyRuntimeError::new_err(other.to_string()),
        }
    }
}

/// What makes each worker's runner: one over this process's tasks, whose
/// results leave it `sends` times.
fn runner_for(
    tasks: Arc<Tasks>,
    sends: Arc<Vec<u32>>,
) -> impl for<'g> Fn(&'g TaskGraph, usize) -> Result<Box<dyn Runner<Value = PyValue> + 'g>, RunnerError>
+ Send
+ Sync
+ 'static {
    move |_, _| {
        Ok(Box::new(PyRunner {
            tasks: Arc::clone(&tasks),
            sends: Arc::clone(&sends),
        }))
    }
}

/// Per node: how many times its result leaves process `process` under
/// `job`'s placement (one timely worker per process): once to each other
/// process that reads it, and once more for an output, gathered at
/// process 0.
fn leaving(topology: &Topology, job: &Job, process: usize) -> Vec<u32> {
    let placement = job.placement();
    let at = |node: NodeId| placement.get(node.index()).map(|&w| w as usize);
    let mut leaves = vec![0; topology.node_count()];
    let mut readers = Vec::new();
    for node in 0..topology.node_count() {
        let node = NodeId::new(node);
        if at(node) != Some(process) {
            continue;
        }
        readers.clear();
        readers.extend(
            topology
                .dependents(node)
                .iter()
                .filter_map(|&d| at(d))
                .filter(|&p| p != process),
        );
        readers.sort_unstable();
        readers.dedup();
        leaves[node.index()] = readers.len() as u32;
    }
    if process != 0 {
        for &output in job.outputs() {
            if at(output) == Some(process) {
                leaves[output.index()] += 1;
            }
        }
    }
    leaves
}
