//! A rule whose right-hand side uses a variable that its left-hand side does
//! not bind is rejected when the rule or rule set is built, naming the rule
//! and the variable.

use crate::common;
use crate::common::pattern;
use graph_core::generate::Rng;
use graph_rewrite::{Error, Pattern, RewriteRule, RuleSet};

#[test]
fn rule_rejected() {
    let err = RewriteRule::new(pattern("add(?x, 0)"), pattern("mul(?x, ?y)")).unwrap_err();
    assert!(matches!(&err, Error::UnboundVariable { var, .. } if &**var == "y"));
    assert_eq!(
        err.to_string(),
        "variable `y` appears in the right-hand side but not in the left-hand side `add(?x, 0)`"
    );
}

#[test]
fn rule_set_rejected_naming_the_rule() {
    let err = RuleSet::from_pairs([
        (pattern("inc(?x)"), pattern("add(?x, 1)")),
        (pattern("f(?a, [?b])"), pattern("g(?a, ?b, ?c)")),
    ])
    .unwrap_err();
    assert!(matches!(err, Error::InRule { index: 1, .. }));
    assert_eq!(
        err.to_string(),
        "rules[1]: variable `c` appears in the right-hand side but not in the left-hand side `f(?a, [?b])`"
    );
}

#[test]
fn any_rhs_variable_outside_lhs_is_rejected() {
    // Property: for random patterns, building succeeds exactly when every
    // variable of the right-hand side occurs in the left-hand side.
    let mut rng = Rng::new(9);
    let (mut accepted, mut rejected) = (0, 0);
    for _ in 0..2000 {
        let lhs = common::random_pattern(&mut rng, 3);
        let rhs = common::random_pattern(&mut rng, 3);
        let lhs_vars = lhs.var_occurrences();
        let missing = rhs
            .var_occurrences()
            .into_iter()
            .find(|var| !lhs_vars.contains(var))
            .map(str::to_owned);
        match (RewriteRule::new(lhs.clone(), rhs.clone()), missing) {
            (Ok(_), None) => accepted += 1,
            (Err(Error::UnboundVariable { var, .. }), Some(missing)) => {
                assert_eq!(&*var, missing);
                rejected += 1;
            }
            (result, missing) => panic!("{lhs} -> {rhs}: {result:?}, missing {missing:?}"),
        }
    }
    assert!(
        accepted > 100 && rejected > 100,
        "{accepted} accepted, {rejected} rejected"
    );
}

#[test]
fn function_rhs_needs_no_check() {
    let rule = RewriteRule::with_fn(Pattern::var("x"), |_| None);
    assert_eq!(rule.vars(), ["x"]);
    assert_eq!(rule.to_string(), "?x -> <fn>");
}
