//! Recovery after lost processes: which tasks a run must compute again, where
//! each of them runs among the survivors, and where the results they read
//! are taken from.
//!
//! A task graph carries its whole lineage, so a result that died with its
//! process can be made again. [`plan_recovery`] makes again only what is
//! needed: starting from the outputs, a result is taken from a survivor that
//! holds it (in memory or spilled) whenever one does, and computed again
//! only when none does and an output, or a task that must run, still needs
//! it; its own inputs are then looked for the same way, and so on back. No
//! task runs that a survivor's results make unnecessary, and no result is
//! made twice.
//!
//! The tasks that must run are placed again: a task whose worker survived
//! stays there; one whose process was lost goes to the surviving process
//! that holds (or will make) the most bytes of its inputs, the least loaded
//! on a tie, and there to its least loaded worker.
//!
//! Everything else a run needs to survive a loss is here too: a run that
//! keeps what it made when it stops
//! ([`Run::run_keeping`](crate::Run::run_keeping), [`Stopped`],
//! [`Leftovers`]), one attempt of a plan
//! ([`Run::attempt`](crate::Run::attempt), [`Attempt`]), the survivors
//! agreeing on who is left ([`regroup`], [`Watch`]) and on the next attempt
//! ([`next_attempt`]), how many losses a run may go on after ([`Losses`]),
//! and all of it attempt after attempt
//! ([`Run::recover`](crate::Run::recover)).

use graph_core::{Dag, NodeId, TaskGraph};

use crate::{Error, Job};

pub use crate::losses::Losses;
pub use crate::recovering::{NextAttempt, Recovered, Recovering, next_attempt};
pub use crate::run::{Attempt, Leftovers, Stopped};
pub use graph_transport::{Regrouped, Watch, regroup};

/// What the processes of a run held when some of them were lost: which tasks
/// had run, and which processes hold each result (its producer's, and any
/// that a result was sent to and still keep it).
///
/// # Example
///
/// ```
/// use graph_core::NodeId;
/// use graph_distributed::recovery::Holdings;
///
/// let mut held = Holdings::new(3);
/// held.finished(NodeId::new(0));
/// held.hold(NodeId::new(0), 1);
/// assert!(held.is_finished(NodeId::new(0)));
/// assert_eq!(held.holders(NodeId::new(0)), &[1]);
/// assert!(held.holders(NodeId::new(1)).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holdings {
    finished: Vec<bool>,
    /// Each task's holders, a few processes at most.
    holders: Vec<Vec<u32>>,
}

impl Holdings {
    /// Nothing run, nothing held, for a graph of `tasks` tasks.
    pub fn new(tasks: usize) -> Holdings {
        Holdings {
            finished: vec![false; tasks],
            holders: vec![Vec::new(); tasks],
        }
    }

    /// Records that `node` ran (whether or not anyone still holds its
    /// result). A node outside the graph is ignored.
    pub fn finished(&mut self, node: NodeId) {
        if let Some(done) = self.finished.get_mut(node.index()) {
            *done = true;
        }
    }

    /// Records that `process` holds the result of `node` (and so that it
    /// ran). A node outside the graph is ignored.
    pub fn hold(&mut self, node: NodeId, process: u32) {
        if let Some(holders) = self.holders.get_mut(node.index()) {
            if !holders.contains(&process) {
                holders.push(process);
            }
            self.finished[node.index()] = true;
        }
    }

    /// Whether `node` ran before the loss.
    pub fn is_finished(&self, node: NodeId) -> bool {
        self.finished.get(node.index()).copied().unwrap_or(false)
    }

    /// The processes that hold the result of `node`.
    pub fn holders(&self, node: NodeId) -> &[u32] {
        self.holders.get(node.index()).map_or(&[], Vec::as_slice)
    }
}

/// What the next attempt of a run does after a loss: see [`plan_recovery`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The tasks to run, in topological order: those that never ran and are
    /// still needed, and those that ran but whose results were lost and are
    /// still needed (the recomputed ones).
    pub run: Vec<NodeId>,
    /// Every result the attempt reads without computing it (an input of a
    /// task in `run`, or an output), and the surviving process it is taken
    /// from: the reader's own process where it holds it.
    pub fetch: Vec<(NodeId, u32)>,
    /// The worker of every task of `run` (indexed like the graph; the old
    /// worker numbering, `process * threads + thread`, only surviving
    /// workers used). Tasks outside `run` keep their old worker.
    pub placement: Vec<u32>,
    /// How many tasks of `run` had run before, as far as the survivors can
    /// tell (they ran it, hold its result, or know a task that read it ran):
    /// the work lost.
    pub recomputed: usize,
    /// The surviving processes, by their old numbers, in order: process
    /// `i` of the attempt is `survivors[i]` of the run.
    pub survivors: Vec<u32>,
}

