//! `Strategy::Auto`'s portfolio: every heuristic order on rayon's pool,
//! scored by max pressure, stopping early once one meets the lower bound;
//! then, on small graphs, the exact search from the best of them.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use graph_core::{Dag, Topology};

use crate::{Strategy, bytes, dask, diagnostics, exact, tree};

/// From this many tasks up, an early stop may cancel `Dask` (see
/// [`portfolio`]). Below it `Dask` takes a few milliseconds, and `Auto`
/// keeps exactly the order a full run of every candidate would keep.
pub(crate) const EARLY_STOP_MIN_TASKS: usize = 1 << 16;

/// The candidates by rank at the lower bound below [`EARLY_STOP_MIN_TASKS`]
/// tasks: a full run's preference on every tie.
const RANK_FULL: [Strategy; 5] = [
    Strategy::Dask,
    Strategy::TreeOptimal,
    Strategy::DepthFirst,
    Strategy::BreadthFirst,
    Strategy::Greedy,
];

/// The candidates by rank at the lower bound from [`EARLY_STOP_MIN_TASKS`]
/// tasks up: `Dask`, the slowest, last, so that it can be cancelled.
const RANK_LARGE: [Strategy; 5] = [
    Strategy::TreeOptimal,
    Strategy::DepthFirst,
    Strategy::BreadthFirst,
    Strategy::Greedy,
    Strategy::Dask,
];

/// What `Auto` judges an order by.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Measure<'a> {
    /// The results held (max pressure).
    Count,
    /// The bytes held, each result weighing its size, then the results
    /// held: for sizes that are not all alike.
    Bytes(&'a [u64]),
}

impl<'a> Measure<'a> {
    /// An order's score, lowest best: `(max pressure, 0)` or `(max bytes,
    /// max pressure)`.
    fn score(self, topology: &Topology, priorities: &[u32]) -> (u64, u32) {
        match self {
            Measure::Count => (
                u64::from(diagnostics::max_pressure_of(topology, priorities)),
                0,
            ),
            Measure::Bytes(sizes) => bytes::scores_of(topology, priorities, sizes),
        }
    }

    fn sizes(self) -> Option<&'a [u64]> {
        match self {
            Measure::Count => None,
            Measure::Bytes(sizes) => Some(sizes),
        }
    }
}

/// The best heuristic order of a graph.
pub(crate) struct Best {
    pub(crate) priorities: Vec<u32>,
    pub(crate) strategy: Strategy,
    /// Its score ([`Measure::score`]).
    pub(crate) score: (u64, u32),
    /// The measure's lower bound for the graph.
    pub(crate) lower: u64,
}

