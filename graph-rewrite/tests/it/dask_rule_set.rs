//! dask's `test_RuleSet`: the discrimination net that a rule set compiles to.

use crate::common;
use crate::common::dask::{dask_rule_set, dask_rules};
use expect_test::expect;

#[test]
fn net_of_dask_rules() {
    let rules = dask_rule_set();
    // dask's net has one `add` edge; here `add/2` carries the arity, the
    // literal list of `sum` is `list/3`, and the call `list(x)` is `list/1`
    // under its own op rather than sharing dask's `list` head.
    expect![[r#"
        add/2
          inc/1
            ?
              inc/1
                ? => [2, 3]
          ?
            1 => [0]
            ? => [1]
        sum/1
          list/3
            ?
              ?
                ? => [4]
        list/1
          ? => [5]
    "#]]
    .assert_eq(&rules.display_net().to_string());
    let listed: Vec<String> = rules.rules().iter().map(ToString::to_string).collect();
    let expected: Vec<String> = dask_rules().iter().map(ToString::to_string).collect();
    assert_eq!(listed, expected);
    assert_eq!(rules.len(), 6);
}

#[test]
fn empty_rule_set_matches_nothing() {
    let rules = graph_rewrite::RuleSet::new([]);
    assert!(rules.is_empty());
    assert_eq!(rules.display_net().to_string(), "");
    assert!(rules.matches(&common::term("add(1, 1)")).is_empty());
}
