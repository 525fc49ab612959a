//! dask's `test_RewriteRule` and `test_RewriteRuleSubs`: a rule's variables,
//! and applying a rule to bindings given by hand.

use crate::common;
use crate::common::dask::dask_rules;
use crate::common::term;
use expect_test::expect;
use graph_rewrite::Bindings;

#[test]
fn vars_and_occurrences() {
    let rules = dask_rules();
    let described: Vec<String> = rules[..5]
        .iter()
        .map(|rule| {
            format!(
                "vars {:?} occurrences {:?}",
                rule.vars(),
                rule.lhs().var_occurrences()
            )
        })
        .collect();
    expect![[r#"
        vars ["a"] occurrences ["a"]
        vars ["a"] occurrences ["a", "a"]
        vars ["a"] occurrences ["a", "a"]
        vars ["a", "b"] occurrences ["b", "a"]
        vars ["a", "b", "c"] occurrences ["c", "b", "a"]"#]]
    .assert_eq(&described.join("\n"));
}

#[test]
fn apply_template_and_function() {
    let rules = dask_rules();
    let one = term("1");
    let bindings: Bindings<'_> = [("a", &one)].into_iter().collect();
    assert_eq!(rules[0].apply(&bindings), Some(term("inc(1)")));

    let list = term("[1, 2, 3]");
    let bindings: Bindings<'_> = [("x", &list)].into_iter().collect();
    assert_eq!(rules[5].apply(&bindings), Some(term("[1, 2, 3]")));

    // A template variable without a binding gives no term rather than
    // leaving the variable's name in place as dask would.
    assert_eq!(rules[0].apply(&Bindings::new()), None);
}

#[test]
fn substitution_is_simultaneous() {
    // dask substitutes variable after variable, so a bound term holding
    // another variable's name gets that one substituted too. Here the bound
    // key `y` stays a key.
    let rule = common::rule("f(?x, ?y)", "g(?x, ?y)");
    let (x, y) = (term("y"), term("2"));
    let bindings: Bindings<'_> = [("x", &x), ("y", &y)].into_iter().collect();
    expect!["g(y, 2)"].assert_eq(&rule.apply(&bindings).unwrap().to_string());
}
