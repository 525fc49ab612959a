//! A run that goes on by another order: where the first one stands, and the
//! switch.

use graph_core::{Dag, NodeId};

#[cfg(doc)]
use super::*;
use super::{HeldLimit, Ready, Scheduler, rank_of, run_order};

impl<'t> Scheduler<'t> {
    /// How many nodes have started (they may have finished since): the
    /// first rank not started in [`Scheduler::resumed_ranks`].
    pub fn started(&self) -> usize {
        self.started.count_ones(..)
    }

    /// The results held now, in count and in bytes (those in memory and
    /// those spilled).
    pub fn holding(&self) -> (usize, u64) {
        let spilled: u64 = self.memory.as_ref().map_or(0, |memory| {
            memory.spilled.ones().map(|i| self.bytes[i]).sum()
        });
        (self.held, self.held_bytes + spilled)
    }

    /// The ranks that go on with the run by a new order: the nodes that
    /// have started keep their places, first, by their ranks now; every
    /// other needed node follows by `priorities` (one per scheduling node:
    /// a new order of the graph, made from what the run has learned), each
    /// after its dependencies. For [`Scheduler::reorder`], and with
    /// [`OrderProfile::new`] for the bound drawn from them.
    ///
    /// # Errors
    ///
    /// [`crate::Error::PriorityCount`] when `needed` or `priorities` does
    /// not have one entry per scheduling node.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::scheduler::{Scheduler, SchedulerConfig};
    ///
    /// // Three chains 0 -> 1, 2 -> 3, 4 -> 5, ranked one after another.
    /// let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)])?;
    /// let (needed, ranks) = ([true; 6], [0, 1, 2, 3, 4, 5]);
    /// let config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// // A new order would run the last chain first: 0 keeps its place.
    /// let resumed = scheduler.resumed_ranks(&needed, &[4, 5, 2, 3, 0, 1])?;
    /// assert_eq!(resumed, [0, 5, 3, 4, 1, 2]);
    /// scheduler.reorder(&resumed, None);
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(4))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resumed_ranks(
        &self,
        needed: &[bool],
        priorities: &[u32],
    ) -> Result<Vec<u32>, crate::Error> {
        let n = self.sched.node_count();
        for got in [priorities.len(), needed.len()] {
            if got != n {
                return Err(crate::Error::PriorityCount { got, expected: n });
            }
        }
        // The started nodes' ranks are below the count of nodes; the others
        // go past all of them, by their new priorities (ties by node id).
        let offset = u64::try_from(n).unwrap_or(u64::MAX);
        let keyed: Vec<u64> = (0..n)
            .map(|i| {
                if self.started.contains(i) {
                    u64::from(self.ranks[i]).min(offset - 1)
                } else {
                    offset + u64::from(priorities[i])
                }
            })
            .collect();
        // Narrowed to u32 by their rank among themselves, ties by node id.
        let mut nodes: Vec<u32> = (0..n as u32).collect();
        nodes.sort_unstable_by_key(|&i| (keyed[i as usize], i));
        let mut combined = vec![0_u32; n];
        for (place, &i) in nodes.iter().enumerate() {
            combined[i as usize] = place as u32;
        }
        run_order(self.sched, needed, &combined)
    }

    /// Goes on by a new order: `ranks` (one per scheduling node, as
    /// [`Scheduler::resumed_ranks`] gives them) replace the ranks, the ready
    /// nodes are ranked by them, and a bound on the results held takes
    /// `held_limit`'s limits and rises (drawn from `ranks`: see
    /// [`OrderProfile`]), keeping its measure (count or bytes). What is
    /// held, running and measured stays as it is; `None`, or a run without
    /// a bound, keeps the bound as it is.
    ///
    /// # Panics
    ///
    /// If `ranks` is shorter than the scheduling topology.
    pub fn reorder(&mut self, ranks: &'t [u32], held_limit: Option<HeldLimit<'t>>) {
        let n_sched = self.sched.node_count();
        assert!(ranks.len() >= n_sched, "a rank per scheduling node");
        let mut ready = Vec::new();
        while let Some(key) = self.ready.pop() {
            ready.push(NodeId::from_u32(key as u32));
        }
        self.ranks = &ranks[..n_sched];
        self.ready = Ready::new(&self.runs, self.ranks);
        for node in ready {
            self.ready.push(rank_of(self.ranks, node));
        }
        self.blocked = false;
        if let (Some(bound), Some(new)) = (&mut self.held_limit, held_limit) {
            bound.limit = new.limit;
            bound.rise = new.rise;
            let ranked = bound.started.len();
            bound.started.clear();
            for i in self.started.ones().filter(|&i| self.runs.contains(i)) {
                let rank = self.ranks[i] as usize;
                if rank < ranked {
                    bound.started.insert(rank);
                }
            }
            bound.head = bound.started.zeroes().next().unwrap_or(ranked);
            if let (Some(bytes), Some(new)) = (&mut bound.bytes, new.bytes) {
                bytes.limit = new.limit;
                bytes.rise = new.rise;
            }
        }
    }
}
