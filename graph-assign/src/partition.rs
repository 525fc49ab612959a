//! The default placement: a multilevel partitioner seeded by a
//! locality-keeping order.

use graph_core::{Dag, Topology};

use crate::inputs::{check_len, check_sizes, dependency_post_order, loads, order_by_priority};
use crate::level::{Level, cut_weight};
use crate::refine::Refiner;
use crate::seed::{bfs_order, blocks, grow};
use crate::{Assignment, Error, Workers};

/// The balance bound [`assign`] keeps by default: no worker above 3% over
/// its fair share, as METIS and KaHIP are usually run.
pub const DEFAULT_MAX_IMBALANCE: f64 = 1.03;

/// The options of [`assign_with`]. `Default` gives what [`assign`] uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AssignConfig<'a> {
    /// Bytes of each task's result; a cut edge costs its producer's size.
    /// `None`: every edge costs 1, and the cut is an edge count.
    pub sizes: Option<&'a [u64]>,
    /// Seconds of each task, the load to balance. `None`: 1 per task.
    pub costs: Option<&'a [f64]>,
    /// A static order to cut into blocks, as a priority per task (lower
    /// first; for example `graph-order`'s). `None`: a depth-first post-order
    /// through dependencies from the sinks.
    pub priorities: Option<&'a [u32]>,
    /// The largest load any worker may get, over its fair share. Where single
    /// tasks are too heavy for that (few tasks, or a very expensive one), a
    /// worker may instead exceed its share by up to one heaviest task.
    pub max_imbalance: f64,
    /// The most greedy refinement passes per level (the coarsest level,
    /// which is small, always gets more); each pass is O(V + E) of that
    /// level, and refinement stops early once a pass moves fewer than one
    /// node in a thousand. 0 turns refinement off, the Fiduccia-Mattheyses
    /// searches included (the partition is then the coarse one, only
    /// rebalanced on the way down).
    pub refine_passes: usize,
}

impl Default for AssignConfig<'_> {
    fn default() -> Self {
        AssignConfig {
            sizes: None,
            costs: None,
            priorities: None,
            max_imbalance: DEFAULT_MAX_IMBALANCE,
            refine_passes: 8,
        }
    }
}

