//! What workers send each other over timely's exchange channel.

use serde::{Deserialize, Serialize};

use graph_exec::TaskFailure;

use crate::WorkerStats;
use crate::transfer::Piece;

/// A message for worker `to`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Message<V> {
    /// The worker it is for; timely's exchange routes it there.
    pub(crate) to: u32,
    pub(crate) body: Body<V>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Body<V> {
    /// A task's result, for the tasks of worker `to` that read it.
    Value { node: u32, value: V },
    /// A requested result, for worker 0.
    Output { node: u32, value: V },
    /// A piece of a large result (see `transfer`), for the tasks of worker
    /// `to` that read it or, with `output`, a requested one for worker 0.
    Piece(Piece),
    /// Worker `from` has made room for `bytes` more of worker `to`'s
    /// pieces.
    Credit { from: u32, bytes: u64 },
    /// The run stops: a worker failed.
    Abort(Abort),
    /// A worker has run all its tasks (or stopped); its counters, for
    /// worker 0.
    Finished(WorkerStats),
}

/// Why a run stops.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Abort {
    /// A task failed.
    Task {
        node: u32,
        worker: u32,
        failure: TaskFailure,
    },
    /// A worker could not build its runner.
    Runner { worker: u32, message: String },
    /// A result, or a task's inputs and result, does not fit the memory
    /// limit.
    Memory {
        node: u32,
        worker: u32,
        bytes: u64,
        limit: u64,
        with_inputs: bool,
    },
    /// A large result could not be encoded, or its pieces did not make
    /// it up.
    Transfer {
        node: u32,
        worker: u32,
        message: String,
    },
    /// A spilled result that task `node` reads could not be read back.
    ReadBack {
        node: u32,
        input: u32,
        worker: u32,
        message: String,
    },
    /// A result could not be written to disk.
    Spill {
        node: u32,
        worker: u32,
        message: String,
    },
}
