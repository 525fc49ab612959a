//! Forest-optimal orders (Sethi-Ullman / Liu labels), the lower bound they
//! prove, and the simple baselines (depth-first post-order, breadth-first).

use graph_core::{Dag, NodeId, Topology};

/// The shape of a graph, as far as the exact forest results go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Forest {
    /// Every task has at most one dependent.
    In,
    /// Every task has at most one dependency.
    Out,
    /// Neither.
    No,
}

pub(crate) fn forest_kind(topology: &Topology) -> Forest {
    if topology
        .node_ids()
        .all(|node| topology.dependents(node).len() <= 1)
    {
        Forest::In
    } else if topology
        .node_ids()
        .all(|node| topology.dependencies(node).len() <= 1)
    {
        Forest::Out
    } else {
        Forest::No
    }
}

/// The need of each node when its dependencies are treated as the children of
/// a tree: the peak pressure of computing its subtree, children in decreasing
/// need. Exact for in-forests; a heuristic (shared inputs counted once per
/// consumer, saturating) elsewhere. Also returns each node's dependencies in
/// the order that achieves it, as one CSR-shaped array.
fn in_needs(topology: &Topology, rank: &[u32]) -> (Vec<u64>, Vec<u32>, Vec<NodeId>) {
    in_needs_weighted(topology, rank, None)
}

/// [`in_needs`] with each result weighing its size (`None`: 1 each): the
/// need of a node is the peak bytes of computing its subtree with its
/// children in decreasing need less size (Liu's best post-order: exact among
/// post-orders of an in-forest). With every weight 1 it is [`in_needs`].
fn in_needs_weighted(
    topology: &Topology,
    rank: &[u32],
    sizes: Option<&[u64]>,
) -> (Vec<u64>, Vec<u32>, Vec<NodeId>) {
    let n = topology.node_count();
    let weight = |node: NodeId| sizes.map_or(1, |sizes| sizes[node.index()]);
    let mut need = vec![0_u64; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    for node in topology.node_ids() {
        offsets.push(offsets[node.index()] + topology.dependencies(node).len() as u32);
    }
    let mut children = vec![NodeId::from_u32(0); topology.edge_count()];
    for &v in topology.topological_order() {
        let vi = v.index();
        let slot = &mut children[offsets[vi] as usize..offsets[vi + 1] as usize];
        slot.copy_from_slice(topology.dependencies(v));
        let key = |c: NodeId| i128::from(need[c.index()]) - i128::from(weight(c));
        slot.sort_unstable_by(|&a, &b| {
            key(b)
                .cmp(&key(a))
                .then(rank[a.index()].cmp(&rank[b.index()]))
        });
        let mut held = 0_u64;
        let mut cost = 0_u64;
        for &c in slot.iter() {
            cost = cost.max(held.saturating_add(need[c.index()]));
            held = held.saturating_add(weight(c));
        }
        need[vi] = cost.max(held);
    }
    (need, offsets, children)
}

/// One hill and the valley after it in the memory profile of a schedule
/// (Liu's generalized pebbling): the most bytes held over a run of its
/// tasks, and the bytes held at its end. The tasks are a linked list
/// through `next`, from `head` to `tail`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    hill: u128,
    valley: u128,
    head: u32,
    tail: u32,
}

const NO_TASK: u32 = u32::MAX;

/// Appends `segment` to a schedule's segments, keeping them canonical:
/// hills strictly falling, valleys strictly rising (a later hill at least
/// as high, or a later valley at least as low, joins the segments between).
fn push_segment(segments: &mut Vec<Segment>, mut segment: Segment, next: &mut [u32]) {
    while let Some(&top) = segments.last() {
        if segment.hill < top.hill && segment.valley > top.valley {
            break;
        }
        segments.pop();
        segment.hill = segment.hill.max(top.hill);
        next[top.tail as usize] = segment.head;
        segment.head = top.head;
    }
    segments.push(segment);
}

/// Interleaves the canonical schedules of `parts` (each ends at its own
/// valley) by hill less valley, highest first, ties by the parts' ranks:
/// Liu's merge, optimal among interleavings. Each merged step is handed to
/// `out` as a segment of the combined profile; `at` holds, by node, the
/// valley each part has reached (0 before it starts).
fn merge_segments(
    parts: &[NodeId],
    schedules: &mut [Vec<Segment>],
    at: &mut [u128],
    rank: &[u32],
    entries: &mut Vec<(std::cmp::Reverse<u128>, u32, u32, u32)>,
    mut out: impl FnMut(Segment),
) {
    if let [part] = parts {
        // Alone, a part's schedule is the merge.
        for segment in std::mem::take(&mut schedules[part.index()]) {
            out(segment);
        }
        return;
    }
    entries.clear();
    for &part in parts {
        for (k, s) in schedules[part.index()].iter().enumerate() {
            entries.push((
                std::cmp::Reverse(s.hill - s.valley),
                rank[part.index()],
                part.as_u32(),
                k as u32,
            ));
        }
    }
    entries.sort_unstable();
    // The bytes held by the parts, each at its latest valley (`at`, by
    // node: each node is a part once).
    let mut held = 0_u128;
    for &(_, _, part, k) in entries.iter() {
        let s = schedules[part as usize][k as usize];
        let base = held - at[part as usize];
        held = base + s.valley;
        at[part as usize] = s.valley;
        out(Segment {
            hill: base + s.hill,
            valley: held,
            head: s.head,
            tail: s.tail,
        });
    }
    for &part in parts {
        schedules[part.index()] = Vec::new();
    }
}

