//! The graph the assigner partitions, at every level of its multilevel
//! scheme: an undirected graph with node and edge weights in compressed
//! rows, built from a task graph and coarsened by size-capped label
//! propagation; and the weight of a partition's cut.
//!
//! Every level numbers its nodes in the locality order of the finest level
//! (the first member of a cluster decides its place), so "in id order" and
//! "in order" are the same thing at every level.

use std::cmp::Reverse;

use graph_core::{Dag, Grouped, NodeId, Topology};

/// An undirected graph with node and edge weights, rows in CSR form.
pub(crate) struct Level {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    edge_weights: Vec<u64>,
    pub(crate) node_weights: Vec<f64>,
}

impl Level {
    pub(crate) fn node_count(&self) -> usize {
        self.node_weights.len()
    }

    /// The number of adjacency entries (twice the number of edges).
    pub(crate) fn entry_count(&self) -> usize {
        self.targets.len()
    }

    /// The weight of the heaviest node.
    pub(crate) fn heaviest(&self) -> f64 {
        self.node_weights.iter().copied().fold(0.0, f64::max)
    }

    /// The number of neighbours of `node`.
    pub(crate) fn degree(&self, node: usize) -> usize {
        (self.offsets[node + 1] - self.offsets[node]) as usize
    }

    pub(crate) fn row(&self, node: usize) -> (&[u32], &[u64]) {
        let range = self.offsets[node] as usize..self.offsets[node + 1] as usize;
        (&self.targets[range.clone()], &self.edge_weights[range])
    }

    /// The finest level: `dag` made undirected and renumbered by `order`
    /// (`order[i]` becomes node `i`). An edge weighs its producer's size
    /// (zero counts as 1, so that every edge pulls its ends together). Where
    /// the sizes of all edges add up past 2^62, every size is halved as often
    /// as it takes to fit (and still counts at least 1), so that cut weights
    /// and gains never overflow.
    pub(crate) fn from_dag(
        dag: &Topology,
        order: &[u32],
        sizes: Option<&[u64]>,
        weights: &[f64],
    ) -> Level {
        let n_nodes = order.len();
        let mut rank = vec![0_u32; n_nodes];
        for (i, &node) in order.iter().enumerate() {
            rank[node as usize] = i as u32;
        }
        let n_entries: usize = (0..n_nodes)
            .map(|n| dag.dependencies(NodeId::new(n)).len() * 2)
            .sum();
        let shift = sizes.map_or(0, |sizes| {
            let total: u128 = (0..n_nodes)
                .map(|n| u128::from(sizes[n]) * dag.dependents(NodeId::new(n)).len() as u128 * 2)
                .sum::<u128>()
                + n_entries as u128;
            (128 - total.leading_zeros()).saturating_sub(62)
        });
        let size = |n: usize| {
            sizes
                .map_or(1, |sizes| sizes[n])
                .checked_shr(shift)
                .unwrap_or(0)
                .max(1)
        };
        let mut offsets = Vec::with_capacity(n_nodes + 1);
        offsets.push(0_u32);
        let mut targets = Vec::with_capacity(n_entries);
        let mut edge_weights = Vec::with_capacity(n_entries);
        let mut node_weights = Vec::with_capacity(n_nodes);
        for &node in order {
            let id = NodeId::from_u32(node);
            for &dep in dag.dependencies(id) {
                targets.push(rank[dep.index()]);
                edge_weights.push(size(dep.index()));
            }
            let own = size(node as usize);
            for &dependent in dag.dependents(id) {
                targets.push(rank[dependent.index()]);
                edge_weights.push(own);
            }
            offsets.push(targets.len() as u32);
            node_weights.push(weights[node as usize]);
        }
        Level {
            offsets,
            targets,
            edge_weights,
            node_weights,
        }
    }

