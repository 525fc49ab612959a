//! The native half of the `taskgraph` Python package: dask graphs ordered,
//! measured and placed in process.
//!
//! The extension module `taskgraph._native` reads a dask graph mapping in
//! Rust, without a Python loop over its tasks: keys of every kind dask allows
//! (str, int, float, nested tuples), tasks in every form dask 2026.8 accepts
//! (legacy tuples, `dask._task_spec` objects such as `Task`, `Alias`,
//! `DataNode`, `TaskRef`, `List` and `Dict`, and literals), dependencies
//! exactly as dask's `DependenciesMapping` computes them, and dask's data
//! nodes. It then orders the graph with `graph-order`, measures orders with
//! its diagnostics, and places tasks on workers with `graph-assign`.
//!
//! Python users reach it through the `taskgraph` package (`python/` in the
//! repository), built by maturin: `taskgraph.order` returns what
//! `dask.order.order` returns, and `taskgraph.dask.install()` puts it in
//! dask's place. Its functions need a running interpreter, so they are tested
//! from Python (`python/tests`).
//!
//! # Example
//!
//! ```python
//! import taskgraph
//! from operator import add, neg
//!
//! dsk = {"a": 1, "b": 2, "c": (neg, "a"), "d": (add, "b", "c")}
//! assert taskgraph.order(dsk, strategy="dask") == {"a": 0, "c": 1, "b": 2, "d": 3}
//! ```

mod convert;
mod draw;
mod eval;
mod execute;
mod export;
mod graph;
mod key_index;
mod learn;
mod processes;
mod signals;
mod sizes;
mod text;

use graph_core::{Dag, NodeId, Topology};
use graph_order::{Order, OrderConfig, Strategy};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyMapping};

use crate::convert::{Converted, External, Reading, convert};
use crate::signals::Stop;
use crate::sizes::{Sizes, Sizing};

/// Every strategy, by the name Python passes.
/// The strategy named `name` (`"auto"`, `"dask"`, `"tree"`, ...).
fn parse_strategy(name: &str) -> PyResult<Strategy> {
    name.parse()
        .map_err(|err: graph_order::UnknownStrategy| PyValueError::new_err(err.to_string()))
}

/// dask's message for a cycle: `Cycle detected between the following
/// keys:` and the keys with `str()`, one per line, the first repeated last.
fn cycle_error(py: Python<'_>, keys: &[Py<PyAny>], nodes: &[NodeId]) -> PyErr {
    let mut message = String::from("Cycle detected between the following keys:");
    for node in nodes {
        let key = keys[node.index()].bind(py);
        let text = key
            .str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "<key>".to_owned());
        message.push_str("\n  -> ");
        message.push_str(&text);
    }
    PyRuntimeError::new_err(message)
}

