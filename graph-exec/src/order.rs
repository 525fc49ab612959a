//! Helpers that configure a scheduler from an order: the order a run
//! follows, and how far the results held rise over it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use graph_core::{Dag, NodeId, Topology};

/// Per rank of an order, how far the results held rise over their count
/// before that rank as one thread runs the order on from it: `rise[r]` is
/// the most results held before any later rank, less those held before
/// `r`, so `rise[0]` is the order's max pressure (as dask's diagnostics
/// count it: a result is held from its task until its last reader). `ranks`
/// number the needed nodes of `sched` `0..m`, every node after its
/// dependencies (as [`run_order`] gives them); barriers (the nodes of
/// `sched` past `data`'s) hold nothing. For [`HeldLimit::rise`](crate::scheduler::HeldLimit::rise).
///
/// **Complexity**: O(V + E).
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_exec::scheduler::pressure_rise;
///
/// // 0 and 1 both feed 2: the order 0, 1, 2 holds two results before 2.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// assert_eq!(pressure_rise(&topology, &topology, &[true; 3], &[0, 1, 2]), [2, 1, 0]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn pressure_rise(
    data: &Topology,
    sched: &Topology,
    needed: &[bool],
    ranks: &[u32],
) -> Vec<u32> {
    rise_by(data, sched, needed, ranks, |_| 1_u32)
}

/// Per rank of an order, how far the bytes of the results held rise over
/// those held before that rank as one thread runs the order on from it:
/// [`pressure_rise`] with each task's result weighing `sizes[task]` bytes
/// (0 past the end of `sizes`), so `rise[0]` is the order's peak bytes. A
/// result is held from its task until its last reader has run, one that no
/// task reads is not held, and barriers hold nothing. For
/// [`ByteLimit::rise`](crate::scheduler::ByteLimit::rise). With every size 1 it is [`pressure_rise`].
///
/// **Complexity**: O(V + E).
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_exec::scheduler::byte_rise;
///
/// // 0 (1,000 bytes) and 1 (10 bytes) both feed 2: the order 1, 0, 2 holds
/// // 10 bytes before 0 and 1,010 before 2.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let rise = byte_rise(&topology, &topology, &[true; 3], &[1, 0, 2], &[1_000, 10, 5]);
/// assert_eq!(rise, [1_010, 1_000, 0]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn byte_rise(
    data: &Topology,
    sched: &Topology,
    needed: &[bool],
    ranks: &[u32],
    sizes: &[u64],
) -> Vec<u64> {
    // No sum of the sizes of the held results can overflow.
    let most = u64::MAX / (data.node_count() as u64 + 1);
    rise_by(data, sched, needed, ranks, |i| {
        sizes.get(i).copied().unwrap_or(0).min(most)
    })
}

/// [`pressure_rise`] and [`byte_rise`]: the rise, per rank, of the held
/// results weighed by `weight` (of a task's index).
fn rise_by<W>(
    data: &Topology,
    sched: &Topology,
    needed: &[bool],
    ranks: &[u32],
    weight: impl Fn(usize) -> W,
) -> Vec<W>
where
    W: Copy + Ord + Default + std::ops::AddAssign + std::ops::SubAssign + std::ops::Sub<Output = W>,
{
    let n_tasks = data.node_count();
    let m = sched.node_ids().filter(|node| needed[node.index()]).count();
    let mut at: Vec<Option<NodeId>> = vec![None; m];
    for node in sched.node_ids().filter(|node| needed[node.index()]) {
        if let Some(slot) = at.get_mut(ranks[node.index()] as usize) {
            *slot = Some(node);
        }
    }
    let mut readers: Vec<u32> = vec![0; n_tasks];
    for node in at.iter().flatten().filter(|node| node.index() < n_tasks) {
        for dep in data.dependencies(*node) {
            readers[dep.index()] += 1;
        }
    }
    // The results held before each rank.
    let mut before: Vec<W> = Vec::with_capacity(m);
    let mut held = W::default();
    for slot in &at {
        before.push(held);
        let Some(node) = slot.filter(|node| node.index() < n_tasks) else {
            continue;
        };
        if readers[node.index()] > 0 {
            held += weight(node.index());
        }
        for dep in data.dependencies(node) {
            readers[dep.index()] -= 1;
            if readers[dep.index()] == 0 {
                held -= weight(dep.index());
            }
        }
    }
    let mut highest = held;
    for count in before.iter_mut().rev() {
        highest = highest.max(*count);
        *count = highest - *count;
    }
    before
}

/// The order in which one thread runs the needed nodes of `sched` when it
/// always takes the ready node of lowest `priorities` (ties by node id): a
/// rank per scheduling node, `0..m` over the `m` needed nodes (`u32::MAX`
/// for the others): the ranks of a [`Scheduler`](crate::scheduler::Scheduler) as distinct positions (its
/// fastest ready set), and the sequence whose max pressure sets a
/// [`SchedulerConfig::held_limit`](crate::scheduler::SchedulerConfig::held_limit).
///
/// Where `priorities` already put every needed node after its dependencies
/// (a static order does), this is their order; otherwise it is the order a
/// one-thread run would follow.
///
/// **Errors**: [`Error::PriorityCount`](crate::Error::PriorityCount) when
/// `priorities` or `needed` does not have one entry per node of `sched`.
///
/// **Complexity**: O(V + E) where `priorities` are distinct and below the
/// node count plus 64 and already topological; O(V log V + E) otherwise.
pub fn run_order(
    sched: &Topology,
    needed: &[bool],
    priorities: &[u32],
) -> Result<Vec<u32>, crate::Error> {
    let n = sched.node_count();
    for got in [priorities.len(), needed.len()] {
        if got != n {
            return Err(crate::Error::PriorityCount { got, expected: n });
        }
    }
    let mut rank = vec![u32::MAX; n];
    let topological = sched.node_ids().all(|node| {
        !needed[node.index()]
            || sched
                .dependencies(node)
                .iter()
                .all(|dep| (priorities[dep.index()], dep) < (priorities[node.index()], &node))
    });
    if topological {
        for (r, i) in by_priority(needed, priorities).into_iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        return Ok(rank);
    }
    // Simulate one thread: the ready node of lowest priority runs next.
    let mut pending: Vec<u32> = sched
        .node_ids()
        .map(|node| {
            sched
                .dependencies(node)
                .iter()
                .filter(|dep| needed[dep.index()])
                .count() as u32
        })
        .collect();
    let mut ready: BinaryHeap<Reverse<u64>> = sched
        .node_ids()
        .filter(|node| needed[node.index()] && pending[node.index()] == 0)
        .map(|node| Reverse(rank_of(priorities, node)))
        .collect();
    let mut next = 0_u32;
    while let Some(Reverse(key)) = ready.pop() {
        let node = NodeId::from_u32(key as u32);
        rank[node.index()] = next;
        next += 1;
        for &dependent in sched.dependents(node) {
            let i = dependent.index();
            if needed[i] {
                pending[i] -= 1;
                if pending[i] == 0 {
                    ready.push(Reverse(rank_of(priorities, dependent)));
                }
            }
        }
    }
    Ok(rank)
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
pub(crate) fn node_at_rank(nodes: impl Iterator<Item = usize>, ranks: &[u32]) -> Option<Vec<u32>> {
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
