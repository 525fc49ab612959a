//! The first partitions of the coarsest level: contiguous blocks of an
//! order, a breadth-first order to cut them from, and greedy graph growing.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::level::Level;

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