/// A graph-core error as a Python exception: a cycle as dask raises it.
fn core_error(py: Python<'_>, keys: &[Py<PyAny>], err: graph_core::Error) -> PyErr {
    match err {
        graph_core::Error::NodeCycle { nodes } => cycle_error(py, keys, &nodes),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A graph-order error as a Python exception.
fn order_error(py: Python<'_>, keys: &[Py<PyAny>], err: graph_order::Error) -> PyErr {
    match err {
        graph_order::Error::Graph(err) => core_error(py, keys, err),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// The error for bytes asked of a graph whose sizes are all unknown.
pub(crate) fn no_sizes() -> PyErr {
    PyValueError::new_err(
        "no size is known for any task of the graph: give sizes= (a dict from key to bytes), \
         or a graph whose array layers tell their chunks (a HighLevelGraph)",
    )
}

/// The result of `order` is filled this many keys at a time (see
/// [`Prepared::result`]).
const RESULT_BATCH: usize = 256;

/// From this many tasks up, `taskgraph.order` and `taskgraph.dask.get` find
/// the order on a thread of its own while the caller's looks for signals
/// (see [`signals::beside`]); below it, a thread costs more than it saves,
/// and the order takes a few milliseconds.
const ORDER_BESIDE: usize = 10_000;

/// A read graph, ready to order: its keys, checked topology, data flags and
/// tie-break ranks.
pub(crate) struct Prepared {
    /// Every node's key object; tasks first, then external keys.
    pub(crate) keys: Vec<Py<PyAny>>,
    /// How many nodes are keys of the mapping.
    pub(crate) task_count: usize,
    /// The checked graph over every node.
    pub(crate) topology: Topology,
    /// dask's data nodes.
    pub(crate) is_data: Vec<bool>,
    /// dask's `str(key)` ranks.
    pub(crate) ranks: Vec<u32>,
    /// Each node's bytes, where some are known: then orders weigh results
    /// by them.
    pub(crate) sizes: Sizes,
}

impl Prepared {
    /// Reads `dsk` and checks it, and its sizes as `sizing` asks. The GIL
    /// is released while the topology is built.
    pub(crate) fn new<'py>(
        dsk: &Bound<'py, PyAny>,
        dependencies: Option<&Bound<'py, PyAny>>,
        external: External,
        sizing: &Sizing<'py>,
    ) -> PyResult<Prepared> {
        Prepared::read(dsk, dependencies, external, sizing).map(|(graph, _)| graph)
    }

    /// [`new`](Self::new), also giving back the mapping's values, which the
    /// caller may let go of while the graph is ordered (see
    /// [`order_into_dict`](Self::order_into_dict)).
    pub(crate) fn read<'py>(
        dsk: &Bound<'py, PyAny>,
        dependencies: Option<&Bound<'py, PyAny>>,
        external: External,
        sizing: &Sizing<'py>,
    ) -> PyResult<(Prepared, Vec<Bound<'py, PyAny>>)> {
        let py = dsk.py();
        let Converted {
            keys,
            task_count,
            offsets,
            targets,
            is_data,
            ranks,
            index,
            values,
        } = convert(dsk, dependencies, external, Reading::Order)?;
        let sizes = Sizes::read(sizing, &keys, &index)?;
        let keys: Vec<Py<PyAny>> = keys.into_iter().map(Bound::unbind).collect();
        let topology = py
            .detach(|| Topology::from_dependency_rows(offsets, targets))
            .map_err(|err| core_error(py, &keys, err))?;
        let graph = Prepared {
            keys,
            task_count,
            topology,
            is_data,
            ranks,
            sizes,
        };
        Ok((graph, values))
    }

    /// `taskgraph.order`'s result (see [`result`](Self::result)). The order
    /// is found with the GIL released; on large graphs on another thread,
    /// while this one, holding the GIL, makes the result's priorities as
    /// Python ints and lets go of `leftover` (Python objects the order does
    /// not need), work that would otherwise come after it, then looks for
    /// signals until the order is found (a Ctrl-C stops it).
    pub(crate) fn order_into_dict<'py>(
        &self,
        py: Python<'py>,
        strategy: Strategy,
        leftover: Vec<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let config = OrderConfig {
            strategy,
            is_data: &self.is_data,
            sizes: &self.sizes.filled,
        };
        let order =
            |stop: Stop<'_>| graph_order::order_unless(&self.topology, &self.ranks, &config, stop);
        let priorities = || -> Vec<Bound<'py, PyInt>> {
            drop(leftover);
            (0..self.task_count as u64)
                .map(|priority| {
                    let Ok(int) = priority.into_pyobject(py);
                    int
                })
                .collect()
        };
        let (order, priorities) = if self.task_count < ORDER_BESIDE {
            (py.detach(|| order(&|| false)), priorities())
        } else {
            signals::beside(py, order, priorities)?
        };
        let order = order.map_err(|err| order_error(py, &self.keys, err))?;
        self.result(py, &order, &priorities)
    }

    /// dask's result for `order`: each task's key (the graph's own key
    /// object) to its priority, as Python ints, external keys left out and
    /// the rest numbered from 0. Inserted in the order dask assigns them:
    /// data leaves that dask sets aside first (they get the last numbers),
    /// then by priority.
    ///
    /// `priorities[i]` is the Python int `i`.
    pub(crate) fn result<'py>(
        &self,
        py: Python<'py>,
        order: &Order,
        priorities: &[Bound<'py, PyInt>],
    ) -> PyResult<Bound<'py, PyDict>> {
        let sequence = order.sequence();
        let set_aside = if order.strategy() == Some(Strategy::Dask) {
            graph_order::set_aside_leaves(&self.topology, &self.is_data)
                .map_err(|err| order_error(py, &self.keys, err))?
        } else {
            0
        };
        // Each position's priority once external keys are left out.
        let mut compact = vec![u32::MAX; sequence.len()];
        let mut next = 0_u32;
        for (pos, node) in sequence.iter().enumerate() {
            if node.index() < self.task_count {
                compact[pos] = next;
                next += 1;
            }
        }
        let n = sequence.len();
        let first = (n - set_aside..n).rev();
        let positions: Vec<usize> = first.chain(0..n - set_aside).collect();
        let result = PyDict::new(py);
        for batch in positions.chunks(RESULT_BATCH) {
            // The keys are far apart in memory, and inserting one hashes
            // it: load them all first, so that their cache misses overlap.
            let loaded = batch.iter().fold(0_usize, |loaded, &pos| {
                loaded ^ self.keys[sequence[pos].index()].bind(py).get_type_ptr() as usize
            });
            std::hint::black_box(loaded);
            for &pos in batch {
                let node = sequence[pos];
                if node.index() < self.task_count {
                    let priority = &priorities[compact[pos] as usize];
                    result.set_item(self.keys[node.index()].bind(py), priority)?;
                }
            }
        }
        Ok(result)
    }

    /// Every node's size, or `ValueError` when none is known.
    pub(crate) fn known_sizes(&self) -> PyResult<&[u64]> {
        if self.sizes.any() {
            Ok(&self.sizes.filled)
        } else {
            Err(no_sizes())
        }
    }

    /// The graph without its external keys: the tasks of the mapping alone.
    pub(crate) fn tasks_only(&self) -> PyResult<Topology> {
        let n = self.task_count;
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::with_capacity(self.topology.edge_count());
        offsets.push(0_u32);
        for i in 0..n {
            let deps = self.topology.dependencies(NodeId::new(i));
            targets.extend(deps.iter().filter(|d| d.index() < n).map(|d| d.as_u32()));
            offsets.push(targets.len() as u32);
        }
        Topology::from_dependency_rows(offsets, targets)
            .map_err(|err| PyValueError::new_err(err.to_string()))
    }
}

