//! Bad input is reported as an `Error`, never a panic: a graph that is not a
//! DAG, no workers, a worker without slots, per-task slices of the wrong
//! length, bad costs and bounds.

use graph_assign::{
    AssignConfig, Assignment, Error, ListConfig, Metrics, Workers, assign, assign_greedy,
    assign_list, assign_with, edge_cut, imbalance, makespan_bound,
};
use graph_core::{Dag, NodeId, Topology};

fn chain() -> Topology {
    Topology::from_edges(3, [(0, 1), (1, 2)]).unwrap()
}

#[test]
fn zero_workers_is_an_error() {
    assert!(matches!(Workers::new(0), Err(Error::NoWorkers)));
    assert!(matches!(Workers::with_slots([]), Err(Error::NoWorkers)));
    assert!(matches!(
        Assignment::from_vec(vec![], 0),
        Err(Error::NoWorkers)
    ));
}

#[test]
fn zero_slots_is_an_error() {
    let err = Workers::with_slots([2, 1, 0]).unwrap_err();
    assert!(matches!(err, Error::NoSlots { worker: 2 }));
    assert_eq!(
        err.to_string(),
        "worker 2 has no slots: every worker needs at least one"
    );
}

#[test]
fn slices_must_have_one_entry_per_task() {
    let dag = chain();
    let workers = Workers::new(2).unwrap();
    let err = assign(&dag, &workers, Some(&[1, 2]), None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "sizes has 2 entries but the graph has 3 tasks"
    );
    assert!(matches!(
        assign(&dag, &workers, None, Some(&[1.0])),
        Err(Error::LengthMismatch { what: "costs", .. })
    ));
    let config = AssignConfig {
        priorities: Some(&[0, 1]),
        ..AssignConfig::default()
    };
    assert!(matches!(
        assign_with(&dag, &workers, &config),
        Err(Error::LengthMismatch {
            what: "priorities",
            ..
        })
    ));
    assert!(matches!(
        assign_greedy(&dag, &workers, Some(&[1]), None),
        Err(Error::LengthMismatch { what: "sizes", .. })
    ));
    let short = Assignment::from_vec(vec![0, 1], 2).unwrap();
    assert!(matches!(
        edge_cut(&dag, &short),
        Err(Error::LengthMismatch {
            what: "assignment",
            ..
        })
    ));
}

#[test]
fn costs_must_be_finite_and_not_negative() {
    let dag = chain();
    let workers = Workers::new(2).unwrap();
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let err = assign(&dag, &workers, None, Some(&[1.0, bad, 1.0])).unwrap_err();
        assert!(
            matches!(err, Error::BadCost { node, .. } if node == NodeId::new(1)),
            "{err}"
        );
    }
}

#[test]
fn costs_whose_sum_overflows_are_an_error_for_every_strategy() {
    // Each cost is finite, but a quarter of 12,000 of them at 1e308 sum to
    // infinity: loads, balance and simulated times would all be meaningless.
    let n = 12_000;
    let dag = Topology::from_edges(n, (1..n).map(|i| (i - 1, i))).unwrap();
    let workers = Workers::new(4).unwrap();
    let costs: Vec<f64> = (0..n)
        .map(|i| if i % 4 == 0 { 1e308 } else { 1.0 })
        .collect();
    let too_large = |err: Error| {
        assert!(
            matches!(err, Error::CostsTooLarge { total } if total > 1e300),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("the task costs add up to inf seconds"),
            "{err}"
        );
    };
    too_large(assign(&dag, &workers, None, Some(&costs)).unwrap_err());
    too_large(assign_greedy(&dag, &workers, None, Some(&costs)).unwrap_err());
    let list = ListConfig {
        costs: Some(&costs),
        ..ListConfig::default()
    };
    too_large(assign_list(&dag, &workers, &list).unwrap_err());
    too_large(makespan_bound(&dag, &workers, Some(&costs)).unwrap_err());
    let spread = Assignment::from_vec((0..n as u32).map(|i| i % 4).collect(), 4).unwrap();
    too_large(Metrics::of(&dag, &workers, &spread, None, Some(&costs)).unwrap_err());
    // At the bound, a placement is made and its figures are finite.
    let costs: Vec<f64> = (0..n)
        .map(|i| if i % 4 == 0 { 1e11 } else { 1.0 })
        .collect();
    let placed = assign(&dag, &workers, None, Some(&costs)).unwrap();
    let metrics = Metrics::of(&dag, &workers, &placed, None, Some(&costs)).unwrap();
    assert!(metrics.imbalance.is_finite() && metrics.imbalance >= 1.0);
}

