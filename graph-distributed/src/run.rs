//! `run`: one task graph over timely dataflow workers, in this process and
//! the others of its cluster. This module starts the workers of a process
//! and gathers what they found; `dataflow` is one worker's timely loop,
//! `worker` its tasks, results and messages.

mod attempt;
mod builder;
mod dataflow;
mod timely_panics;
mod worker;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Instant;

use graph_core::{NodeId, TaskGraph, Topology};
use graph_exec::scheduler::Ranking;
use serde::{Deserialize, Serialize};
use timely::communication::{Allocator, initialize_from};
use timely::worker::{Config as WorkerConfig, Worker};

use graph_transport::{Connected, Monitor, connect};

use crate::prepared::PreparedGraph;
use crate::{CancelHandle, Cluster, Error, ErrorKind, Job, Runner};
pub use attempt::{Attempt, Leftovers, Stopped};
pub use builder::Run;
pub use timely_panics::quiet_timely_panics;
use timely_panics::{broken_connection, disconnection};

/// Why a worker's runner could not be made: any error of the caller's.
pub type RunnerError = Box<dyn std::error::Error + Send + Sync>;

/// Makes the runner of one worker: given the graph and the worker's index,
/// a runner, or why none can be made.
pub type MakeRunner<V> = dyn for<'g> Fn(&'g TaskGraph, usize) -> Result<Box<dyn Runner<Value = V> + 'g>, RunnerError>
    + Send
    + Sync;

/// What a distributed run computed, as worker 0 has it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome<V> {
    /// The requested results, in the job's output order.
    pub values: Vec<(NodeId, V)>,
    /// Every worker's counters, by worker index.
    pub workers: Vec<WorkerStats>,
}

impl<V> Outcome<V> {
    /// Tasks run by all workers.
    pub fn tasks_run(&self) -> usize {
        self.workers.iter().map(|w| w.tasks_run).sum()
    }

    /// Dependencies whose two tasks ran on different workers.
    pub fn cut_edges(&self) -> usize {
        self.workers.iter().map(|w| w.cut_edges).sum()
    }

    /// The producers' sizes summed over the cut edges.
    pub fn transfer_bytes(&self) -> u64 {
        self.workers.iter().map(|w| w.transfer_bytes).sum()
    }

    /// Results sent from one worker to another (one per producer and
    /// receiving worker, however many of its tasks read it).
    pub fn values_sent(&self) -> usize {
        self.workers.iter().map(|w| w.values_sent).sum()
    }
}

/// What one worker did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerStats {
    /// The worker's index.
    pub worker: usize,
    /// Tasks it ran.
    pub tasks_run: usize,
    /// Dependencies from its tasks to tasks of other workers: the edge cut
    /// of the placement, as `graph-assign` counts it, over the tasks run.
    pub cut_edges: usize,
    /// The producers' `size` (1 when unknown) summed over those edges: the
    /// placement's transfer bytes, as `graph-assign` counts them.
    pub transfer_bytes: u64,
    /// Results it sent to other workers (one per result and receiver).
    pub values_sent: usize,
    /// Results requested of it that it sent to worker 0.
    pub outputs_sent: usize,
    /// The most results it held at once for its own tasks.
    pub peak_held: usize,
    /// The most bytes of results it held in memory at once.
    pub peak_bytes: u64,
    /// The bytes of results it wrote to disk under the memory limit.
    pub spilled_bytes: u64,
}

