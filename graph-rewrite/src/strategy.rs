//! Strategies: where in a term rules are tried and how often, and why a
//! strategy stopped.

use std::fmt;

use graph_core::MAX_NESTING;
use graph_core::Term;

use crate::RuleSet;
use crate::net::Matcher;

/// Where in a term the rules of a [`RuleSet`] are applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RewriteStrategy {
    /// Children first, then the node with its rewritten children, one rewrite
    /// per node; what a rewrite produces is not rewritten again. dask's
    /// default `strategy="bottom_up"`, with the same results.
    #[default]
    BottomUp,
    /// One rewrite of the whole term, none of its subterms: dask's
    /// `strategy="top_level"`.
    TopLevel,
    /// [`RewriteStrategy::BottomUp`] passes, repeated until a pass rewrites nothing
    /// ([`StopReason::Saturated`]) or `max_steps` rewrites have been made
    /// ([`StopReason::StepLimit`]). Not in dask, which leaves it to the caller
    /// to call `rewrite` again. A rule whose replacement equals what it
    /// matched still counts as applying, so it runs to the step limit; a
    /// function right-hand side should return `None` instead.
    Fixpoint {
        /// The most rewrites (rule applications) to make in one term.
        max_steps: usize,
    },
}

impl RewriteStrategy {
    /// The step limit of `taskgraph rewrite --strategy fixpoint` when none is
    /// given.
    pub const DEFAULT_MAX_STEPS: usize = 1000;
}

/// Why [`RewriteStrategy::Fixpoint`] stopped (egg's `StopReason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// No rule applies anywhere in the result.
    Saturated,
    /// The step limit (carried here) was reached while some rule still
    /// applied somewhere.
    StepLimit(usize),
    /// The term grew to nest deeper than
    /// [`graph_core::json::MAX_NESTING`] levels (carried here): what no
    /// command could write, read back or run.
    TooDeep(usize),
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StopReason::Saturated => f.write_str("saturated"),
            StopReason::StepLimit(limit) => write!(f, "step limit of {limit} reached"),
            StopReason::TooDeep(levels) => write!(f, "the term grew {levels} levels deep"),
        }
    }
}

/// The result of rewriting one term, with how it went.
#[derive(Clone, Debug, PartialEq)]
pub struct Rewritten {
    /// The rewritten term.
    pub term: Term,
    /// How many rewrites were made.
    pub steps: usize,
    /// Why the strategy stopped: `Some` for [`RewriteStrategy::Fixpoint`], `None` for
    /// the one-pass strategies.
    pub stop: Option<StopReason>,
}

/// A rewrite of one term, before it is turned into a [`Rewritten`]: `term` is
/// `None` when no rule applied anywhere.
pub(crate) struct Run {
    pub(crate) term: Option<Term>,
    pub(crate) steps: usize,
    pub(crate) stop: Option<StopReason>,
}

impl RuleSet {
    /// Rewrites `term` with `strategy` (dask's `RuleSet.rewrite`).
    ///
    /// Matches the semantics of dask's `rewrite(task, strategy)` for
    /// [`RewriteStrategy::BottomUp`] (children first, then the node once, with the
    /// most specific match that applies) and [`RewriteStrategy::TopLevel`];
    /// [`RewriteStrategy::Fixpoint`] is new. Matching itself differs from dask where
    /// the [`RuleSet`] docs say, and template variables are substituted all at
    /// once (see [`RewriteRule::apply`](crate::RewriteRule::apply)).
    ///
    /// # Arguments
    ///
    /// - `term`: the term to rewrite; it is not changed.
    /// - `strategy`: where and how often to apply the rules.
    ///
    /// # Returns
    ///
    /// The rewritten term (equal to `term` if no rule applied).
    ///
    /// # Errors
    ///
    /// None: a term always rewrites to a term.
    ///
    /// # Complexity
    ///
    /// [`RewriteStrategy::BottomUp`]: O(n) matching attempts for a term of `n`
    /// nodes, each costing about the size of the part of the subterm the net
    /// looks at (independent of the number of rules with other heads), plus
    /// the size of each replacement. [`RewriteStrategy::Fixpoint`] repeats that per
    /// pass. Recursion depth is the term's depth.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::Term;
    /// use graph_rewrite::{Pattern, RewriteRule, RuleSet, RewriteStrategy};
    ///
    /// // add(x, x) -> double(x)
    /// let x = || Pattern::var("x");
    /// let rules = RuleSet::new([RewriteRule::new(
    ///     Pattern::call("add", [x(), x()]),
    ///     Pattern::call("double", [x()]),
    /// )?]);
    /// let two = || Term::lit(2);
    /// let add22 = || Term::call("add", [two(), two()]);
    /// let term = Term::call("add", [add22(), add22()]);
    /// assert_eq!(rules.rewrite(&term, RewriteStrategy::BottomUp).to_string(), "double(double(2))");
    /// assert_eq!(rules.rewrite(&term, RewriteStrategy::TopLevel).to_string(), "double(add(2, 2))");
    /// # Ok::<(), graph_rewrite::Error>(())
    /// ```
    pub fn rewrite(&self, term: &Term, strategy: RewriteStrategy) -> Term {
        self.run(term, strategy).term
    }

