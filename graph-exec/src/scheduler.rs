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

/// Which tasks one executor runs, in what order it prefers them, and within
/// what bounds.
///
/// `Scheduler::new` takes this plain description; the executor decides it
/// (the local executor runs every needed task, a distributed worker those
/// its placement gives it). The bounds: `held_limit`, the order's profile
/// that several threads keep to (in bytes where sizes are known: see
/// [`HeldLimit`] and [`OrderProfile`]), and `memory_limit`, a ceiling on the
/// bytes in memory; both read what results are expected to take from
/// `expected_bytes` and `kinds`.
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
    /// Bound the results held, counting those of the running tasks, in
    /// bytes where the order's byte profile is known and else in count: see
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
    /// measured. Empty: no hints. Read under a memory limit and under a
    /// [`HeldLimit`] in bytes.
    pub expected_bytes: &'a [Option<u64>],
    /// Per task, its kind (the op its task calls, say: [`task_kinds`]):
    /// results of one kind are taken to be alike, so the result of a task
    /// not yet run is expected to take the largest of those of its kind
    /// measured so far (the largest, not the mean, so that a limit is a
    /// ceiling), else its hint, else the mean of all results measured.
    /// Empty: kinds unknown; a task's hint, else the mean of all results
    /// measured.
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
/// gives them) holds at most its max pressure `P` on one thread, and at
/// most its peak bytes `B` (see [`byte_rise`]). With several, any ready
/// task may start, lowest rank first, while the results held and those of
/// the running tasks stay within the limit, and so do they with how far
/// the order from its first task not started would still raise them (its
/// rise), leaving out the results that only running tasks still read (they
/// go when those finish): running ahead of the order leaves room to go on
/// with it. Past that, a ready task starts only if it is the order's next
/// task and its own result fits the limit, or if it frees at least as much
/// as it adds (inputs no other task reads); where neither is among the
/// first few ready tasks, the executor waits for a running task to finish,
/// and with nothing running the first starts regardless, so that a run
/// never stalls.
///
/// The rule counts results (`limit`, `rise`) unless `bytes` is given; then
/// it weighs them in bytes instead ([`ByteLimit`]): the results held count
/// by their measured sizes, a running task by the bytes its result is
/// expected to take ([`SchedulerConfig::expected_bytes`] refined by
/// [`SchedulerConfig::kinds`]), and so does the task that would start. In
/// bytes, where the order leaves freedom (the task to start is ahead of the
/// order's next one), the ready task among the first few that frees the
/// most bytes starts first, ties by rank.
///
/// With `limit` `1.1 P + 8` ([`HeldLimit::for_threads`]), independent
/// chains and wavefronts run side by side, and the results held stay within
/// the limit plus about one per running task; with a byte limit of
/// `1.1 B` plus one largest result per thread
/// ([`HeldLimit::for_threads_and_bytes`]), the bytes held stay within it as
/// long as no result exceeds what was expected of it.
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
/// config.held_limit = Some(HeldLimit { limit: 3, rise: &rise, bytes: None });
/// let mut scheduler = Scheduler::new(&config);
/// let mut spill = Vec::new();
/// // Both chains start side by side: two results held and running, within
/// // the limit with the order's rise of one.
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(2))));
/// # Ok::<(), graph_core::Error>(())
/// ```
///
/// In bytes:
///
/// ```
/// use graph_core::{NodeId, Topology};
/// use graph_exec::{HeldLimit, Scheduler, SchedulerConfig, byte_rise, pressure_rise};
///
/// // The same two chains, with results of 100 bytes: the order holds 100
/// // at a time. A limit of 110 plus one result per thread (two) lets both
/// // chains start side by side.
/// let topology = Topology::from_edges(4, [(0, 1), (2, 3)])?;
/// let (needed, ranks) = ([true; 4], [0, 1, 2, 3]);
/// let rise = pressure_rise(&topology, &topology, &needed, &ranks);
/// let bytes = byte_rise(&topology, &topology, &needed, &ranks, &[100; 4]);
/// assert_eq!(bytes[0], 100); // the order's peak bytes
/// let held_limit = HeldLimit::for_threads_and_bytes(&rise, &bytes, 100, 2);
/// assert_eq!(held_limit.bytes.map(|b| b.limit), Some(100 + 10 + 2 * 100));
/// let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
/// config.held_limit = Some(held_limit);
/// config.expected_bytes = &[Some(100); 4];
/// let mut scheduler = Scheduler::new(&config);
/// let mut spill = Vec::new();
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
/// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(2))));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HeldLimit<'a> {
    /// The most results held, with those of the running tasks (and, for a
    /// task ahead of the order, with the order's rise from its next task).
    /// Not read when `bytes` is given.
    pub limit: usize,
    /// Per rank, how far the results held rise over their count before that
    /// rank as one thread runs the order on from it (see [`pressure_rise`]);
    /// ranks past its end rise by nothing.
    pub rise: &'a [u32],
    /// The same bound in bytes, which then replaces the count: for an order
    /// whose tasks' sizes are known beforehand. `None`: the bound counts
    /// results.
    pub bytes: Option<ByteLimit<'a>>,
}

