//! `Progress`: the tasks a process's workers have run, as they run them, for
//! whoever watches the run from outside (the `taskgraph` supervisor, which
//! learns from it what a process had done before it was lost).

use std::sync::{Arc, Mutex, PoisonError};

use graph_core::NodeId;

/// A shared list of the tasks the workers of one process have run since it
/// was last taken; give it to a run with
/// [`Cluster::with_progress`](crate::Cluster::with_progress).
///
/// # Example
///
/// ```
/// use std::sync::Arc;
///
/// use graph_core::{NodeId, TaskGraph, Term};
/// use graph_distributed::{Cluster, Job, Progress, Runner, run};
/// use graph_exec::TaskFailure;
///
/// struct One;
///
/// impl Runner for One {
///     type Value = u64;
///
///     fn run(&mut self, _: NodeId, _: &mut dyn FnMut(NodeId) -> Option<u64>) -> Result<u64, TaskFailure> {
///         Ok(1)
///     }
/// }
///
/// let graph = Arc::new(TaskGraph::builder().task("a", Term::lit(1)).build()?);
/// let progress = Progress::new();
/// let cluster = Cluster::local(1).with_progress(progress.clone());
/// run(graph, Job::new([NodeId::new(0)], vec![0]), &cluster, |_, _| Ok(Box::new(One)))?;
/// assert_eq!(progress.take(), [NodeId::new(0)]);
/// assert!(progress.take().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
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
    pub(crate) fn ran(&self, node: NodeId) {
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
