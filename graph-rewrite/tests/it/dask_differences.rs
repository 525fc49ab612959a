//! Where matching deliberately differs from dask's: arity counts, a short term
//! is no match rather than a crash, a list is not a call to `list`, literals
//! match by kind as well as value.

use crate::common;
use crate::common::{rules, term};
use expect_test::{Expect, expect};
use graph_rewrite::{RewriteStrategy, RuleSet};

fn check(rules: &RuleSet, text: &str, expected: Expect) {
    let term = term(text);
    let found: Vec<String> = rules
        .matches(&term)
        .iter()
        .map(|m| format!("rule{} {}", m.rule, m.bindings))
        .collect();
    let rewritten = rules.rewrite(&term, RewriteStrategy::BottomUp);
    expected.assert_eq(&format!("[{}] -> {rewritten}", found.join(", ")));
}

#[test]
fn arity_is_part_of_the_head() {
    // dask matches f(g(x), y) against f(g(a, 3)), binding x = a and y = 3.
    let rs = rules(&[("f(g(?x), ?y)", "h(?x, ?y)")]);
    check(&rs, "f(g(a, 3))", expect!["[] -> f(g(a, 3))"]);
    check(
        &rs,
        "f(g(a), 3)",
        expect!["[rule0 {x: a, y: 3}] -> h(a, 3)"],
    );
}

#[test]
fn short_term_does_not_match() {
    // dask raises IndexError matching add(1) against add(x, y).
    let rs = rules(&[("add(?x, ?y)", "sum([?x, ?y])")]);
    check(&rs, "add(1)", expect!["[] -> add(1)"]);
    check(&rs, "add()", expect!["[] -> add()"]);
    check(&rs, "add(1, 2, 3)", expect!["[] -> add(1, 2, 3)"]);
}

#[test]
fn list_is_not_a_call_to_list() {
    // dask's head of [c, b, a] is `list`, so a call list(1, 2, 3) matches a
    // list pattern and a literal list matches a call pattern.
    let rs = rules(&[
        ("sum([?c, ?b, ?a])", "add(?a, ?b, ?c)"),
        ("count(list(?x))", "one(?x)"),
    ]);
    check(
        &rs,
        "sum(list(1, 2, 3))",
        expect!["[] -> sum(list(1, 2, 3))"],
    );
    check(
        &rs,
        "sum([1, 2, 3])",
        expect!["[rule0 {c: 1, b: 2, a: 3}] -> add(3, 2, 1)"],
    );
    check(&rs, "count([1])", expect!["[] -> count([1])"]);
    check(&rs, "count(list(1))", expect!["[rule1 {x: 1}] -> one(1)"]);
}

#[test]
fn literals_match_by_kind_and_value() {
    // Python's 1 == 1.0 == True lets dask match all three against 1.
    let rs = rules(&[("add(?x, 1)", "inc(?x)")]);
    check(&rs, "add(a, 1)", expect!["[rule0 {x: a}] -> inc(a)"]);
    check(&rs, "add(a, 1.0)", expect!["[] -> add(a, 1.0)"]);
    check(&rs, "add(a, True)", expect!["[] -> add(a, True)"]);
    // A string literal is not a reference to the task of that name.
    let rs = rules(&[("f('a')", "1"), ("f(a)", "2")]);
    check(&rs, "f('a')", expect!["[rule0 {}] -> 1"]);
    check(&rs, "f(a)", expect!["[rule1 {}] -> 2"]);
}

#[test]
fn guard_declines_and_next_match_applies() {
    // A function right-hand side may decline; the next most specific match
    // is then tried, as when repeated variables disagree.
    let rs = RuleSet::new([
        graph_rewrite::RewriteRule::with_fn(common::pattern("f(?x, 0)"), |_| None),
        common::rule("f(?x, ?y)", "g(?y)"),
    ]);
    check(
        &rs,
        "f(1, 0)",
        expect!["[rule0 {x: 1}, rule1 {x: 1, y: 0}] -> g(0)"],
    );
}
