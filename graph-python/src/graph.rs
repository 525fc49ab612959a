//! `DaskGraph`: a dask graph read once, then ordered, measured and placed as
//! often as asked (the native part of `taskgraph.Graph`).

use graph_assign::Workers;
use graph_core::{Dag, GraphStats, NodeId, Topology};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert::External;
use crate::sizes::Sizing;
use crate::{Prepared, max_bytes_of, max_pressure_of, no_sizes, parse_strategy, read_priorities};

/// The most workers `assign` places a graph on: the bound of the command
/// line's `taskgraph assign --workers` (a placement takes memory per worker).
const MAX_WORKERS: usize = 1_000_000;

/// A dask graph read into dense form: its keys in the mapping's order, its
/// dependencies as dask computes them, and dask's data nodes.
#[pyclass(module = "taskgraph._native", frozen)]
pub(crate) struct DaskGraph {
    graph: Prepared,
    /// The graph of the mapping's keys alone (external keys left out).
    tasks: Option<Topology>,
}

impl DaskGraph {
    fn tasks(&self) -> &Topology {
        self.tasks.as_ref().unwrap_or(&self.graph.topology)
    }

    /// The sizes of the tasks (external keys left out); empty when none is
    /// known.
    fn task_sizes(&self) -> &[u64] {
        self.graph.sizes.first(self.graph.task_count)
    }
}

