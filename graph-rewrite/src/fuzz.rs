//! The checker behind the `rewrite_fixpoint` fuzz target, so that the target
//! is a short shim and `cargo test` can replay its inputs.
//!
//! An input's first [`RULE_BYTES`] bytes choose a step limit and a few rules
//! from a fixed menu over the ops of `graph_core::testing::arbitrary_graph`
//! (rules that shrink, grow, loop with each other, replace a match by an equal
//! term, decline in a function, or bring in a reference); the rest of the
//! input builds the graph.

use graph_core::{Body, Key, TaskGraph, Term, Value};

use crate::{
    Bindings, Error, Pattern, RewriteReport, RewriteRule, RewriteStrategy, Rewritten, RuleSet,
    StopReason, par_rewrite_graph, par_rewrite_graph_in_place, rewrite_graph,
    rewrite_graph_in_place,
};

/// How many leading bytes of an input choose the step limit and the rules.
pub const RULE_BYTES: usize = 8;

/// The most rules one input picks from the menu.
const MAX_RULES: usize = 6;

/// The largest step limit an input can choose. Every rule of the menu adds at
/// most a few nodes per rewrite, so terms stay small.
const MAX_STEPS: usize = 40;

/// The number of rules on the menu ([`menu_rule`]).
pub const MENU_LEN: usize = 24;

/// `rewrite_fixpoint`: on the rule set and step limit that `rule_bytes`
/// choose ([`rules_from_bytes`]),
///
/// - every task's term under [`RewriteStrategy::Fixpoint`] stops within its limit
///   and tells the truth: when it reports [`StopReason::Saturated`] no rule
///   applies anywhere in the result (checked by a naive matcher, not the
///   net), further bottom-up passes change nothing, and any larger limit
///   gives the same outcome; when it reports [`StopReason::StepLimit`] it made
///   exactly that many rewrites and a rule still applies;
/// - for every strategy, [`rewrite_graph`], [`par_rewrite_graph`] and both
///   in-place variants agree on the graph, the report and the error (an
///   in-place rewrite that fails leaves the graph as it was), and all equal
///   rewriting each task's term on its own.
///
/// # Panics
///
/// When a property does not hold: that is the finding.
pub fn rewrite_fixpoint(graph: &TaskGraph, rule_bytes: &[u8]) {
    let (rules, max_steps) = rules_from_bytes(rule_bytes);
    for (_, task) in graph.iter() {
        if let Body::Term(term) = &task.body {
            check_fixpoint(&rules, term, max_steps);
        }
    }
    for strategy in [
        RewriteStrategy::BottomUp,
        RewriteStrategy::TopLevel,
        RewriteStrategy::Fixpoint { max_steps },
    ] {
        check_graph(graph, &rules, strategy);
    }
}

/// The rule set and step limit that `bytes` choose: byte 0 the limit (0 to
/// 40), byte 1 how many rules (1 to 6), the next bytes which rules of the
/// menu ([`menu_rule`]). Missing bytes count as zeros.
pub fn rules_from_bytes(bytes: &[u8]) -> (RuleSet, usize) {
    let byte = |i: usize| usize::from(bytes.get(i).copied().unwrap_or(0));
    let max_steps = byte(0) % (MAX_STEPS + 1);
    let n_rules = 1 + byte(1) % MAX_RULES;
    let rules = (0..n_rules).map(|i| menu_rule(byte(2 + i) % MENU_LEN));
    (RuleSet::new(rules), max_steps)
}