/// The weighted optimum of an in-forest (every task has at most one
/// dependent) by Liu's generalized pebbling: each subtree's best schedule as
/// canonical hill-and-valley segments, children merged by hill less valley.
/// Returns the priorities and the optimal max bytes, or `None` when the
/// segments grow past a budget of a few tens per task (a deep tree of
/// ever-rising profiles), where the caller falls back on a post-order.
pub(crate) fn liu(topology: &Topology, sizes: &[u64], rank: &[u32]) -> Option<(Vec<u32>, u64)> {
    let n = topology.node_count();
    let identity: Vec<u32>;
    let rank = if rank.is_empty() {
        identity = (0..n as u32).collect();
        &identity
    } else {
        rank
    };
    let budget = 32 * n as u64 + 4096;
    let mut work = 0_u64;
    let mut next = vec![NO_TASK; n];
    let mut schedules: Vec<Vec<Segment>> = vec![Vec::new(); n];
    let mut at = vec![0_u128; n];
    let mut entries = Vec::new();
    for &v in topology.topological_order() {
        let children = topology.dependencies(v);
        work += children
            .iter()
            .map(|c| schedules[c.index()].len() as u64)
            .sum::<u64>();
        if work > budget {
            return None;
        }
        let mut own = match children {
            // A lone child's schedule is canonical already: it is the merge.
            [child] => std::mem::take(&mut schedules[child.index()]),
            _ => {
                let mut own = Vec::new();
                merge_segments(
                    children,
                    &mut schedules,
                    &mut at,
                    rank,
                    &mut entries,
                    |segment| {
                        push_segment(&mut own, segment, &mut next);
                    },
                );
                own
            }
        };
        let weight = u128::from(weight(topology, sizes, v));
        let step = Segment {
            hill: weight,
            valley: weight,
            head: v.as_u32(),
            tail: v.as_u32(),
        };
        push_segment(&mut own, step, &mut next);
        schedules[v.index()] = own;
    }
    let sinks = sinks_by_rank(topology, rank);
    let mut priorities = vec![0_u32; n];
    let mut step = 0_u32;
    let mut peak = 0_u128;
    merge_segments(
        &sinks,
        &mut schedules,
        &mut at,
        rank,
        &mut entries,
        |segment| {
            peak = peak.max(segment.hill);
            let mut task = segment.head;
            loop {
                priorities[task as usize] = step;
                step += 1;
                if task == segment.tail {
                    break;
                }
                task = next[task as usize];
            }
        },
    );
    debug_assert_eq!(step as usize, n);
    Some((priorities, u64::try_from(peak).unwrap_or(u64::MAX)))
}

/// The mirror of [`in_needs`] for out-forests: each node's dependents with the
/// neediest last (it is the one that releases the parent).
fn out_needs(topology: &Topology, rank: &[u32]) -> (Vec<u64>, Vec<u32>, Vec<NodeId>) {
    let n = topology.node_count();
    let mut need = vec![0_u64; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    for node in topology.node_ids() {
        offsets.push(offsets[node.index()] + topology.dependents(node).len() as u32);
    }
    let mut children = vec![NodeId::from_u32(0); offsets[n] as usize];
    for &v in topology.topological_order().iter().rev() {
        let vi = v.index();
        let slot = &mut children[offsets[vi] as usize..offsets[vi + 1] as usize];
        slot.copy_from_slice(topology.dependents(v));
        slot.sort_unstable_by(|&a, &b| {
            need[a.index()]
                .cmp(&need[b.index()])
                .then(rank[a.index()].cmp(&rank[b.index()]))
        });
        need[vi] = match slot.split_last() {
            None => 0,
            Some((&last, rest)) => {
                let others = rest.iter().map(|&c| need[c.index()]).max().unwrap_or(0);
                1.max(need[last.index()]).max(others.saturating_add(1))
            }
        };
    }
    (need, offsets, children)
}

/// Nodes without dependents, by ascending tie-break rank.
fn sinks_by_rank(topology: &Topology, rank: &[u32]) -> Vec<NodeId> {
    let mut sinks: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| topology.dependents(node).is_empty())
        .collect();
    sinks.sort_unstable_by_key(|&node| rank[node.index()]);
    sinks
}

