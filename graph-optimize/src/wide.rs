//! Wide dependencies found from a graph's shape alone: the edges of its
//! complete bipartite blocks, the all-to-all exchange a shuffle makes.

use fixedbitset::FixedBitSet;
use graph_core::{Dag, NodeId};

/// The wide dependencies of a graph: every edge that belongs to a complete
/// bipartite block, that is, every edge `p -> c` for which some other task
/// `c'` also reads `p` and some other task `p'` is read by both `c` and
/// `c'`. Every task of a set of at least two then reads every task of
/// another set of at least two (the smallest such block is 2 x 2), which is
/// how a shuffle's m mappers and n reducers are joined, and never how a
/// chain, a tree reduction, a broadcast (one task read by many) or a split
/// (one task read by its pieces) is.
///
/// Built by [`find_wide_edges`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideEdges {
    /// Each node's distinct dependencies, sorted:
    /// `deps[offsets[n]..offsets[n + 1]]`.
    offsets: Vec<usize>,
    deps: Vec<NodeId>,
    /// Bit `e`: whether the edge from `deps[e]` into its node is wide.
    wide: FixedBitSet,
}

/// Finds the edges of a graph that belong to complete bipartite blocks (see
/// [`WideEdges`]).
///
/// Matches no dask function: Spark and BNDL call a dependency wide when a
/// partition reads many partitions of its parent (a shuffle); a task graph
/// does not say which tasks are partitions of one dataset, so the shape
/// decides. Repeated references count as one edge.
///
/// # Arguments
///
/// - `dag`: the graph's shape.
///
/// # Returns
///
/// The [`WideEdges`].
///
/// # Complexity
///
/// O(E log d) to sort each task's d dependencies, then for each task that
/// reads at least two tasks read by others, the readers of all but its most
/// read dependency (stopping once all its edges are known wide), and a merge
/// of two rows per block found: O(E) on a shuffle or on a graph without
/// blocks, O(V + E) space.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, generate};
/// use graph_optimize::find_wide_edges;
///
/// // 8 mappers, each read by all 6 reducers: 48 wide edges.
/// let shuffle = generate::shuffle(8, 6);
/// let wide = find_wide_edges(shuffle.topology()?);
/// assert_eq!(wide.len(), 48);
/// assert!(wide.contains(NodeId::new(0), NodeId::new(8)));
///
/// // A chain and a tree reduction have none.
/// assert!(find_wide_edges(generate::chain(10).topology()?).is_empty());
/// assert!(find_wide_edges(generate::tree(64, 4).topology()?).is_empty());
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn find_wide_edges(dag: &impl Dag) -> WideEdges {
    WideEdges::find(dag.node_count(), |node| dag.dependencies(node))
}

