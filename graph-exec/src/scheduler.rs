//! `Scheduler`: the executor core that every executor of the workspace runs
//! on (the local threads, and each worker of `graph-distributed`): which
//! tasks are ready, which runs next, which results are held and when each is
//! freed, and how many were held at most.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fixedbitset::FixedBitSet;
use graph_core::{Body, Dag, NodeId, TaskGraph, Term, Topology};
use rustc_hash::FxHashMap;

use crate::rank_set::RankSet;

/// Which tasks one executor runs, and in what order it prefers them.
///
/// `Scheduler::new` takes this plain description; the executor decides it
/// (the local executor runs every needed task, a distributed worker those
/// its placement gives it).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SchedulerConfig<'a> {
    /// The graph's own topology: whose result each task reads. Its nodes are
    /// the tasks, `0..data.node_count()`.
    pub data: &'a Topology,
    /// The topology that decides when a task may start: `data` itself, or a
    /// scheduling topology whose first `data.node_count()` nodes are the
    /// tasks and whose further nodes are barriers that carry no data (see
    /// `graph-optimize`'s `insert_barriers`). Every data dependency of a task
    /// must be an ancestor of it here.
    pub sched: &'a Topology,
    /// Per scheduling node, whether the run needs it.
    pub needed: &'a [bool],
    /// Per scheduling node, whether this executor runs it (when the run
    /// needs it); `None`: every needed node.
    pub mine: Option<&'a [bool]>,
    /// Per scheduling node, its rank among the ready tasks: the lowest ready
    /// rank runs first, ties by node id.
    pub ranks: &'a [u32],
    /// Bound the results held, counting those of the running tasks: see
    /// [`HeldLimit`]. `None`: no bound; any ready task starts, lowest rank
    /// first.
    pub held_limit: Option<HeldLimit<'a>>,
    /// Hold at most this many bytes of results in memory: tasks whose
    /// results would not fit wait while others that fit run, and where none
    /// fits the results needed latest are spilled (the executor writes them
    /// to disk and reads them back when a task needs them). `None`: no
    /// limit.
    pub memory_limit: Option<u64>,
    /// Per task, the bytes its result is said to take beforehand (the
    /// task's `size`): a hint, until results of its kind have been
    /// measured. Empty: no hints.
    pub expected_bytes: &'a [Option<u64>],
    /// Per task, its kind (the op its task calls, say: [`task_kinds`]):
    /// results of one kind are taken to be alike, so the result of a task
    /// not yet run is expected to take the mean of those of its kind
    /// measured so far, else its hint, else the mean of all results
    /// measured. Empty: kinds unknown; a task's hint, else the mean of all
    /// results measured.
    ///
    /// [`task_kinds`]: crate::task_kinds
    pub kinds: &'a [u32],
    /// Under a memory limit, whether a task of a kind none of whose results
    /// has been measured yet waits while another of its kind runs: the
    /// limit then holds from the first task whatever the hints say, at the
    /// cost of running the first task of each kind alone. `false` (the
    /// default): the first tasks start on their hints, in parallel.
    pub measure_first: bool,
}

impl<'a> SchedulerConfig<'a> {
    /// A configuration over `sched` (and the data edges of `data`) that runs
    /// every `needed` node by `ranks`, with no bound on the results held and
    /// no memory limit; set the other fields afterwards.
    ///
    /// ```
    /// use graph_core::Topology;
    /// use graph_exec::{Scheduler, SchedulerConfig};
    ///
    /// let topology = Topology::from_edges(2, [(0, 1)])?;
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 2], &[0, 1]);
    /// config.memory_limit = Some(1 << 20);
    /// let scheduler = Scheduler::new(&config);
    /// assert_eq!(scheduler.left(), 2);
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn new(
        data: &'a Topology,
        sched: &'a Topology,
        needed: &'a [bool],
        ranks: &'a [u32],
    ) -> SchedulerConfig<'a> {
        SchedulerConfig {
            data,
            sched,
            needed,
            mine: None,
            ranks,
            held_limit: None,
            memory_limit: None,
            expected_bytes: &[],
            kinds: &[],
            measure_first: false,
        }
    }
}

