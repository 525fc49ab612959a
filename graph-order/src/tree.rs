//! Forest-optimal orders (Sethi-Ullman / Liu labels), the lower bound they
//! prove, and the simple baselines (depth-first post-order, breadth-first).

use crate::csr::Csr;

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

pub(crate) fn forest_kind(csr: &Csr) -> Forest {
    let n = csr.len() as u32;
    if (0..n).all(|i| csr.dependents(i).len() <= 1) {
        Forest::In
    } else if (0..n).all(|i| csr.deps(i).len() <= 1) {
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
fn in_needs(csr: &Csr, rank: &[u32]) -> (Vec<u64>, Vec<u32>, Vec<u32>) {
    let n = csr.len();
    let mut need = vec![0_u64; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    for i in 0..n as u32 {
        offsets.push(offsets[i as usize] + csr.deps(i).len() as u32);
    }
    let mut children = vec![0_u32; csr.edge_count()];
    for &v in &csr.topo {
        let slot = &mut children[offsets[v as usize] as usize..offsets[v as usize + 1] as usize];
        slot.copy_from_slice(csr.deps(v));
        slot.sort_unstable_by(|&a, &b| {
            need[b as usize]
                .cmp(&need[a as usize])
                .then(rank[a as usize].cmp(&rank[b as usize]))
        });
        let mut cost = slot.len() as u64;
        for (i, &c) in slot.iter().enumerate() {
            cost = cost.max((i as u64).saturating_add(need[c as usize]));
        }
        need[v as usize] = cost;
    }
    (need, offsets, children)
}

/// The mirror of [`in_needs`] for out-forests: each node's dependents with the
/// neediest last (it is the one that releases the parent).
fn out_needs(csr: &Csr, rank: &[u32]) -> (Vec<u64>, Vec<u32>, Vec<u32>) {
    let n = csr.len();
    let mut need = vec![0_u64; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    for i in 0..n as u32 {
        offsets.push(offsets[i as usize] + csr.dependents(i).len() as u32);
    }
    let mut children = vec![0_u32; offsets[n] as usize];
    for &v in csr.topo.iter().rev() {
        let slot = &mut children[offsets[v as usize] as usize..offsets[v as usize + 1] as usize];
        slot.copy_from_slice(csr.dependents(v));
        slot.sort_unstable_by(|&a, &b| {
            need[a as usize]
                .cmp(&need[b as usize])
                .then(rank[a as usize].cmp(&rank[b as usize]))
        });
        need[v as usize] = match slot.split_last() {
            None => 0,
            Some((&last, rest)) => {
                let others = rest.iter().map(|&c| need[c as usize]).max().unwrap_or(0);
                1.max(need[last as usize]).max(others.saturating_add(1))
            }
        };
    }
    (need, offsets, children)
}

/// Nodes without dependents, by ascending tie-break rank.
fn sinks_by_rank(csr: &Csr, rank: &[u32]) -> Vec<u32> {
    let mut sinks: Vec<u32> = (0..csr.len() as u32)
        .filter(|&i| csr.dependents(i).is_empty())
        .collect();
    sinks.sort_unstable_by_key(|&i| rank[i as usize]);
    sinks
}

/// Depth-first post-order from each sink in turn, children in the order of
/// `children[offsets[v]..offsets[v + 1]]`. Returns priorities.
fn post_order(csr: &Csr, sinks: &[u32], offsets: &[u32], children: &[u32]) -> Vec<u32> {
    let n = csr.len();
    let mut prio = vec![u32::MAX; n];
    let mut entered = vec![false; n];
    let mut next = 0_u32;
    let mut stack: Vec<(u32, u32)> = Vec::new();
    for &s in sinks {
        if entered[s as usize] {
            continue;
        }
        entered[s as usize] = true;
        stack.push((s, offsets[s as usize]));
        while let Some(top) = stack.last_mut() {
            let (v, cursor) = *top;
            if cursor < offsets[v as usize + 1] {
                top.1 += 1;
                let c = children[cursor as usize];
                if !entered[c as usize] {
                    entered[c as usize] = true;
                    stack.push((c, offsets[c as usize]));
                }
            } else {
                stack.pop();
                prio[v as usize] = next;
                next += 1;
            }
        }
    }
    prio
}

/// Pre-order of an out-forest from each root in turn.
fn pre_order(csr: &Csr, rank: &[u32], offsets: &[u32], children: &[u32]) -> Vec<u32> {
    let n = csr.len();
    let mut roots: Vec<u32> = (0..n as u32).filter(|&i| csr.deps(i).is_empty()).collect();
    roots.sort_unstable_by_key(|&i| rank[i as usize]);
    let mut prio = vec![u32::MAX; n];
    let mut next = 0_u32;
    let mut stack = Vec::new();
    for &r in &roots {
        stack.push(r);
        while let Some(v) = stack.pop() {
            prio[v as usize] = next;
            next += 1;
            let slot = &children[offsets[v as usize] as usize..offsets[v as usize + 1] as usize];
            stack.extend(slot.iter().rev());
        }
    }
    prio
}

/// The `TreeOptimal` strategy: Sethi-Ullman post-order on in-forests, its
/// mirror on out-forests, and the need-ordered post-order elsewhere.
pub(crate) fn tree_optimal(csr: &Csr, rank: &[u32]) -> Vec<u32> {
    match forest_kind(csr) {
        Forest::Out => {
            let (_, offsets, children) = out_needs(csr, rank);
            pre_order(csr, rank, &offsets, &children)
        }
        Forest::In | Forest::No => {
            let (_, offsets, children) = in_needs(csr, rank);
            post_order(csr, &sinks_by_rank(csr, rank), &offsets, &children)
        }
    }
}

/// Plain depth-first post-order: sinks by rank, dependencies as listed.
pub(crate) fn depth_first(csr: &Csr, rank: &[u32]) -> Vec<u32> {
    let n = csr.len();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    let mut children = Vec::with_capacity(csr.edge_count());
    for i in 0..n as u32 {
        children.extend_from_slice(csr.deps(i));
        offsets.push(children.len() as u32);
    }
    post_order(csr, &sinks_by_rank(csr, rank), &offsets, &children)
}

/// Breadth-first: Kahn's order with a first-in-first-out queue.
pub(crate) fn breadth_first(csr: &Csr) -> Vec<u32> {
    let mut prio = vec![0_u32; csr.len()];
    for (step, &v) in csr.topo.iter().enumerate() {
        prio[v as usize] = step as u32;
    }
    prio
}

/// The proven lower bound on max pressure (see [`crate::lower_bound`]).
pub(crate) fn lower_bound(csr: &Csr) -> u32 {
    let n = csr.len();
    let rank: Vec<u32> = (0..n as u32).collect();
    let exact = match forest_kind(csr) {
        Forest::In => Some(in_needs(csr, &rank).0),
        Forest::Out => Some(out_needs(csr, &rank).0),
        Forest::No => None,
    };
    match exact {
        Some(need) => need.into_iter().max().unwrap_or(0).min(u64::from(u32::MAX)) as u32,
        None => (0..n as u32)
            .map(|i| csr.deps(i).len() as u32)
            .max()
            .unwrap_or(0),
    }
}
