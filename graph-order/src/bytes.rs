//! Orders judged in bytes: the byte-weighted pressure of an order, a lower
//! bound in bytes, and `Strategy::Greedy`, the order that adds the least
//! memory at each step.
//!
//! A result weighs its size from the step that computes it until the step of
//! its last dependent, as [`crate::diagnostics`] counts results; a result
//! without dependents weighs nothing. So only the sizes of tasks with
//! dependents matter, and where those are all equal, bytes are that size
//! times the count: every strategy then keeps its count-based order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use graph_core::{Dag, NodeId, Shape, Topology};
use rustc_hash::FxHashMap;

use crate::diagnostics::sequence_of;
use crate::tree::weight;
use crate::{Error, Order, check_order};

/// What an order holds in bytes: the byte-weighted pressure series and, per
/// task, the bytes held just before it runs. Every per-task vector is
/// indexed by node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteDiagnostics {
    /// For each step of the order (task at priority `i`), the bytes of the
    /// results held just before that task runs.
    pub pressure: Vec<u64>,
    /// The largest entry of `pressure` (0 for an empty graph).
    pub max_bytes: u64,
    /// Per task: the bytes held just before it runs.
    pub bytes_when_run: Vec<u64>,
}

/// Simulates running `dag` in the order `order`, weighing each result held
/// by its size: the byte-weighted twin of [`diagnostics`](crate::diagnostics()).
///
/// A result is held from the step that computes it until the step of its
/// last dependent; the result of a task without dependents is not held.
///
/// # Arguments
///
/// * `dag`: the graph.
/// * `order`: a priority per node.
/// * `sizes`: the bytes of each node's result.
///
/// # Errors
///
/// [`Error::LengthMismatch`] if `order` or `sizes` is for another number of
/// nodes, [`Error::NotTopological`] if the order runs a task before a
/// dependency, and the graph errors of [`order`](crate::order()).
///
/// # Complexity
///
/// O(V + E) time and O(V) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_order::{Order, byte_diagnostics};
///
/// // A 4 MB producer read by two small readers, both read by a sink.
/// let dag = Topology::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)])?;
/// let sizes = [4_000_000, 8, 8, 8];
/// let order = Order::from_priorities(&dag, vec![0, 1, 2, 3])?;
/// let bytes = byte_diagnostics(&dag, &order, &sizes)?;
/// assert_eq!(bytes.pressure, [0, 4_000_000, 4_000_008, 16]);
/// assert_eq!(bytes.max_bytes, 4_000_008);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn byte_diagnostics(
    dag: &impl Dag,
    order: &Order,
    sizes: &[u64],
) -> Result<ByteDiagnostics, Error> {
    let topology = Topology::checked(dag)?;
    check_order(&topology, order.priorities())?;
    check_sizes(&topology, sizes)?;
    let mut diagnostics = ByteDiagnostics {
        pressure: Vec::with_capacity(topology.node_count()),
        max_bytes: 0,
        bytes_when_run: vec![0; topology.node_count()],
    };
    replay(&topology, order.priorities(), sizes, |node, held| {
        diagnostics.pressure.push(held);
        diagnostics.max_bytes = diagnostics.max_bytes.max(held);
        diagnostics.bytes_when_run[node.index()] = held;
    });
    Ok(diagnostics)
}

/// The most bytes of results `order` holds before any one task runs:
/// [`byte_diagnostics`]'s `max_bytes` without the vectors.
///
/// # Errors
///
/// As [`byte_diagnostics`].
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_order::{Order, max_bytes};
///
/// // Two producers of 100 and 5 bytes feeding one sum: both are held
/// // before the sum, whatever the order.
/// let dag = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let order = Order::from_priorities(&dag, vec![1, 0, 2])?;
/// assert_eq!(max_bytes(&dag, &order, &[100, 5, 1])?, 105);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn max_bytes(dag: &impl Dag, order: &Order, sizes: &[u64]) -> Result<u64, Error> {
    let topology = Topology::checked(dag)?;
    check_order(&topology, order.priorities())?;
    check_sizes(&topology, sizes)?;
    Ok(max_bytes_of(&topology, order.priorities(), sizes))
}