/// A bound on the results a [`Scheduler`] holds, for running an order on
/// several threads: parallel first, frugal within that.
///
/// The order (the scheduler's ranks, which must then number the needed
/// nodes `0..m` with every node after its dependencies, as [`run_order`]
/// gives them) holds at most its max pressure `P` on one thread. With
/// several, any ready task may start, lowest rank first, while the results
/// held and those of the running tasks stay within `limit`, and so do they
/// with how far the order from its first task not started would still raise
/// them (its `rise`), leaving out the results that only running tasks still
/// read (they go when those finish): running ahead of the order leaves room
/// to go on with it. Past that, a ready task starts only if it is the order's
/// next task and its own result fits the limit, or if it frees at least as
/// many results as it adds (no other task reads an input it reads); where
/// neither is among the first few ready tasks, the executor waits for a
/// running task to finish, and with nothing running the first starts
/// regardless, so that a run never stalls. With `limit`
/// `1.1 P + 8`, independent chains and wavefronts run side by side, and the
/// results held stay within the limit plus about one per running task.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, Topology};
/// use graph_exec::{HeldLimit, Scheduler, SchedulerConfig, pressure_rise};
///
/// // Two independent chains, 0 -> 1 and 2 -> 3, in that order: one result
/// // held at a time.
/// let topology = Topology::from_edges(4, [(0, 1), (2, 3)])?;
/// let needed = [true; 4];
/// let ranks = [0, 1, 2, 3];
/// let rise = pressure_rise(&topology, &topology, &needed, &ranks);
/// assert_eq!(rise[0], 1); // the order's max pressure
/// let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
/// config.held_limit = Some(HeldLimit { limit: 3, rise: &rise });
/// let mut scheduler = Scheduler::new(&config);
/// let mut spill = Vec::new();
/// // Both chains start side by side: two results held and running, within
/// // the limit with the order's rise of one.
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(2))));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HeldLimit<'a> {
    /// The most results held, with those of the running tasks (and, for a
    /// task ahead of the order, with the order's rise from its next task).
    pub limit: usize,
    /// Per rank, how far the results held rise over their count before that
    /// rank as one thread runs the order on from it (see [`pressure_rise`]);
    /// ranks past its end rise by nothing.
    pub rise: &'a [u32],
}

impl<'a> HeldLimit<'a> {
    /// How many results beyond 1.1 times the order's max pressure several
    /// threads may hold (besides about one per thread).
    pub const SLACK: usize = 8;

    /// The bound an executor of several threads keeps: `1.1 P + 8`, with
    /// `P` the order's max pressure, `rise[0]` (see [`pressure_rise`]).
    ///
    /// ```
    /// use graph_exec::HeldLimit;
    ///
    /// let rise = [20, 20, 11, 4];
    /// assert_eq!(HeldLimit::for_threads(&rise).limit, 20 + 2 + 8);
    /// ```
    pub fn for_threads(rise: &'a [u32]) -> HeldLimit<'a> {
        let pressure = rise.first().map_or(0, |&p| p as usize);
        HeldLimit {
            limit: pressure + pressure / 10 + HeldLimit::SLACK,
            rise,
        }
    }
}

/// A task or a result that a memory limit cannot hold: the error of
/// [`Scheduler::start_next`], [`Scheduler::finished`] and
/// [`Scheduler::arrived`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow {
    /// The task.
    pub node: NodeId,
    /// The bytes that do not fit: its result, or its inputs and result.
    pub bytes: u64,
    /// The limit.
    pub limit: u64,
    /// Whether it is the task's inputs with its result that do not fit
    /// together (rather than its result alone).
    pub with_inputs: bool,
}

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
/// use graph_exec::{Scheduler, SchedulerConfig};
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
    memory: Option<Memory<'t>>,
}

/// The bookkeeping of [`SchedulerConfig::held_limit`].
#[derive(Clone, Debug)]
struct HeldBound<'t> {
    limit: usize,
    rise: &'t [u32],
    /// Running tasks whose result will be held.
    in_flight: usize,
    /// Per rank: whether its node has started.
    started: FixedBitSet,
    /// The lowest rank whose node has not started: the order's next task.
    head: usize,
    /// Per task: readers of its result (of this executor) that have not
    /// started.
    unstarted: Vec<u32>,
    /// Results held whose every remaining reader is running: freed as those
    /// finish, and so no part of what the order holds from its next task on.
    doomed: usize,
}

impl HeldBound<'_> {
    /// How far the order from its next task would raise the results held.
    fn rise_at_head(&self) -> usize {
        self.rise.get(self.head).map_or(0, |&r| r as usize)
    }
}

/// The bookkeeping of [`SchedulerConfig::memory_limit`].
#[derive(Clone, Debug)]
struct Memory<'t> {
    limit: u64,
    expected: &'t [Option<u64>],
    /// Per task: its held result is on disk.
    spilled: FixedBitSet,
    /// Per task: its result could not be written, and stays in memory.
    unspillable: FixedBitSet,
    /// Bytes of the held results that could not be written: counted in
    /// memory, but left out of the limit, which bounds what can be spilled.
    unspillable_bytes: u64,
    /// Per task: running tasks that read its result (it stays in memory).
    pins: Vec<u32>,
    /// Per task, while it runs (or, run elsewhere, while its result is on
    /// its way here): the bytes reserved for its result.
    reserved: Vec<u64>,
    /// Bytes reserved for the results of the running tasks and of those
    /// on their way.
    running_bytes: u64,
    /// Bytes of results on their way out of this executor, in buffers of
    /// the executor's own ([`Scheduler::sending`]).
    sending: u64,
    /// Per task, its kind (empty: all of kind 0).
    kinds: &'t [u32],
    /// Per kind, the results measured so far and the tasks running.
    by_kind: Vec<Kind>,
    /// All results measured so far, for the mean that stands in where a
    /// kind has none and there is no hint.
    seen: Kind,
    measure_first: bool,
    /// Bytes written to disk over the run.
    spilled_bytes: u64,
}

