//! `LocalExecutor`: runs a graph on a pool of threads, in the priority order of
//! a static ordering, freeing every intermediate result as soon as it can.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use graph_core::{Dag, Key, NodeId, TaskGraph};

use crate::plan::{OpTime, Plan, Stats, merge_times};
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

/// Stops a run from another thread: no new task starts, running ones finish,
/// and the run returns [`Error::Cancelled`].
#[derive(Clone, Debug, Default)]
pub struct CancelHandle(Arc<AtomicBool>);

impl CancelHandle {
    /// A handle that has not been cancelled.
    pub fn new() -> CancelHandle {
        CancelHandle::default()
    }

    /// Cancels every run that holds this handle.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`CancelHandle::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
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
}

/// Runs task graphs on a pool of threads.
///
/// Ready tasks run in priority order (the static order as tie-breaker, as in
/// dask's local scheduler); a worker that finishes a task runs its best
/// newly-ready dependent itself unless the shared queue holds a better one, and
/// wakes a sleeping worker only when it leaves work in the queue. An
/// intermediate result is freed as soon as its last dependent has run. With one
/// thread the tasks run exactly in priority order, so the peak number of held
/// results is the order's max pressure.
///
/// It matches `dask.threaded.get` / `dask.local.get_async` in what it computes,
/// returns and reports on failure.
///
/// **Complexity**: O((V + E) log V) scheduling work plus the ops' own; O(V)
/// memory beyond the results held.
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
    /// do not fit the graph, [`Error::Unscheduled`] for a schedule that lets a
    /// task start before one of its inputs exists, and [`Error::Cancelled`].
    /// The first failure stops the run: no new task starts, the running ones
    /// finish, and nothing hangs.
    pub fn run<T: TaskValue>(
        &self,
        graph: &TaskGraph,
        registry: &OpRegistry<T>,
        request: &Request,
        options: &RunOptions<'_>,
    ) -> Result<Run<T>, Error> {
        let plan = Plan::new(graph, registry, request)?;
        let sched: &(dyn Dag + Sync) = options.schedule.unwrap_or(plan.topology);
        let n_sched = sched.node_count();
        if n_sched < graph.len() {
            return Err(Error::TopologyTooSmall {
                nodes: n_sched,
                tasks: graph.len(),
            });
        }
        let priority = match options.priorities {
            Some(given) if given.len() != n_sched => {
                return Err(Error::PriorityCount {
                    got: given.len(),
                    expected: n_sched,
                });
            }
            Some(given) => given.to_vec(),
            None => {
                let mut priority = vec![0_u32; n_sched];
                for (i, node) in plan.post_order().into_iter().enumerate() {
                    priority[node.index()] = i as u32;
                }
                priority
            }
        };
        let mut shared = Shared::new(&plan, sched, priority, options);
        shared.n_threads = self.threads.clamp(1, shared.total.max(1));
        if let Some(callbacks) = options.callbacks {
            callbacks.start(shared.total);
        }
        let shared = shared;
        let tallies = std::thread::scope(|scope| {
            let helpers: Vec<_> = (1..shared.n_threads)
                .map(|_| scope.spawn(|| shared.work()))
                .collect();
            let mut tallies = vec![shared.work()];
            tallies.extend(
                helpers
                    .into_iter()
                    .map(|h| h.join().expect("workers catch op panics")),
            );
            tallies
        });
        let error = shared
            .error
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(callbacks) = options.callbacks {
            callbacks.finish(error.is_some());
        }
        if let Some(error) = error {
            return Err(error);
        }
        let values: Vec<Option<T>> = shared
            .slots
            .into_iter()
            .map(|slot| slot.into_inner().unwrap_or_else(PoisonError::into_inner))
            .collect();
        Ok(Run {
            output: plan.shape(request, &values),
            stats: Stats {
                tasks_run: tallies.iter().map(|t| t.tasks_run).sum(),
                peak_held: tallies.iter().map(|t| t.peak_held).max().unwrap_or(0),
                op_times: merge_times(tallies.into_iter().map(|t| t.times)),
            },
        })
    }
}

/// The most tasks a worker takes from the queue at once.
const BATCH: usize = 16;

/// What one worker did: its op timings, tasks run, and the most results it saw
/// held when it started a task.
struct Tally {
    times: Vec<OpTime>,
    tasks_run: usize,
    peak_held: usize,
}

/// The ready queue: ranks (`priority << 32 | node`, lowest first) and how many
/// workers sleep on it.
struct Queue {
    heap: BinaryHeap<Reverse<u64>>,
    idle: usize,
}