/// Rule `index` (taken modulo [`MENU_LEN`]) of the menu, over the ops `inc`,
/// `add`, `neg`, `sum` and `max`, lists, small integers and the keys
/// `('f', i)` of `arbitrary_graph`.
pub fn menu_rule(index: usize) -> RewriteRule {
    let x = || Pattern::var("x");
    let y = || Pattern::var("y");
    let call1 = |op: &str, arg: Pattern| Pattern::call(op, [arg]);
    let call2 = |op: &str, a: Pattern, b: Pattern| Pattern::call(op, [a, b]);
    let lit = |n: i64| Pattern::lit(n);
    let template = |lhs: Pattern, rhs: Pattern| {
        RewriteRule::new(lhs, rhs).expect("every menu template binds its variables")
    };
    match index % MENU_LEN {
        // inc(x) -> add(x, 1) and back: a loop between two rules.
        0 => template(call1("inc", x()), call2("add", x(), lit(1))),
        1 => template(call2("add", x(), lit(1)), call1("inc", x())),
        // Shrinking, and growing: the more specific neg(neg(x)) wins.
        2 => template(call1("neg", call1("neg", x())), x()),
        3 => template(call1("neg", x()), call1("neg", call1("neg", x()))),
        // A rule that loops on its own.
        4 => template(call2("add", x(), y()), call2("add", y(), x())),
        // A repeated variable, and a loop through a list.
        5 => template(
            call2("add", x(), x()),
            call1("sum", Pattern::list([x(), x()])),
        ),
        6 => template(
            call1("sum", Pattern::list([x(), y()])),
            call2("add", x(), y()),
        ),
        7 => template(call1("max", Pattern::list([x()])), x()),
        8 => template(call1("inc", x()), call1("inc", call1("inc", x()))),
        // The replacement equals the match: it applies forever.
        9 => template(call1("max", x()), call1("max", x())),
        10 => template(call2("add", x(), lit(0)), x()),
        // Constant folding, declining unless both sides are integers.
        11 => RewriteRule::with_fn(call2("add", x(), y()), |b: &Bindings<'_>| {
            match (b.get("x")?, b.get("y")?) {
                (Term::Lit(Value::Int(a)), Term::Lit(Value::Int(c))) => {
                    Some(Term::lit(a.checked_add(*c)?))
                }
                _ => None,
            }
        }),
        // A new reference to task ('f', 1): a cycle when it lands in task
        // ('f', 0) and ('f', 1) depends on it, a missing key in a graph of
        // one task. (A reference of a task to itself is no dependency.)
        12 => template(call1("inc", x()), Pattern::key(("f", 1))),
        // A reference to a key no task has.
        13 => template(call1("neg", x()), Pattern::key(("g", 0))),
        14 => template(Pattern::list([x(), y()]), Pattern::list([y(), x()])),
        15 => template(call1("sum", x()), call1("max", x())),
        16 => template(call1("max", x()), call1("sum", x())),
        // Literal left-hand sides, looping.
        17 => template(lit(0), lit(1)),
        18 => template(lit(1), lit(0)),
        // A bare variable matches every subterm.
        19 => template(x(), call1("neg", x())),
        // A function that drops `inc` around a reference only.
        20 => RewriteRule::with_fn(call1("inc", x()), |b: &Bindings<'_>| match b.get("x")? {
            term @ Term::Ref(_) => Some(term.clone()),
            _ => None,
        }),
        21 => template(call1("inc", x()), call1("neg", call1("neg", x()))),
        // A function that gives back what it matched.
        22 => RewriteRule::with_fn(call1("neg", x()), |b: &Bindings<'_>| {
            Some(Term::call("neg", [b.get("x")?.clone()]))
        }),
        // A reference on the left: may point a task at itself, or at a key
        // that a one-task graph lacks.
        _ => template(Pattern::key(("f", 0)), Pattern::key(("f", 1))),
    }
}

