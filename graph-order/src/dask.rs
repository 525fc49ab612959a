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

const NONE: u32 = u32::MAX;
const LIVE: u8 = 0;
const REMOVED_LEAF: u8 = 1;
const REMOVED_ROOT: u8 = 2;
const BUCKETS: usize = 64;

/// Assigns each of `members` (in index order) to one of 64 contiguous buckets.
fn bucket_of(ordinal: usize, count: usize) -> u8 {
    if count <= BUCKETS {
        ordinal as u8
    } else {
        (ordinal * BUCKETS / count) as u8
    }
}

/// dask's normalisation: data leaves with two or more dependencies and data
/// roots with two or more dependents leave the graph (§3 of the notes).
/// Returns the removed leaves in removal order.
fn normalise(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    removed: &mut [u8],
    ndeps: &mut [u32],
    ndependents: &mut [u32],
) -> Vec<NodeId> {
    let mut removed_leaves = Vec::new();
    let mut leaves: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| ndependents[node.index()] == 0)
        .collect();
    let mut roots: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| ndeps[node.index()] == 0)
        .collect();
    leaves.sort_unstable_by_key(|&node| tie[node.index()]);
    roots.sort_unstable_by_key(|&node| tie[node.index()]);
    // A leaf or root that is kept once stays kept (its counts only shrink and
    // it stays a leaf or root), so each pass only needs the newcomers.
    loop {
        let mut removed_a_leaf = false;
        let mut new_leaves = Vec::new();
        for &leaf in &leaves {
            let l = leaf.index();
            if removed[l] != LIVE || ndeps[l] == 0 || ndependents[l] != 0 {
                continue;
            }
            if is_data[l] && ndeps[l] > 1 {
                removed_a_leaf = true;
                removed[l] = REMOVED_LEAF;
                removed_leaves.push(leaf);
                for &d in topology.dependencies(leaf) {
                    let di = d.index();
                    if removed[di] == LIVE {
                        ndependents[di] -= 1;
                        if ndependents[di] == 0 {
                            new_leaves.push(d);
                        }
                    }
                }
            }
        }
        let mut new_roots = Vec::new();
        for &root in &roots {
            let r = root.index();
            if removed[r] != LIVE || ndependents[r] == 0 || ndeps[r] != 0 {
                continue;
            }
            if is_data[r] && ndependents[r] > 1 {
                removed[r] = REMOVED_ROOT;
                for &d in topology.dependents(root) {
                    let di = d.index();
                    if removed[di] == LIVE {
                        ndeps[di] -= 1;
                        if ndeps[di] == 0 {
                            new_roots.push(d);
                        }
                    }
                }
            }
        }
        if !removed_a_leaf {
            return removed_leaves;
        }
        new_leaves.sort_unstable_by_key(|&node| tie[node.index()]);
        new_roots.sort_unstable_by_key(|&node| tie[node.index()]);
        leaves = new_leaves;
        roots = new_roots;
    }
}

/// How many data leaves [`normalise`] sets aside: in dask's order they take
/// the last priorities. The count does not depend on the tie-break.
pub(crate) fn set_aside_count(topology: &Topology, is_data: &[bool]) -> usize {
    if !is_data.iter().any(|&d| d) {
        return 0;
    }
    let n = topology.node_count();
    let mut removed = vec![LIVE; n];
    let (mut ndeps, mut ndependents) = degrees(topology);
    let tie: Vec<u32> = (0..n as u32).collect();
    normalise(
        topology,
        &tie,
        is_data,
        &mut removed,
        &mut ndeps,
        &mut ndependents,
    )
    .len()
}

/// dask's per-task metrics of the normalised graph (§4 of the notes).
pub(crate) struct Metrics {
    pub(crate) roots: Vec<NodeId>,
    pub(crate) leaves: Vec<NodeId>,
    pub(crate) root_bucket: Vec<u8>,
    /// `total_dependencies`, saturating.
    pub(crate) total: Vec<u64>,
    /// Buckets of the roots each task descends from (empty for a root).
    pub(crate) root_mask: Vec<u64>,
    /// Buckets of the leaves each task feeds (empty for a leaf).
    pub(crate) leaf_mask: Vec<u64>,
    pub(crate) max_dependents: Vec<u32>,
}

