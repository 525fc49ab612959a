//! The error type of `graph-assign`.

use graph_core::NodeId;

/// Everything that can go wrong placing a graph on workers.
///
/// Every variant is a problem with the input (the graph, the workers, or a
/// per-task slice that does not fit the graph); the algorithms themselves
/// cannot fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph is not a DAG: a cycle (a task that depends on itself
    /// included), or a dependency on a node that does not exist. Every
    /// algorithm checks a caller's [`Dag`](graph_core::Dag) once, with
    /// [`Topology::checked`](graph_core::Topology::checked).
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
    /// A placement was asked for on zero workers.
    #[error("no workers: a placement needs at least one worker")]
    NoWorkers,
    /// A worker was given zero slots.
    #[error("worker {worker} has no slots: every worker needs at least one")]
    NoSlots {
        /// The index of the worker.
        worker: usize,
    },
    /// More workers than 32-bit worker ids allow.
    #[error("too many workers: {count} (at most {} are supported)", u32::MAX)]
    TooManyWorkers {
        /// The number of workers asked for.
        count: usize,
    },
    /// A per-task slice (sizes, costs, priorities, an assignment) whose length
    /// is not the number of tasks.
    #[error("{what} has {len} entries but the graph has {node_count} tasks")]
    LengthMismatch {
        /// What the slice holds: `"sizes"`, `"costs"`, `"priorities"` or
        /// `"assignment"`.
        what: &'static str,
        /// The slice's length.
        len: usize,
        /// The number of tasks in the graph.
        node_count: usize,
    },
    /// A task cost that is negative, infinite or not a number.
    #[error("task {node} has cost {cost}: a cost must be a finite number of seconds, at least 0")]
    BadCost {
        /// The task.
        node: NodeId,
        /// Its cost.
        cost: f64,
    },
    /// Task costs that add up to more than
    /// [`MAX_TOTAL_SECONDS`](crate::MAX_TOTAL_SECONDS), whose sums (loads,
    /// balance, simulated times) would lose all precision or overflow.
    #[error(
        "the task costs add up to {total:e} seconds, more than the {:e} a placement can sum exactly",
        crate::MAX_TOTAL_SECONDS
    )]
    CostsTooLarge {
        /// The sum of the costs (infinite when it overflowed).
        total: f64,
    },
    /// A transfer model under which moving every result once takes more
    /// than [`MAX_TOTAL_SECONDS`](crate::MAX_TOTAL_SECONDS) (a bandwidth
    /// far too small for the sizes, or a huge transfer time).
    #[error(
        "moving every result once (and receiving every input) would take {total:e} seconds under this transfer model, more than the {:e} a placement can sum exactly",
        crate::MAX_TOTAL_SECONDS
    )]
    TransfersTooLarge {
        /// The sum of the transfer times and of the receive time of every
        /// edge (infinite when it overflowed).
        total: f64,
    },
    /// A balance bound below 1 (no placement can have every load below the
    /// average).
    #[error("imbalance bound {bound} is below 1: the largest load is never below the average")]
    BadImbalance {
        /// The bound asked for.
        bound: f64,
    },
    /// A transfer time (the latency of a result crossing between workers)
    /// that is negative, infinite or not a number.
    #[error("transfer time {seconds} is not a finite number of seconds, at least 0")]
    BadTransferSeconds {
        /// The time asked for.
        seconds: f64,
    },
    /// A time per received input (the work of one message) that is
    /// negative, infinite or not a number.
    #[error("receive time {seconds} is not a finite number of seconds, at least 0")]
    BadReceiveSeconds {
        /// The time asked for.
        seconds: f64,
    },
    /// An [`AutoRule`](crate::AutoRule) with a slack below 1 or a gain
    /// that is negative or not a number.
    #[error(
        "auto placement rule: slack {slack} must be at least 1 and min_gain {min_gain} seconds at least 0"
    )]
    BadAutoRule {
        /// The slack asked for.
        slack: f64,
        /// The gain asked for, in seconds.
        min_gain: f64,
    },
    /// A bandwidth that is zero, negative or not a number.
    #[error("bandwidth {bandwidth} is not a positive number of bytes per second")]
    BadBandwidth {
        /// The bandwidth asked for.
        bandwidth: f64,
    },
    /// An assignment that names a worker that does not exist.
    #[error("task {node} is placed on worker {worker}, but there are only {workers} workers")]
    NoSuchWorker {
        /// The task.
        node: NodeId,
        /// The worker it names.
        worker: u32,
        /// The number of workers.
        workers: usize,
    },
    /// An assignment made for a different number of workers than the ones
    /// it is measured against.
    #[error("the assignment is for {assignment} workers, but {workers} workers were given")]
    WorkerCountMismatch {
        /// The number of workers of the assignment.
        assignment: usize,
        /// The number of workers given.
        workers: usize,
    },
}