/// The bound of a [`HeldLimit`] in bytes.
#[derive(Clone, Copy, Debug)]
pub struct ByteLimit<'a> {
    /// The most bytes of results held, with those expected of the running
    /// tasks (and, for a task ahead of the order, with the order's byte
    /// rise from its next task).
    pub limit: u64,
    /// Per rank, how far the bytes held rise over those held before that
    /// rank as one thread runs the order on from it (see [`byte_rise`]);
    /// ranks past its end rise by nothing.
    pub rise: &'a [u64],
}

impl<'a> HeldLimit<'a> {
    /// How many results beyond 1.1 times the order's max pressure several
    /// threads may hold (besides about one per thread).
    pub const SLACK: usize = 8;

    /// The bound an executor of several threads keeps where sizes are
    /// unknown: `1.1 P + 8` results, with `P` the order's max pressure,
    /// `rise[0]` (see [`pressure_rise`]).
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
            bytes: None,
        }
    }

    /// The bound an executor of `threads` threads keeps where sizes are
    /// known: in bytes, `1.1 B` plus `threads` times `largest_result`, with
    /// `B` the order's peak bytes, `byte_rise[0]` (see [`byte_rise`]), and
    /// `largest_result` the most bytes any one task's result is expected to
    /// take; the count bound as [`HeldLimit::for_threads`] gives it (not
    /// read while `bytes` is set).
    ///
    /// ```
    /// use graph_exec::HeldLimit;
    ///
    /// let (rise, byte_rise) = ([2, 1, 0], [4_000, 3_000, 0]);
    /// let bound = HeldLimit::for_threads_and_bytes(&rise, &byte_rise, 1_000, 4);
    /// assert_eq!(bound.bytes.unwrap().limit, 4_000 + 400 + 4 * 1_000);
    /// ```
    pub fn for_threads_and_bytes(
        rise: &'a [u32],
        byte_rise: &'a [u64],
        largest_result: u64,
        threads: usize,
    ) -> HeldLimit<'a> {
        let peak = byte_rise.first().copied().unwrap_or(0);
        let limit = peak
            .saturating_add(peak / 10)
            .saturating_add(largest_result.saturating_mul(threads as u64));
        HeldLimit {
            bytes: Some(ByteLimit {
                limit,
                rise: byte_rise,
            }),
            ..HeldLimit::for_threads(rise)
        }
    }
}

/// What an order holds as one thread runs it, in count and (where its
/// tasks' sizes are known) in bytes: the profile that the [`HeldLimit`] of
/// a run on several threads is drawn from. One constructor for every
/// executor that runs an order on threads (the local one, the Python one).
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_exec::{OrderProfile, SchedulerConfig};
///
/// // 0 and 1 (1 MB each) feed 2 (8 bytes, the default for an unknown size).
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let (needed, ranks) = ([true; 3], [0, 1, 2]);
/// let sizes = [Some(1 << 20), Some(1 << 20), None];
/// let profile = OrderProfile::new(&topology, &topology, &needed, &ranks, &sizes, 8);
/// assert_eq!(profile.rise()[0], 2);
/// assert_eq!(profile.byte_rise().map(|rise| rise[0]), Some(2 << 20));
/// let held_limit = profile.held_limit(4);
/// let bytes = held_limit.bytes.unwrap();
/// assert_eq!(bytes.limit, (2 << 20) + (2 << 20) / 10 + 4 * (1 << 20));
/// // Without sizes, the bound counts results.
/// let profile = OrderProfile::new(&topology, &topology, &needed, &ranks, &[], 8);
/// assert!(profile.byte_rise().is_none() && profile.held_limit(4).bytes.is_none());
/// let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
/// config.held_limit = Some(profile.held_limit(4));
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OrderProfile {
    rise: Vec<u32>,
    byte_rise: Option<Vec<u64>>,
    largest: u64,
}

impl OrderProfile {
    /// The profile of the order `ranks` (numbering the needed nodes of
    /// `sched` `0..m`, every node after its dependencies, as [`run_order`]
    /// gives them) over the data edges of `data`, with each task's result
    /// taking its `expected_bytes` (its `size`), else `unknown_bytes` (what
    /// the executor counts for a result of unknown size). Where no needed
    /// task has an expected size (`expected_bytes` empty, say), the profile
    /// has no bytes and its bound counts results.
    ///
    /// **Complexity**: O(V + E).
    pub fn new(
        data: &Topology,
        sched: &Topology,
        needed: &[bool],
        ranks: &[u32],
        expected_bytes: &[Option<u64>],
        unknown_bytes: u64,
    ) -> OrderProfile {
        let n_tasks = data.node_count();
        let rise = pressure_rise(data, sched, needed, ranks);
        let known =
            (0..n_tasks).any(|i| needed[i] && expected_bytes.get(i).is_some_and(Option::is_some));
        if !known {
            return OrderProfile {
                rise,
                byte_rise: None,
                largest: 0,
            };
        }
        let sizes: Vec<u64> = (0..n_tasks)
            .map(|i| {
                expected_bytes
                    .get(i)
                    .copied()
                    .flatten()
                    .unwrap_or(unknown_bytes)
            })
            .collect();
        let largest = (0..n_tasks)
            .filter(|&i| needed[i])
            .map(|i| sizes[i])
            .max()
            .unwrap_or(0);
        OrderProfile {
            byte_rise: Some(byte_rise(data, sched, needed, ranks, &sizes)),
            rise,
            largest,
        }
    }