pub(crate) fn metrics(
    topology: &Topology,
    removed: &[u8],
    ndeps: &[u32],
    ndependents: &[u32],
) -> Metrics {
    let n = topology.node_count();
    let live = |v: NodeId| removed[v.index()] == LIVE;
    let mut roots: Vec<NodeId> = Vec::new();
    let mut leaves: Vec<NodeId> = Vec::new();
    for v in topology.node_ids() {
        if live(v) {
            if ndeps[v.index()] == 0 {
                roots.push(v);
            }
            if ndependents[v.index()] == 0 {
                leaves.push(v);
            }
        }
    }
    let mut root_bucket = vec![0_u8; n];
    for (ordinal, &r) in roots.iter().enumerate() {
        root_bucket[r.index()] = bucket_of(ordinal, roots.len());
    }
    let mut leaf_bucket = vec![0_u8; n];
    for (ordinal, &l) in leaves.iter().enumerate() {
        leaf_bucket[l.index()] = bucket_of(ordinal, leaves.len());
    }
    // dask's `total_dependencies` counts paths, which grow exponentially on
    // lattices; they saturate here.
    let mut total = vec![0_u64; n];
    let mut root_mask = vec![0_u64; n];
    let mut max_dependents = vec![0_u32; n];
    for &v in topology.topological_order() {
        let vi = v.index();
        if !live(v) {
            continue;
        }
        if ndeps[vi] == 0 {
            total[vi] = 1;
            max_dependents[vi] = ndependents[vi];
            continue;
        }
        let (mut t, mut mask, mut maxd) = (1_u64, 0_u64, 0_u32);
        for &d in topology.dependencies(v) {
            let di = d.index();
            if !live(d) {
                continue;
            }
            t = t.saturating_add(total[di]);
            if ndeps[di] == 0 {
                mask |= 1 << root_bucket[di];
                maxd = maxd.max(ndependents[di]);
            } else {
                mask |= root_mask[di];
                maxd = maxd.max(max_dependents[di]);
            }
        }
        total[vi] = t;
        root_mask[vi] = mask;
        max_dependents[vi] = maxd;
    }
    let mut leaf_mask = vec![0_u64; n];
    for &v in topology.topological_order().iter().rev() {
        let vi = v.index();
        if !live(v) || ndependents[vi] == 0 {
            continue;
        }
        let mut mask = 0_u64;
        for &d in topology.dependents(v) {
            let di = d.index();
            if !live(d) {
                continue;
            }
            mask |= if ndependents[di] == 0 {
                1 << leaf_bucket[di]
            } else {
                leaf_mask[di]
            };
        }
        leaf_mask[vi] = mask;
    }

    Metrics {
        roots,
        leaves,
        root_bucket,
        total,
        root_mask,
        leaf_mask,
        max_dependents,
    }
}

#[cfg(feature = "fuzzing")]
/// dask's metrics of a graph without normalisation, for tests.
pub(crate) fn plain_metrics(topology: &Topology) -> Metrics {
    let (ndeps, ndependents) = degrees(topology);
    metrics(
        topology,
        &vec![LIVE; topology.node_count()],
        &ndeps,
        &ndependents,
    )
}

/// Each node's number of dependencies and of dependents.
fn degrees(topology: &Topology) -> (Vec<u32>, Vec<u32>) {
    let ndeps = topology
        .node_ids()
        .map(|node| topology.dependencies(node).len() as u32)
        .collect();
    let ndependents = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    (ndeps, ndependents)
}

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

