//! Stage planning: wide edges split stages, narrow work coalesces into one
//! task per partition and stage, and results do not change.

use crate::common::{Evaluator, graph, key, keys, show_checked};
use expect_test::expect;
use graph_core::generate::{chain, shuffle_split};
use graph_core::{Dag, Key, Op};
use graph_optimize::{Error, StageConfig, coalesce_stages, plan_stages};

fn wide(ops: &[&str]) -> StageConfig {
    StageConfig {
        wide_ops: ops.iter().map(|op| Op::new(op)).collect(),
        ..StageConfig::default()
    }
}

#[test]
fn a_shuffle_splits_two_stages() {
    let graph = shuffle_split(3, 2);
    let plan = plan_stages(&graph, &wide(&["sum"])).unwrap();
    assert_eq!(plan.stage_count, 2);
    let coalesced = coalesce_stages(&graph, &plan).unwrap();
    // Each input has two users, so it stays; its pieces are narrow but used
    // by a wide op, so they stay in stage 0; the outputs make stage 1.
    expect![[r#"
        ('input', 0) = 0
        ('input', 1) = 1
        ('input', 2) = 2
        ('output', 0) = sum([('split', 0, 0), ('split', 1, 0), ('split', 2, 0)])
        ('output', 1) = sum([('split', 0, 1), ('split', 1, 1), ('split', 2, 1)])
        ('split', 0, 0) = add(('input', 0), 0)
        ('split', 0, 1) = add(('input', 0), 1)
        ('split', 1, 0) = add(('input', 1), 0)
        ('split', 1, 1) = add(('input', 1), 1)
        ('split', 2, 0) = add(('input', 2), 0)
        ('split', 2, 1) = add(('input', 2), 1)
    "#]]
    .assert_eq(&show_checked(&coalesced));
}

#[test]
fn narrow_chains_coalesce_per_partition() {
    // Two partitions, each mapped twice (narrow), then an all-to-all sum,
    // then a narrow step on each side of it.
    let g = graph(
        "
        ('x', 0) = 1
        ('x', 1) = 2
        ('a', 0) = inc(('x', 0))
        ('a', 1) = inc(('x', 1))
        ('b', 0) = neg(('a', 0))
        ('b', 1) = neg(('a', 1))
        total = sum([('b', 0), ('b', 1)])
        out = inc(total)
        ",
    );
    let plan = plan_stages(&g, &wide(&["sum"])).unwrap();
    let stages: Vec<Vec<Key>> = plan
        .stages()
        .iter()
        .map(|stage| stage.iter().map(|&n| g.key(n).clone()).collect())
        .collect();
    assert_eq!(stages, [keys(&["('b', 0)", "('b', 1)"]), keys(&["out"])]);
    let coalesced = coalesce_stages(&g, &plan).unwrap();
    expect![[r#"
        ('b', 0) = neg(inc(1))
        ('b', 1) = neg(inc(2))
        out = inc(sum([('b', 0), ('b', 1)]))
    "#]]
    .assert_eq(&show_checked(&coalesced));
    let out = key("out");
    assert_eq!(
        Evaluator::new(&g).get(&out),
        Evaluator::new(&coalesced).get(&out)
    );

    // A wide edge named by its keys splits as well; kept keys stay tasks.
    let config = StageConfig {
        wide_edges: vec![(key("('a', 0)"), key("('b', 0)"))],
        keys: keys(&["('x', 1)"]),
        ..wide(&["sum"])
    };
    let plan = plan_stages(&g, &config).unwrap();
    let coalesced = coalesce_stages(&g, &plan).unwrap();
    expect![[r#"
        ('a', 0) = inc(1)
        ('b', 0) = neg(('a', 0))
        ('b', 1) = neg(inc(('x', 1)))
        ('x', 1) = 2
        out = inc(sum([('b', 0), ('b', 1)]))
    "#]]
    .assert_eq(&show_checked(&coalesced));
    assert_eq!(plan.stage_count, 3);
}

#[test]
fn long_chains_are_cut_at_the_depth_limit() {
    let graph = chain(10);
    let config = StageConfig {
        max_depth: Some(3),
        ..StageConfig::default()
    };
    let plan = plan_stages(&graph, &config).unwrap();
    assert_eq!(plan.task_count(), 4);
    let coalesced = coalesce_stages(&graph, &plan).unwrap();
    expect![[r#"
        ('chain', 2) = inc(inc(0))
        ('chain', 5) = inc(inc(inc(('chain', 2))))
        ('chain', 8) = inc(inc(inc(('chain', 5))))
        ('chain', 9) = inc(('chain', 8))
    "#]]
    .assert_eq(&show_checked(&coalesced));
}

#[test]
fn errors_name_keys() {
    let g = graph("a = 1\nb = inc(a)\nc = inc(b)");
    let config = StageConfig {
        wide_edges: vec![(key("a"), key("c"))],
        ..StageConfig::default()
    };
    let err = plan_stages(&g, &config).unwrap_err();
    assert!(matches!(err, Error::NotAnEdge { .. }));
    assert_eq!(
        err.to_string(),
        "no edge 'a' -> 'c': 'c' does not depend on 'a'"
    );
    let config = StageConfig {
        keys: keys(&["zzz"]),
        ..StageConfig::default()
    };
    let err = plan_stages(&g, &config).unwrap_err();
    assert_eq!(err.to_string(), "unknown key 'zzz': no task has it");
    let plan = plan_stages(&chain(5), &StageConfig::default()).unwrap();
    assert!(matches!(
        coalesce_stages(&g, &plan).unwrap_err(),
        Error::PlanLength { .. }
    ));
    // A plan for another graph of the same size.
    let other = graph(
        "a = 1
b = inc(a)
c = add(b, a)",
    );
    let plan = plan_stages(&chain(3), &StageConfig::default()).unwrap();
    let err = coalesce_stages(&other, &plan).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the stage plan does not fit the graph: task 'a' cannot join the task that uses it"
    );
}

/// A seeded graph of `layers` layers of `width` tasks, each reading a random
/// subset of the layer below: dense enough that complete bipartite blocks
/// come and go.
fn layered(layers: usize, width: usize, density: u64, seed: u64) -> graph_core::TaskGraph {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut graph = graph_core::TaskGraph::new();
    for layer in 0..layers as i64 {
        for i in 0..width as i64 {
            let key = Key::from(("t", layer, i));
            let term = if layer == 0 {
                graph_core::Term::lit(i)
            } else {
                let reads: Vec<graph_core::Term> = (0..width as i64)
                    .filter(|_| next() % 100 < density)
                    .map(|j| graph_core::Term::key(("t", layer - 1, j)))
                    .collect();
                graph_core::Term::call("sum", [graph_core::Term::list(reads)])
            };
            graph.insert(key, term).unwrap();
        }
    }
    graph
}

#[test]
fn wide_edges_are_those_of_complete_bipartite_blocks() {
    use graph_core::generate::Shape;
    use graph_optimize::find_wide_edges;
    use graph_optimize::fuzz::wide_edges_by_definition;

    let mut graphs: Vec<graph_core::TaskGraph> = Vec::new();
    for seed in 0..40 {
        graphs.push(layered(4, 2 + seed as usize % 7, 10 + seed * 2, seed));
    }
    for shape in Shape::ALL.into_iter().chain(Shape::DENSE) {
        graphs.push(shape.generate(120, 9));
    }
    graphs.push(graph_core::generate::map_shuffle_map(5, 3));
    let mut some_wide = 0;
    for graph in &graphs {
        let topology = graph.topology().unwrap();
        let found = find_wide_edges(topology);
        let expected = wide_edges_by_definition(topology);
        assert_eq!(found.iter().collect::<Vec<_>>(), expected);
        assert_eq!(found.len(), expected.len());
        for node in topology.node_ids() {
            for &dep in topology.dependencies(node) {
                assert_eq!(found.contains(dep, node), expected.contains(&(dep, node)));
            }
        }
        some_wide += usize::from(!found.is_empty());
    }
    // The sample holds graphs with blocks and graphs without.
    assert!(
        some_wide > 10 && some_wide < graphs.len() - 5,
        "{some_wide}"
    );
}

#[test]
fn blocks_split_stages_without_naming_ops() {
    use graph_optimize::plan_shape_stages;
    let graph = graph_core::generate::map_shuffle_map(4, 2);
    let plan = plan_stages(&graph, &StageConfig::default()).unwrap();
    assert_eq!(plan.stage_count, 2);
    assert_eq!(
        plan.stages().iter().map(Vec::len).collect::<Vec<_>>(),
        [4, 2]
    );
    assert_eq!(plan.wide_edges.len(), 8);
    // The shape alone plans the same.
    let shape = plan_shape_stages(graph.topology().unwrap(), &[]);
    assert_eq!(shape, plan);
    // Blocks off, nothing is wide: one stage, each output's whole lineage
    // but the shared maps coalesced.
    let off = StageConfig {
        wide_blocks: false,
        ..StageConfig::default()
    };
    let plan = plan_stages(&graph, &off).unwrap();
    assert_eq!(plan.stage_count, 1);
    assert!(plan.wide_edges.is_empty());
    let summary = plan.summary(graph.topology().unwrap()).unwrap();
    assert_eq!(summary.stages[0].tasks, 12);
    assert_eq!(summary.stages[0].tasks_after_coalescing, 6);
    assert_eq!(summary.barriers.len(), 1);
}

#[test]
fn a_summary_checks_its_graph() {
    let plan = plan_stages(&chain(5), &StageConfig::default()).unwrap();
    let err = plan
        .summary(shuffle_split(2, 2).topology().unwrap())
        .unwrap_err();
    assert!(matches!(err, Error::PlanLength { .. }));
}
