//! `LocalExecutor`: runs a graph on a pool of threads, in the priority order of
//! a static ordering, freeing every intermediate result as soon as it can.

use std::borrow::Cow;

use graph_core::{CancelHandle, Dag, Key, NodeId, TaskGraph, Topology};

use crate::plan::{Failure, OpTime, Plan, Stats, merge_times};
use crate::pool::{Pace, Pool, Step, Work};
use crate::scheduler::{Priorities, Ranking, Scheduler};
use crate::store::ResultStore;
use crate::{Error, OpRegistry, Request, Run, TaskValue};

/// Hooks called during a run, as dask's local scheduler calls its callbacks.
///
/// `pretask` and `posttask` run on the worker thread that runs the task, so
/// they must be cheap and thread-safe.
pub trait Callbacks: Sync {
    /// Before any task runs, with the number of tasks that will run.
    fn start(&self, tasks: usize) {
        let _ = tasks;
    }
    /// Just before a task runs.
    fn pretask(&self, key: &Key) {
        let _ = key;
    }
    /// Just after a task has run successfully.
    fn posttask(&self, key: &Key) {
        let _ = key;
    }
    /// After the run, whether it failed or not.
    fn finish(&self, failed: bool) {
        let _ = failed;
    }
}

/// Options of one [`LocalExecutor::run`]; `Default` runs in a depth-first
/// post-order with no callbacks.
#[derive(Clone, Default)]
pub struct RunOptions<'a> {
    /// A priority per node, lowest first (for example a `graph-order` order).
    /// With a `schedule`, one per scheduling node.
    pub priorities: Option<&'a [u32]>,
    /// A scheduling topology to follow instead of the graph's own: its first
    /// `graph.len()` nodes are the graph's tasks, and any further nodes are
    /// barriers that carry no data (see `graph-optimize`'s `insert_barriers`).
    /// Every data dependency of a task must be an ancestor of it here.
    pub schedule: Option<&'a (dyn Dag + Sync)>,
    /// Hooks called during the run.
    pub callbacks: Option<&'a dyn Callbacks>,
    /// A handle that can stop the run.
    pub cancel: Option<CancelHandle>,
    /// Hold at most this many bytes of results in memory. Tasks whose
    /// results would not fit wait while others run (the static form of
    /// dask's queuing of root tasks); where nothing fits, the results the
    /// order needs latest go to a private temporary directory
    /// ([`TaskValue::spill`]) and come back when a task reads them. The
    /// directory is removed when the run ends, however it ends. A result
    /// alone larger than the limit ends the run with [`Error::TooLarge`].
    /// A result's size is [`TaskValue::size_bytes`], else its task's
    /// `size`, else the size of the value type; before it runs, a task's
    /// result is expected to take the largest of the results of its op
    /// measured so far, else its `size`; and where a result comes in
    /// larger than that, results are spilled to get back under the limit
    /// before any further task starts.
    pub memory_limit: Option<u64>,
    /// Under a memory limit, run the first task of each op alone until its
    /// result is measured, so that the limit holds from the first task
    /// whatever the graph's `size`s say (see
    /// [`SchedulerConfig::measure_first`](crate::scheduler::SchedulerConfig)). `false`:
    /// the first tasks start in parallel on their `size`s.
    pub measure_first: bool,
}

/// Runs task graphs on a pool of threads.
///
/// The threads share one [`Scheduler`], the executor core: ready tasks run in
/// priority order (the static order as tie-breaker, as in dask's local
/// scheduler), and an intermediate result is freed as soon as its last
/// dependent has run. Under a memory limit ([`RunOptions::memory_limit`]),
/// tasks wait for room and results spill to disk. With one thread the tasks
/// run exactly in priority order, so the peak held is the order's own: its
/// max pressure `P` in results, its peak bytes `B`. With several, an idle
/// thread starts the ready task of best priority whenever the results held,
/// with those of the running tasks and the room the order needs to go on
/// from its next task, stay within the order's profile ([`OrderProfile`](crate::scheduler::OrderProfile)):
/// where any task has a `size`, `1.1 B` plus one largest expected result
/// per thread, in bytes (held results by their measured sizes, the others
/// by their `size` refined by what their op's results measured); else
/// `1.1 P + 8` results. Past that it starts the order's next task if its
/// result fits, or a task that frees as much as it adds, and waits only
/// where none does ([`HeldLimit`](crate::scheduler::HeldLimit)); ahead of the order, in bytes, the ready
/// task that frees the most bytes goes first. Parallel first, frugal within
/// that: independent chains or a wavefront run side by side, and the
/// results held stay within the bound (in count, plus about one per
/// thread).
///
/// It matches `dask.threaded.get` / `dask.local.get_async` in what it computes,
/// returns and reports on failure.
///
/// **Complexity**: O(V log₆₄ V + E) scheduling work with an order's
/// priorities (or none), O((V + E) log V) with priorities that tie, plus the
/// ops' own;
/// O(V) memory beyond the results held.
///
/// # Example
///
/// ```
/// use graph_core::generate;
/// use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Output, Request, RunOptions};
///
/// let graph = generate::tree(1000, 4); // sums 0..1000
/// let root = graph.keys().last().unwrap().clone();
/// let executor = LocalExecutor::with_threads(2);
/// let run = executor.run(&graph, &OpRegistry::builtins(), &Request::Key(root), &RunOptions::default())?;
/// assert_eq!(run.output, Output::Value(Dynamic::Int(499_500)));
/// # Ok::<(), graph_exec::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LocalExecutor {
    threads: usize,
}

