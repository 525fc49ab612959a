//! The default placement: a multilevel partitioner seeded by a
//! locality-keeping order.

use graph_core::Dag;

use crate::inputs::{check_len, check_sizes, dependency_post_order, loads, order_by_priority};
use crate::multilevel::{Level, Refiner, bfs_order, blocks, cut_weight, grow};
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
    /// The most refinement passes per level (the coarsest level, which is
    /// small, always gets more); each pass is O(V + E) of that level, and
    /// refinement stops early once a pass moves fewer than one node in a
    /// thousand.
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
///    64 seeds; refine each and keep the lowest cuts.
/// 4. On the way back to the tasks, at every level: first move nodes out of
///    workers above that level's limit (a share plus one node of the level,
///    so the bound tightens as nodes get lighter), then refine the
///    boundaries, Fiduccia-Mattheyses style: move a node to the neighbouring
///    worker it is most connected to when that lowers the cut (or keeps it
///    and evens the loads) within the limits, until a pass moves almost
///    nothing. Graphs up to 50 000 tasks take the best four coarse starts
///    down and keep the lowest final cut; larger ones take the best one.
///
/// Differences from Mars and dask: the whole graph is placed up front with a
/// balance bound, where Mars balances only start operands and dask only
/// occupancy at the time of each decision. The refinement takes only moves
/// that do not raise the cut (no hill climbing with rollback as full FM
/// does), which keeps each pass linear.
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
/// [`Error::LengthMismatch`] if `sizes` or `costs` is not one per task,
/// [`Error::BadCost`] for a negative or non-finite cost.
///
/// # Complexity
///
/// O(p · (V + E)) time for p refinement passes per level (8 by default;
/// every level is at least 10% smaller than the one before, so their sum is
/// a small multiple of the finest), plus the starts on the coarsest graph of
/// about 8k nodes, and O(V + E) auxiliary space for the undirected levels.
///
/// # Example
///
/// ```
/// use graph_assign::{Metrics, Workers, assign, assign_mars};
/// use graph_core::testing;
///
/// let graph = testing::array_sum_transpose(20);
/// let dag = graph.topology()?;
/// let workers = Workers::new(4)?;
/// let ours = Metrics::of(dag, &workers, &assign(dag, &workers, None, None)?, None, None)?;
/// let mars = Metrics::of(dag, &workers, &assign_mars(dag, &workers), None, None)?;
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
    partition(dag, workers, config).map(|res| Assignment::new_unchecked(res, workers.count()))
}

fn partition(
    dag: &dyn Dag,
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
    let mut total: f64 = weights.iter().sum();
    if total <= 0.0 {
        // Nothing costs anything: balance task counts instead.
        weights.fill(1.0);
        total = n_nodes as f64;
    }
    let order = match config.priorities {
        Some(priorities) => order_by_priority(priorities),
        None => dependency_post_order(dag),
    };
    let heaviest = weights.iter().copied().fold(0.0, f64::max);
    let targets: Vec<f64> = workers.shares().iter().map(|s| s * total).collect();
    // At each level a worker may exceed its share by the balance slack or
    // by one node of that level, whichever is more: coarse levels are loose,
    // and the finest level keeps the promised bound.
    let limits_for = |heaviest: f64| -> Vec<f64> {
        targets
            .iter()
            .map(|t| (t * config.max_imbalance).max(t + heaviest))
            .collect()
    };
    // Coarsen until about COARSEST_PER_WORKER clusters per worker are left.
    let cap = (total / (n_workers * COARSEST_PER_WORKER) as f64).max(heaviest);

    let mut levels = vec![Level::from_dag(dag, &order, config.sizes, &weights)];
    let mut maps: Vec<Vec<u32>> = Vec::new();
    // Clusters may grow by a factor of GROWTH per level, up to `cap`: small
    // clusters first keep them compact, where one capped round of label
    // propagation would string them along chains.
    let mean = total / n_nodes as f64;
    let mut level_cap = (mean * GROWTH * 1.0).max(heaviest).min(cap);
    loop {
        let level = levels.last().expect("the finest level is there");
        let (cluster, n_clusters) = level.cluster(level_cap, CLUSTER_ROUNDS);
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

    let coarsest = levels.last().expect("the finest level is there");
    let mut refiner = Refiner::new(limits_for(coarsest.heaviest()), n_workers);
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
    let starts = [
        blocks(0..n_coarsest as u32, &coarsest.node_weights, &targets),
        blocks(bfs_order(coarsest, far), &coarsest.node_weights, &targets),
    ]
    .into_iter()
    .chain((0..n_seeds).map(|i| grow(coarsest, &targets, i * n_coarsest / n_seeds)));
    let mut candidates: Vec<(u64, usize, Vec<u32>)> = Vec::new();
    for (i, mut start) in starts.enumerate() {
        refiner.refine(coarsest, &mut start, COARSEST_PASSES);
        if i == 0 || refiner.fits(coarsest, &start) {
            candidates.push((cut_weight(coarsest, &start), i, start));
        }
    }
    // The best few go down to the tasks (only the best on large graphs, where
    // a second descent would cost as much as the first), and the lowest cut
    // there wins.
    candidates.sort_unstable_by_key(|&(cut, i, _)| (cut, i));
    let tries = if n_nodes <= SMALL_GRAPH { DESCENTS } else { 1 };
    let mut best: Option<(u64, Vec<u32>)> = None;
    for (_, _, mut part) in candidates.into_iter().take(tries) {
        for (level, map) in levels.iter().rev().skip(1).zip(maps.iter().rev()) {
            part = map.iter().map(|&c| part[c as usize]).collect();
            refiner.limits = limits_for(level.heaviest());
            refiner.refine(level, &mut part, config.refine_passes);
        }
        let cut = cut_weight(&levels[0], &part);
        if best.as_ref().is_none_or(|(best_cut, _)| cut < *best_cut) {
            best = Some((cut, part));
        }
    }
    let (_, part) = best.expect("the blocks are always a candidate");
    let mut res = vec![0_u32; n_nodes];
    for (&node, &worker) in order.iter().zip(&part) {
        res[node as usize] = worker;
    }
    Ok(res)
}

const CLUSTER_ROUNDS: usize = 3;

/// Graphs up to this many tasks get DESCENTS descents from the coarsest
/// level rather than one.
const SMALL_GRAPH: usize = 50_000;

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
