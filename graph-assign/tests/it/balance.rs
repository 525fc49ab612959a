//! `assign` keeps every load within 3% of its share (or one task over it,
//! where tasks are too few or too heavy for 3%), with and without costs and
//! slots.

use crate::common;
use graph_assign::{AssignConfig, Metrics, Workers, assign, assign_with};
use graph_core::generate::{Rng, Shape};

#[test]
fn imbalance_is_at_most_three_percent_on_large_graphs() {
    for shape in Shape::ALL {
        let graph = shape.generate(5_000, 11);
        let dag = common::topology(&graph);
        for k in [2, 4, 8, 16] {
            let workers = Workers::new(k).unwrap();
            let assignment = assign(dag, &workers, None, None).unwrap();
            let metrics = common::metrics(dag, &workers, &assignment);
            assert!(
                metrics.imbalance <= 1.03,
                "{} k = {k}: imbalance {}",
                shape.name(),
                metrics.imbalance
            );
        }
    }
}

#[test]
fn the_bound_holds_on_every_shape_and_size() {
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        for k in [2, 3, 5, 16] {
            let workers = Workers::new(k).unwrap();
            let assignment = assign(dag, &workers, None, None).unwrap();
            let metrics = common::metrics(dag, &workers, &assignment);
            common::assert_balanced(&format!("{label} k = {k}"), &workers, &metrics, None, 1.03);
        }
    }
}

#[test]
fn costs_are_balanced_not_task_counts() {
    let mut rng = Rng::new(5);
    for shape in Shape::ALL {
        let graph = shape.generate(3_000, 4);
        let dag = common::topology(&graph);
        let costs: Vec<f64> = (0..graph.len())
            .map(|_| 0.5 + rng.below(10) as f64)
            .collect();
        let workers = Workers::new(6).unwrap();
        let assignment = assign(dag, &workers, None, Some(&costs)).unwrap();
        let metrics = Metrics::of(dag, &workers, &assignment, None, Some(&costs)).unwrap();
        common::assert_balanced(shape.name(), &workers, &metrics, Some(&costs), 1.03);
    }
}

#[test]
fn slots_set_each_workers_share() {
    let workers = Workers::with_slots([4, 2, 1, 1]).unwrap();
    for shape in Shape::ALL {
        let graph = shape.generate(4_000, 9);
        let dag = common::topology(&graph);
        let assignment = assign(dag, &workers, None, None).unwrap();
        let metrics = common::metrics(dag, &workers, &assignment);
        common::assert_balanced(shape.name(), &workers, &metrics, None, 1.03);
        assert!(
            metrics.imbalance <= 1.03,
            "{}: {}",
            shape.name(),
            metrics.imbalance
        );
        // Worker 0 has half the slots, so about half the tasks.
        let half = graph.len() as f64 / 2.0;
        assert!(
            metrics.loads[0] >= half * 0.9,
            "{}: {:?}",
            shape.name(),
            metrics.loads
        );
    }
}

#[test]
fn a_looser_bound_is_kept_too() {
    let graph = Shape::ArrayOverlap.generate(3_000, 0);
    let dag = common::topology(&graph);
    let workers = Workers::new(4).unwrap();
    let config = AssignConfig {
        max_imbalance: 1.2,
        ..AssignConfig::default()
    };
    let assignment = assign_with(dag, &workers, &config).unwrap();
    let metrics = common::metrics(dag, &workers, &assignment);
    common::assert_balanced("overlap at 1.2", &workers, &metrics, None, 1.2);
}
