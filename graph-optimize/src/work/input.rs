//! What the passes read of every input task: the shape and nesting of its
//! body, its size and cost, and its references, gathered in one parallel
//! walk over the bodies.

use graph_core::{Body, Dag, NodeId, TaskGraph, Topology};
use rayon::prelude::*;

use super::body::Kind;
use crate::Error;

/// Tasks per unit of parallel work.
const CHUNK: usize = 8192;

/// Per input task, what the passes read of it.
pub(crate) struct Input {
    /// The shape of each body.
    pub(crate) kinds: Vec<Kind>,
    /// How many calls and lists each body nests ([`Term::nesting`](graph_core::Term::nesting)),
    /// if asked for: only the passes that limit the depth of the terms they
    /// build read it (see [`Work::levels`](super::Work::levels)).
    pub(crate) nestings: Option<Vec<u32>>,
    /// Each task's size and cost; empty when no task has one.
    pub(crate) sizes: Vec<Option<u64>>,
    pub(crate) costs: Vec<Option<f64>>,
    /// Every reference of every task as rows `(offsets, targets)`, as
    /// [`TaskGraph::references`] gives them.
    pub(crate) rows: (Vec<u32>, Vec<NodeId>),
}

/// What a chunk of tasks gives besides its part of the per-task columns:
/// the targets of its rows (while no task names a key twice), and whether
/// any task has a size, a cost, a key named twice.
struct Chunk {
    targets: Vec<NodeId>,
    any_size: bool,
    any_cost: bool,
    repeats: bool,
}

impl Input {
    /// Reads every task of `graph`, whose checked topology is `topology`,
    /// in parallel; the nestings too if `with_nestings`.
    ///
    /// The references come from the same walk: a task that names each key
    /// once has its topology row (distinct dependencies in first-reference
    /// order) as its references, so the walk only counts them. Should some
    /// task name a key twice, they are [`TaskGraph::references`] instead,
    /// which resolves that task's keys. Either way every body is walked
    /// while it is in the cache, once for its references and once for its
    /// nesting: a second walk over all the bodies (taking the references
    /// and the rest apart) costs more than both.
    ///
    /// **Complexity**: O(V + R) time and space, plus the size of the terms.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::references`], which is only called for a graph in
    /// which some task names a key twice.
    pub(crate) fn of(
        graph: &TaskGraph,
        topology: &Topology,
        with_nestings: bool,
    ) -> Result<Input, Error> {
        let n = graph.len();
        let mut kinds = vec![Kind::Opaque; n];
        let mut counts = vec![0_u32; n];
        let mut nestings = if with_nestings {
            vec![0_u32; n]
        } else {
            Vec::new()
        };
        // Each chunk fills its part of the per-task columns.
        let read = |chunk: usize, kinds: &mut [Kind], counts: &mut [u32], nestings: &mut [u32]| {
            let first = chunk * CHUNK;
            let mut res = Chunk {
                targets: Vec::with_capacity(2 * kinds.len()),
                any_size: false,
                any_cost: false,
                repeats: false,
            };
            for (i, kind) in kinds.iter_mut().enumerate() {
                let node = NodeId::new(first + i);
                let task = graph.task(node);
                let mut count = 0_u32;
                task.body.for_each_ref(&mut |_| count += 1);
                let row = topology.dependencies(node);
                if count as usize == row.len() {
                    res.targets.extend_from_slice(row);
                } else {
                    res.repeats = true;
                }
                counts[i] = count;
                *kind = Kind::of(&task.body);
                if let Some(nesting) = nestings.get_mut(i) {
                    *nesting = nesting_of(&task.body);
                }
                res.any_size |= task.size.is_some();
                res.any_cost |= task.cost.is_some();
            }
            res
        };
        let chunks: Vec<Chunk> = if n <= CHUNK {
            // One chunk: no work for other threads.
            vec![read(0, &mut kinds, &mut counts, &mut nestings)]
        } else if with_nestings {
            kinds
                .par_chunks_mut(CHUNK)
                .zip(counts.par_chunks_mut(CHUNK))
                .zip(nestings.par_chunks_mut(CHUNK))
                .enumerate()
                .map(|(chunk, ((kinds, counts), nestings))| read(chunk, kinds, counts, nestings))
                .collect()
        } else {
            kinds
                .par_chunks_mut(CHUNK)
                .zip(counts.par_chunks_mut(CHUNK))
                .enumerate()
                .map(|(chunk, (kinds, counts))| read(chunk, kinds, counts, &mut []))
                .collect()
        };
        let (mut any_size, mut any_cost, mut repeats) = (false, false, false);
        for chunk in &chunks {
            any_size |= chunk.any_size;
            any_cost |= chunk.any_cost;
            repeats |= chunk.repeats;
        }
        let rows = if repeats {
            drop(chunks);
            graph.references()?.into_rows()
        } else {
            let total: usize = chunks.iter().map(|chunk| chunk.targets.len()).sum();
            if total > u32::MAX as usize {
                return Err(graph_core::Error::TooLarge {
                    what: "edges",
                    count: total,
                }
                .into());
            }
            let mut targets = Vec::with_capacity(total);
            for chunk in chunks {
                targets.extend_from_slice(&chunk.targets);
            }
            // The counts become the offsets, in place.
            let mut offsets = counts;
            offsets.push(0);
            let mut offset = 0_u32;
            for slot in &mut offsets {
                let count = *slot;
                *slot = offset;
                offset += count;
            }
            (offsets, targets)
        };
        Ok(Input {
            kinds,
            nestings: with_nestings.then_some(nestings),
            sizes: column(any_size, n, |node| graph.task(node).size),
            costs: column(any_cost, n, |node| graph.task(node).cost),
            rows,
        })
    }
}

/// How many calls and lists a body nests; an opaque body, none.
pub(super) fn nesting_of(body: &Body) -> u32 {
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