/// Runs `Dask`, `TreeOptimal`, `DepthFirst` and `BreadthFirst` in parallel
/// (and, in bytes, `Greedy`, with `TreeOptimal` weighing sizes) and keeps
/// the one with the lowest score.
///
/// The choice depends on the scores alone, never on timing. A full run keeps
/// the first lowest in the order `Dask`, `TreeOptimal`, `DepthFirst`,
/// `BreadthFirst`, `Greedy`. Here the candidates also have a rank at the
/// lower bound: that same order on graphs below [`EARLY_STOP_MIN_TASKS`],
/// and `Dask` last from there up. A candidate that meets the bound (in
/// bytes, whatever its count) cannot be beaten, so it wins unless one of
/// better rank meets the bound too; candidates of worse rank are skipped if
/// not started, and `Dask` stops within a few thousand tasks. Whatever runs
/// in parallel, the winner is the best-ranked candidate that meets the
/// bound, and if none does, nothing was skipped and the full run's rule
/// picks. So the order differs from a full run's in one case only: on a
/// graph of at least [`EARLY_STOP_MIN_TASKS`] tasks where `Dask` and
/// another candidate both meet the bound, the other is kept, with the same
/// (optimal) max pressure or max bytes.
///
/// `stop` is asked before and after each candidate and inside `Dask`, and
/// once it says yes it must keep saying so (`order_unless` latches it): the
/// candidates not finished then give nothing, and what is returned is for
/// the caller to throw away.
pub(crate) fn portfolio(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    measure: Measure<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Best {
    // The bound no order's first score is below; in bytes on an in-forest,
    // Liu's optimum, found with its order (the tree candidate's).
    let (lower, forest_order) = match measure {
        Measure::Count => (u64::from(tree::lower_bound(topology)), None),
        Measure::Bytes(sizes) => bytes::bound_and_forest_order(topology, sizes, tie),
    };
    let forest_order = std::sync::Mutex::new(forest_order);
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
        if beaten(strategy) || stop() {
            return None;
        }
        let priorities = make()?;
        // Scoring is a pass over the whole graph: not for an order given up.
        if stop() {
            return None;
        }
        let score = measure.score(topology, &priorities);
        if score.0 <= lower
            && let Some(r) = rank(strategy)
        {
            met.fetch_min(r, Relaxed);
        }
        Some((score, priorities))
    };
    let tree = || {
        run(Strategy::TreeOptimal, &|| {
            let known = forest_order
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take();
            Some(match (known, measure) {
                (Some(priorities), _) => priorities,
                (None, Measure::Count) => tree::tree_optimal(topology, tie),
                (None, Measure::Bytes(sizes)) => tree::tree_optimal_bytes(topology, sizes, tie),
            })
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
    let greedy = || {
        let sizes = measure.sizes()?;
        run(Strategy::Greedy, &|| {
            Some(bytes::greedy(
                topology,
                sizes,
                &tree::depth_first(topology, tie),
            ))
        })
    };
    let dask = || {
        run(Strategy::Dask, &|| {
            dask::dask_unless(topology, tie, is_data, &|| beaten(Strategy::Dask) || stop())
        })
    };
    // The cheap candidates go first on this thread, in rank order, while
    // another thread takes `Dask` (the oldest job, which a thief steals
    // first); with more threads they all run at once.
    let ((tree, (dfs, (bfs, greedy))), dask) = rayon::join(
        || rayon::join(tree, || rayon::join(dfs, || rayon::join(bfs, greedy))),
        dask,
    );
    let winner = met.into_inner();
    let mut best: Option<((u64, u32), Vec<u32>, Strategy)> = None;
    for (strategy, result) in [
        (Strategy::Dask, dask),
        (Strategy::TreeOptimal, tree),
        (Strategy::DepthFirst, dfs),
        (Strategy::BreadthFirst, bfs),
        (Strategy::Greedy, greedy),
    ] {
        let Some((score, priorities)) = result else {
            continue;
        };
        let wins = match &best {
            _ if winner != usize::MAX => rank(strategy) == Some(winner),
            None => true,
            Some((p, ..)) => score < *p,
        };
        if wins {
            best = Some((score, priorities, strategy));
        }
    }
    // Some candidate always finishes: the winner, or all of them.
    let (score, priorities, strategy) = best.unwrap_or_default();
    Best {
        priorities,
        strategy,
        score,
        lower,
    }
}

/// The best heuristic order: the portfolio's, and in bytes, where it is
/// above the bound, the portfolio's on the graph without its gathering sink
/// ([`without_gathers`]) where that holds less. `stop` as for
/// [`portfolio`].
fn best_heuristic(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    measure: Measure<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Best {
    let best = portfolio(topology, tie, is_data, measure, stop);
    if let (Measure::Bytes(sizes), true) = (measure, best.score.0 > best.lower)
        && !stop()
        && let Some(gathered) = without_gathers(topology, tie, is_data, sizes, best.lower, stop)
        && gathered.score < best.score
    {
        return gathered;
    }
    best
}

/// `Auto` (`budget` = [`exact::AUTO_BUDGET`]) and `Exhaustive` (a larger
/// budget): the best heuristic order, then on graphs of at most
/// [`exact::MAX_NODES`] tasks the exact search for a better one. `stop` as
/// for [`portfolio`]; the search (bounded by its budget) is skipped once it
/// has said yes.
pub(crate) fn auto(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    measure: Measure<'_>,
    budget: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> (Vec<u32>, Strategy) {
    let best = best_heuristic(topology, tie, is_data, measure, stop);
    if stop() {
        return (best.priorities, best.strategy);
    }
    match search_from(topology, &best, measure, budget).and_then(|outcome| outcome.better) {
        Some(better) => (better, Strategy::Exhaustive),
        None => (best.priorities, best.strategy),
    }
}

/// The exact search from `best`, on graphs of at most [`exact::MAX_NODES`]
/// tasks whose best order is above the bound; `None` elsewhere.
fn search_from(
    topology: &Topology,
    best: &Best,
    measure: Measure<'_>,
    budget: u64,
) -> Option<exact::Outcome> {
    (best.score.0 > best.lower && topology.node_count() <= exact::MAX_NODES).then(|| {
        exact::search(
            topology,
            &best.priorities,
            measure.sizes(),
            best.score.0,
            budget,
        )
    })
}

#[cfg(feature = "fuzzing")]
/// The lowest score the exact search finds within `budget` from the best
/// heuristic order, and whether it proves it optimal (`Auto`'s search, with
/// another budget).
pub(crate) fn search(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    measure: Measure<'_>,
    budget: u64,
) -> (u64, bool) {
    let best = best_heuristic(topology, tie, is_data, measure, &|| false);
    match search_from(topology, &best, measure, budget) {
        Some(outcome) => (outcome.value, outcome.proven),
        // At the bound: proven. Above it on a large graph: not searched.
        None => (best.score.0, best.score.0 <= best.lower),
    }
}

/// A sink that reads at least this many results gathers them (dask's
/// `finalize` of a computation's outputs).
const GATHER_MIN_INPUTS: usize = 16;

/// In bytes, the portfolio's best order of the graph without its one
/// gathering sink, which then runs last: a gatherer's inputs are held until it runs,
/// whenever the rest runs, and left in, it pulls every order towards
/// finishing one output after another whatever each holds meanwhile. The
/// score is the whole graph's, and `lower` its bound. `None` where not
/// exactly one sink gathers. `stop` as for [`portfolio`].
fn without_gathers(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    sizes: &[u64],
    lower: u64,
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Best> {
    let n = topology.node_count();
    let gathers = |node: graph_core::NodeId| {
        topology.dependents(node).is_empty()
            && topology.dependencies(node).len() >= GATHER_MIN_INPUTS
    };
    // One gatherer, as `dask.compute` makes (a shuffle's many sinks that each
    // gather their pieces are the graph's own work).
    if topology.node_ids().filter(|&node| gathers(node)).count() != 1 {
        return None;
    }
    const GONE: u32 = u32::MAX;
    let mut local = vec![GONE; n];
    let mut kept = Vec::with_capacity(n);
    let mut last = Vec::new();
    for node in topology.node_ids() {
        if gathers(node) {
            last.push(node);
        } else {
            local[node.index()] = kept.len() as u32;
            kept.push(node);
        }
    }
    let mut offsets = Vec::with_capacity(kept.len() + 1);
    offsets.push(0_u32);
    let mut targets = Vec::new();
    for &node in &kept {
        targets.extend(topology.dependencies(node).iter().map(|d| local[d.index()]));
        offsets.push(targets.len() as u32);
    }
    // A subgraph of a checked graph: acyclic, every target in range.
    let sub = Topology::from_dependency_rows(offsets, targets).ok()?;
    let pick = |values: &[u32]| -> Vec<u32> { kept.iter().map(|k| values[k.index()]).collect() };
    let sub_tie = crate::unique_ranks(&pick(tie), kept.len());
    let sub_sizes: Vec<u64> = kept.iter().map(|k| sizes[k.index()]).collect();
    let sub_data: Vec<bool> = if is_data.is_empty() {
        Vec::new()
    } else {
        kept.iter().map(|k| is_data[k.index()]).collect()
    };
    let sub_best = portfolio(&sub, &sub_tie, &sub_data, Measure::Bytes(&sub_sizes), stop);
    if stop() {
        return None;
    }
    let mut priorities = vec![0_u32; n];
    for (i, &node) in kept.iter().enumerate() {
        priorities[node.index()] = sub_best.priorities[i];
    }
    last.sort_unstable_by_key(|node| tie[node.index()]);
    for (i, node) in last.iter().enumerate() {
        priorities[node.index()] = (kept.len() + i) as u32;
    }
    let measure = Measure::Bytes(sizes);
    Some(Best {
        score: measure.score(topology, &priorities),
        priorities,
        strategy: sub_best.strategy,
        lower,
    })
}
