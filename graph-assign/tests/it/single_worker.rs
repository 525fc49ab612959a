//! With one worker, everything goes to worker 0: no cut, perfect balance.

use crate::common;
use graph_assign::{Workers, assign, assign_greedy, assign_mars};

#[test]
fn one_worker_takes_everything() {
    let workers = Workers::new(1).unwrap();
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        for assignment in [
            assign(dag, &workers, None, None).unwrap(),
            assign_mars(dag, &workers).unwrap(),
            assign_greedy(dag, &workers, None, None).unwrap(),
        ] {
            assert!(assignment.as_slice().iter().all(|&w| w == 0), "{label}");
            let metrics = common::metrics(dag, &workers, &assignment);
            assert_eq!((metrics.edge_cut, metrics.imbalance), (0, 1.0), "{label}");
        }
    }
}
