//! Per-task inputs: sizes and costs from a graph's metadata, their checks,
//! and the depth-first traversal the partitioner starts from.

use graph_core::{Dag, NodeId, TaskGraph, Topology};

use crate::Error;

/// The size in bytes of every task's result, from the graph's metadata:
/// `size` where a task has one, 1 where it has none (so that, without
/// metadata, transfer bytes count cut edges).
///
/// # Example
///
/// ```
/// use graph_core::{TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .size(800)
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .build()?;
/// assert_eq!(graph_assign::sizes_of(&graph), [800, 1]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn sizes_of(graph: &TaskGraph) -> Vec<u64> {
    graph
        .iter()
        .map(|(_, task)| task.size.unwrap_or(1))
        .collect()
}

/// The cost in seconds of every task, from the graph's metadata, or `None`
/// when no task has a cost (then every task counts 1). Where some tasks
/// have a cost and others do not, the others count 1 second.
///
/// # Example
///
/// ```
/// use graph_core::{TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .cost(2.5)
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .build()?;
/// assert_eq!(graph_assign::costs_of(&graph), Some(vec![2.5, 1.0]));
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn costs_of(graph: &TaskGraph) -> Option<Vec<f64>> {
    graph.iter().any(|(_, task)| task.cost.is_some()).then(|| {
        graph
            .iter()
            .map(|(_, task)| task.cost.unwrap_or(1.0))
            .collect()
    })
}

pub(crate) fn check_len(what: &'static str, len: usize, node_count: usize) -> Result<(), Error> {
    if len == node_count {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            len,
            node_count,
        })
    }
}

pub(crate) fn check_sizes(sizes: Option<&[u64]>, node_count: usize) -> Result<(), Error> {
    match sizes {
        Some(sizes) => check_len("sizes", sizes.len(), node_count),
        None => Ok(()),
    }
}

/// The most seconds of work a graph's costs may add up to (about 31
/// million years): far beyond any real run, and small enough that sums of
/// costs, transfers and balance factors never overflow an `f64`.
pub const MAX_TOTAL_SECONDS: f64 = 1e15;

/// The load of every task: its cost, or 1 without costs.
pub(crate) fn loads(costs: Option<&[f64]>, node_count: usize) -> Result<Vec<f64>, Error> {
    match costs {
        None => Ok(vec![1.0; node_count]),
        Some(costs) => {
            check_len("costs", costs.len(), node_count)?;
            if let Some(node) = costs.iter().position(|c| !(c.is_finite() && *c >= 0.0)) {
                return Err(Error::BadCost {
                    node: NodeId::new(node),
                    cost: costs[node],
                });
            }
            // Every load, time and balance is a sum of costs: bounding the
            // total keeps all of them finite and exact to well under a second.
            let total: f64 = costs.iter().sum();
            if total > MAX_TOTAL_SECONDS {
                return Err(Error::CostsTooLarge { total });
            }
            Ok(costs.to_vec())
        }
    }
}

/// A depth-first post-order through dependencies, started from the sinks
/// (tasks nothing depends on) in increasing id order: every task right after
/// the last of its dependencies that was not yet placed. Work that feeds the
/// same result ends up next to each other, which is what makes contiguous
/// slices of this order good parts.
pub(crate) fn dependency_post_order(dag: &Topology) -> Vec<u32> {
    let n_nodes = dag.node_count();
    let mut order = Vec::with_capacity(n_nodes);
    let mut seen = vec![false; n_nodes];
    // (node, index of its next dependency to visit)
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for sink in 0..n_nodes {
        if !dag.dependents(NodeId::new(sink)).is_empty() || seen[sink] {
            continue;
        }
        seen[sink] = true;
        stack.push((sink as u32, 0));
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            let deps = dag.dependencies(NodeId::from_u32(node));
            if let Some(&dep) = deps.get(next as usize) {
                top.1 += 1;
                if !seen[dep.index()] {
                    seen[dep.index()] = true;
                    stack.push((dep.as_u32(), 0));
                }
            } else {
                order.push(node);
                stack.pop();
            }
        }
    }
    debug_assert_eq!(order.len(), n_nodes, "every node of a Dag reaches a sink");
    order
}

/// Nodes sorted by `priorities` (lower first), ties by id.
pub(crate) fn order_by_priority(priorities: &[u32]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..priorities.len() as u32).collect();
    order.sort_unstable_by_key(|&node| (priorities[node as usize], node));
    order
}
