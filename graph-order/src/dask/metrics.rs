//! What dask computes before its main loop: the normalised graph (data
//! leaves and roots set aside) and the per-task metrics of what is left.

use graph_core::{Dag, NodeId, Topology};

use super::{BUCKETS, LIVE, REMOVED_LEAF, REMOVED_ROOT};

/// Assigns each of `members` (in index order) to one of 64 contiguous buckets.
fn bucket_of(ordinal: usize, count: usize) -> u8 {
    if count <= BUCKETS {
        ordinal as u8
    } else {
        (ordinal * BUCKETS / count) as u8
    }
}

/// dask's normalisation: data leaves with two or more dependencies and data
/// roots with two or more dependents leave the graph (§3 of the notes).
/// Returns the removed leaves in removal order.
pub(super) fn normalise(
    topology: &Topology,
    tie: &[u32],
    is_data: &[bool],
    removed: &mut [u8],
    ndeps: &mut [u32],
    ndependents: &mut [u32],
) -> Vec<NodeId> {
    let mut removed_leaves = Vec::new();
    let mut leaves: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| ndependents[node.index()] == 0)
        .collect();
    let mut roots: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| ndeps[node.index()] == 0)
        .collect();
    leaves.sort_unstable_by_key(|&node| tie[node.index()]);
    roots.sort_unstable_by_key(|&node| tie[node.index()]);
    // A leaf or root that is kept once stays kept (its counts only shrink and
    // it stays a leaf or root), so each pass only needs the newcomers.
    loop {
        let before = removed_leaves.len();
        let mut new_leaves = remove_data_ends::<true>(
            topology,
            &leaves,
            is_data,
            removed,
            ndeps,
            ndependents,
            |leaf| removed_leaves.push(leaf),
        );
        let mut new_roots = remove_data_ends::<false>(
            topology,
            &roots,
            is_data,
            removed,
            ndeps,
            ndependents,
            |_| {},
        );
        if removed_leaves.len() == before {
            return removed_leaves;
        }
        new_leaves.sort_unstable_by_key(|&node| tie[node.index()]);
        new_roots.sort_unstable_by_key(|&node| tie[node.index()]);
        leaves = new_leaves;
        roots = new_roots;
    }
}

/// One pass of [`normalise`] over the newcomer leaves (`LEAVES`) or roots:
/// each of `ends` that is still live and still a leaf (a root), and is data
/// with two or more dependencies (dependents), leaves the graph and is given
/// to `on_remove`. Its live dependencies (dependents) then count one
/// dependent (dependency) fewer; those left with none are returned, the ends
/// of the next pass.
fn remove_data_ends<const LEAVES: bool>(
    topology: &Topology,
    ends: &[NodeId],
    is_data: &[bool],
    removed: &mut [u8],
    ndeps: &mut [u32],
    ndependents: &mut [u32],
    mut on_remove: impl FnMut(NodeId),
) -> Vec<NodeId> {
    // A root is a leaf of the graph turned around: the same pass, with the
    // two counts and the two directions swapped.
    let (mark, inward, outward) = if LEAVES {
        (REMOVED_LEAF, &*ndeps, ndependents)
    } else {
        (REMOVED_ROOT, &*ndependents, ndeps)
    };
    let mut new_ends = Vec::new();
    for &end in ends {
        let e = end.index();
        if removed[e] != LIVE || inward[e] == 0 || outward[e] != 0 {
            continue;
        }
        if is_data[e] && inward[e] > 1 {
            removed[e] = mark;
            on_remove(end);
            let links = if LEAVES {
                topology.dependencies(end)
            } else {
                topology.dependents(end)
            };
            for &d in links {
                let di = d.index();
                if removed[di] == LIVE {
                    outward[di] -= 1;
                    if outward[di] == 0 {
                        new_ends.push(d);
                    }
                }
            }
        }
    }
    new_ends
}

/// How many data leaves [`normalise`] sets aside: in dask's order they take
/// the last priorities. The count does not depend on the tie-break.
pub(crate) fn set_aside_count(topology: &Topology, is_data: &[bool]) -> usize {
    if !is_data.iter().any(|&d| d) {
        return 0;
    }
    let n = topology.node_count();
    let mut removed = vec![LIVE; n];
    let (mut ndeps, mut ndependents) = degrees(topology);
    let tie: Vec<u32> = (0..n as u32).collect();
    normalise(
        topology,
        &tie,
        is_data,
        &mut removed,
        &mut ndeps,
        &mut ndependents,
    )
    .len()
}

