//! `Topology`: CSR in both directions, repeats merged, cycles (self-edges
//! included) and bad edges reported, any `Dag` checked; `GraphStats` over it.

use graph_core::generate;
use graph_core::generate::Shape;
use graph_core::{Dag, Error, GraphStats, NodeId, Topology};

fn ids(indices: &[usize]) -> Vec<NodeId> {
    indices.iter().map(|&i| NodeId::new(i)).collect()
}

#[test]
fn a_self_edge_is_a_cycle() {
    let err = Topology::from_edges(3, [(0, 2), (1, 1)]).unwrap_err();
    assert!(
        matches!(&err, Error::NodeCycle { nodes } if nodes == &ids(&[1, 1])),
        "{err}"
    );
    let err = Topology::from_dependency_rows(vec![0, 0, 1], vec![1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "cycle through nodes 1 -> 1 (each depends on the next)"
    );
}

#[test]
fn checks_a_users_dag_once() {
    /// A `Dag` that promises nothing: a list of dependency rows.
    struct Rows(Vec<Vec<NodeId>>);
    impl Dag for Rows {
        fn node_count(&self) -> usize {
            self.0.len()
        }
        fn dependencies(&self, node: NodeId) -> &[NodeId] {
            &self.0[node.index()]
        }
    }
    let good = Rows(vec![vec![], ids(&[0, 0]), ids(&[1, 0])]);
    let checked = Topology::checked(&good).unwrap();
    assert!(matches!(checked, std::borrow::Cow::Owned(_)));
    assert_eq!(checked.dependents(NodeId::new(0)), ids(&[1, 2]));
    assert_eq!(checked.edge_count(), 3);
    let cyclic = Rows(vec![ids(&[1]), ids(&[0])]);
    assert!(matches!(
        Topology::checked(&cyclic),
        Err(Error::NodeCycle { .. })
    ));
    let itself = Rows(vec![ids(&[0])]);
    assert!(matches!(
        Topology::checked(&itself),
        Err(Error::NodeCycle { .. })
    ));
    let outside = Rows(vec![ids(&[7])]);
    assert!(matches!(
        Topology::checked(&outside),
        Err(Error::NodeOutOfRange {
            node: 7,
            node_count: 1
        })
    ));
    let topology = Topology::from_edges(2, [(0, 1)]).unwrap();
    assert!(matches!(
        Topology::checked(&topology).unwrap(),
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn merges_repeats() {
    let topology = Topology::from_edges(3, [(0, 2), (1, 2), (0, 2), (1, 2)]).unwrap();
    assert_eq!(topology.edge_count(), 2);
    assert_eq!(topology.dependencies(NodeId::new(2)), ids(&[0, 1]));
    assert_eq!(topology.dependencies(NodeId::new(1)), ids(&[]));
    assert_eq!(topology.dependents(NodeId::new(1)), ids(&[2]));
}

#[test]
fn keeps_dependencies_in_given_order_and_dependents_sorted() {
    let topology = Topology::from_edges(4, [(2, 3), (0, 3), (1, 3), (0, 1), (0, 2)]).unwrap();
    assert_eq!(topology.dependencies(NodeId::new(3)), ids(&[2, 0, 1]));
    assert_eq!(topology.dependents(NodeId::new(0)), ids(&[1, 2, 3]));
}

#[test]
fn reports_cycles_with_their_nodes() {
    let err = Topology::from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 1)]).unwrap_err();
    match &err {
        Error::NodeCycle { nodes } => {
            assert_eq!(nodes.first(), nodes.last());
            assert_eq!(nodes.len(), 4, "{err}");
            // Each node on the cycle depends on the next.
            for pair in nodes.windows(2) {
                let edges = [(0, 1), (1, 2), (2, 3), (3, 1)];
                assert!(edges.contains(&(pair[1].index(), pair[0].index())), "{err}");
            }
        }
        other => panic!("expected a cycle, got {other}"),
    }
}

#[test]
fn reports_bad_edges_and_rows() {
    let err = Topology::from_edges(2, [(0, 5)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node 5 is out of range for a graph of 2 nodes"
    );
    let err = Topology::from_dependency_rows(vec![0, 2, 1], vec![0, 0]).unwrap_err();
    assert!(matches!(err, Error::MalformedRows), "{err}");
    let err = Topology::from_dependency_rows(vec![0, 1], vec![3]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::NodeOutOfRange {
                node: 3,
                node_count: 1
            }
        ),
        "{err}"
    );
}

#[test]
fn empty_graph() {
    let topology = Topology::from_edges(0, []).unwrap();
    assert_eq!(topology.node_count(), 0);
    assert_eq!(GraphStats::of(&topology), GraphStats::default());
}

#[test]
fn transpose_and_topological_order_agree_on_generated_graphs() {
    for shape in Shape::ALL {
        let graph = shape.generate(2_000, 9);
        let topology = graph.topology().unwrap();
        let mut position = vec![usize::MAX; topology.node_count()];
        for (i, node) in topology.topological_order().iter().enumerate() {
            assert_eq!(
                position[node.index()],
                usize::MAX,
                "{}: repeated node",
                shape.name()
            );
            position[node.index()] = i;
        }
        let mut forward = 0;
        for node in topology.node_ids() {
            for &dep in topology.dependencies(node) {
                assert!(
                    position[dep.index()] < position[node.index()],
                    "{}",
                    shape.name()
                );
                assert!(topology.dependents(dep).contains(&node), "{}", shape.name());
                forward += 1;
            }
        }
        let backward: usize = topology
            .node_ids()
            .map(|n| topology.dependents(n).len())
            .sum();
        assert_eq!(
            (forward, backward),
            (topology.edge_count(), topology.edge_count())
        );
    }
}

#[test]
fn stats_of_known_shapes() {
    let chain = GraphStats::of(generate::chain(10).topology().unwrap());
    assert_eq!(
        chain,
        GraphStats {
            tasks: 10,
            edges: 9,
            roots: 1,
            leaves: 1,
            depth: 10,
            max_in_degree: 1,
            max_out_degree: 1
        }
    );
    // 16 leaves summed 4 at a time: 4 partial sums, then 1 root.
    let tree = GraphStats::of(generate::tree(16, 4).topology().unwrap());
    assert_eq!(
        tree,
        GraphStats {
            tasks: 21,
            edges: 20,
            roots: 16,
            leaves: 1,
            depth: 3,
            max_in_degree: 4,
            max_out_degree: 1
        }
    );
    let shuffle = GraphStats::of(generate::shuffle(3, 5).topology().unwrap());
    assert_eq!(
        shuffle,
        GraphStats {
            tasks: 8,
            edges: 15,
            roots: 3,
            leaves: 5,
            depth: 2,
            max_in_degree: 3,
            max_out_degree: 5
        }
    );
    assert_eq!(
        serde_json::to_string(&shuffle).unwrap(),
        r#"{"tasks":8,"edges":15,"roots":3,"leaves":5,"depth":2,"max_in_degree":3,"max_out_degree":5}"#
    );
}

#[test]
fn stats_of_the_word_count_graph() {
    let stats = GraphStats::of(generate::word_count().topology().unwrap());
    assert_eq!(
        stats,
        GraphStats {
            tasks: 14,
            edges: 19,
            roots: 4,
            leaves: 3,
            depth: 4,
            max_in_degree: 3,
            max_out_degree: 4
        }
    );
}

#[test]
fn generators_hit_their_sizes() {
    for shape in Shape::ALL {
        for target in [100, 10_000] {
            let n = shape.generate(target, 1).len();
            assert!(
                n * 2 > target && n < target * 2,
                "{}: {n} tasks for a target of {target}",
                shape.name()
            );
        }
    }
}

#[test]
fn a_hint_of_references_gives_the_same_topology_and_a_wrong_one_is_ignored() {
    for shape in Shape::ALL {
        let graph = shape.generate(500, 3);
        let expected = graph.topology().unwrap().clone();
        let references = graph.references().unwrap();

        let mut hinted = graph.clone();
        hinted.hint_references(references.clone());
        assert_eq!(hinted.topology().unwrap(), &expected, "{}", shape.name());

        // Every reference of the last task that has one now names node 0:
        // the hint no longer matches the bodies, and the keys are resolved.
        let (offsets, mut targets) = references.into_rows();
        if let Some(last) = targets.last_mut() {
            *last = NodeId::new(0);
        }
        let mut wrong = graph.clone();
        wrong.hint_references(graph_core::References::from_rows(offsets, targets).unwrap());
        assert_eq!(wrong.topology().unwrap(), &expected, "{}", shape.name());
    }
}

#[test]
fn references_keep_repeats_in_preorder() {
    use graph_core::{TaskGraph, Term};
    let graph = TaskGraph::builder()
        .task("a", Term::lit(1))
        .task("b", Term::lit(2))
        .task(
            "c",
            Term::call(
                "f",
                [Term::key("b"), Term::list([Term::key("a"), Term::key("b")])],
            ),
        )
        .build()
        .unwrap();
    let references = graph.references().unwrap();
    assert_eq!(references.get(NodeId::new(2)), ids(&[1, 0, 1]));
    assert_eq!(
        graph.topology().unwrap().dependencies(NodeId::new(2)),
        ids(&[1, 0])
    );
}
