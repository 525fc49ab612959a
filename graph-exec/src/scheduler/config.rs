//! What a scheduler is told: which tasks, in what order, within what bounds.

use std::borrow::Cow;

use graph_core::Topology;

#[cfg(doc)]
use super::*;
use super::{HeldLimit, OrderProfile, run_order};

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
    /// [`task_kinds`]: crate::scheduler::task_kinds
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
    /// use graph_exec::scheduler::{Scheduler, SchedulerConfig};
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

/// An order as an executor is given it, for [`Ranking::new`].
#[derive(Clone, Debug)]
pub enum Priorities<'p> {
    /// A priority per scheduling node, lowest first: any numbers, ties
    /// allowed (ranked for several workers by [`run_order`]).
    Any(Cow<'p, [u32]>),
    /// Ranks already, as [`run_order`] gives them: the needed nodes
    /// numbered `0..m`, each after its dependencies.
    Ranks(Cow<'p, [u32]>),
}

/// The ranks an executor's scheduler follows and, where several workers
/// share it, the profile of the order that bounds what they hold: the one
/// way every executor of the workspace turns an order into a
/// [`SchedulerConfig`].
///
/// One worker takes the priorities as they are and runs exactly in their
/// order, so its peak is the order's own and it needs no bound. Several
/// take them as ranks and keep to the order's profile
/// ([`OrderProfile::held_limit`]).
///
/// ```
/// use std::borrow::Cow;
/// use graph_core::Topology;
/// use graph_exec::scheduler::{Priorities, Ranking, Scheduler};
///
/// // Two leaves and their root; the order runs the second leaf first.
/// let topology = Topology::from_edges(3, [(0, 2), (1, 2)])?;
/// let needed = [true; 3];
/// let order = Priorities::Any(Cow::Owned(vec![5, 3, 9]));
/// let ranking = Ranking::new(&topology, &topology, &needed, order, &[], 8, 2)?;
/// assert_eq!(ranking.ranks(), &[1, 0, 2]);
/// let mut scheduler = Scheduler::new(&ranking.config(&topology, &topology, &needed));
/// assert_eq!(scheduler.start_next(&mut Vec::new()).unwrap().map(|n| n.index()), Some(1));
/// # Ok::<(), graph_exec::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Ranking<'p> {
    ranks: Cow<'p, [u32]>,
    profile: Option<OrderProfile>,
    workers: usize,
}

impl<'p> Ranking<'p> {
    /// The ranking of `priorities` (one per node of `sched`) for `workers`
    /// workers, over the data edges of `data`; the profile, for several
    /// workers, weighs each result its `expected_bytes`, else
    /// `unknown_bytes` (see [`OrderProfile::new`]).
    ///
    /// # Errors
    ///
    /// [`Error::PriorityCount`](crate::Error::PriorityCount) where
    /// `priorities` or `needed` do not have one entry per node of `sched`
    /// (for several workers: one follows them as they are).
    pub fn new(
        data: &Topology,
        sched: &Topology,
        needed: &[bool],
        priorities: Priorities<'p>,
        expected_bytes: &[Option<u64>],
        unknown_bytes: u64,
        workers: usize,
    ) -> Result<Ranking<'p>, crate::Error> {
        let ranks = match priorities {
            Priorities::Any(priorities) | Priorities::Ranks(priorities) if workers <= 1 => {
                return Ok(Ranking::exact(priorities));
            }
            Priorities::Ranks(ranks) => ranks,
            Priorities::Any(priorities) => Cow::Owned(run_order(sched, needed, &priorities)?),
        };
        let profile = OrderProfile::new(data, sched, needed, &ranks, expected_bytes, unknown_bytes);
        Ok(Ranking {
            ranks,
            profile: Some(profile),
            workers,
        })
    }

    /// The ranking of one worker, which follows `priorities` (one per
    /// scheduling node, lowest first) exactly, holding what the order
    /// holds: no profile, no bound.
    ///
    /// ```
    /// use graph_exec::scheduler::Ranking;
    ///
    /// let ranking = Ranking::exact(vec![5, 3, 9].into());
    /// assert_eq!(ranking.ranks(), &[5, 3, 9]);
    /// assert!(ranking.profile().is_none());
    /// ```
    pub fn exact(priorities: Cow<'p, [u32]>) -> Ranking<'p> {
        Ranking {
            ranks: priorities,
            profile: None,
            workers: 1,
        }
    }

    /// The ranks, one per scheduling node.
    pub fn ranks(&self) -> &[u32] {
        &self.ranks
    }

    /// The order's profile, where several workers keep to it.
    pub fn profile(&self) -> Option<&OrderProfile> {
        self.profile.as_ref()
    }

    /// A configuration that runs every `needed` node by these ranks,
    /// several workers within the order's profile; set the other fields
    /// afterwards (see [`SchedulerConfig::new`]).
    pub fn config<'a>(
        &'a self,
        data: &'a Topology,
        sched: &'a Topology,
        needed: &'a [bool],
    ) -> SchedulerConfig<'a> {
        let mut config = SchedulerConfig::new(data, sched, needed, &self.ranks);
        config.held_limit = self
            .profile
            .as_ref()
            .map(|profile| profile.held_limit(self.workers));
        config
    }
}