struct Shared<'a, 'g, T> {
    plan: &'a Plan<'g, T>,
    sched: &'a (dyn Dag + Sync),
    n_tasks: usize,
    priority: Vec<u32>,
    needed: Vec<bool>,
    /// Per scheduling node: needed scheduling dependencies not yet done.
    waiting: Vec<AtomicU32>,
    /// Per task: needed data dependents that have not yet run.
    readers: Vec<AtomicU32>,
    slots: Vec<Mutex<Option<T>>>,
    queue: Mutex<Queue>,
    wake: Condvar,
    /// The best rank in the queue, `u64::MAX` when it is empty: read without
    /// the lock to decide whether a local task may run first.
    queue_best: AtomicU64,
    total: usize,
    /// Worker threads; when all but one sleep on an empty queue and that one
    /// has nothing to run, the run is over.
    n_threads: usize,
    stop: AtomicBool,
    error: Mutex<Option<Error>>,
    /// Intermediate results held now, changed once per task by its net effect.
    held: AtomicIsize,
    callbacks: Option<&'a dyn Callbacks>,
    cancel: Option<CancelHandle>,
}

impl<'a, 'g, T: TaskValue> Shared<'a, 'g, T> {
    fn new(
        plan: &'a Plan<'g, T>,
        sched: &'a (dyn Dag + Sync),
        priority: Vec<u32>,
        options: &RunOptions<'a>,
    ) -> Self {
        let n_sched = sched.node_count();
        let n_tasks = plan.exprs.len();
        // Needed: every scheduling ancestor of an output.
        let needed = sched.needed_by(&plan.outputs);
        let waiting: Vec<AtomicU32> = (0..n_sched)
            .map(|i| {
                let deps = sched.dependencies(NodeId::new(i));
                AtomicU32::new(deps.iter().filter(|dep| needed[dep.index()]).count() as u32)
            })
            .collect();
        let rank = |i: usize| (u64::from(priority[i]) << 32) | i as u64;
        let heap: BinaryHeap<Reverse<u64>> = (0..n_sched)
            .filter(|&i| needed[i] && waiting[i].load(Ordering::Relaxed) == 0)
            .map(|i| Reverse(rank(i)))
            .collect();
        let queue_best = heap.peek().map_or(u64::MAX, |Reverse(r)| *r);
        let total = needed.iter().filter(|&&n| n).count();
        Shared {
            plan,
            sched,
            n_tasks,
            needed,
            waiting,
            readers: plan
                .data_dependents
                .iter()
                .map(|&n| AtomicU32::new(n))
                .collect(),
            slots: (0..n_tasks).map(|_| Mutex::new(None)).collect(),
            queue: Mutex::new(Queue { heap, idle: 0 }),
            wake: Condvar::new(),
            queue_best: AtomicU64::new(queue_best),
            total,
            n_threads: 1,
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            held: AtomicIsize::new(0),
            callbacks: options.callbacks,
            cancel: options.cancel.clone(),
            priority,
        }
    }

    fn rank(&self, node: NodeId) -> u64 {
        (u64::from(self.priority[node.index()]) << 32) | node.index() as u64
    }

    /// One worker: runs tasks until everything is done or the run stops.
    fn work(&self) -> Tally {
        let mut tally = Tally {
            times: self.plan.op_table(),
            tasks_run: 0,
            peak_held: 0,
        };
        let mut stack = Vec::new();
        let mut ready = Vec::new();
        let mut batch = VecDeque::new();
        let mut next = None;
        loop {
            let Some(rank) = next
                .take()
                .or_else(|| batch.pop_front())
                .or_else(|| self.pop(&mut batch))
            else {
                return tally;
            };
            if self.stop.load(Ordering::Relaxed) {
                return tally;
            }
            if self.cancel.as_ref().is_some_and(CancelHandle::is_cancelled) {
                self.fail(Error::Cancelled);
                return tally;
            }
            let node = NodeId::from_u32(rank as u32);
            if node.index() < self.n_tasks {
                if let Err(error) = self.run_task(node, &mut stack, &mut tally) {
                    self.fail(error);
                    return tally;
                }
            }
            // Dependents whose last scheduling dependency this was.
            ready.clear();
            for &dependent in self.sched.dependents(node) {
                if self.needed[dependent.index()]
                    && self.waiting[dependent.index()].fetch_sub(1, Ordering::AcqRel) == 1
                {
                    ready.push(self.rank(dependent));
                }
            }
            next = self.choose(&mut ready, &mut batch);
        }
    }