impl Memory<'_> {
    /// The kind of task `node`.
    fn kind(&self, node: NodeId) -> usize {
        self.kinds.get(node.index()).map_or(0, |&k| k as usize)
    }
}

/// Each task's kind for [`SchedulerConfig::kinds`]: the op its task calls
/// (numbered from 1 in the order ops first appear), and 0 for a task that
/// calls none (a literal, a reference, a list, an opaque task).
///
/// ```
/// use graph_core::{TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("a", Term::call("blob", [Term::lit(1_000)]))
///     .task("b", Term::call("checksum", [Term::key("a")]))
///     .task("c", Term::call("blob", [Term::lit(2_000)]))
///     .task("d", Term::lit(7))
///     .build()?;
/// assert_eq!(graph_exec::task_kinds(&graph), [1, 2, 1, 0]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn task_kinds(graph: &TaskGraph) -> Vec<u32> {
    let mut ops: FxHashMap<&str, u32> = FxHashMap::default();
    graph
        .iter()
        .map(|(_, task)| match &task.body {
            Body::Term(Term::Call { op, .. }) => {
                let next = ops.len() as u32 + 1;
                *ops.entry(op.as_str()).or_insert(next)
            }
            _ => 0,
        })
        .collect()
}

/// What a [`Memory`] knows of the results of one kind.
#[derive(Clone, Copy, Debug, Default)]
struct Kind {
    /// Bytes of the results measured.
    bytes: u64,
    /// How many results were measured.
    count: u64,
    /// How many tasks of the kind run now.
    running: u32,
}

impl Kind {
    fn mean(&self) -> Option<u64> {
        self.bytes.checked_div(self.count)
    }

