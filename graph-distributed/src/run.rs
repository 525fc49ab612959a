//! `run`: one task graph over timely dataflow workers, in this process and
//! the others of its cluster.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use graph_core::{Dag, NodeId, TaskGraph, Topology};
use serde::{Deserialize, Serialize};
use timely::communication::{Allocator, initialize_from};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::{Config as WorkerConfig, Worker};

use graph_exec::{ResultStore, Scheduler, SchedulerConfig, TaskFailure};

use crate::cluster::Auth;
use crate::connect::{Connected, connect};
use crate::heartbeat::Monitor;
use crate::message::{Abort, Body, Message};
use crate::prepared::PreparedGraph;
use crate::transfer::{self, Incoming, Outgoing, Piece, Received};
use crate::{CancelHandle, Cluster, Error, Job, Runner};

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

/// Runs `job` on `graph` across the workers of `cluster`, each task on the
/// worker its placement names; every process of the cluster calls `run`
/// with the same graph and job. The graph is an `Arc<TaskGraph>`, or a
/// [`PreparedGraph`] to run one graph several times: across processes, its
/// tasks are then hashed for the job fingerprint once rather than per run.
///
/// Each worker runs its ready tasks lowest priority first and sends each
/// result once to every other worker whose tasks read it (serialized when
/// the worker is in another process); a result is freed as soon as the last
/// task of its worker that reads it has run. The requested results are
/// gathered at worker 0, in process 0.
///
/// # Returns
///
/// In process 0, the [`Outcome`]: the requested values and every worker's
/// counters. In the other processes, `None`.
///
/// # Errors
///
/// Before anything runs: a bad job ([`Error::PlacementLength`],
/// [`Error::NoSuchWorker`], [`Error::PriorityCount`],
/// [`Error::UnknownOutput`]), the graph's own [`Error::Graph`], a cluster
/// of several processes with no secret ([`Error::NoSecret`]), or a cluster
/// that does not come together ([`Error::Listen`], [`Error::ConnectTimeout`],
/// [`Error::Handshake`]: among others, a process with another secret, or
/// another job, [`HandshakeProblem::DifferentJob`](crate::HandshakeProblem::DifferentJob)).
/// While running: the first failing task as [`Error::Task`] (its key, op
/// and worker), in every process; [`Error::Lost`] when another process goes
/// away, [`Error::Silent`] when one sends no heartbeat for the heartbeat
/// timeout, [`Error::Interrupted`] when the cluster's
/// [`CancelHandle`](crate::CancelHandle) is cancelled
/// ([`Cluster::with_cancel`]).
///
/// # Example
///
/// Two workers in this process; the runner's tasks sum their inputs plus one.
///
/// ```
/// use std::sync::Arc;
///
/// use graph_core::{Dag, NodeId, TaskGraph, Term, Topology};
/// use graph_distributed::{Cluster, Job, Runner, run};
/// use graph_exec::TaskFailure;
///
/// struct Count<'g>(&'g Topology);
///
/// impl Runner for Count<'_> {
///     type Value = u64;
///
///     fn run(
///         &mut self,
///         node: NodeId,
///         input: &mut dyn FnMut(NodeId) -> Option<u64>,
///     ) -> Result<u64, TaskFailure> {
///         let inputs = self.0.dependencies(node).iter().map(|&d| input(d).unwrap());
///         Ok(1 + inputs.sum::<u64>())
///     }
/// }
///
/// let graph = Arc::new(
///     TaskGraph::builder()
///         .task("a", Term::lit(1))
///         .task("b", Term::lit(1))
///         .task("c", Term::call("add", [Term::key("a"), Term::key("b")]))
///         .build()?,
/// );
/// let c = graph.node_id(&"c".into()).unwrap();
/// let job = Job::new([c], vec![0, 1, 0]);
/// let outcome = run(graph, job, &Cluster::local(2), |graph, _worker| {
///     Ok(Box::new(Count(graph.topology()?)))
/// })?
/// .expect("process 0 has the outcome");
/// assert_eq!(outcome.values, [(c, 3)]);
/// assert_eq!(outcome.cut_edges(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run<V, F>(
    graph: impl Into<PreparedGraph>,
    job: Job,
    cluster: &Cluster,
    make_runner: F,
) -> Result<Option<Outcome<V>>, Error>
where
    V: timely::ExchangeData + Clone,
    F: for<'g> Fn(&'g TaskGraph, usize) -> Result<Box<dyn Runner<Value = V> + 'g>, RunnerError>
        + Send
        + Sync
        + 'static,
{
    let prepared = graph.into();
    let graph = Arc::clone(prepared.graph());
    let topology = graph.topology()?;
    job.check(&graph, cluster.workers())?;
    let needed = topology.needed_by(job.outputs())?;
    let mut is_output = vec![false; graph.len()];
    for node in job.outputs() {
        is_output[node.index()] = true;
    }
    let fingerprint = if cluster.processes() > 1 {
        if *cluster.auth() == Auth::Unset {
            return Err(Error::NoSecret);
        }
        crate::fingerprint::fingerprint(&job, &prepared.digest())
    } else {
        [0; 32]
    };
    let Connected {
        builders,
        comms,
        monitor,
    } = connect(cluster, fingerprint)?;
    let threads = builders.len();
    // Which tasks each worker thread of this process runs.
    let first_worker = cluster.process() * cluster.threads();
    let mine = (first_worker..first_worker + threads)
        .map(|worker| {
            job.placement()
                .iter()
                .map(|&w| w as usize == worker)
                .collect()
        })
        .collect();
    let ranks = match job.priorities() {
        Some(priorities) => priorities.to_vec(),
        None => (0..graph.len() as u32).collect(),
    };
    let worker_memory_limit = job
        .memory_limit()
        .map(|bytes| bytes / cluster.threads() as u64);
    let expected_bytes = match worker_memory_limit {
        Some(_) => graph.iter().map(|(_, task)| task.size).collect(),
        None => Vec::new(),
    };
    let shared = Arc::new(Shared {
        graph,
        job,
        worker_memory_limit,
        expected_bytes,
        needed,
        is_output,
        first_worker,
        mine,
        ranks,
        make_runner: Box::new(make_runner),
        results: Mutex::new((0..threads).map(|_| None).collect()),
        completed: AtomicUsize::new(0),
        ended: (Mutex::new(0), Condvar::new()),
        monitor,
        cancel: cluster.cancel().cloned(),
    });
    let guards = {
        let shared = Arc::clone(&shared);
        initialize_from(builders, comms, move |allocator| {
            worker_main(allocator, &shared);
        })
        .map_err(|message| Error::Timely { message })?
    };
    shared.wait_for_workers(threads);
    if let Some(monitor) = &shared.monitor {
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
    let tripped = shared.monitor.as_ref().and_then(Monitor::problem);
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
    match first_error {
        // The heartbeats know which process went away; timely does not.
        Some(Error::Disconnected { .. }) if tripped.is_some() => {
            Err(tripped.expect("checked just now"))
        }
        Some(err) => Err(err),
        None => Ok(outcome),
    }
}

/// Which error of the workers of a process to report, lowest first: a
/// task's failure says more than the disconnections it causes, an
/// interruption more than what it causes in the others, and a process that
/// is named more than one that is not.
fn weight(err: &Error) -> u8 {
    match err {
        Error::Task { .. } => 0,
        Error::Interrupted => 1,
        Error::Silent { .. } | Error::Lost { .. } => 2,
        Error::Disconnected { .. } => 4,
        _ => 3,
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
    /// Per node: whether the outputs need it.
    needed: Vec<bool>,
    /// Per node: whether it is one of the job's outputs.
    is_output: Vec<bool>,
    /// The index of this process's first worker.
    first_worker: usize,
    /// Per worker thread of this process: whether it runs each node.
    mine: Vec<Vec<bool>>,
    /// Per node: its priority among the ready tasks of its worker.
    ranks: Vec<u32>,
    make_runner: Box<MakeRunner<V>>,
    /// Per worker thread of this process: its result, once it has one.
    results: Mutex<Vec<Option<WorkerResult<V>>>>,
    /// How many worker threads saw the whole dataflow end (rather than
    /// stopping early).
    completed: AtomicUsize,
    /// How many worker threads have ended, and a signal on each end.
    ended: (Mutex<usize>, Condvar),
    /// The heartbeats of a run across processes.
    monitor: Option<Monitor>,
    cancel: Option<CancelHandle>,
}

type WorkerResult<V> = Result<Option<Outcome<V>>, Error>;

/// The body of one worker thread: runs its share and puts its result aside.
fn worker_main<V: timely::ExchangeData + Clone>(allocator: Allocator, shared: &Shared<V>) {
    let _ended = Ended(&shared.ended);
    let mut worker = Worker::new(WorkerConfig::default(), allocator, Some(Instant::now()));
    let thread = worker.index() % shared.results_len();
    let result =
        catch_unwind(AssertUnwindSafe(|| work(&mut worker, shared))).unwrap_or_else(|payload| {
            Err(Error::Disconnected {
                detail: disconnection(&graph_exec::panic_message(&*payload)),
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

impl<V> Shared<V> {
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

    /// Why this process's workers must stop before the run ends, if they
    /// must: a cancel, or another process silent or gone.
    fn stop_reason(&self) -> Option<Error> {
        if self.cancel.as_ref().is_some_and(CancelHandle::is_cancelled) {
            return Some(Error::Interrupted);
        }
        let monitor = self.monitor.as_ref()?;
        if monitor.tripped() {
            monitor.problem()
        } else {
            None
        }
    }
}

/// The most tasks a worker runs between two looks at its channels.
const BATCH: usize = 256;

/// How long a worker runs tasks between two looks at its channels.
const SLICE: Duration = Duration::from_micros(500);

/// How long an idle worker sleeps before it looks again, at most.
const PARK: Duration = Duration::from_millis(100);

/// One worker's share of the run.
fn work<V: timely::ExchangeData + Clone>(
    worker: &mut Worker,
    shared: &Shared<V>,
) -> WorkerResult<V> {
    let inbox: Rc<RefCell<Vec<Message<V>>>> = Rc::default();
    let mut input: Outbox<V> = InputHandle::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        let inbox = Rc::clone(&inbox);
        scope
            .input_from(&mut input)
            .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                Exchange::new(|message: &Message<V>| u64::from(message.to)),
                "Deliver",
                move |_capability, _info| {
                    move |input, _output| {
                        input.for_each(|_time, data| inbox.borrow_mut().append(data));
                    }
                },
            )
            .probe_with(&probe);
    });

    let graph = &*shared.graph;
    let me = worker.index();
    let mut state = State::new(shared, me, worker.peers());
    let mut runner = match (shared.make_runner)(graph, me) {
        Ok(runner) => Some(runner),
        Err(error) => {
            state.abort(
                Abort::Runner {
                    worker: me as u32,
                    message: error.to_string(),
                },
                &mut input,
            );
            None
        }
    };
    let mut input = Some(input);
    loop {
        if let Some(err) = shared.stop_reason() {
            return Err(err);
        }
        let delivered = std::mem::take(&mut *inbox.borrow_mut());
        for message in delivered {
            state.receive(message, runner.as_deref(), input.as_mut());
        }
        if let (Some(runner), Some(handle)) = (runner.as_mut(), input.as_mut()) {
            state.run_ready(&mut **runner, handle);
        }
        if let Some(handle) = input.as_mut() {
            state.pump(handle);
        }
        if state.unsent
            && let Some(handle) = input.as_mut()
        {
            // Closing an epoch is what pushes the exchange channel's buffers
            // out to their workers.
            let next = handle.time() + 1;
            handle.advance_to(next);
            state.unsent = false;
        }
        if state.finished()
            && let Some(mut handle) = input.take()
        {
            if me != 0 {
                handle.send(Message {
                    to: 0,
                    body: Body::Finished(state.stats()),
                });
            }
            handle.close();
        }
        if probe.done() {
            shared.completed.fetch_add(1, Ordering::SeqCst);
            break;
        }
        if state.has_ready() && input.is_some() {
            worker.step();
        } else {
            worker.step_or_park(Some(PARK));
        }
    }
    runner.take();
    state.into_result()
}

/// The tasks of one worker and the results it holds. Which task runs next
/// and when a result is freed is graph-exec's [`Scheduler`], the executor
/// core every executor of the workspace shares; this adds the messages.
struct State<'s, V> {
    shared: &'s Shared<V>,
    topology: &'s Topology,
    scheduler: Scheduler<'s>,
    me: u32,
    peers: u32,
    /// Per node: its result, while a task of this worker still reads it
    /// (in memory, or spilled to this worker's private directory).
    store: ResultStore<V>,
    /// Results the scheduler freed, to drop.
    freed: Vec<NodeId>,
    /// Results the scheduler chose to spill, to write to disk.
    spill: Vec<NodeId>,
    /// Large results on their way to other workers, in pieces.
    outgoing: Outgoing,
    /// Large results on their way here, in pieces.
    incoming: Incoming,
    /// Per worker: the last node sent to it (plus one), so that a result goes
    /// once to each worker however many of its tasks read it.
    sent_to: Vec<u32>,
    /// Worker 0 only: per output, its value.
    outputs: Vec<Option<V>>,
    /// Worker 0 only: per node, its position among the outputs plus one.
    output_slot: Vec<u32>,
    finished: Vec<Option<WorkerStats>>,
    abort: Option<Abort>,
    /// Whether messages were sent since the epoch last advanced.
    unsent: bool,
    stats: WorkerStats,
}

impl<'s, V: timely::ExchangeData + Clone> State<'s, V> {
    fn new(shared: &'s Shared<V>, me: usize, peers: usize) -> State<'s, V> {
        let graph = &*shared.graph;
        let topology = graph.topology().expect("checked before the run");
        let n = graph.len();
        let mut config = SchedulerConfig::new(topology, topology, &shared.needed, &shared.ranks);
        config.mine = Some(&shared.mine[me - shared.first_worker]);
        config.memory_limit = shared.worker_memory_limit;
        config.expected_bytes = &shared.expected_bytes;
        let scheduler = Scheduler::new(&config);
        let mut state = State {
            shared,
            topology,
            scheduler,
            me: me as u32,
            peers: peers as u32,
            store: ResultStore::new(n),
            freed: Vec::new(),
            spill: Vec::new(),
            outgoing: Outgoing::new(
                me as u32,
                peers,
                shared
                    .worker_memory_limit
                    .map_or(transfer::MAX_WINDOW, transfer::window),
            ),
            incoming: Incoming::new(peers),
            sent_to: vec![0; peers],
            outputs: Vec::new(),
            output_slot: Vec::new(),
            finished: Vec::new(),
            abort: None,
            unsent: false,
            stats: WorkerStats {
                worker: me,
                ..WorkerStats::default()
            },
        };
        if me == 0 {
            let outputs = shared.job.outputs();
            state.outputs = (0..outputs.len()).map(|_| None).collect();
            state.output_slot = vec![0; n];
            for (slot, node) in outputs.iter().enumerate() {
                state.output_slot[node.index()] = slot as u32 + 1;
            }
            state.finished = (0..peers).map(|_| None).collect();
        }
        state
    }

    fn has_ready(&self) -> bool {
        self.abort.is_none() && self.scheduler.has_next()
    }

    /// Whether this worker has nothing left to run, send or (worker 0)
    /// receive: requested results in pieces need its credit to come.
    fn finished(&self) -> bool {
        self.abort.is_some()
            || (self.scheduler.is_done()
                && self.outgoing.is_empty()
                && self.outputs.iter().all(Option::is_some))
    }

    /// Takes in a message: a result for this worker's tasks, a stop, or (at
    /// worker 0) a requested result or another worker's counters. The
    /// runner, where there is one, tells a result's size.
    fn receive(
        &mut self,
        message: Message<V>,
        runner: Option<&dyn Runner<Value = V>>,
        input: Option<&mut Outbox<V>>,
    ) {
        match message.body {
            // After a stop, results are dropped: nothing runs any more. A
            // worker that has closed its input has no task left to read one.
            Body::Value { node, value } => {
                if let Some(input) = input
                    && self.abort.is_none()
                {
                    self.arrived(NodeId::from_u32(node), value, runner, input);
                }
            }
            Body::Piece(piece) => {
                if let Some(input) = input
                    && self.abort.is_none()
                {
                    self.piece(&piece, runner, input);
                }
            }
            Body::Credit { from, bytes } => self.outgoing.granted(from, bytes),
            Body::Abort(abort) => {
                if self.abort.is_none() {
                    self.abort = Some(abort);
                }
            }
            Body::Output { node, value } => {
                let slot = self.output_slot[node as usize];
                self.outputs[slot as usize - 1] = Some(value);
            }
            Body::Finished(stats) => {
                let worker = stats.worker;
                self.finished[worker] = Some(stats);
            }
        }
    }

    /// Takes in the result of `node`, computed by another worker.
    fn arrived(
        &mut self,
        node: NodeId,
        value: V,
        runner: Option<&dyn Runner<Value = V>>,
        input: &mut Outbox<V>,
    ) {
        let bytes = runner.map_or(0, |runner| runner.bytes(node, &value));
        if self.scheduler.reads(node) {
            self.store.put(node, value);
        }
        let arrived = self.scheduler.arrived(node, bytes, &mut self.spill);
        self.settle(arrived, input);
    }

    /// Takes in a piece of a large result: the first reserves room for the
    /// whole under the memory limit, the last decodes it.
    fn piece(
        &mut self,
        piece: &Piece,
        runner: Option<&dyn Runner<Value = V>>,
        input: &mut Outbox<V>,
    ) {
        let Piece {
            node,
            output,
            total,
            ..
        } = *piece;
        let failed = |message: String| Abort::Transfer {
            node,
            worker: self.me,
            message,
        };
        let encoded = match self.incoming.add(piece) {
            Ok(Received::Started) => {
                if !output {
                    let incoming =
                        self.scheduler
                            .incoming(NodeId::from_u32(node), total, &mut self.spill);
                    self.settle(incoming, input);
                }
                return;
            }
            Ok(Received::More) => return,
            Ok(Received::Whole(encoded)) => encoded,
            Err(message) => return self.abort(failed(message), input),
        };
        let Some(runner) = runner else {
            return;
        };
        let value: V = match runner.decode(&encoded) {
            Ok(value) => value,
            Err(err) => {
                return self.abort(failed(format!("its pieces do not decode: {err}")), input);
            }
        };
        drop(encoded);
        if output {
            let slot = self.output_slot[node as usize];
            self.outputs[slot as usize - 1] = Some(value);
        } else {
            self.arrived(NodeId::from_u32(node), value, Some(runner), input);
        }
    }

    /// Grants each worker the credit owed to it, and sends the pieces the
    /// credit lets out, each in an epoch of its own so that timely's
    /// buffers hold one at a time.
    fn pump(&mut self, input: &mut Outbox<V>) {
        for (to, bytes) in self.incoming.take_owed() {
            self.unsent = true;
            input.send(Message {
                to,
                body: Body::Credit {
                    from: self.me,
                    bytes,
                },
            });
        }
        while self.abort.is_none()
            && let Some((to, piece)) = self.outgoing.next_piece()
        {
            input.send(Message {
                to,
                body: Body::Piece(piece),
            });
            let next = input.time() + 1;
            input.advance_to(next);
            self.unsent = false;
        }
        let sending = self.outgoing.queued_bytes();
        self.scheduler.sending(sending, &mut self.spill);
        self.settle(Ok(()), input);
    }

    /// Runs ready tasks for a slice of time, sending their results.
    fn run_ready(&mut self, runner: &mut dyn Runner<Value = V>, input: &mut Outbox<V>) {
        let started = Instant::now();
        let mut ran = 0;
        while self.abort.is_none() {
            let next = self.scheduler.start_next(&mut self.spill);
            let Some(node) = self.settle(next, input).flatten() else {
                break;
            };
            self.run_task(node, runner, input);
            ran += 1;
            // Results go out only when the worker next looks at its
            // channels: after a slow task at once, so that the workers that
            // wait for it never wait on this worker's next tasks as well.
            if ran >= BATCH || started.elapsed() > SLICE {
                break;
            }
        }
    }

    fn run_task(
        &mut self,
        node: NodeId,
        runner: &mut dyn Runner<Value = V>,
        input: &mut Outbox<V>,
    ) {
        // Why an input could not be read back from disk, for the error:
        // the runner itself only sees that the input is not there.
        let mut unread: Option<(NodeId, String)> = None;
        let store = &self.store;
        let result = catch_unwind(AssertUnwindSafe(|| {
            runner.run(node, &mut |dep: NodeId| {
                let read = store.get(dep, |file| bincode::deserialize_from(file));
                read.unwrap_or_else(|err| {
                    unread.get_or_insert((dep, err.to_string()));
                    None
                })
            })
        }))
        .unwrap_or_else(|payload| Err(TaskFailure::panic(None, &*payload)));
        let value = match (result, unread) {
            (Ok(value), _) => value,
            (Err(_), Some((missing, message))) => {
                let abort = Abort::ReadBack {
                    node: node.as_u32(),
                    input: missing.as_u32(),
                    worker: self.me,
                    message,
                };
                self.abort(abort, input);
                return;
            }
            (Err(failure), None) => {
                let abort = Abort::Task {
                    node: node.index() as u32,
                    worker: self.me,
                    failure,
                };
                self.abort(abort, input);
                return;
            }
        };
        let bytes = runner.bytes(node, &value);
        // Pieces bound memory; without a limit, a result goes whole.
        let large = self.shared.worker_memory_limit.is_some() && bytes >= transfer::LARGE;
        let mut encoded = Encoded::new(&value, &*runner, large);
        self.send(node, &mut encoded, input);
        if self.output_slot.get(node.index()).is_some_and(|&s| s > 0) {
            let slot = self.output_slot[node.index()] as usize - 1;
            self.outputs[slot] = Some(value.clone());
        } else if self.me != 0 && self.shared.is_output[node.index()] {
            self.stats.outputs_sent += 1;
            self.deliver(node, 0, true, &mut encoded, input);
        }
        drop(encoded);
        let sending = self.outgoing.queued_bytes();
        self.scheduler.sending(sending, &mut self.spill);
        if self.scheduler.reads(node) {
            self.store.put(node, value);
        }
        let finished = self
            .scheduler
            .finished(node, bytes, &mut self.freed, &mut self.spill);
        for freed in self.freed.drain(..) {
            self.store.free(freed);
        }
        self.settle(finished, input);
    }

    /// Carries out what the scheduler decided: writes the results it chose
    /// to spill to disk; a result or task too large for the memory limit,
    /// or a disk that fails, stops the run. Gives back the scheduler's
    /// answer, or `None` once the run stops.
    fn settle<T>(
        &mut self,
        decided: Result<T, graph_exec::Overflow>,
        input: &mut Outbox<V>,
    ) -> Option<T> {
        let decided = match decided {
            Ok(decided) => decided,
            Err(overflow) => {
                let abort = Abort::Memory {
                    node: overflow.node.as_u32(),
                    worker: self.me,
                    bytes: overflow.bytes,
                    limit: overflow.limit,
                    with_inputs: overflow.with_inputs,
                };
                self.abort(abort, input);
                return None;
            }
        };
        for node in std::mem::take(&mut self.spill) {
            let written = self
                .store
                .spill(node, |value, out| bincode::serialize_into(out, value));
            if let Err(err) = written {
                let abort = Abort::Spill {
                    node: node.as_u32(),
                    worker: self.me,
                    message: err.to_string(),
                };
                self.abort(abort, input);
                return None;
            }
        }
        self.stats.spilled_bytes = self.scheduler.spilled_bytes();
        Some(decided)
    }

    /// Sends `node`'s result once to every other worker with a task that
    /// reads it, counting the cut edges.
    fn send(&mut self, node: NodeId, value: &mut Encoded<'_, V>, input: &mut Outbox<V>) {
        let placement = self.shared.job.placement();
        let size = self.shared.graph.task(node).size.unwrap_or(1);
        let stamp = node.index() as u32 + 1;
        for &dependent in self.topology.dependents(node) {
            let i = dependent.index();
            let to = placement[i];
            if !self.shared.needed[i] || to == self.me {
                continue;
            }
            self.stats.cut_edges += 1;
            self.stats.transfer_bytes += size;
            if self.sent_to[to as usize] != stamp {
                self.sent_to[to as usize] = stamp;
                self.stats.values_sent += 1;
                self.deliver(node, to, false, value, input);
            }
        }
    }

    /// Sends `node`'s result to worker `to`, for its tasks or (with
    /// `output`) as a requested result: a small one in a message of its
    /// own, a large one queued to go out in pieces.
    fn deliver(
        &mut self,
        node: NodeId,
        to: u32,
        output: bool,
        value: &mut Encoded<'_, V>,
        input: &mut Outbox<V>,
    ) {
        let node_u32 = node.index() as u32;
        if !value.large {
            let value = value.value.clone();
            let body = if output {
                Body::Output {
                    node: node_u32,
                    value,
                }
            } else {
                Body::Value {
                    node: node_u32,
                    value,
                }
            };
            self.unsent = true;
            input.send(Message { to, body });
            return;
        }
        match value.encoded() {
            Ok(encoded) => self.outgoing.push(to, node_u32, output, encoded),
            Err(message) => {
                let abort = Abort::Transfer {
                    node: node_u32,
                    worker: to,
                    message,
                };
                self.abort(abort, input);
            }
        }
    }

    /// Stops this worker and tells every other one.
    fn abort(&mut self, abort: Abort, input: &mut Outbox<V>) {
        self.outgoing.clear();
        self.incoming.clear();
        for to in (0..self.peers).filter(|&w| w != self.me) {
            input.send(Message {
                to,
                body: Body::Abort(abort.clone()),
            });
            self.unsent = true;
        }
        self.abort = Some(abort);
    }

    /// This worker's counters so far.
    fn stats(&self) -> WorkerStats {
        WorkerStats {
            tasks_run: self.scheduler.tasks_run(),
            peak_held: self.scheduler.peak_held(),
            peak_bytes: self.scheduler.peak_bytes(),
            spilled_bytes: self.scheduler.spilled_bytes(),
            ..self.stats.clone()
        }
    }

    fn into_result(mut self) -> WorkerResult<V> {
        let graph = &*self.shared.graph;
        let stats = self.stats();
        match self.abort.take() {
            Some(Abort::Task {
                node,
                worker,
                failure,
            }) => Err(Error::Task {
                key: graph.key(NodeId::from_u32(node)).clone(),
                op: failure.op,
                message: failure.message,
                panicked: failure.panicked,
                worker: worker as usize,
            }),
            Some(Abort::Runner { worker, message }) => Err(Error::Runner {
                worker: worker as usize,
                message,
            }),
            Some(Abort::Memory {
                node,
                worker,
                bytes,
                limit,
                with_inputs,
            }) => Err(Error::TooLarge {
                key: graph.key(NodeId::from_u32(node)).clone(),
                worker: worker as usize,
                bytes,
                limit,
                with_inputs,
            }),
            Some(Abort::ReadBack {
                node,
                input,
                worker,
                message,
            }) => Err(Error::ReadBack {
                key: graph.key(NodeId::from_u32(node)).clone(),
                input: graph.key(NodeId::from_u32(input)).clone(),
                worker: worker as usize,
                message,
            }),
            Some(Abort::Transfer {
                node,
                worker,
                message,
            }) => Err(Error::Transfer {
                key: graph.key(NodeId::from_u32(node)).clone(),
                worker: worker as usize,
                message,
            }),
            Some(Abort::Spill {
                node,
                worker,
                message,
            }) => Err(Error::Spill {
                key: graph.key(NodeId::from_u32(node)).clone(),
                worker: worker as usize,
                message,
            }),
            None if self.me != 0 => Ok(None),
            None => {
                let outputs = self.shared.job.outputs();
                let mut values = Vec::with_capacity(outputs.len());
                for (node, value) in outputs.iter().zip(self.outputs) {
                    let value = value.ok_or_else(|| Error::Disconnected {
                        detail: format!(
                            "the result of {} never reached worker 0",
                            graph.key(*node)
                        ),
                    })?;
                    values.push((*node, value));
                }
                self.finished[0] = Some(stats);
                let workers = self
                    .finished
                    .into_iter()
                    .enumerate()
                    .map(|(worker, stats)| {
                        stats.ok_or_else(|| Error::Disconnected {
                            detail: format!("worker {worker} never reported its counters"),
                        })
                    })
                    .collect::<Result<_, _>>()?;
                Ok(Some(Outcome { values, workers }))
            }
        }
    }
}

type Outbox<V> = InputHandle<u64, CapacityContainerBuilder<Vec<Message<V>>>>;

/// A result to send, and its encoding once one receiver needs it in pieces
/// (one encoding for all of them).
struct Encoded<'v, V> {
    value: &'v V,
    runner: &'v dyn Runner<Value = V>,
    /// Whether it is large enough to go in pieces.
    large: bool,
    encoded: Option<Arc<Vec<u8>>>,
}

impl<'v, V: serde::Serialize> Encoded<'v, V> {
    fn new(value: &'v V, runner: &'v dyn Runner<Value = V>, large: bool) -> Encoded<'v, V> {
        Encoded {
            value,
            runner,
            large,
            encoded: None,
        }
    }

    fn encoded(&mut self) -> Result<Arc<Vec<u8>>, String> {
        if let Some(encoded) = &self.encoded {
            return Ok(Arc::clone(encoded));
        }
        let encoded = Arc::new(
            self.runner
                .encode(self.value)
                .map_err(|err| format!("it does not encode: {err}"))?,
        );
        self.encoded = Some(Arc::clone(&encoded));
        Ok(encoded)
    }
}

/// What a panic of timely's communication layer means for the run.
fn disconnection(panic: &str) -> String {
    if panic.contains("MergeQueue poisoned") || panic.starts_with("timely communication error") {
        "the connection to another process broke (did it die?)".to_string()
    } else {
        panic.to_string()
    }
}
