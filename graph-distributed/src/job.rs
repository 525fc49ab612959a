//! `Job`: what to compute, where each task runs, and in which order.

use graph_core::{NodeId, TaskGraph};

use crate::Error;

/// What a distributed run computes: the requested nodes, the worker of every
/// task (any assigner's placement, as plain data) and, optionally, the
/// priority of every task among the ready tasks of its worker.
///
/// Workers are numbered `process * threads + thread`, so a placement for
/// `k` workers fits a cluster of `k` workers in all.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, TaskGraph, Term};
/// use graph_distributed::Job;
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .build()?;
/// let y = graph.node_id(&"y".into()).unwrap();
/// // x on worker 0, y on worker 1; y first among ready tasks.
/// let job = Job::new([y], vec![0, 1]).with_priorities(vec![1, 0]);
/// assert_eq!(job.outputs(), &[y]);
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    outputs: Vec<NodeId>,
    placement: Vec<u32>,
    priorities: Option<Vec<u32>>,
    memory_limit: Option<u64>,
}

impl Job {
    /// A job computing `outputs` (repeats are dropped, the first kept), each
    /// task `node` on worker `placement[node]`, ready tasks in node order.
    pub fn new(outputs: impl IntoIterator<Item = NodeId>, placement: Vec<u32>) -> Job {
        let mut seen = std::collections::HashSet::new();
        let distinct: Vec<NodeId> = outputs
            .into_iter()
            .filter(|&node| seen.insert(node))
            .collect();
        Job {
            outputs: distinct,
            placement,
            priorities: None,
            memory_limit: None,
        }
    }

    /// Holds at most `bytes` of results in memory in each process, shared
    /// evenly by its workers: a worker's tasks whose results would not fit
    /// wait while others run, and where none fits, the results it needs
    /// latest go to a private temporary directory and come back when read
    /// (serialized with bincode). A result alone larger than a worker's
    /// share ends the run. Sizes come from [`Runner::bytes`](crate::Runner::bytes).
    pub fn with_memory_limit(mut self, bytes: u64) -> Job {
        self.memory_limit = Some(bytes);
        self
    }

    /// The same job with another placement (one worker per task): an
    /// attempt's after a loss
    /// ([`Recovery::attempt_placement`](crate::recovery::Recovery::attempt_placement)).
    pub fn with_placement(mut self, placement: Vec<u32>) -> Job {
        self.placement = placement;
        self
    }

    /// The memory limit of each process, if any.
    pub fn memory_limit(&self) -> Option<u64> {
        self.memory_limit
    }

    /// Runs the ready tasks of each worker lowest `priorities[node]` first
    /// (a static order's ranks, say).
    pub fn with_priorities(mut self, priorities: Vec<u32>) -> Job {
        self.priorities = Some(priorities);
        self
    }

    /// The requested nodes, without repeats.
    pub fn outputs(&self) -> &[NodeId] {
        &self.outputs
    }

    /// The worker of every task.
    pub fn placement(&self) -> &[u32] {
        &self.placement
    }

    /// The priority of every task, if given.
    pub fn priorities(&self) -> Option<&[u32]> {
        self.priorities.as_deref()
    }

    /// Checks the job against a graph and a cluster of `workers` workers.
    pub(crate) fn check(&self, graph: &TaskGraph, workers: usize) -> Result<(), Error> {
        let tasks = graph.len();
        if self.placement.len() != tasks {
            return Err(Error::PlacementLength {
                placed: self.placement.len(),
                tasks,
            });
        }
        if let Some((node, &worker)) = self
            .placement
            .iter()
            .enumerate()
            .find(|&(_, &w)| w as usize >= workers)
        {
            return Err(Error::NoSuchWorker {
                key: graph.key(NodeId::new(node)).clone(),
                worker,
                workers,
            });
        }
        if let Some(priorities) = &self.priorities
            && priorities.len() != tasks
        {
            return Err(Error::PriorityCount {
                got: priorities.len(),
                tasks,
            });
        }
        if let Some(node) = self.outputs.iter().find(|n| n.index() >= tasks) {
            return Err(Error::UnknownOutput {
                node: node.index(),
                tasks,
            });
        }
        Ok(())
    }
}