    fn run_task(&self, node: NodeId, stack: &mut Vec<T>, tally: &mut Tally) -> Result<(), Error> {
        let i = node.index();
        // Sampled just before the task runs, as dask's diagnostics count it.
        let held_now = self.held.load(Ordering::Relaxed).max(0) as usize;
        tally.peak_held = tally.peak_held.max(held_now);
        let key = self.plan.graph.key(node);
        if let Some(callbacks) = self.callbacks {
            callbacks.pretask(key);
        }
        let mut fetch = |input: NodeId| lock(&self.slots[input.index()]).clone();
        let value = self
            .plan
            .eval(node, &mut fetch, stack, &mut tally.times)
            .map_err(|failure| self.plan.error(node, failure))?;
        if self.plan.data_dependents[i] > 0 || self.plan.is_output[i] {
            *lock(&self.slots[i]) = Some(value);
        }
        let mut net = isize::from(self.plan.data_dependents[i] > 0);
        for &dep in self.plan.topology.dependencies(node) {
            if self.readers[dep.index()].fetch_sub(1, Ordering::AcqRel) == 1 {
                net -= 1;
                if !self.plan.is_output[dep.index()] {
                    lock(&self.slots[dep.index()]).take();
                }
            }
        }
        if net != 0 {
            self.held.fetch_add(net, Ordering::Relaxed);
        }
        tally.tasks_run += 1;
        if let Some(callbacks) = self.callbacks {
            callbacks.posttask(key);
        }
        Ok(())
    }

    /// Picks the task to run next from the newly ready ones, the worker's
    /// batch and the queue, and leaves the rest in the queue, waking sleepers
    /// for them. `None` means: run the batch's first task next.
    fn choose(&self, ready: &mut Vec<u64>, batch: &mut VecDeque<u64>) -> Option<u64> {
        let best_at = (0..ready.len()).min_by_key(|&i| ready[i])?;
        let best = ready.swap_remove(best_at);
        let batch_best = batch.front().copied().unwrap_or(u64::MAX);
        if ready.is_empty() && best < self.queue_best.load(Ordering::Acquire) {
            if best < batch_best {
                return Some(best);
            }
            // The batch is sorted and short: keep it sorted.
            let at = batch.partition_point(|&rank| rank < best);
            batch.insert(at, best);
            return None;
        }
        let mut queue = lock(&self.queue);
        queue.heap.extend(ready.drain(..).map(Reverse));
        queue.heap.push(Reverse(best));
        let chosen = match queue.heap.peek() {
            Some(&Reverse(top)) if top < batch_best => {
                queue.heap.pop();
                Some(top)
            }
            _ => None,
        };
        self.queue_best.store(
            queue.heap.peek().map_or(u64::MAX, |Reverse(r)| *r),
            Ordering::Release,
        );
        let spare = queue.heap.len().min(queue.idle);
        drop(queue);
        for _ in 0..spare {
            self.wake.notify_one();
        }
        chosen
    }

    /// The best queued task, sleeping until there is one; `None` once the run
    /// is over.
    fn pop(&self, batch: &mut VecDeque<u64>) -> Option<u64> {
        let mut queue = lock(&self.queue);
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return None;
            }
            if let Some(Reverse(rank)) = queue.heap.pop() {
                // With several workers, take a share of a long queue at once,
                // so that wide graphs do not pay for the lock on every task.
                // One worker takes one task at a time and so keeps the order.
                if self.n_threads > 1 {
                    let share = (queue.heap.len() / self.n_threads).min(BATCH);
                    batch.extend((0..share).filter_map(|_| queue.heap.pop().map(|Reverse(r)| r)));
                }
                self.queue_best.store(
                    queue.heap.peek().map_or(u64::MAX, |Reverse(r)| *r),
                    Ordering::Release,
                );
                return Some(rank);
            }
            // Nothing queued, nothing in this worker's hands, and every other
            // worker asleep: no task runs or can become ready, so all are done.
            if queue.idle + 1 == self.n_threads {
                self.stop.store(true, Ordering::Relaxed);
                drop(queue);
                self.wake.notify_all();
                return None;
            }
            queue.idle += 1;
            queue = self
                .wake
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.idle -= 1;
        }
    }

    fn fail(&self, error: Error) {
        lock(&self.error).get_or_insert(error);
        self.stop_all();
    }

    fn stop_all(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _queue = lock(&self.queue);
        self.wake.notify_all();
    }
}

/// Locks a mutex; a poisoned one is still usable, since every critical section
/// here leaves its data consistent.
fn lock<U>(mutex: &Mutex<U>) -> std::sync::MutexGuard<'_, U> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