    fn measured(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
        self.count += 1;
    }
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
        Scheduler {
            data,
            sched,
            n_tasks,
            held_limit: held_limit.map(|HeldLimit { limit, rise }| HeldBound {
                limit,
                rise,
                in_flight: 0,
                started: FixedBitSet::with_capacity(left),
                head: 0,
                unstarted: readers.clone(),
                doomed: 0,
            }),
            memory: memory_limit.map(|limit| Memory {
                limit,
                expected: expected_bytes,
                spilled: FixedBitSet::with_capacity(n_tasks),
                unspillable: FixedBitSet::with_capacity(n_tasks),
                unspillable_bytes: 0,
                pins: vec![0; n_tasks],
                reserved: vec![0; n_tasks],
                running_bytes: 0,
                sending: 0,
                kinds,
                by_kind: vec![Kind::default(); kinds.iter().max().map_or(1, |&k| k as usize + 1)],
                seen: Kind::default(),
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
        if self.may_start(NodeId::from_u32(first as u32)) {
            self.ready.take_first(first);
            self.start(first);
            return Ok(Some(NodeId::from_u32(first as u32)));
        }
        // The first ready node (by rank) after it that may start; those
        // looked past go back into the ready set.
        self.ready.take_first(first);
        self.passed.push(first);
        let mut chosen = None;
        let lookahead = if self.memory.is_some() {
            LOOKAHEAD
        } else {
            FREEING_LOOKAHEAD
        };
        while self.passed.len() < lookahead
            && let Some(key) = self.ready.pop()
        {
            if self.may_start(NodeId::from_u32(key as u32)) {
                chosen = Some(key);
                break;
            }
            self.passed.push(key);
        }
        for key in self.passed.drain(..) {
            self.ready.push(key);
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
        let adds = usize::from(self.readers[i] > 0);
        let held = self.held + bound.in_flight + adds;
        // The order's next task needs room for its own result; a task ahead
        // of it, room too for the order to go on from its next task (which
        // the results only running tasks still read leave as they finish).
        let fits = held <= bound.limit
            && (self.ranks[i] as usize == bound.head
                || held.saturating_sub(bound.doomed) + bound.rise_at_head() <= bound.limit);
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

    /// The bytes `node` adds when it starts: its spilled inputs, read back,
    /// and its expected result.
    fn need(&self, node: NodeId) -> u64 {
        let Some(memory) = &self.memory else {
            return 0;
        };
        let mut need = self.expected(node);
        if node.index() < self.n_tasks {
            for dep in self.data.dependencies(node) {
                if memory.spilled.contains(dep.index()) {
                    need += self.bytes[dep.index()];
                }
            }
        }
        need
    }

    /// The bytes `node`'s result is expected to take.
    fn expected(&self, node: NodeId) -> u64 {
        let Some(memory) = &self.memory else {
            return 0;
        };
        if node.index() >= self.n_tasks {
            return 0;
        }
        let kind = memory.by_kind[memory.kind(node)];
        let measured = if memory.kinds.is_empty() {
            None
        } else {
            kind.mean()
        };
        measured
            .or_else(|| memory.expected.get(node.index()).copied().flatten())
            .or_else(|| memory.seen.mean())
            .unwrap_or(0)
    }

    /// Whether `node` can start within the memory limit without spilling.
    fn fits(&self, node: NodeId) -> bool {
        let Some(memory) = &self.memory else {
            return true;
        };
        if memory.measure_first && node.index() < self.n_tasks {
            let kind = memory.by_kind[memory.kind(node)];
            if kind.count == 0 && kind.running > 0 {
                return false;
            }
        }
        self.limited_bytes() + memory.running_bytes + memory.sending + self.need(node)
            <= memory.limit
    }

    /// The bytes in memory the limit bounds: the held results but those
    /// that could not be spilled.
    fn limited_bytes(&self) -> u64 {
        let unspillable = self.memory.as_ref().map_or(0, |m| m.unspillable_bytes);
        self.held_bytes - unspillable
    }

    /// Counts the ready node `key` as running.
    fn start(&mut self, key: u64) {
        let node = NodeId::from_u32(key as u32);
        self.running += 1;
        self.started.insert(node.index());
        if let Some(bound) = &mut self.held_limit {
            let rank = self.ranks[node.index()] as usize;
            if rank < bound.started.len() {
                bound.started.insert(rank);
                while bound.head < bound.started.len() && bound.started[bound.head] {
                    bound.head += 1;
                }
            }
            if node.index() < self.n_tasks {
                bound.in_flight += usize::from(self.readers[node.index()] > 0);
                for dep in self.data.dependencies(node) {
                    let d = dep.index();
                    bound.unstarted[d] -= 1;
                    bound.doomed += usize::from(bound.unstarted[d] == 0);
                }
            }
        }
        if node.index() >= self.n_tasks {
            return;
        }
        let expected = self.expected(node);
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
            memory.reserved[node.index()] = expected;
            memory.running_bytes += expected;
            let kind = memory.kind(node);
            memory.by_kind[kind].running += 1;
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
    /// to spill now onto `spill`.
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
            if let Some(bound) = &mut self.held_limit {
                bound.in_flight -= usize::from(self.readers[i] > 0);
            }
            if let Some(memory) = &mut self.memory {
                memory.running_bytes -= std::mem::take(&mut memory.reserved[i]);
                memory.seen.measured(bytes);
                let kind = memory.kind(node);
                memory.by_kind[kind].measured(bytes);
                memory.by_kind[kind].running -= 1;
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

    /// Records that the result of `node`, computed by another executor, has
    /// arrived and takes `bytes`: the tasks of this executor that wait for
    /// it are one input closer to ready. Under a memory limit, the results
    /// to spill now are pushed onto `spill`.
    ///
    /// # Errors
    ///
    /// [`Overflow`] when the result alone is larger than the memory limit.
    pub fn arrived(
        &mut self,
        node: NodeId,
        bytes: u64,
        spill: &mut Vec<NodeId>,
    ) -> Result<(), Overflow> {
        self.check_arrival(node, bytes)?;
        if let Some(memory) = &mut self.memory
            && let Some(reserved) = memory.reserved.get_mut(node.index())
        {
            memory.running_bytes -= std::mem::take(reserved);
            memory.seen.measured(bytes);
            let kind = memory.kind(node);
            memory.by_kind[kind].measured(bytes);
        }
        self.blocked = false;
        self.hold(node, bytes);
        self.make_ready(node);
        self.keep_within_limit(spill);
        Ok(())
    }

    /// Records that the result of `node`, computed by another executor, is
    /// on its way and will take `bytes` here: under a memory limit they
    /// count, as a running task's result does, from now until
    /// [`Scheduler::arrived`], and the results to spill to make room for
    /// them are pushed onto `spill`. An executor that receives a result in
    /// parts calls this when the first part comes, so that what it buffers
    /// is within the limit too.
    ///
    /// # Errors
    ///
    /// [`Overflow`] when the result alone is larger than the memory limit.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::{Scheduler, SchedulerConfig};
    ///
    /// // 0 -> 2 and 1 -> 3, with 1 run elsewhere, under a limit of 12
    /// // bytes: 0's 8 bytes are spilled as soon as 1's 8 bytes start to
    /// // come, and 3 (on 1) then starts before 2 (on 0, on disk).
    /// let topology = Topology::from_edges(4, [(0, 2), (1, 3)])?;
    /// let mine = [true, false, true, true];
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 4], &[0, 1, 2, 3]);
    /// config.mine = Some(&mine);
    /// config.memory_limit = Some(12);
    /// config.expected_bytes = &[Some(8), Some(8), Some(1), Some(1)];
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// assert!(spill.is_empty());
    /// scheduler.incoming(NodeId::new(1), 8, &mut spill).unwrap();
    /// assert_eq!(spill, [NodeId::new(0)]);
    /// scheduler.arrived(NodeId::new(1), 8, &mut spill).unwrap();
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(3))));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn incoming(
        &mut self,
        node: NodeId,
        bytes: u64,
        spill: &mut Vec<NodeId>,
    ) -> Result<(), Overflow> {
        self.check_arrival(node, bytes)?;
        if !self.reads(node) {
            return Ok(());
        }
        if let Some(memory) = &mut self.memory
            && let Some(reserved) = memory.reserved.get_mut(node.index())
        {
            memory.running_bytes -= std::mem::replace(reserved, bytes);
            memory.running_bytes += bytes;
        }
        self.keep_within_limit(spill);
        Ok(())
    }

    /// Records that `bytes` of results are on their way out of this
    /// executor, in buffers of its own (encoded for another, say): under a
    /// memory limit they count until they are gone, no task starts that
    /// would not fit beside them, and the results to spill to make room are
    /// pushed onto `spill`. Each call gives the new total; a smaller one
    /// lets waiting tasks start.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::{Scheduler, SchedulerConfig};
    ///
    /// // Two tasks of 8 bytes under a limit of 10: while 0's result goes
    /// // out, 1 waits.
    /// let topology = Topology::from_edges(2, [])?;
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 2], &[0, 1]);
    /// config.memory_limit = Some(10);
    /// config.expected_bytes = &[Some(8), Some(8)];
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// scheduler.sending(8, &mut spill);
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(None));
    /// scheduler.sending(0, &mut spill);
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(1))));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn sending(&mut self, bytes: u64, spill: &mut Vec<NodeId>) {
        let Some(memory) = &mut self.memory else {
            return;
        };
        if bytes < memory.sending {
            self.blocked = false;
        }
        memory.sending = bytes;
        self.keep_within_limit(spill);
    }

    /// [`Overflow`] when a result from another executor that a task here
    /// reads is larger than the memory limit on its own.
    fn check_arrival(&self, node: NodeId, bytes: u64) -> Result<(), Overflow> {
        match &self.memory {
            Some(memory) if bytes > memory.limit && self.reads(node) => Err(Overflow {
                node,
                bytes,
                limit: memory.limit,
                with_inputs: false,
            }),
            _ => Ok(()),
        }
    }

    /// Counts `node`'s result as held if some task of this executor reads it.
    fn hold(&mut self, node: NodeId, bytes: u64) {
        let i = node.index();
        if self.readers[i] > 0 {
            self.bytes[i] = bytes;
            self.held += 1;
            self.held_bytes += bytes;
            // What is in memory now, before anything spills to make room.
            self.peak_bytes = self.peak_bytes.max(self.held_bytes);
        }
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

    /// Spills until the results in memory and those the running tasks will
    /// give fit the limit (when they can).
    fn keep_within_limit(&mut self, spill: &mut Vec<NodeId>) {
        let Some(memory) = &self.memory else {
            return;
        };
        let room = memory
            .limit
            .saturating_sub(memory.running_bytes + memory.sending);
        if self.limited_bytes() > room {
            self.spill_down_to(room, None, spill);
        }
    }

    /// Spills the held results in memory that are needed latest (by the
    /// rank of their next reader), none that a running task reads or that
    /// `keep` reads, until at most `room` bytes are in memory.
    fn spill_down_to(&mut self, room: u64, keep: Option<NodeId>, spill: &mut Vec<NodeId>) {
        let Some(memory) = &self.memory else {
            return;
        };
        let mut kept = FixedBitSet::with_capacity(self.n_tasks);
        if let Some(node) = keep.filter(|node| node.index() < self.n_tasks) {
            kept.extend(self.data.dependencies(node).iter().map(|dep| dep.index()));
        }
        // Every result in memory that may go, by the rank of the next task
        // here that reads it: the latest first.
        let mut victims: Vec<(u32, NodeId)> = (0..self.n_tasks)
            .filter(|&d| {
                self.readers[d] > 0
                    && memory.pins[d] == 0
                    && !memory.spilled.contains(d)
                    && !memory.unspillable.contains(d)
                    && !kept.contains(d)
                    && self.bytes[d] > 0
            })
            .map(|d| {
                let node = NodeId::new(d);
                let next = self
                    .data
                    .dependents(node)
                    .iter()
                    .filter(|r| self.runs.contains(r.index()) && !self.started.contains(r.index()))
                    .map(|r| self.ranks[r.index()])
                    .min()
                    .unwrap_or(u32::MAX);
                (next, node)
            })
            .collect();
        victims.sort_unstable_by(|a, b| b.cmp(a));
        let memory = self.memory.as_mut().expect("under a memory limit");
        for (_, node) in victims {
            if self.held_bytes - memory.unspillable_bytes <= room {
                break;
            }
            let d = node.index();
            memory.spilled.insert(d);
            memory.spilled_bytes += self.bytes[d];
            self.held_bytes -= self.bytes[d];
            spill.push(node);
        }
    }

    /// Takes back the spilling of `node`, which the executor could not carry
    /// out (its result cannot be written, say): the result stays in memory,
    /// counted there again ([`Scheduler::peak_bytes`]), and is never chosen
    /// to spill again. The limit then bounds the other results: tasks start
    /// as though it were not there, so that the run goes on over the limit
    /// rather than stop. Does nothing for a node that is not spilled.
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::{Scheduler, SchedulerConfig};
    ///
    /// // 0 -> 2 <- 1 under a limit of 10 bytes: with 0's 8 bytes held, 1's
    /// // 8 more make the scheduler spill 0.
    /// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
    /// let mut config = SchedulerConfig::new(&topology, &topology, &[true; 3], &[0, 1, 2]);
    /// config.memory_limit = Some(10);
    /// config.expected_bytes = &[Some(8), Some(8), Some(1)];
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(1))));
    /// assert_eq!(spill, [NodeId::new(0)]);
    /// // 0 cannot be written: it stays and counts, over the limit, which
    /// // now bounds the rest (1's 8 bytes fit it).
    /// scheduler.unspillable(NodeId::new(0));
    /// spill.clear();
    /// scheduler.finished(NodeId::new(1), 8, &mut freed, &mut spill).unwrap();
    /// assert!(spill.is_empty());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(2))));
    /// assert_eq!((scheduler.peak_bytes(), scheduler.spilled_bytes()), (16, 0));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn unspillable(&mut self, node: NodeId) {
        let Some(memory) = &mut self.memory else {
            return;
        };
        let d = node.index();
        if d >= self.n_tasks || !memory.spilled.contains(d) {
            return;
        }
        memory.spilled.set(d, false);
        memory.unspillable.insert(d);
        memory.unspillable_bytes += self.bytes[d];
        memory.spilled_bytes -= self.bytes[d];
        self.held_bytes += self.bytes[d];
        self.peak_bytes = self.peak_bytes.max(self.held_bytes);
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