/// Reads an order given as a mapping from key to priority (an int, or
/// dask's `Order` with a `priority`) for each task of `keys`.
pub(crate) fn read_priorities(
    py: Python<'_>,
    keys: &[Py<PyAny>],
    o: &Bound<'_, PyAny>,
) -> PyResult<Vec<i64>> {
    let dict = o.cast::<PyDict>().ok();
    if dict.is_none() && o.cast::<PyMapping>().is_err() {
        return Err(PyTypeError::new_err(format!(
            "the order must map each key to its priority (a dict, as `order` returns), not {}",
            o.get_type().name()?
        )));
    }
    let mut given = Vec::with_capacity(keys.len());
    for key in keys {
        let key = key.bind(py);
        let value = match dict {
            Some(dict) => dict.get_item(key)?,
            None => o.get_item(key).ok(),
        };
        let value = value.ok_or_else(|| {
            PyKeyError::new_err(format!(
                "the order has no priority for key {}",
                key.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let priority = match value.extract::<i64>() {
            Ok(p) => p,
            Err(_) if value.is_instance_of::<PyInt>() => {
                return Err(PyValueError::new_err(format!(
                    "the priority of key {} is {}: out of range",
                    key.repr()?,
                    value.repr()?
                )));
            }
            // dask's `Order` carries its priority.
            Err(_) => match value.getattr("priority").and_then(|p| p.extract::<i64>()) {
                Ok(p) => p,
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "the priority of key {} must be an int (or dask's Order), not {}",
                        key.repr()?,
                        value.repr()?
                    )));
                }
            },
        };
        given.push(priority);
    }
    Ok(given)
}

/// The order in which a scheduler following `given` runs `topology`: the
/// ready task with the lowest priority first (ties by position), as
/// graph-exec's one-thread run (`run_order`) takes it. This is the order
/// itself when it is a valid one, and a valid order close to it when
/// priorities repeat (dask can number two set-aside leaves alike).
pub(crate) fn schedule(topology: &Topology, given: &[i64]) -> PyResult<Vec<u32>> {
    // dask's priorities are any integers: ranked (ties by position) for it.
    let mut by_priority: Vec<u32> = (0..given.len() as u32).collect();
    by_priority.sort_unstable_by_key(|&i| (given[i as usize], i));
    let mut ranks = vec![0_u32; given.len()];
    for (rank, &node) in by_priority.iter().enumerate() {
        ranks[node as usize] = rank as u32;
    }
    let needed = vec![true; given.len()];
    graph_exec::scheduler::run_order(topology, &needed, &ranks)
        .map_err(|err| PyValueError::new_err(err.to_string()))
}

/// The max pressure of `given` (a priority per task) on `topology`.
pub(crate) fn max_pressure_of(topology: &Topology, given: &[i64]) -> PyResult<u32> {
    let order = Order::from_priorities(topology, schedule(topology, given)?)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    graph_order::max_pressure(topology, &order)
        .map_err(|err| PyValueError::new_err(err.to_string()))
}

