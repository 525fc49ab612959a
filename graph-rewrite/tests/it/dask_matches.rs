//! dask's `test_matches`: every rule matching a term, most specific first,
//! with what each variable bound.

use crate::common::dask::dask_rule_set;
use crate::common::term;
use expect_test::{Expect, expect};

fn check(text: &str, expected: Expect) {
    let rules = dask_rule_set();
    let term = term(text);
    let found: Vec<String> = rules
        .matches(&term)
        .iter()
        .map(|m| format!("rule{} {}", m.rule + 1, m.bindings))
        .collect();
    expected.assert_eq(&found.join("\n"));
}

#[test]
fn one_match() {
    check("add(2, 1)", expect!["rule1 {a: 2}"]);
}

#[test]
fn specific_before_general() {
    check(
        "add(1, 1)",
        expect![[r#"
            rule1 {a: 1}
            rule2 {a: 1}"#]],
    );
}

#[test]
fn list_bound_to_a_variable() {
    // dask tests unhashable subterms here; a list is as good as any term.
    check("add([1], [1])", expect!["rule2 {a: [1]}"]);
}

#[test]
fn match_at_depth() {
    check(
        "add(inc(1), inc(1))",
        expect![[r#"
            rule3 {a: 1}
            rule4 {b: 1, a: 1}
            rule2 {a: inc(1)}"#]],
    );
}

#[test]
fn repeated_variable_needs_equal_subterms() {
    check("add(2, 3)", expect![""]);
    check("add(inc(1), inc(2))", expect!["rule4 {b: 1, a: 2}"]);
}