/// The fixpoint properties of one term.
fn check_fixpoint(rules: &RuleSet, term: &Term, max_steps: usize) {
    let fixpoint = |max_steps| RewriteStrategy::Fixpoint { max_steps };
    let outcome = rules.run(term, fixpoint(max_steps));
    assert_eq!(
        rules.run(term, fixpoint(max_steps)),
        outcome,
        "Fixpoint is deterministic on {term}"
    );
    assert!(
        outcome.steps <= max_steps,
        "{} steps over the limit of {max_steps} on {term}",
        outcome.steps
    );
    let applies = applies_anywhere_naively(rules, &outcome.term);
    assert_eq!(
        rules.applies_anywhere(&outcome.term),
        applies,
        "the net and the naive matcher disagree on {}",
        outcome.term
    );
    match outcome.stop {
        Some(StopReason::Saturated) => {
            assert!(
                !applies,
                "saturated, yet a rule applies: {term} -> {}",
                outcome.term
            );
            let again = rules.run(&outcome.term, RewriteStrategy::BottomUp);
            assert_eq!(
                (&again.term, again.steps),
                (&outcome.term, 0),
                "a pass after saturation changed {}",
                outcome.term
            );
            for limit in [outcome.steps, outcome.steps + 1, max_steps + 7] {
                assert_eq!(
                    rules.run(term, fixpoint(limit)),
                    outcome,
                    "saturated at {max_steps}, not at {limit}: {term}"
                );
            }
            let (passes_term, passes_steps) = bottom_up_passes(rules, term, max_steps);
            assert_eq!(
                (&passes_term, passes_steps),
                (&outcome.term, outcome.steps),
                "bottom-up passes disagree with Fixpoint on {term}"
            );
        }
        Some(StopReason::StepLimit(limit)) => {
            assert_eq!(limit, max_steps, "the limit reported is not the limit");
            assert_eq!(
                outcome.steps, max_steps,
                "stopped at the limit without reaching it: {term}"
            );
            assert!(
                applies,
                "stopped at the limit, yet no rule applies: {term} -> {}",
                outcome.term
            );
            if let Some(fewer) = max_steps.checked_sub(1) {
                assert_eq!(
                    rules.run(term, fixpoint(fewer)).stop,
                    Some(StopReason::StepLimit(fewer)),
                    "limited at {max_steps} but not at {fewer}: {term}"
                );
            }
        }
        Some(StopReason::TooDeep(levels)) => {
            assert!(
                levels > graph_core::MAX_NESTING && outcome.term.levels() == levels,
                "stopped as too deep at {levels} levels on {term}"
            );
        }
        None => panic!("Fixpoint gave no stop reason on {term}"),
    }
}

/// Bottom-up passes until one rewrites nothing: the term and the number of
/// rewrites. Stops after `max_steps + 1` passes, which is enough for a term
/// that `Fixpoint` saturated within `max_steps` rewrites.
fn bottom_up_passes(rules: &RuleSet, term: &Term, max_steps: usize) -> (Term, usize) {
    let mut current = term.clone();
    let mut steps = 0;
    for _ in 0..=max_steps {
        let pass = rules.run(&current, RewriteStrategy::BottomUp);
        if pass.steps == 0 {
            break;
        }
        steps += pass.steps;
        current = pass.term;
    }
    (current, steps)
}

/// Whether some rule matches some subterm of `term` and gives a replacement,
/// by trying every rule on every subterm with a direct structural match.
fn applies_anywhere_naively(rules: &RuleSet, term: &Term) -> bool {
    let mut stack = vec![term];
    while let Some(term) = stack.pop() {
        for rule in rules.rules() {
            let mut bindings = Bindings::new();
            if matches_naively(rule.lhs(), term, &mut bindings) && rule.apply(&bindings).is_some() {
                return true;
            }
        }
        if let Term::Call { args: items, .. } | Term::List(items) = term {
            stack.extend(items);
        }
    }
    false
}

/// Matches `pattern` against `term` node by node: same op and arity, same
/// list length, equal literals and keys, and a repeated variable bound to
/// equal terms.
fn matches_naively<'a>(pattern: &'a Pattern, term: &'a Term, bindings: &mut Bindings<'a>) -> bool {
    match (pattern, term) {
        (Pattern::Var(name), _) => match bindings.get(name) {
            Some(bound) => bound == term,
            None => {
                bindings.insert(name, term);
                true
            }
        },
        (Pattern::Lit(want), Term::Lit(got)) => want == got,
        (Pattern::Ref(want), Term::Ref(got)) => want == got,
        (
            Pattern::Call { op, args },
            Term::Call {
                op: term_op,
                args: term_args,
            },
        ) => op == term_op && all_match(args, term_args, bindings),
        (Pattern::List(items), Term::List(term_items)) => all_match(items, term_items, bindings),
        _ => false,
    }
}

