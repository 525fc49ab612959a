//! dask's per-task ordering metrics, exposed for tests that port dask's tests
//! of its private helpers (`ndependencies`, `_connecting_to_roots`); only with
//! the `fuzzing` feature, which this crate's own tests turn on, so that it is
//! no part of the published API.

use graph_core::{Dag, Topology};

use crate::Error;

/// The metrics `Strategy::Dask` sorts by, on a graph without data nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaskMetrics {
    /// dask's `total_dependencies`: 1 for a root, else 1 plus the sum over
    /// dependencies (a count of paths), saturating.
    pub total_dependencies: Vec<u64>,
    /// The number of roots each task descends from (0 for a root):
    /// exact up to 64 roots, a count of root buckets above.
    pub connected_roots: Vec<u32>,
    /// The number of leaves each task feeds (0 for a leaf), likewise.
    pub connected_leaves: Vec<u32>,
    /// dask's `max_dependents`: the most dependents of any connected root
    /// (a root's own count for a root).
    pub max_dependents: Vec<u32>,
}

/// What the exact search found: the lowest max pressure of an order it
/// knows, and whether that is proven optimal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The lowest max pressure found.
    pub max_pressure: u32,
    /// Whether no order holds less.
    pub proven: bool,
}

/// Runs `Auto`'s portfolio, then the exact search from its best order
/// within `budget` (tasks run), as `Auto` and `Strategy::Exhaustive` do
/// with their own budgets. With the same `tie_break` and `is_data` and a
/// budget at least `Auto`'s, it finds at most `Auto`'s max pressure: the
/// search is the same, only longer.
///
/// # Errors
///
/// The graph errors and length errors of [`order`](crate::order()).
pub fn exact_search(
    dag: &impl Dag,
    tie_break: &[u32],
    is_data: &[bool],
    budget: u64,
) -> Result<SearchOutcome, Error> {
    let topology = Topology::checked(dag)?;
    let n = topology.node_count();
    for (what, len) in [("tie_break", tie_break.len()), ("is_data", is_data.len())] {
        if len != 0 && len != n {
            return Err(Error::LengthMismatch {
                what,
                expected: n,
                found: len,
            });
        }
    }
    let tie = crate::unique_ranks(tie_break, n);
    let (max_pressure, proven) = crate::auto::search(
        &topology,
        &tie,
        is_data,
        crate::auto::Measure::Count,
        budget,
    );
    Ok(SearchOutcome {
        max_pressure: max_pressure as u32,
        proven,
    })
}

/// [`exact_search`] in bytes, each result weighing its size (the sizes
/// need not differ): the lowest max bytes found, and whether it is
/// proven optimal.
///
/// # Errors
///
/// The graph errors and length errors of [`order`](crate::order()).
pub fn exact_search_bytes(
    dag: &impl Dag,
    sizes: &[u64],
    budget: u64,
) -> Result<(u64, bool), Error> {
    let topology = Topology::checked(dag)?;
    crate::bytes::check_sizes(&topology, sizes)?;
    let tie = crate::unique_ranks(&[], topology.node_count());
    Ok(crate::auto::search(
        &topology,
        &tie,
        &[],
        crate::auto::Measure::Bytes(sizes),
        budget,
    ))
}

/// Liu's weighted optimum of an in-forest: its priorities and max bytes,
/// or `None` past the segments' budget (or for a graph that is no
/// in-forest).
///
/// # Errors
///
/// The graph errors and length errors of [`order`](crate::order()).
pub fn liu(dag: &impl Dag, sizes: &[u64]) -> Result<Option<(Vec<u32>, u64)>, Error> {
    let topology = Topology::checked(dag)?;
    crate::bytes::check_sizes(&topology, sizes)?;
    if crate::tree::forest_kind(&topology) != crate::tree::Forest::In {
        return Ok(None);
    }
    Ok(crate::tree::liu(&topology, sizes, &[]))
}

/// Computes [`DaskMetrics`] in O(V + E) time and space.
///
/// # Errors
///
/// The graph errors of [`order`](crate::order()).
pub fn dask_metrics(dag: &impl Dag) -> Result<DaskMetrics, Error> {
    let topology = Topology::checked(dag)?;
    let m = crate::dask::plain_metrics(&topology);
    Ok(DaskMetrics {
        total_dependencies: m.total,
        connected_roots: m.root_mask.iter().map(|m| m.count_ones()).collect(),
        connected_leaves: m.leaf_mask.iter().map(|m| m.count_ones()).collect(),
        max_dependents: m.max_dependents,
    })
}
