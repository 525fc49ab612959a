//! The ready queue: tasks ready to start, lowest rank first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fixedbitset::FixedBitSet;
use graph_core::NodeId;

#[cfg(doc)]
use super::*;
use crate::rank_set::RankSet;

/// The ready nodes, as `rank << 32 | node`, lowest first.
#[derive(Clone, Debug)]
pub(super) enum Ready {
    /// Ranks that tie or spread far beyond the node count.
    Heap(BinaryHeap<Reverse<u64>>),
    /// Distinct ranks below a small bound (an order's positions, say): a
    /// [`RankSet`] of them, and the node of each.
    Ranked { set: RankSet, node_at: Vec<u32> },
}

impl Ready {
    /// An empty set for the nodes in `runs`, ranked by `ranks`.
    pub(super) fn new(runs: &FixedBitSet, ranks: &[u32]) -> Ready {
        match node_at_rank(runs.ones(), ranks) {
            Some(node_at) => Ready::Ranked {
                set: RankSet::new(node_at.len()),
                node_at,
            },
            None => Ready::Heap(BinaryHeap::new()),
        }
    }

    pub(super) fn push(&mut self, key: u64) {
        match self {
            Ready::Heap(heap) => heap.push(Reverse(key)),
            Ready::Ranked { set, .. } => set.insert((key >> 32) as usize),
        }
    }

    pub(super) fn peek(&self) -> Option<u64> {
        match self {
            Ready::Heap(heap) => heap.peek().map(|&Reverse(key)| key),
            Ready::Ranked { set, node_at } => set
                .first()
                .map(|rank| ((rank as u64) << 32) | u64::from(node_at[rank])),
        }
    }

    /// Removes `key`, which [`Ready::peek`] just gave.
    pub(super) fn take_first(&mut self, key: u64) {
        match self {
            Ready::Heap(heap) => {
                heap.pop();
            }
            Ready::Ranked { set, .. } => set.remove((key >> 32) as usize),
        }
    }

    pub(super) fn pop(&mut self) -> Option<u64> {
        match self {
            Ready::Heap(heap) => heap.pop().map(|Reverse(key)| key),
            Ready::Ranked { set, node_at } => {
                let rank = set.first()?;
                set.remove(rank);
                Some(((rank as u64) << 32) | u64::from(node_at[rank]))
            }
        }
    }
}

/// The needed nodes by `priorities`, ties by node id: placed straight by
/// priority where the priorities are distinct and small (an order's
/// positions are), else sorted.
pub(crate) fn by_priority(needed: &[bool], priorities: &[u32]) -> Vec<u32> {
    let nodes = (0..needed.len()).filter(|&i| needed[i]);
    match node_at_rank(nodes.clone(), priorities) {
        Some(mut at) => {
            at.retain(|&i| i != u32::MAX);
            at
        }
        None => {
            let mut by: Vec<u32> = nodes.map(|i| i as u32).collect();
            by.sort_unstable_by_key(|&i| (priorities[i as usize], i));
            by
        }
    }
}

/// Per rank, the node of `nodes` that has it (`u32::MAX` for a rank no
/// node has), up to the highest rank; `None` where two nodes share a rank
/// or a rank is not below `ranks.len()` plus 64: then ranks are no
/// positions in an order, and a sort or a heap serves better.
pub(super) fn node_at_rank(nodes: impl Iterator<Item = usize>, ranks: &[u32]) -> Option<Vec<u32>> {
    let bound = ranks.len() + 64;
    let mut node_at = Vec::new();
    for i in nodes {
        let rank = ranks[i] as usize;
        if rank >= bound {
            return None;
        }
        if rank >= node_at.len() {
            node_at.resize(rank + 1, u32::MAX);
        }
        if node_at[rank] != u32::MAX {
            return None;
        }
        node_at[rank] = i as u32;
    }
    Some(node_at)
}

pub(crate) fn rank_of(ranks: &[u32], node: NodeId) -> u64 {
    (u64::from(ranks[node.index()]) << 32) | u64::from(node.as_u32())
}
