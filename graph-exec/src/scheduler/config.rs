//! What a scheduler is told: which tasks, in what order, within what bounds.

use graph_core::Topology;

use super::HeldLimit;
#[cfg(doc)]
use super::*;

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