/// dask's per-task metrics of the normalised graph (§4 of the notes).
pub(crate) struct Metrics {
    pub(crate) roots: Vec<NodeId>,
    pub(crate) leaves: Vec<NodeId>,
    pub(crate) root_bucket: Vec<u8>,
    /// `total_dependencies`, saturating.
    pub(crate) total: Vec<u64>,
    /// Buckets of the roots each task descends from (empty for a root).
    pub(crate) root_mask: Vec<u64>,
    /// Buckets of the leaves each task feeds (empty for a leaf).
    pub(crate) leaf_mask: Vec<u64>,
    pub(crate) max_dependents: Vec<u32>,
}

pub(crate) fn metrics(
    topology: &Topology,
    removed: &[u8],
    ndeps: &[u32],
    ndependents: &[u32],
) -> Metrics {
    let n = topology.node_count();
    let live = |v: NodeId| removed[v.index()] == LIVE;
    let mut roots: Vec<NodeId> = Vec::new();
    let mut leaves: Vec<NodeId> = Vec::new();
    for v in topology.node_ids() {
        if live(v) {
            if ndeps[v.index()] == 0 {
                roots.push(v);
            }
            if ndependents[v.index()] == 0 {
                leaves.push(v);
            }
        }
    }
    let mut root_bucket = vec![0_u8; n];
    for (ordinal, &r) in roots.iter().enumerate() {
        root_bucket[r.index()] = bucket_of(ordinal, roots.len());
    }
    let mut leaf_bucket = vec![0_u8; n];
    for (ordinal, &l) in leaves.iter().enumerate() {
        leaf_bucket[l.index()] = bucket_of(ordinal, leaves.len());
    }
    // dask's `total_dependencies` counts paths, which grow exponentially on
    // lattices; they saturate here.
    let mut total = vec![0_u64; n];
    let mut root_mask = vec![0_u64; n];
    let mut max_dependents = vec![0_u32; n];
    for &v in topology.topological_order() {
        let vi = v.index();
        if !live(v) {
            continue;
        }
        if ndeps[vi] == 0 {
            total[vi] = 1;
            max_dependents[vi] = ndependents[vi];
            continue;
        }
        let (mut t, mut mask, mut maxd) = (1_u64, 0_u64, 0_u32);
        for &d in topology.dependencies(v) {
            let di = d.index();
            if !live(d) {
                continue;
            }
            t = t.saturating_add(total[di]);
            if ndeps[di] == 0 {
                mask |= 1 << root_bucket[di];
                maxd = maxd.max(ndependents[di]);
            } else {
                mask |= root_mask[di];
                maxd = maxd.max(max_dependents[di]);
            }
        }
        total[vi] = t;
        root_mask[vi] = mask;
        max_dependents[vi] = maxd;
    }
    let mut leaf_mask = vec![0_u64; n];
    for &v in topology.topological_order().iter().rev() {
        let vi = v.index();
        if !live(v) || ndependents[vi] == 0 {
            continue;
        }
        let mut mask = 0_u64;
        for &d in topology.dependents(v) {
            let di = d.index();
            if !live(d) {
                continue;
            }
            mask |= if ndependents[di] == 0 {
                1 << leaf_bucket[di]
            } else {
                leaf_mask[di]
            };
        }
        leaf_mask[vi] = mask;
    }

    Metrics {
        roots,
        leaves,
        root_bucket,
        total,
        root_mask,
        leaf_mask,
        max_dependents,
    }
}

#[cfg(feature = "fuzzing")]
/// dask's metrics of a graph without normalisation, for tests.
pub(crate) fn plain_metrics(topology: &Topology) -> Metrics {
    let (ndeps, ndependents) = degrees(topology);
    metrics(
        topology,
        &vec![LIVE; topology.node_count()],
        &ndeps,
        &ndependents,
    )
}

/// Each node's number of dependencies and of dependents.
pub(super) fn degrees(topology: &Topology) -> (Vec<u32>, Vec<u32>) {
    let ndeps = topology
        .node_ids()
        .map(|node| topology.dependencies(node).len() as u32)
        .collect();
    let ndependents = topology
        .node_ids()
        .map(|node| topology.dependents(node).len() as u32)
        .collect();
    (ndeps, ndependents)
}
