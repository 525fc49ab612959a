//! `Dependencies`: every reference of every task, by node id, in compressed
//! sparse rows; what each pass returns so that the next need not recompute it.

use graph_core::{Dag, NodeId, TaskGraph, Topology};

use crate::Error;

/// The references of every task of a graph, as node ids: row `n` lists, in
/// the order they occur in task `n`'s body (preorder), every key it
/// references, repeats included.
///
/// This is dask's `dependencies` with `as_list=True`: `fuse` needs the
/// repeats (a task that uses a result twice must not absorb it). Each pass
/// returns the rows of the graph it returns, and each pass accepts them
/// back, so a pipeline resolves keys to node ids once.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, TaskGraph, Term};
/// use graph_optimize::Dependencies;
///
/// let graph = TaskGraph::builder()
///     .task("a", Term::lit(1))
///     .task("b", Term::call("add", [Term::key("a"), Term::key("a")]))
///     .build()?;
/// let deps = Dependencies::of(&graph)?;
/// assert_eq!(deps.get(NodeId::new(1)), [NodeId::new(0), NodeId::new(0)]);
/// assert_eq!(deps.to_topology()?.edge_count(), 1);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependencies {
    pub(crate) offsets: Vec<u32>,
    pub(crate) targets: Vec<NodeId>,
}

impl Dependencies {
    /// Resolves every reference of `graph` to a node id.
    ///
    /// Uses the graph's cached [`Topology`] (building it, in parallel, if
    /// needed): where a task's references are all distinct, its topology row
    /// lists them in order, so only tasks that reference a key twice are
    /// resolved by key.
    ///
    /// **Complexity**: O(V + R) time for R references and O(V + R) space,
    /// plus one hash lookup per reference of the tasks with repeats (and the
    /// topology's, if it was not cached).
    ///
    /// # Errors
    ///
    /// [`graph_core::Error::MissingDependency`] (as [`Error::Graph`]) for a
    /// reference to a key no task has, naming both keys;
    /// [`graph_core::Error::Cycle`] for a cycle; [`Error::SelfReference`]
    /// for a task that references itself.
    pub fn of(graph: &TaskGraph) -> Result<Dependencies, Error> {
        let topology = graph.topology()?;
        let mut offsets = Vec::with_capacity(graph.len() + 1);
        offsets.push(0_u32);
        let mut targets = Vec::with_capacity(topology.edge_count() + graph.len() / 8);
        for (i, (key, task)) in graph.iter().enumerate() {
            let node = NodeId::new(i);
            let row = topology.dependencies(node);
            let mut count = 0_usize;
            task.body.for_each_ref(&mut |_| count += 1);
            if count == row.len() {
                targets.extend_from_slice(row);
            } else {
                // Repeats, or a reference to itself (which the topology drops).
                let mut this = false;
                task.body.for_each_ref(&mut |dep| {
                    let dep = graph
                        .node_id(dep)
                        .expect("the topology resolved every reference");
                    this |= dep == node;
                    targets.push(dep);
                });
                if this {
                    return Err(Error::SelfReference { key: key.clone() });
                }
            }
            if targets.len() > u32::MAX as usize {
                return Err(graph_core::Error::TooLarge {
                    what: "edges",
                    count: targets.len(),
                }
                .into());
            }
            offsets.push(targets.len() as u32);
        }
        Ok(Dependencies { offsets, targets })
    }

    /// The number of tasks (rows).
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The number of references, repeats included.
    pub fn reference_count(&self) -> usize {
        self.targets.len()
    }

    /// The references of task `node`, in preorder, repeats included.
    ///
    /// # Panics
    ///
    /// If `node` is not below [`Dependencies::node_count`].
    pub fn get(&self, node: NodeId) -> &[NodeId] {
        let i = node.index();
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The distinct dependencies of `node`, sorted by node id: dask's
    /// dependencies as a set.
    pub fn distinct(&self, node: NodeId) -> Vec<NodeId> {
        let mut row = self.get(node).to_vec();
        row.sort_unstable();
        row.dedup();
        row
    }

    /// The rows as a [`Topology`] (repeats merged, cycles reported).
    ///
    /// # Errors
    ///
    /// [`graph_core::Error::NodeCycle`] (as [`Error::Graph`]) if the rows form
    /// a cycle.
    pub fn to_topology(&self) -> Result<Topology, Error> {
        let targets = self.targets.iter().map(|node| node.as_u32()).collect();
        Ok(Topology::from_dependency_rows(
            self.offsets.clone(),
            targets,
        )?)
    }
}
