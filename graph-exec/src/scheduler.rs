//! `Scheduler`: the executor core that every executor of the workspace runs
//! on (the local threads, and each worker of `graph-distributed`): which
//! tasks are ready, which runs next, which results are held and when each is
//! freed, and how many were held at most.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fixedbitset::FixedBitSet;
use graph_core::{Dag, NodeId, Topology};

/// Which tasks one executor runs, and in what order it prefers them.
///
/// `Scheduler::new` takes this plain description; the executor decides it
/// (the local executor runs every needed task, a distributed worker those
/// its placement gives it).
#[derive(Clone, Copy, Debug)]
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
    /// Follow the order closely with several threads: when `Some(k)`, at
    /// most `k` tasks may have started beyond the longest run of finished
    /// tasks at the head of the order, so that the results held stay within
    /// `k` of what running the order on one thread holds. `ranks` must then
    /// number this executor's needed nodes `0..m` in an order that puts every
    /// task after its dependencies (see [`run_order`]).
    pub window: Option<usize>,
}

/// The executor core: the ready tasks, by rank; the inputs each task still
/// waits for; the readers each result still has; and the results held.
///
/// An executor asks [`Scheduler::start_next`] for a task to run, runs it wherever
/// it likes, and reports it [`finished`](Scheduler::finished), learning which
/// results no task needs any more; a result that another executor computed
/// is reported [`arrived`](Scheduler::arrived). It is a plain state machine
/// (no threads, no values): the local executor shares one behind a lock,
/// and each distributed worker owns one.
///
/// A result is held from when it is computed (or arrives) until the last of
/// this executor's tasks that read it has run, as dask's `diagnostics`
/// counts memory pressure; a result no task of this executor reads is not
/// counted (the executor may still keep it: a requested key, say).
///
/// **Complexity**: O((V + E) log V) over a run; O(V) memory.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, Topology};
/// use graph_exec::{Scheduler, SchedulerConfig};
///
/// // 0 -> 2 <- 1, ranks preferring 1 over 0.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let mut scheduler = Scheduler::new(&SchedulerConfig {
///     data: &topology,
///     sched: &topology,
///     needed: &[true; 3],
///     mine: None,
///     ranks: &[1, 0, 2],
///     window: None,
/// });
/// let mut freed = Vec::new();
/// assert_eq!(scheduler.start_next(), Some(NodeId::new(1)));
/// assert_eq!(scheduler.start_next(), Some(NodeId::new(0)));
/// assert_eq!(scheduler.start_next(), None); // 2 waits for its inputs
/// scheduler.finished(NodeId::new(1), 8, &mut freed);
/// scheduler.finished(NodeId::new(0), 8, &mut freed);
/// assert_eq!(scheduler.start_next(), Some(NodeId::new(2)));
/// scheduler.finished(NodeId::new(2), 8, &mut freed);
/// assert_eq!(freed, [NodeId::new(0), NodeId::new(1)]); // 2 read both
/// assert!(scheduler.is_done());
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
    ranks: Vec<u32>,
    /// Per scheduling node this executor runs: inputs not yet available.
    pending: Vec<u32>,
    /// Per task: tasks of this executor that read its result and have not
    /// run.
    readers: Vec<u32>,
    /// Per task: the size of its result while it is held.
    bytes: Vec<u64>,
    /// Ready nodes as `rank << 32 | node`, lowest first.
    ready: BinaryHeap<Reverse<u64>>,
    /// Nodes of this executor that have not finished.
    left: usize,
    running: usize,
    tasks_run: usize,
    held: usize,
    peak_held: usize,
    held_bytes: u64,
    peak_bytes: u64,
    window: Option<Window>,
}

