//! k-way Fiduccia-Mattheyses refinement: localized searches that move
//! boundary nodes by gain, through moves that raise the cut, and roll back
//! to the best prefix of their moves; with it, the cut-aware rebalancing
//! and the merging of stray pieces that run before it at each level.
//!
//! A round takes the boundary nodes (those with a neighbour in another part)
//! in order as seeds. From each seed not yet moved in the round, a search
//! keeps a priority queue of candidate nodes keyed by the gain of their best
//! move (the drop in cut weight when the node goes to the adjacent part it
//! is most connected to and that has room). It repeatedly moves the best
//! candidate, even when that raises the cut, locks it for the round, and
//! queues its neighbours; it stops once a number of moves in a row have not
//! beaten the best cut it has seen, then undoes every move after the best
//! one. Every move keeps each load within its limit, so every prefix, and
//! the one kept, is balanced; the cut never rises, as an empty prefix is
//! always a candidate.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::level::{Level, cut_weight};

/// Moves in a row without a new best after which a search gives up.
const STALL: usize = 48;

/// Row entries a round may scan, as a multiple of the level's entries and
/// nodes, which keeps a round linear even where high-degree nodes make gain
/// updates expensive.
const WORK_PER_ENTRY: usize = 8;

/// Row entries one search may scan: searches through dense regions, where
/// each move makes many gains stale, stop early.
const SEARCH_WORK: usize = 16_384;

/// A moved node's neighbours with more than this many times the level's
/// average degree (and at least MIN_HIGH_DEGREE) are not queued: each move
/// next to such a hub would rescan its row, and a hub rarely has a good move.
const HIGH_DEGREE: usize = 8;
const MIN_HIGH_DEGREE: usize = 32;

/// Searches in a row that keep nothing after which a round gives up: where
/// the boundary is already as good as single moves can make it, most
/// searches fail, and the rest would fail too.
const FAILED_SEARCHES: usize = 1024;

/// Rounds stop once they gain less than the cut over this (a thousandth).
const MIN_GAIN_DIVISOR: i64 = 1000;

/// Whether `gain` is less than `cut` over MIN_GAIN_DIVISOR (in 128 bits:
/// with sizes as edge weights, cuts reach 2^62).
fn negligible(gain: i64, cut: i64) -> bool {
    i128::from(gain) * i128::from(MIN_GAIN_DIVISOR) < i128::from(cut)
}

/// The scratch space of the searches, kept across rounds and levels.
#[derive(Default)]
pub(crate) struct Fm {
    /// The round in which each node was last moved (locked), or 0.
    locked: Vec<u32>,
    round: u32,
    /// Connection of the current node to each part, and the parts touched.
    conn: Vec<i64>,
    touched: Vec<u32>,
    heap: BinaryHeap<(i64, Reverse<u32>)>,
    /// The moves of the current search: node and the part it came from.
    log: Vec<(u32, u32)>,
    seeds: Vec<u32>,
    /// The nodes whose moves the searches of the current round kept.
    kept: Vec<u32>,
    /// Neighbours of a moved node with more entries than this are not
    /// queued (see HIGH_DEGREE).
    max_degree: usize,
    /// Row entries the current round has scanned.
    work: usize,
}

/// A node's move out of an overloaded part, ordered by the cut it costs per
/// unit of load it sheds (the least costly first), then by node (lower
/// first).
#[derive(Clone, Copy, Debug, PartialEq)]
struct ShedKey(f64, Reverse<u32>);

impl Eq for ShedKey {}

impl PartialOrd for ShedKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ShedKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// The best move of one node: its gain and the part it goes to.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Move {
    gain: i64,
    to: u32,
}

