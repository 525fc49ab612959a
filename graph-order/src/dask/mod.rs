//! The `Dask` strategy: dask's critical-path ordering (the 2023 rewrite with
//! its 2024-25 fixes), over dense state and in near-linear time.
//!
//! Where dask keeps per-task *sets* of connected roots and leaves, this keeps
//! one 64-bit mask per task: roots (and leaves) are numbered by index and
//! grouped into 64 contiguous buckets, and a task's mask holds the buckets of
//! the roots it descends from. With at most 64 roots each bucket is one root,
//! and every count dask takes of those sets is exact. Above that the counts
//! are of buckets, capped at 64. See the crate docs for every departure.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use fixedbitset::FixedBitSet;
use graph_core::{Dag, NodeId, Topology};
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;

mod metrics;
mod state;

#[cfg(feature = "fuzzing")]
pub(crate) use self::metrics::plain_metrics;
pub(crate) use self::metrics::set_aside_count;
use self::metrics::{Metrics, degrees, metrics, normalise};

const NONE: u32 = u32::MAX;
const LIVE: u8 = 0;
const REMOVED_LEAF: u8 = 1;
const REMOVED_ROOT: u8 = 2;
const BUCKETS: usize = 64;

/// How many tasks the main loop orders between two looks at the stop flag of
/// [`dask_unless`]: a look is a call of `stop` (an atomic load or two), so
/// this keeps them out of the profile while a stop still lands within a
/// fraction of a millisecond.
const STOP_CHECK_EVERY: u32 = 4096;

