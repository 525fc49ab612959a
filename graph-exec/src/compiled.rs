//! `CompiledGraph`: a graph compiled for one request, whose tasks an executor
//! outside this crate runs one at a time (a distributed executor, say).

use graph_core::{NodeId, TaskGraph};

use crate::plan::{OpTime, Plan, merge_times};
use crate::{Error, OpRegistry, Request, TaskValue};

/// A graph compiled for one request: its needed tasks culled, their terms
/// compiled and their ops resolved, ready to be run task by task in any order
/// that puts every task after its inputs.
///
/// [`execute_sequential`](crate::execute_sequential) and
/// [`LocalExecutor`](crate::LocalExecutor) decide themselves when each task
/// runs and where its result lives; a `CompiledGraph` leaves both to its
/// caller, who hands each task the values of its inputs.
///
/// # Example
///
/// ```
/// use graph_core::{TaskGraph, Term};
/// use graph_exec::{CompiledGraph, Dynamic, OpRegistry, Request};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .build()?;
/// let registry = OpRegistry::builtins();
/// let mut compiled = CompiledGraph::new(&graph, &registry, &Request::from("y"))?;
/// let (x, y) = (graph.node_id(&"x".into()).unwrap(), graph.node_id(&"y".into()).unwrap());
/// let one = compiled.run_task(x, |_| None)?;
/// let two = compiled.run_task(y, |input| (input == x).then(|| one.clone()))?;
/// assert_eq!(two, Dynamic::Int(2));
/// # Ok::<(), graph_exec::Error>(())
/// ```
pub struct CompiledGraph<'g, T> {
    plan: Plan<'g, T>,
    stack: Vec<T>,
    times: Vec<OpTime>,
}

impl<'g, T: TaskValue> CompiledGraph<'g, T> {
    /// Compiles what `request` needs of `graph`.
    ///
    /// # Errors
    ///
    /// As [`execute_sequential`](crate::execute_sequential) before it runs
    /// anything: [`Error::UnknownKey`], [`Error::MissingOps`],
    /// [`Error::Opaque`], [`Error::Literal`] or the graph's own
    /// [`Error::Graph`].
    pub fn new(
        graph: &'g TaskGraph,
        registry: &OpRegistry<T>,
        request: &Request,
    ) -> Result<Self, Error> {
        let plan = Plan::new(graph, registry, request)?;
        let times = plan.op_table();
        Ok(CompiledGraph {
            plan,
            stack: Vec::new(),
            times,
        })
    }

    /// Whether the request needs `node`'s task.
    pub fn is_needed(&self, node: NodeId) -> bool {
        self.plan
            .exprs
            .get(node.index())
            .is_some_and(Option::is_some)
    }

    /// The distinct requested nodes, in request order.
    pub fn outputs(&self) -> &[NodeId] {
        &self.plan.outputs
    }

    /// Runs `node`'s task; `input` gives the value of each of its inputs (the
    /// dependencies of `node` in the graph's topology), or `None` when it has
    /// not been computed.
    ///
    /// # Errors
    ///
    /// [`Error::Task`] when an op returns an error or panics;
    /// [`Error::Unscheduled`] when `input` lacks a value the task reads;
    /// [`Error::NotNeeded`] when the request does not need `node`.
    pub fn run_task(
        &mut self,
        node: NodeId,
        mut input: impl FnMut(NodeId) -> Option<T>,
    ) -> Result<T, Error> {
        if !self.is_needed(node) {
            return Err(Error::NotNeeded {
                key: self.plan.graph.key(node).clone(),
            });
        }
        self.plan
            .eval(node, &mut input, &mut self.stack, &mut self.times)
            .map_err(|failure| self.plan.error(node, failure))
    }

    /// The bytes `node`'s result `value` takes, as a run's memory accounting
    /// counts them: [`TaskValue::size_bytes`], else the task's `size`, else
    /// the size of the value type.
    pub fn result_bytes(&self, node: NodeId, value: &T) -> u64 {
        self.plan.bytes_of(node, value)
    }

    /// The time spent in each op so far, by name (ops never called left out).
    pub fn op_times(&self) -> Vec<OpTime> {
        merge_times([self.times.clone()])
    }
}

impl<T> std::fmt::Debug for CompiledGraph<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledGraph")
            .field("needed", &self.plan.n_needed)
            .field("outputs", &self.plan.outputs)
            .finish_non_exhaustive()
    }
}
