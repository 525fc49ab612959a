//! dask's `test_rewrite` and the examples of dask's rewrite documentation and
//! docstrings, as data: a rule set, a term, a strategy, the result.

use crate::common::dask::dask_rule_set;
use crate::common::{rules, term};
use expect_test::{Expect, expect};
use graph_core::{Key, TaskGraph};
use graph_rewrite::{RewriteStrategy, RuleSet, rewrite_graph};

fn check(rules: &RuleSet, text: &str, strategy: RewriteStrategy, expected: Expect) {
    expected.assert_eq(&rules.rewrite(&term(text), strategy).to_string());
}

#[test]
fn rewrite_inside_a_list() {
    let rs = dask_rule_set();
    check(
        &rs,
        "sum([add(1, 1), add(1, 1), add(1, 1)])",
        RewriteStrategy::BottomUp,
        expect!["add(add(inc(1), inc(1)), inc(1))"],
    );
    // Rules are not applied to exhaustion: a second pass simplifies further.
    check(
        &rs,
        "add(add(inc(1), inc(1)), inc(1))",
        RewriteStrategy::BottomUp,
        expect!["add(add(double(1), 2), inc(1))"],
    );
}

#[test]
fn nested_adds() {
    check(
        &dask_rule_set(),
        "add(add(add(add(1, 2), add(1, 2)), add(add(1, 2), add(1, 2))), 1)",
        RewriteStrategy::BottomUp,
        expect!["inc(double(double(add(1, 2))))"],
    );
}

#[test]
fn callable_rhs() {
    let rs = dask_rule_set();
    check(
        &rs,
        "list([1, 2, 3])",
        RewriteStrategy::BottomUp,
        expect!["[1, 2, 3]"],
    );
    check(
        &rs,
        "list(map(inc, [1, 2, 3]))",
        RewriteStrategy::BottomUp,
        expect!["list(map(inc, [1, 2, 3]))"],
    );
}

/// `a + a -> 2*a` and `a * a -> a**2`, from dask's optimization docs.
fn doc_rules() -> RuleSet {
    rules(&[("add(?a, ?a)", "mul(?a, 2)"), ("mul(?a, ?a)", "pow(?a, 2)")])
}

#[test]
fn documentation_examples() {
    let rs = doc_rules();
    check(
        &rs,
        "add(5, 5)",
        RewriteStrategy::BottomUp,
        expect!["mul(5, 2)"],
    );
    check(
        &rs,
        "mul(5, 5)",
        RewriteStrategy::BottomUp,
        expect!["pow(5, 2)"],
    );
    check(
        &rs,
        "mul(add(3, 3), add(3, 3))",
        RewriteStrategy::BottomUp,
        expect!["pow(mul(3, 2), 2)"],
    );
}

#[test]
fn whole_task_against_top_level() {
    let rs = doc_rules();
    let text = "sum([add(3, 3), mul(3, 3)])";
    check(
        &rs,
        text,
        RewriteStrategy::BottomUp,
        expect!["sum([mul(3, 2), pow(3, 2)])"],
    );
    check(
        &rs,
        text,
        RewriteStrategy::TopLevel,
        expect!["sum([add(3, 3), mul(3, 3)])"],
    );
    assert_eq!(RewriteStrategy::default(), RewriteStrategy::BottomUp);
}

#[test]
fn docstring_examples() {
    // RewriteRule.rhs docs: add(x, x) -> double(x), whole task and top level.
    let rs = rules(&[("add(?x, ?x)", "double(?x)")]);
    let text = "add(add(2, 2), add(2, 2))";
    check(
        &rs,
        text,
        RewriteStrategy::BottomUp,
        expect!["double(double(2))"],
    );
    check(
        &rs,
        text,
        RewriteStrategy::TopLevel,
        expect!["double(add(2, 2))"],
    );

    // RewriteRule docs: list(list(x)) -> list(x).
    let rs = rules(&[("list(list(?x))", "list(?x)")]);
    check(
        &rs,
        "list(list(x))",
        RewriteStrategy::BottomUp,
        expect!["list(x)"],
    );

    // RuleSet docs: add(x, 0) -> x, and f(g(x), y) -> h(x, y), applied to
    // each task of a graph as dask's `valmap(rs.rewrite, dsk)`.
    let rs = rules(&[("add(?x, 0)", "?x"), ("f(g(?x), ?y)", "h(?x, ?y)")]);
    check(&rs, "add(2, 0)", RewriteStrategy::BottomUp, expect!["2"]);
    check(
        &rs,
        "f(g(a), 3)",
        RewriteStrategy::BottomUp,
        expect!["h(a, 3)"],
    );
    let graph = TaskGraph::builder()
        .task("a", term("add(2, 0)"))
        .task("b", term("f(g(a), 3)"))
        .build()
        .unwrap();
    let (graph, report) = rewrite_graph(&graph, &rs, RewriteStrategy::BottomUp).unwrap();
    assert_eq!(report.changed, 2);
    let body = |key: &str| {
        graph
            .get(&Key::from(key))
            .unwrap()
            .body
            .term()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        (body("a"), body("b")),
        ("2".to_owned(), "h(a, 3)".to_owned())
    );
}
