//! The error type of `graph-distributed`.

use std::path::PathBuf;
use std::time::Duration;

use graph_core::Key;

/// Everything that can stop a distributed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph itself is invalid (a missing key or a cycle).
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
    /// The placement does not give one worker per task.
    #[error("the placement names a worker for {placed} tasks, but the graph has {tasks}")]
    PlacementLength {
        /// Entries in the placement.
        placed: usize,
        /// Tasks in the graph.
        tasks: usize,
    },
    /// A task placed on a worker the cluster does not have.
    #[error("task {key} is placed on worker {worker}, but the cluster has {workers} workers")]
    NoSuchWorker {
        /// The task.
        key: Key,
        /// The worker it is placed on.
        worker: u32,
        /// Workers in the cluster (processes x threads).
        workers: usize,
    },
    /// Priorities of the wrong length.
    #[error("{got} priorities given for {tasks} tasks")]
    PriorityCount {
        /// How many were given.
        got: usize,
        /// Tasks in the graph.
        tasks: usize,
    },
    /// A requested node outside the graph.
    #[error("requested node {node} is not in the graph of {tasks} tasks")]
    UnknownOutput {
        /// The node's index.
        node: usize,
        /// Tasks in the graph.
        tasks: usize,
    },
    /// A cluster description that cannot work.
    #[error("bad cluster: {problem}")]
    Cluster {
        /// What is wrong.
        problem: ClusterProblem,
    },
    /// A hostfile that cannot be read or parsed.
    #[error("hostfile {}{}: {problem}", path.display(), line.map(|l| format!(", line {l}")).unwrap_or_default())]
    Hostfile {
        /// The file.
        path: PathBuf,
        /// The line at fault, if one is.
        line: Option<usize>,
        /// What is wrong.
        problem: HostfileProblem,
    },
    /// This process could not listen on its own address.
    #[error("process {process} cannot listen on {address}: {source}")]
    Listen {
        /// This process.
        process: usize,
        /// Its address.
        address: String,
        /// Why not.
        source: std::io::Error,
    },
    /// Another process did not connect in time.
    #[error(
        "process {process} ({address}) did not connect within {} s; is it running?",
        waited.as_secs_f64()
    )]
    ConnectTimeout {
        /// The process that did not connect.
        process: usize,
        /// Its address.
        address: String,
        /// How long this process waited.
        waited: Duration,
    },
    /// A connection that is not another process of this run.
    #[error("connection with {peer}: {problem}")]
    Handshake {
        /// Who connected, as far as known (an address).
        peer: String,
        /// What is wrong.
        problem: HandshakeProblem,
    },
    /// The timely runtime could not start.
    #[error("timely dataflow could not start: {message}")]
    Timely {
        /// Its message.
        message: String,
    },
    /// A worker could not prepare the tasks it runs.
    #[error("worker {worker} could not prepare its tasks: {message}")]
    Runner {
        /// The worker.
        worker: usize,
        /// The runner factory's error, as text: the worker may be in
        /// another process.
        message: String,
    },
    /// A task failed: its op returned an error or panicked.
    #[error(
        "task {key} failed on worker {worker}{}: {message}",
        op.as_ref().map(|op| format!(" in op `{op}`")).unwrap_or_default()
    )]
    Task {
        /// The failing task.
        key: Key,
        /// The op that failed, when the runner knows it.
        op: Option<String>,
        /// The error or panic message.
        message: String,
        /// Whether it panicked rather than returning an error.
        panicked: bool,
        /// The worker that ran it.
        worker: usize,
    },
    /// A result (or a task's inputs with its result) larger than a worker's
    /// share of the memory limit.
    #[error(
        "task {key} on worker {worker}: {} {bytes} bytes, more than the worker's memory limit of {limit} bytes",
        if *with_inputs { "its inputs and result take" } else { "its result takes" }
    )]
    TooLarge {
        /// The task.
        key: Key,
        /// The worker.
        worker: usize,
        /// The bytes that do not fit.
        bytes: u64,
        /// The worker's limit.
        limit: u64,
        /// Whether the task's inputs count in `bytes`.
        with_inputs: bool,
    },
    /// A result could not be written to disk under a memory limit.
    #[error("task {key} on worker {worker}: its result could not be spilled to disk: {message}")]
    Spill {
        /// The task.
        key: Key,
        /// The worker.
        worker: usize,
        /// Why not.
        message: String,
    },
    /// Another process went away (it died, or its connection broke) before
    /// the run finished.
    #[error("lost a process of the run: {detail}")]
    Disconnected {
        /// What the communication layer said.
        detail: String,
    },
}

/// What is wrong with a cluster description.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterProblem {
    /// No process address was given.
    #[error("no process addresses")]
    NoAddresses,
    /// This process's index is not one of the processes.
    #[error("process index {process} is out of range for {processes} processes")]
    ProcessOutOfRange {
        /// The index given.
        process: usize,
        /// How many processes there are.
        processes: usize,
    },
    /// A process was given no worker thread.
    #[error("a process needs at least one thread")]
    NoThreads,
}

/// What is wrong with a hostfile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostfileProblem {
    /// It cannot be read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// A line that is not `host:port`.
    #[error("`{text}` is not host:port")]
    NotHostPort {
        /// The line, trimmed.
        text: String,
    },
    /// It lists no process.
    #[error("it lists no process")]
    Empty,
}

/// Why a connection is not another process of this run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HandshakeProblem {
    /// The connection failed while greeting.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The other side's greeting is not a taskgraph process's.
    #[error("not a taskgraph process (wrong greeting)")]
    WrongGreeting,
    /// The other side runs with another number of processes.
    #[error("it expects {theirs} processes, this process {ours}")]
    ProcessCount {
        /// Its number.
        theirs: u64,
        /// Ours.
        ours: u64,
    },
    /// The other side claims an index it cannot have.
    #[error("it says it is process {process}")]
    WrongProcess {
        /// The index it claims.
        process: u64,
    },
    /// The other side runs another job or graph.
    #[error(
        "process {process} runs a different job or graph (fingerprint {theirs:016x}, this process {ours:016x})"
    )]
    DifferentJob {
        /// Its index.
        process: u64,
        /// Its fingerprint of the job.
        theirs: u64,
        /// Ours.
        ours: u64,
    },
    /// A process connected that should have been dialled, or twice.
    #[error("unexpected connection from process {process}")]
    Unexpected {
        /// Its index.
        process: usize,
    },
}
