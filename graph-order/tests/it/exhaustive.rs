//! `Strategy::Exhaustive` finds the optimum: on seeded random DAGs of up to 9
//! tasks it matches brute force, and `Auto` (which runs the same search on
//! small graphs) does too; on DAGs of up to 15 tasks the search's proofs
//! match dynamic programming over every done-set.

use crate::common::{VecDag, assert_valid, brute_force_min_pressure};
use graph_core::Dag;
use graph_core::generate::Rng;
use graph_order::internals::exact_search;
use graph_order::{OrderConfig, Strategy, max_pressure, order};

#[test]
fn exhaustive_matches_brute_force_on_small_dags() {
    let mut rng = Rng::new(11);
    for _ in 0..150 {
        let n = 3 + rng.below(7);
        let mut edges = Vec::new();
        for b in 1..n {
            for a in 0..b {
                if rng.below(3) == 0 {
                    edges.push((a, b));
                }
            }
        }
        let dag = VecDag::new(n, &edges);
        let best = brute_force_min_pressure(&dag);
        for strategy in [Strategy::Exhaustive, Strategy::Auto] {
            let o = order(&dag, &[], &OrderConfig::new(strategy)).unwrap();
            assert_valid(&dag, o.priorities());
            assert_eq!(
                max_pressure(&dag, &o).unwrap(),
                best,
                "{strategy:?} {edges:?}"
            );
        }
    }
}

/// The lowest max pressure by dynamic programming over done-sets (up to 20
/// tasks): the best completion of a done-set depends on nothing else.
fn optimum_by_subsets(dag: &VecDag) -> u32 {
    let n = dag.node_count();
    let deps: Vec<u32> = (0..n)
        .map(|v| dag.deps[v].iter().map(|d| 1 << d.index()).sum())
        .collect();
    let consumers: Vec<u32> = (0..n)
        .map(|v| dag.dependents[v].iter().map(|d| 1 << d.index()).sum())
        .collect();
    let full = (1_u32 << n) - 1;
    // Results held with `done` done: tasks with a dependent not done.
    let held = |done: u32| {
        (0..n)
            .filter(|&v| done >> v & 1 == 1 && consumers[v] & !done != 0)
            .count() as u32
    };
    let mut best = vec![u32::MAX; 1 << n];
    best[full as usize] = 0;
    // Supersets first: a done-set's completions go through larger ones.
    for done in (0..full).rev() {
        let here = held(done);
        for (v, &needs) in deps.iter().enumerate() {
            let next = done | 1 << v;
            if next != done && needs & !done == 0 && best[next as usize] != u32::MAX {
                best[done as usize] = best[done as usize].min(here.max(best[next as usize]));
            }
        }
    }
    best[0]
}

/// Where the search claims a proof, it is right, and it never claims less
/// than the optimum: on seeded DAGs of 10 to 15 tasks, dense and sparse, in
/// several components, and on small shuffles (where the bound from disjoint
/// paths does the proving).
#[test]
fn the_search_proves_only_optima() {
    let mut rng = Rng::new(23);
    let mut proven = 0;
    for round in 0..200 {
        let (n, edges) = if round % 4 == 0 {
            // m inputs, each split into k pieces, k outputs of m pieces.
            let (m, k) = (2 + rng.below(2), 2 + rng.below(2));
            let mut edges = Vec::new();
            for i in 0..m {
                for j in 0..k {
                    edges.push((i, m + i * k + j));
                    edges.push((m + i * k + j, m + m * k + j));
                }
            }
            (m + m * k + k, edges)
        } else {
            let n = 10 + rng.below(5);
            let density = 2 + rng.below(5);
            let mut edges = Vec::new();
            for b in 1..n {
                for a in 0..b {
                    if rng.below(density) == 0 {
                        edges.push((a, b));
                    }
                }
            }
            (n, edges)
        };
        let dag = VecDag::new(n, &edges);
        let best = optimum_by_subsets(&dag);
        let found = exact_search(&dag, &[], &[], 100_000).unwrap();
        assert!(found.max_pressure >= best, "{edges:?}");
        if found.proven {
            assert_eq!(found.max_pressure, best, "{edges:?}");
            proven += 1;
        }
        let auto = order(&dag, &[], &OrderConfig::default()).unwrap();
        assert_valid(&dag, auto.priorities());
        assert_eq!(max_pressure(&dag, &auto).unwrap(), best, "{edges:?}");
    }
    assert_eq!(proven, 200);
}
