//! Property: under `Fixpoint`, a run that stops `Saturated` leaves no match
//! anywhere in the result, and one that stops at the step limit made exactly
//! that many rewrites and still has a match; a rule that grows terms stops
//! when the term nests past the limit.

use crate::common;
use crate::common::{naive_matches_anywhere, random_rules, random_term, rules, term};
use graph_core::Term;
use graph_core::generate::Rng;
use graph_rewrite::{Pattern, RewriteRule, RewriteStrategy, RuleSet, StopReason};

#[test]
fn saturated_means_no_match_left() {
    let mut rng = Rng::new(11);
    let (mut saturated, mut limited) = (0, 0);
    for round in 0..300 {
        let rules = random_rules(&mut rng, 1 + round % 12);
        for _ in 0..20 {
            let term = random_term(&mut rng, 4);
            let max_steps = rng.below(40);
            let outcome = rules.run(&term, RewriteStrategy::Fixpoint { max_steps });
            assert!(outcome.steps <= max_steps);
            match outcome.stop {
                Some(StopReason::Saturated) => {
                    saturated += 1;
                    assert!(
                        !naive_matches_anywhere(&rules, &outcome.term),
                        "{term} -> {}",
                        outcome.term
                    );
                    assert!(!rules.applies_anywhere(&outcome.term));
                }
                Some(StopReason::StepLimit(limit)) => {
                    limited += 1;
                    assert_eq!((limit, outcome.steps), (max_steps, max_steps));
                    assert!(naive_matches_anywhere(&rules, &outcome.term));
                }
                Some(StopReason::TooDeep(levels)) => {
                    panic!(
                        "terms of depth 4 and rules of small depth cannot grow to {levels} levels in 40 steps"
                    )
                }
                None => panic!("Fixpoint always gives a stop reason"),
            }
        }
    }
    // Both outcomes occur (some random rule sets loop, such as 0 -> 1, 1 -> 0).
    assert!(
        saturated > 100 && limited > 10,
        "{saturated} saturated, {limited} limited"
    );
}

#[test]
fn fixpoint_finishes_what_bottom_up_leaves() {
    let rs = common::dask::dask_rule_set();
    let text = "sum([add(1, 1), add(1, 1), add(1, 1)])";
    let once = rs.run(&term(text), RewriteStrategy::BottomUp);
    assert_eq!(
        (once.term.to_string().as_str(), once.steps, once.stop),
        ("add(add(inc(1), inc(1)), inc(1))", 4, None)
    );
    let all = rs.run(&term(text), RewriteStrategy::Fixpoint { max_steps: 100 });
    assert_eq!(all.term.to_string(), "add(add(double(1), 2), inc(1))");
    assert_eq!((all.steps, all.stop), (5, Some(StopReason::Saturated)));
}

#[test]
fn looping_rules_stop_at_the_limit() {
    let rs = rules(&[("f(?x)", "g(?x)"), ("g(?x)", "f(?x)")]);
    let outcome = rs.run(&term("f(1)"), RewriteStrategy::Fixpoint { max_steps: 7 });
    assert_eq!(outcome.stop, Some(StopReason::StepLimit(7)));
    assert_eq!(
        (outcome.steps, outcome.term.to_string()),
        (7, "g(1)".to_owned())
    );
    // A zero limit rewrites nothing, and still says whether a rule applies.
    let outcome = rs.run(&term("f(1)"), RewriteStrategy::Fixpoint { max_steps: 0 });
    assert_eq!(
        (outcome.steps, outcome.stop),
        (0, Some(StopReason::StepLimit(0)))
    );
    let outcome = rs.run(&term("h(1)"), RewriteStrategy::Fixpoint { max_steps: 0 });
    assert_eq!(outcome.stop, Some(StopReason::Saturated));
    assert_eq!(
        StopReason::StepLimit(7).to_string(),
        "step limit of 7 reached"
    );
}

#[test]
fn a_rule_that_grows_terms_stops_at_the_nesting_limit() {
    // inc(x) -> inc(inc(x)): every pass makes the term one call deeper.
    let x = || Pattern::var("x");
    let rules = RuleSet::new([RewriteRule::new(
        Pattern::call("inc", [x()]),
        Pattern::call("inc", [Pattern::call("inc", [x()])]),
    )
    .unwrap()]);
    let term = Term::call("inc", [Term::key("a")]);
    // On a thread with the default 2 MiB stack.
    let outcome = std::thread::spawn(move || {
        rules.run(&term, RewriteStrategy::Fixpoint { max_steps: 20_000 })
    })
    .join()
    .unwrap();
    assert!(
        matches!(outcome.stop, Some(StopReason::TooDeep(levels)) if levels > graph_core::json::MAX_NESTING),
        "{:?}",
        outcome.stop
    );
}
