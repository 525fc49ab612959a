//! Sizes learned as a run goes: a graph that tells no sizes is ordered by
//! counting results, and its run measures its first results. Once they show
//! that bytes matter (one result of [`LARGE_RESULT`] or more, [`UNEVEN`]
//! times the smallest), [`Learning::decide`] gives the sizes to order the
//! graph again by: each node's measured, else the mean of its group's
//! (dask's `key_split` of its key), else the geometric mean of all
//! ([`Unseen::GeometricMean`]: a reader of large results that has not run
//! yet is as likely small as large).
//!
//! # Example
//!
//! ```
//! use graph_core::NodeId;
//! use graph_order::learn::{FEWEST_MEASURED, Learning};
//!
//! // Two groups, alternating: the first's results take 1 MiB, the second's 8 bytes.
//! let mut learning = Learning::new((0..100).map(|i| i % 2).collect());
//! for i in 0..FEWEST_MEASURED {
//!     learning.measured(NodeId::new(i), if i % 2 == 0 { 1 << 20 } else { 8 });
//! }
//! assert!(learning.ready());
//! let sizes = learning.decide().expect("bytes matter");
//! assert_eq!((sizes[98], sizes[99]), (1 << 20, 8));
//! ```

use graph_core::NodeId;

use crate::{Unseen, fill_sizes_with};

/// How many results a run measures, at most, before it decides whether to
/// order again...
pub const RESULTS_MEASURED: usize = 16;

/// ... and at least: as soon as this many show that bytes matter, it does
/// (several workers running by counts meanwhile may take one large result
/// after another ahead of the order).
pub const FEWEST_MEASURED: usize = 4;

/// Bytes matter once a result measured takes at least this much
/// (64 KiB)...
pub const LARGE_RESULT: u64 = 1 << 16;

/// ... and the largest result measured is at least this many times the
/// smallest.
pub const UNEVEN: u64 = 4;

/// The sizes of a run's results measured so far, and whether they warrant
/// an order in bytes.
#[derive(Clone, Debug)]
pub struct Learning {
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
    pub fn new(groups: Vec<u32>) -> Learning {
        Learning {
            known: vec![None; groups.len()],
            groups,
            measured: 0,
            smallest: u64::MAX,
            largest: 0,
        }
    }

    /// Records that `node`'s result takes `bytes`.
    pub fn measured(&mut self, node: NodeId, bytes: u64) {
        if let Some(slot) = self.known.get_mut(node.index())
            && slot.replace(bytes).is_none()
        {
            self.measured += 1;
            self.smallest = self.smallest.min(bytes);
            self.largest = self.largest.max(bytes);
        }
    }

    /// Whether enough results are measured to decide.
    pub fn ready(&self) -> bool {
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
    pub fn decide(self) -> Option<Vec<u64>> {
        if !(self.ready() && self.uneven()) {
            return None;
        }
        fill_sizes_with(&self.known, &self.groups, Unseen::GeometricMean)
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
