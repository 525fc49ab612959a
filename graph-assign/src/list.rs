//! List scheduling: a placement that keeps every worker busy through the
//! run, and the simulated wall time of any placement.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use graph_core::{Dag, NodeId, Topology};

use crate::inputs::{MAX_TOTAL_SECONDS, check_len, check_sizes, dependency_post_order, loads};
use crate::{Assignment, DEFAULT_BANDWIDTH, Error, Workers};

/// The latency [`ListConfig`] gives a result that crosses between workers
/// by default, in seconds: a quarter of a task of the default cost (1), the
/// price of one message between processes.
pub const DEFAULT_TRANSFER_SECONDS: f64 = 0.25;

/// The cost model of [`assign_list`] and [`makespan`]: how long each task
/// runs and how long its result takes to reach another worker. `Default`
/// gives unit tasks and a quarter of a unit per cut edge.
///
/// Times are in seconds. A result read on the worker that made it is there
/// at once; read on another worker, it arrives `transfer_seconds` later,
/// plus its size over the bandwidth when sizes are given.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, ListConfig, Workers, makespan};
/// use graph_core::Topology;
///
/// // 0 -> 1 across two workers: 2 s of work, plus 0.1 s of latency and
/// // 1 GB at 1 GB/s.
/// let dag = Topology::from_edges(2, [(0, 1)])?;
/// let config = ListConfig {
///     sizes: Some(&[1_000_000_000, 8]),
///     transfer_seconds: 0.1,
///     bandwidth: 1e9,
///     ..ListConfig::default()
/// };
/// let split = Assignment::from_vec(vec![0, 1], 2)?;
/// assert_eq!(makespan(&dag, &Workers::new(2)?, &split, &config)?, 3.1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ListConfig<'a> {
    /// Bytes of each task's result (see [`sizes_of`](crate::sizes_of)).
    /// `None`: every transfer takes `transfer_seconds`, whatever it carries.
    pub sizes: Option<&'a [u64]>,
    /// Seconds of each task (see [`costs_of`](crate::costs_of)). `None`:
    /// 1 per task.
    pub costs: Option<&'a [f64]>,
    /// Seconds a result takes to reach another worker, on top of its bytes
    /// over the bandwidth: the latency of a message between processes.
    pub transfer_seconds: f64,
    /// Bytes per second between two workers, used only with `sizes`.
    pub bandwidth: f64,
    /// Seconds of a worker's time each input made on another worker costs
    /// the task that reads it, on top of the task's own cost: the work of
    /// sending and receiving one message, which the latency
    /// (`transfer_seconds`) does not take from the workers. It is what
    /// makes a placement of quick tasks that cuts many edges slower than
    /// one that keeps them local.
    pub receive_seconds: f64,
}

impl Default for ListConfig<'_> {
    fn default() -> Self {
        ListConfig {
            sizes: None,
            costs: None,
            transfer_seconds: DEFAULT_TRANSFER_SECONDS,
            bandwidth: DEFAULT_BANDWIDTH,
            receive_seconds: 0.0,
        }
    }
}

