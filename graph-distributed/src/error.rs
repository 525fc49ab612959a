//! The error type of `graph-distributed`.

use graph_core::Key;
use graph_transport::ProcessList;

/// Everything that can stop a distributed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph itself is invalid (a missing key or a cycle).
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
    /// The processes could not reach each other, or lost touch: a bad
    /// cluster or hostfile, a failed handshake, a process lost, silent or
    /// failed (see [`Error::kind`]). An interrupt while connecting is
    /// [`Error::Interrupted`], as any other.
    #[error(transparent)]
    Transport(graph_transport::Error),
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
    /// Every process of the run was lost: nothing is left to recover on.
    #[error(
        "every process of the run was lost (processes {}): nothing is left to go on with",
        ProcessList(lost)
    )]
    NoSurvivors {
        /// The lost processes, in order.
        lost: Vec<usize>,
    },
    /// An attempt after a loss places a fetched result on a worker of this
    /// process, which was given no value for it.
    #[error(
        "the attempt fetches the result of {key} from this process, which was given no value for it"
    )]
    MissingResult {
        /// The task whose result is missing.
        key: Key,
    },
    /// A value fed into an attempt for a result the plan does not fetch, or
    /// that the job places on another process.
    #[error("a value was given for {key}, which the attempt does not fetch from this process")]
    MisplacedResult {
        /// The task whose value was given.
        key: Key,
    },
    /// A process named as lost that the run does not have.
    #[error("process {process} is named as lost, but the run has {processes} processes")]
    NoSuchProcess {
        /// The process named.
        process: usize,
        /// Processes in the run.
        processes: usize,
    },
    /// More processes were lost than a run allows
    /// ([`Run::recover`](crate::Run::recover)'s `retries`).
    #[error(
        "process{} {} {} lost: more losses than the {retries} allowed; the run was abandoned",
        if lost.len() == 1 { "" } else { "es" },
        ProcessList(lost),
        if lost.len() == 1 { "was" } else { "were" }
    )]
    TooManyLosses {
        /// The processes lost, by their numbers in the first attempt, in
        /// the order they were lost.
        lost: Vec<usize>,
        /// How many losses were allowed.
        retries: usize,
    },
    /// The run was cancelled ([`Cluster::with_cancel`](crate::Cluster::with_cancel)).
    #[error("the run was interrupted")]
    Interrupted,
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
    /// A result spilled to disk could not be read back for a task that
    /// reads it (its file was removed or damaged).
    #[error(
        "task {key} on worker {worker}: its input {input} could not be read back from disk: {message}"
    )]
    ReadBack {
        /// The task.
        key: Key,
        /// The input.
        input: Key,
        /// The worker.
        worker: usize,
        /// Why not: the file and the error.
        message: String,
    },
    /// A large result could not be sent from one worker to another: it
    /// could not be encoded, the receiver had no memory for it, or its
    /// pieces did not make it up.
    #[error("task {key}: its result could not be sent to worker {worker}: {message}")]
    Transfer {
        /// The task.
        key: Key,
        /// The receiving worker.
        worker: usize,
        /// Why not.
        message: String,
    },
    /// A worker thread failed outside its tasks (a panic in the runner's
    /// `bytes`, say); the other workers of its process stop with it.
    #[error("worker {worker} failed: {message}")]
    WorkerFailed {
        /// The worker.
        worker: usize,
        /// The panic's message.
        message: String,
    },
    /// Another process went away (it died, or its connection broke) before
    /// the run finished, and neither the heartbeats nor the threads of the
    /// broken connection said which: where they do, the run ends with
    /// [`transport::Error::Lost`](crate::transport::Error::Lost) (or what the heartbeats found) instead.
    #[error("lost a process of the run: {detail}")]
    Disconnected {
        /// What the communication layer said.
        detail: String,
    },
}

impl From<graph_transport::Error> for Error {
    /// A transport error as the run's: an interrupt or a communication
    /// layer that could not start is the run's own
    /// ([`Error::Interrupted`], [`Error::Timely`]); every other stays
    /// [`Error::Transport`].
    fn from(error: graph_transport::Error) -> Error {
        match error {
            graph_transport::Error::Interrupted => Error::Interrupted,
            graph_transport::Error::Timely { message } => Error::Timely { message },
            error => Error::Transport(error),
        }
    }
}

/// What an [`Error`] means for the run and for the processes that see it:
/// [`Error::kind`] alone decides, for the run's choice of error to report
/// and for recovery after a loss.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A task failed, or a worker outside its tasks: it says the most of
    /// why the run stopped.
    Task,
    /// The run was interrupted.
    Interrupted,
    /// Another process was lost: it died, its connection closed, it went
    /// silent past the heartbeat timeout, or what came from it could not
    /// have come from it. The survivors can go on without it.
    Loss,
    /// Another process stopped with an error of its own, which it reports.
    PeerFailed,
    /// Anything else: the graph, the job, the cluster, a handshake, a
    /// result that does not fit or cannot be sent or spilled.
    Other,
    /// A connection broke with no process named: a loss (the survivors
    /// can go on), which says the least of all.
    Disconnected,
}

impl ErrorKind {
    /// Whether the error is the loss of another process, after which the
    /// survivors can go on.
    pub fn is_loss(self) -> bool {
        matches!(self, ErrorKind::Loss | ErrorKind::Disconnected)
    }
}

impl Error {
    /// What the error means for the run (see [`ErrorKind`]).
    ///
    /// # Example
    ///
    /// ```
    /// use graph_distributed::{Error, ErrorKind};
    ///
    /// let lost = Error::from(graph_transport::Error::Lost { process: 1, address: "h:1".into() });
    /// assert_eq!(lost.kind(), ErrorKind::Loss);
    /// assert!(lost.kind().is_loss());
    /// assert_eq!(Error::Interrupted.kind(), ErrorKind::Interrupted);
    /// assert!(!Error::Interrupted.kind().is_loss());
    /// ```
    pub fn kind(&self) -> ErrorKind {
        use graph_transport::Error as Transport;
        match self {
            Error::Task { .. } | Error::WorkerFailed { .. } => ErrorKind::Task,
            Error::Interrupted => ErrorKind::Interrupted,
            Error::Transport(
                Transport::Lost { .. }
                | Transport::LostWhileConnecting
                | Transport::Silent { .. }
                | Transport::Malformed { .. }
                | Transport::Stalled { .. },
            ) => ErrorKind::Loss,
            Error::Transport(Transport::PeerFailed { .. }) => ErrorKind::PeerFailed,
            Error::Disconnected { .. } => ErrorKind::Disconnected,
            _ => ErrorKind::Other,
        }
    }
}