impl WideEdges {
    /// Finds the wide edges among `n` nodes whose dependencies (repeats
    /// allowed) are `rows(node)`.
    pub(crate) fn find<'a>(n: usize, rows: impl Fn(NodeId) -> &'a [NodeId]) -> WideEdges {
        let (offsets, deps) = sorted_rows(n, rows);
        let row = |c: usize| offsets[c]..offsets[c + 1];
        // Only a task that reads two or more tasks can close a block, so the
        // readers listed for each task are those.
        let readers = Readers::build(n, &offsets, &deps);
        let mut wide = FixedBitSet::with_capacity(deps.len());
        // `shared[c']`: how many of the current task's dependencies, taken
        // so far, `c'` reads too; `touched` lists the `c'` to reset.
        let mut shared = vec![0_u32; n];
        let mut touched: Vec<usize> = Vec::new();
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        for c in 0..n {
            candidates.clear();
            candidates.extend(
                row(c)
                    .map(|e| (readers.of(deps[e]).len(), e))
                    .filter(|&(count, _)| count >= 2),
            );
            let mut unknown = candidates.iter().filter(|&&(_, e)| !wide[e]).count();
            if candidates.len() < 2 || unknown == 0 {
                continue;
            }
            // The most read dependency is not walked: a reader met through
            // another dependency is checked for it by a search in its row.
            candidates.sort_unstable();
            let (&(_, last), walked) = candidates.split_last().expect("two or more");
            'walk: for &(_, e) in walked {
                for &other in readers.of(deps[e]) {
                    let other = other as usize;
                    if other == c {
                        continue;
                    }
                    shared[other] += 1;
                    match shared[other] {
                        1 => touched.push(other),
                        2 => {
                            unknown -= mark_block(&offsets, &deps, &mut wide, c, other);
                            if unknown == 0 {
                                break 'walk;
                            }
                        }
                        _ => {}
                    }
                }
            }
            if unknown > 0 {
                for &other in &touched {
                    if shared[other] == 1 && deps[row(other)].binary_search(&deps[last]).is_ok() {
                        unknown -= mark_block(&offsets, &deps, &mut wide, c, other);
                        if unknown == 0 {
                            break;
                        }
                    }
                }
            }
            for other in touched.drain(..) {
                shared[other] = 0;
            }
        }
        WideEdges {
            offsets,
            deps,
            wide,
        }
    }

    /// Whether the edge `dependency -> dependent` is wide (false if there is
    /// no such edge).
    pub fn contains(&self, dependency: NodeId, dependent: NodeId) -> bool {
        let i = dependent.index();
        if i + 1 >= self.offsets.len() {
            return false;
        }
        let start = self.offsets[i];
        self.deps[start..self.offsets[i + 1]]
            .binary_search(&dependency)
            .is_ok_and(|at| self.wide[start + at])
    }

    /// The number of wide edges.
    pub fn len(&self) -> usize {
        self.wide.count_ones(..)
    }

    /// Whether no edge is wide.
    pub fn is_empty(&self) -> bool {
        self.wide.is_clear()
    }

    /// The wide edges, as `(dependency, dependent)`, by dependent and then
    /// dependency.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, NodeId)> + '_ {
        self.wide.ones().map(|e| {
            // The row holding edge `e`: the last offset at or before it.
            let dependent = self.offsets.partition_point(|&start| start <= e) - 1;
            (self.deps[e], NodeId::new(dependent))
        })
    }
}

/// Each node's distinct dependencies, sorted, in one CSR.
fn sorted_rows<'a>(n: usize, rows: impl Fn(NodeId) -> &'a [NodeId]) -> (Vec<usize>, Vec<NodeId>) {
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut deps: Vec<NodeId> = Vec::new();
    for node in 0..n {
        let start = deps.len();
        deps.extend_from_slice(rows(NodeId::new(node)));
        deps[start..].sort_unstable();
        let mut kept = start;
        for at in start..deps.len() {
            if at == start || deps[at] != deps[kept - 1] {
                deps[kept] = deps[at];
                kept += 1;
            }
        }
        deps.truncate(kept);
        offsets.push(deps.len());
    }
    (offsets, deps)
}

/// The readers of each node among the nodes that read two or more, in
/// increasing order, in one CSR.
struct Readers {
    offsets: Vec<usize>,
    readers: Vec<u32>,
}

impl Readers {
    fn build(n: usize, offsets: &[usize], deps: &[NodeId]) -> Readers {
        let rows = || (0..n).filter(|&c| offsets[c + 1] - offsets[c] >= 2);
        let mut counts = vec![0_usize; n + 1];
        for c in rows() {
            for dep in &deps[offsets[c]..offsets[c + 1]] {
                counts[dep.index() + 1] += 1;
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut next = counts.clone();
        let mut readers = vec![0_u32; counts[n]];
        for c in rows() {
            for dep in &deps[offsets[c]..offsets[c + 1]] {
                readers[next[dep.index()]] = c as u32;
                next[dep.index()] += 1;
            }
        }
        Readers {
            offsets: counts,
            readers,
        }
    }

    /// The readers of `node`.
    fn of(&self, node: NodeId) -> &[u32] {
        &self.readers[self.offsets[node.index()]..self.offsets[node.index() + 1]]
    }
}

/// Marks the edges into `a` and into `b` from the tasks both read (two or
/// more: a block); returns how many of `a`'s were not marked before.
fn mark_block(
    offsets: &[usize],
    deps: &[NodeId],
    wide: &mut FixedBitSet,
    a: usize,
    b: usize,
) -> usize {
    let (mut i, mut j) = (offsets[a], offsets[b]);
    let mut newly = 0;
    while i < offsets[a + 1] && j < offsets[b + 1] {
        match deps[i].cmp(&deps[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                newly += usize::from(!wide.put(i));
                wide.insert(j);
                i += 1;
                j += 1;
            }
        }
    }
    newly
}
