//! Mars' `GraphAssigner`, ported from its tests: start operands (inputs and
//! shuffle reducers) spread evenly, quotas follow slots, and independent
//! chains stay whole (zero cut).

use crate::common;
use std::collections::BTreeSet;

use graph_assign::{Workers, assign_mars, edge_cut, shuffle_reducers};
use graph_core::generate;
use graph_core::{Dag, Key, Topology};

#[test]
fn shuffle_inputs_and_reducers_each_cover_every_worker() {
    // Mars' test_shuffle_assign: 8 inputs and 8 reducers on 8 bands.
    let graph = generate::shuffle_split(8, 8);
    let dag = common::topology(&graph);
    let assignment = assign_mars(dag, &Workers::new(8).unwrap()).unwrap();
    let workers_of = |name: &str| -> BTreeSet<usize> {
        (0..8)
            .map(|i| assignment.worker(graph.node_id(&Key::from((name, i))).unwrap()))
            .collect()
    };
    assert_eq!(workers_of("input").len(), 8);
    assert_eq!(workers_of("output").len(), 8);
}

#[test]
fn complete_bipartite_reducers_are_found_too() {
    let graph = generate::shuffle(6, 5);
    let reducers = shuffle_reducers(common::topology(&graph)).unwrap();
    let names: Vec<String> = reducers.iter().map(|&n| graph.key(n).to_string()).collect();
    assert_eq!(names.len(), 5);
    assert!(
        names.iter().all(|name| name.starts_with("('reduce'")),
        "{names:?}"
    );
}

#[test]
fn reductions_halos_and_transposes_have_no_reducers() {
    for graph in [
        generate::tree(200, 4),
        generate::array_overlap(10, 10),
        generate::array_sum_transpose(10),
        generate::diamonds(20),
    ] {
        assert_eq!(shuffle_reducers(common::topology(&graph)).unwrap(), []);
    }
}

#[test]
fn independent_chains_have_zero_cut() {
    // 12 chains of 10 on 4 workers: each chain stays on one worker.
    let n_chains = 12;
    let edges = (0..n_chains).flat_map(|c| (0..9).map(move |i| (c * 10 + i, c * 10 + i + 1)));
    let dag = Topology::from_edges(n_chains * 10, edges).unwrap();
    let workers = Workers::new(4).unwrap();
    let assignment = assign_mars(&dag, &workers).unwrap();
    common::assert_valid("chains", &dag, &workers, &assignment);
    assert_eq!(edge_cut(&dag, &assignment).unwrap(), 0);
    // Three chains per worker.
    assert_eq!(assignment.tasks_per_worker(), [30, 30, 30, 30]);
}

#[test]
fn start_operands_are_balanced_by_slots() {
    // 30 independent tasks on workers with 3, 1 and 2 slots: quotas 15, 5, 10.
    let dag = Topology::from_edges(30, []).unwrap();
    let workers = Workers::with_slots([3, 1, 2]).unwrap();
    let assignment = assign_mars(&dag, &workers).unwrap();
    assert_eq!(assignment.tasks_per_worker(), [15, 5, 10]);
}

#[test]
fn start_operands_differ_by_at_most_one_on_equal_workers() {
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        let workers = Workers::new(4).unwrap();
        let assignment = assign_mars(dag, &workers).unwrap();
        let mut counts = [0_usize; 4];
        for node in dag.node_ids() {
            if dag.dependencies(node).is_empty() {
                counts[assignment.worker(node)] += 1;
            }
        }
        let spread = counts.iter().max().unwrap() - counts.iter().min().unwrap();
        assert!(spread <= 1, "{label}: sources per worker {counts:?}");
    }
}

#[test]
fn other_tasks_follow_most_of_their_inputs() {
    // 0 and 1 are sources on different workers; 2 reads 0 twice over (via 0
    // and 3, which follows 0), so 2 goes with 0.
    let dag = Topology::from_edges(4, [(0, 3), (0, 2), (3, 2), (1, 2)]).unwrap();
    let assignment = assign_mars(&dag, &Workers::new(2).unwrap()).unwrap();
    let [a, b, c, d] = [0, 1, 2, 3].map(|i| assignment.as_slice()[i]);
    assert_ne!(a, b);
    assert_eq!(c, a);
    assert_eq!(d, a);
}
