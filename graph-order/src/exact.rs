//! A bounded exact search for the lowest max pressure: depth-first branch and
//! bound over done-sets, one weakly connected component at a time, with a
//! per-state lower bound, forced moves, twin symmetry and a memo of the
//! done-sets that failed under a bound. The budget counts tasks run (forced
//! or branched), so a search does the same work on every machine and its
//! result never depends on timing.
//!
//! Why each pruning rule is sound:
//!
//! - **Components.** Running one component to its end before the next never
//!   holds more than any interleaving does (each component's results are
//!   held in both, and the others' add to it), so the optimum is the largest
//!   optimum of a component, and each is searched alone.
//! - **The state.** What can still happen depends only on the set `D` of
//!   tasks done: the held results are the done tasks with a dependent
//!   outside `D`. So `D` is the whole state, and "no completion of `D` holds
//!   at most `b`" is a fact about `D` and `b` alone. The search lowers `b`
//!   from the best order known, so a done-set that failed once fails under
//!   every later bound, and the memo of failed done-sets is never cleared.
//! - **Forced moves.** If a runnable task frees at least as many results as
//!   it adds (a task without dependents, or one whose input has no other
//!   dependent left), running it at once is never worse: moved to the front
//!   of any completion, it holds its own result for longer but frees at
//!   least as much just as long, so no step holds more. Such moves are taken
//!   without branching; the set they reach is the same in any order (a move
//!   stays forced as others run), so the memo sees one canonical done-set.
//!   After them every runnable task adds one result and frees none, so a
//!   state holding `b` results already cannot move under the bound `b`.
//! - **Twins.** Tasks with the same dependencies and the same dependents are
//!   interchangeable (swapping them maps orders to orders of equal
//!   pressure), so of each set of twins only the first not yet done is tried.
//! - **Lower bounds.** When a task `t` runs, every result with a dependent
//!   in `t` or below it (its descendants) and produced by an ancestor of
//!   `t`, or already done, is held. The ancestors part is a fixed number per
//!   task (its largest is a bound for the whole component); the done part
//!   is counted as the search goes, for the neediest tasks (a few per task
//!   on average, so that dense graphs stay cheap), and a state where one of
//!   them would see more than the bound is cut. Before searching, the bound
//!   of the component is raised by disjoint paths (see `paths`): when it
//!   meets the best order known, nothing is searched.

use graph_core::{Dag, NodeId, Topology};
use rustc_hash::FxHashSet;

use crate::paths;

/// The largest graph the search runs on. Bitsets of this many bits are kept
/// per task (ancestors, descendants), so its memory is quadratic in this.
pub(crate) const MAX_NODES: usize = 512;

/// The work `Strategy::Auto` spends: tasks run (forced or branched) over the
/// whole search, a few tens of milliseconds at most.
pub(crate) const AUTO_BUDGET: u64 = 100_000;

/// The work `Strategy::Exhaustive` spends.
pub(crate) const EXHAUSTIVE_BUDGET: u64 = 1_000_000;

const NONE: u32 = u32::MAX;

/// How many (done task, watching task) pairs a search keeps per task, on
/// average: the per-state bound costs that much per task run.
const WATCH_PER_TASK: usize = 8;

/// What a search found.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The best order found, as priorities, if its max pressure is below the
    /// guide's.
    pub(crate) better: Option<Vec<u32>>,
    /// The max pressure of the best order known (found, or the guide's).
    /// Read by the internals the tests use (the `fuzzing` feature).
    #[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
    pub(crate) value: u64,
    /// Whether `value` is proven to be the optimum.
    #[cfg_attr(not(feature = "fuzzing"), allow(dead_code))]
    pub(crate) proven: bool,
}