/// A proven lower bound on the max bytes of any order of `dag`: the most
/// bytes any task reads (all its inputs are held before it runs), and on an
/// in-forest (every task has at most one dependent) the exact optimum, which
/// [`Strategy::TreeOptimal`](crate::Strategy::TreeOptimal) attains (Liu's
/// generalized pebbling).
///
/// # Errors
///
/// [`Error::LengthMismatch`] for `sizes` of the wrong length, and the graph
/// errors of [`order`](crate::order()).
///
/// # Complexity
///
/// O(V + E) time; on in-forests O(V log V) more for the optimum in the usual
/// case (a few hill-and-valley segments per subtree), and at most a fixed
/// multiple of that before it settles for the read bound.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
///
/// // Two leaves of 10 and 30 bytes under one task, and a leaf of 20 bytes
/// // beside that task under the sink: the best order holds 40 at most.
/// let dag = Topology::from_edges(5, [(0, 2), (1, 2), (2, 4), (3, 4)])?;
/// let sizes = [10, 30, 5, 20, 0];
/// assert_eq!(graph_order::lower_bound_bytes(&dag, &sizes)?, 40);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn lower_bound_bytes(dag: &impl Dag, sizes: &[u64]) -> Result<u64, Error> {
    let topology = Topology::checked(dag)?;
    check_sizes(&topology, sizes)?;
    Ok(lower_bound_of(&topology, sizes))
}

/// `sizes` must have one entry per node.
pub(crate) fn check_sizes(topology: &Topology, sizes: &[u64]) -> Result<(), Error> {
    if sizes.len() != topology.node_count() {
        return Err(Error::LengthMismatch {
            what: "sizes",
            expected: topology.node_count(),
            found: sizes.len(),
        });
    }
    Ok(())
}

/// [`lower_bound_bytes`] on a checked graph with checked sizes.
pub(crate) fn lower_bound_of(topology: &Topology, sizes: &[u64]) -> u64 {
    if let Some(size) = uniform(topology, sizes) {
        return size.saturating_mul(u64::from(crate::tree::lower_bound(topology)));
    }
    bound_and_forest_order(topology, sizes, &[]).0
}

/// The bound in bytes of a graph whose sizes differ, and on an in-forest
/// the optimal order that attains it (ties by `rank`), found together.
pub(crate) fn bound_and_forest_order(
    topology: &Topology,
    sizes: &[u64],
    rank: &[u32],
) -> (u64, Option<Vec<u32>>) {
    let reads = most_read(topology, sizes);
    if crate::tree::forest_kind(topology) != crate::tree::Forest::In {
        return (reads, None);
    }
    match crate::tree::liu(topology, sizes, rank) {
        Some((priorities, optimum)) => (optimum.max(reads), Some(priorities)),
        None => (reads, None),
    }
}

/// The most bytes any task reads.
fn most_read(topology: &Topology, sizes: &[u64]) -> u64 {
    topology
        .node_ids()
        .map(|node| {
            topology
                .dependencies(node)
                .iter()
                .fold(0_u64, |sum, dep| sum.saturating_add(sizes[dep.index()]))
        })
        .max()
        .unwrap_or(0)
}

/// The size every task with dependents has, if they all have the same (0
/// where no task has dependents): then bytes are that size times the count
/// of results, and counting orders are byte orders.
pub(crate) fn uniform(topology: &Topology, sizes: &[u64]) -> Option<u64> {
    let mut held = topology
        .node_ids()
        .filter(|&node| !topology.dependents(node).is_empty())
        .map(|node| sizes[node.index()]);
    let first = held.next().unwrap_or(0);
    held.all(|size| size == first).then_some(first)
}

/// Replays a valid order, calling `step(node, held)` with the bytes held
/// just before each node runs.
fn replay(
    topology: &Topology,
    priorities: &[u32],
    sizes: &[u64],
    mut step: impl FnMut(NodeId, u64),
) {
    let mut remaining: Vec<u32> = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    // Exact in 128 bits, whatever the sizes; reported saturated.
    let mut held = 0_u128;
    for node in sequence_of(priorities) {
        step(node, u64::try_from(held).unwrap_or(u64::MAX));
        for &dep in topology.dependencies(node) {
            remaining[dep.index()] -= 1;
            if remaining[dep.index()] == 0 {
                held -= u128::from(sizes[dep.index()]);
            }
        }
        held += u128::from(weight(topology, sizes, node));
    }
}

/// The max bytes of a valid order.
pub(crate) fn max_bytes_of(topology: &Topology, priorities: &[u32], sizes: &[u64]) -> u64 {
    let mut max = 0;
    replay(topology, priorities, sizes, |_, held| max = max.max(held));
    max
}

