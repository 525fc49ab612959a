//! `inline`, `inline_functions` and `functions_of`: substituting tasks into
//! the tasks that use them.

use std::collections::BTreeSet;

use fixedbitset::FixedBitSet;
use graph_core::{Key, NodeId, Op, TaskGraph, Term};

use crate::Error;
use crate::work::{Kind, Slot, Work};

/// Substitutes the given tasks, and by default every constant, into the
/// tasks that reference them.
///
/// Matches dask's `dask.optimization.inline(dsk, keys, inline_constants,
/// dependencies)` (the graph carries its dependencies, so there is no such
/// argument): a constant is a task whose body is a literal, a list
/// without references, or an alias (a bare reference to another task);
/// a dependency-free call is not a constant. Substituted values are fully
/// expanded (an inlined task that uses another inlined task carries its
/// value), and the inlined tasks stay in the graph, as in dask: follow with
/// [`cull`](crate::cull) to drop them. Differs from dask: an unknown key is an
/// error rather than ignored, and an opaque task is never inlined (its body
/// is unknown) nor substituted into (it keeps its reference).
///
/// # Arguments
///
/// - `graph`: the graph.
/// - `keys`: the tasks to inline.
/// - `inline_constants`: also inline every constant (dask's default: `true`).
///
/// # Returns
///
/// The graph with the same keys, holding its references for the next pass.
///
/// # Errors
///
/// [`Error::UnknownKey`] for a key no task has; [`Error::Graph`] for a
/// missing reference or a cycle (a task that references itself included).
///
/// # Complexity
///
/// O(V + R) time to substitute: a substituted value is shared, not copied,
/// until the output graph is built, which costs the size of its terms (a
/// value inlined into k tasks is copied k times there, as dask's output
/// holds it k times).
///
/// # Example
///
/// ```
/// use graph_core::{Key, TaskGraph, Term};
/// use graph_optimize::inline;
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .task("z", Term::call("add", [Term::key("x"), Term::key("y")]))
///     .build()?;
/// let inlined = inline(&graph, &[Key::from("y")], true)?;
/// let z = inlined.get(&Key::from("z")).unwrap();
/// assert_eq!(z.body.term().unwrap().to_string(), "add(1, inc(1))");
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn inline(graph: &TaskGraph, keys: &[Key], inline_constants: bool) -> Result<TaskGraph, Error> {
    let mut work = Work::new(graph, false)?;
    let inlined = work.key_set(keys)?;
    inline_work(&mut work, inlined, inline_constants);
    work.finish()
}

/// [`inline`] on a graph being optimized.
pub(crate) fn inline_work(work: &mut Work<'_>, mut inlined: FixedBitSet, inline_constants: bool) {
    inlined.grow(work.node_count());
    for node in work.alive_nodes() {
        match work.kind(node) {
            Kind::Opaque => inlined.set(node.index(), false),
            kind => {
                if inline_constants && is_constant(kind, work.deps(node).is_empty()) {
                    inlined.insert(node.index());
                }
            }
        }
    }
    if inlined.is_clear() {
        return;
    }
    // An inlined task is expanded before the tasks that use it: first the
    // inlined tasks, dependencies first, then every other task.
    let order = work.topological_order_within(&inlined);
    let mut scratch = Scratch::default();
    for node in order {
        substitute_inlined(work, node, &inlined, &mut scratch);
    }
    for i in 0..work.node_count() {
        let node = NodeId::new(i);
        if work.is_alive(node) && !inlined.contains(i) {
            substitute_inlined(work, node, &inlined, &mut scratch);
        }
    }
    work.compact();
}

/// Buffers reused from task to task.
#[derive(Default)]
struct Scratch {
    row: Vec<NodeId>,
    new_row: Vec<NodeId>,
    picks: Vec<Option<Slot>>,
    /// [`Work::nesting_of`]'s memo.
    nesting: Vec<u32>,
}