/// Searches for an order of `topology` with a lower max pressure than the
/// order `guide` (priorities), whose max pressure is `upper`, and for a proof
/// that the best it finds is optimal, spending at most `budget` tasks run.
/// The guide's order is also the order in which moves are tried.
/// With `sizes`, results weigh their sizes and the search minimizes max
/// bytes (`upper` is then the guide's max bytes); without, each weighs one.
pub(crate) fn search(
    topology: &Topology,
    guide: &[u32],
    sizes: Option<&[u64]>,
    upper: u64,
    budget: u64,
) -> Outcome {
    let n = topology.node_count();
    // The search adds weights in 64 bits: sizes whose sum would not fit
    // (hostile ones, near 2^64) are not searched.
    let fits = sizes.is_none_or(|sizes| {
        sizes
            .iter()
            .try_fold(0_u64, |sum, &size| sum.checked_add(size))
            .is_some()
    });
    if n > MAX_NODES || !fits {
        return Outcome {
            better: None,
            value: upper,
            proven: false,
        };
    }
    let mut parts = split(topology, guide, sizes);
    let mut budget = budget;
    let lower = parts.iter().map(|p| p.lower).max().unwrap_or(0);
    let mut value = parts.iter().map(|p| p.value).max().unwrap_or(0);
    let proven = 'proof: loop {
        if value <= lower {
            break true;
        }
        // Only the components that reach the current maximum matter: lower
        // them all below it, or prove that one cannot be.
        for part in parts.iter_mut().filter(|p| p.value == value) {
            match part.improve(value - 1, &mut budget) {
                Feasible::Found => {}
                Feasible::Infeasible => break 'proof true,
                Feasible::OutOfBudget => break 'proof false,
            }
        }
        value = parts.iter().map(|p| p.value).max().unwrap_or(0);
    };
    let better = (value < upper).then(|| {
        let mut prio = vec![0_u32; n];
        let mut step = 0_u32;
        for part in &parts {
            for &v in &part.best {
                prio[part.nodes[v as usize].index()] = step;
                step += 1;
            }
        }
        prio
    });
    Outcome {
        better,
        value,
        proven,
    }
}

/// The weakly connected components of `topology`, each with its tasks in
/// the guide's order (a topological order) and the guide's order restricted
/// to it as its first best order.
fn split(topology: &Topology, guide: &[u32], sizes: Option<&[u64]>) -> Vec<Part> {
    let n = topology.node_count();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for v in topology.node_ids() {
        for &d in topology.dependencies(v) {
            let (a, b) = (find(&mut parent, v.as_u32()), find(&mut parent, d.as_u32()));
            if a != b {
                parent[a.max(b) as usize] = a.min(b);
            }
        }
    }
    let sequence = crate::diagnostics::sequence_of(guide);
    let mut part_of = vec![NONE; n];
    let mut members: Vec<Vec<NodeId>> = Vec::new();
    for &v in &sequence {
        let root = find(&mut parent, v.as_u32()) as usize;
        if part_of[root] == NONE {
            part_of[root] = members.len() as u32;
            members.push(Vec::new());
        }
        members[part_of[root] as usize].push(v);
    }
    let mut local = vec![0_u32; n];
    members
        .into_iter()
        .map(|nodes| Part::new(topology, nodes, sizes, &mut local))
        .collect()
}

/// The max pressure of a local order of a graph given as compressed rows,
/// each result weighing `size` (0 for a task without dependents).
fn pressure(dep_off: &[u32], deps: &[u32], dpt_off: &[u32], size: &[u64], sequence: &[u32]) -> u64 {
    let m = dep_off.len() - 1;
    let mut remaining: Vec<u32> = (0..m).map(|v| dpt_off[v + 1] - dpt_off[v]).collect();
    let (mut held, mut max) = (0_u64, 0_u64);
    for &v in sequence {
        let v = v as usize;
        max = max.max(held);
        for &u in &deps[dep_off[v] as usize..dep_off[v + 1] as usize] {
            remaining[u as usize] -= 1;
            if remaining[u as usize] == 0 {
                held -= size[u as usize];
            }
        }
        held += size[v];
    }
    max
}

/// One component, its tasks numbered `0..m` in the guide's order.
struct Part {
    /// Local index to node.
    nodes: Vec<NodeId>,
    dep_off: Vec<u32>,
    deps: Vec<u32>,
    dpt_off: Vec<u32>,
    dpts: Vec<u32>,
    /// Per task, what its result weighs while held: 1, or its size; 0 for a
    /// task without dependents.
    size: Vec<u64>,
    /// The previous twin (same dependencies, same dependents), or `NONE`.
    twin_prev: Vec<u32>,
    /// Per task `t`: the ancestors of `t` with a dependent in `t` or below,
    /// weighed.
    fixed_need: Vec<u64>,
    /// Per task `v`, the tasks `t` such that `v` is neither an ancestor of
    /// `t` nor below it but has a dependent in `t` or below: once `v` is
    /// done, it is held when `t` runs. As compressed rows.
    watch_off: Vec<u32>,
    watchers: Vec<u32>,
    /// Per task, the weight of its `watchers` entries: the most `extra` it
    /// gets.
    most_extra: Vec<u64>,
    words: usize,
    /// The largest `fixed_need`: no order of the component holds fewer.
    lower: u64,
    /// The best order known, as local indexes, and its max pressure.
    best: Vec<u32>,
    value: u64,
    /// Done-sets with no completion under the bound of any search so far.
    failed: FxHashSet<Box<[u64]>>,
}