    /// Groups nodes into clusters of at most `cap` weight by label
    /// propagation: each node, in order, joins the neighbouring cluster it has
    /// the heaviest edges to, a few rounds. Returns the cluster of each node,
    /// numbered by first member, and the number of clusters.
    pub(crate) fn cluster(&self, cap: f64, rounds: usize) -> (Vec<u32>, usize) {
        let n_nodes = self.node_count();
        let mut cluster: Vec<u32> = (0..n_nodes as u32).collect();
        let mut cluster_weight = self.node_weights.clone();
        let mut conn = vec![0_u64; n_nodes];
        let mut touched: Vec<u32> = Vec::new();
        for _ in 0..rounds {
            let mut moves = 0;
            for node in 0..n_nodes {
                let own = cluster[node] as usize;
                let (targets, weights) = self.row(node);
                for (&next, &w) in targets.iter().zip(weights) {
                    let c = cluster[next as usize];
                    if conn[c as usize] == 0 {
                        touched.push(c);
                    }
                    conn[c as usize] += w;
                }
                let weight = self.node_weights[node];
                // The most connected cluster with room; ties to the lighter
                // cluster, which keeps clusters round rather than strung
                // along chains, then to the lower id.
                let mut best: Option<usize> = None;
                for &c in &touched {
                    let c = c as usize;
                    if c == own || conn[c] <= conn[own] || cluster_weight[c] + weight > cap {
                        continue;
                    }
                    let better = best.is_none_or(|b| {
                        (conn[c], Reverse(cluster_weight[c].to_bits()), Reverse(c))
                            > (conn[b], Reverse(cluster_weight[b].to_bits()), Reverse(b))
                    });
                    if better {
                        best = Some(c);
                    }
                }
                let best = (0, best.unwrap_or(own));
                for &c in &touched {
                    conn[c as usize] = 0;
                }
                touched.clear();
                if best.1 != own {
                    cluster_weight[own] -= weight;
                    cluster_weight[best.1] += weight;
                    cluster[node] = best.1 as u32;
                    moves += 1;
                }
            }
            // Later rounds move few nodes; stop once they are a trickle.
            if moves * 20 <= n_nodes {
                break;
            }
        }
        // Number clusters by their first member, which keeps the order.
        let mut number = vec![u32::MAX; n_nodes];
        let mut count = 0_u32;
        for c in &mut cluster {
            if number[*c as usize] == u32::MAX {
                number[*c as usize] = count;
                count += 1;
            }
            *c = number[*c as usize];
        }
        (cluster, count as usize)
    }

    /// The graph of the clusters: one node per cluster, weighing its
    /// members; one edge per pair of adjacent clusters, weighing the edges
    /// between them.
    pub(crate) fn contract(&self, cluster: &[u32], n_clusters: usize) -> Level {
        let members = Grouped::new(cluster, n_clusters);
        let mut offsets = Vec::with_capacity(n_clusters + 1);
        offsets.push(0_u32);
        let mut targets: Vec<u32> = Vec::new();
        let mut edge_weights: Vec<u64> = Vec::new();
        let mut node_weights = vec![0.0; n_clusters];
        // `slot[c]`: where the edge to cluster `c` sits in the current row,
        // valid when it is at or past the row's start.
        let mut slot = vec![u32::MAX; n_clusters];
        for (c, weight) in node_weights.iter_mut().enumerate() {
            let row_start = targets.len() as u32;
            for &node in members.group(c) {
                *weight += self.node_weights[node as usize];
                let (next_nodes, weights) = self.row(node as usize);
                for (&next, &w) in next_nodes.iter().zip(weights) {
                    let d = cluster[next as usize];
                    if d as usize == c {
                        continue;
                    }
                    let s = slot[d as usize];
                    if s != u32::MAX && s >= row_start {
                        edge_weights[s as usize] += w;
                    } else {
                        slot[d as usize] = targets.len() as u32;
                        targets.push(d);
                        edge_weights.push(w);
                    }
                }
            }
            offsets.push(targets.len() as u32);
        }
        Level {
            offsets,
            targets,
            edge_weights,
            node_weights,
        }
    }
}

/// The weight of the edges between different parts.
pub(crate) fn cut_weight(level: &Level, part: &[u32]) -> u64 {
    let mut res = 0;
    for node in 0..level.node_count() {
        let (targets, weights) = level.row(node);
        for (&next, &w) in targets.iter().zip(weights) {
            if part[next as usize] != part[node] {
                res += w;
            }
        }
    }
    res / 2
}
