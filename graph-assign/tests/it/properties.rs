//! Properties over every generator shape and several seeds: any static
//! order gives a valid balanced placement; refinement never loses to the
//! plain blocks it starts from; the metrics agree with each other.

use crate::common;
use graph_assign::{AssignConfig, Metrics, Workers, assign, assign_with};
use graph_core::Dag;
use graph_core::generate::{Rng, Shape};

#[test]
fn any_priorities_give_a_valid_balanced_placement() {
    for shape in Shape::ALL {
        for seed in 0..3 {
            let graph = shape.generate(1_500, seed);
            let dag = common::topology(&graph);
            // A random permutation as priorities.
            let mut rng = Rng::new(seed);
            let mut priorities: Vec<u32> = (0..graph.len() as u32).collect();
            for i in (1..priorities.len()).rev() {
                priorities.swap(i, rng.below(i + 1));
            }
            let workers = Workers::new(2 + seed as usize * 3).unwrap();
            let config = AssignConfig {
                priorities: Some(&priorities),
                ..AssignConfig::default()
            };
            let assignment = assign_with(dag, &workers, &config).unwrap();
            let label = format!("{} seed {seed}", shape.name());
            common::assert_valid(&label, dag, &workers, &assignment);
            let metrics = common::metrics(dag, &workers, &assignment);
            common::assert_balanced(&label, &workers, &metrics, None, 1.03);
        }
    }
}

#[test]
fn refinement_never_raises_the_cut_of_the_unrefined_placement() {
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        let workers = Workers::new(4).unwrap();
        let unrefined = AssignConfig {
            refine_passes: 0,
            ..AssignConfig::default()
        };
        let before = assign_with(dag, &workers, &unrefined).unwrap();
        let after = assign(dag, &workers, None, None).unwrap();
        let (before, after) = (
            common::metrics(dag, &workers, &before),
            common::metrics(dag, &workers, &after),
        );
        assert!(
            after.edge_cut <= before.edge_cut,
            "{label}: {after:?} vs {before:?}"
        );
    }
}

#[test]
fn metrics_are_consistent() {
    let mut rng = Rng::new(1);
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        let workers = Workers::new(3).unwrap();
        let sizes: Vec<u64> = (0..graph.len())
            .map(|_| 1 + rng.below(100) as u64)
            .collect();
        let assignment = assign(dag, &workers, Some(&sizes), None).unwrap();
        let m = Metrics::of(dag, &workers, &assignment, Some(&sizes), None).unwrap();
        let plain = common::metrics(dag, &workers, &assignment);
        let edges: usize = dag.node_ids().map(|n| dag.dependents(n).len()).sum();
        assert!(m.edge_cut as usize <= edges, "{label}");
        assert_eq!(plain.transfer_bytes, plain.edge_cut, "{label}");
        assert!(m.transfer_bytes >= m.edge_cut, "{label}");
        assert_eq!(m.loads.iter().sum::<f64>(), graph.len() as f64, "{label}");
        assert!(m.imbalance >= 1.0, "{label}");
    }
}
