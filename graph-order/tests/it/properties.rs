//! Properties of every strategy over seeded generated graphs: a valid order
//! (a permutation with dependencies first), determinism, `Auto` never above
//! `Dask` or the baselines, and the lower bound never above any order.

use crate::common::{STRATEGIES, assert_valid};
use graph_core::generate;
use graph_core::generate::Shape;
use graph_core::{TaskGraph, Topology};
use graph_order::{OrderConfig, Strategy, lower_bound, max_pressure, order, ranks_by_str};

fn graphs() -> Vec<(String, TaskGraph)> {
    let mut res = Vec::new();
    for shape in Shape::ALL {
        for size in [20, 300, 3_000] {
            res.push((format!("{} {size}", shape.name()), shape.generate(size, 1)));
        }
    }
    for seed in 0..20 {
        res.push((
            format!("random seed {seed}"),
            generate::random_dag(200 + 37 * seed as usize, seed),
        ));
    }
    res.push(("word count".into(), generate::word_count()));
    res.push(("shuffle 30x7".into(), generate::shuffle(30, 7)));
    res
}

fn pressure(dag: &Topology, ranks: &[u32], strategy: Strategy) -> u32 {
    let o = order(dag, ranks, &OrderConfig::new(strategy)).expect("acyclic");
    max_pressure(dag, &o).expect("valid")
}

/// Each order is made twice: it must be valid, and the same both times.
#[test]
fn every_strategy_gives_the_same_valid_order_twice() {
    for (name, graph) in graphs() {
        let dag = graph.topology().unwrap();
        let ranks = ranks_by_str(graph.keys());
        for strategy in STRATEGIES {
            let a = order(dag, &ranks, &OrderConfig::new(strategy)).expect(&name);
            assert_valid(dag, a.priorities());
            let b = order(dag, &ranks, &OrderConfig::new(strategy)).unwrap();
            assert_eq!(a, b, "{name} {strategy:?}");
        }
    }
}

#[test]
fn auto_is_never_above_dask_or_the_baselines() {
    for (name, graph) in graphs() {
        let dag = graph.topology().unwrap();
        let ranks = ranks_by_str(graph.keys());
        let auto = pressure(dag, &ranks, Strategy::Auto);
        let bound = lower_bound(dag).unwrap();
        assert!(bound <= auto, "{name}: bound {bound} > auto {auto}");
        for other in [
            Strategy::Dask,
            Strategy::DepthFirst,
            Strategy::BreadthFirst,
            Strategy::TreeOptimal,
        ] {
            let p = pressure(dag, &ranks, other);
            assert!(auto <= p, "{name}: auto {auto} > {other:?} {p}");
        }
    }
}

/// The ties of `Auto` go to `Dask`: on a graph where every candidate holds
/// the same, the kept order is dask's.
#[test]
fn auto_ties_go_to_dask() {
    let graph = generate::chain(50);
    let dag = graph.topology().unwrap();
    let o = order(dag, &[], &OrderConfig::default()).unwrap();
    assert_eq!(o.strategy(), Some(Strategy::Dask));
}
