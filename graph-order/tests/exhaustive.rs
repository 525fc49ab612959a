//! `Strategy::Exhaustive` finds the optimum: on seeded random DAGs of up to 9
//! tasks it matches brute force, and `Auto` (which runs the same search on
//! small graphs) does too.

mod common;

use common::{VecDag, assert_valid, brute_force_min_pressure};
use graph_core::generate::Rng;
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
