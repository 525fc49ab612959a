//! `insert_barriers`: complete bipartite blocks of dependencies replaced, in
//! a scheduling topology, by barrier nodes: m x n tracked edges become m + n.

use graph_core::{Dag, NodeId, Topology};

use crate::Error;

/// A complete bipartite block of dependencies: every producer feeds every
/// consumer, and the consumers depend on nothing else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// The producers, in id order.
    pub producers: Vec<NodeId>,
    /// The consumers, in id order.
    pub consumers: Vec<NodeId>,
}

/// A scheduling topology with barrier nodes: the graph's nodes keep their
/// ids, and barrier `i` is node `task_count + i`, standing for
/// [`Barriers::blocks`]`[i]`.
///
/// A barrier carries no data: results still flow from producers to
/// consumers as the task bodies say. A scheduler that tracks the topology's
/// edges instead of the graph's runs a consumer once its barrier is done,
/// which is once all its producers are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Barriers {
    /// The graph's edges, with each block's m x n edges replaced by m + n
    /// edges through its barrier.
    pub topology: Topology,
    /// The blocks, one per barrier.
    pub blocks: Vec<Block>,
    /// The number of the graph's own nodes; barriers come after them.
    pub task_count: usize,
}

impl Barriers {
    /// Whether a node of [`Barriers::topology`] is a barrier.
    pub fn is_barrier(&self, node: NodeId) -> bool {
        node.index() >= self.task_count
    }

    /// The block a barrier node stands for.
    pub fn block(&self, barrier: NodeId) -> Option<&Block> {
        self.blocks
            .get(barrier.index().checked_sub(self.task_count)?)
    }
}

/// Finds the complete bipartite blocks of a graph's dependencies (consumers
/// with the same set of at least two dependencies) with at least `threshold`
/// edges, and builds a scheduling topology in which each such block goes
/// through one barrier node.
///
/// Matches no dask function: this is BNDL's barrier task for all-to-all
/// dependencies (a shuffle's m mappers and n reducers). It only finds blocks
/// whose consumers depend on exactly the same tasks, which is how shuffles
/// and all-to-all reductions are built; a block that saves no edges (2 x 2)
/// is left alone.
///
/// # Arguments
///
/// - `dag`: the graph's shape (a [`Topology`], or any [`Dag`]).
/// - `threshold`: the least m x n worth a barrier.
///
/// # Returns
///
/// The [`Barriers`]: the scheduling topology and the blocks.
///
/// # Errors
///
/// [`Error::Graph`] if the topology cannot be built (more than `u32` ids).
///
/// # Complexity
///
/// O(V log V × d + E log d) time for the largest in-degree d (consumers are
/// sorted by their dependency sets), O(V + E) space.
///
/// # Example
///
/// ```
/// use graph_core::generate;
/// use graph_optimize::insert_barriers;
///
/// let graph = generate::shuffle(8, 6); // 8 mappers, 6 reducers, 48 edges
/// let topology = graph.topology()?;
/// let barriers = insert_barriers(topology, 16)?;
/// assert_eq!(barriers.blocks.len(), 1);
/// assert_eq!(barriers.topology.edge_count(), 8 + 6);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn insert_barriers(dag: &impl Dag, threshold: usize) -> Result<Barriers, Error> {
    insert_barriers_dyn(dag, threshold)
}

fn insert_barriers_dyn(dag: &dyn Dag, threshold: usize) -> Result<Barriers, Error> {
    let n_nodes = dag.node_count();
    // Each node's dependencies, sorted, in one CSR.
    let mut offsets = Vec::with_capacity(n_nodes + 1);
    offsets.push(0_usize);
    let mut sorted: Vec<u32> = Vec::new();
    for i in 0..n_nodes {
        let start = sorted.len();
        sorted.extend(dag.dependencies(NodeId::new(i)).iter().map(|d| d.as_u32()));
        sorted[start..].sort_unstable();
        offsets.push(sorted.len());
    }
    let row = |i: u32| &sorted[offsets[i as usize]..offsets[i as usize + 1]];
    let mut consumers: Vec<u32> = (0..n_nodes as u32).filter(|&i| row(i).len() >= 2).collect();
    consumers.sort_by(|&a, &b| row(a).cmp(row(b)).then(a.cmp(&b)));

    let mut blocks = Vec::new();
    let mut in_block = vec![false; n_nodes];
    let mut start = 0;
    while start < consumers.len() {
        let deps = row(consumers[start]);
        let mut end = start + 1;
        while end < consumers.len() && row(consumers[end]) == deps {
            end += 1;
        }
        let (m, n) = (deps.len(), end - start);
        if m >= 2 && n >= 2 && m * n >= threshold && m + n < m * n {
            for &c in &consumers[start..end] {
                in_block[c as usize] = true;
            }
            blocks.push(Block {
                producers: deps.iter().map(|&d| NodeId::from_u32(d)).collect(),
                consumers: consumers[start..end]
                    .iter()
                    .map(|&c| NodeId::from_u32(c))
                    .collect(),
            });
        }
        start = end;
    }

    let mut edges: Vec<(usize, usize)> = Vec::with_capacity(sorted.len());
    for (i, &blocked) in in_block.iter().enumerate() {
        if !blocked {
            edges.extend(row(i as u32).iter().map(|&d| (d as usize, i)));
        }
    }
    for (b, block) in blocks.iter().enumerate() {
        let barrier = n_nodes + b;
        edges.extend(block.producers.iter().map(|p| (p.index(), barrier)));
        edges.extend(block.consumers.iter().map(|c| (barrier, c.index())));
    }
    let topology = Topology::from_edges(n_nodes + blocks.len(), edges)?;
    Ok(Barriers {
        topology,
        blocks,
        task_count: n_nodes,
    })
}
