//! `Strategy::Auto`'s portfolio: every heuristic order on rayon's pool,
//! scored by max pressure, stopping early once one meets the lower bound;
//! then, on small graphs, the exact search from the best of them.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use graph_core::{Dag, Topology};

use crate::{Strategy, dask, diagnostics, exact, tree};

/// From this many tasks up, an early stop may cancel `Dask` (see
/// [`portfolio`]). Below it `Dask` takes a few milliseconds, and `Auto`
/// keeps exactly the order a full run of every candidate would keep.
pub(crate) const EARLY_STOP_MIN_TASKS: usize = 1 << 16;

/// The candidates by rank at the lower bound below [`EARLY_STOP_MIN_TASKS`]
/// tasks: a full run's preference on every tie.
const RANK_FULL: [Strategy; 4] = [
    Strategy::Dask,
    Strategy::TreeOptimal,
    Strategy::DepthFirst,
    Strategy::BreadthFirst,
];

/// The candidates by rank at the lower bound from [`EARLY_STOP_MIN_TASKS`]
/// tasks up: `Dask`, the slowest, last, so that it can be cancelled.
const RANK_LARGE: [Strategy; 4] = [
    Strategy::TreeOptimal,
    Strategy::DepthFirst,
    Strategy::BreadthFirst,
    Strategy::Dask,
];

/// The best heuristic order of a graph.
pub(crate) struct Best {
    pub(crate) priorities: Vec<u32>,
    pub(crate) strategy: Strategy,
    /// Its max pressure.
    pub(crate) pressure: u32,
    /// [`tree::lower_bound`] of the graph.
    pub(crate) lower: u32,
}

/// Runs `Dask`, `TreeOptimal`, `DepthFirst` and `BreadthFirst` in parallel
/// and keeps the one with the lowest max pressure.
///
/// The choice depends on the scores alone, never on timing. A full run keeps
/// the first lowest in the order `Dask`, `TreeOptimal`, `DepthFirst`,
/// `BreadthFirst`. Here the candidates also have a rank at the lower bound:
/// that same order on graphs below [`EARLY_STOP_MIN_TASKS`], and `Dask` last
/// from there up. A candidate that meets the bound cannot be beaten, so it
/// wins unless one of better rank meets the bound too; candidates of worse
/// rank are skipped if not started, and `Dask` stops within a few thousand
/// tasks. Whatever runs in parallel, the winner is the best-ranked candidate
/// that meets the bound, and if none does, nothing was skipped and the full
/// run's rule picks. So the order differs from a full run's in one case
/// only: on a graph of at least [`EARLY_STOP_MIN_TASKS`] tasks where `Dask`
/// and another candidate both meet the bound, the other is kept, with the
/// same (optimal) max pressure.
pub(crate) fn portfolio(topology: &Topology, tie: &[u32], is_data: &[bool]) -> Best {
    let lower = tree::lower_bound(topology);
    let ranked = if topology.node_count() >= EARLY_STOP_MIN_TASKS {
        RANK_LARGE
    } else {
        RANK_FULL
    };
    let rank = |strategy: Strategy| ranked.iter().position(|&s| s == strategy);
    // The best rank of a candidate known to meet the bound.
    let met = AtomicUsize::new(usize::MAX);
    let beaten = |strategy: Strategy| rank(strategy).is_some_and(|r| met.load(Relaxed) < r);
    let run = |strategy: Strategy, make: &(dyn Fn() -> Option<Vec<u32>> + Sync)| {
        if beaten(strategy) {
            return None;
        }
        let priorities = make()?;
        let pressure = diagnostics::max_pressure_of(topology, &priorities);
        if pressure <= lower
            && let Some(r) = rank(strategy)
        {
            met.fetch_min(r, Relaxed);
        }
        Some((pressure, priorities))
    };
    let tree = || {
        run(Strategy::TreeOptimal, &|| {
            Some(tree::tree_optimal(topology, tie))
        })
    };
    let dfs = || {
        run(Strategy::DepthFirst, &|| {
            Some(tree::depth_first(topology, tie))
        })
    };
    let bfs = || {
        run(Strategy::BreadthFirst, &|| {
            Some(tree::breadth_first(topology))
        })
    };
    let dask = || {
        run(Strategy::Dask, &|| {
            dask::dask_unless(topology, tie, is_data, &|| beaten(Strategy::Dask))
        })
    };
    // The cheap candidates go first on this thread, in rank order, while
    // another thread takes `Dask` (the oldest job, which a thief steals
    // first); with more threads they all run at once.
    let ((tree, (dfs, bfs)), dask) =
        rayon::join(|| rayon::join(tree, || rayon::join(dfs, bfs)), dask);
    let winner = met.into_inner();
    let mut best: Option<(u32, Vec<u32>, Strategy)> = None;
    for (strategy, result) in [
        (Strategy::Dask, dask),
        (Strategy::TreeOptimal, tree),
        (Strategy::DepthFirst, dfs),
        (Strategy::BreadthFirst, bfs),
    ] {
        let Some((pressure, priorities)) = result else {
            continue;
        };
        let wins = match &best {
            _ if winner != usize::MAX => rank(strategy) == Some(winner),
            None => true,
            Some((p, ..)) => pressure < *p,
        };
        if wins {
            best = Some((pressure, priorities, strategy));
        }
    }
    // Some candidate always finishes: the winner, or all of them.
    let (pressure, priorities, strategy) = best.unwrap_or_default();
    Best {
        priorities,
        strategy,
        pressure,
        lower,
    }
}

/// `Auto` (`budget` = [`exact::AUTO_BUDGET`]) and `Exhaustive` (a larger
/// budget): the portfolio's best, then on graphs of at most
/// [`exact::MAX_NODES`] tasks the exact search for a better order.
pub(crate) fn auto(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    budget: u64,
) -> (Vec<u32>, Strategy) {
    let best = portfolio(topology, tie, is_data);
    if best.pressure > best.lower && topology.node_count() <= exact::MAX_NODES {
        let outcome = exact::search(topology, &best.priorities, best.pressure, budget);
        if let Some(better) = outcome.better {
            return (better, Strategy::Exhaustive);
        }
    }
    (best.priorities, best.strategy)
}

#[cfg(feature = "fuzzing")]
/// The lowest max pressure the exact search finds within `budget` from the
/// portfolio's best order, and whether it proves it optimal.
pub(crate) fn search(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    budget: u64,
) -> (u32, bool) {
    let best = portfolio(topology, tie, is_data);
    if best.pressure <= best.lower {
        return (best.pressure, true);
    }
    let outcome = exact::search(topology, &best.priorities, best.pressure, budget);
    (outcome.value, outcome.proven)
}
