//! Term rewriting over task graphs in the manner of `dask.rewrite`: rewrite
//! rules compiled into a discrimination net so that matching costs about the
//! size of a term rather than the number of rules, with bottom-up, top-level and
//! fixpoint strategies.
//!
//! - [`Pattern`]: a [`Term`](graph_core::Term) with named variables.
//! - [`RewriteRule`]: `lhs -> rhs`, `rhs` a template [`Pattern`] or a function
//!   of the [`Bindings`] (egg's searcher plus applier; dask's `RewriteRule`).
//! - [`RuleSet`]: rules compiled once into a discrimination net; matches most
//!   specific first, on op *and* arity (dask's `RuleSet`, and where it differs).
//! - [`RewriteStrategy`]: [`BottomUp`](RewriteStrategy::BottomUp) (dask's default),
//!   [`TopLevel`](RewriteStrategy::TopLevel), and [`Fixpoint`](RewriteStrategy::Fixpoint),
//!   which reports a [`StopReason`] as egg's runner does.
//! - [`rewrite_graph`] / [`par_rewrite_graph`]: every task of a
//!   [`TaskGraph`](graph_core::TaskGraph), with a [`RewriteReport`].
//! - [`Head`], [`args`], [`Traverser`]: a term as the preorder of its heads,
//!   which the net is built over (dask's `head`, `args` and `Traverser`).
//! - [`rules_file`]: rules files, `{"rules": [{"lhs": TERM, "rhs": TERM}, ...]}`.
//!
//! # Differences from `dask.rewrite`
//!
//! The one-pass strategies give dask's results wherever dask gives one. On
//! purpose, this crate:
//! - names variables in the pattern ([`Pattern::Var`]) instead of treating any
//!   value listed in `vars` as one, so a key or string named like a variable
//!   stays itself;
//! - matches a call on its op and arity and a list on its length, and tells
//!   the two apart, where dask ignores arity, raises `IndexError` on a term
//!   shorter than a pattern, and lets a list match a call to `list`;
//! - matches literals by kind and value (`1` is not `1.0` or `True`);
//! - substitutes template variables all at once rather than one after
//!   another;
//! - lets a function right-hand side decline a match (`None`), which then
//!   falls through to the next most specific match;
//! - compiles a [`RuleSet`] once (no `add`), and adds [`RewriteStrategy::Fixpoint`]
//!   and graph-level rewriting with reference checks.
//!
//! # Example
//!
//! The rules of dask's documentation, `a + a -> 2 * a` and `a * a -> a ** 2`:
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```

mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
mod graph;
mod head;
mod net;
mod pattern;
mod rule;
pub mod rules_file;
mod strategy;

pub use error::{Error, RulesProblem};
pub use graph::{
    RewriteReport, par_rewrite_graph, par_rewrite_graph_in_place, rewrite_graph,
    rewrite_graph_in_place,
};
pub use head::{Head, Traverser, args};
pub use net::{Match, RuleSet};
pub use pattern::Pattern;
pub use rule::{Bindings, RewriteRule, Rhs, RhsFn};
pub use strategy::{RewriteStrategy, Rewritten, StopReason};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
