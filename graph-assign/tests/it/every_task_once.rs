//! Every strategy places every task exactly once, on a worker that exists,
//! for every shape, size and number of workers.

use crate::common;
use graph_assign::{Workers, assign, assign_greedy, assign_mars};

#[test]
fn every_task_is_placed_once_on_an_existing_worker() {
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        for k in [1, 2, 3, 7, 16] {
            let workers = Workers::new(k).unwrap();
            let label = format!("{label}, k = {k}");
            let ours = assign(dag, &workers, None, None).unwrap();
            common::assert_valid(&format!("assign {label}"), dag, &workers, &ours);
            let mars = assign_mars(dag, &workers).unwrap();
            common::assert_valid(&format!("mars {label}"), dag, &workers, &mars);
            let greedy = assign_greedy(dag, &workers, None, None).unwrap();
            common::assert_valid(&format!("greedy {label}"), dag, &workers, &greedy);
        }
    }
}