enum Feasible {
    Found,
    Infeasible,
    OutOfBudget,
}

impl Part {
    fn new(
        topology: &Topology,
        nodes: Vec<NodeId>,
        sizes: Option<&[u64]>,
        local: &mut [u32],
    ) -> Part {
        let m = nodes.len();
        for (i, &v) in nodes.iter().enumerate() {
            local[v.index()] = i as u32;
        }
        let csr = |up: bool| {
            let mut off = Vec::with_capacity(m + 1);
            off.push(0_u32);
            let mut flat = Vec::new();
            for &v in &nodes {
                let start = flat.len();
                let row = if up {
                    topology.dependencies(v)
                } else {
                    topology.dependents(v)
                };
                flat.extend(row.iter().map(|d| local[d.index()]));
                flat[start..].sort_unstable();
                off.push(flat.len() as u32);
            }
            (off, flat)
        };
        let (dep_off, deps) = csr(true);
        let (dpt_off, dpts) = csr(false);
        let size: Vec<u64> = nodes
            .iter()
            .map(|&v| match sizes {
                Some(sizes) => crate::tree::weight(topology, sizes, v),
                None => u64::from(!topology.dependents(v).is_empty()),
            })
            .collect();

        // Twins: equal dependency and dependent lists (sorted above), and
        // equal weights.
        let mut by_shape: Vec<u32> = (0..m as u32).collect();
        let shape = |v: u32| {
            let v = v as usize;
            (
                &deps[dep_off[v] as usize..dep_off[v + 1] as usize],
                &dpts[dpt_off[v] as usize..dpt_off[v + 1] as usize],
                size[v],
            )
        };
        by_shape.sort_by(|&a, &b| shape(a).cmp(&shape(b)).then(a.cmp(&b)));
        let mut twin_prev = vec![NONE; m];
        for pair in by_shape.windows(2) {
            if shape(pair[0]) == shape(pair[1]) {
                twin_prev[pair[1] as usize] = pair[0];
            }
        }

        // Ancestors (with self) in local order, which is topological; then
        // descendants (with self) and the inputs of those, in reverse.
        let words = m.div_ceil(64);
        let mut anc = vec![0_u64; m * words];
        let mut below = vec![0_u64; m * words];
        let mut feeds = vec![0_u64; m * words];
        for t in 0..m {
            let (done, row) = anc.split_at_mut(t * words);
            let row = &mut row[..words];
            row[t / 64] |= 1 << (t % 64);
            for &u in &deps[dep_off[t] as usize..dep_off[t + 1] as usize] {
                let u = u as usize;
                for (w, &x) in row.iter_mut().zip(&done[u * words..(u + 1) * words]) {
                    *w |= x;
                }
            }
        }
        for t in (0..m).rev() {
            let (row_b, later_b) = below.split_at_mut((t + 1) * words);
            let (row_f, later_f) = feeds.split_at_mut((t + 1) * words);
            let (row_b, row_f) = (&mut row_b[t * words..], &mut row_f[t * words..]);
            row_b[t / 64] |= 1 << (t % 64);
            for &u in &deps[dep_off[t] as usize..dep_off[t + 1] as usize] {
                row_f[u as usize / 64] |= 1 << (u % 64);
            }
            for &w in &dpts[dpt_off[t] as usize..dpt_off[t + 1] as usize] {
                let at = (w as usize - t - 1) * words;
                for k in 0..words {
                    row_b[k] |= later_b[at + k];
                    row_f[k] |= later_f[at + k];
                }
            }
        }
        let mut fixed_need = vec![0_u64; m];
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (t, fixed) in fixed_need.iter_mut().enumerate() {
            let mut need = 0;
            for (k, i) in (t * words..(t + 1) * words).enumerate() {
                let held = feeds[i] & !below[i];
                let mut mine = held & anc[i];
                while mine != 0 {
                    need += size[k * 64 + mine.trailing_zeros() as usize];
                    mine &= mine - 1;
                }
                let mut others = held & !anc[i];
                while others != 0 {
                    pairs.push(((k * 64) as u32 + others.trailing_zeros(), t as u32));
                    others &= others - 1;
                }
            }
            *fixed = need;
        }
        pairs.sort_unstable();
        let mut watch_off = vec![0_u32; m + 1];
        for &(v, _) in &pairs {
            watch_off[v as usize + 1] += 1;
        }
        for v in 0..m {
            watch_off[v + 1] += watch_off[v];
        }
        let mut most_extra = vec![0_u64; m];
        for &(v, t) in &pairs {
            most_extra[t as usize] += size[v as usize];
        }
        let watchers = pairs.into_iter().map(|(_, t)| t).collect();
        let lower = fixed_need.iter().copied().max().unwrap_or(0);
        let best: Vec<u32> = (0..m as u32).collect();
        let value = pressure(&dep_off, &deps, &dpt_off, &size, &best);
        // Disjoint paths cost a few max-flows: only where a search follows,
        // and only where results are counted (the bound counts paths).
        let lower = if value > lower && sizes.is_none() {
            let local = paths::Local {
                dep_off: &dep_off,
                deps: &deps,
                dpt_off: &dpt_off,
                dpts: &dpts,
                anc: &anc,
                below: &below,
                words,
            };
            u64::from(paths::bound(&local, lower as u32, value as u32))
        } else {
            lower
        };

        Part {
            nodes,
            dep_off,
            deps,
            dpt_off,
            dpts,
            size,
            twin_prev,
            fixed_need,
            watch_off,
            watchers,
            most_extra,
            words,
            lower,
            best,
            value,
            failed: FxHashSet::default(),
        }
    }

