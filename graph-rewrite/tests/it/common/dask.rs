//! The rules of dask's `test_rewrite.py`, shared by the tests that port it.

use graph_core::Term;
use graph_rewrite::{Pattern, RewriteRule, RuleSet};

use super::{pattern, rule};

/// `rule1` .. `rule6` of dask's tests, in order.
pub fn dask_rules() -> Vec<RewriteRule> {
    vec![
        // add(a, 1) -> inc(a)
        rule("add(?a, 1)", "inc(?a)"),
        // add(a, a) -> double(a)
        rule("add(?a, ?a)", "double(?a)"),
        // add(inc(a), inc(a)) -> add(double(a), 2)
        rule("add(inc(?a), inc(?a))", "add(double(?a), 2)"),
        // add(inc(b), inc(a)) -> add(add(a, b), 2)
        rule("add(inc(?b), inc(?a))", "add(add(?a, ?b), 2)"),
        // sum([c, b, a]) -> add(add(a, b), c)
        rule("sum([?c, ?b, ?a])", "add(add(?a, ?b), ?c)"),
        // list(x) -> x if x is a list, else list(x)
        RewriteRule::with_fn(pattern("list(?x)"), |bindings| {
            let x = bindings.get("x")?;
            Some(match x {
                Term::List(_) => x.clone(),
                other => Term::call("list", [other.clone()]),
            })
        }),
    ]
}

/// dask's `rs = RuleSet(*rules)`.
pub fn dask_rule_set() -> RuleSet {
    RuleSet::new(dask_rules())
}

/// The variable `a`, for building patterns by hand.
pub fn a() -> Pattern {
    Pattern::var("a")
}