/// The ready nodes, as `rank << 32 | node`, lowest first.
#[derive(Clone, Debug)]
enum Ready {
    /// Ranks that tie or spread far beyond the node count.
    Heap(BinaryHeap<Reverse<u64>>),
    /// Distinct ranks below a small bound (an order's positions, say): a
    /// [`RankSet`] of them, and the node of each.
    Ranked { set: RankSet, node_at: Vec<u32> },
}

impl Ready {
    /// An empty set for the nodes in `runs`, ranked by `ranks`.
    fn new(runs: &FixedBitSet, ranks: &[u32]) -> Ready {
        match node_at_rank(runs.ones(), ranks) {
            Some(node_at) => Ready::Ranked {
                set: RankSet::new(node_at.len()),
                node_at,
            },
            None => Ready::Heap(BinaryHeap::new()),
        }
    }

    fn push(&mut self, key: u64) {
        match self {
            Ready::Heap(heap) => heap.push(Reverse(key)),
            Ready::Ranked { set, .. } => set.insert((key >> 32) as usize),
        }
    }

    fn peek(&self) -> Option<u64> {
        match self {
            Ready::Heap(heap) => heap.peek().map(|&Reverse(key)| key),
            Ready::Ranked { set, node_at } => set
                .first()
                .map(|rank| ((rank as u64) << 32) | u64::from(node_at[rank])),
        }
    }

