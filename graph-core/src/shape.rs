//! `Shape`: a task graph's keys and checked topology, without its task
//! bodies.

use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

use crate::{Dag, Error, Key, NodeId, TaskGraph, Topology};

/// The shape of a task graph: the keys of its tasks, in node order, and its
/// checked [`Topology`], without the bodies. What ordering, placement and
/// statistics need, in a fraction of a graph's memory: `taskgraph stats`
/// and `taskgraph order` read a file into one
/// ([`json::read_shape_path`](crate::json::read_shape_path)).
///
/// # Example
///
/// ```
/// use graph_core::{Dag, Key, Shape, TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task(("y", 0), Term::call("inc", [Term::key("x")]))
///     .build()?;
/// let shape = Shape::of(&graph)?;
/// let y = shape.node_id(&Key::from(("y", 0))).unwrap();
/// assert_eq!((shape.len(), shape.topology().dependencies(y).len()), (2, 1));
/// assert_eq!(shape.key(y), &Key::from(("y", 0)));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Shape {
    keys: IndexSet<Key, FxBuildHasher>,
    topology: Topology,
}

impl Shape {
    pub(crate) fn new(keys: IndexSet<Key, FxBuildHasher>, topology: Topology) -> Shape {
        debug_assert_eq!(keys.len(), topology.node_count());
        Shape { keys, topology }
    }

    /// The shape of `graph`: its keys (shared, not copied: a key copies as a
    /// reference count) and its topology.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::topology`].
    pub fn of(graph: &TaskGraph) -> Result<Shape, Error> {
        let topology = graph.topology()?.clone();
        let mut keys = IndexSet::with_capacity_and_hasher(graph.len(), FxBuildHasher);
        keys.extend(graph.keys().cloned());
        Ok(Shape { keys, topology })
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is no task.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The key of a node.
    ///
    /// # Panics
    ///
    /// If `node` is not a node of this graph.
    pub fn key(&self, node: NodeId) -> &Key {
        &self.keys[node.index()]
    }

    /// Every key, in node order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Key> + DoubleEndedIterator {
        self.keys.iter()
    }

    /// The node of the task with this key.
    pub fn node_id(&self, key: &Key) -> Option<NodeId> {
        self.keys.get_index_of(key).map(NodeId::new)
    }

    /// The checked topology.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The keys of the tasks no task depends on, in node order.
    pub fn leaf_keys(&self) -> Vec<Key> {
        self.topology
            .node_ids()
            .filter(|&node| self.topology.dependents(node).is_empty())
            .map(|node| self.key(node).clone())
            .collect()
    }
}
