//! `diagnostics`: how much memory an order holds, step by step and per task.

use graph_core::{Dag, NodeId, Topology};

use crate::{Error, Order, check_order};

/// What an order costs in memory: the pressure series and, per task, dask's
/// `OrderInfo` fields. Every per-task vector is indexed by node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics {
    /// For each step of the order (task at priority `i`), the number of
    /// results held just before that task runs.
    pub pressure: Vec<u32>,
    /// The largest entry of `pressure` (0 for an empty graph).
    pub max_pressure: u32,
    /// Per task: the steps between its own run and the run of its last
    /// dependent (0 for a task without dependents).
    pub age: Vec<u32>,
    /// Per task: how many of its dependencies it is the last consumer of.
    pub dependencies_freed: Vec<u32>,
    /// Per task: the number of results held just before it runs.
    pub data_when_run: Vec<u32>,
    /// Per task: the number of results held just before the step that
    /// releases it (its last dependent), or before it runs if it has no
    /// dependents.
    pub data_when_released: Vec<u32>,
}

/// Simulates running `dag` in the order `order`, as dask's `diagnostics` does.
///
/// A result is held from the step that computes it until the step of its last
/// dependent; the result of a task without dependents is not counted.
///
/// **dask**: `dask.order.diagnostics(dsk, o)`, whose `(info, pressure)` are
/// here one struct of per-node vectors. Identical numbers for the same order.
///
/// # Arguments
///
/// * `dag`: the graph.
/// * `order`: a priority per node, for example from [`order`](crate::order()).
///
/// # Returns
///
/// The [`Diagnostics`]: pressure series, its maximum, and per-task figures.
///
/// # Errors
///
/// [`Error::LengthMismatch`] if `order` is for another number of nodes,
/// [`Error::NotTopological`] if it runs a task before a dependency, and the
/// graph errors of [`order`](crate::order()) (a cycle, a bad index).
///
/// # Complexity
///
/// O(V + E) time and O(V + E) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_order::{Order, diagnostics};
///
/// // Two roots feeding one sum: both are held before the sum runs.
/// let dag = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let order = Order::from_priorities(&dag, vec![0, 1, 2])?;
/// let diag = diagnostics(&dag, &order)?;
/// assert_eq!(diag.pressure, [0, 1, 2]);
/// assert_eq!(diag.max_pressure, 2);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn diagnostics(dag: &impl Dag, order: &Order) -> Result<Diagnostics, Error> {
    let topology = Topology::checked(dag)?;
    check_order(&topology, order.priorities())?;
    Ok(simulate(&topology, order.priorities()))
}

/// The [`Diagnostics`] of a valid order.
fn simulate(topology: &Topology, priorities: &[u32]) -> Diagnostics {
    let n = topology.node_count();
    let sequence = sequence_of(priorities);
    let mut remaining: Vec<u32> = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    let mut d = Diagnostics {
        pressure: Vec::with_capacity(n),
        max_pressure: 0,
        age: vec![0; n],
        dependencies_freed: vec![0; n],
        data_when_run: vec![0; n],
        data_when_released: vec![0; n],
    };
    let mut in_mem: u32 = 0;
    for (step, &key) in sequence.iter().enumerate() {
        let k = key.index();
        d.pressure.push(in_mem);
        d.max_pressure = d.max_pressure.max(in_mem);
        d.data_when_run[k] = in_mem;
        let mut released = 0;
        for &dep in topology.dependencies(key) {
            let di = dep.index();
            remaining[di] -= 1;
            if remaining[di] == 0 {
                d.age[di] = step as u32 - priorities[di];
                d.data_when_released[di] = in_mem;
                released += 1;
            }
        }
        d.dependencies_freed[k] = released;
        if topology.dependents(key).is_empty() {
            d.data_when_released[k] = in_mem;
            in_mem -= released;
        } else {
            in_mem = in_mem + 1 - released;
        }
    }
    d
}

/// The maximum pressure of a valid order, without the per-task vectors.
pub(crate) fn max_pressure_of(topology: &Topology, priorities: &[u32]) -> u32 {
    let sequence = sequence_of(priorities);
    let mut remaining: Vec<u32> = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    let (mut in_mem, mut max) = (0_u32, 0_u32);
    for &key in &sequence {
        max = max.max(in_mem);
        let mut released = 0;
        for &dep in topology.dependencies(key) {
            remaining[dep.index()] -= 1;
            released += u32::from(remaining[dep.index()] == 0);
        }
        if topology.dependents(key).is_empty() {
            in_mem -= released;
        } else {
            in_mem = in_mem + 1 - released;
        }
    }
    max
}

/// The maximum pressure of `order` on `dag`: [`diagnostics`]'s `max_pressure`
/// without the per-task vectors.
///
/// **dask**: `max(diagnostics(dsk, o)[1])`, the number dask's tests assert.
///
/// # Arguments
///
/// * `dag`: the graph.
/// * `order`: a priority per node.
///
/// # Returns
///
/// The most results held before any one task runs.
///
/// # Errors
///
/// As [`diagnostics`].
///
/// # Complexity
///
/// O(V + E) time and O(V + E) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_order::{Order, max_pressure};
///
/// let dag = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let order = Order::from_priorities(&dag, vec![1, 0, 2])?;
/// assert_eq!(max_pressure(&dag, &order)?, 2);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn max_pressure(dag: &impl Dag, order: &Order) -> Result<u32, Error> {
    let topology = Topology::checked(dag)?;
    check_order(&topology, order.priorities())?;
    Ok(max_pressure_of(&topology, order.priorities()))
}

/// The node run at each step: the inverse of a priority vector.
pub(crate) fn sequence_of(priorities: &[u32]) -> Vec<NodeId> {
    let mut sequence = vec![NodeId::from_u32(0); priorities.len()];
    // Ids from a `u32` range: priorities come from a graph of fewer than
    // `u32::MAX` nodes.
    let nodes = (0..priorities.len() as u32).map(NodeId::from_u32);
    for (node, &p) in nodes.zip(priorities) {
        sequence[p as usize] = node;
    }
    sequence
}
