//! Mars' initial worker assignment (`GraphAssigner`), and the shuffle
//! reducers it treats as start operands.

use std::collections::VecDeque;

use graph_core::{Dag, NodeId, Topology};

use crate::{Assignment, Error, Workers};

const NONE: u32 = u32::MAX;

/// Places `dag` on `workers` with Mars' heuristic: spread the start operands
/// evenly by breadth-first search, then put every other task where most of
/// its inputs are.
///
/// This is Mars' `GraphAssigner` (`mars/services/task/analyzer/assigner.py`)
/// followed by its rule for the remaining tasks:
///
/// 1. The start operands are the tasks without dependencies, in id order,
///    then the shuffle reducers (see [`shuffle_reducers`]), in id order.
///    The edges into a reducer are dropped for the search, as Mars drops
///    them, so a search from a mapper does not run into the reducers.
/// 2. Each worker gets a quota of start operands proportional to its slots
///    (rounded down, the rest handed out one by one from the worker with the
///    most slots).
/// 3. While some quota is left: the worker with the most quota left takes
///    the last start operand not yet placed, and a breadth-first search over
///    the undirected graph from it marks every task it meets for that worker
///    (walking through tasks marked before without counting them). It stops
///    once it has marked `V / k` tasks or the worker's quota of start
///    operands is used up.
/// 4. Every other task, in topological order, goes to the worker that holds
///    most of its inputs.
///
/// Differences from Mars: ties go to the lowest worker index where Mars
/// relies on dictionary order; the search visits a task's dependencies
/// before its dependents, where Mars follows the insertion order of its
/// chunk graph; reducers are found from the shape of the graph, since a
/// [`Dag`] has no operand stages; and step 4 counts inputs rather than
/// bytes, as the signature has no sizes (Mars' scheduler weighs inputs by
/// their size; all sizes equal gives this rule). Mars' own fusion of chains
/// into subtasks is not modelled: every task is placed.
///
/// # Arguments
///
/// - `dag`: the graph.
/// - `workers`: the workers and their slots.
///
/// # Returns
///
/// The worker of every task.
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG (a [`Workers`] value always has a
/// worker with a slot, so nothing else can fail).
///
/// # Complexity
///
/// O(s · (V + E)) time in the worst case, where s is the number of searches
/// (at least the number of connected components, at most the number of start
/// operands): each search may walk through tasks that earlier searches
/// marked. O(V + k) auxiliary space.
///
/// # Example
///
/// ```
/// use graph_assign::{Workers, assign_mars, edge_cut};
/// use graph_core::Topology;
///
/// // Two independent chains 0 -> 1 -> 2 and 3 -> 4 -> 5: one per worker.
/// let dag = Topology::from_edges(6, [(0, 1), (1, 2), (3, 4), (4, 5)])?;
/// let assignment = assign_mars(&dag, &Workers::new(2)?)?;
/// assert_eq!(assignment.as_slice(), [1, 1, 1, 0, 0, 0]);
/// assert_eq!(edge_cut(&dag, &assignment)?, 0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_mars(dag: &impl Dag, workers: &Workers) -> Result<Assignment, Error> {
    let placement = mars(&*Topology::checked(dag)?, workers);
    Ok(Assignment::new_unchecked(placement, workers.count()))
}

fn mars(dag: &Topology, workers: &Workers) -> Vec<u32> {
    let n_nodes = dag.node_count();
    let n_workers = workers.count();
    let mut is_start = vec![false; n_nodes];
    let mut starts: Vec<u32> = Vec::new();
    for (node, start) in is_start.iter_mut().enumerate() {
        if dag.dependencies(NodeId::new(node)).is_empty() {
            *start = true;
            starts.push(node as u32);
        }
    }
    for reducer in reducers(dag) {
        is_start[reducer.index()] = true;
        starts.push(reducer.as_u32());
    }

    let mut quotas = quotas(workers, starts.len());
    let spread_limit = n_nodes as f64 / n_workers as f64;
    let mut marked = vec![NONE; n_nodes];
    let mut search = Search::new(n_nodes);
    let mut candidates = starts;
    loop {
        // The worker with the most quota left; ties to the lowest index.
        let (worker, &quota) = quotas
            .iter()
            .enumerate()
            .rev()
            .max_by_key(|&(_, q)| *q)
            .expect("there is at least one worker");
        if quota == 0 {
            break;
        }
        // The quotas add up to the start operands not yet marked, so one is
        // left while some quota is.
        let start = loop {
            let node = candidates
                .pop()
                .expect("an unmarked start operand is left while quota is");
            if marked[node as usize] == NONE {
                break node;
            }
        };
        let placed = search.run(
            dag,
            &is_start,
            start,
            worker as u32,
            quota,
            spread_limit,
            &mut marked,
        );
        quotas[worker] -= placed;
    }

    // Every other task goes where most of its inputs are.
    let mut res = vec![0_u32; n_nodes];
    let mut counts = vec![0_u32; n_workers];
    let mut touched: Vec<u32> = Vec::new();
    for &id in dag.topological_order() {
        let node = id.index();
        if is_start[node] {
            res[node] = marked[node];
            continue;
        }
        for &dep in dag.dependencies(id) {
            let w = res[dep.index()];
            if counts[w as usize] == 0 {
                touched.push(w);
            }
            counts[w as usize] += 1;
        }
        let mut best = (0, NONE);
        for &w in &touched {
            let count = counts[w as usize];
            if count > best.0 || (count == best.0 && w < best.1) {
                best = (count, w);
            }
            counts[w as usize] = 0;
        }
        touched.clear();
        res[node] = best.1;
    }
    res
}

