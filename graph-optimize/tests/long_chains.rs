//! Long chains through the whole pipeline: cheap ops inlined, then fused,
//! give terms that nest thousands of calls deep, and building them must not
//! recurse as deep. (Dropping or comparing such a term recurses, in
//! graph-core's types; the terms here are as deep as a test thread's small
//! stack lets those go.)

use graph_core::testing::chain;
use graph_core::{Body, Op, Term};
use graph_optimize::{FuseConfig, OptimizeConfig, optimize, optimize_owned};

/// How many calls a term nests, counted without recursion.
fn nesting(term: &Term) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(term, 1)];
    while let Some((term, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        if let Term::Call { args: items, .. } | Term::List(items) = term {
            stack.extend(items.iter().map(|item| (item, depth + 1)));
        }
    }
    deepest
}

#[test]
fn a_long_chain_of_cheap_ops_builds_deep_terms_without_deep_recursion() {
    let graph = chain(20_000);
    let config = OptimizeConfig {
        fast_ops: vec![Op::new("inc")],
        fuse: FuseConfig {
            max_depth: Some(40),
            ..FuseConfig::default()
        },
        ..OptimizeConfig::default()
    };
    let (optimized, report) = optimize(&graph, &config).unwrap();
    // inline_functions leaves every 64th task (its terms are capped), and
    // fuse joins up to 40 of those into one task.
    assert_eq!(report.passes[2].tasks_after, 313);
    assert_eq!(optimized.graph.len(), 8);
    let deepest = optimized
        .graph
        .iter()
        .filter_map(|(_, task)| match &task.body {
            Body::Term(term) => Some(nesting(term)),
            Body::Opaque(_) => None,
        })
        .max()
        .unwrap();
    assert!(deepest > 2_000, "{deepest}");
    let (owned, _) = optimize_owned(graph, &config).unwrap();
    assert_eq!(owned, optimized);
}
