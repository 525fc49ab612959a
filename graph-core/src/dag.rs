//! The `Dag` trait: the view of a graph that ordering and placement need.

use crate::NodeId;

/// A directed acyclic graph over dense node ids `0..node_count()`, seen from
/// both ends of every edge.
///
/// Algorithms that only need the shape of a graph (ordering, placement,
/// statistics) take `&impl Dag`, so they run on any graph a user has. An
/// implementation promises that the graph is acyclic, that `dependents` is
/// the exact transpose of `dependencies`, and that neither lists a node twice
/// or a node as its own neighbour. [`Topology`](crate::Topology) is the
/// implementation this workspace builds.
///
/// | type | built from | notes |
/// |---|---|---|
/// | [`Topology`](crate::Topology) | an edge list or a [`TaskGraph`](crate::TaskGraph) | CSR in both directions |
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

    /// The nodes that need the result of `node`.
    fn dependents(&self, node: NodeId) -> &[NodeId];

    /// Which nodes `nodes` need, by node id: each of them and, transitively,
    /// every node it depends on. What a run of `nodes` must compute, and
    /// nothing else.
    ///
    /// # Panics
    ///
    /// If one of `nodes` is not a node of this graph.
    ///
    /// # Complexity
    ///
    /// O(V) to allocate, plus O(V' + E') for the V' nodes needed and the E'
    /// edges into them.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{Dag, NodeId, Topology};
    ///
    /// // 0 -> 1 -> 3 and 2 -> 3: node 1 needs node 0; node 2 needs nothing.
    /// let topology = Topology::from_edges(4, [(0, 1), (1, 3), (2, 3)])?;
    /// assert_eq!(topology.needed_by(&[NodeId::new(1)]), [true, true, false, false]);
    /// assert_eq!(topology.needed_by(&[NodeId::new(3)]), [true; 4]);
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    fn needed_by(&self, nodes: &[NodeId]) -> Vec<bool> {
        let mut needed = vec![false; self.node_count()];
        let mut stack = Vec::with_capacity(nodes.len());
        for &node in nodes {
            if !needed[node.index()] {
                needed[node.index()] = true;
                stack.push(node);
            }
        }
        while let Some(node) = stack.pop() {
            for &dep in self.dependencies(node) {
                if !needed[dep.index()] {
                    needed[dep.index()] = true;
                    stack.push(dep);
                }
            }
        }
        needed
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

    fn dependents(&self, node: NodeId) -> &[NodeId] {
        (**self).dependents(node)
    }
}
