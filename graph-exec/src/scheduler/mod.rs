//! [`Scheduler`]: the executor core that every executor of the workspace
//! runs on (the local threads, `taskgraph.dask.get`'s, and each worker of
//! `graph-distributed`): which tasks are ready, which runs next, which
//! results are held and when each is freed, and how many were held at most.
//!
//! By concern: what a scheduler is told ([`SchedulerConfig`]); the bound on
//! the results it holds, drawn from an order's profile ([`HeldLimit`],
//! [`OrderProfile`]); bytes, expected and measured, and spilling under a
//! memory limit ([`task_kinds`], [`Overflow`]); the ready queue; and a run
//! that goes on by a second order ([`Scheduler::reorder`]). The helpers
//! that turn an order into a scheduler's ranks and rises ([`run_order`],
//! [`pressure_rise`], [`byte_rise`]) live beside the plan; [`Ranking`]
//! makes of an order the ranks and the bound a scheduler is configured
//! with, for every executor alike.

use fixedbitset::FixedBitSet;
use graph_core::{Dag, NodeId, Topology};

mod config;
mod limit;
mod memory;
mod ready;
mod resume;
#[cfg(test)]
mod tests;

use crate::order::rank_of;
pub use crate::order::{byte_rise, pressure_rise, run_order};
pub use config::{Priorities, Ranking, SchedulerConfig};
use limit::{ByteBound, HeldBound};
pub use limit::{ByteLimit, HeldLimit, OrderProfile, Overflow};
pub use memory::task_kinds;
use memory::{Kind, Memory, Sizes};
use ready::Ready;

/// The executor core: the ready tasks, by rank; the inputs each task still
/// waits for; the readers each result still has; and the results held, in
/// count and in bytes, in memory or spilled.
///
/// An executor asks [`Scheduler::start_next`] for a task to run, runs it
/// wherever it likes, and reports it [`finished`](Scheduler::finished),
/// learning which results no task needs any more and, under a memory limit,
/// which to spill; a result that another executor computed is reported
/// [`arrived`](Scheduler::arrived). It is a plain state machine (no threads,
/// no values): the local executor shares one behind a lock, and each
/// distributed worker owns one.
///
/// A result is held from when it is computed (or arrives) until the last of
/// this executor's tasks that read it has run, as dask's `diagnostics`
/// counts memory pressure; a result no task of this executor reads is not
/// counted (the executor may still keep it: a requested key, say).
///
/// **Complexity**: O(V log₆₄ V + E) over a run where the ranks are distinct
/// and below the node count (an order's positions: the ready tasks are then
/// a bit set of a few levels, four at 10^6 tasks), O((V + E) log V)
/// otherwise (a heap); O(V) memory. Under a memory limit, each spill also ranks the
/// results in memory by their next use.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, Topology};
/// use graph_exec::scheduler::{Scheduler, SchedulerConfig};
///
/// // 0 -> 2 <- 1, ranks preferring 1 over 0.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let config = SchedulerConfig::new(&topology, &topology, &[true; 3], &[1, 0, 2]);
/// let mut scheduler = Scheduler::new(&config);
/// let (mut freed, mut spill) = (Vec::new(), Vec::new());
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(1))));
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
/// assert_eq!(scheduler.start_next(&mut spill), Ok(None)); // 2 waits for its inputs
/// scheduler.finished(NodeId::new(1), 8, &mut freed, &mut spill).unwrap();
/// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(2))));
/// scheduler.finished(NodeId::new(2), 8, &mut freed, &mut spill).unwrap();
/// assert_eq!(freed, [NodeId::new(0), NodeId::new(1)]); // 2 read both
/// assert!(scheduler.is_done() && spill.is_empty());
/// assert_eq!((scheduler.peak_held(), scheduler.peak_bytes()), (2, 16));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Scheduler<'t> {
    data: &'t Topology,
    sched: &'t Topology,
    n_tasks: usize,
    /// Per scheduling node: whether this executor runs it.
    runs: FixedBitSet,
    /// Per scheduling node: whether it has started.
    started: FixedBitSet,
    ranks: &'t [u32],
    /// Per scheduling node this executor runs: inputs not yet available.
    pending: Vec<u32>,
    /// Per task: tasks of this executor that read its result and have not
    /// run.
    readers: Vec<u32>,
    /// Per task: the size of its result while it is held.
    bytes: Vec<u64>,
    /// Ready nodes as `rank << 32 | node`, lowest first.
    ready: Ready,
    /// Whether [`Scheduler::start_next`] found no ready node that may start
    /// while others run; it stays so until a node finishes or a result
    /// arrives.
    blocked: bool,
    /// Ready nodes looked past by [`Scheduler::start_next`], put back after.
    passed: Vec<u64>,
    /// Nodes of this executor that have not finished.
    left: usize,
    running: usize,
    tasks_run: usize,
    held: usize,
    peak_held: usize,
    /// Bytes of the held results in memory (not those spilled).
    held_bytes: u64,
    peak_bytes: u64,
    held_limit: Option<HeldBound<'t>>,
    /// What the results of tasks not yet run are expected to take: under a
    /// memory limit or a bound in bytes.
    sizes: Option<Sizes<'t>>,
    memory: Option<Memory>,
}

