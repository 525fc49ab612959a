//! The error type of `graph-order`.

use std::fmt;

use graph_core::NodeId;

/// Everything that can go wrong ordering a graph or judging an order.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The dependencies of a custom [`Dag`](graph_core::Dag) form a cycle.
    #[error("cycle through nodes {} (each depends on the next)", Path(nodes))]
    Cycle {
        /// The nodes on the cycle, each depending on the next; the first is
        /// repeated at the end.
        nodes: Vec<NodeId>,
    },
    /// A node lists a dependency that is not a node of the graph.
    #[error(
        "node {node} depends on node {dependency}, out of range for a graph of {node_count} nodes"
    )]
    NodeOutOfRange {
        /// The node holding the reference.
        node: NodeId,
        /// The index it refers to.
        dependency: usize,
        /// The number of nodes in the graph.
        node_count: usize,
    },
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
    /// The task graph itself is invalid (a cycle naming its keys, a missing
    /// dependency).
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
}

struct Path<'a>(&'a [NodeId]);

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, node) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{node}")?;
        }
        Ok(())
    }
}
