//! Sizes learned as a run goes. A graph that tells no sizes (a dataframe's,
//! a plain dict's) is ordered by counting results; where its results then
//! prove to differ in size by orders of magnitude, that order can hold many
//! times the bytes an order by bytes would (a shuffle's inputs, each split
//! into pieces, weigh as much as all their pieces together, and count as
//! one). The run measures its first results, and once they show that bytes
//! matter, orders the graph again by the sizes measured (each group, dask's
//! `key_split` of the key, at the mean of its results, a group not yet seen
//! at the geometric mean of all: a reader of large results that has not
//! run yet is as likely small as large, and the arithmetic mean would
//! weigh it like the large ones) and goes on by that order
//! ([`graph_exec::scheduler::Scheduler::reorder`]). It does so once, early: the tasks
//! that have started keep their places.

use graph_core::{NodeId, Topology};
use graph_order::{Order, OrderConfig, Strategy};

/// How many results a run measures, at most, before it decides whether to
/// order again...
pub(crate) const RESULTS_MEASURED: usize = 16;

/// ... and at least: as soon as this many show that bytes matter, it does
/// (several workers running by counts meanwhile may take one large result
/// after another ahead of the order).
pub(crate) const FEWEST_MEASURED: usize = 4;

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
#[derive(Clone)]
pub(crate) struct Learning {
    /// Each node's group (dask's `key_split` of its key).
    groups: Vec<u32>,
    /// Per node, its result's measured bytes.
    known: Vec<Option<u64>>,
    measured: usize,
    smallest: u64,
    largest: u64,
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
        }
    }

    /// Records that `node`'s result takes `bytes`.
    pub(crate) fn measured(&mut self, node: NodeId, bytes: u64) {
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
        self.measured >= RESULTS_MEASURED || (self.measured >= FEWEST_MEASURED && self.uneven())
    }

    /// Whether the results measured differ enough for bytes to matter
    /// ([`LARGE_RESULT`], [`UNEVEN`]).
    fn uneven(&self) -> bool {
        self.largest >= LARGE_RESULT && self.largest / self.smallest.max(1) >= UNEVEN
    }

    /// Decides, once it is [`Learning::ready`] (before, `None`): the sizes
    /// to order the graph by (one per node) where the results differ enough
    /// for bytes to matter, else `None`. The learning ends either way.
    pub(crate) fn decide(self) -> Option<Vec<u64>> {
        (self.ready() && self.uneven()).then(|| self.filled())
    }

    /// Every node's size: its result's where measured, else the mean of
    /// its group's results measured, else the geometric mean of all.
    fn filled(&self) -> Vec<u64> {
        let groups = self.groups.iter().max().map_or(0, |&g| g as usize + 1);
        let mut sums = vec![(0_u128, 0_u64); groups];
        let mut log_sum = 0.0_f64;
        for (&group, bytes) in self.groups.iter().zip(&self.known) {
            if let Some(bytes) = *bytes {
                let (sum, count) = &mut sums[group as usize];
                *sum += u128::from(bytes);
                *count += 1;
                log_sum += (bytes.max(1) as f64).ln();
            }
        }
        let unseen = (log_sum / self.measured.max(1) as f64).exp().round() as u64;
        self.groups
            .iter()
            .zip(&self.known)
            .map(|(&group, &known)| match (known, sums[group as usize]) {
                (Some(bytes), _) => bytes,
                (None, (sum, count)) if count > 0 => (sum / u128::from(count)) as u64,
                (None, _) => unseen,
            })
            .collect()
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
    fn decides_as_soon_as_bytes_matter() {
        // Groups 0..8 (i % 8). Alike so far: it waits for more.
        let mut learning = Learning::new((0..40).map(|i| i % 8).collect());
        for i in 0..FEWEST_MEASURED {
            learning.measured(NodeId::new(i), 1 << 20);
        }
        assert!(!learning.ready());
        assert_eq!(learning.clone().decide(), None, "too few measured yet");
        learning.measured(NodeId::new(8), 100);
        assert!(learning.ready(), "uneven and large: no need to wait");
        let filled = learning.decide().expect("orders again");
        // Measured nodes keep their sizes; node 16 (group 0, of 0 and 8)
        // takes its group's mean, node 6 (group 6, none measured) the
        // geometric mean of all five.
        assert_eq!((filled[0], filled[8]), (1 << 20, 100));
        assert_eq!(filled[16], ((1 << 20) + 100) / 2);
        let geometric = ((4.0 * 20.0 * 2f64.ln() + 100f64.ln()) / 5.0).exp().round() as u64;
        assert_eq!(filled[6], geometric);
    }

    #[test]
    fn a_group_not_seen_takes_the_geometric_mean() {
        // Groups 0 and 1 (of 0..40 by i % 4) measured at 1 MB and 1 byte
        // each: groups 2 and 3 take 1 KiB, their geometric mean.
        let mut learning = Learning::new((0..40).map(|i| i % 4).collect());
        for i in (0..40).filter(|i| i % 4 < 2).take(RESULTS_MEASURED) {
            learning.measured(NodeId::new(i), if i % 4 == 0 { 1 << 20 } else { 1 });
        }
        let filled = learning.decide().expect("uneven and large");
        assert_eq!(
            (filled[0], filled[1], filled[2], filled[3]),
            (1 << 20, 1, 1 << 10, 1 << 10)
        );
    }

    #[test]
    fn even_or_small_results_keep_the_order() {
        let even = measured(&[1 << 20; RESULTS_MEASURED]);
        assert!(even.ready(), "sixteen measured: time to decide");
        assert_eq!(even.decide(), None);
        let mut small: Vec<u64> = vec![28; RESULTS_MEASURED];
        small[3] = 4_000;
        assert_eq!(measured(&small).decide(), None);
    }
}