/// Orders `topology` as `dask.order.order` does, giving up (`None`) once
/// `stop` returns `true`. `tie` is a unique rank per node (dask's
/// `str(key)`), `is_data` is empty or marks dask's non-task nodes. `stop` is
/// asked between the phases of the setup and every few thousand tasks
/// ordered; it never changes the order, only whether one is returned.
pub(crate) fn dask_unless(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    stop: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<u32>> {
    let n = topology.node_count();
    if n == 0 {
        return Some(Vec::new());
    }
    let mut removed = vec![LIVE; n];
    let (mut ndeps, mut ndependents) = degrees(topology);
    let removed_leaves = if is_data.iter().any(|&d| d) {
        normalise(
            topology,
            tie,
            is_data,
            &mut removed,
            &mut ndeps,
            &mut ndependents,
        )
    } else {
        Vec::new()
    };
    let any_removed_root = removed.contains(&REMOVED_ROOT);

    let Metrics {
        roots,
        leaves,
        root_bucket,
        total,
        root_mask,
        leaf_mask,
        max_dependents,
    } = metrics(topology, &removed, &ndeps, &ndependents);
    if stop() {
        return None;
    }
    let live = |v: NodeId| removed[v.index()] == LIVE;

    // dask's `sort_key`, as one rank per live task (higher = larger key).
    // Packed into two words and the tie rank, so the sort compares
    // contiguous integers: total dependencies; then dependency count (capped
    // at 2^24), connected roots (at most 64), and inverted max dependents.
    let mut keyed: Vec<(u64, u64, u32, u32)> = topology
        .node_ids()
        .filter(|&v| live(v))
        .map(|v| {
            let i = v.index();
            let lo = u64::from(ndeps[i].min((1 << 24) - 1)) << 40
                | u64::from(root_mask[i].count_ones()) << 33
                | u64::from(u32::MAX - max_dependents[i]);
            (total[i], lo, tie[i], v.as_u32())
        })
        .collect();
    keyed.par_sort_unstable();
    if stop() {
        return None;
    }
    let by_rank: Vec<NodeId> = keyed.iter().map(|k| NodeId::from_u32(k.3)).collect();
    drop(keyed);
    let mut rank = vec![NONE; n];
    for (r, &v) in by_rank.iter().enumerate() {
        rank[v.index()] = r as u32;
    }
    drop(total);
    drop(max_dependents);

    // Live adjacency, each list in ascending sort-key order: the fixed rule
    // that stands in for dask's set iteration order.
    let mut dep_off = vec![0_u32; n + 1];
    let mut dpt_off = vec![0_u32; n + 1];
    for v in 0..n {
        let is_live = removed[v] == LIVE;
        dep_off[v + 1] = dep_off[v] + if is_live { ndeps[v] } else { 0 };
        dpt_off[v + 1] = dpt_off[v] + if is_live { ndependents[v] } else { 0 };
    }
    let mut dep_fill = dep_off.clone();
    let mut dpt_fill = dpt_off.clone();
    let mut deps_sorted = vec![NodeId::from_u32(0); dep_off[n] as usize];
    let mut dpts_sorted = vec![NodeId::from_u32(0); dpt_off[n] as usize];
    for &x in &by_rank {
        for &v in topology.dependents(x) {
            if live(v) {
                deps_sorted[dep_fill[v.index()] as usize] = x;
                dep_fill[v.index()] += 1;
            }
        }
        for &d in topology.dependencies(x) {
            if live(d) {
                dpts_sorted[dpt_fill[d.index()] as usize] = x;
                dpt_fill[d.index()] += 1;
            }
        }
    }
    drop(dep_fill);
    drop(dpt_fill);

    // Leaf degrees (§8): for each leaf that is not also a root, the number of
    // root buckets it descends from that still have a root to run.
    let mut degree = vec![0_u8; n];
    let mut buckets: Vec<BinaryHeap<Reverse<u32>>> = vec![BinaryHeap::new(); BUCKETS + 1];
    let mut bucket_count = [0_u32; BUCKETS + 1];
    let mut bucket_remaining = [0_u32; BUCKETS];
    for &r in &roots {
        bucket_remaining[root_bucket[r.index()] as usize] += 1;
    }
    let mut bl_off = [0_u32; BUCKETS + 1];
    for &l in &leaves {
        if ndeps[l.index()] == 0 {
            continue;
        }
        let mask = root_mask[l.index()];
        degree[l.index()] = mask.count_ones() as u8;
        buckets[mask.count_ones() as usize].push(Reverse(rank[l.index()]));
        bucket_count[mask.count_ones() as usize] += 1;
        for b in 0..BUCKETS {
            if mask >> b & 1 == 1 {
                bl_off[b + 1] += 1;
            }
        }
    }
    for b in 0..BUCKETS {
        bl_off[b + 1] += bl_off[b];
    }
    let mut bl_fill = bl_off;
    let mut bucket_leaves = vec![NodeId::from_u32(0); bl_off[BUCKETS] as usize];
    for &l in &leaves {
        if ndeps[l.index()] == 0 {
            continue;
        }
        let mask = root_mask[l.index()];
        for b in 0..BUCKETS {
            if mask >> b & 1 == 1 {
                bucket_leaves[bl_fill[b] as usize] = l;
                bl_fill[b] += 1;
            }
        }
    }

    // `use_longest_path` decides which end of the sorted leaves comes first.
    let longest = {
        let (r, l) = (roots.len() as f64, leaves.len() as f64);
        let mut longest = true;
        if !roots.is_empty() && (r - l).abs() / r < 0.8 {
            let mut by_key = roots.clone();
            by_key.sort_unstable_by_key(|&v| rank[v.index()]);
            let mut size = 0;
            for &v in &by_key {
                let count = leaf_mask[v.index()].count_ones();
                if size == 0 {
                    size = count;
                } else if size != count {
                    longest = false;
                    break;
                }
            }
        }
        longest
    };
    drop(leaf_mask);
    let mut leaf_sorted = leaves.clone();
    leaf_sorted.sort_unstable_by_key(|&v| rank[v.index()]);
    if !longest {
        leaf_sorted.reverse();
    }

    let mut is_root = FixedBitSet::with_capacity(n);
    for &r in &roots {
        is_root.insert(r.index());
    }
    let mut leaf_live = FixedBitSet::with_capacity(n);
    for &l in &leaves {
        leaf_live.insert(l.index());
    }
    let n_live = by_rank.len();
    let mut state = State {
        topology,
        removed,
        tie,
        any_removed_root,
        ndeps,
        num_needed: Vec::new(),
        deps_sorted,
        dep_off,
        dpts_sorted,
        dpt_off,
        prio: vec![NONE; n],
        next: 0,
        live_done: 0,
        runnable_hull: FixedBitSet::with_capacity(n),
        reachable: FixedBitSet::with_capacity(n),
        reachable_count: 0,
        leaf_live,
        is_root,
        degree,
        buckets,
        bucket_count,
        hull_buckets: vec![BinaryHeap::new(); BUCKETS + 1],
        hull_count: [0; BUCKETS + 1],
        rank,
        node_of_rank: by_rank,
        root_bucket,
        bucket_remaining,
        bl_off,
        bucket_leaves,
        leaf_sorted,
        runnable: Vec::new(),
        known: FxHashMap::default(),
        stack: Vec::new(),
        scratch: Vec::new(),
        scratch_known: Vec::new(),
        pool: Vec::new(),
        branches: VecDeque::new(),
    };
    state.num_needed = state.ndeps.clone();
    if !state.run(n_live, stop) {
        return None;
    }
    Some(state.finish(removed_leaves))
}

struct State<'a> {
    topology: &'a Topology,
    removed: Vec<u8>,
    tie: &'a [u32],
    any_removed_root: bool,
    ndeps: Vec<u32>,
    num_needed: Vec<u32>,
    deps_sorted: Vec<NodeId>,
    dep_off: Vec<u32>,
    dpts_sorted: Vec<NodeId>,
    dpt_off: Vec<u32>,
    prio: Vec<u32>,
    next: u32,
    live_done: usize,
    runnable_hull: FixedBitSet,
    reachable: FixedBitSet,
    reachable_count: usize,
    leaf_live: FixedBitSet,
    is_root: FixedBitSet,
    degree: Vec<u8>,
    /// Per degree, the ranks of the leaves of that degree: min-heaps with
    /// lazy deletion (an entry is live while its leaf still has that degree),
    /// and the exact number of live entries.
    buckets: Vec<BinaryHeap<Reverse<u32>>>,
    bucket_count: [u32; BUCKETS + 1],
    /// The same, for leaves in the reachable hull.
    hull_buckets: Vec<BinaryHeap<Reverse<u32>>>,
    hull_count: [u32; BUCKETS + 1],
    rank: Vec<u32>,
    node_of_rank: Vec<NodeId>,
    root_bucket: Vec<u8>,
    bucket_remaining: [u32; BUCKETS],
    bl_off: [u32; BUCKETS + 1],
    bucket_leaves: Vec<NodeId>,
    leaf_sorted: Vec<NodeId>,
    runnable: Vec<NodeId>,
    known: FxHashMap<NodeId, Vec<Vec<NodeId>>>,
    stack: Vec<NodeId>,
    scratch: Vec<NodeId>,
    scratch_known: Vec<NodeId>,
    /// Spent path vectors, reused to keep allocation out of the hot loop.
    pool: Vec<Vec<NodeId>>,
    branches: VecDeque<(u32, Vec<NodeId>)>,
}
