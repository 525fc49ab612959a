//! `GraphStats`: the shape of a graph in seven numbers.

use crate::{Dag, NodeId, Topology};

/// The shape of a graph: its size, its ends, its depth and its widest nodes.
///
/// With the `json` feature, serializes (with `serde_json`) to exactly
/// `{"tasks":N,"edges":N,"roots":N,"leaves":N,"depth":N,"max_in_degree":N,"max_out_degree":N}`.
///
/// # Example
///
/// ```
/// use graph_core::{GraphStats, Topology};
///
/// // 0 -> 1 -> 3 and 0 -> 2 -> 3: a diamond.
/// let topology = Topology::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)])?;
/// let stats = GraphStats::of(&topology);
/// assert_eq!((stats.roots, stats.leaves, stats.depth, stats.max_in_degree), (1, 1, 3, 2));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "json", derive(serde::Serialize))]
pub struct GraphStats {
    /// Number of tasks.
    pub tasks: usize,
    /// Number of distinct dependency edges.
    pub edges: usize,
    /// Tasks with no dependencies.
    pub roots: usize,
    /// Tasks with no dependents.
    pub leaves: usize,
    /// Tasks on the longest dependency path (0 for an empty graph).
    pub depth: usize,
    /// The most dependencies any task has.
    pub max_in_degree: usize,
    /// The most dependents any task has.
    pub max_out_degree: usize,
}

impl GraphStats {
    /// Measures a checked graph (a user's [`Dag`] becomes one with
    /// [`Topology::checked`]).
    ///
    /// **Complexity**: O(V + E) time, O(V) memory.
    pub fn of(dag: &Topology) -> GraphStats {
        stats_of(dag)
    }
}

fn stats_of(dag: &Topology) -> GraphStats {
    let n_nodes = dag.node_count();
    let mut stats = GraphStats {
        tasks: n_nodes,
        ..GraphStats::default()
    };
    // Longest path ending at each node, filled in a topological order.
    let mut depth = vec![0_u32; n_nodes];
    let mut missing: Vec<u32> = (0..n_nodes)
        .map(|i| dag.dependencies(NodeId::new(i)).len() as u32)
        .collect();
    let mut ready: Vec<NodeId> = (0..n_nodes)
        .filter(|&i| missing[i] == 0)
        .map(NodeId::new)
        .collect();
    while let Some(node) = ready.pop() {
        let i = node.index();
        let deps = dag.dependencies(node);
        let outs = dag.dependents(node);
        stats.edges += deps.len();
        stats.roots += usize::from(deps.is_empty());
        stats.leaves += usize::from(outs.is_empty());
        stats.max_in_degree = stats.max_in_degree.max(deps.len());
        stats.max_out_degree = stats.max_out_degree.max(outs.len());
        depth[i] += 1;
        stats.depth = stats.depth.max(depth[i] as usize);
        for &dependent in outs {
            let j = dependent.index();
            depth[j] = depth[j].max(depth[i]);
            missing[j] -= 1;
            if missing[j] == 0 {
                ready.push(dependent);
            }
        }
    }
    stats
}
