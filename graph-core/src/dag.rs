//! The `Dag` trait: the view of a graph that ordering and placement need.

use crate::NodeId;

/// A directed acyclic graph over dense node ids `0..node_count()`, given by
/// each node's dependencies.
///
/// Algorithms that only need the shape of a graph (ordering, placement,
/// statistics) take `&impl Dag`, so they run on any graph a user has: it
/// says how many nodes there are and what each depends on, and the
/// algorithms derive the rest (who depends on a node, for one). An
/// implementation should describe an acyclic graph, but nothing relies on
/// that promise: every algorithm checks a user's `Dag` once, at its
/// boundary, with [`Topology::checked`](crate::Topology::checked), and
/// refuses a cycle, a self-edge or a node out of range with an error.
/// [`Topology`](crate::Topology) is the checked implementation this
/// workspace builds.
///
/// | type | built from | notes |
/// |---|---|---|
/// | [`Topology`](crate::Topology) | an edge list or a [`TaskGraph`](crate::TaskGraph) | CSR in both directions ([`Topology::dependents`](crate::Topology::dependents) too) |
/// | `&T` where `T: Dag` | | forwards to `T` |
///
/// The trait is dyn-compatible: an algorithm may take `&impl Dag` at its
/// public edge and run a non-generic inner function over `&dyn Dag`.
///
/// # Example
///
/// ```
/// use graph_core::{Dag, NodeId, Topology};
///
/// // 0 -> 2 <- 1: task 2 depends on tasks 0 and 1.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// assert_eq!(topology.node_count(), 3);
/// assert_eq!(topology.dependencies(NodeId::new(2)), [NodeId::new(0), NodeId::new(1)]);
/// assert_eq!(topology.dependents(NodeId::new(0)), [NodeId::new(2)]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub trait Dag {
    /// The number of nodes; ids run from `0` to `node_count() - 1`.
    fn node_count(&self) -> usize;

    /// The nodes whose results `node` needs.
    fn dependencies(&self, node: NodeId) -> &[NodeId];

    /// `Some` when this graph is a checked [`Topology`](crate::Topology),
    /// which algorithms then use as it is instead of copying and checking
    /// it ([`Topology::checked`](crate::Topology::checked)). Only
    /// `Topology` (and references to it) answer `Some`.
    fn as_topology(&self) -> Option<&crate::Topology> {
        None
    }

    /// Every node id, in increasing order.
    fn node_ids(&self) -> impl DoubleEndedIterator<Item = NodeId> + ExactSizeIterator
    where
        Self: Sized,
    {
        (0..self.node_count() as u32).map(NodeId::from_u32)
    }
}

impl<T: Dag + ?Sized> Dag for &T {
    fn node_count(&self) -> usize {
        (**self).node_count()
    }

    fn dependencies(&self, node: NodeId) -> &[NodeId] {
        (**self).dependencies(node)
    }

    fn as_topology(&self) -> Option<&crate::Topology> {
        (**self).as_topology()
    }
}