impl Default for LocalExecutor {
    fn default() -> Self {
        LocalExecutor::new()
    }
}

impl LocalExecutor {
    /// An executor with one thread per core.
    pub fn new() -> LocalExecutor {
        LocalExecutor::with_threads(0)
    }

    /// An executor with `threads` threads (0: one per core).
    pub fn with_threads(threads: usize) -> LocalExecutor {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            threads
        };
        LocalExecutor { threads }
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs the tasks `request` needs.
    ///
    /// # Errors
    ///
    /// As [`execute_sequential`](crate::execute_sequential), plus
    /// [`Error::PriorityCount`] and [`Error::TopologyTooSmall`] for options that
    /// do not fit the graph, [`Error::Graph`] for a scheduling topology that
    /// is not a DAG, [`Error::Unscheduled`] for a schedule that lets a task
    /// start before one of its inputs exists, [`Error::Cancelled`], and
    /// under a memory limit [`Error::TooLarge`] and [`Error::Spill`]. The
    /// first failure stops the run: no new task starts, the running ones
    /// finish, nothing hangs, and spilled results are deleted.
    pub fn run<T: TaskValue>(
        &self,
        graph: &TaskGraph,
        registry: &OpRegistry<T>,
        request: &Request,
        options: &RunOptions<'_>,
    ) -> Result<Run<T>, Error> {
        let plan = Plan::new(graph, registry, request)?;
        let sched: Cow<'_, Topology> = match options.schedule {
            Some(schedule) => Topology::checked(schedule)?,
            None => Cow::Borrowed(plan.topology),
        };
        let n_sched = sched.node_count();
        if n_sched < graph.len() {
            return Err(Error::TopologyTooSmall {
                nodes: n_sched,
                tasks: graph.len(),
            });
        }
        let needed: Cow<'_, [bool]> = match options.schedule {
            Some(_) => {
                let needed = sched.needed_by(&plan.outputs)?;
                // A schedule may add barriers before a task, not tasks the
                // request does not need (they were not compiled).
                if let Some(extra) = (0..graph.len()).find(|&i| needed[i] && !plan.needed[i]) {
                    return Err(Error::NotNeeded {
                        key: graph.key(NodeId::new(extra)).clone(),
                    });
                }
                Cow::Owned(needed)
            }
            None => Cow::Borrowed(&plan.needed),
        };
        // The default order (a depth-first post-order numbering the needed
        // tasks 0..m) is already the order one thread runs.
        let default_order = options.priorities.is_none() && options.schedule.is_none();
        let priorities: Cow<'_, [u32]> = match options.priorities {
            Some(given) if given.len() != n_sched => {
                return Err(Error::PriorityCount {
                    got: given.len(),
                    expected: n_sched,
                });
            }
            Some(given) => Cow::Borrowed(given),
            None => {
                let mut priority = vec![u32::MAX; n_sched];
                for (i, node) in plan.post_order().into_iter().enumerate() {
                    priority[node.index()] = i as u32;
                }
                Cow::Owned(priority)
            }
        };
        let total = needed.iter().filter(|&&n| n).count();
        let n_threads = self.threads.clamp(1, total.max(1));
        // Each task's `size`, and its op: what its result is expected to
        // take before it runs, refined by what its op's results measure;
        // read under a memory limit and by a bound in bytes, which needs a
        // size.
        let sized =
            options.memory_limit.is_some() || graph.iter().any(|(_, task)| task.size.is_some());
        let (expected_bytes, kinds): (Vec<Option<u64>>, Vec<u32>) = if sized {
            (
                graph.iter().map(|(_, task)| task.size).collect(),
                plan.kinds(),
            )
        } else {
            (Vec::new(), Vec::new())
        };
        // With one thread the tasks run exactly in priority order. With
        // several, whatever is ready runs, best priority first, while the
        // results held stay within about a tenth of the order's own peak
        // bytes (and one result per thread) of it, or where no size is
        // known of its max pressure (and a few), and within the memory
        // limit.
        let priorities = if default_order {
            Priorities::Ranks(priorities)
        } else {
            Priorities::Any(priorities)
        };
        let ranking = Ranking::new(
            plan.topology,
            &sched,
            &needed,
            priorities,
            &expected_bytes,
            std::mem::size_of::<T>() as u64,
            n_threads,
        )?;
        let mut config = ranking.config(plan.topology, &sched, &needed);
        config.memory_limit = options.memory_limit;
        config.expected_bytes = &expected_bytes;
        config.kinds = &kinds;
        config.measure_first = options.measure_first;
        let shared = Shared {
            plan: &plan,
            pool: Pool::new(State {
                scheduler: Scheduler::new(&config),
                stop: false,
                error: None,
            }),
            store: ResultStore::new(graph.len()),
            batch: if n_threads == 1 { 1 } else { BATCH },
            callbacks: options.callbacks,
            cancel: options.cancel.clone(),
        };
        if let Some(callbacks) = options.callbacks {
            callbacks.start(total);
        }
        let tallies = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..n_threads)
                .map(|_| scope.spawn(|| shared.work_or_fail()))
                .collect();
            let mut tallies = vec![shared.work_or_fail()];
            // A worker's panic is caught in it: joining cannot fail.
            tallies.extend(helpers.into_iter().filter_map(|h| h.join().ok()));
            tallies
        });
        let state = shared.pool.into_inner();
        if let Some(callbacks) = options.callbacks {
            callbacks.finish(state.error.is_some());
        }
        if let Some(error) = state.error {
            return Err(error);
        }
        let values = shared.store.into_values();
        Ok(Run {
            output: plan.shape(request, &values),
            stats: Stats {
                tasks_run: state.scheduler.tasks_run(),
                peak_held: state.scheduler.peak_held(),
                peak_bytes: state.scheduler.peak_bytes(),
                spilled_bytes: state.scheduler.spilled_bytes(),
                op_times: merge_times(tallies),
            },
        })
    }
}