/// Places `dag` on `workers` with few bytes crossing between workers and
/// every load within 3% of its fair share: the default placement.
///
/// Mars' `GraphAssigner` spreads only the start operands, by breadth-first
/// search, and lets every other task follow its inputs; dask.distributed
/// places each task as it becomes ready ([`decide_worker`](crate::decide_worker)).
/// Neither looks at the cut as a whole, and on 2-D array graphs Mars' cut is
/// several times a graph partitioner's. This is a multilevel partitioner in
/// near-linear time, in the manner of METIS and KaMinPar:
///
/// 1. Order the tasks so that work feeding the same result is adjacent: the
///    given priorities, or a depth-first post-order through dependencies.
/// 2. Coarsen: group tasks into clusters by size-capped label propagation
///    (a task joins the neighbouring cluster it has the heaviest edges to,
///    ties to the lighter cluster), contract, and repeat; the cap grows
///    fourfold per level up to an eighth of a worker's share, so about 8k
///    clusters are left.
/// 3. On the coarsest graph, try contiguous blocks of the order (each
///    worker's block as heavy as its share of the slots), blocks of
///    breadth-first layers, and regions grown by greedy graph growing from
///    64 seeds, under two balance regimes (a worker may exceed its share by
///    one coarsest node, or by half of one); refine each, and give the best
///    eight of each regime Fiduccia-Mattheyses searches (below).
/// 4. On the way back to the tasks, at every level: move nodes out of
///    workers above that level's limit (a share plus one node of the level,
///    or half of one, so the bound tightens as nodes get lighter; on the
///    tasks, the promised bound), cheapest moves first; refine the
///    boundaries greedily (move a node to the neighbouring worker it is most
///    connected to when that lowers the cut, or keeps it and evens the
///    loads); move every stray piece of a worker's tasks, cut off from the
///    rest of them, to the neighbouring worker it is most connected to; then
///    run k-way Fiduccia-Mattheyses searches: from each boundary node, move
///    the node with the best gain, one after the other, even through moves
///    that raise the cut, and keep the best prefix of the moves. The best
///    four coarse starts (alternating regimes) go down in step; a level with
///    n nodes and e adjacency entries keeps only the lowest-cut
///    1 500 000 / (n + e) of them, so small graphs take all four to the
///    tasks and large ones the best one through their fine levels. Search
///    rounds stop once they gain less than a thousandth of the cut.
/// 5. Graphs up to 25 000 tasks are partitioned a second time from a
///    topological order (a different coarse hierarchy); the lower cut wins.
///
/// Differences from Mars and dask: the whole graph is placed up front with a
/// balance bound, where Mars balances only start operands and dask only
/// occupancy at the time of each decision. Differences from METIS: no random
/// choices (every tie goes to the lower index, so the result is
/// deterministic), label propagation instead of matching to coarsen, and
/// localized searches with a work budget instead of full passes, which keeps
/// each level linear.
///
/// # Arguments
///
/// - `dag`: the graph.
/// - `workers`: the workers and their slots.
/// - `sizes`: bytes of each task's result (see [`sizes_of`](crate::sizes_of)); `None`
///   minimizes the number of cut edges.
/// - `costs`: seconds of each task (see [`costs_of`](crate::costs_of)); `None` balances
///   task counts.
///
/// # Returns
///
/// The worker of every task. Every load is at most
/// `max(1.03 × share, share + heaviest task)`, so the imbalance is at most
/// 1.03 unless single tasks are too heavy for it (for example, fewer tasks
/// than workers).
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG (a cycle, a task depending on
/// itself, a dependency out of range), [`Error::LengthMismatch`] if `sizes`
/// or `costs` is not one per task, [`Error::BadCost`] for a negative or
/// non-finite cost.
///
/// # Complexity
///
/// O(p · (V + E)) time for p refinement passes per level (8 by default;
/// every level is at least 10% smaller than the one before, so their sum is
/// a small multiple of the finest): the searches of a round scan at most 8
/// times a level's entries, and a level gets at most 4 rounds. Plus the
/// starts on the coarsest graph of about 8k nodes (bounded by 4 million
/// entries), O(V log V) for the queues of the searches, and O(V + E)
/// auxiliary space for the undirected levels.
///
/// # Example
///
/// ```
/// use graph_assign::{Metrics, Workers, assign, assign_mars};
/// use graph_core::generate;
///
/// let graph = generate::array_sum_transpose(20);
/// let dag = graph.topology()?;
/// let workers = Workers::new(4)?;
/// let ours = Metrics::of(dag, &workers, &assign(dag, &workers, None, None)?, None, None)?;
/// let mars = Metrics::of(dag, &workers, &assign_mars(dag, &workers)?, None, None)?;
/// assert!(ours.imbalance <= 1.03);
/// assert!(ours.edge_cut * 3 < mars.edge_cut);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign(
    dag: &impl Dag,
    workers: &Workers,
    sizes: Option<&[u64]>,
    costs: Option<&[f64]>,
) -> Result<Assignment, Error> {
    let config = AssignConfig {
        sizes,
        costs,
        ..AssignConfig::default()
    };
    assign_with(dag, workers, &config)
}

/// [`assign`] with every option: a static order, the balance bound and the
/// number of refinement passes.
///
/// Graphs small enough for a second try (see [`assign`], step 5) are also
/// partitioned from a topological order, whatever the priorities.
///
/// # Errors
///
/// As [`assign`], plus [`Error::LengthMismatch`] for priorities that are not
/// one per task and [`Error::BadImbalance`] for a bound below 1.
///
/// # Complexity
///
/// O(V log V) more time than [`assign`] when priorities are given (they are
/// sorted).
///
/// # Example
///
/// ```
/// use graph_assign::{AssignConfig, Workers, assign_with};
/// use graph_core::Topology;
///
/// // A chain of 4, ordered by the given priorities: two blocks of two.
/// let dag = Topology::from_edges(4, [(0, 1), (1, 2), (2, 3)])?;
/// let config = AssignConfig { priorities: Some(&[0, 1, 2, 3]), ..AssignConfig::default() };
/// let assignment = assign_with(&dag, &Workers::new(2)?, &config)?;
/// assert_eq!(assignment.as_slice(), [0, 0, 1, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_with(
    dag: &impl Dag,
    workers: &Workers,
    config: &AssignConfig<'_>,
) -> Result<Assignment, Error> {
    partition(&*Topology::checked(dag)?, workers, config)
        .map(|res| Assignment::new_unchecked(res, workers.count()))
}