impl Fm {
    /// Moves nodes out of parts above their limit into adjacent parts with
    /// room, cheapest first: a priority queue of the nodes of overloaded
    /// parts keyed by their best move's gain per unit of weight, updated as
    /// neighbours move. Each node moves at most once (it lands in a part
    /// with room, which never becomes overloaded). Parts may stay above
    /// their limit where no adjacent part has room.
    pub(crate) fn rebalance(
        &mut self,
        level: &Level,
        part: &mut [u32],
        loads: &mut [f64],
        limits: &[f64],
    ) {
        let n_parts = loads.len();
        if self.conn.len() < n_parts {
            self.conn.resize(n_parts, 0);
        }
        let over = |loads: &[f64], p: u32| loads[p as usize] > limits[p as usize];
        if !(0..n_parts as u32).any(|p| over(loads, p)) {
            return;
        }
        let mut heap: BinaryHeap<ShedKey> = BinaryHeap::new();
        for node in 0..level.node_count() {
            if over(loads, part[node])
                && level.node_weights[node] > 0.0
                && let Some(key) = self.shed_key(level, part, loads, limits, node)
            {
                heap.push(ShedKey(key, Reverse(node as u32)));
            }
        }
        while let Some(ShedKey(key, Reverse(node))) = heap.pop() {
            let node_idx = node as usize;
            if !over(loads, part[node_idx]) {
                continue;
            }
            let Some(m) = self.best_move(level, part, loads, limits, node_idx) else {
                continue;
            };
            let now = m.gain as f64 / level.node_weights[node_idx];
            if now != key {
                heap.push(ShedKey(now, Reverse(node)));
                continue;
            }
            let from = part[node_idx];
            let weight = level.node_weights[node_idx];
            part[node_idx] = m.to;
            loads[from as usize] -= weight;
            loads[m.to as usize] += weight;
            for &next in level.row(node_idx).0 {
                let next_idx = next as usize;
                if over(loads, part[next_idx])
                    && level.node_weights[next_idx] > 0.0
                    && let Some(key) = self.shed_key(level, part, loads, limits, next_idx)
                {
                    heap.push(ShedKey(key, Reverse(next)));
                }
            }
        }
    }

    fn shed_key(
        &mut self,
        level: &Level,
        part: &[u32],
        loads: &[f64],
        limits: &[f64],
        node: usize,
    ) -> Option<f64> {
        self.best_move(level, part, loads, limits, node)
            .map(|m| m.gain as f64 / level.node_weights[node])
    }

    /// Up to `rounds` rounds of localized searches over `level`, moving nodes
    /// of `part` while every load stays within `limits` (`loads` is kept up
    /// to date). Stops after a round that gains nothing. Returns the total
    /// drop in cut weight.
    ///
    /// `loads` must be the loads of `part`, each within its limit.
    pub(crate) fn refine(
        &mut self,
        level: &Level,
        part: &mut [u32],
        loads: &mut [f64],
        limits: &[f64],
        rounds: usize,
    ) -> i64 {
        let n_nodes = level.node_count();
        let n_parts = loads.len();
        if self.locked.len() < n_nodes {
            self.locked.resize(n_nodes, 0);
        }
        self.locked[..n_nodes].fill(0);
        self.round = 0;
        if self.conn.len() < n_parts {
            self.conn.resize(n_parts, 0);
        }
        let mut total = 0;
        self.kept.clear();
        let mut cut = cut_weight(level, part) as i64;
        for _ in 0..rounds {
            let gain = self.round(level, part, loads, limits, cut);
            total += gain;
            if gain == 0 || negligible(gain, cut) {
                break;
            }
            cut -= gain;
        }
        total
    }

    /// One round; returns its gain. It stops early once it has scanned as
    /// many entries as the level has and gained less than a thousandth of
    /// `cut`: on levels where single moves can do next to nothing (dense
    /// levels of shuffles), the rest of the round would cost the most and
    /// gain the least.
    fn round(
        &mut self,
        level: &Level,
        part: &mut [u32],
        loads: &mut [f64],
        limits: &[f64],
        cut: i64,
    ) -> i64 {
        self.round += 1;
        let budget = WORK_PER_ENTRY * (level.entry_count() + level.node_count());
        self.max_degree =
            (HIGH_DEGREE * level.entry_count() / level.node_count().max(1)).max(MIN_HIGH_DEGREE);
        // The first round starts from every boundary node, in order; later
        // ones only from where the round before kept moves, since the rest
        // of the boundary has not changed since its searches failed.
        let first = self.round == 1;
        self.seeds.clear();
        self.work = 0;
        if !first {
            for &node in &self.kept {
                let (targets, _) = level.row(node as usize);
                self.work += targets.len();
                for &next in std::iter::once(&node).chain(targets) {
                    if self.locked[next as usize] != self.round {
                        self.locked[next as usize] = self.round;
                        self.seeds.push(next);
                    }
                }
            }
            for &node in &self.seeds {
                self.locked[node as usize] = 0;
            }
            self.seeds.sort_unstable();
        }
        self.kept.clear();
        let mut gain = 0;
        let seeds = std::mem::take(&mut self.seeds);
        let n_candidates = if first {
            level.node_count()
        } else {
            seeds.len()
        };
        let mut failed = 0;
        let candidates = (0..n_candidates).map(|i| if first { i as u32 } else { seeds[i] });
        for seed in candidates {
            let futile = self.work > level.entry_count() && negligible(gain, cut);
            if self.work > budget || failed >= FAILED_SEARCHES || futile {
                break;
            }
            if self.locked[seed as usize] == self.round {
                continue;
            }
            let own = part[seed as usize];
            let (targets, _) = level.row(seed as usize);
            self.work += targets.len();
            if targets.iter().all(|&next| part[next as usize] == own) {
                continue;
            }
            let kept = self.search(level, part, loads, limits, seed, budget);
            gain += kept;
            failed = if kept > 0 { 0 } else { failed + 1 };
        }
        self.seeds = seeds;
        gain
    }