/// The most tasks a worker takes at once, while its tasks are quick (see
/// [`Pace`]).
const BATCH: usize = 4;

/// What the workers share under the pool's lock.
struct State<'t> {
    scheduler: Scheduler<'t>,
    stop: bool,
    error: Option<Error>,
}

impl Work for State<'_> {
    fn is_stopped(&self) -> bool {
        self.stop
    }

    fn stop(&mut self) {
        self.stop = true;
    }

    fn has_next(&self) -> bool {
        self.scheduler.has_next()
    }

    fn is_done(&self) -> bool {
        self.scheduler.is_done()
    }
}

struct Shared<'a, 'g, T> {
    plan: &'a Plan<'g, T>,
    pool: Pool<State<'a>>,
    /// The results, in memory or spilled.
    store: ResultStore<T>,
    batch: usize,
    callbacks: Option<&'a dyn Callbacks>,
    cancel: Option<CancelHandle>,
}

impl<T: TaskValue> Shared<'_, '_, T> {
    /// [`Shared::work`], a panic in it (outside the tasks, which catch
    /// their own) ending the run with [`Error::WorkerPanicked`] and waking
    /// the other workers, which would otherwise wait for it for ever.
    fn work_or_fail(&self) -> Vec<OpTime> {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.work())) {
            Ok(times) => times,
            Err(payload) => {
                let message = crate::panic_message(payload.as_ref());
                let mut state = self.pool.lock();
                self.fail(&mut state, Error::WorkerPanicked { message });
                drop(state);
                self.pool.wake_all();
                self.plan.op_table()
            }
        }
    }

    /// One worker: takes tasks from the scheduler, a few at a time, runs
    /// them, and reports them finished when it takes the next ones, all
    /// under one lock; until everything is done or the run stops.
    fn work(&self) -> Vec<OpTime> {
        let mut times = self.plan.op_table();
        let mut stack = Vec::new();
        let mut taken: Vec<NodeId> = Vec::with_capacity(self.batch);
        let mut done: Vec<(NodeId, u64)> = Vec::with_capacity(self.batch);
        let mut pace = Pace::new(self.batch);
        let mut freed: Vec<NodeId> = Vec::new();
        let mut spill: Vec<NodeId> = Vec::new();
        loop {
            let mut state = self.pool.lock();
            for (node, bytes) in done.drain(..) {
                if let Err(overflow) = state
                    .scheduler
                    .finished(node, bytes, &mut freed, &mut spill)
                {
                    self.fail(&mut state, self.plan.overflow(overflow));
                }
            }
            // Freed before another task can start on the bytes they gave
            // back: dropped after the lock, they would still be alive while
            // another worker ran tasks in their place.
            self.free(&mut freed);
            if let Err(error) = self.spill(&mut spill) {
                self.fail(&mut state, error);
            }
            if self.cancel.as_ref().is_some_and(CancelHandle::is_cancelled) {
                self.fail(&mut state, Error::Cancelled);
            }
            let step = self.pool.next(state, &mut taken, None, |state, taken| {
                while taken.len() < pace.size() {
                    match state.scheduler.start_next(&mut spill) {
                        Ok(Some(node)) => taken.push(node),
                        Ok(None) => break,
                        Err(overflow) => {
                            self.fail(state, self.plan.overflow(overflow));
                            break;
                        }
                    }
                }
                // Spilled under the lock, as results are freed.
                if let Err(error) = self.spill(&mut spill) {
                    self.fail(state, error);
                }
                // Nothing runs and nothing is ready, yet tasks are left:
                // only a schedule that is no DAG of the graph's tasks gets
                // here, and the checked topology rules that out.
                assert!(
                    !taken.is_empty()
                        || state.stop
                        || state.scheduler.is_done()
                        || state.scheduler.running() > 0,
                    "a checked schedule always has a ready task"
                );
                !taken.is_empty() && !state.stop
            });
            let Step::Run { plenty } = step else {
                return times;
            };
            let ran = taken.len();
            for node in taken.drain(..) {
                let bytes = if node.index() < self.plan.graph.len() {
                    match self.run_task(node, &mut stack, &mut times) {
                        Ok(bytes) => bytes,
                        Err(error) => {
                            let mut state = self.pool.lock();
                            self.fail(&mut state, error);
                            drop(state);
                            self.pool.wake_all();
                            return times;
                        }
                    }
                } else {
                    0
                };
                done.push((node, bytes));
            }
            // One thread takes one task at a time, to follow the priorities
            // exactly: it need not time them. Several time each batch where
            // there was more to take.
            pace.ended(ran, plenty);
        }
    }

    /// Records the run's first error and stops it.
    fn fail(&self, state: &mut State<'_>, error: Error) {
        state.error.get_or_insert(error);
        state.stop = true;
    }

    /// Drops the results no task reads any more, and their spill files.
    fn free(&self, freed: &mut Vec<NodeId>) {
        for node in freed.drain(..) {
            if self.plan.is_output[node.index()] {
                continue;
            }
            self.store.free(node);
        }
    }

    /// Writes the results the scheduler chose to disk and drops them from
    /// memory.
    fn spill(&self, nodes: &mut Vec<NodeId>) -> Result<(), Error> {
        for node in nodes.drain(..) {
            self.store
                .spill(node, |value, out| value.spill(out))
                .map_err(|err| self.plan.spill_error(node, err))?;
        }
        Ok(())
    }

    /// The value of `input`, read back from disk if it was spilled; `None`
    /// if it is not there, an error saying why if it cannot be read back.
    fn fetch(&self, input: NodeId) -> Result<Option<T>, String> {
        self.store
            .get(input, |file| T::unspill(file))
            .map_err(|err| err.to_string())
    }

    /// Runs `node`'s task; returns the bytes of its result.
    fn run_task(
        &self,
        node: NodeId,
        stack: &mut Vec<T>,
        times: &mut [OpTime],
    ) -> Result<u64, Error> {
        let i = node.index();
        let key = self.plan.graph.key(node);
        if let Some(callbacks) = self.callbacks {
            callbacks.pretask(key);
        }
        // Why an input could not be read back, for the error: the evaluation
        // itself only sees that the input is not there.
        let mut unread: Option<(NodeId, String)> = None;
        let mut fetch = |input: NodeId| {
            self.fetch(input).unwrap_or_else(|message| {
                unread = Some((input, message));
                None
            })
        };
        let value = self
            .plan
            .eval(node, &mut fetch, stack, times)
            .map_err(|failure| match (unread.take(), &failure) {
                (Some((input, message)), Failure::Unscheduled { input: missing })
                    if input == *missing =>
                {
                    Error::ReadBack {
                        key: key.clone(),
                        input: self.plan.graph.key(input).clone(),
                        message,
                    }
                }
                _ => self.plan.error(node, failure),
            })?;
        let bytes = self.plan.bytes_of(node, &value);
        if self.plan.data_dependents[i] > 0 || self.plan.is_output[i] {
            self.store.put(node, value);
        }
        if let Some(callbacks) = self.callbacks {
            callbacks.posttask(key);
        }
        Ok(bytes)
    }
}