/// Places `dag` on `workers` so that it finishes early when run: a list
/// schedule by upward rank, in which each worker runs the tasks whose inputs
/// it holds and takes work from the others whenever it would otherwise be
/// idle. Where [`assign`](crate::assign) keeps the edge cut low and lets
/// workers wait on each other, this keeps every worker busy through the run
/// and keeps the cut low only as far as that allows.
///
/// The run is simulated event by event under the cost model of `config`
/// (see [`ListConfig`]), and each task is placed where it first starts:
///
/// 1. Each task's priority is its upward rank, as in HEFT (Topcuoglu, Hariri
///    and Wu, 2002): its cost plus, if anything reads it, its transfer time
///    plus the largest rank among its dependents, the longest path from its
///    start to the end of the graph. Ties go to the earlier task in
///    topological order.
/// 2. Once all the inputs of a task have finished, it is queued on every
///    worker holding one of them, from the time all its inputs could be
///    there (an input made elsewhere arrives at its producer's finish plus
///    its transfer time), and in a queue shared by all workers from the time
///    they could all be anywhere.
/// 3. Whenever a slot of a worker is free, it starts the task of highest
///    priority in that worker's queue; with that queue empty, the task of
///    highest priority in the shared queue (the lowest-index idle worker
///    first). A task runs where it first starts, and every other queue drops
///    it.
/// 4. Tasks without inputs are queued on the workers in blocks of a
///    locality order (a depth-first post-order through dependencies from
///    the sinks), each worker's block in proportion to its slots, and in the
///    shared queue from the start.
///
/// HEFT itself places each task, by decreasing rank, on the worker where it
/// would finish earliest. On wavefronts, reductions and random graphs with
/// unit costs that finishes about as early, but it deals every wave
/// round-robin over the workers and cuts about as many edges as a random
/// placement; letting
/// each worker keep its inputs' dependents while it has work cuts ten times
/// fewer on a 40 x 40 wavefront, and as few as [`assign`](crate::assign) on
/// a tree reduction.
///
/// This is close to what dask.distributed does as a graph runs: a task goes
/// to a worker holding its inputs ([`decide_worker`](crate::decide_worker)),
/// idle workers steal, and root tasks are co-assigned in blocks of siblings.
/// Here the whole graph is placed up front, from estimated costs.
///
/// # Arguments
///
/// - `dag`: the graph.
/// - `workers`: the workers; a worker with `s` slots runs `s` tasks at a
///   time.
/// - `config`: task costs, result sizes and the transfer model.
///
/// # Returns
///
/// The worker of every task. [`makespan`] estimates how long it runs.
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG, [`Error::LengthMismatch`] if
/// `sizes` or `costs` is not one per task, [`Error::BadCost`] for a negative
/// or non-finite cost, [`Error::BadTransferSeconds`] and
/// [`Error::BadBandwidth`] for a transfer model that is not one (checked
/// even without sizes).
///
/// # Complexity
///
/// O(V log V + E + Q log V + V log k) time for k workers, where Q, the
/// number of times tasks are queued, is at most V plus the sum over tasks of
/// min(inputs, k), so at most 2V + E: ranks and the locality order in
/// O(V + E), sorting by rank, every edge read twice more as tasks become
/// ready, and the queues. The work per task grows with its inputs, not with
/// the number of workers or slots. O(V + E + k) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, ListConfig, Workers, assign_list, makespan};
/// use graph_core::Topology;
///
/// // Two chains of three on two workers: one chain each, done in 3 s.
/// let dag = Topology::from_edges(6, [(0, 1), (1, 2), (3, 4), (4, 5)])?;
/// let workers = Workers::new(2)?;
/// let config = ListConfig::default();
/// let placed = assign_list(&dag, &workers, &config)?;
/// assert_eq!(placed.as_slice(), [0, 0, 0, 1, 1, 1]);
/// assert_eq!(makespan(&dag, &workers, &placed, &config)?, 3.0);
/// // Alternating workers pays a quarter second per hop.
/// let alternating = Assignment::from_vec(vec![0, 1, 0, 1, 0, 1], 2)?;
/// assert_eq!(makespan(&dag, &workers, &alternating, &config)?, 3.5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_list(
    dag: &impl Dag,
    workers: &Workers,
    config: &ListConfig<'_>,
) -> Result<Assignment, Error> {
    let dag = Topology::checked(dag)?;
    let model = Model::new(&dag, config)?;
    let (part, _) = run(&dag, workers, &model, None);
    Ok(Assignment::new_unchecked(part, workers.count()))
}

