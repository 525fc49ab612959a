//! Greedy boundary refinement of a partition of one level, with the
//! k-way Fiduccia-Mattheyses searches (`fm`) after it: the refinement the
//! assigner runs at every level on the way back from the coarsest.

use crate::fm::{Fm, merge_pieces};
use crate::level::Level;

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
