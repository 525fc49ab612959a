//! The error type of `graph-exec`.

use std::fmt;

use graph_core::Key;

use crate::TaskFailure;

/// An error returned by an op: any error type, boxed.
pub type OpError = Box<dyn std::error::Error + Send + Sync>;

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph itself is invalid (a missing key or a cycle).
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
    /// A requested key is not in the graph.
    #[error("requested key {key} is not in the graph")]
    UnknownKey {
        /// The key.
        key: Key,
    },
    /// The graph calls ops that the registry does not have; nothing was run.
    #[error("unknown ops: {}", MissingOps(missing))]
    MissingOps {
        /// Each missing op with a task that calls it.
        missing: Vec<(String, Key)>,
    },
    /// A task whose body is opaque was needed: it cannot be run.
    #[error("task {key} is opaque (it has only `deps`) and cannot be run")]
    Opaque {
        /// The task.
        key: Key,
    },
    /// A literal that the value type does not accept.
    #[error("task {key}: literal {literal} cannot be converted: {message}")]
    Literal {
        /// The task.
        key: Key,
        /// The literal, in Python's spelling.
        literal: String,
        /// Why not.
        message: String,
    },
    /// A task failed: its op returned an error or panicked.
    #[error("task {key} failed in op `{op}`: {message}")]
    Task {
        /// The failing task.
        key: Key,
        /// The op that failed.
        op: String,
        /// The op's error message, or the panic message.
        message: String,
        /// Whether the op panicked rather than returning an error.
        panicked: bool,
    },
    /// The scheduling topology let a task start before one of its inputs was
    /// computed.
    #[error(
        "task {key} was scheduled before its input {input} was computed: the scheduling topology does not cover the graph's dependencies"
    )]
    Unscheduled {
        /// The task.
        key: Key,
        /// The input that was not ready.
        input: Key,
    },
    /// A scheduling topology that does not fit the graph.
    #[error("the scheduling topology has {nodes} nodes, fewer than the graph's {tasks} tasks")]
    TopologyTooSmall {
        /// Nodes of the scheduling topology.
        nodes: usize,
        /// Tasks of the graph.
        tasks: usize,
    },
    /// Priorities of the wrong length.
    #[error("{got} priorities given for {expected} nodes")]
    PriorityCount {
        /// How many were given.
        got: usize,
        /// How many nodes there are.
        expected: usize,
    },
    /// A task the request does not need was asked to run.
    #[error("task {key} is not needed by the request, so it was not compiled")]
    NotNeeded {
        /// The task.
        key: Key,
    },
    /// The run was cancelled through its [`CancelHandle`](graph_core::CancelHandle).
    #[error("the run was cancelled")]
    Cancelled,
    /// A result that nests deeper than the limit every command can print,
    /// send and store.
    #[error("task {key}: its result nests more than {limit} levels deep (lists within lists)")]
    TooDeep {
        /// The task.
        key: Key,
        /// [`graph_core::json::MAX_NESTING`].
        limit: usize,
    },
    /// A result (or a task's inputs with its result) larger than the run's
    /// memory limit.
    #[error(
        "task {key}: {} {bytes} bytes, more than the memory limit of {limit} bytes",
        if *with_inputs { "its inputs and result take" } else { "its result takes" }
    )]
    TooLarge {
        /// The task.
        key: Key,
        /// The bytes that do not fit.
        bytes: u64,
        /// The limit.
        limit: u64,
        /// Whether the task's inputs count in `bytes`.
        with_inputs: bool,
    },
    /// A result could not be written to disk under a memory limit.
    #[error("task {key}: its result could not be spilled to disk: {message}")]
    Spill {
        /// The task.
        key: Key,
        /// Why not.
        message: String,
    },
    /// A worker thread panicked outside any task (a task's panic is
    /// [`Error::Task`]): a bug of the executor, which ends the run rather
    /// than leave the other workers waiting.
    #[error("a worker thread of the run failed: {message}")]
    WorkerPanicked {
        /// The panic's message.
        message: String,
    },
    /// A spilled result could not be read back from disk for a task that
    /// reads it (its file deleted or damaged meanwhile, say).
    #[error("task {key}: its input {input} could not be read back from disk: {message}")]
    ReadBack {
        /// The task.
        key: Key,
        /// The input.
        input: Key,
        /// Which file, and why.
        message: String,
    },
}

impl Error {
    /// What an executor outside this crate reports of a task that
    /// [`CompiledGraph::run_task`](crate::CompiledGraph::run_task) could not
    /// run: the failing op (if an op failed), the message, and whether the
    /// op panicked.
    ///
    /// ```
    /// use graph_exec::{Error, TaskFailure};
    ///
    /// let err = Error::Task {
    ///     key: "x".into(),
    ///     op: "div".into(),
    ///     message: "division by zero".into(),
    ///     panicked: false,
    /// };
    /// assert_eq!(err.into_failure(), TaskFailure::new("div", "division by zero"));
    /// ```
    pub fn into_failure(self) -> TaskFailure {
        match self {
            Error::Task {
                op,
                message,
                panicked,
                ..
            } => TaskFailure {
                op: Some(op),
                message,
                panicked,
            },
            other => TaskFailure {
                op: None,
                message: other.to_string(),
                panicked: false,
            },
        }
    }
}

struct MissingOps<'a>(&'a [(String, Key)]);

impl fmt::Display for MissingOps<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (op, key)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{op}` (called by task {key})")?;
        }
        Ok(())
    }
}