/// The max bytes of `given` (a priority per task) on `topology`, each
/// result weighed by `sizes`.
pub(crate) fn max_bytes_of(topology: &Topology, given: &[i64], sizes: &[u64]) -> PyResult<u64> {
    let order = Order::from_priorities(topology, schedule(topology, given)?)
        .map_err(|err| PyValueError::new_err(err.to_string()))?;
    graph_order::max_bytes(topology, &order, sizes)
        .map_err(|err| PyValueError::new_err(err.to_string()))
}

/// The extension module `taskgraph._native`.
#[pymodule(name = "_native")]
mod native {
    use graph_core::Topology;
    use pyo3::prelude::*;
    use pyo3::types::PyDict;

    use crate::convert::External;
    use crate::draw;
    use crate::export::{Export, write_error};
    use crate::sizes::Sizing;
    use crate::{Prepared, max_bytes_of, max_pressure_of, parse_strategy, read_priorities};

    #[pymodule_export]
    use crate::execute::Execution;
    #[pymodule_export]
    use crate::graph::DaskGraph;
    #[pymodule_export]
    use crate::processes::{WorkerRun, plan_processes, read_hostfile};

    /// dask's `order(dsk)`: a priority for every key of `dsk` (0 runs
    /// first), as a dict inserted in the order dask assigns them.
    ///
    /// `dependencies`, if given, maps each key to the keys it needs (a key
    /// it does not list needs nothing; keys missing from `dsk` are ignored)
    /// and replaces dask's scan of the tasks. `strategy` is `"auto"`,
    /// `"dask"`, `"tree"`, `"greedy"`, `"dfs"`, `"bfs"` or `"exact"`. A
    /// cycle raises `RuntimeError("Cycle detected between the following
    /// keys: ...")`.
    ///
    /// `sizes` weighs results by their bytes, so that the order holds few
    /// bytes rather than few results: a mapping from key to bytes (keys it
    /// leaves out take their chunk's bytes where `dsk`'s array layers tell
    /// them, else the mean of their group's known sizes, else of all), None
    /// for the sizes that can be found (the chunks of the array layers of a
    /// `HighLevelGraph`; a plain dict has none, and is ordered as dask
    /// orders it), or False to count results. `layers`: the array layers to
    /// read instead of `dsk`'s, `(name, chunks, itemsize)` triples as
    /// `taskgraph._sizes.chunk_layers` lists them.
    #[pyfunction]
    #[pyo3(signature = (dsk, dependencies=None, *, strategy="auto", sizes=None, layers=None))]
    fn order<'py>(
        dsk: &Bound<'py, PyAny>,
        dependencies: Option<&Bound<'py, PyAny>>,
        strategy: &str,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let py = dsk.py();
        let strategy = parse_strategy(strategy)?;
        let sizing = Sizing::new(dsk, sizes, layers)?;
        let (graph, values) = Prepared::read(dsk, dependencies, External::AsDataNodes, &sizing)?;
        if graph.task_count == 0 {
            return Ok(PyDict::new(py));
        }
        graph.order_into_dict(py, strategy, values)
    }

    /// The most results an order of `dsk` holds in memory at once, as dask's
    /// `diagnostics(dsk, o)` counts them. `o` maps every key to a priority
    /// (or to dask's `Order`); it is run as a scheduler would: the ready task
    /// with the lowest priority first. `sizes` is read and checked as
    /// `max_bytes` reads it, but the result counts results: `max_bytes`
    /// weighs them.
    #[pyfunction]
    #[pyo3(signature = (dsk, o, sizes=None, *, layers=None))]
    fn max_pressure<'py>(
        dsk: &Bound<'py, PyAny>,
        o: &Bound<'py, PyAny>,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<u32> {
        let py = dsk.py();
        // Only a mapping of sizes is read: the layers' would not be used.
        let sizing = match sizes {
            Some(sizes) if !sizes.is_none() => Sizing::new(dsk, Some(sizes), layers)?,
            _ => Sizing::Count,
        };
        let graph = Prepared::new(dsk, None, External::Drop, &sizing)?;
        let given = read_priorities(py, &graph.keys, o)?;
        max_pressure_of(&graph.topology, &given)
    }

    /// The most bytes of results an order of `dsk` holds at once (run as
    /// `max_pressure` runs it), each result weighed by its size: `sizes`
    /// (a mapping from key to bytes) where it gives one, else its chunk's
    /// bytes where `dsk`'s array layers tell them, else estimated (the mean
    /// of its group's known sizes, else of all). Raises `ValueError` when
    /// no size is known.
    #[pyfunction]
    #[pyo3(signature = (dsk, o, sizes=None, *, layers=None))]
    fn max_bytes<'py>(
        dsk: &Bound<'py, PyAny>,
        o: &Bound<'py, PyAny>,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<u64> {
        let py = dsk.py();
        let sizing = Sizing::new(dsk, sizes, layers)?;
        let graph = Prepared::new(dsk, None, External::Drop, &sizing)?;
        let sizes = graph.known_sizes()?;
        let given = read_priorities(py, &graph.keys, o)?;
        max_bytes_of(&graph.topology, &given, sizes)
    }

    /// A proven lower bound on the max bytes (see `max_bytes`) of any order
    /// of `dsk`, with the sizes `max_bytes` takes.
    #[pyfunction]
    #[pyo3(signature = (dsk, sizes=None, *, layers=None))]
    fn lower_bound_bytes<'py>(
        dsk: &Bound<'py, PyAny>,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<u64> {
        let py = dsk.py();
        let sizing = Sizing::new(dsk, sizes, layers)?;
        let graph = Prepared::new(dsk, None, External::Drop, &sizing)?;
        let sizes = graph.known_sizes()?;
        let topology: &Topology = &graph.topology;
        py.detach(|| graph_order::lower_bound_bytes(topology, sizes))
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))
    }

    /// The `taskgraph-json/1` document of the dask graph mapping `dsk`, as
    /// UTF-8 JSON text; chunk sizes from the layers of `sizes_from` (a
    /// `HighLevelGraph`, or anything else for none).
    #[pyfunction]
    fn dask_document<'py>(
        dsk: &Bound<'py, PyAny>,
        sizes_from: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let export = Export::read(dsk, sizes_from)?;
        let mut text = Vec::new();
        let document = export.document()?;
        dsk.py()
            .detach(|| document.write(&mut text))
            .map_err(write_error)?;
        Ok(pyo3::types::PyBytes::new(dsk.py(), &text))
    }

    /// Writes the document of `dsk` to `path` (gzip when it ends in `.gz`),
    /// whole or not at all; returns the number of tasks written.
    #[pyfunction]
    fn dask_dump(
        dsk: &Bound<'_, PyAny>,
        path: std::path::PathBuf,
        sizes_from: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let export = Export::read(dsk, sizes_from)?;
        let document = export.document()?;
        dsk.py()
            .detach(|| document.write_path(&path))
            .map_err(write_error)?;
        Ok(export.graph.len())
    }

    /// The picture `taskgraph viz` draws of the dask graph `dsk` as
    /// `options` ask (a dict: `color`, `strategy`, `workers`, `collapse`,
    /// `max_tasks`): its DOT, or with `format` (`"svg"`, `"png"`, `"pdf"`)
    /// Graphviz's rendering.
    #[pyfunction]
    #[pyo3(signature = (dsk, sizes_from, options, format=None))]
    fn dask_picture<'py>(
        dsk: &Bound<'py, PyAny>,
        sizes_from: &Bound<'py, PyAny>,
        options: draw::Asked,
        format: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let dot = draw::picture(dsk, sizes_from, &options)?.to_dot();
        let py = dsk.py();
        Ok(match format {
            None => pyo3::types::PyString::new(py, &dot).into_any(),
            Some(format) => {
                pyo3::types::PyBytes::new(py, &draw::render(py, &dot, format)?).into_any()
            }
        })
    }

    /// Draws the dask graph `dsk` into `path` (`.dot`, `.svg`, `.png`,
    /// `.pdf` or `.html`) as `options` ask, whole or not at all.
    #[pyfunction]
    fn dask_draw(
        dsk: &Bound<'_, PyAny>,
        sizes_from: &Bound<'_, PyAny>,
        path: std::path::PathBuf,
        options: draw::Asked,
    ) -> PyResult<()> {
        draw::draw(dsk, sizes_from, path, &options)
    }

    /// The names `strategy=` accepts.
    #[pyfunction]
    fn strategies() -> Vec<&'static str> {
        graph_order::Strategy::ALL
            .iter()
            .map(|s| s.name())
            .collect()
    }

    /// A proven lower bound on the max pressure of any order of `dsk`.
    #[pyfunction]
    fn lower_bound(dsk: &Bound<'_, PyAny>) -> PyResult<u32> {
        let py = dsk.py();
        let graph = Prepared::new(dsk, None, External::Drop, &Sizing::Count)?;
        let topology: &Topology = &graph.topology;
        py.detach(|| graph_order::lower_bound(topology))
            .map_err(|err| pyo3::exceptions::PyValueError::new_err(err.to_string()))
    }
}
