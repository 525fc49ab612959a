//! `Progress`: the tasks a process's workers have run, as they run them, for
//! whoever watches the run from outside (the other processes, through the
//! heartbeats, and the `taskgraph` supervisor, which learn from it what a
//! process had done before it was lost).

use std::sync::{Arc, Mutex, PoisonError};

use graph_core::NodeId;

/// A shared list of the tasks the workers of one process have run since it
/// was last taken; give it to a run with
/// [`Cluster::with_progress`](crate::Cluster::with_progress).
///
/// # Example
///
/// ```
/// use graph_core::NodeId;
/// use graph_transport::{Cluster, Progress};
///
/// let progress = Progress::new();
/// let cluster = Cluster::local(1).with_progress(progress.clone());
/// progress.ran(NodeId::new(0)); // as a worker of the run finishes a task
/// assert_eq!(progress.take(), [NodeId::new(0)]);
/// assert!(progress.take().is_empty());
/// # drop(cluster);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Progress(Arc<Mutex<Vec<NodeId>>>);

impl Progress {
    /// An empty list.
    pub fn new() -> Progress {
        Progress::default()
    }

    /// The tasks run since the last call, in the order they finished.
    pub fn take(&self) -> Vec<NodeId> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Records that `node` has run.
    pub fn ran(&self, node: NodeId) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(node);
    }
}

/// Two handles are equal when they share one list.
impl PartialEq for Progress {
    fn eq(&self, other: &Progress) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Progress {}