    /// Removes `key`, which [`Ready::peek`] just gave.
    fn take_first(&mut self, key: u64) {
        match self {
            Ready::Heap(heap) => {
                heap.pop();
            }
            Ready::Ranked { set, .. } => set.remove((key >> 32) as usize),
        }
    }

    fn pop(&mut self) -> Option<u64> {
        match self {
            Ready::Heap(heap) => heap.pop().map(|Reverse(key)| key),
            Ready::Ranked { set, node_at } => {
                let rank = set.first()?;
                set.remove(rank);
                Some(((rank as u64) << 32) | u64::from(node_at[rank]))
            }
        }
    }
}

/// The needed nodes by `priorities`, ties by node id: placed straight by
/// priority where the priorities are distinct and small (an order's
/// positions are), else sorted.
fn by_priority(needed: &[bool], priorities: &[u32]) -> Vec<u32> {
    let nodes = (0..needed.len()).filter(|&i| needed[i]);
    match node_at_rank(nodes.clone(), priorities) {
        Some(mut at) => {
            at.retain(|&i| i != u32::MAX);
            at
        }
        None => {
            let mut by: Vec<u32> = nodes.map(|i| i as u32).collect();
            by.sort_unstable_by_key(|&i| (priorities[i as usize], i));
            by
        }
    }
}