    /// One localized search from `seed`; returns the gain it keeps.
    fn search(
        &mut self,
        level: &Level,
        part: &mut [u32],
        loads: &mut [f64],
        limits: &[f64],
        seed: u32,
        budget: usize,
    ) -> i64 {
        self.heap.clear();
        self.log.clear();
        if let Some(m) = self.best_move(level, part, loads, limits, seed as usize) {
            self.heap.push((m.gain, Reverse(seed)));
        }
        let (mut sum, mut best, mut best_len) = (0_i64, 0_i64, 0_usize);
        let search_budget = budget.min(self.work + SEARCH_WORK);
        while let Some((queued, Reverse(node))) = self.heap.pop() {
            let node_idx = node as usize;
            if self.locked[node_idx] == self.round {
                continue;
            }
            // Entries go stale as neighbours move: take the current best
            // move, and queue it again if it is not what was queued.
            let Some(m) = self.best_move(level, part, loads, limits, node_idx) else {
                continue;
            };
            if m.gain != queued {
                self.heap.push((m.gain, Reverse(node)));
                continue;
            }
            let from = part[node_idx];
            let weight = level.node_weights[node_idx];
            part[node_idx] = m.to;
            loads[from as usize] -= weight;
            loads[m.to as usize] += weight;
            self.locked[node_idx] = self.round;
            self.log.push((node, from));
            sum += m.gain;
            if sum > best {
                best = sum;
                best_len = self.log.len();
            } else if self.log.len() - best_len >= STALL || self.work > search_budget {
                break;
            }
            let (targets, _) = level.row(node_idx);
            self.work += targets.len();
            for &next in targets {
                // A search through a dense region stops mid-way.
                if self.work > search_budget {
                    break;
                }
                if self.locked[next as usize] != self.round
                    && level.degree(next as usize) <= self.max_degree
                    && let Some(m) = self.best_move(level, part, loads, limits, next as usize)
                {
                    self.heap.push((m.gain, Reverse(next)));
                }
            }
        }
        self.kept
            .extend(self.log[..best_len].iter().map(|&(node, _)| node));
        // Undo the moves after the best prefix, last first.
        for &(node, from) in self.log[best_len..].iter().rev() {
            let node_idx = node as usize;
            let weight = level.node_weights[node_idx];
            loads[part[node_idx] as usize] -= weight;
            loads[from as usize] += weight;
            part[node_idx] = from;
        }
        best
    }

    /// The best move of `node`: to the adjacent part with room it has the
    /// heaviest edges to (ties to the lighter part, then the lower index),
    /// with its gain; `None` if no adjacent part has room.
    fn best_move(
        &mut self,
        level: &Level,
        part: &[u32],
        loads: &[f64],
        limits: &[f64],
        node: usize,
    ) -> Option<Move> {
        let own = part[node];
        let (targets, weights) = level.row(node);
        self.work += targets.len();
        for (&next, &w) in targets.iter().zip(weights) {
            let p = part[next as usize];
            if self.conn[p as usize] == 0 {
                self.touched.push(p);
            }
            self.conn[p as usize] += w as i64;
        }
        let weight = level.node_weights[node];
        let stay = self.conn[own as usize];
        let mut best: Option<(i64, u32)> = None;
        for &to in &self.touched {
            if to == own || loads[to as usize] + weight > limits[to as usize] {
                continue;
            }
            let conn = self.conn[to as usize];
            let better = best.is_none_or(|(best_conn, best_to)| {
                conn > best_conn
                    || (conn == best_conn
                        && (loads[to as usize], to) < (loads[best_to as usize], best_to))
            });
            if better {
                best = Some((conn, to));
            }
        }
        for &p in &self.touched {
            self.conn[p as usize] = 0;
        }
        self.touched.clear();
        best.map(|(conn, to)| Move {
            gain: conn - stay,
            to,
        })
    }
}