impl Recovery {
    /// The placement of the attempt's [`Job`], over the survivors numbered
    /// afresh ([`Recovery::survivors`]; `threads` workers a process): each
    /// task of `run` where the plan puts it, each fetched result on the
    /// first worker of the process it is taken from, and the tasks the
    /// attempt does not need on worker 0.
    pub fn attempt_placement(&self, threads: usize) -> Vec<u32> {
        let threads = threads.max(1) as u32;
        let renumber = |old_process: u32| {
            self.survivors
                .iter()
                .position(|&p| p == old_process)
                .map(|new| new as u32)
        };
        let mut placement = vec![0; self.placement.len()];
        for &node in &self.run {
            let Some(&old) = self.placement.get(node.index()) else {
                continue;
            };
            if let Some(process) = renumber(old / threads) {
                // Same length as `self.placement`.
                placement[node.index()] = process * threads + old % threads;
            }
        }
        for &(node, from) in &self.fetch {
            if let (Some(worker), Some(process)) = (placement.get_mut(node.index()), renumber(from))
            {
                *worker = process * threads;
            }
        }
        placement
    }
}

/// Plans the attempt that follows the loss of the processes `lost` in a run
/// of `job` on `graph` over `processes` processes of `threads` workers each,
/// with the results `held` by the processes (those of lost processes do not
/// count). `sizes` (bytes of each result, if known) weigh where a displaced
/// task goes.
///
/// A task runs again only if it is needed and no survivor holds its result:
/// an output, or an input of a task that runs. Every other input is
/// fetched from a survivor.
///
/// Complexity: O(V + E) plus, for each displaced task, O(its inputs x
/// their holders + processes).
///
/// # Errors
///
/// [`Error::NoSurvivors`] when every process is lost, naming them;
/// [`Error::NoSuchProcess`] for a lost process the run does not have; a job
/// that does not fit the graph or the cluster, as [`Run::run`](crate::Run::run)
/// refuses it; the graph's own [`Error::Graph`].
///
/// # Example
///
/// A chain `a -> b -> c -> d`: `a` and `b` ran on process 1, `c` on process
/// 0, which holds its result; `b`'s result was freed once `c` had read it.
/// Losing process 1 costs nothing: `d` reads `c` from process 0.
///
/// ```
/// use graph_core::{generate, NodeId};
/// use graph_distributed::recovery::{Holdings, plan_recovery};
/// use graph_distributed::Job;
///
/// let graph = generate::chain(4);
/// let [a, b, c, d] = [0, 1, 2, 3].map(NodeId::new);
/// let job = Job::new([d], vec![1, 1, 0, 0]);
/// let mut held = Holdings::new(4);
/// held.finished(a);
/// held.finished(b);
/// held.hold(c, 0);
/// let plan = plan_recovery(&graph, &job, 2, 1, &[1], &held, None)?;
/// assert_eq!(plan.run, [d]);
/// assert_eq!(plan.fetch, [(c, 0)]);
/// assert_eq!(plan.recomputed, 0);
///
/// // Losing process 0 instead loses `c`, and `b` and `a` behind it.
/// let plan = plan_recovery(&graph, &job, 2, 1, &[0], &held, None)?;
/// assert_eq!(plan.run, [a, b, c, d]);
/// assert_eq!(plan.recomputed, 3);
/// assert!(plan.run.iter().all(|n| plan.placement[n.index()] == 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_recovery(
    graph: &TaskGraph,
    job: &Job,
    processes: usize,
    threads: usize,
    lost: &[usize],
    held: &Holdings,
    sizes: Option<&[u64]>,
) -> Result<Recovery, Error> {
    let threads = threads.max(1);
    job.check(graph, processes * threads)?;
    if let Some(&process) = lost.iter().find(|&&p| p >= processes) {
        return Err(Error::NoSuchProcess { process, processes });
    }
    let topology = graph.topology()?;
    let outputs = job.outputs();
    let placement = job.placement();
    let n = topology.node_count();
    let mut alive = vec![true; processes];
    for &process in lost {
        alive[process] = false;
    }
    if !alive.contains(&true) {
        let mut lost = lost.to_vec();
        lost.sort_unstable();
        lost.dedup();
        return Err(Error::NoSurvivors { lost });
    }
    let survivor = |node: NodeId| -> Option<u32> {
        held.holders(node)
            .iter()
            .copied()
            .filter(|&p| (p as usize) < processes && alive[p as usize])
            .min()
    };
    let is_held = |node: NodeId| survivor(node).is_some();

    // Back from the outputs: a task runs when it is needed and no survivor
    // holds its result.
    let mut runs = vec![false; n];
    let mut stack: Vec<NodeId> = outputs
        .iter()
        .copied()
        .filter(|&node| !is_held(node))
        .collect();
    for &node in &stack {
        runs[node.index()] = true;
    }
    while let Some(node) = stack.pop() {
        for &dep in topology.dependencies(node) {
            if !runs[dep.index()] && !is_held(dep) {
                runs[dep.index()] = true;
                stack.push(dep);
            }
        }
    }
    let run: Vec<NodeId> = topology
        .topological_order()
        .iter()
        .copied()
        .filter(|node| runs[node.index()])
        .collect();

    // Placement, in topological order so that a displaced task sees where
    // its recomputed inputs went.
    let mut new_placement = placement.to_vec();
    let mut process_load = vec![0_usize; processes];
    let mut worker_load = vec![0_usize; processes * threads];
    for &node in &run {
        let worker = placement[node.index()] as usize;
        if alive[worker / threads] {
            process_load[worker / threads] += 1;
            worker_load[worker] += 1;
        }
    }
    let size = |node: NodeId| {
        sizes
            .and_then(|s| s.get(node.index()).copied())
            .unwrap_or(1)
    };
    let mut weight = vec![0_u64; processes];
    for &node in &run {
        let worker = placement[node.index()] as usize;
        if alive[worker / threads] {
            continue;
        }
        weight.iter_mut().for_each(|w| *w = 0);
        for &dep in topology.dependencies(node) {
            if runs[dep.index()] {
                weight[new_placement[dep.index()] as usize / threads] += size(dep);
            } else {
                for &p in held.holders(dep) {
                    if (p as usize) < processes && alive[p as usize] {
                        weight[p as usize] += size(dep);
                    }
                }
            }
        }
        let process = (0..processes)
            .filter(|&p| alive[p])
            .max_by(|&x, &y| {
                weight[x]
                    .cmp(&weight[y])
                    .then(process_load[y].cmp(&process_load[x]))
                    .then(y.cmp(&x))
            })
            .unwrap_or(0);
        let first = process * threads;
        let worker = (first..first + threads)
            .min_by_key(|&w| (worker_load[w], w))
            .unwrap_or(first);
        new_placement[node.index()] = worker as u32;
        process_load[process] += 1;
        worker_load[worker] += 1;
    }

    // Inputs taken from survivors: from the reader's own process where it
    // holds them, else from the first survivor that does.
    let mut fetch: Vec<(NodeId, u32)> = Vec::new();
    let mut fetched = vec![u32::MAX; n];
    let mut take = |node: NodeId, reader: Option<usize>, fetch: &mut Vec<(NodeId, u32)>| {
        if fetched[node.index()] != u32::MAX {
            return;
        }
        let holders = held.holders(node);
        let from = reader
            .filter(|&p| holders.contains(&(p as u32)))
            .map(|p| p as u32)
            .or_else(|| survivor(node));
        if let Some(from) = from {
            fetched[node.index()] = from;
            fetch.push((node, from));
        }
    };
    for &node in &run {
        let reader = new_placement[node.index()] as usize / threads;
        for &dep in topology.dependencies(node) {
            if !runs[dep.index()] {
                take(dep, Some(reader), &mut fetch);
            }
        }
    }
    for &node in outputs {
        if !runs[node.index()] {
            take(node, None, &mut fetch);
        }
    }
    fetch.sort_unstable();
    // A task ran before if the survivors know it did, or know that a task
    // reading it did (its own record may have died with its process).
    let mut ran_before: Vec<bool> = (0..n).map(|i| held.is_finished(NodeId::new(i))).collect();
    for &node in topology.topological_order().iter().rev() {
        if ran_before[node.index()] {
            for &dep in topology.dependencies(node) {
                ran_before[dep.index()] = true;
            }
        }
    }
    let recomputed = run.iter().filter(|&&node| ran_before[node.index()]).count();
    let survivors = (0..processes as u32)
        .filter(|&p| alive[p as usize])
        .collect();
    Ok(Recovery {
        run,
        fetch,
        placement: new_placement,
        recomputed,
        survivors,
    })
}
