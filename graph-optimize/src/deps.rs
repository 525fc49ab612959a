//! `Dependencies`: every reference of every task, by node id, in compressed
//! sparse rows; what each pass returns so that the next need not recompute it.

use graph_core::{Body, Dag, NodeId, TaskGraph, Topology};
use rayon::prelude::*;

use crate::Error;
use crate::work::Kind;

/// Tasks per unit of parallel work.
const CHUNK: usize = 8192;

/// The references of every task of a graph, as node ids: row `n` lists, in
/// the order they occur in task `n`'s body (preorder), every key it
/// references, repeats included.
///
/// This is dask's `dependencies` with `as_list=True`: `fuse` needs the
/// repeats (a task that uses a result twice must not absorb it). Each pass
/// returns the rows of the graph it returns, and each pass accepts them
/// back, so a pipeline resolves keys to node ids once.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, TaskGraph, Term};
/// use graph_optimize::Dependencies;
///
/// let graph = TaskGraph::builder()
///     .task("a", Term::lit(1))
///     .task("b", Term::call("add", [Term::key("a"), Term::key("a")]))
///     .build()?;
/// let deps = Dependencies::of(&graph)?;
/// assert_eq!(deps.get(NodeId::new(1)), [NodeId::new(0), NodeId::new(0)]);
/// assert_eq!(deps.to_topology()?.edge_count(), 1);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependencies {
    pub(crate) offsets: Vec<u32>,
    pub(crate) targets: Vec<NodeId>,
}

impl Dependencies {
    /// Resolves every reference of `graph` to a node id.
    ///
    /// Uses the graph's cached [`Topology`] (building it, in parallel, if
    /// needed): where a task's references are all distinct, its topology row
    /// lists them in order, so only tasks that reference a key twice are
    /// resolved by key.
    ///
    /// **Complexity**: O(V + R) time for R references and O(V + R) space,
    /// plus one hash lookup per reference of the tasks with repeats (and the
    /// topology's, if it was not cached).
    ///
    /// # Errors
    ///
    /// [`graph_core::Error::MissingDependency`] (as [`Error::Graph`]) for a
    /// reference to a key no task has, naming both keys;
    /// [`graph_core::Error::Cycle`] for a cycle; [`Error::SelfReference`]
    /// for a task that references itself.
    pub fn of(graph: &TaskGraph) -> Result<Dependencies, Error> {
        resolve(graph).map(|resolved| resolved.deps)
    }

    /// The number of tasks (rows).
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The number of references, repeats included.
    pub fn reference_count(&self) -> usize {
        self.targets.len()
    }