/// Moves every connected piece of a part other than its heaviest one, as a
/// whole, to the adjacent part it has the heaviest edges to, where that part
/// has room. Such a piece has no edge into the rest of its part, so the
/// edges it has to its new part leave the cut and none join it (a piece
/// that earlier moves have joined to the rest of its part moves only if it
/// has more edges to the new part than to its own). Returns the drop in cut
/// weight.
///
/// Pieces like these come from rebalancing, which may send a node to a
/// part it is not adjacent to; single-node moves then cannot bring them
/// back without first raising the cut by all their edges.
pub(crate) fn merge_pieces(
    level: &Level,
    part: &mut [u32],
    loads: &mut [f64],
    limits: &[f64],
) -> i64 {
    let n_nodes = level.node_count();
    let n_parts = loads.len();
    // Label the pieces by breadth-first search within each part.
    let mut piece = vec![u32::MAX; n_nodes];
    let mut members: Vec<u32> = Vec::with_capacity(n_nodes);
    // (start in `members`, weight, part) of each piece.
    let mut pieces: Vec<(u32, f64, u32)> = Vec::new();
    for root in 0..n_nodes {
        if piece[root] != u32::MAX {
            continue;
        }
        let id = pieces.len() as u32;
        let start = members.len();
        piece[root] = id;
        members.push(root as u32);
        let mut head = start;
        let mut weight = 0.0;
        while head < members.len() {
            let node = members[head] as usize;
            head += 1;
            weight += level.node_weights[node];
            for &next in level.row(node).0 {
                if piece[next as usize] == u32::MAX && part[next as usize] == part[root] {
                    piece[next as usize] = id;
                    members.push(next);
                }
            }
        }
        pieces.push((start as u32, weight, part[root]));
    }
    if pieces.len() <= n_parts {
        return 0;
    }
    // The heaviest piece of each part stays (ties to the first).
    let mut main = vec![u32::MAX; n_parts];
    for (id, &(_, weight, p)) in pieces.iter().enumerate() {
        let m = &mut main[p as usize];
        if *m == u32::MAX || weight > pieces[*m as usize].1 {
            *m = id as u32;
        }
    }
    let mut conn = vec![0_i64; n_parts];
    let mut touched: Vec<u32> = Vec::new();
    let mut gain = 0;
    for (id, &(start, weight, from)) in pieces.iter().enumerate() {
        if main[from as usize] == id as u32 {
            continue;
        }
        let end = pieces
            .get(id + 1)
            .map_or(members.len(), |next| next.0 as usize);
        let nodes = &members[start as usize..end];
        // Its edges out, by the part at their other end. A piece that an
        // earlier move joined to the rest of its part has edges to `from`.
        for &node in nodes {
            let (targets, weights) = level.row(node as usize);
            for (&next, &w) in targets.iter().zip(weights) {
                if piece[next as usize] == id as u32 {
                    continue;
                }
                let p = part[next as usize];
                if conn[p as usize] == 0 {
                    touched.push(p);
                }
                conn[p as usize] += w as i64;
            }
        }
        let stay = conn[from as usize];
        let best = touched
            .iter()
            .copied()
            .filter(|&to| {
                to != from
                    && conn[to as usize] > stay
                    && loads[to as usize] + weight <= limits[to as usize]
            })
            .max_by_key(|&to| (conn[to as usize], std::cmp::Reverse(to)));
        if let Some(to) = best {
            gain += conn[to as usize] - stay;
            loads[from as usize] -= weight;
            loads[to as usize] += weight;
            for &node in nodes {
                part[node as usize] = to;
            }
        }
        for &p in &touched {
            conn[p as usize] = 0;
        }
        touched.clear();
    }
    gain
}

#[cfg(test)]
mod tests;
