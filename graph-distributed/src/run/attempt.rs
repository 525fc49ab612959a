//! What a run that stops keeps for the next ([`Stopped`], [`Leftovers`]),
//! and one attempt of a recovery plan ([`Attempt`]): the topology it runs on
//! and the results fed into it.

use graph_core::{Dag, NodeId, TaskGraph, Topology};

use super::{FedByThread, graph_key};
#[cfg(doc)]
use crate::Runner;
use crate::{Error, Job};

/// Why a [`Run`](crate::Run) stopped, and what this process still holds
/// when it was for the loss of another and the run keeps its leftovers
/// ([`Run::run_keeping`](crate::Run::run_keeping)).
#[derive(Debug)]
pub struct Stopped<V> {
    /// Why the run stopped.
    pub error: Error,
    /// What this process holds, after the loss of another process.
    pub leftovers: Option<Box<Leftovers<V>>>,
}

impl<V> From<graph_core::Error> for Stopped<V> {
    fn from(error: graph_core::Error) -> Stopped<V> {
        Error::from(error).into()
    }
}

impl<V> From<Error> for Stopped<V> {
    fn from(error: Error) -> Stopped<V> {
        Stopped {
            error,
            leftovers: None,
        }
    }
}

/// What a process holds when another process of its run is lost: the tasks
/// its workers ran, and the results they hold (their own, those sent to
/// them, and at process 0 the outputs gathered); across processes, also
/// the run's heartbeats, still going ([`Leftovers::take_watch`]).
#[derive(Debug)]
pub struct Leftovers<V> {
    pub(crate) finished: Vec<NodeId>,
    pub(crate) held: Vec<(NodeId, V)>,
    pub(crate) watch: Option<crate::recovery::Watch>,
}

impl<V> Leftovers<V> {
    /// The tasks this process ran.
    pub fn finished(&self) -> &[NodeId] {
        &self.finished
    }

    /// The results this process holds, each once.
    pub fn held(&self) -> &[(NodeId, V)] {
        &self.held
    }

    /// The results this process holds, each once.
    pub fn into_held(self) -> Vec<(NodeId, V)> {
        self.held
    }

    /// The results of `plan`'s fetch list that this process, `process` of
    /// the stopped attempt, feeds into the next ([`Attempt::new`]).
    pub fn into_fed(self, plan: &crate::recovery::Recovery, process: u32) -> Vec<(NodeId, V)> {
        let mut from_here = vec![
            false;
            self.held
                .iter()
                .map(|(n, _)| n.index() + 1)
                .max()
                .unwrap_or(0)
        ];
        for &(node, from) in &plan.fetch {
            if from == process
                && let Some(slot) = from_here.get_mut(node.index())
            {
                *slot = true;
            }
        }
        self.held
            .into_iter()
            .filter(|(node, _)| from_here.get(node.index()).copied().unwrap_or(false))
            .collect()
    }

    /// The run's heartbeats, still going after the loss (a run across
    /// processes only; once): what [`regroup`](crate::recovery::regroup) tells the
    /// survivors apart by. Dropping it, or the leftovers, stops them.
    pub fn take_watch(&mut self) -> Option<crate::recovery::Watch> {
        self.watch.take()
    }

    /// Records in `holdings` that process `process` ran and holds these.
    pub fn record(&self, holdings: &mut crate::recovery::Holdings, process: u32) {
        for &node in &self.finished {
            holdings.finished(node);
        }
        for (node, _) in &self.held {
            holdings.hold(*node, process);
        }
    }

    /// The leftovers of the worker threads of one process, as one.
    pub(super) fn merge(parts: Vec<Leftovers<V>>) -> Leftovers<V> {
        let mut finished = Vec::new();
        let mut held = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for part in parts {
            finished.extend(part.finished);
            held.extend(part.held.into_iter().filter(|(node, _)| seen.insert(*node)));
        }
        finished.sort_unstable();
        finished.dedup();
        held.sort_unstable_by_key(|(node, _)| *node);
        Leftovers {
            finished,
            held,
            watch: None,
        }
    }
}

/// What a process brings to an attempt after a loss: the tasks the plan
/// runs, the results it fetches, and the values of those this process
/// holds.
#[derive(Clone, Debug)]
pub struct Attempt<V> {
    run: Vec<NodeId>,
    fetched: Vec<NodeId>,
    values: Vec<(NodeId, V)>,
}

impl<V> Attempt<V> {
    /// The attempt of `plan`, this process feeding in `values` (results of
    /// the plan's `fetch` that it holds).
    pub fn new(plan: &crate::recovery::Recovery, values: Vec<(NodeId, V)>) -> Attempt<V> {
        Attempt {
            run: plan.run.clone(),
            fetched: plan.fetch.iter().map(|&(node, _)| node).collect(),
            values,
        }
    }
}

impl<V> Attempt<V> {
    /// `topology` with the fetched results' dependencies left out.
    pub(super) fn fed_as_sources(&self, topology: &Topology) -> Result<Topology, Error> {
        let n = topology.node_count();
        let mut fetched = vec![false; n];
        for node in &self.fetched {
            fetched[node.index()] = true;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::with_capacity(topology.edge_count());
        offsets.push(0_u32);
        for node in topology.node_ids() {
            if !fetched[node.index()] {
                targets.extend(topology.dependencies(node).iter().map(|d| d.as_u32()));
            }
            offsets.push(targets.len() as u32);
        }
        Ok(Topology::from_dependency_rows(offsets, targets)?)
    }

    /// The nodes the attempt needs (the plan's tasks and fetched results),
    /// and the values fed in, by worker thread of this process; checked
    /// against the job's placement.
    pub(super) fn split(
        &mut self,
        graph: &TaskGraph,
        job: &Job,
        first_worker: usize,
        threads: usize,
    ) -> Result<(Vec<bool>, FedByThread<V>), Error> {
        let n = graph.len();
        let mut needed = vec![false; n];
        let mut fetched = vec![false; n];
        for node in self.run.iter().chain(&self.fetched) {
            if node.index() >= n {
                return Err(Error::UnknownOutput {
                    node: node.index(),
                    tasks: n,
                });
            }
            needed[node.index()] = true;
        }
        for node in &self.fetched {
            fetched[node.index()] = true;
        }
        let here = |node: NodeId| {
            let worker = job.placement()[node.index()] as usize;
            (first_worker..first_worker + threads)
                .contains(&worker)
                .then(|| worker - first_worker)
        };
        let mut by_thread: FedByThread<V> = (0..threads).map(|_| Vec::new()).collect();
        let mut given = vec![false; n];
        for (node, value) in std::mem::take(&mut self.values) {
            let thread = (node.index() < n && fetched[node.index()])
                .then(|| here(node))
                .flatten();
            let Some(thread) = thread else {
                return Err(Error::MisplacedResult {
                    key: graph_key(graph, node),
                });
            };
            given[node.index()] = true;
            by_thread[thread].push((node, value));
        }
        if let Some(&node) = self
            .fetched
            .iter()
            .find(|&&node| here(node).is_some() && !given[node.index()])
        {
            return Err(Error::MissingResult {
                key: graph.key(node).clone(),
            });
        }
        Ok((needed, by_thread))
    }
}