/// Per rank, the node of `nodes` that has it (`u32::MAX` for a rank no
/// node has), up to the highest rank; `None` where two nodes share a rank
/// or a rank is not below `ranks.len()` plus 64: then ranks are no
/// positions in an order, and a sort or a heap serves better.
fn node_at_rank(nodes: impl Iterator<Item = usize>, ranks: &[u32]) -> Option<Vec<u32>> {
    let bound = ranks.len() + 64;
    let mut node_at = Vec::new();
    for i in nodes {
        let rank = ranks[i] as usize;
        if rank >= bound {
            return None;
        }
        if rank >= node_at.len() {
            node_at.resize(rank + 1, u32::MAX);
        }
        if node_at[rank] != u32::MAX {
            return None;
        }
        node_at[rank] = i as u32;
    }
    Some(node_at)
}

fn rank_of(ranks: &[u32], node: NodeId) -> u64 {
    (u64::from(ranks[node.index()]) << 32) | u64::from(node.as_u32())
}

/// Per rank of an order, how far the results held rise over their count
/// before that rank as one thread runs the order on from it: `rise[r]` is
/// the most results held before any later rank, less those held before
/// `r`, so `rise[0]` is the order's max pressure (as dask's diagnostics
/// count it: a result is held from its task until its last reader). `ranks`
/// number the needed nodes of `sched` `0..m`, every node after its
/// dependencies (as [`run_order`] gives them); barriers (the nodes of
/// `sched` past `data`'s) hold nothing. For [`HeldLimit::rise`].
///
/// **Complexity**: O(V + E).
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_exec::pressure_rise;
///
/// // 0 and 1 both feed 2: the order 0, 1, 2 holds two results before 2.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// assert_eq!(pressure_rise(&topology, &topology, &[true; 3], &[0, 1, 2]), [2, 1, 0]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn pressure_rise(
    data: &Topology,
    sched: &Topology,
    needed: &[bool],
    ranks: &[u32],
) -> Vec<u32> {
    let n_tasks = data.node_count();
    let m = sched.node_ids().filter(|node| needed[node.index()]).count();
    let mut at: Vec<Option<NodeId>> = vec![None; m];
    for node in sched.node_ids().filter(|node| needed[node.index()]) {
        if let Some(slot) = at.get_mut(ranks[node.index()] as usize) {
            *slot = Some(node);
        }
    }
    let mut readers: Vec<u32> = vec![0; n_tasks];
    for node in at.iter().flatten().filter(|node| node.index() < n_tasks) {
        for dep in data.dependencies(*node) {
            readers[dep.index()] += 1;
        }
    }
    // The results held before each rank.
    let mut before: Vec<u32> = Vec::with_capacity(m);
    let mut held = 0_u32;
    for slot in &at {
        before.push(held);
        let Some(node) = slot.filter(|node| node.index() < n_tasks) else {
            continue;
        };
        if readers[node.index()] > 0 {
            held += 1;
        }
        for dep in data.dependencies(node) {
            readers[dep.index()] -= 1;
            if readers[dep.index()] == 0 {
                held -= 1;
            }
        }
    }
    let mut highest = held;
    for count in before.iter_mut().rev() {
        highest = highest.max(*count);
        *count = highest - *count;
    }
    before
}

/// The order in which one thread runs the needed nodes of `sched` when it
/// always takes the ready node of lowest `priorities` (ties by node id): a
/// rank per scheduling node, `0..m` over the `m` needed nodes (`u32::MAX`
/// for the others): the ranks of a [`Scheduler`] as distinct positions (its
/// fastest ready set), and the sequence whose max pressure sets a
/// [`SchedulerConfig::held_limit`].
///
/// Where `priorities` already put every needed node after its dependencies
/// (a static order does), this is their order; otherwise it is the order a
/// one-thread run would follow.
///
/// **Errors**: [`Error::PriorityCount`](crate::Error::PriorityCount) when
/// `priorities` or `needed` does not have one entry per node of `sched`.
///
/// **Complexity**: O(V + E) where `priorities` are distinct and below the
/// node count plus 64 and already topological; O(V log V + E) otherwise.
pub fn run_order(
    sched: &Topology,
    needed: &[bool],
    priorities: &[u32],
) -> Result<Vec<u32>, crate::Error> {
    let n = sched.node_count();
    for got in [priorities.len(), needed.len()] {
        if got != n {
            return Err(crate::Error::PriorityCount { got, expected: n });
        }
    }
    let mut rank = vec![u32::MAX; n];
    let topological = sched.node_ids().all(|node| {
        !needed[node.index()]
            || sched
                .dependencies(node)
                .iter()
                .all(|dep| (priorities[dep.index()], dep) < (priorities[node.index()], &node))
    });
    if topological {
        for (r, i) in by_priority(needed, priorities).into_iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        return Ok(rank);
    }
    // Simulate one thread: the ready node of lowest priority runs next.
    let mut pending: Vec<u32> = sched
        .node_ids()
        .map(|node| {
            sched
                .dependencies(node)
                .iter()
                .filter(|dep| needed[dep.index()])
                .count() as u32
        })
        .collect();
    let mut ready: BinaryHeap<Reverse<u64>> = sched
        .node_ids()
        .filter(|node| needed[node.index()] && pending[node.index()] == 0)
        .map(|node| Reverse(rank_of(priorities, node)))
        .collect();
    let mut next = 0_u32;
    while let Some(Reverse(key)) = ready.pop() {
        let node = NodeId::from_u32(key as u32);
        rank[node.index()] = next;
        next += 1;
        for &dependent in sched.dependents(node) {
            let i = dependent.index();
            if needed[i] {
                pending[i] -= 1;
                if pending[i] == 0 {
                    ready.push(Reverse(rank_of(priorities, dependent)));
                }
            }
        }
    }
    Ok(rank)
}

