//! The bounds a scheduler keeps to: the held-results limit drawn from an
//! order's profile, in count or in bytes, and what breaks a memory limit.

use fixedbitset::FixedBitSet;
use graph_core::{Dag, NodeId, Topology};

#[cfg(doc)]
use super::*;
use crate::order::{byte_rise, pressure_rise};

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
/// use graph_exec::scheduler::{HeldLimit, Scheduler, SchedulerConfig, pressure_rise};
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
/// use graph_exec::scheduler::{HeldLimit, Scheduler, SchedulerConfig, byte_rise, pressure_rise};
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
    /// use graph_exec::scheduler::HeldLimit;
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
    /// use graph_exec::scheduler::HeldLimit;
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
/// use graph_exec::scheduler::{OrderProfile, SchedulerConfig};
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
    pub(super) rise: Vec<u32>,
    pub(super) byte_rise: Option<Vec<u64>>,
    pub(super) largest: u64,
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
    /// use graph_exec::scheduler::{HeldLimit, OrderProfile};
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

/// The bookkeeping of [`SchedulerConfig::held_limit`].
#[derive(Clone, Debug)]
pub(super) struct HeldBound<'t> {
    pub(super) limit: usize,
    pub(super) rise: &'t [u32],
    /// Running tasks whose result will be held.
    pub(super) in_flight: usize,
    /// Per rank: whether its node has started.
    pub(super) started: FixedBitSet,
    /// The lowest rank whose node has not started: the order's next task.
    pub(super) head: usize,
    /// Per task: readers of its result (of this executor) that have not
    /// started.
    pub(super) unstarted: Vec<u32>,
    /// Results held whose every remaining reader is running: freed as those
    /// finish, and so no part of what the order holds from its next task on.
    pub(super) doomed: usize,
    /// The bound in bytes, which replaces the count.
    pub(super) bytes: Option<ByteBound<'t>>,
}

impl HeldBound<'_> {
    /// How far the order from its next task would raise the results held.
    pub(super) fn rise_at_head(&self) -> usize {
        self.rise.get(self.head).map_or(0, |&r| r as usize)
    }
}

/// The bookkeeping of a [`ByteLimit`]: [`HeldBound`]'s counts, in bytes.
#[derive(Clone, Debug)]
pub(super) struct ByteBound<'t> {
    pub(super) limit: u64,
    pub(super) rise: &'t [u64],
    /// Measured bytes of the results held (in memory or spilled).
    pub(super) held: u64,
    /// Bytes expected of the running tasks whose result will be held.
    pub(super) in_flight: u64,
    /// Measured bytes of the results held whose every remaining reader is
    /// running.
    pub(super) doomed: u64,
}

impl ByteBound<'_> {
    /// How far the order from its next task, `head`, would raise the bytes
    /// held.
    pub(super) fn rise_at(&self, head: usize) -> u64 {
        self.rise.get(head).copied().unwrap_or(0)
    }
}