/// Substitutes the inlined tasks `node` references (already expanded) into
/// its body, unless it is opaque, or unless the body would nest deeper than
/// [`json::MAX_NESTING`](graph_core::MAX_NESTING) levels (no file
/// could hold it): the task then keeps its references.
fn substitute_inlined(
    work: &mut Work<'_>,
    node: NodeId,
    inlined: &FixedBitSet,
    scratch: &mut Scratch,
) {
    if !work.deps(node).iter().any(|&d| inlined.contains(d.index())) || !work.is_term(node) {
        return;
    }
    let Scratch {
        row,
        new_row,
        picks,
        nesting,
    } = scratch;
    row.clear();
    row.extend_from_slice(work.deps(node));
    new_row.clear();
    picks.clear();
    for &dep in row.iter() {
        if inlined.contains(dep.index()) {
            new_row.extend_from_slice(work.deps(dep));
            picks.push(Some(work.body(dep)));
        } else {
            new_row.push(dep);
            picks.push(None);
        }
    }
    let deepest = picks
        .iter()
        .flatten()
        .map(|&slot| work.nesting_of(slot, nesting))
        .max()
        .unwrap_or(0);
    if work.nesting_of(work.body(node), nesting) + deepest > graph_core::MAX_NESTING {
        return;
    }
    let body = work.substitute(work.body(node), row, &mut |i, _| picks[i]);
    work.set(node, body, new_row);
}

/// Whether dask's `inline` treats a body as a constant: an alias, a literal,
/// or a list without references.
fn is_constant(kind: Kind, no_deps: bool) -> bool {
    match kind {
        Kind::Ref | Kind::Lit | Kind::Null => true,
        Kind::List => no_deps,
        Kind::Call | Kind::Opaque => false,
    }
}

/// Inlines every task made only of cheap ops into the tasks that use it, and
/// removes it.
///
/// Matches dask's `dask.optimization.inline_functions(dsk, output,
/// fast_functions, dependencies=None)` with `inline_constants=False`: a task is inlined when its
/// body is a call, every op anywhere in it is in `fast_ops`, it is not an
/// output, and some task uses it (a fast task with several dependents is
/// copied into each). With no fast ops the graph is returned unchanged.
/// Differs from dask: an output key no task has is an error, and a task with
/// an opaque dependent is never inlined (the opaque task could not take its
/// value).
///
/// # Arguments
///
/// - `graph`: the graph.
/// - `outputs`: keys to keep as tasks.
/// - `fast_ops`: the cheap ops.
///
/// # Returns
///
/// The graph without the inlined tasks, holding its references for the
/// next pass.
///
/// # Errors
///
/// As [`inline`].
///
/// # Complexity
///
/// O(V + R + size of the cheap tasks' terms) time, plus the size of the
/// terms the output holds, which is bounded: a task is inlined only while
/// the term it expands to has at most [`MAX_INLINED_TERM`] nodes (dask has
/// no bound; see there).
///
/// # Example
///
/// ```
/// use graph_core::{Key, Op, TaskGraph, Term};
/// use graph_optimize::inline_functions;
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("i", Term::call("inc", [Term::key("x")]))
///     .task("out", Term::call("double", [Term::key("i")]))
///     .build()?;
/// let fast = [Op::new("inc")];
/// let inlined = inline_functions(&graph, &[Key::from("out")], &fast)?;
/// assert!(inlined.get(&Key::from("i")).is_none());
/// let out = inlined.get(&Key::from("out")).unwrap();
/// assert_eq!(out.body.term().unwrap().to_string(), "double(inc(x))");
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn inline_functions(
    graph: &TaskGraph,
    outputs: &[Key],
    fast_ops: &[Op],
) -> Result<TaskGraph, Error> {
    let mut work = Work::new(graph, false)?;
    let outputs = work.key_set(outputs)?;
    inline_functions_work(&mut work, &outputs, fast_ops);
    work.finish()
}

