//! Rewriting every task of a graph, sequentially or in parallel with rayon.

use std::fmt;

use graph_core::{Body, Key, NodeId, TaskGraph, Term};
use rayon::prelude::*;

use crate::net::Matcher;
use crate::{Error, RewriteStrategy, RuleSet, StopReason};

/// What rewriting a graph did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RewriteReport {
    /// Tasks whose term was examined (every task but the opaque ones).
    pub tasks: usize,
    /// Tasks whose term changed.
    pub changed: usize,
    /// Rewrites made, over all tasks.
    pub steps: usize,
    /// Tasks on which [`RewriteStrategy::Fixpoint`] stopped at its step limit.
    pub step_limited: usize,
    /// For [`RewriteStrategy::Fixpoint`], why it stopped: [`StopReason::Saturated`]
    /// if every task saturated, else the step limit. `None` for the one-pass
    /// strategies.
    pub stop: Option<StopReason>,
}

impl fmt::Display for RewriteReport {
    /// `3 of 10 tasks changed (4 rewrites)`, plus the stop reason if any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} tasks changed ({} rewrites)",
            self.changed, self.tasks, self.steps
        )?;
        match self.stop {
            Some(StopReason::StepLimit(limit)) => write!(
                f,
                "; {} tasks stopped at the step limit of {limit}",
                self.step_limited
            ),
            Some(StopReason::Saturated) => f.write_str("; saturated"),
            // A graph whose task grew too deep is an error, not a report.
            Some(StopReason::TooDeep(_)) | None => Ok(()),
        }
    }
}

/// A task's new term, and what rewriting it cost.
struct Change {
    node: NodeId,
    /// `None` when rules applied but gave back an equal term.
    term: Option<Term>,
    steps: usize,
    step_limited: bool,
    /// Whether the new term references a key the old one did not.
    gained_ref: bool,
}

/// Tasks per unit of parallel work.
const CHUNK: usize = 1024;

/// Rewrites the term of every task of `graph` with `strategy`, one task after
/// another.
///
/// dask has no graph-level function; this is `valmap(rules.rewrite, dsk)`
/// from dask's `RuleSet` docs, plus checks. Opaque tasks are left alone.
/// [`par_rewrite_graph`] gives the same result on all cores.
///
/// # Arguments
///
/// - `graph`: the graph; it is not changed.
/// - `rules`: the compiled rules.
/// - `strategy`: how to apply them to each task's term.
///
/// # Returns
///
/// The rewritten graph (same keys, order and metadata) and a
/// [`RewriteReport`]. Its topology is derived anew on demand, so dependencies
/// that a rewrite added or removed are reflected.
///
/// # Errors
///
/// [`Error::MissingKey`] naming the first task (in node order) whose new term
/// references a key that no task has, and [`Error::Graph`] around
/// `graph_core::Error::Cycle` if new references close a cycle.
///
/// # Complexity
///
/// O(V + total term size) matching attempts, each independent of the number
/// of rules with other heads; plus O(V + E) to check the topology when a
/// rewrite added a reference. O(V + total term size) space for the copy,
/// which is made sequentially (the rewriting itself is what
/// [`par_rewrite_graph`] spreads over cores).
///
/// # Example
///
/// ```
/// use graph_core::{Dag, Key, TaskGraph, Term};
/// use graph_rewrite::{rewrite_graph, Pattern, RewriteRule, RuleSet, RewriteStrategy};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("add", [Term::key("x"), Term::lit(0)]))
///     .build()?;
/// let x = || Pattern::var("x");
/// let rules = RuleSet::new([RewriteRule::new(Pattern::call("add", [x(), Pattern::lit(0)]), x())?]);
/// let (rewritten, report) = rewrite_graph(&graph, &rules, RewriteStrategy::BottomUp)?;
/// assert_eq!(report.changed, 1);
/// let y = rewritten.get(&Key::from("y")).unwrap();
/// assert_eq!(y.body.term(), Some(&Term::key("x")));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rewrite_graph(
    graph: &TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
) -> Result<(TaskGraph, RewriteReport), Error> {
    copy_rewritten(graph, rules, strategy, false)
}

