//! The ready queue: tasks ready to start, lowest rank first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fixedbitset::FixedBitSet;

#[cfg(doc)]
use super::*;
use crate::order::node_at_rank;
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