/// The simulated wall time of running `dag` placed by `assignment` on
/// `workers`, under the cost model of `config`: when its last task would
/// finish.
///
/// The run is simulated event by event, as [`assign_list`] simulates it but
/// with every task's worker fixed: a task is queued on its worker once its
/// last input has arrived there (at its producer's finish, plus the
/// transfer time when made on another worker), and whenever a slot of a
/// worker is free it starts the queued task of highest upward rank, ties in
/// topological order. So any two placements can be compared by estimated
/// wall time; the figure for [`assign_list`]'s own placement is close to,
/// but not always the same as, the schedule it planned (a task it took from
/// another worker's queue when idle may now start earlier).
///
/// No schedule is shorter than the total cost over the number of slots, nor
/// than the costliest path through the graph; a placement on one worker
/// pays no transfers.
///
/// # Errors
///
/// As [`assign_list`], plus [`Error::LengthMismatch`] for an assignment made
/// for another graph and [`Error::WorkerCountMismatch`] for one made for
/// another number of workers.
///
/// # Complexity
///
/// O(V log V + E + V log k) time, O(V + k) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Assignment, ListConfig, Workers, makespan};
/// use graph_core::Topology;
///
/// // A fork: 0 feeds 1 and 2. Two workers overlap 1 and 2, after the
/// // transfer of 0's 50 MB at 100 MB/s.
/// let dag = Topology::from_edges(3, [(0, 1), (0, 2)])?;
/// let config = ListConfig { sizes: Some(&[50_000_000, 8, 8]), ..ListConfig::default() };
/// let split = Assignment::from_vec(vec![0, 0, 1], 2)?;
/// assert_eq!(makespan(&dag, &Workers::new(2)?, &split, &config)?, 2.75);
/// let one = Assignment::from_vec(vec![0, 0, 0], 1)?;
/// assert_eq!(makespan(&dag, &Workers::new(1)?, &one, &config)?, 3.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn makespan(
    dag: &impl Dag,
    workers: &Workers,
    assignment: &Assignment,
    config: &ListConfig<'_>,
) -> Result<f64, Error> {
    let dag = Topology::checked(dag)?;
    check_len("assignment", assignment.len(), dag.node_count())?;
    if assignment.worker_count() != workers.count() {
        return Err(Error::WorkerCountMismatch {
            assignment: assignment.worker_count(),
            workers: workers.count(),
        });
    }
    let model = Model::new(&dag, config)?;
    Ok(run(&dag, workers, &model, Some(assignment.as_slice())).1)
}

/// The wall time no placement of `dag` on `workers` beats, whatever the
/// transfers: `max(work / slots, critical path)`, the total cost spread
/// evenly over every slot or the costliest path through the graph, with
/// `costs` in seconds (`None`: 1 per task). [`makespan`] is never less.
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG, [`Error::LengthMismatch`] if
/// `costs` is not one per task, [`Error::BadCost`] for a negative or
/// non-finite cost.
///
/// # Complexity
///
/// O(V + E).
///
/// # Example
///
/// ```
/// use graph_assign::{Workers, makespan_bound};
/// use graph_core::Topology;
///
/// // Two chains of three: 3 s on two workers, 6 s of work over one.
/// let dag = Topology::from_edges(6, [(0, 1), (1, 2), (3, 4), (4, 5)])?;
/// assert_eq!(makespan_bound(&dag, &Workers::new(2)?, None)?, 3.0);
/// assert_eq!(makespan_bound(&dag, &Workers::new(1)?, None)?, 6.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn makespan_bound(
    dag: &impl Dag,
    workers: &Workers,
    costs: Option<&[f64]>,
) -> Result<f64, Error> {
    let dag = Topology::checked(dag)?;
    let costs = loads(costs, dag.node_count())?;
    let mut path = vec![0.0_f64; dag.node_count()];
    for &node in dag.topological_order() {
        let ready = dag
            .dependencies(node)
            .iter()
            .map(|dep| path[dep.index()])
            .fold(0.0, f64::max);
        path[node.index()] = ready + costs[node.index()];
    }
    let critical = path.iter().copied().fold(0.0, f64::max);
    let work: f64 = costs.iter().sum();
    Ok((work / workers.total_slots() as f64).max(critical))
}

/// The checked cost model of one graph, in dense vectors, and the priority
/// of every task.
struct Model {
    /// Seconds of each task.
    costs: Vec<f64>,
    /// Seconds each task's result takes to reach another worker.
    transfers: Vec<f64>,
    /// Seconds of the reader's time each input from another worker costs.
    receive: f64,
    /// The tasks by decreasing upward rank, ties in topological order.
    order: Vec<u32>,
    /// The position of each task in `order`: lower runs first.
    priority: Vec<u32>,
}

