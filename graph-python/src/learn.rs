//! Sizes learned as a run goes. A graph that tells no sizes (a dataframe's,
//! a plain dict's) is ordered by counting results; where its results then
//! prove to differ in size by orders of magnitude, that order can hold many
//! times the bytes an order by bytes would (a shuffle's inputs, each split
//! into pieces, weigh as much as all their pieces together, and count as
//! one). The run measures its first results, and once they show that bytes
//! matter, orders the graph again by the sizes measured (each group, dask's
//! `key_split` of the key, at the mean of its results, a group not yet seen
//! at the mean of all) and goes on by that order
//! ([`graph_exec::Scheduler::reorder`]). It does so once, early: the tasks
//! that have started keep their places.

use graph_core::{NodeId, Topology};
use graph_order::{Order, OrderConfig, Strategy};

/// How many results a run measures before it decides whether to order
/// again.
pub(crate) const RESULTS_MEASURED: usize = 16;

/// A run needs at least this many tasks for a second order to be worth it.
pub(crate) const SMALLEST_GRAPH: usize = 4 * RESULTS_MEASURED;

/// Bytes matter once a result measured takes at least this much
/// (64 KiB)...
pub(crate) const LARGE_RESULT: u64 = 1 << 16;

/// ... and the largest result measured is at least this many times the
/// smallest.
pub(crate) const UNEVEN: u64 = 4;

/// What the second order is made from: the first order's inputs, which do
/// not change over the run.
pub(crate) struct Reorder {
    pub(crate) strategy: Strategy,
    pub(crate) tie_break: Vec<u32>,
    pub(crate) is_data: Vec<bool>,
}

impl Reorder {
    /// The order of the graph by `sizes` (one per node); `stop` gives up
    /// (a run that failed or was cancelled meanwhile).
    pub(crate) fn order(
        &self,
        topology: &Topology,
        sizes: &[u64],
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<Order, graph_order::Error> {
        let config = OrderConfig {
            strategy: self.strategy,
            is_data: &self.is_data,
            sizes,
        };
        graph_order::order_unless(topology, &self.tie_break, &config, stop)
    }
}

/// The sizes measured so far, under the run's lock.
pub(crate) struct Learning {
    /// Each node's group (dask's `key_split` of its key).
    groups: Vec<u32>,
    /// Per node, its result's measured bytes.
    known: Vec<Option<u64>>,
    measured: usize,
    smallest: u64,
    largest: u64,
    /// Whether the run has decided (to order again or not): nothing is
    /// measured any more.
    decided: bool,
}

impl Learning {
    /// Measures the results of the nodes grouped by `groups`.
    pub(crate) fn new(groups: Vec<u32>) -> Learning {
        Learning {
            known: vec![None; groups.len()],
            groups,
            measured: 0,
            smallest: u64::MAX,
            largest: 0,
            decided: false,
        }
    }

    /// Records that `node`'s result takes `bytes`.
    pub(crate) fn measured(&mut self, node: NodeId, bytes: u64) {
        if self.decided {
            return;
        }
        if let Some(slot) = self.known.get_mut(node.index())
            && slot.replace(bytes).is_none()
        {
            self.measured += 1;
            self.smallest = self.smallest.min(bytes);
            self.largest = self.largest.max(bytes);
        }
    }

    /// Whether enough results are measured to decide.
    pub(crate) fn ready(&self) -> bool {
        self.measured >= RESULTS_MEASURED
    }

    /// Once [`RESULTS_MEASURED`] results are measured, decides: the sizes
    /// to order the graph by (one per node) where the results differ
    /// enough for bytes to matter ([`LARGE_RESULT`], [`UNEVEN`]), else
    /// `None` for good. Gives `Some` at most once.
    pub(crate) fn decide(&mut self) -> Option<Vec<u64>> {
        if self.decided || !self.ready() {
            return None;
        }
        self.decided = true;
        let uneven = self.largest >= LARGE_RESULT && self.largest / self.smallest.max(1) >= UNEVEN;
        if !uneven {
            return None;
        }
        graph_order::fill_sizes(&self.known, &self.groups)
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(sizes: &[u64]) -> Learning {
        let mut learning = Learning::new((0..40).map(|i| i % 4).collect());
        for (i, &bytes) in sizes.iter().enumerate() {
            learning.measured(NodeId::new(i), bytes);
        }
        learning
    }

    #[test]
    fn decides_once_enough_results_are_measured() {
        let mut sizes = vec![100; RESULTS_MEASURED - 1];
        sizes[0] = 1 << 20;
        let mut learning = measured(&sizes);
        assert_eq!(learning.decide(), None, "too few measured yet");
        assert!(!learning.ready());
        learning.measured(NodeId::new(RESULTS_MEASURED - 1), 100);
        let filled = learning.decide().expect("uneven and large: orders again");
        // Node 0's group (0, 4, 8, ...) takes the mean of its four measured.
        assert_eq!(filled[0], 1 << 20);
        assert_eq!(filled[36], ((1 << 20) + 3 * 100) / 4);
        assert_eq!(filled[1], 100);
        assert_eq!(learning.decide(), None, "only once");
    }

    #[test]
    fn even_or_small_results_keep_the_order() {
        let mut even = measured(&[1 << 20; RESULTS_MEASURED]);
        assert_eq!(even.decide(), None);
        even.measured(NodeId::new(20), 1);
        assert_eq!(even.decide(), None, "decided for good");
        let mut small: Vec<u64> = vec![28; RESULTS_MEASURED];
        small[3] = 4_000;
        assert_eq!(measured(&small).decide(), None);
    }
}
