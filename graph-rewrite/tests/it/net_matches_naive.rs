//! Property: the discrimination net finds exactly the matches, in the order,
//! that trying each rule on its own finds, and bottom-up rewriting gives what
//! dask's recursion gives written plainly. Seeded random rules and terms.

use crate::common;
use crate::common::{naive_bottom_up, naive_matches, random_rules, random_term};
use graph_core::generate::Rng;
use graph_rewrite::RewriteStrategy;

#[test]
fn matches_equal_naive_matches() {
    let mut rng = Rng::new(1);
    let mut matched = 0;
    for round in 0..200 {
        let rules = random_rules(&mut rng, 1 + round % 20);
        for _ in 0..50 {
            let term = random_term(&mut rng, 4);
            let found: Vec<usize> = rules.matches(&term).iter().map(|m| m.rule).collect();
            assert_eq!(
                found,
                naive_matches(&rules, &term),
                "term {term}\n{}",
                rules.display_net()
            );
            matched += usize::from(!found.is_empty());
        }
    }
    // The alphabet is small enough that a good share of terms match.
    assert!(matched > 1000, "only {matched} terms matched");
}

#[test]
fn bottom_up_equals_plain_recursion() {
    let mut rng = Rng::new(2);
    let mut changed = 0;
    for round in 0..200 {
        let rules = random_rules(&mut rng, 1 + round % 10);
        for _ in 0..50 {
            let term = random_term(&mut rng, 5);
            let rewritten = rules.rewrite(&term, RewriteStrategy::BottomUp);
            assert_eq!(rewritten, naive_bottom_up(&rules, &term), "term {term}");
            changed += usize::from(rewritten != term);
        }
    }
    assert!(changed > 1000, "only {changed} terms changed");
}

#[test]
fn top_level_rewrites_only_the_root() {
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let rules = random_rules(&mut rng, 8);
        let term = random_term(&mut rng, 4);
        let expected = match naive_matches(&rules, &term).first() {
            Some(&index) => {
                let rule = &rules.rules()[index];
                let mut bound = Vec::new();
                assert!(common::naive_match(rule.lhs(), &term, &mut bound));
                rule.apply(&bound.into_iter().collect()).unwrap()
            }
            None => term.clone(),
        };
        assert_eq!(rules.rewrite(&term, RewriteStrategy::TopLevel), expected);
    }
}
