//! Ports of dask's tests of inputs at the edges: cycles, the empty graph,
//! very long chains, external keys, and inputs that must not change.

use crate::common::{Case, STRATEGIES, VecDag};
use graph_core::{NodeId, TaskGraph};
use graph_order::{Error, OrderConfig, order, order_graph};

/// `test_order_cycle`: each of dask's cyclic graphs is an error naming the
/// nodes on the cycle, by every strategy, a self-loop included (as dask
/// raises "Cycle detected" for `{"a": (f, "a")}`). dask's first case runs
/// its scheduler, not `order`, and is not ported.
#[test]
fn order_cycle() {
    // a=0, b=1, c=2, d=3; (x, y) means y depends on x.
    let cases: [(usize, &[(usize, usize)]); 5] = [
        (1, &[(0, 0)]),
        (1, &[(0, 0)]),
        (3, &[(1, 0), (2, 1), (0, 2)]),
        (4, &[(1, 0), (2, 1), (0, 2), (3, 2)]),
        (4, &[(1, 0), (2, 1), (0, 2), (3, 2), (1, 3)]),
    ];
    for (n, edges) in cases {
        let dag = VecDag::new(n, edges);
        for strategy in STRATEGIES {
            match order(&dag, &[], &OrderConfig::new(strategy)) {
                Err(Error::Graph(graph_core::Error::NodeCycle { nodes })) => {
                    assert!(nodes.len() >= 2);
                    assert_eq!(nodes.first(), nodes.last());
                    for pair in nodes.windows(2) {
                        assert!(dag.deps[pair[0].index()].contains(&pair[1]), "{nodes:?}");
                    }
                }
                other => panic!("expected a cycle, got {other:?}"),
            }
        }
    }
    let err = order(
        &VecDag::new(2, &[(0, 1), (1, 0)]),
        &[],
        &OrderConfig::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "cycle through nodes 0 -> 1 -> 0 (each depends on the next)"
    );
}

/// The `TaskGraph` helper names the keys on a cycle.
#[test]
fn order_cycle_names_keys() {
    let mut graph = TaskGraph::new();
    graph.insert_opaque("a", vec!["b".into()]).unwrap();
    graph.insert_opaque("b", vec!["c".into()]).unwrap();
    graph
        .insert_opaque("c", vec!["a".into(), "d".into()])
        .unwrap();
    graph.insert_opaque("d", vec![]).unwrap();
    let err = order_graph(&graph, &OrderConfig::default()).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("cycle: "), "{text}");
    for key in ["'a'", "'b'", "'c'"] {
        assert!(text.contains(key), "{text}");
    }
}

/// `test_order_empty`.
#[test]
fn order_empty() {
    let dag = VecDag::new(0, &[]);
    for strategy in STRATEGIES {
        assert!(
            order(&dag, &[], &OrderConfig::new(strategy))
                .unwrap()
                .is_empty()
        );
    }
}

/// `test_recursion_depth_long_linear_chains`: 10 001 tasks in one chain.
#[test]
fn recursion_depth_long_linear_chains() {
    let mut text = String::from("'-1' <-\n");
    for ix in 0..10_000 {
        text.push_str(&format!("'{ix}' <- '{}'\n", ix - 1));
    }
    let case = Case::parse(&text);
    for strategy in STRATEGIES {
        let o = case.order(strategy);
        assert_eq!(o.order.len(), 10_001);
        assert_eq!(o.o("'9999'"), 10_000);
    }
}

/// `test_handle_out_of_graph_dependencies`: in dask, `'b' <- 'a'` with `'a'`
/// outside the graph orders `b` and `c` only. A `TaskGraph` refuses a missing
/// key (an error naming both keys); the closest equivalent keeps `'a'` as a
/// data node, which is ordered first and leaves `b`, `c` in sequence.
#[test]
fn handle_out_of_graph_dependencies() {
    let mut graph = TaskGraph::new();
    graph.insert_opaque("b", vec!["a".into()]).unwrap();
    graph.insert_opaque("c", vec!["b".into()]).unwrap();
    let err = order_graph(&graph, &OrderConfig::default()).unwrap_err();
    assert_eq!(err.to_string(), "task 'b' refers to missing key 'a'");

    let case = Case::parse("'a' <-   [non-task: data]\n'b' <- 'a'\n'c' <- 'b'\n");
    let o = case.dask();
    assert_eq!(o.sequence(), ["a", "b", "c"]);
}

/// `test_do_not_mutate_input`: ordering leaves the graph and its data flags
/// as they were (dask checks its dict and dependencies), and the list node
/// `'d'` (one dependent) stays in the graph.
#[test]
fn do_not_mutate_input() {
    let case = Case::parse(include_str!("../data/dask/52_0.txt"));
    let before = (
        case.graph.clone(),
        case.is_data.clone(),
        case.topology().clone(),
    );
    let o = case.dask();
    assert_eq!(o.order.len(), 5);
    assert!(o.o("'d'") < o.o("'e'"));
    assert!(before.0 == case.graph);
    assert_eq!(before.1, case.is_data);
    assert_eq!(&before.2, case.topology());
}

/// `test_visualize_int_overflow`: dask only checks that ordering with stats
/// on the 98-task rechunk graph does not fail; every strategy orders it.
#[test]
fn visualize_int_overflow() {
    let case = Case::parse(include_str!("../data/dask/45_0.txt"));
    for strategy in STRATEGIES {
        assert_eq!(case.order(strategy).order.len(), 98);
    }
}

/// A custom `Dag` whose dependency is out of range is an error, not a panic.
#[test]
fn out_of_range_dependency() {
    let mut dag = VecDag::new(2, &[(0, 1)]);
    dag.deps[1].push(NodeId::new(5));
    let err = order(&dag, &[], &OrderConfig::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Graph(graph_core::Error::NodeOutOfRange {
                node: 5,
                node_count: 2
            })
        ),
        "{err}"
    );
}

/// Tie-break and data slices of the wrong length are errors.
#[test]
fn wrong_lengths() {
    let dag = VecDag::new(2, &[(0, 1)]);
    let err = order(&dag, &[0], &OrderConfig::default()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                what: "tie_break",
                ..
            }
        ),
        "{err}"
    );
    let config = OrderConfig {
        is_data: &[true],
        ..OrderConfig::default()
    };
    let err = order(&dag, &[], &config).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LengthMismatch {
                what: "is_data",
                ..
            }
        ),
        "{err}"
    );
}
