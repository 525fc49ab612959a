//! `TaskFailure`: why a task failed, in the form every executor reports and
//! sends between processes.

use std::any::Any;

use serde::{Deserialize, Serialize};

/// Why a task failed: the op that failed (when the runner knows it), the
/// op's error or panic message, and whether it panicked. Plain data, so that
/// a distributed worker can send it to the others.
///
/// # Example
///
/// ```
/// use graph_exec::TaskFailure;
///
/// let failure = TaskFailure::new("div", "division by zero");
/// assert_eq!((failure.op.as_deref(), failure.panicked), (Some("div"), false));
/// ```
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

    /// A panic caught with [`std::panic::catch_unwind`], in `op` if known:
    /// the message reads `panicked: ` and the panic's own message.
    pub fn panic(op: Option<String>, payload: &(dyn Any + Send)) -> TaskFailure {
        TaskFailure {
            op,
            message: format!("panicked: {}", panic_message(payload)),
            panicked: true,
        }
    }
}

/// The message a panic was raised with (`panic!("...")`'s text), or a note
/// that it had none.
///
/// # Example
///
/// ```
/// let payload = std::panic::catch_unwind(|| panic!("boom")).unwrap_err();
/// assert_eq!(graph_exec::panic_message(&*payload), "boom");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