/// `Strategy::Greedy`: the order `base` (priorities of a topological
/// order), except that a ready task that frees at least as many bytes as it
/// adds (its own result, less the inputs it is the last to read) runs at
/// once, the first such by `base`. Returns priorities.
///
/// A task joins the freeing ones when it becomes ready, or later as its
/// inputs lose their other readers (it then frees more), in a heap of base
/// priorities. Otherwise the next task is the first of `base` not yet run,
/// which is ready (its inputs come before it in `base`): a cursor. The whole
/// costs O(V + E + F log F) for F freeing tasks.
pub(crate) fn greedy(topology: &Topology, sizes: &[u64], base: &[u32]) -> Vec<u32> {
    let n = topology.node_count();
    let sequence = sequence_of(base);
    let mut missing: Vec<u32> = topology
        .node_ids()
        .map(|node| topology.dependencies(node).len() as u32)
        .collect();
    let mut remaining: Vec<u32> = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    let mut done = vec![false; n];
    // Per ready task: the bytes its run frees.
    let mut frees = vec![0_u64; n];
    let entry = |node: NodeId| Reverse((base[node.index()], node.as_u32()));
    let mut freeing: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
    let frugal = |node: NodeId, frees: u64| frees >= weight(topology, sizes, node);
    for node in topology.node_ids() {
        if missing[node.index()] == 0 && frugal(node, 0) {
            freeing.push(entry(node));
        }
    }
    let mut priorities = vec![0_u32; n];
    let mut cursor = 0;
    for step in 0..n as u32 {
        let node = loop {
            match freeing.pop() {
                Some(Reverse((_, raw))) if !done[raw as usize] => break NodeId::from_u32(raw),
                Some(_) => continue,
                None => {
                    while done[sequence[cursor].index()] {
                        cursor += 1;
                    }
                    break sequence[cursor];
                }
            }
        };
        let i = node.index();
        debug_assert_eq!(missing[i], 0, "base is a topological order");
        done[i] = true;
        priorities[i] = step;
        for &dep in topology.dependencies(node) {
            let d = dep.index();
            remaining[d] -= 1;
            if remaining[d] == 1 {
                // Its last reader now frees it too.
                let last = topology
                    .dependents(dep)
                    .iter()
                    .copied()
                    .find(|r| !done[r.index()]);
                if let Some(last) = last.filter(|r| missing[r.index()] == 0) {
                    let l = last.index();
                    let was = frugal(last, frees[l]);
                    frees[l] = frees[l].saturating_add(sizes[d]);
                    if !was && frugal(last, frees[l]) {
                        freeing.push(entry(last));
                    }
                }
            }
        }
        for &dependent in topology.dependents(node) {
            let w = dependent.index();
            missing[w] -= 1;
            if missing[w] == 0 {
                frees[w] = topology
                    .dependencies(dependent)
                    .iter()
                    .filter(|dep| remaining[dep.index()] == 1)
                    .fold(0_u64, |sum, dep| sum.saturating_add(sizes[dep.index()]));
                if frugal(dependent, frees[w]) {
                    freeing.push(entry(dependent));
                }
            }
        }
    }
    priorities
}

/// An order's max bytes and max pressure, in one replay.
pub(crate) fn scores_of(topology: &Topology, priorities: &[u32], sizes: &[u64]) -> (u64, u32) {
    let mut remaining: Vec<u32> = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    let (mut bytes, mut count) = (0_u128, 0_u32);
    let (mut max_bytes, mut max_count) = (0_u128, 0_u32);
    for node in sequence_of(priorities) {
        max_bytes = max_bytes.max(bytes);
        max_count = max_count.max(count);
        for &dep in topology.dependencies(node) {
            remaining[dep.index()] -= 1;
            if remaining[dep.index()] == 0 {
                bytes -= u128::from(sizes[dep.index()]);
                count -= 1;
            }
        }
        if !topology.dependents(node).is_empty() {
            bytes += u128::from(sizes[node.index()]);
            count += 1;
        }
    }
    (u64::try_from(max_bytes).unwrap_or(u64::MAX), max_count)
}

/// Sizes for every node from those known: a node without one takes the
/// mean of the known sizes of its group (`groups`, a number per node: the
/// key's name, say; empty for one group), else the mean of all known sizes.
/// `None` when no node has a size: then orders count results.
///
/// # Errors
///
/// [`Error::LengthMismatch`] when `groups` is neither empty nor one entry
/// per size.
///
/// # Example
///
/// ```
/// // Two chunks of 'x' are known; the third takes their mean, and 'y', a
/// // group with nothing known, the mean of all.
/// let sizes = [Some(100), Some(300), None, Some(8), None];
/// let groups = [0, 0, 0, 1, 2];
/// assert_eq!(
///     graph_order::fill_sizes(&sizes, &groups)?,
///     Some(vec![100, 300, 200, 8, 136])
/// );
/// assert_eq!(graph_order::fill_sizes(&[None, None], &[])?, None);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn fill_sizes(sizes: &[Option<u64>], groups: &[u32]) -> Result<Option<Vec<u64>>, Error> {
    fill_sizes_with(sizes, groups, Unseen::Mean)
}