impl Model {
    fn new(dag: &Topology, config: &ListConfig<'_>) -> Result<Model, Error> {
        let n_nodes = dag.node_count();
        check_sizes(config.sizes, n_nodes)?;
        let mut costs = loads(config.costs, n_nodes)?;
        let latency = config.transfer_seconds;
        if !(latency.is_finite() && latency >= 0.0) {
            return Err(Error::BadTransferSeconds { seconds: latency });
        }
        // An infinite bandwidth makes bytes free.
        if config.bandwidth.is_nan() || config.bandwidth <= 0.0 {
            return Err(Error::BadBandwidth {
                bandwidth: config.bandwidth,
            });
        }
        // Adding +0.0 turns -0.0 into +0.0, so that every time is
        // non-negative and orders as its bits (see `bits`).
        for cost in &mut costs {
            *cost += 0.0;
        }
        let latency = latency + 0.0;
        let receive = config.receive_seconds;
        if !(receive.is_finite() && receive >= 0.0) {
            return Err(Error::BadReceiveSeconds { seconds: receive });
        }
        let receive = receive + 0.0;
        let transfers: Vec<f64> = match config.sizes {
            Some(sizes) => sizes
                .iter()
                .map(|&size| latency + size as f64 / config.bandwidth)
                .collect(),
            None => vec![latency; n_nodes],
        };
        // Every input received once: the most any schedule pays.
        let transfer_total: f64 = transfers.iter().sum::<f64>() + receive * dag.edge_count() as f64;
        if transfer_total > MAX_TOTAL_SECONDS {
            return Err(Error::TransfersTooLarge {
                total: transfer_total,
            });
        }

        // Upward ranks, sinks first, kept as bits to sort by.
        let mut ranks = vec![0_u64; n_nodes];
        for &node in dag.topological_order().iter().rev() {
            let dependents = dag.dependents(node);
            let mut rank = costs[node.index()];
            if !dependents.is_empty() {
                let tail = dependents
                    .iter()
                    .map(|s| f64::from_bits(ranks[s.index()]))
                    .fold(0.0, f64::max);
                rank += transfers[node.index()] + tail;
            }
            ranks[node.index()] = bits(rank);
        }
        // A stable sort from a topological order breaks ties by it.
        let mut order: Vec<u32> = dag
            .topological_order()
            .iter()
            .map(|node| node.as_u32())
            .collect();
        order.sort_by_key(|&node| Reverse(ranks[node as usize]));
        let mut priority = vec![0_u32; n_nodes];
        for (i, &node) in order.iter().enumerate() {
            priority[node as usize] = i as u32;
        }
        Ok(Model {
            costs,
            transfers,
            receive,
            order,
            priority,
        })
    }
}

/// The bits of a time, which order as the time does: every time here is a
/// sum or maximum of non-negative numbers (+0.0, never -0.0), possibly
/// infinite, never NaN.
fn bits(time: f64) -> u64 {
    debug_assert!(time >= 0.0 && time.is_sign_positive(), "{time}");
    time.to_bits()
}

/// Event kinds, in the order they are taken at the same instant: a task
/// finishes; a task's inputs could all be on a worker; they could all be on
/// any worker.
const FINISH: u8 = 0;
const QUEUED: u8 = 1;
const ANYWHERE: u8 = 2;