/// [`inline_functions`] on a graph being optimized.
pub(crate) fn inline_functions_work(work: &mut Work<'_>, outputs: &FixedBitSet, fast_ops: &[Op]) {
    if fast_ops.is_empty() {
        return;
    }
    let n_nodes = work.node_count();
    let mut has_dependent = FixedBitSet::with_capacity(n_nodes);
    let mut opaque_dependent = FixedBitSet::with_capacity(n_nodes);
    for node in work.alive_nodes() {
        let opaque = !work.is_term(node);
        for &dep in work.deps(node) {
            has_dependent.insert(dep.index());
            if opaque {
                opaque_dependent.insert(dep.index());
            }
        }
    }
    let mut inlinable = FixedBitSet::with_capacity(n_nodes);
    for node in work.alive_nodes() {
        let i = node.index();
        if outputs.contains(i) || !has_dependent.contains(i) || opaque_dependent.contains(i) {
            continue;
        }
        if work.kind(node) == Kind::Call
            && work.all_ops(work.body(node), &mut |op| fast_ops.contains(op))
        {
            inlinable.insert(i);
        }
    }
    if inlinable.is_clear() {
        return;
    }
    cap_expansion(work, &mut inlinable);
    inline_work(work, inlinable.clone(), false);
    for node in inlinable.ones() {
        work.kill(NodeId::new(node));
    }
}

/// The most nodes a term may have once the cheap tasks it uses are inlined.
pub const MAX_INLINED_TERM: usize = 64;

/// Keeps as tasks the inlinable tasks whose expanded term would exceed
/// [`MAX_INLINED_TERM`] nodes. Without this, a chain of n cheap tasks becomes
/// one term n calls deep, which recursive code (dropping, writing, running
/// it) cannot take for long chains, and whose copies, where it is used more
/// than once, take memory quadratic in n.
fn cap_expansion(work: &Work<'_>, inlinable: &mut FixedBitSet) {
    let mut expanded = vec![0_usize; work.node_count()];
    let mut memo = Vec::new();
    // Only the inlinable tasks' sizes matter, and only through inlinable
    // dependencies.
    for node in work.topological_order_within(inlinable) {
        let extra: usize = work
            .deps(node)
            .iter()
            .filter(|&&dep| inlinable.contains(dep.index()))
            .map(|&dep| expanded[dep.index()].saturating_sub(1))
            .sum();
        let size = work
            .size_of(work.body(node), &mut memo)
            .saturating_add(extra);
        if size > MAX_INLINED_TERM {
            inlinable.set(node.index(), false);
        }
        expanded[node.index()] = size;
    }
}

/// Whether `pred` holds for every op called anywhere in the term.
fn all_ops(term: &Term, pred: &mut impl FnMut(&Op) -> bool) -> bool {
    match term {
        Term::Lit(_) | Term::Ref(_) => true,
        Term::Call { op, args } => pred(op) && args.iter().all(|arg| all_ops(arg, pred)),
        Term::List(items) => items.iter().all(|item| all_ops(item, pred)),
    }
}

/// Every op called anywhere in a term, calls nested in lists included.
///
/// Matches dask's `dask.optimization.functions_of(task)`. Differs from dask
/// only where Python has more than we do: there are no partials to unwrap,
/// and every op can be compared.
///
/// # Arguments
///
/// - `term`: the term.
///
/// # Returns
///
/// The ops, sorted by name.
///
/// # Errors
///
/// None.
///
/// # Complexity
///
/// O(size of the term × log of the number of distinct ops).
///
/// # Example
///
/// ```
/// use graph_core::Term;
/// use graph_optimize::functions_of;
///
/// let term = Term::call("a", [Term::list([Term::call("b", [Term::lit(1)])])]);
/// let ops = functions_of(&term);
/// let names: Vec<&str> = ops.iter().map(|op| op.as_str()).collect();
/// assert_eq!(names, ["a", "b"]);
/// assert!(functions_of(&Term::lit(1)).is_empty());
/// ```
pub fn functions_of(term: &Term) -> BTreeSet<Op> {
    let mut ops = BTreeSet::new();
    all_ops(term, &mut |op| {
        if !ops.contains(op) {
            ops.insert(op.clone());
        }
        true
    });
    ops
}