    fn deps_of(&self, v: u32) -> &[u32] {
        &self.deps[self.dep_off[v as usize] as usize..self.dep_off[v as usize + 1] as usize]
    }

    fn dpts_of(&self, v: u32) -> &[u32] {
        &self.dpts[self.dpt_off[v as usize] as usize..self.dpt_off[v as usize + 1] as usize]
    }

    /// The max pressure of a local order.
    fn pressure(&self, sequence: &[u32]) -> u64 {
        pressure(
            &self.dep_off,
            &self.deps,
            &self.dpt_off,
            &self.size,
            sequence,
        )
    }

    /// Looks for an order holding at most `bound`; on success it becomes
    /// the best order.
    fn improve(&mut self, bound: u64, budget: &mut u64) -> Feasible {
        let mut failed = std::mem::take(&mut self.failed);
        let mut walk = Walk::new(self, bound);
        let res = walk.run(&mut failed, budget);
        let found = matches!(res, Feasible::Found).then(|| std::mem::take(&mut walk.sequence));
        self.failed = failed;
        if let Some(sequence) = found {
            self.value = self.pressure(&sequence);
            self.best = sequence;
        }
        res
    }
}

/// One depth-first search under one bound.
struct Walk<'a> {
    part: &'a Part,
    bound: u64,
    done: Vec<u64>,
    ready: Vec<u64>,
    /// Per task, inputs not done yet.
    missing: Vec<u32>,
    /// Per task, dependents not done yet.
    remaining: Vec<u32>,
    held: u64,
    sequence: Vec<u32>,
    /// Tasks whose forced status may have changed.
    work: Vec<u32>,
    /// Per task, the weight of its `watchers` entries that are done: results
    /// held when it runs besides its fixed need.
    extra: Vec<u64>,
    /// Per task, the bound minus its fixed need: the most `extra` it allows.
    room: Vec<u64>,
    /// The tasks not done whose fixed need and extra exceed the bound.
    over: u32,
    /// `Part::watchers` without the tasks whose need cannot exceed the bound.
    watch_off: Vec<u32>,
    watchers: Vec<u32>,
}

/// A state on the search path: the moves to try from it, and where the
/// sequence stood before the move that reached it.
struct Frame {
    mark: usize,
    start: usize,
    next: usize,
    end: usize,
}