    /// Rewrites `term` with `strategy`, reporting the number of rewrites and,
    /// for [`RewriteStrategy::Fixpoint`], why it stopped (as egg's `Runner` reports
    /// its `stop_reason`). dask has no counterpart beyond [`RuleSet::rewrite`].
    ///
    /// # Arguments
    ///
    /// As [`RuleSet::rewrite`].
    ///
    /// # Returns
    ///
    /// A [`Rewritten`]: the term, the number of rewrites, and for
    /// [`RewriteStrategy::Fixpoint`] either [`StopReason::Saturated`] (no rule applies
    /// anywhere in the result) or [`StopReason::StepLimit`] (`max_steps`
    /// rewrites were made and some rule still applies).
    ///
    /// # Errors
    ///
    /// None.
    ///
    /// # Complexity
    ///
    /// As [`RuleSet::rewrite`], per bottom-up pass; a fixpoint run makes at
    /// most `max_steps + 1` passes, plus one search for a remaining match
    /// when it stops at the limit.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::Term;
    /// use graph_rewrite::{Pattern, RewriteRule, RuleSet, StopReason, RewriteStrategy};
    ///
    /// // inc(inc(x)) -> add(x, 2);  add(add(x, 2), 2) -> add(x, 4)
    /// let x = || Pattern::var("x");
    /// let inc = |p| Pattern::call("inc", [p]);
    /// let add = |p, n: i64| Pattern::call("add", [p, Pattern::lit(n)]);
    /// let rules = RuleSet::new([
    ///     RewriteRule::new(inc(inc(x())), add(x(), 2))?,
    ///     RewriteRule::new(add(add(x(), 2), 2), add(x(), 4))?,
    /// ]);
    /// let mut term = Term::key("a");
    /// for _ in 0..4 {
    ///     term = Term::call("inc", [term]);
    /// }
    /// let outcome = rules.run(&term, RewriteStrategy::Fixpoint { max_steps: 10 });
    /// assert_eq!(outcome.term.to_string(), "add(a, 4)");
    /// assert_eq!((outcome.steps, outcome.stop), (3, Some(StopReason::Saturated)));
    /// let outcome = rules.run(&term, RewriteStrategy::Fixpoint { max_steps: 2 });
    /// assert_eq!(outcome.stop, Some(StopReason::StepLimit(2)));
    /// # Ok::<(), graph_rewrite::Error>(())
    /// ```
    pub fn run(&self, term: &Term, strategy: RewriteStrategy) -> Rewritten {
        let run = self.run_with(term, strategy, &mut Matcher::default());
        Rewritten {
            term: run.term.unwrap_or_else(|| term.clone()),
            steps: run.steps,
            stop: run.stop,
        }
    }

    /// Whether some rule applies to `term` or to one of its subterms.
    ///
    /// **Complexity**: O(n) matching attempts for a term of `n` nodes.
    pub fn applies_anywhere(&self, term: &Term) -> bool {
        self.applies_anywhere_with(term, &mut Matcher::default())
    }