/// [`rewrite_graph`] on all cores with rayon: the same result and the same
/// error.
///
/// # Errors
///
/// As [`rewrite_graph`]; of several bad tasks, the first in node order is
/// reported.
pub fn par_rewrite_graph(
    graph: &TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
) -> Result<(TaskGraph, RewriteReport), Error> {
    copy_rewritten(graph, rules, strategy, true)
}

/// [`rewrite_graph`] in place, without copying the graph: the cheapest way to
/// rewrite a graph that is not needed afterwards. On error the graph is left
/// as it was.
///
/// # Errors
///
/// As [`rewrite_graph`].
pub fn rewrite_graph_in_place(
    graph: &mut TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
) -> Result<RewriteReport, Error> {
    rewrite_in_place(graph, rules, strategy, false)
}

/// [`rewrite_graph_in_place`] on all cores with rayon.
///
/// # Errors
///
/// As [`par_rewrite_graph`].
pub fn par_rewrite_graph_in_place(
    graph: &mut TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
) -> Result<RewriteReport, Error> {
    rewrite_in_place(graph, rules, strategy, true)
}

/// Every task's rewrite, in node order, plus what the report needs.
struct Changes {
    n_terms: usize,
    list: Vec<Change>,
    gained_ref: bool,
}

impl Changes {
    fn report(&self, strategy: RewriteStrategy) -> RewriteReport {
        let mut report = RewriteReport {
            tasks: self.n_terms,
            ..RewriteReport::default()
        };
        for change in &self.list {
            report.steps += change.steps;
            report.step_limited += usize::from(change.step_limited);
            report.changed += usize::from(change.term.is_some());
        }
        if let RewriteStrategy::Fixpoint { max_steps } = strategy {
            report.stop = Some(if report.step_limited == 0 {
                StopReason::Saturated
            } else {
                StopReason::StepLimit(max_steps)
            });
        }
        report
    }
}

fn copy_rewritten(
    graph: &TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
    parallel: bool,
) -> Result<(TaskGraph, RewriteReport), Error> {
    let changes = changes(graph, rules, strategy, parallel)?;
    let report = changes.report(strategy);
    // Cloning copies the key index without rehashing a key, which makes it
    // cheaper than building a graph anew, even though the old terms of the
    // rewritten tasks are cloned only to be dropped.
    let mut out = graph.clone();
    let replaced = put_in_place(&mut out, changes.list);
    if changes.gained_ref {
        out.topology().map_err(Error::Graph)?;
    }
    drop_all(replaced, parallel);
    Ok((out, report))
}

fn rewrite_in_place(
    graph: &mut TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
    parallel: bool,
) -> Result<RewriteReport, Error> {
    let changes = changes(graph, rules, strategy, parallel)?;
    let report = changes.report(strategy);
    let replaced = put_in_place(graph, changes.list);
    if changes.gained_ref
        && let Err(err) = graph.topology()
    {
        for (node, old) in replaced {
            graph.task_mut(node).body = old;
        }
        return Err(Error::Graph(err));
    }
    drop_all(replaced, parallel);
    Ok(report)
}

/// Puts the new terms in place; returns the old bodies.
fn put_in_place(graph: &mut TaskGraph, changes: Vec<Change>) -> Vec<(NodeId, Body)> {
    changes
        .into_iter()
        .filter_map(|change| {
            let term = change.term?;
            let body = &mut graph.task_mut(change.node).body;
            Some((change.node, std::mem::replace(body, Body::Term(term))))
        })
        .collect()
}

/// Frees the old bodies, a good share of the work, on all cores if asked.
fn drop_all(replaced: Vec<(NodeId, Body)>, parallel: bool) {
    if parallel {
        replaced.into_par_iter().for_each(drop);
    }
}

