//! `Shape`: a task graph's keys and checked topology, without its task
//! bodies.

use crate::key_table::KeyTable;
use crate::{Body, Dag, Error, Key, NodeId, TaskGraph, Topology};

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
/// assert_eq!(shape.key(y), Key::from(("y", 0)));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Shape {
    /// The keys, as compact codes a key is made from when asked for: a
    /// few bytes a task instead of a key's allocations.
    table: KeyTable,
    topology: Topology,
    /// Whether each task is a literal value ([`Term::is_literal`](crate::Term::is_literal)).
    literal: Vec<bool>,
    /// Each task's `size`, if any task has one; else empty.
    sizes: Vec<Option<u64>>,
}

impl Shape {
    pub(crate) fn new(
        table: KeyTable,
        topology: Topology,
        literal: Vec<bool>,
        sizes: Vec<Option<u64>>,
    ) -> Shape {
        debug_assert_eq!(table.len(), topology.node_count());
        debug_assert_eq!(literal.len(), topology.node_count());
        debug_assert!(sizes.is_empty() || sizes.len() == topology.node_count());
        Shape {
            table,
            topology,
            literal,
            sizes,
        }
    }

    /// The shape of `graph`: its keys (shared, not copied: a key copies as a
    /// reference count) and its topology.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::topology`].
    pub fn of(graph: &TaskGraph) -> Result<Shape, Error> {
        let topology = graph.topology()?.clone();
        let mut table = KeyTable::with_capacity(graph.len(), 16 * graph.len(), graph.len());
        let mut code = Vec::new();
        for key in graph.keys() {
            table.encode_interning(key, &mut code);
            let inserted = table.insert(&code);
            debug_assert!(inserted.is_ok(), "a graph's keys are distinct");
        }
        let literal = graph
            .iter()
            .map(|(_, task)| matches!(&task.body, Body::Term(term) if term.is_literal()))
            .collect();
        let sizes = if graph.iter().any(|(_, task)| task.size.is_some()) {
            graph.iter().map(|(_, task)| task.size).collect()
        } else {
            Vec::new()
        };
        Ok(Shape::new(table, topology, literal, sizes))
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether there is no task.
    pub fn is_empty(&self) -> bool {
        self.table.len() == 0
    }

    /// The key of a node, made from its code (its strings shared).
    ///
    /// # Panics
    ///
    /// If `node` is not a node of this graph.
    pub fn key(&self, node: NodeId) -> Key {
        self.table.key(node.as_u32())
    }

    /// The key of a node, to serialize (as [`Key`] serializes) straight
    /// from its code: what writing many keys wants, with no key made.
    ///
    /// # Panics
    ///
    /// If `node` is not a node of this graph.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Shape, TaskGraph, Term};
    ///
    /// let graph = TaskGraph::builder().task(("x", 0, 1.5), Term::lit(1)).build()?;
    /// let shape = Shape::of(&graph)?;
    /// let text = serde_json::to_string(&shape.serializable_key(NodeId::new(0))).unwrap();
    /// assert_eq!(text, r#"["x",0,1.5]"#);
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    #[cfg(feature = "json")]
    pub fn serializable_key(&self, node: NodeId) -> impl serde::Serialize + '_ {
        self.table.serializable(node.as_u32())
    }

    /// For each node, in node order, a number for the string its key is
    /// named by ([`Key::name`]): equal numbers for equal names, `None` for a
    /// key named by no string. Groups tasks by name with no key made.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{Shape, TaskGraph, Term};
    ///
    /// let graph = TaskGraph::builder()
    ///     .task(("x", 0), Term::lit(1))
    ///     .task(7, Term::lit(2))
    ///     .task(("x", 1), Term::lit(3))
    ///     .build()?;
    /// let names: Vec<_> = Shape::of(&graph)?.name_numbers().collect();
    /// assert_eq!((names[0], names[1]), (names[2], None));
    /// assert!(names[0].is_some());
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn name_numbers(&self) -> impl ExactSizeIterator<Item = Option<u32>> + '_ {
        (0..self.len() as u32).map(|node| self.table.name_number(node))
    }

    /// Every key, in node order, each made as it is reached.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = Key> + DoubleEndedIterator + '_ {
        (0..self.len() as u32).map(|node| self.table.key(node))
    }

    /// The node of the task with this key.
    pub fn node_id(&self, key: &Key) -> Option<NodeId> {
        let mut code = Vec::new();
        if !self.table.encode(key, &mut code) {
            return None;
        }
        self.table.find(&code).map(NodeId::from_u32)
    }

    /// Whether each task, by node, is a literal value
    /// ([`Term::is_literal`](crate::Term::is_literal)): dask's data nodes, which
    /// `graph_order::OrderConfig::is_data` takes.
    pub fn literals(&self) -> &[bool] {
        &self.literal
    }

    /// Each task's `size` (the bytes of its result), by node, where any
    /// task has one; empty where none has.
    ///
    /// ```
    /// use graph_core::{Shape, TaskGraph, Term};
    ///
    /// let mut graph = TaskGraph::builder()
    ///     .task("x", Term::lit(1))
    ///     .size(8)
    ///     .task("y", Term::call("inc", [Term::key("x")]))
    ///     .build()?;
    /// assert_eq!(Shape::of(&graph)?.sizes(), [Some(8), None]);
    /// graph.task_mut(graph_core::NodeId::new(0)).size = None;
    /// assert!(Shape::of(&graph)?.sizes().is_empty());
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn sizes(&self) -> &[Option<u64>] {
        &self.sizes
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
            .map(|node| self.key(node))
            .collect()
    }
}