#[test]
fn a_transfer_model_whose_times_overflow_is_an_error() {
    let dag = chain();
    let config = ListConfig {
        sizes: Some(&[u64::MAX; 3]),
        bandwidth: 1e-300,
        ..ListConfig::default()
    };
    let err = assign_list(&dag, &Workers::new(2).unwrap(), &config).unwrap_err();
    assert!(matches!(err, Error::TransfersTooLarge { .. }), "{err}");
}

#[test]
fn a_bound_below_one_is_an_error() {
    let config = AssignConfig {
        max_imbalance: 0.9,
        ..AssignConfig::default()
    };
    let err = assign_with(&chain(), &Workers::new(2).unwrap(), &config).unwrap_err();
    assert!(matches!(err, Error::BadImbalance { bound } if bound == 0.9));
}

#[test]
fn assignments_must_fit_their_workers() {
    let err = Assignment::from_vec(vec![0, 3, 1], 2).unwrap_err();
    assert_eq!(
        err.to_string(),
        "task 1 is placed on worker 3, but there are only 2 workers"
    );
    let assignment = Assignment::from_vec(vec![0, 1, 1], 2).unwrap();
    let three = Workers::new(3).unwrap();
    assert!(matches!(
        imbalance(&three, &assignment, None),
        Err(Error::WorkerCountMismatch {
            assignment: 2,
            workers: 3
        })
    ));
    assert!(Metrics::of(&chain(), &three, &assignment, None, None).is_err());
}

/// A user's `Dag` that lists dependencies and promises nothing else.
struct Rows(Vec<Vec<NodeId>>);

impl Dag for Rows {
    fn node_count(&self) -> usize {
        self.0.len()
    }
    fn dependencies(&self, node: NodeId) -> &[NodeId] {
        &self.0[node.index()]
    }
}

#[test]
fn a_graph_that_is_not_a_dag_is_refused_by_every_algorithm() {
    let workers = Workers::new(2).unwrap();
    let n = NodeId::new;
    let cases = [
        ("a cycle", Rows(vec![vec![n(1)], vec![n(0)]])),
        ("a self-edge", Rows(vec![vec![], vec![n(1)]])),
        ("a node out of range", Rows(vec![vec![n(5)], vec![]])),
    ];
    for (what, dag) in cases {
        let assignment = Assignment::from_vec(vec![0, 1], 2).unwrap();
        let results = [
            ("assign", assign(&dag, &workers, None, None).err()),
            (
                "assign_greedy",
                assign_greedy(&dag, &workers, None, None).err(),
            ),
            (
                "assign_mars",
                graph_assign::assign_mars(&dag, &workers).err(),
            ),
            ("edge_cut", edge_cut(&dag, &assignment).err()),
            (
                "shuffle_reducers",
                graph_assign::shuffle_reducers(&dag).err(),
            ),
            (
                "Metrics::of",
                Metrics::of(&dag, &workers, &assignment, None, None).err(),
            ),
        ];
        for (algorithm, err) in results {
            assert!(
                matches!(err, Some(Error::Graph(_))),
                "{algorithm} on {what}: {err:?}"
            );
        }
    }
}
