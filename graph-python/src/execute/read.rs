//! Reading a dask graph for a run.

use graph_core::{Dag, NodeId, Topology};
use graph_order::OrderConfig;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PySet};

use crate::convert::{Converted, External, Reading, convert};
use crate::learn::Reorder;
use crate::signals::{Stop, detach_interruptible};
use crate::sizes::{Sizes, Sizing};
use crate::{ORDER_BESIDE, core_error, order_error, parse_strategy};

/// A dask graph read for a run: checked, with the requested keys found,
/// and ordered.
pub(crate) struct ReadRun {
    /// Every node's key object; tasks first, then keys the graph names but
    /// lacks.
    pub(crate) keys: Vec<Py<PyAny>>,
    /// Every node's `hash()` of its key.
    pub(crate) hashes: Vec<isize>,
    /// Each task's value in the graph.
    pub(crate) tasks: Vec<Py<PyAny>>,
    pub(crate) topology: Topology,
    /// Per node: whether the requested keys need it.
    pub(crate) needed: Vec<bool>,
    /// The requested keys' nodes, in the order asked.
    pub(crate) outputs: Vec<NodeId>,
    pub(crate) order: graph_order::Order,
    pub(crate) sizes: Sizes,
    /// What the order was made from, for another.
    pub(crate) reorder: Reorder,
}

impl ReadRun {
    /// Reads `dsk`, checks that every key of `keys` (a flat list) is in it
    /// and that what they need is, and orders it with `strategy`, by the
    /// sizes `sizes` and `layers` tell (`taskgraph.order`'s).
    pub(crate) fn new<'py>(
        dsk: &Bound<'py, PyAny>,
        keys: &Bound<'py, PyList>,
        strategy: &str,
        sizes: Option<&Bound<'py, PyAny>>,
        layers: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<ReadRun> {
        let py = dsk.py();
        let strategy = parse_strategy(strategy)?;
        let sizing = Sizing::new(dsk, sizes, layers)?;
        let Converted {
            keys: node_keys,
            task_count,
            offsets,
            targets,
            is_data,
            ranks: str_ranks,
            index,
            values: tasks,
        } = convert(dsk, None, External::AsDataNodes, Reading::Execute)?;
        let mut outputs = Vec::with_capacity(keys.len());
        for key in keys.iter() {
            let hash = key.hash()?;
            match index.find(&node_keys, hash, &key)? {
                Some(node) if (node as usize) < task_count => outputs.push(NodeId::from_u32(node)),
                _ => return Err(PyKeyError::new_err(key.unbind())),
            }
        }
        let sizes = Sizes::read(&sizing, &node_keys, &index)?;
        let node_keys: Vec<Py<PyAny>> = node_keys.into_iter().map(Bound::unbind).collect();
        let topology = py
            .detach(|| Topology::from_dependency_rows(offsets, targets))
            .map_err(|err| core_error(py, &node_keys, err))?;
        py.check_signals()?;
        let needed = topology
            .needed_by(&outputs)
            .map_err(|err| PyValueError::new_err(err.to_string()))?;
        missing_dependencies(py, &topology, &node_keys, task_count, &needed)?;
        let config = OrderConfig {
            strategy,
            is_data: &is_data,
            sizes: &sizes.filled,
        };
        let order =
            |stop: Stop<'_>| graph_order::order_unless(&topology, &str_ranks, &config, stop);
        // On large graphs the order runs beside a look for signals.
        let order = if topology.node_count() < ORDER_BESIDE {
            py.detach(|| order(&|| false))
        } else {
            detach_interruptible(py, order)?
        }
        .map_err(|err| order_error(py, &node_keys, err))?;
        Ok(ReadRun {
            keys: node_keys,
            hashes: index.hashes().to_vec(),
            tasks: tasks.into_iter().map(Bound::unbind).collect(),
            topology,
            needed,
            outputs,
            order,
            sizes,
            reorder: Reorder {
                strategy,
                tie_break: str_ranks,
                is_data,
            },
        })
    }
}

/// dask's error for a needed key the graph names but lacks.
fn missing_dependencies(
    py: Python<'_>,
    topology: &Topology,
    keys: &[Py<PyAny>],
    task_count: usize,
    needed: &[bool],
) -> PyResult<()> {
    let Some(missing) = (task_count..keys.len()).find(|&node| needed[node]) else {
        return Ok(());
    };
    let dependents = PySet::empty(py)?;
    for &dependent in topology.dependents(NodeId::new(missing)) {
        if needed[dependent.index()] {
            dependents.add(keys[dependent.index()].bind(py))?;
        }
    }
    let key = keys[missing].bind(py);
    Err(PyValueError::new_err(format!(
        "Missing dependency {} for dependents {}",
        key.str()?,
        dependents.repr()?
    )))
}