/// Runs `dag` event by event (see [`assign_list`] and, with `fixed`
/// workers, [`makespan`]): the worker of every task and when the last one
/// finishes.
fn run(dag: &Topology, workers: &Workers, model: &Model, fixed: Option<&[u32]>) -> (Vec<u32>, f64) {
    let n_nodes = dag.node_count();
    let n_workers = workers.count();
    let mut state = State {
        part: vec![0; n_nodes],
        finish: vec![0.0; n_nodes],
        started: vec![false; n_nodes],
        idle: workers.all_slots().iter().map(|&s| s as usize).collect(),
        idle_workers: (0..n_workers as u32).collect(),
        events: BinaryHeap::new(),
        makespan: 0.0,
    };
    let mut missing: Vec<u32> = dag
        .node_ids()
        .map(|node| dag.dependencies(node).len() as u32)
        .collect();
    let mut queue = Queues {
        queues: vec![BinaryHeap::new(); n_workers],
        touched: Vec::new(),
        is_touched: vec![false; n_workers],
    };
    let mut shared: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let mut inputs = Inputs::new(n_workers);

    match fixed {
        Some(part) => {
            for node in dag.node_ids().filter(|node| missing[node.index()] == 0) {
                let w = part[node.index()];
                state.events.push(Reverse((0, QUEUED, node.as_u32(), w)));
            }
        }
        None => {
            // Sources, in blocks of the locality order, each worker's block
            // in proportion to its slots: source i of n goes to the worker
            // whose range of slots holds i / n of all slots.
            let sources: Vec<u32> = dependency_post_order(dag)
                .into_iter()
                .filter(|&node| missing[node as usize] == 0)
                .collect();
            let total_slots = u128::from(workers.total_slots());
            let (mut w, mut upto) = (0_usize, u128::from(workers.slots(0)));
            for (i, &node) in sources.iter().enumerate() {
                let at = i as u128 * total_slots / sources.len() as u128;
                while at >= upto && w + 1 < n_workers {
                    w += 1;
                    upto += u128::from(workers.slots(w));
                }
                state.events.push(Reverse((0, QUEUED, node, w as u32)));
                state.events.push(Reverse((0, ANYWHERE, node, 0)));
            }
        }
    }

    let mut pending: Vec<(u32, f64)> = Vec::new();
    while let Some(&Reverse((now_bits, ..))) = state.events.peek() {
        let now = f64::from_bits(now_bits);
        // Every event of this instant first, so that a slot freed now goes
        // to the best task queued now.
        while let Some(&Reverse((time, kind, node, w))) = state.events.peek()
            && time == now_bits
        {
            state.events.pop();
            let node_idx = node as usize;
            if kind != FINISH && state.started[node_idx] {
                continue;
            }
            if kind == ANYWHERE {
                shared.push(Reverse(model.priority[node_idx]));
                continue;
            }
            if kind == QUEUED {
                queue.push(w, model.priority[node_idx]);
                continue;
            }
            queue.touch(w);
            state.idle[w as usize] += 1;
            if state.idle[w as usize] == 1 {
                state.idle_workers.insert(w);
            }
            for &dependent in dag.dependents(NodeId::from_u32(node)) {
                let d = dependent.index();
                missing[d] -= 1;
                if missing[d] > 0 {
                    continue;
                }
                let dependent = dependent.as_u32();
                if let Some(part) = fixed {
                    let w = part[d];
                    let at = arrival_on(dag, model, &state, dependent, w);
                    pending.push((w, at));
                } else {
                    let anywhere = inputs.read(dag, model, &state, dependent);
                    pending.extend(inputs.arrivals());
                    inputs.clear();
                    state
                        .events
                        .push(Reverse((bits(anywhere), ANYWHERE, dependent, 0)));
                }
                // A task whose inputs are there now is queued at once,
                // which spares the events of most tasks.
                for (w, at) in pending.drain(..) {
                    if at == now {
                        queue.push(w, model.priority[d]);
                    } else {
                        state.events.push(Reverse((bits(at), QUEUED, dependent, w)));
                    }
                }
            }
        }
        // A worker runs the most urgent task queued on it first...
        for &w in &queue.touched {
            queue.is_touched[w as usize] = false;
            while state.idle[w as usize] > 0
                && let Some(Reverse(p)) = queue.queues[w as usize].pop()
            {
                state.start(dag, model, model.order[p as usize], w, now);
            }
        }
        queue.touched.clear();
        // ...and, with a slot idle and nothing of its own ready, the most
        // urgent task that could have reached it from elsewhere.
        while let Some(&w) = state.idle_workers.first()
            && let Some(Reverse(p)) = shared.pop()
        {
            state.start(dag, model, model.order[p as usize], w, now);
        }
    }
    (state.part, state.makespan)
}

/// The tasks queued on each worker, by priority, and the workers whose
/// queue or slots changed at the current instant.
struct Queues {
    queues: Vec<BinaryHeap<Reverse<u32>>>,
    touched: Vec<u32>,
    is_touched: Vec<bool>,
}

impl Queues {
    fn touch(&mut self, w: u32) {
        if !self.is_touched[w as usize] {
            self.is_touched[w as usize] = true;
            self.touched.push(w);
        }
    }

    fn push(&mut self, w: u32, priority: u32) {
        self.touch(w);
        self.queues[w as usize].push(Reverse(priority));
    }
}