impl State<'_> {
    #[inline]
    fn done(&self, v: NodeId) -> bool {
        self.prio[v.index()] != NONE
    }

    #[inline]
    fn deps_of(&self, v: NodeId) -> std::ops::Range<usize> {
        self.dep_off[v.index()] as usize..self.dep_off[v.index() + 1] as usize
    }

    #[inline]
    fn dependents_of(&self, v: NodeId) -> std::ops::Range<usize> {
        self.dpt_off[v.index()] as usize..self.dpt_off[v.index() + 1] as usize
    }

    fn hull_add(&mut self, v: NodeId) {
        let vi = v.index();
        if !self.reachable.contains(vi) {
            self.reachable.insert(vi);
            self.reachable_count += 1;
            let d = self.degree[vi] as usize;
            if d > 0 {
                self.hull_buckets[d].push(Reverse(self.rank[vi]));
                self.hull_count[d] += 1;
            }
        }
    }

    fn hull_remove(&mut self, v: NodeId) {
        let vi = v.index();
        if self.reachable.contains(vi) {
            self.reachable.set(vi, false);
            self.reachable_count -= 1;
            let d = self.degree[vi] as usize;
            if d > 0 {
                self.hull_count[d] -= 1;
            }
        }
    }

    /// Moves a leaf to the next lower degree bucket (or out of them).
    fn decrement_degree(&mut self, leaf: NodeId) {
        let li = leaf.index();
        let d = self.degree[li] as usize;
        let r = self.rank[li];
        let in_hull = self.reachable.contains(li);
        self.bucket_count[d] -= 1;
        if in_hull {
            self.hull_count[d] -= 1;
        }
        self.degree[li] = (d - 1) as u8;
        if d > 1 {
            self.buckets[d - 1].push(Reverse(r));
            self.bucket_count[d - 1] += 1;
            if in_hull {
                self.hull_buckets[d - 1].push(Reverse(r));
                self.hull_count[d - 1] += 1;
            }
        }
    }

    /// dask's three discards at the top of `add_to_result`, plus dropping a
    /// finished leaf from the degree buckets (a no-op when buckets are exact).
    fn forget(&mut self, v: NodeId) {
        let vi = v.index();
        self.runnable_hull.set(vi, false);
        self.hull_remove(v);
        self.leaf_live.set(vi, false);
        let d = self.degree[vi] as usize;
        if d > 0 {
            self.bucket_count[d] -= 1;
            self.degree[vi] = 0;
        }
    }

    /// `add_to_result`: gives `item` the next priority, then follows single
    /// dependents that became runnable, depth first.
    fn add(&mut self, item: NodeId) {
        self.stack.push(item);
        while let Some(item) = self.stack.pop() {
            let i = item.index();
            if self.done(item) {
                self.forget(item);
                continue;
            }
            // dask never adds a task that still waits for an input; guarding
            // here keeps every order valid even on paths dask did not foresee.
            if self.num_needed[i] != 0 {
                continue;
            }
            self.forget(item);
            if self.any_removed_root {
                self.scratch.clear();
                for &d in self.topology.dependencies(item) {
                    if self.removed[d.index()] == REMOVED_ROOT && !self.done(d) {
                        self.scratch.push(d);
                    }
                }
                let tie = self.tie;
                self.scratch.sort_unstable_by_key(|&d| tie[d.index()]);
                for k in 0..self.scratch.len() {
                    let d = self.scratch[k];
                    self.prio[d.index()] = self.next;
                    self.next += 1;
                }
            }
            self.prio[i] = self.next;
            self.next += 1;
            self.live_done += 1;
            if self.is_root.contains(i) {
                let b = self.root_bucket[i] as usize;
                self.bucket_remaining[b] -= 1;
                if self.bucket_remaining[b] == 0 {
                    for k in self.bl_off[b] as usize..self.bl_off[b + 1] as usize {
                        let leaf = self.bucket_leaves[k];
                        if self.degree[leaf.index()] > 0 {
                            self.decrement_degree(leaf);
                        }
                    }
                }
            }
            let range = self.dependents_of(item);
            let single = range.len() == 1;
            for k in range {
                let dep = self.dpts_sorted[k];
                self.num_needed[dep.index()] -= 1;
                self.hull_add(dep);
                if self.num_needed[dep.index()] == 0 {
                    if single {
                        self.stack.push(dep);
                    } else {
                        self.runnable.push(dep);
                    }
                }
            }
        }
    }

    fn add_path(&mut self, path: &[NodeId]) {
        for &k in path {
            self.add(k);
        }
    }

    /// `get_target`: the leaf to aim for next.
    fn get_target(&mut self) -> Option<NodeId> {
        let min = (1..=BUCKETS).find(|&d| self.bucket_count[d] > 0);
        match min {
            Some(d) if self.reachable_count > 0 => {
                let hull = self.hull_count[d] > 0;
                let heap = if hull {
                    &mut self.hull_buckets[d]
                } else {
                    &mut self.buckets[d]
                };
                while let Some(&Reverse(r)) = heap.peek() {
                    let v = self.node_of_rank[r as usize];
                    let vi = v.index();
                    if self.degree[vi] as usize == d && (!hull || self.reachable.contains(vi)) {
                        return Some(v);
                    }
                    heap.pop();
                }
                None
            }
            _ => self.leaf_sorted.pop(),
        }
    }

    /// A cleared vector from the pool of spent paths.
    fn fresh_path(&mut self) -> Vec<NodeId> {
        let mut path = self.pool.pop().unwrap_or_default();
        path.clear();
        path
    }

    fn recycle(&mut self, path: Vec<NodeId>) {
        self.pool.push(path);
    }

    /// `process_runnables`: follows newly runnable tasks along linear paths,
    /// and runs a path when it finishes a leaf or unlocks a reducer.
    fn process_runnables(&mut self) {
        let mut branches = std::mem::take(&mut self.branches);
        while !self.runnable.is_empty() {
            let mut candidates = std::mem::take(&mut self.runnable);
            while let Some(key) = candidates.pop() {
                if self.runnable_hull.contains(key.index()) || self.done(key) {
                    continue;
                }
                if self.leaf_live.contains(key.index()) {
                    self.add(key);
                    continue;
                }
                let mut first = self.fresh_path();
                first.push(key);
                branches.push_back((0, first));
                while let Some((mut nsplits, mut path)) = branches.pop_front() {
                    loop {
                        let current = *path.last().expect("paths are never empty");
                        let ci = current.index();
                        self.runnable_hull.insert(ci);
                        let down = self.dependents_of(current);
                        if down.is_empty() {
                            if self.num_needed[ci] <= 1 {
                                self.add_path(&path);
                            } else {
                                self.runnable_hull.set(ci, false);
                            }
                            self.recycle(path);
                            break;
                        } else if path.len() == 1 || self.ndeps[ci] == 1 {
                            if down.len() > 1 {
                                nsplits += 1;
                                for k in down {
                                    let d = self.dpts_sorted[k];
                                    if self.ndeps[d.index()] == 1 {
                                        let mut branch = self.fresh_path();
                                        branch.extend_from_slice(&path);
                                        branch.push(d);
                                        branches.push_back((nsplits, branch));
                                    }
                                }
                                self.recycle(path);
                                break;
                            }
                            path.push(self.dpts_sorted[down.start]);
                            continue;
                        } else if let Some(list) = self.known.get_mut(&current) {
                            list.push(path);
                            let count = list.len();
                            self.runnable_hull.set(ci, false);
                            if count >= self.num_needed[ci] as usize {
                                let all = self.known.remove(&current).unwrap_or_default();
                                let mut pruned: Vec<Vec<NodeId>> = Vec::with_capacity(all.len());
                                for p in all {
                                    if p.len() < 2 || !self.done(p[p.len() - 2]) {
                                        pruned.push(p);
                                    } else {
                                        self.recycle(p);
                                    }
                                }
                                if pruned.len() < self.num_needed[ci] as usize {
                                    self.known.insert(current, pruned);
                                } else if nsplits > 1 {
                                    let mut merged = self.fresh_path();
                                    for p in pruned {
                                        merged.extend_from_slice(&p);
                                        self.recycle(p);
                                    }
                                    branches.push_back((nsplits - 1, merged));
                                } else {
                                    self.run_paths(pruned);
                                }
                            }
                            break;
                        } else if self.ndeps[ci] > 1 && self.num_needed[ci] <= 1 {
                            self.add_path(&path);
                            self.recycle(path);
                            break;
                        } else {
                            self.known.insert(current, vec![path]);
                            self.runnable_hull.set(ci, false);
                            break;
                        }
                    }
                }
            }
            // Keep the candidates' allocation for the next round.
            candidates.clear();
            if self.runnable.is_empty() {
                self.runnable = candidates;
            }
        }
        self.branches = branches;
    }

    /// Runs cached paths into one reducer, re-queueing a path whose next task
    /// waits for another path. dask loops until all are done; this stops if a
    /// whole round makes no progress, so it can never spin.
    fn run_paths(&mut self, paths: Vec<Vec<NodeId>>) {
        let mut queue: VecDeque<Vec<NodeId>> = paths.into();
        let mut stalled = 0;
        while let Some(p) = queue.pop_front() {
            let before = self.next;
            let mut blocked = false;
            for &k in &p {
                if self.num_needed[k.index()] != 0 {
                    blocked = true;
                    break;
                }
                self.add(k);
            }
            if blocked {
                stalled = if self.next == before { stalled + 1 } else { 0 };
                if stalled > queue.len() {
                    break;
                }
                queue.push_back(p);
            } else {
                self.recycle(p);
            }
        }
    }

    /// The main loop (§9): pick a target leaf, build its critical path, and
    /// walk it, backing up through inputs that are not ready yet. Returns
    /// `false` if `stop` said so before the end.
    fn run(&mut self, n_live: usize, stop: &(dyn Fn() -> bool + Sync)) -> bool {
        let mut critical: Vec<NodeId> = Vec::new();
        let mut check_at = STOP_CHECK_EVERY;
        while self.live_done < n_live {
            if self.next >= check_at {
                check_at = self.next.saturating_add(STOP_CHECK_EVERY);
                if stop() {
                    return false;
                }
            }
            let Some(target) = self.get_target() else {
                break;
            };
            critical.clear();
            critical.push(target);
            let mut item = self.deps_of(target).last().map(|k| self.deps_sorted[k]);
            while let Some(it) = item {
                critical.push(it);
                let start = critical.len();
                for k in self.deps_of(it) {
                    let d = self.deps_sorted[k];
                    if !self.done(d) {
                        critical.push(d);
                    }
                }
                item = (critical.len() > start).then(|| critical[critical.len() - 1]);
            }
            let mut walked_back = false;
            while let Some(item) = critical.pop() {
                if self.done(item) {
                    continue;
                }
                if self.num_needed[item.index()] > 0 {
                    critical.push(item);
                    self.scratch.clear();
                    self.scratch_known.clear();
                    for k in self.deps_of(item) {
                        let d = self.deps_sorted[k];
                        if self.done(d) {
                            continue;
                        }
                        if self.known.contains_key(&d) {
                            self.scratch_known.push(d);
                        } else {
                            self.scratch.push(d);
                        }
                    }
                    if self.scratch.len() > 1 {
                        walked_back = true;
                    }
                    critical.extend_from_slice(&self.scratch);
                    for k in 0..self.scratch_known.len() {
                        let d = self.scratch_known[k];
                        if let Some(paths) = self.known.remove(&d) {
                            for p in paths {
                                critical.extend(p.iter().rev());
                                self.recycle(p);
                            }
                        }
                    }
                    continue;
                }
                if walked_back && self.runnable.len() < critical.len() {
                    self.process_runnables();
                }
                self.add(item);
            }
            self.process_runnables();
        }
        true
    }

    /// Priorities for whatever the main loop left (never, on any graph we
    /// know of, but an order must be complete), then the removed leaves last.
    fn finish(mut self, removed_leaves: Vec<NodeId>) -> Vec<u32> {
        let topo = self.topology.topological_order();
        for &v in topo {
            if self.removed[v.index()] == LIVE && !self.done(v) {
                self.num_needed[v.index()] = 0;
                self.add(v);
            }
        }
        for &v in topo {
            if self.removed[v.index()] == REMOVED_ROOT && !self.done(v) {
                self.prio[v.index()] = self.next;
                self.next += 1;
            }
        }
        let n = self.prio.len() as u32;
        for (k, &leaf) in removed_leaves.iter().enumerate() {
            self.prio[leaf.index()] = n - 1 - k as u32;
        }
        self.prio
    }
}