impl<'a> Walk<'a> {
    fn new(part: &'a Part, bound: u64) -> Walk<'a> {
        let m = part.nodes.len();
        let words = part.words;
        let missing: Vec<u32> = (0..m as u32)
            .map(|v| part.deps_of(v).len() as u32)
            .collect();
        let mut ready = vec![0_u64; words];
        for (v, &k) in missing.iter().enumerate() {
            if k == 0 {
                ready[v / 64] |= 1 << (v % 64);
            }
        }
        // Watch the tasks whose need could exceed the bound, neediest first,
        // up to `WATCH_PER_TASK` entries per task on average: on dense graphs
        // watching every one would cost more than its cuts save.
        let mut watched: Vec<u32> = (0..m as u32)
            .filter(|&t| part.fixed_need[t as usize] + part.most_extra[t as usize] > bound)
            .collect();
        watched.sort_by_key(|&t| (std::cmp::Reverse(part.fixed_need[t as usize]), t));
        let mut is_watched = vec![false; m];
        let mut entries = 0;
        for &t in &watched {
            entries += part.most_extra[t as usize] as usize;
            if entries > WATCH_PER_TASK * m {
                break;
            }
            is_watched[t as usize] = true;
        }
        let mut watch_off = Vec::with_capacity(m + 1);
        watch_off.push(0_u32);
        let mut watchers = Vec::new();
        for v in 0..m {
            let range = part.watch_off[v] as usize..part.watch_off[v + 1] as usize;
            watchers.extend(
                part.watchers[range]
                    .iter()
                    .copied()
                    .filter(|&t| is_watched[t as usize]),
            );
            watch_off.push(watchers.len() as u32);
        }
        Walk {
            part,
            bound,
            done: vec![0; words],
            ready,
            missing,
            remaining: (0..m as u32)
                .map(|v| part.dpts_of(v).len() as u32)
                .collect(),
            held: 0,
            sequence: Vec::with_capacity(m),
            work: Vec::new(),
            extra: vec![0; m],
            room: part
                .fixed_need
                .iter()
                .map(|&need| bound.saturating_sub(need))
                .collect(),
            watch_off,
            watchers,
            // No task is over at the start: the bound is at least every fixed
            // need (a search stops at the component's lower bound).
            over: 0,
        }
    }

    fn is_done(&self, v: u32) -> bool {
        self.done[v as usize / 64] >> (v % 64) & 1 == 1
    }

    /// Whether task `t`, not done, must hold more than the bound when it runs.
    fn is_over(&self, t: u32) -> bool {
        !self.is_done(t) && self.extra[t as usize] > self.room[t as usize]
    }

    /// Counts `v` as done (`up`) or not in the need of the tasks it watches.
    fn watch(&mut self, v: u32, up: bool) {
        let range = self.watch_off[v as usize] as usize..self.watch_off[v as usize + 1] as usize;
        let weight = self.part.size[v as usize];
        for k in range {
            let t = self.watchers[k] as usize;
            // `t` is over the bound once its extra passes its room.
            let was_over = self.extra[t] > self.room[t];
            if up {
                self.extra[t] += weight;
            } else {
                self.extra[t] -= weight;
            }
            let is_over = self.extra[t] > self.room[t];
            if was_over != is_over && !self.is_done(t as u32) {
                if is_over {
                    self.over += 1;
                } else {
                    self.over -= 1;
                }
            }
        }
    }

    fn apply(&mut self, v: u32) {
        let (word, bit) = (v as usize / 64, 1_u64 << (v % 64));
        self.over -= u32::from(self.is_over(v));
        self.done[word] |= bit;
        self.watch(v, true);
        self.ready[word] &= !bit;
        self.sequence.push(v);
        for &u in self.part.deps_of(v) {
            self.remaining[u as usize] -= 1;
            if self.remaining[u as usize] == 0 {
                self.held -= self.part.size[u as usize];
            }
        }
        let dpts = self.part.dpts_of(v);
        self.held += self.part.size[v as usize];
        for &w in dpts {
            self.missing[w as usize] -= 1;
            if self.missing[w as usize] == 0 {
                self.ready[w as usize / 64] |= 1 << (w % 64);
            }
        }
    }

    /// Undoes the moves after the first `mark`.
    fn undo_to(&mut self, mark: usize) {
        while self.sequence.len() > mark {
            let Some(v) = self.sequence.pop() else { break };
            let dpts = self.part.dpts_of(v);
            for &w in dpts {
                if self.missing[w as usize] == 0 {
                    self.ready[w as usize / 64] &= !(1 << (w % 64));
                }
                self.missing[w as usize] += 1;
            }
            self.held -= self.part.size[v as usize];
            for &u in self.part.deps_of(v) {
                if self.remaining[u as usize] == 0 {
                    self.held += self.part.size[u as usize];
                }
                self.remaining[u as usize] += 1;
            }
            self.watch(v, false);
            let (word, bit) = (v as usize / 64, 1_u64 << (v % 64));
            self.done[word] &= !bit;
            self.ready[word] |= bit;
            self.over += u32::from(self.is_over(v));
        }
    }

    /// Whether runnable `v` frees at least as much as it adds.
    fn forced(&self, v: u32) -> bool {
        self.frees(v) >= self.part.size[v as usize]
    }

    /// What runnable `v` frees: its inputs it is the last to read.
    fn frees(&self, v: u32) -> u64 {
        self.part
            .deps_of(v)
            .iter()
            .filter(|&&u| self.remaining[u as usize] == 1)
            .map(|&u| self.part.size[u as usize])
            .sum()
    }

    /// Queues the tasks whose forced status running `v` may have changed:
    /// its newly runnable dependents, and the last dependent left of each
    /// input it shares.
    fn touched_by(&mut self, v: u32) {
        for &w in self.part.dpts_of(v) {
            if self.missing[w as usize] == 0 {
                self.work.push(w);
            }
        }
        for &u in self.part.deps_of(v) {
            if self.remaining[u as usize] == 1 {
                let last = self
                    .part
                    .dpts_of(u)
                    .iter()
                    .copied()
                    .find(|&w| !self.is_done(w));
                self.work.extend(last);
            }
        }
    }

    /// Takes every forced move from the queue on, each counted in `budget`.
    fn close(&mut self, budget: &mut u64) {
        while let Some(w) = self.work.pop() {
            let ready = self.ready[w as usize / 64] >> (w % 64) & 1 == 1;
            if ready && self.forced(w) {
                self.apply(w);
                *budget = budget.saturating_sub(1);
                self.touched_by(w);
            }
        }
    }

    /// Whether a state (after its forced moves, not complete) may still have
    /// a completion under the bound.
    fn hopeful(&self, failed: &FxHashSet<Box<[u64]>>) -> bool {
        // Every move from here adds at least one (byte or result) that is
        // held at the next step.
        self.held < self.bound && self.over == 0 && !failed.contains(&self.done[..])
    }

    /// Pushes the moves to try from the current state onto `moves`.
    /// Moves are tried in the guide's order (ascending local index), so the
    /// guide's own next task comes first. A move whose result would carry
    /// the next step over the bound is left out (with results counted, none
    /// is: a hopeful state holds less than the bound, and a move adds one).
    fn moves(&self, moves: &mut Vec<u32>) {
        for (k, &word) in self.ready.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let v = (k * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let prev = self.part.twin_prev[v as usize];
                let adds =
                    self.part.size[v as usize] - self.frees(v).min(self.part.size[v as usize]);
                if (prev == NONE || self.is_done(prev)) && self.held + adds <= self.bound {
                    moves.push(v);
                }
            }
        }
    }