    pub(crate) fn run_with(
        &self,
        term: &Term,
        strategy: RewriteStrategy,
        matcher: &mut Matcher,
    ) -> Run {
        match strategy {
            RewriteStrategy::TopLevel => {
                let term = self.rewrite_once(term, matcher);
                Run {
                    steps: usize::from(term.is_some()),
                    term,
                    stop: None,
                }
            }
            RewriteStrategy::BottomUp => {
                let mut budget = usize::MAX;
                let term = self.bottom_up(term, matcher, &mut budget);
                Run {
                    term,
                    steps: usize::MAX - budget,
                    stop: None,
                }
            }
            RewriteStrategy::Fixpoint { max_steps } => self.fixpoint(term, matcher, max_steps),
        }
    }

    fn fixpoint(&self, term: &Term, matcher: &mut Matcher, max_steps: usize) -> Run {
        let mut current: Option<Term> = None;
        let mut budget = max_steps;
        let stop = loop {
            let source = current.as_ref().unwrap_or(term);
            if budget == 0 {
                break if self.applies_anywhere_with(source, matcher) {
                    StopReason::StepLimit(max_steps)
                } else {
                    StopReason::Saturated
                };
            }
            let before = budget;
            match self.bottom_up(source, matcher, &mut budget) {
                Some(next) => {
                    // A rule that grows terms stops here, before the next
                    // pass walks a term deeper than anything may nest.
                    let levels = next.levels();
                    current = Some(next);
                    if levels > MAX_NESTING {
                        break StopReason::TooDeep(levels);
                    }
                }
                // A pass that rewrote nothing tried every node as it stands.
                None if budget == before => break StopReason::Saturated,
                None => {}
            }
        };
        Run {
            term: current,
            steps: max_steps - budget,
            stop: Some(stop),
        }
    }

    /// One bottom-up pass; `None` if no rule applied anywhere. Each rewrite
    /// takes one from `budget`; at zero, the rest of the term is left alone.
    fn bottom_up(&self, term: &Term, matcher: &mut Matcher, budget: &mut usize) -> Option<Term> {
        if *budget == 0 {
            return None;
        }
        // Terms nest up to MAX_NESTING levels: the stack grows where they
        // need it.
        let rebuilt = stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || match term {
            Term::Call { op, args } => {
                self.bottom_up_items(args, matcher, budget)
                    .map(|args| Term::Call {
                        op: op.clone(),
                        args,
                    })
            }
            Term::List(items) => self.bottom_up_items(items, matcher, budget).map(Term::List),
            Term::Lit(_) | Term::Ref(_) => None,
        });
        if *budget == 0 {
            return rebuilt;
        }
        let source = rebuilt.as_ref().unwrap_or(term);
        match self.rewrite_once(source, matcher) {
            Some(result) => {
                *budget -= 1;
                Some(result)
            }
            None => rebuilt,
        }
    }

    /// Rewrites each item; `None` if none changed, else all of them, the
    /// unchanged ones cloned.
    fn bottom_up_items(
        &self,
        items: &[Term],
        matcher: &mut Matcher,
        budget: &mut usize,
    ) -> Option<Vec<Term>> {
        let mut out: Option<Vec<Term>> = None;
        for (i, item) in items.iter().enumerate() {
            let new = self.bottom_up(item, matcher, budget);
            match (&mut out, new) {
                (Some(out), Some(new)) => out.push(new),
                (Some(out), None) => out.push(item.clone()),
                (None, Some(new)) => {
                    let mut all = Vec::with_capacity(items.len());
                    all.extend_from_slice(&items[..i]);
                    all.push(new);
                    out = Some(all);
                }
                (None, None) => {}
            }
        }
        out
    }

    pub(crate) fn applies_anywhere_with(&self, term: &Term, matcher: &mut Matcher) -> bool {
        let mut stack = vec![term];
        while let Some(term) = stack.pop() {
            if self.rewrite_once(term, matcher).is_some() {
                return true;
            }
            if let Term::Call { args: items, .. } | Term::List(items) = term {
                stack.extend(items);
            }
        }
        false
    }
}
