//! `TreeOptimal` and `lower_bound` against brute force: on every in-forest and
//! out-forest of up to 7 tasks, and on seeded ones of 8 tasks, the
//! strategy's max pressure is the exhaustive optimum, and so is the bound.

use crate::common::{VecDag, assert_valid, brute_force_min_pressure};
use graph_core::generate::Rng;
use graph_order::{OrderConfig, Strategy, lower_bound, max_pressure, order};

/// Checks one forest given by `parent[i]` (a parent index above `i`, or
/// none), both as an in-forest (edges child -> parent) and as an out-forest.
fn check(parent: &[Option<usize>]) {
    let n = parent.len();
    let edges: Vec<(usize, usize)> = (0..n).filter_map(|i| parent[i].map(|p| (i, p))).collect();
    let reversed: Vec<(usize, usize)> = edges.iter().map(|&(a, b)| (b, a)).collect();
    for edges in [&edges, &reversed] {
        let dag = VecDag::new(n, edges);
        let best = brute_force_min_pressure(&dag);
        let o = order(&dag, &[], &OrderConfig::new(Strategy::TreeOptimal)).unwrap();
        assert_valid(&dag, o.priorities());
        assert_eq!(max_pressure(&dag, &o).unwrap(), best, "{edges:?}");
        assert_eq!(lower_bound(&dag).unwrap(), best, "{edges:?}");
        let auto = order(&dag, &[], &OrderConfig::default()).unwrap();
        assert_eq!(max_pressure(&dag, &auto).unwrap(), best, "{edges:?}");
    }
}

/// Calls `f` with every parent array of `n` nodes (parents above children).
fn each_forest(n: usize, parent: &mut Vec<Option<usize>>, f: &mut impl FnMut(&[Option<usize>])) {
    let i = parent.len();
    if i == n {
        f(parent);
        return;
    }
    for choice in std::iter::once(None).chain((i + 1..n).map(Some)) {
        parent.push(choice);
        each_forest(n, parent, f);
        parent.pop();
    }
}

#[test]
fn tree_optimal_is_exact_on_all_small_forests() {
    let mut count = 0;
    for n in 1..=7 {
        each_forest(n, &mut Vec::new(), &mut |parent| {
            check(parent);
            count += 1;
        });
    }
    assert_eq!(count, 1 + 2 + 6 + 24 + 120 + 720 + 5040);
}

#[test]
fn tree_optimal_is_exact_on_seeded_larger_forests() {
    let mut rng = Rng::new(42);
    for n in [8] {
        for _ in 0..200 {
            let parent: Vec<Option<usize>> = (0..n)
                .map(|i| {
                    let choices = n - i;
                    let pick = rng.below(choices);
                    (pick > 0).then_some(i + pick)
                })
                .collect();
            check(&parent);
        }
    }
}

/// A general graph's bound is its largest in-degree.
#[test]
fn lower_bound_of_a_dag_is_the_largest_in_degree() {
    // Two sums sharing inputs: 0, 1, 2 -> 3 and 1, 2 -> 4.
    let dag = VecDag::new(5, &[(0, 3), (1, 3), (2, 3), (1, 4), (2, 4)]);
    assert_eq!(lower_bound(&dag).unwrap(), 3);
    assert!(brute_force_min_pressure(&dag) >= 3);
}