/// What [`fill_sizes_with`] gives a task of a group with no size known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unseen {
    /// The mean of every size known.
    Mean,
    /// The geometric mean of every size known: where the sizes known
    /// differ by orders of magnitude, a group not seen is as likely small
    /// as large, and the mean would weigh it like the largest.
    GeometricMean,
}

/// [`fill_sizes`], a group with no size known taking what `unseen` says.
///
/// # Errors
///
/// As [`fill_sizes`].
///
/// # Example
///
/// ```
/// use graph_order::{Unseen, fill_sizes_with};
///
/// // Groups 0 and 1 known at 1 MiB and 1 byte: group 2 takes 1 KiB.
/// let sizes = [Some(1 << 20), Some(1), None];
/// let filled = fill_sizes_with(&sizes, &[0, 1, 2], Unseen::GeometricMean)?;
/// assert_eq!(filled, Some(vec![1 << 20, 1, 1 << 10]));
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn fill_sizes_with(
    sizes: &[Option<u64>],
    groups: &[u32],
    unseen: Unseen,
) -> Result<Option<Vec<u64>>, Error> {
    if !groups.is_empty() && groups.len() != sizes.len() {
        return Err(Error::LengthMismatch {
            what: "groups",
            expected: sizes.len(),
            found: groups.len(),
        });
    }
    if sizes.iter().all(Option::is_none) {
        return Ok(None);
    }
    let group = |i: usize| groups.get(i).map_or(0, |&g| g as usize);
    let n_groups = groups.iter().max().map_or(1, |&g| g as usize + 1);
    let mut sum = vec![(0_u128, 0_u64); n_groups];
    let mut all = (0_u128, 0_u64);
    let mut log_sum = 0.0_f64;
    for (i, size) in sizes.iter().enumerate() {
        if let Some(size) = *size {
            let g = &mut sum[group(i)];
            *g = (g.0 + u128::from(size), g.1 + 1);
            all = (all.0 + u128::from(size), all.1 + 1);
            log_sum += (size.max(1) as f64).ln();
        }
    }
    let mean = |(total, count): (u128, u64)| {
        (count > 0).then(|| u64::try_from(total / u128::from(count)).unwrap_or(u64::MAX))
    };
    let overall = match unseen {
        Unseen::Mean => mean(all).unwrap_or(0),
        // At least one size is known (all unknown returned above).
        Unseen::GeometricMean => (log_sum / all.1 as f64).exp().round() as u64,
    };
    Ok(Some(
        sizes
            .iter()
            .enumerate()
            .map(|(i, size)| size.unwrap_or_else(|| mean(sum[group(i)]).unwrap_or(overall)))
            .collect(),
    ))
}

/// The sizes of a [`Shape`]'s tasks for [`OrderConfig::sizes`](crate::OrderConfig):
/// where any task has a `size`, every task's, a task without one taking the
/// mean of its group's ([`fill_sizes`], grouped by the key's
/// [name](graph_core::Key::name): `('x', 0, 1)` is of `x`); `None` where
/// no task has one.
///
/// # Example
///
/// ```
/// use graph_core::{Shape, TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task(("x", 0), Term::lit(1))
///     .size(400)
///     .task(("x", 1), Term::lit(2))
///     .task("total", Term::call("add", [Term::key(("x", 0)), Term::key(("x", 1))]))
///     .size(8)
///     .build()?;
/// let shape = Shape::of(&graph)?;
/// assert_eq!(graph_order::shape_sizes(&shape), Some(vec![400, 400, 8]));
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn shape_sizes(shape: &Shape) -> Option<Vec<u64>> {
    let known = shape.sizes();
    if known.is_empty() {
        return None;
    }
    // Tasks grouped by the name of their key, groups numbered in the order
    // first met.
    let mut groups_of: FxHashMap<Option<u32>, u32> = FxHashMap::default();
    let groups: Vec<u32> = shape
        .name_numbers()
        .map(|name| {
            let next = groups_of.len() as u32;
            *groups_of.entry(name).or_insert(next)
        })
        .collect();
    // One group per task at most, and one size per task: lengths agree.
    fill_sizes(known, &groups).ok().flatten()
}