    /// Per rank, the order's rise in results held (see [`pressure_rise`]).
    pub fn rise(&self) -> &[u32] {
        &self.rise
    }

    /// Per rank, the order's rise in bytes held (see [`byte_rise`]); `None`
    /// where no task's size is known.
    pub fn byte_rise(&self) -> Option<&[u64]> {
        self.byte_rise.as_deref()
    }

    /// The most bytes any one needed task's result is expected to take (0
    /// where no size is known).
    pub fn largest_result(&self) -> u64 {
        self.largest
    }

    /// The bound a run of the order on `threads` threads keeps: in bytes
    /// where sizes are known ([`HeldLimit::for_threads_and_bytes`]), else in
    /// count ([`HeldLimit::for_threads`]).
    pub fn held_limit(&self, threads: usize) -> HeldLimit<'_> {
        match &self.byte_rise {
            Some(byte_rise) => {
                HeldLimit::for_threads_and_bytes(&self.rise, byte_rise, self.largest, threads)
            }
            None => HeldLimit::for_threads(&self.rise),
        }
    }

    /// The bound of [`OrderProfile::held_limit`] for a run that goes on by
    /// the order from its rank `head` (the ranks before it have started:
    /// see [`Scheduler::resumed_ranks`]), holding `held` results of
    /// `held_bytes` now: drawn from what the order holds from there on, the
    /// results held now plus its rise from `head`, rather than from its
    /// peak over ranks the run has passed.
    ///
    /// ```
    /// use graph_core::Topology;
    /// use graph_exec::{HeldLimit, OrderProfile};
    ///
    /// // 0 and 1 (1 MB each) feed 2: past 0 and 1, nothing more is held.
    /// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
    /// let (needed, ranks) = ([true; 3], [0, 1, 2]);
    /// let sizes = [Some(1 << 20), Some(1 << 20), Some(8)];
    /// let profile = OrderProfile::new(&topology, &topology, &needed, &ranks, &sizes, 8);
    /// let resumed = profile.held_limit_from(2, 2, 1, 1 << 20);
    /// assert_eq!(resumed.limit, 1 + HeldLimit::SLACK);
    /// let bytes = resumed.bytes.unwrap().limit;
    /// assert_eq!(bytes, (1 << 20) + (1 << 20) / 10 + 2 * (1 << 20));
    /// assert!(bytes < profile.held_limit(2).bytes.unwrap().limit);
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn held_limit_from(
        &self,
        threads: usize,
        head: usize,
        held: usize,
        held_bytes: u64,
    ) -> HeldLimit<'_> {
        let mut bound = self.held_limit(threads);
        let pressure = held + self.rise.get(head).map_or(0, |&r| r as usize);
        bound.limit = pressure + pressure / 10 + HeldLimit::SLACK;
        if let (Some(bytes), Some(byte_rise)) = (&mut bound.bytes, &self.byte_rise) {
            let peak = held_bytes.saturating_add(byte_rise.get(head).copied().unwrap_or(0));
            bytes.limit = peak
                .saturating_add(peak / 10)
                .saturating_add(self.largest.saturating_mul(threads as u64));
        }
        bound
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
    /// What the results of tasks not yet run are expected to take: under a
    /// memory limit or a bound in bytes.
    sizes: Option<Sizes<'t>>,
    memory: Option<Memory>,
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
    /// The bound in bytes, which replaces the count.
    bytes: Option<ByteBound<'t>>,
}

impl HeldBound<'_> {
    /// How far the order from its next task would raise the results held.
    fn rise_at_head(&self) -> usize {
        self.rise.get(self.head).map_or(0, |&r| r as usize)
    }
}

/// The bookkeeping of a [`ByteLimit`]: [`HeldBound`]'s counts, in bytes.
#[derive(Clone, Debug)]
struct ByteBound<'t> {
    limit: u64,
    rise: &'t [u64],
    /// Measured bytes of the results held (in memory or spilled).
    held: u64,
    /// Bytes expected of the running tasks whose result will be held.
    in_flight: u64,
    /// Measured bytes of the results held whose every remaining reader is
    /// running.
    doomed: u64,
}