#[pymethods]
impl DaskGraph {
    /// Reads a graph mapping (`dependencies`, `sizes` and `layers` as for
    /// `taskgraph.order`).
    #[new]
    #[pyo3(signature = (dsk, dependencies=None, *, sizes=None, layers=None))]
    fn new<'py>(
        dsk: &Bound<'py, PyAny>,
        dependencies: Option<&Bound<'py, PyAny>>,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        let sizing = Sizing::new(dsk, sizes, layers)?;
        let graph = Prepared::new(dsk, dependencies, External::AsDataNodes, &sizing)?;
        let tasks = if graph.task_count < graph.keys.len() {
            Some(graph.tasks_only()?)
        } else {
            None
        };
        Ok(DaskGraph { graph, tasks })
    }

    fn __len__(&self) -> usize {
        self.graph.task_count
    }

    /// The keys, in the mapping's order.
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.graph.keys[..self.graph.task_count]
                .iter()
                .map(|k| k.bind(py)),
        )
    }

    /// Whether each task is a dask data node, in the mapping's order.
    fn is_data(&self) -> Vec<bool> {
        self.graph.is_data[..self.graph.task_count].to_vec()
    }

    /// The edges `(dependency, dependent)` between tasks, by position.
    fn edges(&self) -> Vec<(u32, u32)> {
        let tasks = self.tasks();
        tasks
            .node_ids()
            .flat_map(|v| {
                tasks
                    .dependencies(v)
                    .iter()
                    .map(move |d| (d.as_u32(), v.as_u32()))
            })
            .collect()
    }

    /// `taskgraph.order` of the graph: key to priority, in dask's insertion
    /// order.
    #[pyo3(signature = (strategy="auto"))]
    fn order<'py>(&self, py: Python<'py>, strategy: &str) -> PyResult<Bound<'py, PyDict>> {
        let strategy = parse_strategy(strategy)?;
        if self.graph.task_count == 0 {
            return Ok(PyDict::new(py));
        }
        self.graph.order_into_dict(py, strategy, Vec::new())
    }

    /// The max pressure of an order given as a mapping from key to priority.
    fn max_pressure(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<u32> {
        let keys = &self.graph.keys[..self.graph.task_count];
        let given = read_priorities(py, keys, o)?;
        max_pressure_of(self.tasks(), &given)
    }

    /// A proven lower bound on the max pressure of any order.
    fn lower_bound(&self, py: Python<'_>) -> PyResult<u32> {
        let tasks = self.tasks();
        py.detach(|| graph_order::lower_bound(tasks))
            .map_err(|err| PyValueError::new_err(err.to_string()))
    }

    /// Each task's bytes as orders weigh them (the known ones and the
    /// estimates), key to bytes; None when no size is known.
    fn sizes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let sizes = self.task_sizes();
        if sizes.is_empty() {
            return Ok(None);
        }
        let res = PyDict::new(py);
        for (key, bytes) in self.graph.keys.iter().zip(sizes) {
            res.set_item(key.bind(py), bytes)?;
        }
        Ok(Some(res))
    }

    /// How many tasks have a size given or found (the others' are
    /// estimated).
    fn known_sizes(&self) -> usize {
        let known = &self.graph.sizes.known;
        known
            .iter()
            .take(self.graph.task_count)
            .filter(|s| s.is_some())
            .count()
    }

    /// The max bytes of an order given as a mapping from key to priority.
    fn max_bytes(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<u64> {
        let sizes = self.task_sizes();
        if sizes.is_empty() {
            return Err(no_sizes());
        }
        let keys = &self.graph.keys[..self.graph.task_count];
        let given = read_priorities(py, keys, o)?;
        max_bytes_of(self.tasks(), &given, sizes)
    }

    /// A proven lower bound on the max bytes of any order.
    fn lower_bound_bytes(&self, py: Python<'_>) -> PyResult<u64> {
        let sizes = self.task_sizes();
        if sizes.is_empty() {
            return Err(no_sizes());
        }
        let tasks = self.tasks();
        py.detach(|| graph_order::lower_bound_bytes(tasks, sizes))
            .map_err(|err| PyValueError::new_err(err.to_string()))
    }

    /// The graph's shape: tasks, edges, roots, leaves, depth, the largest
    /// in- and out-degree, and how many tasks dask treats as data.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let tasks = self.tasks();
        let stats = py.detach(|| GraphStats::of(tasks));
        let res = PyDict::new(py);
        res.set_item("tasks", stats.tasks)?;
        res.set_item("edges", stats.edges)?;
        res.set_item("roots", stats.roots)?;
        res.set_item("leaves", stats.leaves)?;
        res.set_item("depth", stats.depth)?;
        res.set_item("max_in_degree", stats.max_in_degree)?;
        res.set_item("max_out_degree", stats.max_out_degree)?;
        let data = self.graph.is_data[..self.graph.task_count]
            .iter()
            .filter(|&&d| d)
            .count();
        res.set_item("data_nodes", data)?;
        Ok(res)
    }

    /// The stage plan (see `taskgraph stages`): the dict of `stages --json`.
    /// `keep` lists the positions of the tasks that stay tasks of their own;
    /// by default the graph's leaves.
    #[pyo3(signature = (keep=None))]
    fn stages<'py>(&self, py: Python<'py>, keep: Option<Vec<u32>>) -> PyResult<Bound<'py, PyDict>> {
        let tasks = self.tasks();
        let n = tasks.node_count();
        let keep: Vec<NodeId> = match keep {
            Some(keep) => keep
                .into_iter()
                .map(|i| {
                    if (i as usize) < n {
                        Ok(NodeId::from_u32(i))
                    } else {
                        Err(PyValueError::new_err(format!("no task at position {i}")))
                    }
                })
                .collect::<PyResult<_>>()?,
            None => tasks
                .node_ids()
                .filter(|&node| tasks.dependents(node).is_empty())
                .collect(),
        };
        let summary = py
            .detach(|| graph_optimize::plan_shape_stages(tasks, &keep).summary(tasks))
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        let res = PyDict::new(py);
        res.set_item("stage_count", summary.stages.len())?;
        let stages = PyList::empty(py);
        for (stage, figures) in summary.stages.iter().enumerate() {
            let item = PyDict::new(py);
            item.set_item("stage", stage)?;
            item.set_item("tasks", figures.tasks)?;
            item.set_item("tasks_after_coalescing", figures.tasks_after_coalescing)?;
            item.set_item("wide_inputs", figures.wide_inputs)?;
            stages.append(item)?;
        }
        res.set_item("stages", stages)?;
        res.set_item("barriers", summary.barriers.len())?;
        res.set_item("edges", summary.edges)?;
        res.set_item("edges_with_barriers", summary.edges_with_barriers)?;
        Ok(res)
    }

    /// Places the tasks on `workers` workers with few edges between
    /// workers and balanced loads (`graph-assign`'s default): key to worker.
    fn assign<'py>(&self, py: Python<'py>, workers: usize) -> PyResult<Bound<'py, PyDict>> {
        if !(1..=MAX_WORKERS).contains(&workers) {
            return Err(PyValueError::new_err(format!(
                "workers must be from 1 to {MAX_WORKERS} (as for `taskgraph assign --workers`), not {workers}"
            )));
        }
        let tasks = self.tasks();
        let assignment = py
            .detach(|| {
                let workers = Workers::new(workers)?;
                graph_assign::assign(tasks, &workers, None, None)
            })
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        let res = PyDict::new(py);
        for (i, &worker) in assignment.as_slice().iter().enumerate() {
            res.set_item(self.graph.keys[NodeId::new(i).index()].bind(py), worker)?;
        }
        Ok(res)
    }
}