fn partition(
    dag: &Topology,
    workers: &Workers,
    config: &AssignConfig<'_>,
) -> Result<Vec<u32>, Error> {
    let n_nodes = dag.node_count();
    check_sizes(config.sizes, n_nodes)?;
    let mut weights = loads(config.costs, n_nodes)?;
    if let Some(priorities) = config.priorities {
        check_len("priorities", priorities.len(), n_nodes)?;
    }
    // Also rejects NaN.
    if config.max_imbalance.is_nan() || config.max_imbalance < 1.0 {
        return Err(Error::BadImbalance {
            bound: config.max_imbalance,
        });
    }
    let n_workers = workers.count();
    if n_workers == 1 || n_nodes == 0 {
        return Ok(vec![0; n_nodes]);
    }
    if n_workers > n_nodes {
        // More workers than tasks: every worker's share is below one task,
        // so the balance bound lets no worker have two, and every edge is
        // cut whatever is done. Each task goes to a worker of its own, the
        // `n_nodes` with the most slots (ties to the lower index), in the
        // locality order: work in the number of tasks, not of workers.
        let mut by_slots: Vec<usize> = (0..n_workers).collect();
        by_slots.sort_by_key(|&w| (std::cmp::Reverse(workers.slots(w)), w));
        by_slots.truncate(n_nodes);
        by_slots.sort_unstable();
        let mut res = vec![0_u32; n_nodes];
        for (&node, &worker) in dependency_post_order(dag).iter().zip(&by_slots) {
            res[node as usize] = worker as u32;
        }
        return Ok(res);
    }
    let mut total: f64 = weights.iter().sum();
    if total <= 0.0 {
        // Nothing costs anything: balance task counts instead.
        weights.fill(1.0);
        total = n_nodes as f64;
    }
    let targets: Vec<f64> = workers.shares().iter().map(|s| s * total).collect();
    // Small graphs are partitioned once per order, from different coarse
    // hierarchies, and the lowest cut wins (ties to the first order).
    let n_orders = (ORDER_WORK / n_nodes).clamp(1, ORDERS);
    let mut best: Option<(u64, Vec<u32>)> = None;
    for i in 0..n_orders {
        let order = match (config.priorities, i) {
            (Some(priorities), 0) => order_by_priority(priorities),
            (None, 0) => dependency_post_order(dag),
            _ => dag
                .topological_order()
                .iter()
                .map(|&node| node.as_u32())
                .collect(),
        };
        let (cut, part) = multilevel(dag, &order, &weights, &targets, config);
        if best.as_ref().is_none_or(|(best_cut, _)| cut < *best_cut) {
            let mut res = vec![0_u32; n_nodes];
            for (&node, &worker) in order.iter().zip(&part) {
                res[node as usize] = worker;
            }
            best = Some((cut, res));
        }
    }
    Ok(best.expect("at least one order").1)
}

