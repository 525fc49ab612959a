//! Property: rewriting a graph on all cores gives the same graph, report and
//! error as rewriting it task by task, in place or into a copy.

use crate::common;
use crate::common::{random_rules, rules};
use graph_core::generate::{Rng, Shape};
use graph_core::{Key, TaskGraph, Term};
use graph_rewrite::{
    RewriteStrategy, RuleSet, par_rewrite_graph, par_rewrite_graph_in_place, rewrite_graph,
    rewrite_graph_in_place,
};

/// Rules over the ops of `graph_core::testing`'s generators.
fn generator_rules() -> RuleSet {
    rules(&[
        ("inc(max([?x]))", "inc(?x)"),
        ("max([?x, ?y])", "max2(?x, ?y)"),
        ("sum([?x])", "?x"),
        ("add(?x, ?x)", "mul(?x, 2)"),
        ("identity(?x)", "?x"),
        ("inc(inc(?x))", "add(?x, 2)"),
        ("add(?x, 0)", "?x"),
    ])
}

fn check_same(graph: &TaskGraph, rules: &RuleSet, strategy: RewriteStrategy) -> usize {
    let (sequential, report) = rewrite_graph(graph, rules, strategy).unwrap();
    let (parallel, par_report) = par_rewrite_graph(graph, rules, strategy).unwrap();
    assert_eq!(report, par_report);
    assert!(sequential == parallel, "graphs differ");
    let mut in_place = graph.clone();
    assert_eq!(
        rewrite_graph_in_place(&mut in_place, rules, strategy).unwrap(),
        report
    );
    assert!(in_place == sequential);
    let mut par_in_place = graph.clone();
    assert_eq!(
        par_rewrite_graph_in_place(&mut par_in_place, rules, strategy).unwrap(),
        report
    );
    assert!(par_in_place == sequential);
    sequential.topology().unwrap();
    report.changed
}

#[test]
fn every_shape_and_strategy() {
    let rules = generator_rules();
    let strategies = [
        RewriteStrategy::BottomUp,
        RewriteStrategy::TopLevel,
        RewriteStrategy::Fixpoint { max_steps: 5 },
    ];
    let mut changed = 0;
    for shape in Shape::ALL {
        let graph = shape.generate(5_000, 3);
        for strategy in strategies {
            changed += check_same(&graph, &rules, strategy);
        }
    }
    assert!(changed > 10_000, "only {changed} tasks changed");
}

#[test]
fn random_rules_on_random_terms() {
    let mut rng = Rng::new(5);
    for round in 0..20 {
        let rules = random_rules(&mut rng, 1 + round);
        // Tasks whose terms reference only earlier tasks, so that rewriting
        // (which only keeps or drops references) keeps the graph valid.
        let mut graph = TaskGraph::new();
        graph.insert("a", Term::lit(1)).unwrap();
        graph.insert("b", Term::lit(2)).unwrap();
        for i in 0..3000 {
            graph
                .insert(Key::from(("t", i)), common::random_term(&mut rng, 4))
                .unwrap();
        }
        check_same(&graph, &rules, RewriteStrategy::BottomUp);
        check_same(&graph, &rules, RewriteStrategy::Fixpoint { max_steps: 10 });
    }
}

#[test]
fn same_error_for_the_first_bad_task() {
    // Two bad tasks in different chunks; both paths name the first.
    let rules = rules(&[("bad(?x)", "use(?x, nowhere)")]);
    let mut graph = TaskGraph::new();
    for i in 0..5000 {
        let term = if i == 1500 || i == 4000 {
            Term::call("bad", [Term::lit(i)])
        } else {
            Term::call("inc", [Term::lit(i)])
        };
        graph.insert(Key::from(("t", i)), term).unwrap();
    }
    let sequential = rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp).unwrap_err();
    let parallel = par_rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp).unwrap_err();
    assert_eq!(
        sequential.to_string(),
        "task ('t', 1500): rewritten term refers to missing key 'nowhere'"
    );
    assert_eq!(parallel.to_string(), sequential.to_string());
}
