//! The machinery of [`assign`](crate::assign): an undirected weighted graph in
//! compressed rows, size-capped label-propagation clustering to coarsen it,
//! and greedy boundary refinement at every level on the way back.
//!
//! Every level numbers its nodes in the locality order of the finest level
//! (the first member of a cluster decides its place), so "in id order" and
//! "in order" are the same thing at every level.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use graph_core::{Dag, NodeId, Topology};

use crate::fm::{Fm, merge_pieces};

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
        let n_nodes = self.node_count();
        // Members of each cluster, by a counting sort.
        let mut starts = vec![0_u32; n_clusters + 1];
        for &c in cluster {
            starts[c as usize + 1] += 1;
        }
        for i in 0..n_clusters {
            starts[i + 1] += starts[i];
        }
        let mut cursor = starts.clone();
        let mut members = vec![0_u32; n_nodes];
        for (node, &c) in cluster.iter().enumerate() {
            members[cursor[c as usize] as usize] = node as u32;
            cursor[c as usize] += 1;
        }
        let mut offsets = Vec::with_capacity(n_clusters + 1);
        offsets.push(0_u32);
        let mut targets: Vec<u32> = Vec::new();
        let mut edge_weights: Vec<u64> = Vec::new();
        let mut node_weights = vec![0.0; n_clusters];
        // `slot[c]`: where the edge to cluster `c` sits in the current row,
        // valid when it is at or past the row's start.
        let mut slot = vec![u32::MAX; n_clusters];
        for c in 0..n_clusters {
            let row_start = targets.len() as u32;
            for &node in &members[starts[c] as usize..starts[c + 1] as usize] {
                node_weights[c] += self.node_weights[node as usize];
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

/// Greedy boundary refinement of a partition of one level.
pub(crate) struct Refiner {
    /// The largest load each worker may get.
    pub(crate) limits: Vec<f64>,
    pub(crate) loads: Vec<f64>,
    conn: Vec<u64>,
    touched: Vec<u32>,
    fm: Fm,
    /// The nodes the next greedy pass visits, and a stamp per node of the
    /// pass that last queued it.
    active: Vec<u32>,
    mark: Vec<u32>,
    stamp: u32,
}

impl Refiner {
    pub(crate) fn new(limits: Vec<f64>, n_workers: usize) -> Refiner {
        Refiner {
            limits,
            loads: vec![0.0; n_workers],
            conn: vec![0; n_workers],
            touched: Vec::new(),
            fm: Fm::default(),
            active: Vec::new(),
            mark: Vec::new(),
            stamp: 0,
        }
    }

    /// Up to `passes` greedy passes over `level` in order, each moving a
    /// node to the worker it is most connected to when that lowers the cut,
    /// or keeps it and evens the loads, within the limits (stopping after a
    /// pass that moves almost nothing); then, if the loads are within their
    /// limits, up to `fm_rounds` rounds of Fiduccia-Mattheyses searches
    /// after moving stray pieces of parts home.
    pub(crate) fn refine(
        &mut self,
        level: &Level,
        part: &mut [u32],
        passes: usize,
        fm_rounds: usize,
    ) {
        self.count_loads(level, part);
        self.rebalance(level, part);
        for i in 0..passes {
            // Once a pass moves fewer than one node in a thousand, the
            // next ones would gain next to nothing.
            if self.pass(level, part, i == 0) * 1000 <= level.node_count() {
                break;
            }
        }
        if fm_rounds > 0 && self.overloaded().is_none() {
            merge_pieces(level, part, &mut self.loads, &self.limits);
            self.fm
                .refine(level, part, &mut self.loads, &self.limits, fm_rounds);
        }
    }

    fn count_loads(&mut self, level: &Level, part: &[u32]) {
        self.loads.fill(0.0);
        for (node, &w) in part.iter().enumerate() {
            self.loads[w as usize] += level.node_weights[node];
        }
    }

    /// Whether every load of `part` is within its limit.
    pub(crate) fn fits(&mut self, level: &Level, part: &[u32]) -> bool {
        self.count_loads(level, part);
        self.overloaded().is_none()
    }

    fn overloaded(&self) -> Option<usize> {
        (0..self.loads.len()).find(|&w| self.loads[w] > self.limits[w])
    }

    /// Moves nodes out of workers above their limit: first to neighbouring
    /// workers with room, the moves that cost the least cut per unit of load
    /// first (see [`Fm::rebalance`]); then, if a worker is still over, any
    /// of its nodes, in order, to the worker with the most room. A worker
    /// over its limit of `share + heaviest` has more than a share, so some
    /// other worker has less than its share and room for any node: the
    /// second step always brings every load within its limit.
    fn rebalance(&mut self, level: &Level, part: &mut [u32]) {
        self.fm
            .rebalance(level, part, &mut self.loads, &self.limits);
        if self.overloaded().is_none() {
            return;
        }
        for node in 0..level.node_count() {
            let from = part[node] as usize;
            if self.loads[from] <= self.limits[from] {
                continue;
            }
            let weight = level.node_weights[node];
            let roomiest = (0..self.loads.len())
                .filter(|&w| w != from)
                .max_by(|&a, &b| {
                    let room = |w: usize| self.limits[w] - self.loads[w];
                    room(a).total_cmp(&room(b)).then(b.cmp(&a))
                })
                .expect("a worker other than `from` exists when rebalancing");
            if self.loads[roomiest] + weight <= self.limits[roomiest] {
                self.move_node(level, part, node, roomiest);
            }
        }
    }

    fn move_node(&mut self, level: &Level, part: &mut [u32], node: usize, to: usize) {
        let from = part[node] as usize;
        part[node] = to as u32;
        self.loads[from] -= level.node_weights[node];
        self.loads[to] += level.node_weights[node];
    }

    /// One greedy pass: over every node when `first`, else over the nodes
    /// next to the moves of the pass before (the others saw no change).
    /// Returns the number of moves.
    fn pass(&mut self, level: &Level, part: &mut [u32], first: bool) -> usize {
        let n_nodes = level.node_count();
        if first {
            self.mark.clear();
            self.mark.resize(n_nodes, 0);
            self.stamp = 0;
            self.active.clear();
        }
        self.stamp += 1;
        let active = std::mem::take(&mut self.active);
        let mut next_active = Vec::new();
        let mut moves = 0;
        let n_candidates = if first { n_nodes } else { active.len() };
        let candidates = (0..n_candidates).map(|i| if first { i } else { active[i] as usize });
        for node in candidates {
            let from = part[node] as usize;
            let (targets, weights) = level.row(node);
            for (&next, &w) in targets.iter().zip(weights) {
                let p = part[next as usize];
                if self.conn[p as usize] == 0 {
                    self.touched.push(p);
                }
                self.conn[p as usize] += w;
            }
            let to = self.best_move(level.node_weights[node], from);
            for &p in &self.touched {
                self.conn[p as usize] = 0;
            }
            self.touched.clear();
            if let Some(to) = to {
                self.move_node(level, part, node, to);
                moves += 1;
                for &next in std::iter::once(&(node as u32)).chain(targets) {
                    if self.mark[next as usize] != self.stamp {
                        self.mark[next as usize] = self.stamp;
                        next_active.push(next);
                    }
                }
            }
        }
        next_active.sort_unstable();
        self.active = next_active;
        moves
    }

    fn best_move(&self, weight: f64, from: usize) -> Option<usize> {
        let stay = self.conn[from];
        let mut best: Option<(u64, usize)> = None;
        for &to in &self.touched {
            let to = to as usize;
            if to == from || self.loads[to] + weight > self.limits[to] {
                continue;
            }
            let conn = self.conn[to];
            let better = match best {
                None => conn > stay || (conn == stay && self.loads[to] + weight < self.loads[from]),
                Some((best_conn, best_to)) => {
                    conn > best_conn
                        || (conn == best_conn
                            && (self.loads[to], to) < (self.loads[best_to], best_to))
                }
            };
            if better {
                best = Some((conn, to));
            }
        }
        best.map(|(_, to)| to)
    }
}

/// Cuts `order` into one contiguous block per worker: a node goes to the
/// worker whose stretch of the cumulative targets holds the middle of its
/// weight, so each block is within one node of its target.
pub(crate) fn blocks(
    order: impl IntoIterator<Item = u32>,
    weights: &[f64],
    targets: &[f64],
) -> Vec<u32> {
    let mut res = vec![0_u32; weights.len()];
    let mut worker = 0;
    let mut block_end = targets[0];
    let mut prefix = 0.0;
    for node in order {
        let weight = weights[node as usize];
        let middle = prefix + weight / 2.0;
        while middle >= block_end && worker + 1 < targets.len() {
            worker += 1;
            block_end += targets[worker];
        }
        res[node as usize] = worker as u32;
        prefix += weight;
    }
    res
}

/// A breadth-first order of every node, from `start` and then from each
/// node not yet reached, in id order.
pub(crate) fn bfs_order(level: &Level, start: usize) -> Vec<u32> {
    let n_nodes = level.node_count();
    let mut seen = vec![false; n_nodes];
    let mut order = Vec::with_capacity(n_nodes);
    for root in std::iter::once(start).chain(0..n_nodes) {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut head = order.len();
        order.push(root as u32);
        while head < order.len() {
            let node = order[head] as usize;
            head += 1;
            for &next in level.row(node).0 {
                if !seen[next as usize] {
                    seen[next as usize] = true;
                    order.push(next);
                }
            }
        }
    }
    order
}

/// Grows one part after another from the first node not yet placed, always
/// adding the node with the heaviest edges into the growing part (greedy
/// graph growing), until the part reaches its target; the last part takes
/// the rest. Regions grown this way are compact where blocks of an order may
/// be long strips.
pub(crate) fn grow(level: &Level, targets: &[f64], first_seed: usize) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    let n_nodes = level.node_count();
    let last = (targets.len() - 1) as u32;
    let mut part = vec![NONE; n_nodes];
    let mut gain = vec![0_u64; n_nodes];
    let mut touched: Vec<u32> = Vec::new();
    let mut heap: BinaryHeap<(u64, Reverse<u32>)> = BinaryHeap::new();
    let mut next_seed = 0;
    for (worker, &target) in targets.iter().enumerate().take(targets.len() - 1) {
        let mut load = 0.0;
        if worker == 0 && first_seed < n_nodes {
            heap.push((0, Reverse(first_seed as u32)));
        }
        loop {
            let node = loop {
                match heap.pop() {
                    Some((g, Reverse(node))) => {
                        if part[node as usize] == NONE && gain[node as usize] == g {
                            break Some(node);
                        }
                    }
                    None => {
                        while next_seed < n_nodes && part[next_seed] != NONE {
                            next_seed += 1;
                        }
                        break (next_seed < n_nodes).then_some(next_seed as u32);
                    }
                }
            };
            let Some(node) = node else { break };
            let weight = level.node_weights[node as usize];
            if load + weight / 2.0 > target {
                break;
            }
            part[node as usize] = worker as u32;
            load += weight;
            let (targets, weights) = level.row(node as usize);
            for (&next, &w) in targets.iter().zip(weights) {
                if part[next as usize] == NONE {
                    if gain[next as usize] == 0 {
                        touched.push(next);
                    }
                    gain[next as usize] += w;
                    heap.push((gain[next as usize], Reverse(next)));
                }
            }
        }
        heap.clear();
        for &node in &touched {
            gain[node as usize] = 0;
        }
        touched.clear();
    }
    for p in &mut part {
        if *p == NONE {
            *p = last;
        }
    }
    part
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