/// How many ready tasks a scheduler under a bound looks through for one that
/// may start.
const LOOKAHEAD: usize = 64;

/// How many ready tasks a scheduler bounding only the results held looks
/// through for one that may start: past the bound, one that frees as many
/// results as it adds reads results that are all there, so the order ranks
/// it early, among the first ready ones.
const FREEING_LOOKAHEAD: usize = 16;

impl<'t> Scheduler<'t> {
    /// A scheduler before anything has run: the nodes this executor runs
    /// whose inputs are all available are ready.
    ///
    /// # Panics
    ///
    /// If the slices are shorter than the scheduling topology, or it has
    /// fewer nodes than `data`: these are checked by the executors, which
    /// report them as errors.
    pub fn new(config: &SchedulerConfig<'t>) -> Scheduler<'t> {
        let SchedulerConfig {
            data,
            sched,
            needed,
            mine,
            ranks,
            held_limit,
            memory_limit,
            expected_bytes,
            kinds,
            measure_first,
        } = *config;
        let n_sched = sched.node_count();
        let n_tasks = data.node_count();
        assert!(n_tasks <= n_sched && needed.len() >= n_sched && ranks.len() >= n_sched);
        let mut runs = FixedBitSet::with_capacity(n_sched);
        runs.extend((0..n_sched).filter(|&i| needed[i] && mine.is_none_or(|mine| mine[i])));
        let mut pending = vec![0_u32; n_sched];
        let mut readers = vec![0_u32; n_tasks];
        let mut ready = Ready::new(&runs, ranks);
        for i in runs.ones() {
            let node = NodeId::new(i);
            pending[i] = sched
                .dependencies(node)
                .iter()
                .filter(|dep| needed[dep.index()])
                .count() as u32;
            if i < n_tasks {
                for dep in data.dependencies(node) {
                    readers[dep.index()] += 1;
                }
            }
            if pending[i] == 0 {
                ready.push(rank_of(ranks, node));
            }
        }
        let left = runs.count_ones(..);
        let in_bytes = held_limit.is_some_and(|bound| bound.bytes.is_some());
        Scheduler {
            data,
            sched,
            n_tasks,
            held_limit: held_limit.map(|HeldLimit { limit, rise, bytes }| HeldBound {
                limit,
                rise,
                in_flight: 0,
                started: FixedBitSet::with_capacity(left),
                head: 0,
                unstarted: readers.clone(),
                doomed: 0,
                bytes: bytes.map(|ByteLimit { limit, rise }| ByteBound {
                    limit,
                    rise,
                    held: 0,
                    in_flight: 0,
                    doomed: 0,
                }),
            }),
            sizes: (memory_limit.is_some() || in_bytes).then(|| Sizes {
                expected: expected_bytes,
                kinds,
                by_kind: vec![Kind::default(); kinds.iter().max().map_or(1, |&k| k as usize + 1)],
                seen: Kind::default(),
                reserved: vec![0; n_tasks],
                running_bytes: 0,
            }),
            memory: memory_limit.map(|limit| Memory {
                limit,
                spilled: FixedBitSet::with_capacity(n_tasks),
                unspillable: FixedBitSet::with_capacity(n_tasks),
                unspillable_bytes: 0,
                pins: vec![0; n_tasks],
                sending: 0,
                measure_first,
                spilled_bytes: 0,
            }),
            runs,
            started: FixedBitSet::with_capacity(n_sched),
            ranks: &ranks[..n_sched],
            pending,
            readers,
            bytes: vec![0; n_tasks],
            ready,
            blocked: false,
            passed: Vec::new(),
            left,
            running: 0,
            tasks_run: 0,
            held: 0,
            peak_held: 0,
            held_bytes: 0,
            peak_bytes: 0,
        }
    }

    /// The ready node to run next, now counted as running: the ready node of
    /// lowest rank that may start within the run's bounds
    /// ([`SchedulerConfig::held_limit`], [`SchedulerConfig::memory_limit`]),
    /// among the first few; `None` when no node is ready, or when none of
    /// those may start while running tasks may still free room. With
    /// nothing running, the first ready node starts regardless; under a
    /// memory limit the results needed latest are then pushed onto `spill`
    /// to make room for it: the executor must write them to disk (and read
    /// each back when a task that reads it starts).
    ///
    /// # Errors
    ///
    /// [`Overflow`] when a task's inputs and expected result do not fit the
    /// limit even with everything else spilled.
    pub fn start_next(&mut self, spill: &mut Vec<NodeId>) -> Result<Option<NodeId>, Overflow> {
        let Some(first) = self.ready.peek() else {
            return Ok(None);
        };
        if self.blocked {
            return Ok(None);
        }
        let first_node = NodeId::from_u32(first as u32);
        // Under a bound in bytes, a task ahead of the order (the first ready
        // one is not the order's next) is chosen among the first few ready
        // ones as the one that frees the most bytes.
        let by_freeing = self.held_limit.as_ref().is_some_and(|bound| {
            bound.bytes.is_some() && self.ranks[first_node.index()] as usize != bound.head
        });
        if !by_freeing && self.may_start(first_node) {
            self.ready.take_first(first);
            self.start(first);
            return Ok(Some(first_node));
        }
        // The first ready node (by rank) after it that may start, or the
        // one that frees the most bytes; those looked past go back into the
        // ready set.
        self.ready.take_first(first);
        self.passed.push(first);
        let mut chosen: Option<(u64, u64)> = None;
        if by_freeing && self.may_start(first_node) {
            chosen = Some((first, self.frees_bytes(first_node)));
        }
        let lookahead = if by_freeing {
            FREEING_LOOKAHEAD
        } else if self.memory.is_some() {
            LOOKAHEAD
        } else {
            FREEING_LOOKAHEAD
        };
        while self.passed.len() < lookahead
            && let Some(key) = self.ready.pop()
        {
            self.passed.push(key);
            let node = NodeId::from_u32(key as u32);
            if !self.may_start(node) {
                continue;
            }
            if !by_freeing {
                chosen = Some((key, 0));
                break;
            }
            let frees = self.frees_bytes(node);
            if chosen.is_none_or(|(_, most)| frees > most) {
                chosen = Some((key, frees));
            }
        }
        let chosen = chosen.map(|(key, _)| key);
        for key in self.passed.drain(..) {
            if Some(key) != chosen {
                self.ready.push(key);
            }
        }
        if let Some(key) = chosen {
            self.start(key);
            return Ok(Some(NodeId::from_u32(key as u32)));
        }
        // None may start. While tasks run or results go out, they may free
        // room: wait. Else the first starts, making room under a memory
        // limit by spilling.
        if self.running > 0 || self.memory.as_ref().is_some_and(|m| m.sending > 0) {
            self.blocked = true;
            return Ok(None);
        }
        let key = self.ready.pop().expect("a ready node was looked at");
        let node = NodeId::from_u32(key as u32);
        if let Some(memory) = &self.memory {
            let need = self.need(node);
            let limit = memory.limit;
            let room = limit.saturating_sub(need);
            self.spill_down_to(room, Some(node), spill);
            if self.limited_bytes() > room {
                self.ready.push(key);
                return Err(Overflow {
                    node,
                    bytes: self.limited_bytes() + need,
                    limit,
                    with_inputs: true,
                });
            }
        }
        self.start(key);
        Ok(Some(node))
    }

    /// Whether `node` may start now within the run's bounds: its inputs and
    /// result fit the memory limit, and its result keeps the held results
    /// within their bound or it frees at least as many as it adds.
    fn may_start(&self, node: NodeId) -> bool {
        if !self.fits(node) {
            return false;
        }
        let Some(bound) = &self.held_limit else {
            return true;
        };
        let i = node.index();
        if i >= self.n_tasks {
            return true;
        }
        let at_head = self.ranks[i] as usize == bound.head;
        if let Some(bytes) = &bound.bytes {
            // The same rule, in bytes: measured for the results held,
            // expected for those to come.
            let adds = if self.readers[i] > 0 {
                self.expected(node)
            } else {
                0
            };
            let held = bytes.held + bytes.in_flight + adds;
            let fits = held <= bytes.limit
                && (at_head
                    || held.saturating_sub(bytes.doomed) + bytes.rise_at(bound.head)
                        <= bytes.limit);
            return fits || adds <= self.frees_bytes(node);
        }
        let adds = usize::from(self.readers[i] > 0);
        let held = self.held + bound.in_flight + adds;
        // The order's next task needs room for its own result; a task ahead
        // of it, room too for the order to go on from its next task (which
        // the results only running tasks still read leave as they finish).
        let fits = held <= bound.limit
            && (at_head || held.saturating_sub(bound.doomed) + bound.rise_at_head() <= bound.limit);
        if fits {
            return true;
        }
        // When it finishes it frees each input that no other task (running
        // or not) still reads.
        let frees = self
            .data
            .dependencies(node)
            .iter()
            .filter(|dep| self.readers[dep.index()] == 1)
            .count();
        adds <= frees
    }

    /// Counts the ready node `key` as running.
    fn start(&mut self, key: u64) {
        let node = NodeId::from_u32(key as u32);
        self.running += 1;
        self.started.insert(node.index());
        let expected = self.expected(node);
        if let Some(bound) = &mut self.held_limit {
            let rank = self.ranks[node.index()] as usize;
            if rank < bound.started.len() {
                bound.started.insert(rank);
                while bound.head < bound.started.len() && bound.started[bound.head] {
                    bound.head += 1;
                }
            }
            if node.index() < self.n_tasks {
                let held = self.readers[node.index()] > 0;
                bound.in_flight += usize::from(held);
                if let Some(bytes) = &mut bound.bytes
                    && held
                {
                    bytes.in_flight += expected;
                }
                for dep in self.data.dependencies(node) {
                    let d = dep.index();
                    bound.unstarted[d] -= 1;
                    if bound.unstarted[d] == 0 {
                        bound.doomed += 1;
                        if let Some(bytes) = &mut bound.bytes {
                            bytes.doomed += self.bytes[d];
                        }
                    }
                }
            }
        }
        if node.index() >= self.n_tasks {
            return;
        }
        if let Some(sizes) = &mut self.sizes {
            sizes.reserved[node.index()] = expected;
            sizes.running_bytes += expected;
            let kind = sizes.kind(node);
            sizes.by_kind[kind].running += 1;
        }
        if let Some(memory) = &mut self.memory {
            // Its inputs come back into memory, and stay while it runs.
            for &dep in self.data.dependencies(node) {
                let d = dep.index();
                memory.pins[d] += 1;
                if memory.spilled.contains(d) {
                    memory.spilled.set(d, false);
                    self.held_bytes += self.bytes[d];
                }
            }
        }
        // Sampled just before the task runs, as dask's diagnostics count it.
        self.peak_held = self.peak_held.max(self.held);
        self.peak_bytes = self.peak_bytes.max(self.held_bytes);
    }

    /// Records that `node`, which [`Scheduler::start_next`] gave out, has
    /// run and that its result takes `bytes` (ignored for a barrier, and for
    /// a result no task of this executor reads). The results no task of
    /// this executor reads any more are pushed onto `freed` (the executor
    /// drops them, or deletes them from disk); under a memory limit, those
    /// to spill now onto `spill`: where the result is larger than was set
    /// aside for it, enough to get back under the limit, which the
    /// executor does before it starts anything more.
    ///
    /// # Errors
    ///
    /// [`Overflow`] when the result alone is larger than the memory limit.
    pub fn finished(
        &mut self,
        node: NodeId,
        bytes: u64,
        freed: &mut Vec<NodeId>,
        spill: &mut Vec<NodeId>,
    ) -> Result<(), Overflow> {
        self.running -= 1;
        self.left -= 1;
        self.blocked = false;
        let i = node.index();
        if i < self.n_tasks {
            self.tasks_run += 1;
            let reserved = self
                .sizes
                .as_mut()
                .map_or(0, |sizes| std::mem::take(&mut sizes.reserved[i]));
            if let Some(bound) = &mut self.held_limit {
                let held = self.readers[i] > 0;
                bound.in_flight -= usize::from(held);
                if let Some(bytes) = &mut bound.bytes
                    && held
                {
                    bytes.in_flight -= reserved;
                }
            }
            if let Some(sizes) = &mut self.sizes {
                sizes.running_bytes -= reserved;
                sizes.measured(node, bytes);
                let kind = sizes.kind(node);
                sizes.by_kind[kind].running -= 1;
            }
            if let Some(memory) = &mut self.memory {
                for dep in self.data.dependencies(node) {
                    memory.pins[dep.index()] -= 1;
                }
                if bytes > memory.limit {
                    return Err(Overflow {
                        node,
                        bytes,
                        limit: memory.limit,
                        with_inputs: false,
                    });
                }
            }
            self.hold(node, bytes);
            self.release(node, freed);
        }
        self.make_ready(node);
        self.keep_within_limit(spill);
        Ok(())
    }

    /// `node` has run: each of its inputs has one reader less, and those
    /// with none left are freed.
    fn release(&mut self, node: NodeId, freed: &mut Vec<NodeId>) {
        let data = self.data;
        for &dep in data.dependencies(node) {
            let d = dep.index();
            self.readers[d] -= 1;
            if self.readers[d] == 0 {
                self.held -= 1;
                if let Some(bound) = &mut self.held_limit {
                    bound.doomed -= 1;
                    if let Some(bytes) = &mut bound.bytes {
                        bytes.held -= self.bytes[d];
                        bytes.doomed -= self.bytes[d];
                    }
                }
                let on_disk = match &mut self.memory {
                    Some(memory) if memory.spilled.contains(d) => {
                        memory.spilled.set(d, false);
                        true
                    }
                    Some(memory) if memory.unspillable.contains(d) => {
                        memory.unspillable.set(d, false);
                        memory.unspillable_bytes -= self.bytes[d];
                        false
                    }
                    _ => false,
                };
                if !on_disk {
                    self.held_bytes -= self.bytes[d];
                }
                self.bytes[d] = 0;
                freed.push(dep);
            }
        }
    }

    fn make_ready(&mut self, node: NodeId) {
        let sched = self.sched;
        for &dependent in sched.dependents(node) {
            let i = dependent.index();
            if self.runs.contains(i) {
                self.pending[i] -= 1;
                if self.pending[i] == 0 {
                    self.ready.push(rank_of(self.ranks, dependent));
                }
            }
        }
    }

    /// Whether some task of this executor that has not run reads `node`'s
    /// result: whether the executor should keep it.
    pub fn reads(&self, node: NodeId) -> bool {
        self.readers.get(node.index()).is_some_and(|&n| n > 0)
    }

    /// Whether every node this executor runs has finished.
    pub fn is_done(&self) -> bool {
        self.left == 0
    }

    /// Whether [`Scheduler::start_next`] may give a node now (it may still
    /// find that none of the ready nodes fits the run's bounds).
    pub fn has_next(&self) -> bool {
        !self.blocked && self.ready.peek().is_some()
    }

    /// Nodes given out by [`Scheduler::start_next`] that have not finished.
    pub fn running(&self) -> usize {
        self.running
    }

    /// Nodes this executor runs that have not finished.
    pub fn left(&self) -> usize {
        self.left
    }

    /// Tasks finished (barriers not counted).
    pub fn tasks_run(&self) -> usize {
        self.tasks_run
    }

    /// The most results held when a task started.
    pub fn peak_held(&self) -> usize {
        self.peak_held
    }

    /// The most bytes of results in memory when a task started.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes
    }

    /// The bytes of results written to disk over the run.
    pub fn spilled_bytes(&self) -> u64 {
        self.memory
            .as_ref()
            .map_or(0, |memory| memory.spilled_bytes)
    }
}
