//! `cull`: keep only what the requested keys need.

use fixedbitset::FixedBitSet;
use graph_core::{Key, TaskGraph};

use crate::work::Work;
use crate::{Error, Optimized};

/// Keeps only the tasks that the requested keys need: the keys and,
/// transitively, everything they reference.
///
/// Matches dask's `dask.optimization.cull(dsk, keys)`: the kept tasks keep
/// their bodies unchanged, and the dependencies of the result are returned
/// with it. Differs from dask in that keys are a flat slice (dask also
/// flattens nested lists) and the dependency rows list references in
/// preorder (dask's lists are in breadth-first order); the kept tasks stay in
/// the input's order.
///
/// # Arguments
///
/// - `graph`: the graph to cull.
/// - `keys`: the keys wanted; repeats are harmless.
///
/// # Returns
///
/// The culled graph and its [`Dependencies`](crate::Dependencies).
///
/// # Errors
///
/// [`Error::UnknownKey`] naming a requested key no task has;
/// [`Error::Graph`] for a reference to a missing key or a cycle.
///
/// # Complexity
///
/// O(V + R) time and space for V tasks and R references.
///
/// # Example
///
/// ```
/// use graph_core::{Key, TaskGraph, Term};
/// use graph_optimize::cull;
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .task("z", Term::call("inc", [Term::key("x")]))
///     .task("out", Term::call("add", [Term::key("y"), Term::lit(10)]))
///     .build()?;
/// let culled = cull(&graph, &[Key::from("out")])?;
/// let keys: Vec<String> = culled.graph.keys().map(|k| k.python_str()).collect();
/// assert_eq!(keys, ["x", "y", "out"]);
/// assert!(cull(&graph, &[Key::from("badkey")]).is_err());
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn cull(graph: &TaskGraph, keys: &[Key]) -> Result<Optimized, Error> {
    let mut work = Work::new(graph, None)?;
    let roots = keys
        .iter()
        .map(|key| work.require(key))
        .collect::<Result<Vec<u32>, Error>>()?;
    cull_work(&mut work, &roots);
    work.finish()
}

/// [`cull`] on a graph being optimized.
pub(crate) fn cull_work(work: &mut Work<'_>, roots: &[u32]) {
    let mut seen = FixedBitSet::with_capacity(work.node_count());
    let mut stack = Vec::with_capacity(roots.len());
    for &node in roots {
        if !seen.put(node as usize) {
            stack.push(node);
        }
    }
    while let Some(node) = stack.pop() {
        for &dep in work.deps(node) {
            if !seen.put(dep as usize) {
                stack.push(dep);
            }
        }
    }
    prune(work, &seen);
}

/// Removes every alive task not in `keep`.
pub(crate) fn prune(work: &mut Work<'_>, keep: &FixedBitSet) {
    let dead: Vec<u32> = work
        .alive()
        .difference(keep)
        .map(|node| node as u32)
        .collect();
    for node in dead {
        work.kill(node);
    }
}
