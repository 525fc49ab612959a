//! The error type of `graph-order`.

use graph_core::NodeId;

/// Everything that can go wrong ordering a graph or judging an order.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A per-node input (tie-break ranks, data flags, priorities) has the
    /// wrong length.
    #[error("{what} has {found} entries, but the graph has {expected} nodes")]
    LengthMismatch {
        /// What the input is.
        what: &'static str,
        /// The number of nodes.
        expected: usize,
        /// The number of entries given.
        found: usize,
    },
    /// Priorities that are not `0..n` each exactly once.
    #[error(
        "priorities are not a permutation of 0..{node_count}: {priority} is out of range or repeated"
    )]
    NotAPermutation {
        /// The offending priority.
        priority: u32,
        /// The number of nodes.
        node_count: usize,
    },
    /// Priorities that run a node before one of its dependencies.
    #[error("node {node} is ordered before its dependency {dependency}")]
    NotTopological {
        /// The node that runs too early.
        node: NodeId,
        /// The dependency it would run before.
        dependency: NodeId,
    },
    /// The graph itself is invalid, as
    /// [`Topology::checked`](graph_core::Topology::checked) or
    /// [`TaskGraph::topology`](graph_core::TaskGraph::topology) finds it: a
    /// cycle ([`NodeCycle`](graph_core::Error::NodeCycle) naming its nodes, a
    /// self-edge included, or [`Cycle`](graph_core::Error::Cycle) naming its
    /// keys), a dependency out of range
    /// ([`NodeOutOfRange`](graph_core::Error::NodeOutOfRange)), a missing
    /// key, or more nodes than `u32` ids allow.
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
    /// The `stop` given to [`order_unless`](crate::order_unless) returned
    /// `true` before the order was found.
    #[error("the order was stopped before it was found")]
    Stopped,
}