impl ByteBound<'_> {
    /// How far the order from its next task, `head`, would raise the bytes
    /// held.
    fn rise_at(&self, head: usize) -> u64 {
        self.rise.get(head).copied().unwrap_or(0)
    }
}

/// What a scheduler expects of results not yet measured, and what it set
/// aside for the results of the running tasks.
#[derive(Clone, Debug)]
struct Sizes<'t> {
    expected: &'t [Option<u64>],
    /// Per task, its kind (empty: all of kind 0).
    kinds: &'t [u32],
    /// Per kind, the results measured so far and the tasks running.
    by_kind: Vec<Kind>,
    /// All results measured so far, for the mean that stands in where a
    /// kind has none and there is no hint.
    seen: Kind,
    /// Per task, while it runs (or, run elsewhere, while its result is on
    /// its way here): the bytes reserved for its result.
    reserved: Vec<u64>,
    /// Bytes reserved for the results of the running tasks and of those
    /// on their way.
    running_bytes: u64,
}

impl Sizes<'_> {
    /// The kind of task `node`.
    fn kind(&self, node: NodeId) -> usize {
        self.kinds.get(node.index()).map_or(0, |&k| k as usize)
    }

    /// Records a result of `node` of `bytes`, measured.
    fn measured(&mut self, node: NodeId, bytes: u64) {
        self.seen.measured(bytes);
        let kind = self.kind(node);
        self.by_kind[kind].measured(bytes);
    }
}

/// The bookkeeping of [`SchedulerConfig::memory_limit`].
#[derive(Clone, Debug)]
struct Memory {
    limit: u64,
    /// Per task: its held result is on disk.
    spilled: FixedBitSet,
    /// Per task: its result could not be written, and stays in memory.
    unspillable: FixedBitSet,
    /// Bytes of the held results that could not be written: counted in
    /// memory, but left out of the limit, which bounds what can be spilled.
    unspillable_bytes: u64,
    /// Per task: running tasks that read its result (it stays in memory).
    pins: Vec<u32>,
    /// Bytes of results on their way out of this executor, in buffers of
    /// the executor's own ([`Scheduler::sending`]).
    sending: u64,
    measure_first: bool,
    /// Bytes written to disk over the run.
    spilled_bytes: u64,
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

/// What a [`Sizes`] knows of the results of one kind.
#[derive(Clone, Copy, Debug, Default)]
struct Kind {
    /// Bytes of the results measured.
    bytes: u64,
    /// The largest result measured.
    largest: u64,
    /// How many results were measured.
    count: u64,
    /// How many tasks of the kind run now.
    running: u32,
}

impl Kind {
    fn mean(&self) -> Option<u64> {
        self.bytes.checked_div(self.count)
    }

    /// The largest result measured, if any was.
    fn largest(&self) -> Option<u64> {
        (self.count > 0).then_some(self.largest)
    }