/// [`Run::run`]: a run, or an [`Attempt`] after a loss.
fn run_with<V>(
    prepared: PreparedGraph,
    job: Job,
    cluster: &Cluster,
    make_runner: Arc<MakeRunner<V>>,
    attempt: Option<Attempt<V>>,
    keep: bool,
) -> Result<Option<Outcome<V>>, Stopped<V>>
where
    V: timely::ExchangeData + Clone,
{
    let graph = Arc::clone(prepared.graph());
    let topology = graph.topology()?;
    job.check(&graph, cluster.workers())?;
    let first_worker = cluster.process() * cluster.threads();
    let threads_here = cluster.threads();
    let (needed, values, attempt_topology) = match attempt {
        None => (topology.needed_by(job.outputs())?, Vec::new(), None),
        Some(mut attempt) => {
            let (needed, values) = attempt.split(&graph, &job, first_worker, threads_here)?;
            let topology = attempt.fed_as_sources(topology)?;
            (needed, values, Some(topology))
        }
    };
    let mut is_output = vec![false; graph.len()];
    for node in job.outputs() {
        is_output[node.index()] = true;
    }
    // A run that may go on after a loss tells the other processes what it
    // runs, so that they know it should it be lost.
    let told = (keep && cluster.processes() > 1).then(crate::Progress::new);
    let fingerprint = if cluster.processes() > 1 {
        if let Err(error) = cluster.check_secret() {
            return Err(Error::from(error).into());
        }
        crate::fingerprint::fingerprint(&job, &prepared.digest())
    } else {
        [0; 32]
    };
    let Connected {
        builders,
        comms,
        monitor,
    } = match connect(cluster, fingerprint, told.clone()).map_err(Error::from) {
        Ok(connected) => connected,
        // Nothing ran: what this process holds is what it was to feed in.
        Err(error) if keep && error.kind().is_loss() => {
            let held = values.into_iter().flatten().collect();
            return Err(Stopped {
                error,
                leftovers: Some(Box::new(Leftovers::merge(vec![Leftovers {
                    finished: Vec::new(),
                    held,
                    watch: None,
                }]))),
            });
        }
        Err(error) => return Err(error.into()),
    };
    let threads = builders.len();
    // Which tasks each worker thread of this process runs.
    let mine = (first_worker..first_worker + threads)
        .map(|worker| {
            job.placement()
                .iter()
                .map(|&w| w as usize == worker)
                .collect()
        })
        .collect();
    // Each worker thread follows the order among its own tasks exactly.
    let ranking = Ranking::exact(match job.priorities() {
        Some(priorities) => priorities.to_vec().into(),
        None => (0..graph.len() as u32).collect(),
    });
    let worker_memory_limit = job
        .memory_limit()
        .map(|bytes| bytes / cluster.threads() as u64);
    let (expected_bytes, kinds) = match worker_memory_limit {
        Some(_) => (
            graph.iter().map(|(_, task)| task.size).collect(),
            graph_exec::scheduler::task_kinds(&graph),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let shared = Arc::new(Shared {
        graph,
        job,
        worker_memory_limit,
        expected_bytes,
        kinds,
        needed,
        is_output,
        first_worker,
        mine,
        ranking,
        make_runner,
        attempt_topology,
        keep,
        leftovers: Mutex::new(Vec::new()),
        fed: Mutex::new(values),
        results: Mutex::new((0..threads).map(|_| None).collect()),
        completed: AtomicUsize::new(0),
        failed: CancelHandle::new(),
        ended: (Mutex::new(0), Condvar::new()),
        monitor,
        cancel: cluster.cancel().cloned(),
        progress: cluster.progress().cloned(),
        told,
    });
    let started = Instant::now();
    let guards = {
        let shared = Arc::clone(&shared);
        initialize_from(builders, comms, move |allocator| {
            worker_main(allocator, &shared);
        })
        .map_err(|message| Error::Timely { message })?
    };
    shared.wait_for_workers(threads);
    if let Some(monitor) = &shared.monitor {
        if shared.failed_on_its_own() {
            // Not a loss: the others must stop too, not go on without this
            // process.
            monitor.failing();
        }
        if shared.completed.load(Ordering::SeqCst) == threads {
            // Every worker here saw the whole run end: nothing more is
            // needed of this process, and the others should not take its
            // going for a death.
            monitor.goodbye();
        } else {
            // Workers stopped early: timely's threads must not wait for
            // what will never come.
            monitor.shut_data();
        }
    }
    // Joining also tears down the connections, which panics in timely when
    // one broke; the workers have put their results aside by then. A
    // process that falls silent meanwhile trips the monitor, which shuts
    // the connections down, so this never waits for ever.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(guards.join())));
    let results = std::mem::take(
        &mut *shared
            .results
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    let mut outcome = None;
    let mut first_error: Option<Error> = None;
    for (thread, result) in results.into_iter().enumerate() {
        match result.unwrap_or_else(|| {
            Err(Error::Disconnected {
                detail: format!("worker thread {thread} of this process stopped without a result"),
            })
        }) {
            Ok(Some(found)) => outcome = Some(found),
            Ok(None) => {}
            Err(err) => {
                if first_error
                    .as_ref()
                    .is_none_or(|first| weight(&err) < weight(first))
                {
                    first_error = Some(err);
                }
            }
        }
    }
    let error = match first_error {
        Some(Error::Disconnected { detail }) => broken_connection(
            detail,
            shared.monitor.as_ref(),
            started,
            cluster.addresses(),
        ),
        Some(err) => err,
        None => return Ok(outcome),
    };
    let leftovers = (keep && error.kind().is_loss()).then(|| {
        let mut leftovers = Leftovers::merge(std::mem::take(
            &mut *shared
                .leftovers
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        ));
        leftovers.watch = shared.monitor.as_ref().map(Monitor::watch);
        Box::new(leftovers)
    });
    Err(Stopped { error, leftovers })
}

/// Which error of the workers of a process to report, lowest first: a
/// task's failure says more than the disconnections it causes, an
/// interruption more than what it causes in the others, and a process that
/// is named more than one that is not.
fn weight(err: &Error) -> u8 {
    match err.kind() {
        ErrorKind::Task => 0,
        ErrorKind::Interrupted => 1,
        ErrorKind::Loss | ErrorKind::PeerFailed => 2,
        ErrorKind::Other => 3,
        ErrorKind::Disconnected => 4,
    }
}

/// What the worker threads of one process share.
struct Shared<V> {
    graph: Arc<TaskGraph>,
    job: Job,
    /// Each worker's share of the job's memory limit.
    worker_memory_limit: Option<u64>,
    /// Per task, the size of its result when the graph says (under a
    /// memory limit only).
    expected_bytes: Vec<Option<u64>>,
    /// Per task, its kind (under a memory limit only).
    kinds: Vec<u32>,
    /// Per node: whether the outputs need it.
    needed: Vec<bool>,
    /// Per node: whether it is one of the job's outputs.
    is_output: Vec<bool>,
    /// The index of this process's first worker.
    first_worker: usize,
    /// Per worker thread of this process: whether it runs each node.
    mine: Vec<Vec<bool>>,
    /// Per node: its priority among the ready tasks of its worker.
    ranking: Ranking<'static>,
    make_runner: Arc<MakeRunner<V>>,
    /// In an attempt after a loss, the graph's topology with the fetched
    /// results as sources (they are fed in, not computed: what they were
    /// computed from is not needed).
    attempt_topology: Option<Topology>,
    /// Whether the workers put aside what they hold when another process
    /// is lost ([`Run::run_keeping`]), and what they put aside.
    keep: bool,
    leftovers: Mutex<Vec<Leftovers<V>>>,
    /// Per worker thread of this process: the results it feeds into an
    /// attempt after a loss (taken by the thread when it starts).
    fed: Mutex<FedByThread<V>>,
    /// Per worker thread of this process: its result, once it has one.
    results: Mutex<Vec<Option<WorkerResult<V>>>>,
    /// How many worker threads saw the whole dataflow end (rather than
    /// stopping early).
    completed: AtomicUsize,
    /// Raised when a worker thread of this process fails outside its
    /// tasks: the others stop rather than wait for it.
    failed: CancelHandle,
    /// How many worker threads have ended, and a signal on each end.
    ended: (Mutex<usize>, Condvar),
    /// The heartbeats of a run across processes.
    monitor: Option<Monitor>,
    cancel: Option<CancelHandle>,
    /// Where the tasks run are recorded as they finish, if anywhere.
    progress: Option<crate::Progress>,
    /// Where the tasks run are recorded for the heartbeats to tell the
    /// other processes (leftovers kept across processes).
    told: Option<crate::Progress>,
}

type WorkerResult<V> = Result<Option<Outcome<V>>, Error>;

/// Per worker thread of a process, the results fed into it.
type FedByThread<V> = Vec<Vec<(NodeId, V)>>;

/// The body of one worker thread: runs its share and puts its result aside.
fn worker_main<V: timely::ExchangeData + Clone>(allocator: Allocator, shared: &Shared<V>) {
    let _ended = Ended(&shared.ended);
    let mut worker = Worker::new(WorkerConfig::default(), allocator, Some(Instant::now()));
    let thread = worker.index() % shared.results_len();
    let result = catch_unwind(AssertUnwindSafe(|| dataflow::work(&mut worker, shared)))
        .unwrap_or_else(|payload| {
            // The other workers of this process would wait for this one for
            // ever: they stop at their next look.
            shared.failed.cancel();
            let message = graph_exec::panic_message(&*payload);
            Err(match disconnection(&message) {
                Some(detail) => Error::Disconnected { detail },
                None => Error::WorkerFailed {
                    worker: worker.index(),
                    message,
                },
            })
        });
    shared
        .results
        .lock()
        .unwrap_or_else(PoisonError::into_inner)[thread] = Some(result);
    // Dropping the worker flushes its channels, which panics when a
    // connection broke; the result is already set aside.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(worker)));
}

/// Counts a worker thread as ended when it drops, however it ends.
struct Ended<'a>(&'a (Mutex<usize>, Condvar));

impl Drop for Ended<'_> {
    fn drop(&mut self) {
        let (count, signal) = self.0;
        *count.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        signal.notify_all();
    }
}

/// The key of `node`, or its number where the graph has no such node.
fn graph_key(graph: &TaskGraph, node: NodeId) -> graph_core::Key {
    if node.index() < graph.len() {
        graph.key(node).clone()
    } else {
        graph_core::Key::Int(node.index() as i64)
    }
}

impl<V> Shared<V> {
    /// Puts aside what a worker holds, when the run keeps it.
    fn keep_leftovers(&self, leftovers: impl FnOnce() -> Leftovers<V>) {
        if self.keep {
            self.leftovers
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(leftovers());
        }
    }

    fn results_len(&self) -> usize {
        self.results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Waits until all `threads` worker threads have ended.
    fn wait_for_workers(&self, threads: usize) {
        let (count, signal) = &self.ended;
        let mut ended = count.lock().unwrap_or_else(PoisonError::into_inner);
        while *ended < threads {
            ended = signal.wait(ended).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Whether a worker thread of this process stopped with an error of
    /// its own (a task failed, its runner could not start): not the loss
    /// of another process, another's failure, or an interruption.
    fn failed_on_its_own(&self) -> bool {
        let results = self.results.lock().unwrap_or_else(PoisonError::into_inner);
        results.iter().flatten().any(|result| {
            result
                .as_ref()
                .is_err_and(|err| matches!(err.kind(), ErrorKind::Task | ErrorKind::Other))
        })
    }

    /// Why this process's workers must stop before the run ends, if they
    /// must: a cancel, or another process silent or gone.
    fn stop_reason(&self) -> Option<Error> {
        if self.cancel.as_ref().is_some_and(CancelHandle::is_cancelled) {
            return Some(Error::Interrupted);
        }
        if self.failed.is_cancelled() {
            return Some(Error::Disconnected {
                detail: "another worker thread of this process failed".to_string(),
            });
        }
        let monitor = self.monitor.as_ref()?;
        if monitor.tripped() {
            monitor.problem().map(Error::from)
        } else {
            None
        }
    }
}
