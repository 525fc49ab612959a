//! `Runner`: what runs a task on a worker, over the caller's ops and values.

use graph_core::NodeId;
use serde::{Deserialize, Serialize};

/// Runs tasks on one worker: the ops and the value type are the caller's.
///
/// Each worker gets its own runner (see [`run`](crate::run)); it is called
/// once per task placed on that worker, after every input of the task has
/// arrived.
///
/// # Example
///
/// A runner whose tasks add up their inputs, plus one:
///
/// ```
/// use graph_core::NodeId;
/// use graph_distributed::{Runner, TaskFailure};
///
/// struct Count;
///
/// impl Runner for Count {
///     type Value = u64;
///
///     fn run(
///         &mut self,
///         node: NodeId,
///         input: &mut dyn FnMut(NodeId) -> Option<u64>,
///     ) -> Result<u64, TaskFailure> {
///         let _ = (node, input);
///         Ok(1)
///     }
/// }
/// ```
pub trait Runner {
    /// What tasks compute and send each other.
    type Value;

    /// Runs `node`'s task; `input` gives the value of each of its
    /// dependencies (all have arrived when `run` is called).
    ///
    /// # Errors
    ///
    /// The task's failure, which stops the whole run.
    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<Self::Value>,
    ) -> Result<Self::Value, TaskFailure>;
}

/// Why a task failed, as its runner tells it; it travels to every worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskFailure {
    /// The op that failed, if the runner knows it.
    pub op: Option<String>,
    /// The error message, or the panic message.
    pub message: String,
    /// Whether the task panicked rather than returning an error.
    pub panicked: bool,
}

impl TaskFailure {
    /// A failure of `op` with `message`.
    pub fn new(op: impl Into<String>, message: impl Into<String>) -> TaskFailure {
        TaskFailure {
            op: Some(op.into()),
            message: message.into(),
            panicked: false,
        }
    }
}
