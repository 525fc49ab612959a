//! dask.distributed's `decide_worker`: place one ready task, given where its
//! inputs are and how busy each worker is.

use graph_core::{Dag, Topology};

use crate::inputs::{check_sizes, loads};
use crate::{Assignment, Error, Workers};

/// dask.distributed's default bandwidth estimate, in bytes per second
/// (`distributed.scheduler.bandwidth`).
pub const DEFAULT_BANDWIDTH: f64 = 100e6;

/// The scheduler's view of the workers while tasks are placed one at a time:
/// each worker's slots, its occupancy (seconds of work queued on it) and the
/// bytes it holds.
///
/// # Example
///
/// ```
/// use graph_assign::{ClusterState, Workers, decide_worker};
///
/// let mut cluster = ClusterState::new(&Workers::new(2)?);
/// cluster.place(0, 5.0, 1_000);
/// // Worker 0 holds more of the input but is 5 s busy; fetching 1 kB to
/// // worker 1 takes 10 µs, so worker 1 starts first.
/// assert_eq!(decide_worker(&cluster, &[(0, 1_000), (1, 10)]), 1);
/// assert_eq!(cluster.occupancy(0), 5.0);
/// # Ok::<(), graph_assign::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterState {
    slots: Vec<u32>,
    occupancy: Vec<f64>,
    stored: Vec<u64>,
    bandwidth: f64,
    placed: u64,
}

impl ClusterState {
    /// Idle workers holding nothing, with dask's default bandwidth.
    pub fn new(workers: &Workers) -> ClusterState {
        ClusterState {
            slots: workers.all_slots().to_vec(),
            occupancy: vec![0.0; workers.count()],
            stored: vec![0; workers.count()],
            bandwidth: DEFAULT_BANDWIDTH,
            placed: 0,
        }
    }

    /// The same cluster with a bandwidth of `bytes_per_second` (positive).
    pub fn with_bandwidth(mut self, bytes_per_second: f64) -> ClusterState {
        if bytes_per_second > 0.0 {
            self.bandwidth = bytes_per_second;
        }
        self
    }

    /// The number of workers.
    pub fn worker_count(&self) -> usize {
        self.slots.len()
    }

    /// The seconds of work queued on `worker`.
    pub fn occupancy(&self, worker: usize) -> f64 {
        self.occupancy[worker]
    }

    /// The bytes `worker` holds.
    pub fn stored_bytes(&self, worker: usize) -> u64 {
        self.stored[worker]
    }

    /// Records that a task of `cost` seconds whose result has `output_bytes`
    /// was placed on `worker`.
    ///
    /// # Panics
    ///
    /// If `worker` is out of range.
    pub fn place(&mut self, worker: usize, cost: f64, output_bytes: u64) {
        self.occupancy[worker] += cost;
        self.stored[worker] = self.stored[worker].saturating_add(output_bytes);
        self.placed += 1;
    }

    /// When `worker` could start a task whose inputs missing there add up to
    /// `missing_bytes`: its queue over its slots, plus the transfer.
    fn start_time(&self, worker: usize, missing_bytes: u64) -> f64 {
        self.occupancy[worker] / f64::from(self.slots[worker])
            + missing_bytes as f64 / self.bandwidth
    }
}