#[cfg(test)]
mod tests {
    use graph_core::{NodeId, Topology};

    use super::{Ready, Scheduler, SchedulerConfig};

    /// Under a bound on held results, a task ahead of the order starts
    /// while it leaves room for the order to go on, and waits when it would
    /// not; the order's next task needs room for its own result only.
    #[test]
    fn a_held_limit_lets_tasks_run_ahead_within_it() {
        // Three chains of two, 0 -> 1, 2 -> 3, 4 -> 5, run in that order:
        // one result held at a time.
        let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)]).unwrap();
        let needed = [true; 6];
        let ranks = [0, 1, 2, 3, 4, 5];
        let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
        assert_eq!(rise, [1, 0, 1, 0, 1, 0]);
        let mut scheduler = Scheduler::new(&SchedulerConfig {
            data: &topology,
            sched: &topology,
            needed: &needed,
            mine: None,
            ranks: &ranks,
            held_limit: Some(super::HeldLimit {
                limit: 2,
                rise: &rise,
            }),
            memory_limit: None,
            expected_bytes: &[],
            kinds: &[],
            measure_first: false,
        });
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        let next = |scheduler: &mut Scheduler<'_>| {
            scheduler
                .start_next(&mut Vec::new())
                .unwrap()
                .map(NodeId::index)
        };
        // The order's first task, then the second chain beside it: two
        // results to come, within the limit.
        assert_eq!(next(&mut scheduler), Some(0));
        assert_eq!(next(&mut scheduler), Some(2));
        // A third would make three.
        assert_eq!(next(&mut scheduler), None);
        assert!(!scheduler.has_next());
        scheduler
            .finished(NodeId::new(0), 1, &mut freed, &mut spill)
            .unwrap();
        // 1 is the order's next task; 4 still has no room.
        assert_eq!(next(&mut scheduler), Some(1));
        assert_eq!(next(&mut scheduler), None);
        scheduler
            .finished(NodeId::new(2), 1, &mut freed, &mut spill)
            .unwrap();
        // 3, the order's next task, holds nothing (nothing reads it); 4,
        // next after it, needs room for its own result, which 1 makes by
        // freeing 0 when it has run.
        assert_eq!(next(&mut scheduler), Some(3));
        assert_eq!(next(&mut scheduler), None);
        scheduler
            .finished(NodeId::new(1), 1, &mut freed, &mut spill)
            .unwrap();
        assert_eq!(freed, [NodeId::new(0)]);
        assert_eq!(next(&mut scheduler), Some(4));
        assert_eq!(scheduler.peak_held(), 2);
    }

    /// Independent nodes come out lowest rank first, ties by node id,
    /// whether the ranks are distinct (the bit set) or tie or spread far
    /// (the heap).
    #[test]
    fn ready_nodes_come_out_by_rank_then_node() {
        let n = 300_usize;
        let topology = Topology::from_edges(n, std::iter::empty::<(usize, usize)>()).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut distinct: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            distinct.swap(i, (next() % (i as u64 + 1)) as usize);
        }
        let tied: Vec<u32> = (0..n).map(|_| (next() % 7) as u32).collect();
        let spread: Vec<u32> = distinct.iter().map(|&r| r * 1000).collect();
        let needed = vec![true; n];
        for (ranks, ranked) in [(&distinct, true), (&tied, false), (&spread, false)] {
            let mut scheduler = Scheduler::new(&SchedulerConfig {
                data: &topology,
                sched: &topology,
                needed: &needed,
                mine: None,
                ranks,
                held_limit: None,
                memory_limit: None,
                expected_bytes: &[],
                kinds: &[],
                measure_first: false,
            });
            assert_eq!(matches!(scheduler.ready, Ready::Ranked { .. }), ranked);
            let mut expected: Vec<usize> = (0..n).collect();
            expected.sort_by_key(|&i| (ranks[i], i));
            let mut spill = Vec::new();
            let given: Vec<usize> =
                std::iter::from_fn(|| scheduler.start_next(&mut spill).unwrap())
                    .map(NodeId::index)
                    .collect();
            assert_eq!(given, expected);
        }
    }
}
