//! `execute_sequential`: the oracle every other executor is checked against.

use graph_core::{Dag, TaskGraph};

use crate::plan::{Plan, Stats, merge_times};
use crate::{Error, OpRegistry, Output, Request, TaskValue};

/// The results of a run and what it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Run<T> {
    /// The results, shaped like the request.
    pub output: Output<T>,
    /// Counters of the run.
    pub stats: Stats,
}

/// Runs the tasks `request` needs, one at a time, in a depth-first post-order
/// from the requested keys; frees each intermediate result as soon as its last
/// dependent has run.
///
/// This is the simple, obviously right executor that the parallel one is
/// tested against. It matches `dask.get` (the synchronous scheduler) in what
/// it computes and returns; its order is a plain post-order rather than
/// `dask.order`.
///
/// # Arguments
///
/// - `graph`: the tasks.
/// - `registry`: the functions behind the ops.
/// - `request`: a key, or nested lists of keys.
///
/// # Returns
///
/// The results shaped like `request`, and the run's [`Stats`].
///
/// # Errors
///
/// Before anything runs: [`Error::UnknownKey`], [`Error::MissingOps`] (every
/// missing op, each with a task that calls it), [`Error::Opaque`],
/// [`Error::Literal`], or the graph's own [`Error::Graph`]. While running: the
/// first failing task as [`Error::Task`], which names its key and op.
///
/// **Complexity**: O(V + E) time plus the ops' own; O(V) memory beyond the
/// results held.
///
/// # Example
///
/// ```
/// use graph_core::{TaskGraph, Term};
/// use graph_exec::{Dynamic, OpRegistry, Output, Request, execute_sequential};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .build()?;
/// let run = execute_sequential(&graph, &OpRegistry::builtins(), &Request::from("y"))?;
/// assert_eq!(run.output, Output::Value(Dynamic::Int(2)));
/// assert_eq!(run.stats.tasks_run, 2);
/// # Ok::<(), graph_exec::Error>(())
/// ```
pub fn execute_sequential<T: TaskValue>(
    graph: &TaskGraph,
    registry: &OpRegistry<T>,
    request: &Request,
) -> Result<Run<T>, Error> {
    let plan = Plan::new(graph, registry, request)?;
    let mut values: Vec<Option<T>> = vec![None; graph.len()];
    let mut remaining = plan.data_dependents.clone();
    let mut bytes = vec![0_u64; graph.len()];
    let mut times = plan.op_table();
    let mut stack = Vec::new();
    let (mut held, mut peak_held, mut tasks_run) = (0_usize, 0_usize, 0_usize);
    let (mut held_bytes, mut peak_bytes) = (0_u64, 0_u64);
    for node in plan.post_order() {
        peak_held = peak_held.max(held);
        peak_bytes = peak_bytes.max(held_bytes);
        let value = plan
            .eval(
                node,
                &mut |input| values[input.index()].clone(),
                &mut stack,
                &mut times,
            )
            .map_err(|failure| plan.error(node, failure))?;
        tasks_run += 1;
        for &dep in plan.topology.dependencies(node) {
            remaining[dep.index()] -= 1;
            if remaining[dep.index()] == 0 {
                held -= 1;
                held_bytes -= bytes[dep.index()];
                if !plan.is_output[dep.index()] {
                    values[dep.index()] = None;
                }
            }
        }
        if plan.data_dependents[node.index()] > 0 {
            held += 1;
            bytes[node.index()] = plan.bytes_of(node, &value);
            held_bytes += bytes[node.index()];
        }
        values[node.index()] = Some(value);
    }
    Ok(Run {
        output: plan.shape(request, &values),
        stats: Stats {
            tasks_run,
            peak_held,
            peak_bytes,
            spilled_bytes: 0,
            op_times: merge_times([times]),
        },
    })
}