    fn measured(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
        self.largest = self.largest.max(bytes);
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

    /// The measured bytes of the inputs of `node` that no other task (running
    /// or not) still reads: what it frees when it has run.
    fn frees_bytes(&self, node: NodeId) -> u64 {
        if node.index() >= self.n_tasks {
            return 0;
        }
        self.data
            .dependencies(node)
            .iter()
            .filter(|dep| self.readers[dep.index()] == 1)
            .map(|dep| self.bytes[dep.index()])
            .sum()
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

    /// The bytes `node`'s result is expected to take: the largest result
    /// of its kind measured so far, else its hint, else the mean of all
    /// results measured.
    fn expected(&self, node: NodeId) -> u64 {
        let Some(sizes) = &self.sizes else {
            return 0;
        };
        if node.index() >= self.n_tasks {
            return 0;
        }
        let measured = if sizes.kinds.is_empty() {
            None
        } else {
            sizes.by_kind[sizes.kind(node)].largest()
        };
        measured
            .or_else(|| sizes.expected.get(node.index()).copied().flatten())
            .or_else(|| sizes.seen.mean())
            .unwrap_or(0)
    }

    /// Whether `node` can start within the memory limit without spilling.
    fn fits(&self, node: NodeId) -> bool {
        let (Some(memory), Some(sizes)) = (&self.memory, &self.sizes) else {
            return true;
        };
        if memory.measure_first && node.index() < self.n_tasks {
            let kind = sizes.by_kind[sizes.kind(node)];
            if kind.count == 0 && kind.running > 0 {
                return false;
            }
        }
        self.limited_bytes() + sizes.running_bytes + memory.sending + self.need(node)
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
        if let Some(sizes) = &mut self.sizes
            && let Some(reserved) = sizes.reserved.get_mut(node.index())
        {
            sizes.running_bytes -= std::mem::take(reserved);
            sizes.measured(node, bytes);
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
        if let Some(sizes) = &mut self.sizes
            && let Some(reserved) = sizes.reserved.get_mut(node.index())
        {
            sizes.running_bytes -= std::mem::replace(reserved, bytes);
            sizes.running_bytes += bytes;
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
            if let Some(bytes_bound) = self.held_limit.as_mut().and_then(|b| b.bytes.as_mut()) {
                bytes_bound.held += bytes;
            }
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

    /// Spills until the results in memory and those the running tasks will
    /// give fit the limit (when they can).
    fn keep_within_limit(&mut self, spill: &mut Vec<NodeId>) {
        let (Some(memory), Some(sizes)) = (&self.memory, &self.sizes) else {
            return;
        };
        let room = memory
            .limit
            .saturating_sub(sizes.running_bytes + memory.sending);
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

    /// How many nodes have started (they may have finished since): the
    /// first rank not started in [`Scheduler::resumed_ranks`].
    pub fn started(&self) -> usize {
        self.started.count_ones(..)
    }

    /// The results held now, in count and in bytes (those in memory and
    /// those spilled).
    pub fn holding(&self) -> (usize, u64) {
        let spilled: u64 = self.memory.as_ref().map_or(0, |memory| {
            memory.spilled.ones().map(|i| self.bytes[i]).sum()
        });
        (self.held, self.held_bytes + spilled)
    }

    /// The ranks that go on with the run by a new order: the nodes that
    /// have started keep their places, first, by their ranks now; every
    /// other needed node follows by `priorities` (one per scheduling node:
    /// a new order of the graph, made from what the run has learned), each
    /// after its dependencies. For [`Scheduler::reorder`], and with
    /// [`OrderProfile::new`] for the bound drawn from them.
    ///
    /// # Errors
    ///
    /// [`crate::Error::PriorityCount`] when `needed` or `priorities` does
    /// not have one entry per scheduling node.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    /// use graph_exec::{Scheduler, SchedulerConfig};
    ///
    /// // Three chains 0 -> 1, 2 -> 3, 4 -> 5, ranked one after another.
    /// let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)])?;
    /// let (needed, ranks) = ([true; 6], [0, 1, 2, 3, 4, 5]);
    /// let config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
    /// let mut scheduler = Scheduler::new(&config);
    /// let (mut freed, mut spill) = (Vec::new(), Vec::new());
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(0))));
    /// scheduler.finished(NodeId::new(0), 8, &mut freed, &mut spill).unwrap();
    /// // A new order would run the last chain first: 0 keeps its place.
    /// let resumed = scheduler.resumed_ranks(&needed, &[4, 5, 2, 3, 0, 1])?;
    /// assert_eq!(resumed, [0, 5, 3, 4, 1, 2]);
    /// scheduler.reorder(&resumed, None);
    /// assert_eq!(scheduler.start_next(&mut spill), Ok(Some(NodeId::new(4))));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resumed_ranks(
        &self,
        needed: &[bool],
        priorities: &[u32],
    ) -> Result<Vec<u32>, crate::Error> {
        let n = self.sched.node_count();
        for got in [priorities.len(), needed.len()] {
            if got != n {
                return Err(crate::Error::PriorityCount { got, expected: n });
            }
        }
        // The started nodes' ranks are below the count of nodes; the others
        // go past all of them, by their new priorities (ties by node id).
        let offset = u64::try_from(n).unwrap_or(u64::MAX);
        let keyed: Vec<u64> = (0..n)
            .map(|i| {
                if self.started.contains(i) {
                    u64::from(self.ranks[i]).min(offset - 1)
                } else {
                    offset + u64::from(priorities[i])
                }
            })
            .collect();
        // Narrowed to u32 by their rank among themselves, ties by node id.
        let mut nodes: Vec<u32> = (0..n as u32).collect();
        nodes.sort_unstable_by_key(|&i| (keyed[i as usize], i));
        let mut combined = vec![0_u32; n];
        for (place, &i) in nodes.iter().enumerate() {
            combined[i as usize] = place as u32;
        }
        run_order(self.sched, needed, &combined)
    }

    /// Goes on by a new order: `ranks` (one per scheduling node, as
    /// [`Scheduler::resumed_ranks`] gives them) replace the ranks, the ready
    /// nodes are ranked by them, and a bound on the results held takes
    /// `held_limit`'s limits and rises (drawn from `ranks`: see
    /// [`OrderProfile`]), keeping its measure (count or bytes). What is
    /// held, running and measured stays as it is; `None`, or a run without
    /// a bound, keeps the bound as it is.
    ///
    /// # Panics
    ///
    /// If `ranks` is shorter than the scheduling topology.
    pub fn reorder(&mut self, ranks: &'t [u32], held_limit: Option<HeldLimit<'t>>) {
        let n_sched = self.sched.node_count();
        assert!(ranks.len() >= n_sched, "a rank per scheduling node");
        let mut ready = Vec::new();
        while let Some(key) = self.ready.pop() {
            ready.push(NodeId::from_u32(key as u32));
        }
        self.ranks = &ranks[..n_sched];
        self.ready = Ready::new(&self.runs, self.ranks);
        for node in ready {
            self.ready.push(rank_of(self.ranks, node));
        }
        self.blocked = false;
        if let (Some(bound), Some(new)) = (&mut self.held_limit, held_limit) {
            bound.limit = new.limit;
            bound.rise = new.rise;
            let ranked = bound.started.len();
            bound.started.clear();
            for i in self.started.ones().filter(|&i| self.runs.contains(i)) {
                let rank = self.ranks[i] as usize;
                if rank < ranked {
                    bound.started.insert(rank);
                }
            }
            bound.head = bound.started.zeroes().next().unwrap_or(ranked);
            if let (Some(bytes), Some(new)) = (&mut bound.bytes, new.bytes) {
                bytes.limit = new.limit;
                bytes.rise = new.rise;
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
    rise_by(data, sched, needed, ranks, |_| 1_u32)
}

/// Per rank of an order, how far the bytes of the results held rise over
/// those held before that rank as one thread runs the order on from it:
/// [`pressure_rise`] with each task's result weighing `sizes[task]` bytes
/// (0 past the end of `sizes`), so `rise[0]` is the order's peak bytes. A
/// result is held from its task until its last reader has run, one that no
/// task reads is not held, and barriers hold nothing. For
/// [`ByteLimit::rise`]. With every size 1 it is [`pressure_rise`].
///
/// **Complexity**: O(V + E).
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_exec::byte_rise;
///
/// // 0 (1,000 bytes) and 1 (10 bytes) both feed 2: the order 1, 0, 2 holds
/// // 10 bytes before 0 and 1,010 before 2.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let rise = byte_rise(&topology, &topology, &[true; 3], &[1, 0, 2], &[1_000, 10, 5]);
/// assert_eq!(rise, [1_010, 1_000, 0]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn byte_rise(
    data: &Topology,
    sched: &Topology,
    needed: &[bool],
    ranks: &[u32],
    sizes: &[u64],
) -> Vec<u64> {
    // No sum of the sizes of the held results can overflow.
    let most = u64::MAX / (data.node_count() as u64 + 1);
    rise_by(data, sched, needed, ranks, |i| {
        sizes.get(i).copied().unwrap_or(0).min(most)
    })
}

/// [`pressure_rise`] and [`byte_rise`]: the rise, per rank, of the held
/// results weighed by `weight` (of a task's index).
fn rise_by<W>(
    data: &Topology,
    sched: &Topology,
    needed: &[bool],
    ranks: &[u32],
    weight: impl Fn(usize) -> W,
) -> Vec<W>
where
    W: Copy + Ord + Default + std::ops::AddAssign + std::ops::SubAssign + std::ops::Sub<Output = W>,
{
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
    let mut before: Vec<W> = Vec::with_capacity(m);
    let mut held = W::default();
    for slot in &at {
        before.push(held);
        let Some(node) = slot.filter(|node| node.index() < n_tasks) else {
            continue;
        };
        if readers[node.index()] > 0 {
            held += weight(node.index());
        }
        for dep in data.dependencies(node) {
            readers[dep.index()] -= 1;
            if readers[dep.index()] == 0 {
                held -= weight(dep.index());
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
    use graph_core::{Dag, NodeId, Topology};

    use super::{ByteLimit, HeldLimit, Ready, Scheduler, SchedulerConfig};

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
                bytes: None,
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

    /// A seeded xorshift generator.
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// A random DAG of `n` tasks (edges from lower to higher ids) and, in a
    /// scheduling topology over it, `barriers` further nodes, each after a
    /// few tasks and before a few later ones; every node needed.
    fn random_graph(
        next: &mut impl FnMut() -> u64,
        n: usize,
        barriers: usize,
    ) -> (Topology, Topology) {
        let mut edges = std::collections::BTreeSet::new();
        for j in 1..n {
            for _ in 0..next() % 4 {
                edges.insert(((next() % j as u64) as usize, j));
            }
        }
        let data = Topology::from_edges(n, edges.iter().copied()).unwrap();
        let mut sched_edges = edges.clone();
        for b in 0..barriers {
            let cut = 1 + (next() % (n as u64 - 1)) as usize;
            sched_edges.insert(((next() % cut as u64) as usize, n + b));
            sched_edges.insert((n + b, cut + (next() % (n - cut) as u64) as usize));
        }
        let sched = Topology::from_edges(n + barriers, sched_edges).unwrap();
        (data, sched)
    }

    /// The byte rise by its definition: per rank `r`, the most bytes held
    /// before any rank from `r` on (or after the last), less those held
    /// before `r`, where a result is held before rank `k` if its task's
    /// rank is below `k` and some reader's is not.
    fn byte_rise_by_definition(data: &Topology, ranks: &[u32], sizes: &[u64]) -> Vec<u64> {
        let m = ranks.len();
        let held_before = |k: usize| -> u64 {
            data.node_ids()
                .filter(|&node| {
                    (ranks[node.index()] as usize) < k
                        && data
                            .dependents(node)
                            .iter()
                            .any(|r| ranks[r.index()] as usize >= k)
                })
                .map(|node| sizes[node.index()])
                .sum()
        };
        let before: Vec<u64> = (0..=m).map(held_before).collect();
        (0..m)
            .map(|r| before[r..].iter().max().unwrap() - before[r])
            .collect()
    }

    /// `byte_rise` agrees with its definition on random graphs, orders and
    /// sizes, barriers holding nothing; with every size 1 it is
    /// `pressure_rise`.
    #[test]
    fn byte_rise_is_the_rise_of_the_bytes_held() {
        let mut next = rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..300 {
            let n = 2 + (next() % 30) as usize;
            let barriers = if case % 2 == 0 {
                0
            } else {
                (next() % 4) as usize
            };
            let (data, sched) = random_graph(&mut next, n, barriers);
            let needed = vec![true; n + barriers];
            let priorities: Vec<u32> = (0..n + barriers).map(|_| (next() % 1000) as u32).collect();
            let ranks = super::run_order(&sched, &needed, &priorities).unwrap();
            let sizes: Vec<u64> = (0..n).map(|_| next() % 10_000).collect();
            let rise = super::byte_rise(&data, &sched, &needed, &ranks, &sizes);
            // By definition, over the tasks alone: barriers hold nothing, so
            // their ranks count as ranks at which nothing changes.
            let mut extended = sizes.clone();
            extended.resize(n + barriers, 0);
            let data_ext = Topology::from_edges(
                n + barriers,
                data.node_ids().flat_map(|node| {
                    data.dependents(node)
                        .iter()
                        .map(move |r| (node.index(), r.index()))
                        .collect::<Vec<_>>()
                }),
            )
            .unwrap();
            assert_eq!(
                rise,
                byte_rise_by_definition(&data_ext, &ranks, &extended),
                "case {case}"
            );
            let ones = super::byte_rise(&data, &sched, &needed, &ranks, &vec![1; n]);
            let pressure = super::pressure_rise(&data, &sched, &needed, &ranks);
            assert_eq!(
                ones,
                pressure.iter().map(|&p| u64::from(p)).collect::<Vec<_>>(),
                "case {case}"
            );
        }
    }

    fn next_of(scheduler: &mut Scheduler<'_>) -> Option<usize> {
        scheduler
            .start_next(&mut Vec::new())
            .unwrap()
            .map(NodeId::index)
    }

    /// In bytes, a large result ahead of the order waits where a small one
    /// starts; counting results, both would start.
    #[test]
    fn a_byte_limit_holds_back_large_results() {
        // Three chains, 0 -> 1, 2 -> 3, 4 -> 5, in that order; 0 and 2 give
        // 100 bytes, the others 1.
        let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)]).unwrap();
        let needed = [true; 6];
        let ranks = [0, 1, 2, 3, 4, 5];
        let sizes = [100, 1, 100, 1, 1, 1];
        let expected = sizes.map(Some);
        let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
        let byte_rise = super::byte_rise(&topology, &topology, &needed, &ranks, &sizes);
        assert_eq!(byte_rise, [100, 0, 100, 0, 1, 0]);
        let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
        config.expected_bytes = &expected;
        // Counting, the three chains start side by side.
        config.held_limit = Some(HeldLimit::for_threads(&rise));
        let mut scheduler = Scheduler::new(&config);
        let started: Vec<_> = std::iter::from_fn(|| next_of(&mut scheduler)).collect();
        assert_eq!(started, [0, 2, 4]);
        // In 150 bytes, 2's 100 bytes do not fit beside 0's; 4's one does.
        config.held_limit = Some(HeldLimit {
            bytes: Some(ByteLimit {
                limit: 150,
                rise: &byte_rise,
            }),
            ..HeldLimit::for_threads(&rise)
        });
        let mut scheduler = Scheduler::new(&config);
        let started: Vec<_> = std::iter::from_fn(|| next_of(&mut scheduler)).collect();
        assert_eq!(started, [0, 4]);
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        scheduler
            .finished(NodeId::new(0), 100, &mut freed, &mut spill)
            .unwrap();
        // 1, the order's next task, then 2 once 1 has freed 0's bytes.
        assert_eq!(next_of(&mut scheduler), Some(1));
        assert_eq!(next_of(&mut scheduler), None);
        scheduler
            .finished(NodeId::new(1), 1, &mut freed, &mut spill)
            .unwrap();
        assert_eq!(next_of(&mut scheduler), Some(2));
    }

    /// In bytes, where the order leaves freedom the ready task that frees
    /// the most bytes starts first.
    #[test]
    fn ahead_of_the_order_the_most_freeing_task_goes_first() {
        // 0 (slow) -> 1; 2 -> 4; 3; and 5 gathers 1, 3 and 4. In that order.
        let topology = Topology::from_edges(6, [(0, 1), (2, 4), (1, 5), (3, 5), (4, 5)]).unwrap();
        let needed = [true; 6];
        let ranks = [0, 1, 2, 3, 4, 5];
        let expected = [Some(10), Some(10), Some(100), Some(10), Some(10), Some(10)];
        let sizes = expected.map(Option::unwrap);
        let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
        let byte_rise = super::byte_rise(&topology, &topology, &needed, &ranks, &sizes);
        let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
        config.expected_bytes = &expected;
        config.held_limit = Some(HeldLimit {
            bytes: Some(ByteLimit {
                limit: 1_000,
                rise: &byte_rise,
            }),
            ..HeldLimit::for_threads(&rise)
        });
        let mut scheduler = Scheduler::new(&config);
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        assert_eq!(next_of(&mut scheduler), Some(0));
        // Neither 2 nor 3 frees anything: the order decides.
        assert_eq!(next_of(&mut scheduler), Some(2));
        scheduler
            .finished(NodeId::new(2), 100, &mut freed, &mut spill)
            .unwrap();
        // While 0 runs, 1 waits: 3 and 4 are ahead of the order, and 4
        // frees 2's 100 bytes.
        assert_eq!(next_of(&mut scheduler), Some(4));
        assert_eq!(next_of(&mut scheduler), Some(3));

        // Counting results, the order decides.
        config.held_limit = Some(HeldLimit::for_threads(&rise));
        let mut scheduler = Scheduler::new(&config);
        assert_eq!(next_of(&mut scheduler), Some(0));
        assert_eq!(next_of(&mut scheduler), Some(2));
        scheduler
            .finished(NodeId::new(2), 100, &mut freed, &mut spill)
            .unwrap();
        assert_eq!(next_of(&mut scheduler), Some(3));
    }

    /// Under a memory limit, a result larger than was set aside for it
    /// makes room at once: the results needed latest are spilled to get
    /// back under the limit.
    #[test]
    fn a_result_larger_than_expected_spills_at_once() {
        // 0 and 1 feed 2, expected at 4 bytes each under a limit of 10.
        let topology = Topology::from_edges(3, [(0, 2), (1, 2)]).unwrap();
        let needed = [true; 3];
        let ranks = [0, 1, 2];
        let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
        config.memory_limit = Some(10);
        config.expected_bytes = &[Some(4), Some(4), Some(1)];
        let mut scheduler = Scheduler::new(&config);
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        assert_eq!(next_of(&mut scheduler), Some(0));
        assert_eq!(next_of(&mut scheduler), Some(1));
        // 0 takes 8: with 1's 4 still set aside, 12 would be in memory.
        scheduler
            .finished(NodeId::new(0), 8, &mut freed, &mut spill)
            .unwrap();
        assert_eq!(spill, [NodeId::new(0)]);
        assert_eq!(next_of(&mut scheduler), None);
        spill.clear();
        scheduler
            .finished(NodeId::new(1), 4, &mut freed, &mut spill)
            .unwrap();
        assert!(spill.is_empty());
        assert_eq!(scheduler.peak_bytes(), 8);
    }

    /// A run that goes on by a new order mid-way: the started tasks keep
    /// their places, the rest follow the new order one at a time, and the
    /// held bound's head moves to the new order's first task not started.
    #[test]
    fn a_run_goes_on_by_a_new_order() {
        let topology = Topology::from_edges(6, [(0, 1), (2, 3), (4, 5)]).unwrap();
        let needed = [true; 6];
        let ranks = [0, 1, 2, 3, 4, 5];
        let rise = super::pressure_rise(&topology, &topology, &needed, &ranks);
        let mut config = SchedulerConfig::new(&topology, &topology, &needed, &ranks);
        config.held_limit = Some(HeldLimit::for_threads(&rise));
        let mut scheduler = Scheduler::new(&config);
        let (mut freed, mut spill) = (Vec::new(), Vec::new());
        assert_eq!(next_of(&mut scheduler), Some(0));
        scheduler
            .finished(NodeId::new(0), 8, &mut freed, &mut spill)
            .unwrap();
        assert_eq!(next_of(&mut scheduler), Some(1)); // running while reordered
        let resumed = scheduler
            .resumed_ranks(&needed, &[4, 5, 2, 3, 0, 1])
            .unwrap();
        assert_eq!(resumed, [0, 1, 4, 5, 2, 3]);
        let new_rise = super::pressure_rise(&topology, &topology, &needed, &resumed);
        scheduler.reorder(&resumed, Some(HeldLimit::for_threads(&new_rise)));
        assert_eq!(scheduler.held_limit.as_ref().map(|b| b.head), Some(2));
        let mut ran = Vec::new();
        scheduler
            .finished(NodeId::new(1), 8, &mut freed, &mut spill)
            .unwrap();
        while let Some(node) = next_of(&mut scheduler) {
            ran.push(node);
            scheduler
                .finished(NodeId::new(node), 8, &mut freed, &mut spill)
                .unwrap();
        }
        assert_eq!(ran, [4, 5, 2, 3]);
        assert!(scheduler.is_done() && scheduler.peak_held() <= 1);
    }
}