fn all_match<'a>(patterns: &'a [Pattern], terms: &'a [Term], bindings: &mut Bindings<'a>) -> bool {
    patterns.len() == terms.len()
        && patterns
            .iter()
            .zip(terms)
            .all(|(pattern, term)| matches_naively(pattern, term, bindings))
}

/// The graph-level properties for one strategy.
fn check_graph(graph: &TaskGraph, rules: &RuleSet, strategy: RewriteStrategy) {
    let sequential = rewrite_graph(graph, rules, strategy);
    let parallel = par_rewrite_graph(graph, rules, strategy);
    match (&sequential, &parallel) {
        (Ok((seq_graph, seq_report)), Ok((par_graph, par_report))) => {
            assert_eq!(seq_report, par_report, "{strategy:?}: reports differ");
            assert!(seq_graph == par_graph, "{strategy:?}: graphs differ");
        }
        (Err(seq_err), Err(par_err)) => assert_eq!(
            seq_err.to_string(),
            par_err.to_string(),
            "{strategy:?}: errors differ"
        ),
        (seq, par) => panic!("{strategy:?}: sequential gave {seq:?}, parallel {par:?}"),
    }
    for in_place in [rewrite_graph_in_place, par_rewrite_graph_in_place] {
        let mut copy = graph.clone();
        match (&sequential, in_place(&mut copy, rules, strategy)) {
            (Ok((seq_graph, seq_report)), Ok(report)) => {
                assert_eq!(*seq_report, report, "{strategy:?}: in-place report differs");
                assert!(*seq_graph == copy, "{strategy:?}: in-place graph differs");
            }
            (Err(seq_err), Err(err)) => {
                assert_eq!(seq_err.to_string(), err.to_string());
                assert!(
                    copy == *graph,
                    "{strategy:?}: a failed rewrite changed the graph"
                );
            }
            (seq, got) => panic!("{strategy:?}: copying gave {seq:?}, in place {got:?}"),
        }
    }
    let expected = task_by_task(graph, rules, strategy);
    match (sequential, expected) {
        (Ok((got, got_report)), Expected::Graph(want, want_report)) => {
            assert_eq!(got_report, want_report, "{strategy:?}: report");
            assert!(got == want, "{strategy:?}: not each task's own rewrite");
            assert!(got.topology().is_ok(), "{strategy:?}: result is not a DAG");
        }
        (Err(Error::MissingKey { key, missing }), Expected::Missing(want_key, want_missing)) => {
            assert_eq!((key, missing), (want_key, want_missing), "{strategy:?}");
        }
        (Err(Error::Graph(_)), Expected::Cycle) => {}
        (got, want) => panic!("{strategy:?}: got {got:?}, expected {want:?}"),
    }
}

/// What rewriting a graph should give, worked out one task at a time.
#[derive(Debug)]
enum Expected {
    Graph(TaskGraph, RewriteReport),
    /// The first task, in node order, whose new term names a missing key.
    Missing(Key, Key),
    Cycle,
}

fn task_by_task(graph: &TaskGraph, rules: &RuleSet, strategy: RewriteStrategy) -> Expected {
    let mut out = graph.clone();
    let mut report = RewriteReport::default();
    let mut missing = None;
    for (index, (key, task)) in graph.iter().enumerate() {
        let Body::Term(term) = &task.body else {
            continue;
        };
        report.tasks += 1;
        let Rewritten {
            term: new,
            steps,
            stop,
        } = rules.run(term, strategy);
        report.steps += steps;
        report.step_limited += usize::from(matches!(stop, Some(StopReason::StepLimit(_))));
        if new == *term {
            continue;
        }
        report.changed += 1;
        if missing.is_none() {
            new.for_each_ref(&mut |name| {
                if missing.is_none() && graph.node_id(name).is_none() {
                    missing = Some((key.clone(), name.clone()));
                }
            });
        }
        out.task_mut(graph_core::NodeId::new(index)).body = Body::Term(new);
    }
    if let RewriteStrategy::Fixpoint { max_steps } = strategy {
        report.stop = Some(if report.step_limited == 0 {
            StopReason::Saturated
        } else {
            StopReason::StepLimit(max_steps)
        });
    }
    match missing {
        Some((key, missing)) => Expected::Missing(key, missing),
        None if out.topology().is_err() => Expected::Cycle,
        None => Expected::Graph(out, report),
    }
}