/// The multilevel partitioner on the tasks numbered by `order`: the cut
/// weight and the worker of each, in that order.
fn multilevel(
    dag: &Topology,
    order: &[u32],
    weights: &[f64],
    targets: &[f64],
    config: &AssignConfig<'_>,
) -> (u64, Vec<u32>) {
    let n_nodes = order.len();
    let n_workers = targets.len();
    let total: f64 = targets.iter().sum();
    let heaviest = weights.iter().copied().fold(0.0, f64::max);
    // At each level a worker may exceed its share by the balance slack or
    // by `slack` times the heaviest node of that level, whichever is more:
    // coarse levels are looser, and the finest level (always with a slack
    // of 1) keeps the promised bound.
    let limits_for = |heaviest: f64, slack: f64| -> Vec<f64> {
        targets
            .iter()
            .map(|t| (t * config.max_imbalance).max(t + heaviest * slack))
            .collect()
    };
    // Coarsen until about COARSEST_PER_WORKER clusters per worker are left.
    let cap = (total / (n_workers * COARSEST_PER_WORKER) as f64).max(heaviest);

    let mut levels = vec![Level::from_dag(dag, order, config.sizes, weights)];
    let mut maps: Vec<Vec<u32>> = Vec::new();
    // Clusters may grow by a factor of GROWTH per level, up to `cap`: small
    // clusters first keep them compact, where one capped round of label
    // propagation would string them along chains.
    let mean = total / n_nodes as f64;
    let mut level_cap = (mean * GROWTH * 1.0).max(heaviest).min(cap);
    loop {
        let level = levels.last().expect("the finest level is there");
        // On the tasks, where clusters stay small, one round fills them.
        let rounds = if levels.len() == 1 { 1 } else { CLUSTER_ROUNDS };
        let (cluster, n_clusters) = level.cluster(level_cap, rounds);
        // Stop when clustering no longer shrinks the graph much.
        let stalled = n_clusters as f64 > 0.9 * level.node_count() as f64;
        if stalled && level_cap >= cap {
            break;
        }
        level_cap = (level_cap * GROWTH).min(cap);
        if stalled {
            continue;
        }
        let coarse = level.contract(&cluster, n_clusters);
        maps.push(cluster);
        levels.push(coarse);
    }

    // Without refinement passes, no searches either.
    let fm_rounds = if config.refine_passes > 0 {
        FM_ROUNDS
    } else {
        0
    };
    let coarsest = levels.last().expect("the finest level is there");
    // Two balance regimes for the coarse levels: as loose as one of their
    // nodes (freedom to find good shapes), and half as loose (less to repair
    // on the way down). Where the coarsest level is the tasks themselves,
    // only the promised bound.
    let slacks: &[f64] = if levels.len() > 1 {
        &[1.0, TIGHT_SLACK]
    } else {
        &[1.0]
    };
    let mut refiner = Refiner::new(limits_for(coarsest.heaviest(), 1.0), n_workers);
    // Several starts on the coarsest graph (it is small): blocks of the
    // order, breadth-first layers from a node far from the first one
    // (strips, which suit grids and chains), and regions grown from seeds
    // spread over the order. Each is refined there; the blocks are kept as a
    // fallback, the others only if they keep the balance.
    let n_coarsest = coarsest.node_count();
    let far = bfs_order(coarsest, 0).last().map_or(0, |&n| n as usize);
    // Where coarsening stalled early (star-like graphs), the coarsest graph
    // is not small: fewer grown starts keep their cost near one pass.
    let affordable = COARSEST_BUDGET / (coarsest.entry_count() + n_coarsest).max(1);
    let n_seeds = n_coarsest.min(GROWN_STARTS).min(affordable.max(1));
    let starts: Vec<Vec<u32>> = [
        blocks(0..n_coarsest as u32, &coarsest.node_weights, targets),
        blocks(bfs_order(coarsest, far), &coarsest.node_weights, targets),
    ]
    .into_iter()
    .chain((0..n_seeds).map(|i| grow(coarsest, targets, i * n_coarsest / n_seeds)))
    .collect();
    // For each regime, the starts refined under its limits, best first;
    // the best few get the searches.
    let mut candidates_per_slack: Vec<Vec<(u64, usize, Vec<u32>)>> = Vec::new();
    for &slack in slacks {
        refiner.limits = limits_for(coarsest.heaviest(), slack);
        let mut candidates: Vec<(u64, usize, Vec<u32>)> = Vec::new();
        for (i, start) in starts.iter().enumerate() {
            let mut start = start.clone();
            refiner.refine(coarsest, &mut start, COARSEST_PASSES, 0);
            if i == 0 || refiner.fits(coarsest, &start) {
                candidates.push((cut_weight(coarsest, &start), i, start));
            }
        }
        candidates.sort_unstable_by_key(|&(cut, i, _)| (cut, i));
        candidates.truncate(FM_STARTS);
        for (cut, _, start) in &mut candidates {
            refiner.refine(coarsest, start, 0, fm_rounds);
            *cut = cut_weight(coarsest, start);
        }
        candidates.sort_unstable_by_key(|&(cut, i, _)| (cut, i));
        candidates_per_slack.push(candidates);
    }
    // The best few go down, taking the regimes in turn, level by level. A
    // level of n nodes and e entries takes at most DESCENT_WORK / (n + e) of
    // them (at least one), the lowest cuts at the level before; so small
    // graphs take several all the way to the tasks, and large ones several
    // through their coarse levels and the best of them through the fine
    // ones.
    let mut alive: Vec<(usize, Vec<u32>)> = Vec::new();
    for rank in 0..DESCENTS {
        for (regime, candidates) in candidates_per_slack.iter_mut().enumerate() {
            if let Some((_, _, part)) = candidates.get_mut(rank) {
                alive.push((regime, std::mem::take(part)));
            }
        }
    }
    let fit = |level: &Level| {
        (DESCENT_WORK / (level.node_count() + level.entry_count()).max(1)).clamp(1, DESCENTS)
    };
    alive.truncate(fit(&levels[levels.len() - 1]));
    let mut coarser = levels.len() - 1;
    for (level, map) in levels.iter().rev().skip(1).zip(maps.iter().rev()) {
        let keep = fit(level);
        if keep < alive.len() {
            // Rank by the cut on the coarser level, where they are now.
            let coarse = &levels[coarser];
            let mut ranked: Vec<(u64, usize, (usize, Vec<u32>))> = alive
                .drain(..)
                .enumerate()
                .map(|(i, c)| (cut_weight(coarse, &c.1), i, c))
                .collect();
            ranked.sort_unstable_by_key(|&(cut, i, _)| (cut, i));
            alive = ranked.into_iter().take(keep).map(|(_, _, c)| c).collect();
        }
        coarser -= 1;
        let finest = coarser == 0;
        for (regime, part) in &mut alive {
            *part = map.iter().map(|&c| part[c as usize]).collect();
            let slack = if finest { 1.0 } else { slacks[*regime] };
            refiner.limits = limits_for(level.heaviest(), slack);
            refiner.refine(level, part, config.refine_passes, fm_rounds);
        }
    }
    let mut best: Option<(u64, Vec<u32>)> = None;
    for (_, part) in alive {
        let cut = cut_weight(&levels[0], &part);
        if best.as_ref().is_none_or(|(best_cut, _)| cut < *best_cut) {
            best = Some((cut, part));
        }
    }
    best.expect("the blocks are always a candidate")
}