    /// The references of task `node`, in preorder, repeats included.
    ///
    /// # Panics
    ///
    /// If `node` is not below [`Dependencies::node_count`].
    pub fn get(&self, node: NodeId) -> &[NodeId] {
        let i = node.index();
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The distinct dependencies of `node`, sorted by node id: dask's
    /// dependencies as a set.
    pub fn distinct(&self, node: NodeId) -> Vec<NodeId> {
        let mut row = self.get(node).to_vec();
        row.sort_unstable();
        row.dedup();
        row
    }

    /// The rows as a [`Topology`] (repeats merged, cycles reported).
    ///
    /// # Errors
    ///
    /// [`graph_core::Error::NodeCycle`] (as [`Error::Graph`]) if the rows form
    /// a cycle.
    pub fn to_topology(&self) -> Result<Topology, Error> {
        let targets = self.targets.iter().map(|node| node.as_u32()).collect();
        Ok(Topology::from_dependency_rows(
            self.offsets.clone(),
            targets,
        )?)
    }
}

/// A graph's references resolved, with what the passes read of every task,
/// gathered in one walk.
pub(crate) struct Resolved {
    pub(crate) deps: Dependencies,
    /// The shape of each body.
    pub(crate) kinds: Vec<Kind>,
    /// How many calls and lists each body nests ([`Term::nesting`](graph_core::Term::nesting)).
    pub(crate) nestings: Vec<u32>,
    /// Each task's size and cost; empty when no task has one.
    pub(crate) sizes: Vec<Option<u64>>,
    pub(crate) costs: Vec<Option<f64>>,
}

/// What a chunk of tasks resolves to: their references, and whether any of
/// them has a size, or a cost.
type Chunk = (Vec<NodeId>, bool, bool);

/// [`Dependencies::of`], plus what the passes read of every task, in one
/// parallel walk over the bodies.
pub(crate) fn resolve(graph: &TaskGraph) -> Result<Resolved, Error> {
    let topology = graph.topology()?;
    let n = graph.len();
    let mut counts = vec![0_u32; n];
    let mut kinds = vec![Kind::Opaque; n];
    let mut nestings = vec![0_u32; n];
    let mut any_size = false;
    let mut any_cost = false;
    // Each chunk fills its part of the per-task vectors and returns its
    // references, which vary in number.
    let resolve_chunk = |chunk: usize,
                         counts: &mut [u32],
                         kinds: &mut [Kind],
                         nestings: &mut [u32]|
     -> Result<Chunk, Error> {
        let (mut any_size, mut any_cost) = (false, false);
        let first = chunk * CHUNK;
        let mut targets = Vec::with_capacity(counts.len() * 2);
        for i in 0..counts.len() {
            let node = NodeId::new(first + i);
            let task = graph.task(node);
            let row = topology.dependencies(node);
            let mut count = 0_usize;
            task.body.for_each_ref(&mut |_| count += 1);
            if count == row.len() {
                targets.extend_from_slice(row);
            } else {
                // Repeats, or a reference to itself (which the topology drops).
                let mut this = false;
                task.body.for_each_ref(&mut |dep| {
                    let dep = graph
                        .node_id(dep)
                        .expect("the topology resolved every reference");
                    this |= dep == node;
                    targets.push(dep);
                });
                if this {
                    return Err(Error::SelfReference {
                        key: graph.key(node).clone(),
                    });
                }
            }
            counts[i] = count as u32;
            kinds[i] = Kind::of(&task.body);
            nestings[i] = nesting(&task.body);
            any_size |= task.size.is_some();
            any_cost |= task.cost.is_some();
        }
        Ok((targets, any_size, any_cost))
    };
    let chunks: Vec<Result<Chunk, Error>> = if n <= CHUNK {
        // One chunk: no work for other threads.
        vec![resolve_chunk(0, &mut counts, &mut kinds, &mut nestings)]
    } else {
        counts
            .par_chunks_mut(CHUNK)
            .zip(kinds.par_chunks_mut(CHUNK))
            .zip(nestings.par_chunks_mut(CHUNK))
            .enumerate()
            .map(|(chunk, ((counts, kinds), nestings))| {
                resolve_chunk(chunk, counts, kinds, nestings)
            })
            .collect()
    };
    let mut targets = Vec::with_capacity(2 * (topology.edge_count() + n / 8));
    for chunk in chunks {
        let (chunk, chunk_sizes, chunk_costs) = chunk?;
        any_size |= chunk_sizes;
        any_cost |= chunk_costs;
        if targets.len() + chunk.len() > u32::MAX as usize {
            return Err(graph_core::Error::TooLarge {
                what: "edges",
                count: targets.len() + chunk.len(),
            }
            .into());
        }
        targets.extend_from_slice(&chunk);
    }
    let sizes = column(any_size, n, |node| graph.task(node).size);
    let costs = column(any_cost, n, |node| graph.task(node).cost);
    // The counts become the offsets, in place.
    let mut offsets = counts;
    offsets.push(0);
    let mut offset = 0_u32;
    for slot in &mut offsets {
        let count = *slot;
        *slot = offset;
        offset += count;
    }
    Ok(Resolved {
        deps: Dependencies { offsets, targets },
        kinds,
        nestings,
        sizes,
        costs,
    })
}

/// How many calls and lists a body nests; an opaque body, none.
fn nesting(body: &Body) -> u32 {
    match body {
        Body::Term(term) => u32::try_from(term.nesting()).unwrap_or(u32::MAX),
        Body::Opaque(_) => 0,
    }
}

/// A per-task column of rare metadata (sizes, costs): empty unless some
/// task has a value, with room for the tasks passes may add (untouched room
/// costs nothing).
fn column<T>(any: bool, n: usize, get: impl Fn(NodeId) -> Option<T>) -> Vec<Option<T>> {
    if !any {
        return Vec::new();
    }
    let mut column = Vec::with_capacity(2 * n);
    column.extend((0..n).map(|i| get(NodeId::new(i))));
    column
}

/// Checks that `deps` has one row per task and as many references in each
/// row as the task's body holds; returns them with what the passes read of
/// every task.
pub(crate) fn check(graph: &TaskGraph, deps: &Dependencies) -> Result<Resolved, Error> {
    if deps.node_count() != graph.len() {
        return Err(Error::DependenciesLength {
            tasks: graph.len(),
            listed: deps.node_count(),
        });
    }
    if let Some(&node) = deps.targets.iter().find(|node| node.index() >= graph.len()) {
        return Err(graph_core::Error::NodeOutOfRange {
            node: node.index(),
            node_count: graph.len(),
        }
        .into());
    }
    let mut kinds = Vec::with_capacity(graph.len());
    let mut nestings = Vec::with_capacity(graph.len());
    let mut sizes = Vec::with_capacity(graph.len());
    let mut costs = Vec::with_capacity(graph.len());
    for (i, (key, task)) in graph.iter().enumerate() {
        let mut found = 0;
        task.body.for_each_ref(&mut |_| found += 1);
        let listed = deps.get(NodeId::new(i)).len();
        if found != listed {
            return Err(Error::DependenciesMismatch {
                key: key.clone(),
                found,
                listed,
            });
        }
        kinds.push(Kind::of(&task.body));
        nestings.push(nesting(&task.body));
        sizes.push(task.size);
        costs.push(task.cost);
    }
    if sizes.iter().all(Option::is_none) {
        sizes = Vec::new();
    }
    if costs.iter().all(Option::is_none) {
        costs = Vec::new();
    }
    Ok(Resolved {
        deps: deps.clone(),
        kinds,
        nestings,
        sizes,
        costs,
    })
}