/// `rewrite_rules_file`: any bytes are read as a rules file or refused with
/// a one-line error; never a panic. A rules file read has one rule for each
/// entry of its `"rules"` array, and reading it again gives the same rules.
pub fn rules_file(data: &[u8]) {
    match crate::rules_file::from_slice(data) {
        Ok(rules) => {
            let document: serde_json::Value =
                serde_json::from_slice(data).expect("a rules file read is JSON");
            let entries = document["rules"].as_array().map_or(0, Vec::len);
            assert_eq!(rules.len(), entries, "a rule lost or made up");
            let again = crate::rules_file::from_slice(data).expect("reads again");
            let shown = |set: &RuleSet| -> Vec<String> {
                set.rules().iter().map(ToString::to_string).collect()
            };
            assert_eq!(shown(&rules), shown(&again), "a second reading differs");
        }
        Err(error) => {
            let message = error.to_string();
            assert!(
                !message.is_empty() && !message.contains('\n'),
                "not one line: {message:?}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_menu_rule_is_made() {
        for index in 0..MENU_LEN {
            let rule = menu_rule(index);
            assert!(!rule.to_string().is_empty());
        }
    }

    #[test]
    fn bytes_choose_limit_and_rules() {
        let (rules, max_steps) = rules_from_bytes(&[45, 2, 0, 1, 2]);
        assert_eq!(max_steps, 4);
        let shown: Vec<String> = rules.rules().iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "inc(?x) -> add(?x, 1)",
                "add(?x, 1) -> inc(?x)",
                "neg(neg(?x)) -> ?x"
            ]
        );
        let (rules, max_steps) = rules_from_bytes(&[]);
        assert_eq!((rules.len(), max_steps), (1, 0));
    }

    #[test]
    fn a_looping_pair_hits_the_limit() {
        let graph = TaskGraph::builder()
            .task(("f", 0), Term::lit(3))
            .task(("f", 1), Term::call("inc", [Term::key(("f", 0))]))
            .build()
            .unwrap();
        rewrite_fixpoint(&graph, &[5, 1, 0, 1]);
        let (rules, _) = rules_from_bytes(&[5, 1, 0, 1]);
        let term = Term::call("inc", [Term::key(("f", 0))]);
        let outcome = rules.run(&term, RewriteStrategy::Fixpoint { max_steps: 5 });
        assert_eq!(outcome.stop, Some(StopReason::StepLimit(5)));
    }

    #[test]
    fn new_references_can_close_a_cycle_or_miss() {
        let graph = TaskGraph::builder()
            .task(("f", 0), Term::call("inc", [Term::lit(1)]))
            .task(("f", 1), Term::call("neg", [Term::key(("f", 0))]))
            .build()
            .unwrap();
        for rules in [[3, 0, 12], [3, 0, 13]] {
            rewrite_fixpoint(&graph, &rules);
        }
        let (rules, _) = rules_from_bytes(&[3, 0, 12]);
        let err = rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp).unwrap_err();
        assert!(matches!(err, Error::Graph(_)), "{err}");
        let (rules, _) = rules_from_bytes(&[3, 0, 13]);
        let err = rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp).unwrap_err();
        assert_eq!(
            err.to_string(),
            "task ('f', 1): rewritten term refers to missing key ('g', 0)"
        );
    }
}