const CLUSTER_ROUNDS: usize = 3;

/// Tasks times orders: a graph of n tasks is partitioned from up to
/// ORDER_WORK / n orders (at least one, at most ORDERS).
const ORDER_WORK: usize = 50_000;
const ORDERS: usize = 2;

/// Rounds of Fiduccia-Mattheyses searches at each level, after the greedy
/// passes.
const FM_ROUNDS: usize = 4;

/// How many of the starts on the coarsest level get the searches.
const FM_STARTS: usize = 8;

/// Nodes and entries times descents: a level of n nodes and e entries
/// takes DESCENT_WORK / (n + e) descents (at least one, at most DESCENTS).
const DESCENT_WORK: usize = 1_500_000;

/// The slack of coarse levels in the tighter balance regime, in nodes of
/// the level.
const TIGHT_SLACK: f64 = 0.5;

/// How many of the best coarsest partitions are refined down to the tasks
/// on small graphs.
const DESCENTS: usize = 4;

/// Node and edge entries the grown starts may visit, over all starts.
const COARSEST_BUDGET: usize = 4_000_000;

/// Grown starts tried on the coarsest level.
const GROWN_STARTS: usize = 64;

/// Clusters per worker on the coarsest level.
const COARSEST_PER_WORKER: usize = 8;

/// How much heavier clusters may get from one level to the next.
const GROWTH: f64 = 4.0;

/// Refinement passes on the coarsest graph, which is small.
const COARSEST_PASSES: usize = 32;