/// Each worker's share of `n_starts` start operands, in proportion to its
/// slots: rounded down, then the rest one each, from the worker with the
/// most slots (ties by index).
fn quotas(workers: &Workers, n_starts: usize) -> Vec<usize> {
    let total = workers.total_slots() as f64;
    let mut res: Vec<usize> = workers
        .all_slots()
        .iter()
        .map(|&s| (n_starts as f64 * f64::from(s) / total) as usize)
        .collect();
    let mut by_slots: Vec<usize> = (0..workers.count()).collect();
    by_slots.sort_by_key(|&w| std::cmp::Reverse(workers.slots(w)));
    let mut rest = n_starts - res.iter().sum::<usize>().min(n_starts);
    for &w in by_slots.iter().cycle() {
        if rest == 0 {
            break;
        }
        res[w] += 1;
        rest -= 1;
    }
    res
}

/// One breadth-first search's reusable state.
struct Search {
    seen: Vec<u32>,
    epoch: u32,
    queue: VecDeque<u32>,
}

impl Search {
    fn new(n_nodes: usize) -> Search {
        Search {
            seen: vec![0; n_nodes],
            epoch: 0,
            queue: VecDeque::new(),
        }
    }

    /// Marks tasks for `worker` from `start`; returns how many start
    /// operands it marked.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &mut self,
        dag: &Topology,
        is_start: &[bool],
        start: u32,
        worker: u32,
        quota: usize,
        spread_limit: f64,
        marked: &mut [u32],
    ) -> usize {
        self.epoch += 1;
        let epoch = self.epoch;
        self.queue.clear();
        self.queue.push_back(start);
        self.seen[start as usize] = epoch;
        let (mut spread, mut placed) = (0_usize, 0_usize);
        while let Some(node) = self.queue.pop_front() {
            let id = NodeId::from_u32(node);
            // The undirected graph without the edges into start operands.
            let deps: &[NodeId] = if is_start[node as usize] {
                &[]
            } else {
                dag.dependencies(id)
            };
            for &next in deps {
                if self.seen[next.index()] != epoch {
                    self.seen[next.index()] = epoch;
                    self.queue.push_back(next.as_u32());
                }
            }
            for &next in dag.dependents(id) {
                if !is_start[next.index()] && self.seen[next.index()] != epoch {
                    self.seen[next.index()] = epoch;
                    self.queue.push_back(next.as_u32());
                }
            }
            if marked[node as usize] != NONE {
                continue;
            }
            spread += 1;
            marked[node as usize] = worker;
            if !is_start[node as usize] {
                continue;
            }
            placed += 1;
            if spread as f64 >= spread_limit || placed >= quota {
                break;
            }
        }
        placed
    }
}

/// The tasks Mars would treat as shuffle reducers, found from the shape of
/// the graph: a task that reads from three or more distinct mappers which all
/// fan out to the same three or more consumers, from the first to the last,
/// as the reducers of a shuffle do. A task with a single input and a single
/// output between a mapper and a reducer (dask's `split` of a dataframe
/// shuffle) is looked through.
///
/// Mars marks reducers by their operand stage; a [`Dag`] has none, so this
/// recognizes the all-to-all block a shuffle leaves in the graph. Tree
/// reductions, halos and element-wise operations do not match.
///
/// # Returns
///
/// The reducers in increasing id order.
///
/// # Complexity
///
/// O(V + E) time, O(1) auxiliary space beyond the result.
///
/// # Example
///
/// ```
/// use graph_core::{Dag, NodeId, generate};
///
/// // 4 inputs, 4 x 4 splits, 4 outputs: the outputs are the reducers.
/// let graph = generate::shuffle_split(4, 4);
/// let reducers = graph_assign::shuffle_reducers(graph.topology()?)?;
/// let keys: Vec<String> = reducers.iter().map(|&n| graph.key(n).to_string()).collect();
/// assert_eq!(keys, ["('output', 0)", "('output', 1)", "('output', 2)", "('output', 3)"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// [`Error::Graph`] if `dag` is not a DAG.
pub fn shuffle_reducers(dag: &impl Dag) -> Result<Vec<NodeId>, Error> {
    Ok(reducers(&*Topology::checked(dag)?))
}

const MIN_SHUFFLE: usize = 3;

fn reducers(dag: &Topology) -> Vec<NodeId> {
    let is_split =
        |node: NodeId| dag.dependencies(node).len() == 1 && dag.dependents(node).len() == 1;
    let source = |dep: NodeId| {
        if is_split(dep) {
            dag.dependencies(dep)[0]
        } else {
            dep
        }
    };
    let reach = |consumer: NodeId| {
        if is_split(consumer) {
            dag.dependents(consumer)[0]
        } else {
            consumer
        }
    };
    // The fan-out of a mapper, and the first and last consumer it reaches.
    let signature = |mapper: NodeId| {
        let out = dag.dependents(mapper);
        (out.len(), reach(out[0]), reach(out[out.len() - 1]))
    };
    let mut res = Vec::new();
    for node in (0..dag.node_count()).map(NodeId::new) {
        let deps = dag.dependencies(node);
        if deps.len() < MIN_SHUFFLE {
            continue;
        }
        let first = source(deps[0]);
        let expected = signature(first);
        if expected.0 < MIN_SHUFFLE {
            continue;
        }
        let mut distinct = 1;
        let mut previous = first;
        let all_alike = deps.iter().all(|&dep| {
            let mapper = source(dep);
            if mapper != previous {
                distinct += 1;
                previous = mapper;
            }
            signature(mapper) == expected
        });
        if all_alike && distinct >= MIN_SHUFFLE {
            res.push(node);
        }
    }
    res
}
