//! `cull`: keep only what the requested keys need.

use fixedbitset::FixedBitSet;
use graph_core::{Key, NodeId, TaskGraph};

use crate::Error;
use crate::work::Work;

/// Keeps only the tasks that the requested keys need: the keys and,
/// transitively, everything they reference.
///
/// Matches dask's `dask.optimization.cull(dsk, keys)`: the kept tasks keep
/// their bodies unchanged. Differs from dask in that keys are a flat slice
/// (dask also flattens nested lists), and in what comes with the result:
/// dask returns the dependencies as well, while the graph returned here
/// holds its own references ([`TaskGraph::references`], in preorder where
/// dask's lists are in breadth-first order), handed to it so that the next
/// pass resolves no key. The kept tasks stay in the input's order.
///
/// # Arguments
///
/// - `graph`: the graph to cull.
/// - `keys`: the keys wanted; repeats are harmless.
///
/// # Returns
///
/// The culled graph.
///
/// # Errors
///
/// [`Error::UnknownKey`] naming a requested key no task has;
/// [`Error::Graph`] for a reference to a missing key or a cycle (a task that
/// references itself included).
///
/// # Complexity
///
/// O(V + R) time and space for V tasks and R references.
///
/// # Example
///
/// ```
/// use graph_core::{Key, NodeId, TaskGraph, Term};
/// use graph_optimize::cull;
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .task("z", Term::call("inc", [Term::key("x")]))
///     .task("out", Term::call("add", [Term::key("y"), Term::lit(10)]))
///     .build()?;
/// let culled = cull(&graph, &[Key::from("out")])?;
/// let keys: Vec<String> = culled.keys().map(|k| k.python_str()).collect();
/// assert_eq!(keys, ["x", "y", "out"]);
/// // The output knows its references: `out` (now node 2) uses `y` (node 1).
/// assert_eq!(culled.references()?.get(NodeId::new(2)), [NodeId::new(1)]);
/// assert!(cull(&graph, &[Key::from("badkey")]).is_err());
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn cull(graph: &TaskGraph, keys: &[Key]) -> Result<TaskGraph, Error> {
    let mut work = Work::new(graph, false)?;
    let roots = keys
        .iter()
        .map(|key| work.require(key))
        .collect::<Result<Vec<NodeId>, Error>>()?;
    cull_work(&mut work, &roots);
    work.finish()
}

/// [`cull`] on a graph being optimized.
pub(crate) fn cull_work(work: &mut Work<'_>, roots: &[NodeId]) {
    let mut seen = FixedBitSet::with_capacity(work.node_count());
    let mut stack = Vec::with_capacity(roots.len());
    for &node in roots {
        if !seen.put(node.index()) {
            stack.push(node);
        }
    }
    while let Some(node) = stack.pop() {
        for &dep in work.deps(node) {
            if !seen.put(dep.index()) {
                stack.push(dep);
            }
        }
    }
    prune(work, &seen);
}

/// Removes every alive task not in `keep`.
pub(crate) fn prune(work: &mut Work<'_>, keep: &FixedBitSet) {
    let dead: Vec<NodeId> = work.alive().difference(keep).map(NodeId::new).collect();
    for node in dead {
        work.kill(node);
    }
}