/// What starting a task changes in [`run`].
struct State {
    part: Vec<u32>,
    finish: Vec<f64>,
    started: Vec<bool>,
    /// The free slots of each worker.
    idle: Vec<usize>,
    /// The workers with a free slot.
    idle_workers: BTreeSet<u32>,
    /// (time, kind, task, worker), earliest first.
    events: BinaryHeap<Reverse<(u64, u8, u32, u32)>>,
    /// The latest finish so far.
    makespan: f64,
}

impl State {
    /// Starts `node` on `w` at `now`, unless it has started already (a task
    /// waits in several queues, and the first to take it wins).
    fn start(&mut self, dag: &Topology, model: &Model, node: u32, w: u32, now: f64) {
        let node_idx = node as usize;
        if self.started[node_idx] {
            return;
        }
        self.started[node_idx] = true;
        self.part[node_idx] = w;
        let mut end = now + model.costs[node_idx];
        if model.receive > 0.0 {
            let received = dag
                .dependencies(NodeId::from_u32(node))
                .iter()
                .filter(|dep| self.part[dep.index()] != w)
                .count();
            end += model.receive * received as f64;
        }
        self.finish[node_idx] = end;
        self.makespan = self.makespan.max(end);
        self.idle[w as usize] -= 1;
        if self.idle[w as usize] == 0 {
            self.idle_workers.remove(&w);
        }
        self.events.push(Reverse((bits(end), FINISH, node, w)));
    }
}

/// Where the inputs of one task are and when they could be elsewhere, per
/// worker holding one; reset with `clear` after each task.
struct Inputs {
    /// The latest finish of the inputs on each worker.
    latest: Vec<f64>,
    /// The latest arrival elsewhere of the inputs on each worker.
    sent: Vec<f64>,
    /// Whether the worker holds an input.
    holds: Vec<bool>,
    /// The workers holding an input.
    holders: Vec<u32>,
    /// The latest arrival elsewhere over all workers, with its worker, and
    /// the latest over the other workers.
    first: (f64, u32),
    second: f64,
}

impl Inputs {
    fn new(n_workers: usize) -> Inputs {
        Inputs {
            latest: vec![0.0; n_workers],
            sent: vec![0.0; n_workers],
            holds: vec![false; n_workers],
            holders: Vec::new(),
            first: (0.0, u32::MAX),
            second: 0.0,
        }
    }

    /// Reads where the inputs of `node`, all finished, are; returns when
    /// they could all be on any worker.
    fn read(&mut self, dag: &Topology, model: &Model, state: &State, node: u32) -> f64 {
        for dep in dag.dependencies(NodeId::from_u32(node)) {
            let dep_idx = dep.index();
            let w = state.part[dep_idx] as usize;
            if !self.holds[w] {
                self.holds[w] = true;
                self.holders.push(w as u32);
                self.latest[w] = 0.0;
                self.sent[w] = 0.0;
            }
            let finish = state.finish[dep_idx];
            self.latest[w] = self.latest[w].max(finish);
            self.sent[w] = self.sent[w].max(finish + model.transfers[dep_idx]);
        }
        let (mut first, mut second) = ((0.0_f64, u32::MAX), 0.0_f64);
        for &w in &self.holders {
            let sent = self.sent[w as usize];
            if sent > first.0 {
                second = first.0;
                first = (sent, w);
            } else if sent > second {
                second = sent;
            }
        }
        (self.first, self.second) = (first, second);
        first.0
    }

    /// After `read`: for each worker holding an input, when all the inputs
    /// could be there.
    fn arrivals(&self) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.holders.iter().map(|&w| {
            let others = if w == self.first.1 {
                self.second
            } else {
                self.first.0
            };
            (w, self.latest[w as usize].max(others))
        })
    }

    fn clear(&mut self) {
        for &w in &self.holders {
            self.holds[w as usize] = false;
        }
        self.holders.clear();
    }
}

/// When the inputs of `node`, all finished, could all be on `w`.
fn arrival_on(dag: &Topology, model: &Model, state: &State, node: u32, w: u32) -> f64 {
    dag.dependencies(NodeId::from_u32(node))
        .iter()
        .map(|dep| {
            let finish = state.finish[dep.index()];
            if state.part[dep.index()] == w {
                finish
            } else {
                finish + model.transfers[dep.index()]
            }
        })
        .fold(0.0, f64::max)
}