/// The bookkeeping of [`SchedulerConfig::window`], by rank.
#[derive(Clone, Debug)]
struct Window {
    limit: usize,
    finished: FixedBitSet,
    /// Started beyond the head when they started; each counts in `ahead`
    /// until the head passes it.
    counted: FixedBitSet,
    /// The lowest rank that has not finished.
    head: usize,
    ahead: usize,
}

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
            window,
        } = *config;
        let n_sched = sched.node_count();
        let n_tasks = data.node_count();
        assert!(n_tasks <= n_sched && needed.len() >= n_sched && ranks.len() >= n_sched);
        let mut runs = FixedBitSet::with_capacity(n_sched);
        runs.extend((0..n_sched).filter(|&i| needed[i] && mine.is_none_or(|mine| mine[i])));
        let mut pending = vec![0_u32; n_sched];
        let mut readers = vec![0_u32; n_tasks];
        let mut ready = BinaryHeap::new();
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
                ready.push(Reverse(rank_of(ranks, node)));
            }
        }
        let left = runs.count_ones(..);
        Scheduler {
            data,
            sched,
            n_tasks,
            window: window.map(|limit| Window {
                limit,
                finished: FixedBitSet::with_capacity(left),
                counted: FixedBitSet::with_capacity(left),
                head: 0,
                ahead: 0,
            }),
            runs,
            ranks: ranks[..n_sched].to_vec(),
            pending,
            readers,
            bytes: vec![0; n_tasks],
            ready,
            left,
            running: 0,
            tasks_run: 0,
            held: 0,
            peak_held: 0,
            held_bytes: 0,
            peak_bytes: 0,
        }
    }

    /// The ready node to run next, lowest rank first, now counted as
    /// running; `None` when no node is ready, or when the window holds the
    /// ready ones back until the head of the order finishes.
    pub fn start_next(&mut self) -> Option<NodeId> {
        let Reverse(key) = *self.ready.peek()?;
        let node = NodeId::from_u32(key as u32);
        let rank = (key >> 32) as usize;
        if let Some(window) = &mut self.window {
            let beyond = rank != window.head;
            // With nothing running, the head of the order cannot be what
            // the others wait for: whatever is ready runs, so that a run
            // never stalls.
            if beyond && window.ahead >= window.limit && self.running > 0 {
                return None;
            }
            if beyond && rank < window.counted.len() {
                window.counted.insert(rank);
                window.ahead += 1;
            }
        }
        self.ready.pop();
        self.running += 1;
        if node.index() < self.n_tasks {
            // Sampled just before the task runs, as dask's diagnostics
            // count it.
            self.peak_held = self.peak_held.max(self.held);
            self.peak_bytes = self.peak_bytes.max(self.held_bytes);
        }
        Some(node)
    }

    /// Records that `node`, which [`Scheduler::start_next`] gave out, has run and
    /// that its result takes `bytes` (ignored for a barrier, and for a
    /// result no task of this executor reads). The results no task of this
    /// executor reads any more are pushed onto `freed`.
    pub fn finished(&mut self, node: NodeId, bytes: u64, freed: &mut Vec<NodeId>) {
        self.running -= 1;
        self.left -= 1;
        let i = node.index();
        if i < self.n_tasks {
            self.tasks_run += 1;
            self.hold(node, bytes);
        }
        if let Some(window) = &mut self.window {
            let rank = self.ranks[i] as usize;
            if rank < window.finished.len() {
                window.finished.insert(rank);
                while window.head < window.finished.len() && window.finished[window.head] {
                    if window.counted[window.head] {
                        window.ahead -= 1;
                    }
                    window.head += 1;
                }
            }
        }
        self.release(node, freed);
        self.make_ready(node);
    }

    /// Records that the result of `node`, computed by another executor, has
    /// arrived and takes `bytes`: the tasks of this executor that wait for
    /// it are one input closer to ready.
    pub fn arrived(&mut self, node: NodeId, bytes: u64) {
        self.hold(node, bytes);
        self.make_ready(node);
    }

    /// Counts `node`'s result as held if some task of this executor reads it.
    fn hold(&mut self, node: NodeId, bytes: u64) {
        let i = node.index();
        if self.readers[i] > 0 {
            self.bytes[i] = bytes;
            self.held += 1;
            self.held_bytes += bytes;
        }
    }

    /// `node` has run: each of its inputs has one reader less, and those
    /// with none left are freed.
    fn release(&mut self, node: NodeId, freed: &mut Vec<NodeId>) {
        if node.index() >= self.n_tasks {
            return;
        }
        let data = self.data;
        for &dep in data.dependencies(node) {
            let d = dep.index();
            self.readers[d] -= 1;
            if self.readers[d] == 0 {
                self.held -= 1;
                self.held_bytes -= self.bytes[d];
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
                    self.ready.push(Reverse(rank_of(&self.ranks, dependent)));
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

    /// Whether [`Scheduler::start_next`] would give a node now.
    pub fn has_next(&self) -> bool {
        let Some(&Reverse(key)) = self.ready.peek() else {
            return false;
        };
        match &self.window {
            Some(window) => {
                let rank = (key >> 32) as usize;
                rank == window.head || window.ahead < window.limit || self.running == 0
            }
            None => true,
        }
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

    /// The most bytes of results held when a task started.
    pub fn peak_bytes(&self) -> u64 {
        self.peak_bytes
    }
}

fn rank_of(ranks: &[u32], node: NodeId) -> u64 {
    (u64::from(ranks[node.index()]) << 32) | u64::from(node.as_u32())
}

/// The order in which one thread runs the needed nodes of `sched` when it
/// always takes the ready node of lowest `priorities` (ties by node id): a
/// rank per scheduling node, `0..m` over the `m` needed nodes (`u32::MAX`
/// for the others), for [`SchedulerConfig::ranks`] with a window.
///
/// Where `priorities` already put every needed node after its dependencies
/// (a static order does), this is their order; otherwise it is the order a
/// one-thread run would follow.
///
/// **Complexity**: O(V log V + E).
pub fn run_order(sched: &Topology, needed: &[bool], priorities: &[u32]) -> Vec<u32> {
    let n = sched.node_count();
    let mut rank = vec![u32::MAX; n];
    let topological = sched.node_ids().all(|node| {
        !needed[node.index()]
            || sched
                .dependencies(node)
                .iter()
                .all(|dep| (priorities[dep.index()], dep) < (priorities[node.index()], &node))
    });
    if topological {
        let mut by: Vec<u32> = (0..n as u32).filter(|&i| needed[i as usize]).collect();
        by.sort_unstable_by_key(|&i| (priorities[i as usize], i));
        for (r, &i) in by.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        return rank;
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
    rank
}