/// Picks the worker for one ready task whose inputs are `inputs`, given as
/// `(worker holding it, bytes)`: among the workers that hold an input, the
/// one that could start the task earliest.
///
/// This is dask.distributed's `decide_worker` with the scheduler's
/// `worker_objective`. The candidates are the workers holding at least one
/// input (all workers when there are none). A candidate's start time is its
/// occupancy over its slots plus the bytes it would have to fetch over the
/// bandwidth. Ties go to the least loaded worker, the one holding the fewest
/// bytes (dask's second key), then to the lowest index. A task without
/// inputs goes, as in dask's fast path, to the least occupied worker, and
/// when several are idle, round-robin among them by the number of tasks
/// placed so far.
///
/// Differences from dask: each input is held by one worker (dask tracks
/// replicas); there are no restrictions, actors or queuing of root tasks;
/// and ties are broken deterministically where dask takes the first of a
/// set.
///
/// # Arguments
///
/// - `cluster`: occupancy and stored bytes of every worker.
/// - `inputs`: `(worker, bytes)` for every input of the task; sizes default
///   to 1 byte where a graph has no metadata (see [`sizes_of`](crate::sizes_of)).
///
/// # Returns
///
/// The index of the chosen worker.
///
/// # Errors
///
/// None.
///
/// # Panics
///
/// If an input names a worker out of range.
///
/// # Complexity
///
/// O(k + inputs) time, O(k) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{ClusterState, Workers, decide_worker};
///
/// let cluster = ClusterState::new(&Workers::new(3)?);
/// // Most input bytes are on worker 2: fetching the rest is quickest.
/// assert_eq!(decide_worker(&cluster, &[(0, 10), (2, 500), (1, 20)]), 2);
/// // Nothing held: the first idle worker.
/// assert_eq!(decide_worker(&cluster, &[]), 0);
/// # Ok::<(), graph_assign::Error>(())
/// ```
pub fn decide_worker(cluster: &ClusterState, inputs: &[(usize, u64)]) -> usize {
    let n_workers = cluster.worker_count();
    if inputs.is_empty() {
        return least_occupied(cluster);
    }
    let mut held = vec![0_u64; n_workers];
    let mut is_candidate = vec![false; n_workers];
    let mut total = 0_u64;
    for &(worker, bytes) in inputs {
        held[worker] = held[worker].saturating_add(bytes);
        is_candidate[worker] = true;
        total = total.saturating_add(bytes);
    }
    let mut best: Option<(f64, u64, usize)> = None;
    for worker in (0..n_workers).filter(|&w| is_candidate[w]) {
        let key = (
            cluster.start_time(worker, total - held[worker]),
            cluster.stored[worker],
            worker,
        );
        if best.is_none_or(|b| (key.0, key.1) < (b.0, b.1)) {
            best = Some(key);
        }
    }
    best.map_or(0, |b| b.2)
}

/// dask's fast path for a task without inputs: the least occupied worker;
/// if that one is idle, the first idle worker at or after the round-robin
/// position.
fn least_occupied(cluster: &ClusterState) -> usize {
    let n_workers = cluster.worker_count();
    let mut best = 0;
    for worker in 1..n_workers {
        if cluster.occupancy[worker] < cluster.occupancy[best] {
            best = worker;
        }
    }
    if cluster.occupancy[best] > 0.0 {
        return best;
    }
    let start = (cluster.placed % n_workers as u64) as usize;
    (0..n_workers)
        .map(|i| (start + i) % n_workers)
        .find(|&w| cluster.occupancy[w] == 0.0)
        .unwrap_or(best)
}

/// Places a whole graph by calling [`decide_worker`] on every task in
/// topological order, as dask.distributed's scheduler would if every task
/// became ready in that order and none finished: a greedy baseline.
///
/// # Arguments
///
/// - `dag`: the graph.
/// - `workers`: the workers and their slots.
/// - `sizes`: bytes of each task's result (1 each when `None`).
/// - `costs`: seconds of each task (1 each when `None`).
///
/// # Returns
///
/// The worker of every task.
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG, [`Error::LengthMismatch`] if
/// `sizes` or `costs` is not one per task, [`Error::BadCost`] for a negative
/// or non-finite cost.
///
/// # Complexity
///
/// O(V · k + E) time, O(V + k) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Workers, assign_greedy};
/// use graph_core::Topology;
///
/// // Two roots go to the two idle workers; their dependents follow them.
/// let dag = Topology::from_edges(4, [(0, 2), (1, 3)])?;
/// let assignment = assign_greedy(&dag, &Workers::new(2)?, None, None)?;
/// assert_eq!(assignment.as_slice(), [0, 1, 0, 1]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_greedy(
    dag: &impl Dag,
    workers: &Workers,
    sizes: Option<&[u64]>,
    costs: Option<&[f64]>,
) -> Result<Assignment, Error> {
    greedy(&*Topology::checked(dag)?, workers, sizes, costs)
}

fn greedy(
    dag: &Topology,
    workers: &Workers,
    sizes: Option<&[u64]>,
    costs: Option<&[f64]>,
) -> Result<Assignment, Error> {
    let n_nodes = dag.node_count();
    check_sizes(sizes, n_nodes)?;
    let costs = loads(costs, n_nodes)?;
    let size = |node: usize| sizes.map_or(1, |sizes| sizes[node]);
    let mut cluster = ClusterState::new(workers);
    let mut res = vec![0_u32; n_nodes];
    let mut inputs: Vec<(usize, u64)> = Vec::new();
    for &node in dag.topological_order() {
        inputs.clear();
        inputs.extend(
            dag.dependencies(node)
                .iter()
                .map(|dep| (res[dep.index()] as usize, size(dep.index()))),
        );
        let worker = decide_worker(&cluster, &inputs);
        cluster.place(worker, costs[node.index()], size(node.index()));
        res[node.index()] = worker as u32;
    }
    Ok(Assignment::new_unchecked(res, workers.count()))
}