    fn run(&mut self, failed: &mut FxHashSet<Box<[u64]>>, budget: &mut u64) -> Feasible {
        let m = self.part.nodes.len();
        self.work.extend(0..m as u32);
        self.close(budget);
        if self.sequence.len() == m {
            return Feasible::Found;
        }
        if !self.hopeful(failed) {
            return Feasible::Infeasible;
        }
        let mut moves = Vec::new();
        self.moves(&mut moves);
        let mut frames = vec![Frame {
            mark: 0,
            start: 0,
            next: 0,
            end: moves.len(),
        }];
        while let Some(top) = frames.last_mut() {
            if top.next == top.end {
                // Every move failed: so does this done-set, under any lower
                // bound too.
                let (mark, start) = (top.mark, top.start);
                frames.pop();
                moves.truncate(start);
                failed.insert(self.done.clone().into_boxed_slice());
                self.undo_to(mark);
                continue;
            }
            if *budget == 0 {
                return Feasible::OutOfBudget;
            }
            let v = moves[top.next];
            top.next += 1;
            let mark = self.sequence.len();
            self.apply(v);
            *budget = budget.saturating_sub(1);
            self.touched_by(v);
            self.close(budget);
            if self.sequence.len() == m {
                return Feasible::Found;
            }
            if !self.hopeful(failed) {
                self.undo_to(mark);
                continue;
            }
            let start = moves.len();
            self.moves(&mut moves);
            frames.push(Frame {
                mark,
                start,
                next: start,
                end: moves.len(),
            });
        }
        Feasible::Infeasible
    }
}