/// Depth-first post-order from each sink in turn, children in the order of
/// `children[offsets[v]..offsets[v + 1]]`. Returns priorities.
fn post_order(
    topology: &Topology,
    sinks: &[NodeId],
    offsets: &[u32],
    children: &[NodeId],
) -> Vec<u32> {
    let n = topology.node_count();
    let mut prio = vec![u32::MAX; n];
    let mut entered = vec![false; n];
    let mut next = 0_u32;
    let mut stack: Vec<(NodeId, u32)> = Vec::new();
    for &s in sinks {
        if entered[s.index()] {
            continue;
        }
        entered[s.index()] = true;
        stack.push((s, offsets[s.index()]));
        while let Some(top) = stack.last_mut() {
            let (v, cursor) = *top;
            if cursor < offsets[v.index() + 1] {
                top.1 += 1;
                let c = children[cursor as usize];
                if !entered[c.index()] {
                    entered[c.index()] = true;
                    stack.push((c, offsets[c.index()]));
                }
            } else {
                stack.pop();
                prio[v.index()] = next;
                next += 1;
            }
        }
    }
    prio
}

/// Pre-order of an out-forest from each root in turn.
fn pre_order(topology: &Topology, rank: &[u32], offsets: &[u32], children: &[NodeId]) -> Vec<u32> {
    let n = topology.node_count();
    let mut roots: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| topology.dependencies(node).is_empty())
        .collect();
    roots.sort_unstable_by_key(|&node| rank[node.index()]);
    let mut prio = vec![u32::MAX; n];
    let mut next = 0_u32;
    let mut stack = Vec::new();
    for &r in &roots {
        stack.push(r);
        while let Some(v) = stack.pop() {
            let vi = v.index();
            prio[vi] = next;
            next += 1;
            let slot = &children[offsets[vi] as usize..offsets[vi + 1] as usize];
            stack.extend(slot.iter().rev());
        }
    }
    prio
}

/// The `TreeOptimal` strategy: Sethi-Ullman post-order on in-forests, its
/// mirror on out-forests, and the need-ordered post-order elsewhere.
pub(crate) fn tree_optimal(topology: &Topology, rank: &[u32]) -> Vec<u32> {
    match forest_kind(topology) {
        Forest::Out => {
            let (_, offsets, children) = out_needs(topology, rank);
            pre_order(topology, rank, &offsets, &children)
        }
        Forest::In | Forest::No => {
            let (_, offsets, children) = in_needs(topology, rank);
            let sinks = sinks_by_rank(topology, rank);
            post_order(topology, &sinks, &offsets, &children)
        }
    }
}

/// `TreeOptimal` weighing each result by its size: Liu's optimum on
/// in-forests, and elsewhere the post-order that visits first the input
/// whose need less size is largest.
pub(crate) fn tree_optimal_bytes(topology: &Topology, sizes: &[u64], rank: &[u32]) -> Vec<u32> {
    if forest_kind(topology) == Forest::In
        && let Some((priorities, _)) = liu(topology, sizes, rank)
    {
        return priorities;
    }
    let (_, offsets, children) = in_needs_weighted(topology, rank, Some(sizes));
    let sinks = sinks_by_rank(topology, rank);
    post_order(topology, &sinks, &offsets, &children)
}

/// Plain depth-first post-order: sinks by rank, dependencies as listed.
pub(crate) fn depth_first(topology: &Topology, rank: &[u32]) -> Vec<u32> {
    let n = topology.node_count();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    let mut children = Vec::with_capacity(topology.edge_count());
    for node in topology.node_ids() {
        children.extend_from_slice(topology.dependencies(node));
        offsets.push(children.len() as u32);
    }
    let sinks = sinks_by_rank(topology, rank);
    post_order(topology, &sinks, &offsets, &children)
}

/// Breadth-first: Kahn's order with a first-in-first-out queue.
pub(crate) fn breadth_first(topology: &Topology) -> Vec<u32> {
    let mut prio = vec![0_u32; topology.node_count()];
    for (step, &v) in topology.topological_order().iter().enumerate() {
        prio[v.index()] = step as u32;
    }
    prio
}

/// The proven lower bound on max pressure (see [`crate::lower_bound`]).
pub(crate) fn lower_bound(topology: &Topology) -> u32 {
    let n = topology.node_count();
    let rank: Vec<u32> = (0..n as u32).collect();
    let exact = match forest_kind(topology) {
        Forest::In => Some(in_needs(topology, &rank).0),
        Forest::Out => Some(out_needs(topology, &rank).0),
        Forest::No => None,
    };
    match exact {
        Some(need) => need.into_iter().max().unwrap_or(0).min(u64::from(u32::MAX)) as u32,
        None => topology
            .node_ids()
            .map(|node| topology.dependencies(node).len() as u32)
            .max()
            .unwrap_or(0),
    }
}

/// The bytes a node's result weighs while held: its size, or nothing for a
/// node without dependents.
pub(crate) fn weight(topology: &Topology, sizes: &[u64], node: NodeId) -> u64 {
    if topology.dependents(node).is_empty() {
        0
    } else {
        sizes[node.index()]
    }
}
