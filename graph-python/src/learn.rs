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
//! that have started keep their places. What is measured, and when bytes
//! matter, is [`graph_order::learn`]'s; this is the second order.

use graph_core::Topology;
use graph_order::{Order, OrderConfig, Strategy};

/// A run needs at least this many tasks for a second order to be worth it.
pub(crate) const SMALLEST_GRAPH: usize = 4 * graph_order::learn::RESULTS_MEASURED;

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
