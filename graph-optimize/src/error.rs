//! The error type of `graph-optimize`.

use graph_core::Key;

/// Everything that can go wrong in a pass.
///
/// Messages name tasks by their key in Python's spelling, as dask users write
/// them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A requested key (to keep, to inline, to protect) that no task has.
    #[error("unknown key {key}: no task has it")]
    UnknownKey {
        /// The key.
        key: Key,
    },
    /// A wide edge named in a stage configuration that the graph lacks.
    #[error("no edge {dependency} -> {dependent}: {dependent} does not depend on {dependency}")]
    NotAnEdge {
        /// The dependency.
        dependency: Key,
        /// The dependent.
        dependent: Key,
    },
    /// A stage plan made for a graph of another size.
    #[error("the stage plan covers {planned} tasks, the graph has {tasks}")]
    PlanLength {
        /// Tasks in the graph.
        tasks: usize,
        /// Tasks in the plan.
        planned: usize,
    },
    /// A stage plan that coalesces a task this graph cannot coalesce.
    #[error("the stage plan does not fit the graph: task {key} cannot join the task that uses it")]
    PlanMismatch {
        /// The task.
        key: Key,
    },
    /// An error of the graph itself: a missing dependency, a cycle (a task
    /// that references itself is one), a duplicate key.
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
}