/// Every task's rewrite, in node order, checked for missing keys.
fn changes(
    graph: &TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
    parallel: bool,
) -> Result<Changes, Error> {
    let n_tasks = graph.len();
    let chunk = |matcher: &mut Matcher, start: usize| -> Result<(usize, Vec<Change>), Error> {
        let end = (start + CHUNK).min(n_tasks);
        let mut n_terms = 0;
        let mut out = Vec::new();
        for index in start..end {
            let node = NodeId::new(index);
            let Body::Term(term) = &graph.task(node).body else {
                continue;
            };
            n_terms += 1;
            if let Some(change) = rewrite_task(graph, rules, strategy, matcher, node, term)? {
                out.push(change);
            }
        }
        Ok((n_terms, out))
    };
    let starts = (0..n_tasks).step_by(CHUNK);
    let chunks: Vec<Result<(usize, Vec<Change>), Error>> = if parallel {
        starts
            .collect::<Vec<_>>()
            .into_par_iter()
            .map_init(Matcher::default, chunk)
            .collect()
    } else {
        let mut matcher = Matcher::default();
        let mut chunks = Vec::new();
        for start in starts {
            let result = chunk(&mut matcher, start);
            let failed = result.is_err();
            chunks.push(result);
            if failed {
                break;
            }
        }
        chunks
    };
    let mut all = Changes {
        n_terms: 0,
        list: Vec::new(),
        gained_ref: false,
    };
    for chunk in chunks {
        let (count, changes) = chunk?;
        all.n_terms += count;
        all.gained_ref |= changes.iter().any(|change| change.gained_ref);
        all.list.extend(changes);
    }
    Ok(all)
}

fn rewrite_task(
    graph: &TaskGraph,
    rules: &RuleSet,
    strategy: RewriteStrategy,
    matcher: &mut Matcher,
    node: NodeId,
    term: &Term,
) -> Result<Option<Change>, Error> {
    let run = rules.run_with(term, strategy, matcher);
    let step_limited = matches!(run.stop, Some(StopReason::StepLimit(_)));
    if run.steps == 0 && !step_limited {
        return Ok(None);
    }
    if let Some(StopReason::TooDeep(levels)) = run.stop {
        return Err(Error::TooDeep {
            key: graph.key(node).clone(),
            levels,
        });
    }
    let new = run.term.filter(|new| new != term);
    let mut gained_ref = false;
    if let Some(new) = &new {
        let levels = new.levels().max(graph.key(node).nesting());
        if levels > graph_core::MAX_NESTING {
            return Err(Error::TooDeep {
                key: graph.key(node).clone(),
                levels,
            });
        }
        let old_refs = OldRefs::of(term);
        let mut missing = None;
        new.for_each_ref(&mut |key| {
            if missing.is_some() || old_refs.contains(term, key) {
                return;
            }
            if graph.node_id(key).is_some() {
                gained_ref = true;
            } else {
                missing = Some(key.clone());
            }
        });
        if let Some(missing) = missing {
            return Err(Error::MissingKey {
                key: graph.key(node).clone(),
                missing,
            });
        }
    }
    Ok(Some(Change {
        node,
        term: new,
        steps: run.steps,
        step_limited,
        gained_ref,
    }))
}

/// The keys an old term references, to ask whether a new term's reference is
/// new. Small terms are scanned (no allocation); large ones sorted once.
enum OldRefs<'a> {
    Scan,
    Sorted(Vec<&'a Key>),
}

/// Up to this many references, scanning beats sorting.
const SCAN_REFS: usize = 16;

impl<'a> OldRefs<'a> {
    fn of(term: &'a Term) -> OldRefs<'a> {
        let mut count = 0;
        term.for_each_ref(&mut |_| count += 1);
        if count <= SCAN_REFS {
            return OldRefs::Scan;
        }
        let mut keys: Vec<&Key> = term.refs().collect();
        keys.sort_unstable();
        OldRefs::Sorted(keys)
    }

    fn contains(&self, term: &Term, key: &Key) -> bool {
        match self {
            OldRefs::Scan => {
                let mut found = false;
                term.for_each_ref(&mut |old| found |= old == key);
                found
            }
            OldRefs::Sorted(keys) => keys.binary_search(&key).is_ok(),
        }
    }
}
