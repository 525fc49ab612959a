//! dask's main loop over [`State`]: targets, critical paths, runnable
//! tasks followed along linear paths, and the priorities given.

use std::cmp::Reverse;
use std::collections::VecDeque;

use graph_core::{Dag, NodeId};

use super::{BUCKETS, LIVE, NONE, REMOVED_ROOT, STOP_CHECK_EVERY, State};

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
    pub(super) fn run(&mut self, n_live: usize, stop: &(dyn Fn() -> bool + Sync)) -> bool {
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
    pub(super) fn finish(mut self, removed_leaves: Vec<NodeId>) -> Vec<u32> {
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
