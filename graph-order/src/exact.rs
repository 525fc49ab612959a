//! A bounded exact search for small graphs: the lowest max pressure over all
//! topological orders, found by iterative deepening on the bound with a memo
//! of done-sets that cannot finish within it.

use graph_core::{Dag, NodeId, Topology};
use rustc_hash::FxHashSet;

/// The largest graph the search accepts (a done-set is a `u128`).
pub(crate) const MAX_NODES: usize = 128;

/// The most search states visited before giving up, over all bounds.
const BUDGET: usize = 20_000;

/// An order whose max pressure is below `upper`, and the lowest such, if the
/// search finds one within its budget; `None` if none exists (then `upper` is
/// optimal), the graph is too large, or the budget runs out.
pub(crate) fn exact(topology: &Topology, lower: u32, upper: u32) -> Option<Vec<u32>> {
    let n = topology.node_count();
    if n == 0 || n > MAX_NODES {
        return None;
    }
    let mut search = Search {
        topology,
        missing: topology
            .node_ids()
            .map(|node| topology.dependencies(node).len() as u32)
            .collect(),
        remaining: topology
            .node_ids()
            .map(|node| topology.dependents(node).len() as u32)
            .collect(),
        failed: FxHashSet::default(),
        sequence: Vec::with_capacity(n),
        budget: BUDGET,
        bound: 0,
    };
    for bound in lower..upper {
        search.bound = bound;
        search.failed.clear();
        match search.dfs(0, 0) {
            Some(true) => {
                let mut prio = vec![0_u32; n];
                for (step, &v) in search.sequence.iter().enumerate() {
                    prio[v.index()] = step as u32;
                }
                return Some(prio);
            }
            Some(false) => continue,
            None => return None,
        }
    }
    None
}

struct Search<'a> {
    topology: &'a Topology,
    missing: Vec<u32>,
    remaining: Vec<u32>,
    failed: FxHashSet<u128>,
    sequence: Vec<NodeId>,
    budget: usize,
    bound: u32,
}

impl Search<'_> {
    /// Whether the tasks not in `done` can run with at most `bound` results
    /// held before each; `None` when the budget runs out.
    fn dfs(&mut self, done: u128, held: u32) -> Option<bool> {
        if self.sequence.len() == self.missing.len() {
            return Some(true);
        }
        if held > self.bound || self.failed.contains(&done) {
            return Some(false);
        }
        if self.budget == 0 {
            return None;
        }
        self.budget -= 1;
        // Runnable tasks, the ones that leave the least held first.
        let mut next: Vec<(u32, NodeId)> = self
            .topology
            .node_ids()
            .filter(|&v| done >> v.index() & 1 == 0 && self.missing[v.index()] == 0)
            .map(|v| (self.held_after(v, held), v))
            .collect();
        next.sort_unstable();
        for (after, v) in next {
            self.apply(v, true);
            self.sequence.push(v);
            match self.dfs(done | 1 << v.index(), after) {
                Some(false) => {}
                other => return other,
            }
            self.sequence.pop();
            self.apply(v, false);
        }
        self.failed.insert(done);
        Some(false)
    }

    fn held_after(&self, v: NodeId, held: u32) -> u32 {
        let freed = self
            .topology
            .dependencies(v)
            .iter()
            .filter(|&&d| self.remaining[d.index()] == 1)
            .count() as u32;
        held + u32::from(!self.topology.dependents(v).is_empty()) - freed
    }

    /// Runs (or, with `run == false`, un-runs) `v` in the counters.
    fn apply(&mut self, v: NodeId, run: bool) {
        for &d in self.topology.dependencies(v) {
            if run {
                self.remaining[d.index()] -= 1;
            } else {
                self.remaining[d.index()] += 1;
            }
        }
        for &d in self.topology.dependents(v) {
            if run {
                self.missing[d.index()] -= 1;
            } else {
                self.missing[d.index()] += 1;
            }
        }
    }
}
