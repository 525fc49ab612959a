//! Static ordering of task graphs: a priority for every task that keeps the
//! number of results held in memory low, with diagnostics (the pressure series
//! and its maximum) and a proven lower bound to judge an order by. Its first
//! strategy reproduces `dask.order.order`; the others are measured against it.
//!
//! - [`order`]: a priority per node (0 runs first) by a [`Strategy`]:
//!   [`Strategy::Dask`] (dask's policy), [`Strategy::TreeOptimal`] (exact on
//!   in- and out-forests), [`Strategy::DepthFirst`] and
//!   [`Strategy::BreadthFirst`] (baselines), [`Strategy::Exhaustive`] (an
//!   exact search on graphs of up to 512 tasks), and [`Strategy::Auto`] (the
//!   default: the four heuristics in parallel on rayon's pool, keeping the
//!   lowest max pressure, then a short exact search on graphs of up to 512
//!   tasks).
//! - [`order_graph`]: the same on a [`TaskGraph`], ties broken by dask's
//!   `str(key)` rule ([`ranks_by_str`]), errors naming keys.
//! - [`order_unless`]: [`order`] that gives up once a `stop` callback says
//!   so (a Ctrl-C), within a pass over the graph.
//! - [`diagnostics`] and [`max_pressure`]: what an order holds in memory, as
//!   dask's `diagnostics` measures it.
//! - [`lower_bound`]: no order of the graph has a lower max pressure.
//!
//! # Example
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```
//!
//! # Departures from dask
//!
//! `Strategy::Dask` follows dask's `order` step by step, with these
//! deliberate differences, each for speed (dask is superlinear) or
//! determinism (dask iterates Python sets):
//!
//! - **Connected roots and leaves.** dask keeps, per task, the *set* of roots
//!   it descends from and of leaves it feeds (O(V·R) memory). Here roots (and
//!   leaves), numbered by node index, fall into 64 contiguous buckets and each
//!   task keeps a 64-bit mask of buckets. With at most 64 roots (leaves) every
//!   count is exact, so dask's behaviour is reproduced; above that, "number of
//!   connected roots" in the sort key and a leaf's degree in `get_target` count
//!   buckets (at most 64), and a leaf's degree drops when the last root of a
//!   bucket runs rather than at each root.
//! - **`total_dependencies`** (a count of paths, exponential on lattices)
//!   saturates at `u64::MAX`.
//! - **Set iteration order.** Wherever dask iterates a set (dependents of a
//!   finished task, siblings on the critical path, removed data roots, the
//!   normalisation passes, `use_longest_path`), this iterates in ascending
//!   sort-key order (or ascending tie-break rank before sort keys exist).
//! - **Removed data leaves** get the last priorities, `n - 1`, `n - 2`, ... in
//!   removal order; dask's arithmetic can give two tasks the same priority
//!   when more than one is removed. Orders here are always permutations.
//! - **Leaf selection** (`get_target`) keeps the candidate leaves of each
//!   degree in min-heaps keyed by sort key (stale entries dropped lazily), so
//!   a choice costs O(log V) instead of a scan. A finished leaf leaves them
//!   at once.
//! - **Sort-key packing.** The dependency count inside the sort key is capped
//!   at 2^24 so the key packs into integers; ties above that cap fall to the
//!   next field.
//! - **Safety nets.** A task is never added while an input is missing, and
//!   the loop that drains cached paths into a reducer stops after a round
//!   without progress; whatever is left is ordered topologically at the end.
//!   On every graph of dask's tests and of the generators these never fire.
//! - **External keys** do not exist (a [`Dag`] names every node), and data
//!   nodes are marked by [`OrderConfig::is_data`] instead of by inspecting
//!   task bodies.

mod auto;
mod bytes;
mod dask;
mod diagnostics;
mod error;
mod exact;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod learn;
mod paths;
mod ties;
mod tree;

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use graph_core::{Dag, NodeId, TaskGraph, Topology};

pub use crate::bytes::{
    ByteDiagnostics, Unseen, byte_diagnostics, fill_sizes, fill_sizes_with, lower_bound_bytes,
    max_bytes, shape_sizes,
};
pub use crate::diagnostics::{Diagnostics, diagnostics, max_pressure};
pub use crate::error::Error;
pub use crate::ties::ranks_by_str;

/// How [`order`] picks priorities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// A portfolio: `Dask`, `TreeOptimal`, `DepthFirst` and `BreadthFirst`
    /// run in parallel on rayon's pool, and the order with the lowest max
    /// pressure is kept; ties go to `Dask`, then to the others in that
    /// order. Then, on graphs of at most 512 tasks whose best order is above
    /// [`lower_bound`], the exact search of [`Strategy::Exhaustive`] runs with
    /// a small budget (100 000 tasks run, a few milliseconds to a few tens)
    /// and its order is kept if strictly better; [`Order::strategy`] then
    /// says `Exhaustive`. Never worse than `Dask` or any baseline, optimal on
    /// forests, and optimal wherever its search proves an optimum; it
    /// reaches the optimum on every graph of dask's test suite that this
    /// crate's tests carry.
    ///
    /// **Early stop.** An order that meets [`lower_bound`] cannot be beaten,
    /// so once one does, the candidates it beats on a tie are skipped if not
    /// yet started, and `Dask`, when it is one of them, stops within a few
    /// thousand tasks. The choice depends on the max pressures alone, never
    /// on timing or the number of threads: it is the full run's choice, except
    /// on graphs of at least 2^16 tasks, where `Dask` loses the tie at the
    /// bound (so that it can be cancelled) and the first of `TreeOptimal`,
    /// `DepthFirst`, `BreadthFirst` that meets the bound is kept even if
    /// `Dask`'s order meets it too. Both are optimal.
    #[default]
    Auto,
    /// dask's `order`: critical paths towards leaf targets, linear paths run
    /// eagerly, ties broken by the tie-break ranks.
    Dask,
    /// Sethi-Ullman labels: the exact optimum on in-forests (every task has
    /// at most one dependent) and out-forests (at most one dependency). On
    /// other graphs, a post-order that visits the neediest input first.
    TreeOptimal,
    /// Depth-first post-order from each sink in tie-break order.
    DepthFirst,
    /// Breadth-first (Kahn's order, first in first out).
    BreadthFirst,
    /// The depth-first order, except that a ready task that frees at least
    /// as much as it adds (its result, less the inputs it is the last to
    /// read; in bytes where [`OrderConfig::sizes`] are given, else in
    /// results) runs at once. A candidate of `Auto` where sizes differ: it
    /// runs the last reader of a large result right after the others.
    Greedy,
    /// The exact minimum max pressure, by a bounded search over orders on
    /// graphs of at most 512 tasks, starting from `Auto`'s best heuristic
    /// order; where the search gives up (after 1 000 000 tasks run, about
    /// a tenth of a second on a dense graph of 500 tasks) it keeps the best
    /// order it found, and on larger graphs `Auto`'s portfolio order. Never
    /// worse than `Auto`: the same search, only longer.
    ///
    /// The search is a depth-first branch and bound over the set of tasks
    /// done (which alone determines what can still happen), one weakly
    /// connected component at a time: it lowers the bound from the best
    /// order known, cuts a state when a task not yet run would hold more
    /// (its inputs and the results that must wait for it) or when a memo says
    /// the same done-set failed before, runs without branching any task that
    /// frees at least what it adds, and tries only one of tasks with the same
    /// inputs and dependents. A lower bound from disjoint paths (what the
    /// first output of a shuffle or the last chunk of a reduction must hold)
    /// proves many optima without search.
    Exhaustive,
}

impl Strategy {
    /// Every strategy, in the order the command line and the Python package
    /// list them.
    pub const ALL: [Strategy; 7] = [
        Strategy::Auto,
        Strategy::Dask,
        Strategy::TreeOptimal,
        Strategy::DepthFirst,
        Strategy::BreadthFirst,
        Strategy::Greedy,
        Strategy::Exhaustive,
    ];

    /// The strategy's name, as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Auto => "auto",
            Strategy::Dask => "dask",
            Strategy::TreeOptimal => "tree",
            Strategy::DepthFirst => "dfs",
            Strategy::BreadthFirst => "bfs",
            Strategy::Greedy => "greedy",
            Strategy::Exhaustive => "exact",
        }
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no [`Strategy`]'s.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown strategy '{name}': expected one of {}",
    Strategy::ALL.map(Strategy::name).join(", ")
)]
pub struct UnknownStrategy {
    /// The name given.
    pub name: String,
}

impl std::str::FromStr for Strategy {
    type Err = UnknownStrategy;

    /// The strategy with this [name](Strategy::name).
    ///
    /// ```
    /// use graph_order::Strategy;
    ///
    /// assert_eq!("dfs".parse(), Ok(Strategy::DepthFirst));
    /// for strategy in Strategy::ALL {
    ///     assert_eq!(strategy.to_string().parse(), Ok(strategy));
    /// }
    /// assert_eq!(
    ///     "fastest".parse::<Strategy>().unwrap_err().to_string(),
    ///     "unknown strategy 'fastest': expected one of auto, dask, tree, dfs, bfs, greedy, exact"
    /// );
    /// ```
    fn from_str(name: &str) -> Result<Strategy, UnknownStrategy> {
        Strategy::ALL
            .into_iter()
            .find(|strategy| strategy.name() == name)
            .ok_or_else(|| UnknownStrategy {
                name: name.to_owned(),
            })
    }
}

/// The options of [`order`]. `Default` is `Auto` with no data nodes and no
/// sizes.
#[derive(Clone, Copy, Debug, Default)]
pub struct OrderConfig<'a> {
    /// The strategy.
    pub strategy: Strategy,
    /// Empty, or one flag per node: `true` for dask's non-task (data) nodes,
    /// such as literals and aliases. Only [`Strategy::Dask`] reads it: data
    /// leaves with several dependencies and data roots with several dependents
    /// leave the graph before ordering, as in dask.
    pub is_data: &'a [bool],
    /// Empty, or the bytes of each node's result. Given, and not the same
    /// for every task with dependents, orders minimize the bytes held
    /// ([`max_bytes`]) rather than the results held: `Auto` keeps the
    /// candidate of lowest max bytes, ties by max pressure, and searches
    /// exactly in bytes; `TreeOptimal` weighs each result (Liu's optimum on
    /// in-forests); `Greedy` adds the fewest bytes at each step. Where they
    /// are all alike, bytes are that size times the results held, and every
    /// strategy gives its order without sizes exactly.
    pub sizes: &'a [u64],
}

impl OrderConfig<'_> {
    /// The default options with `strategy`.
    pub fn new(strategy: Strategy) -> OrderConfig<'static> {
        OrderConfig {
            strategy,
            is_data: &[],
            sizes: &[],
        }
    }
}

/// A priority per node: `0` runs first. Always a permutation of `0..n` in
/// which every task comes after its dependencies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Order {
    priorities: Vec<u32>,
    /// `None` for an order made elsewhere.
    strategy: Option<Strategy>,
}

impl Order {
    /// Checks `priorities` against `dag` and wraps them, for example to
    /// measure an order made elsewhere with [`diagnostics`].
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`], [`Error::NotAPermutation`] and
    /// [`Error::NotTopological`], and the graph errors of [`order`].
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::Topology;
    /// use graph_order::Order;
    ///
    /// let dag = Topology::from_edges(3, [(0, 1), (1, 2)])?;
    /// let order = Order::from_priorities(&dag, vec![0, 1, 2])?;
    /// assert_eq!(order.strategy(), None); // made elsewhere: no strategy claimed
    /// assert!(Order::from_priorities(&dag, vec![2, 1, 0]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_priorities(dag: &impl Dag, priorities: Vec<u32>) -> Result<Order, Error> {
        let topology = Topology::checked(dag)?;
        check_order(&topology, &priorities)?;
        Ok(Order {
            priorities,
            strategy: None,
        })
    }

    /// The priority of each node, indexed by node.
    pub fn priorities(&self) -> &[u32] {
        &self.priorities
    }

    /// The priority of `node`.
    pub fn priority(&self, node: NodeId) -> u32 {
        self.priorities[node.index()]
    }

    /// The nodes in the order they run.
    pub fn sequence(&self) -> Vec<NodeId> {
        diagnostics::sequence_of(&self.priorities)
    }

    /// The strategy that produced this order: for [`Strategy::Auto`], the
    /// candidate it kept; `None` for an order made elsewhere
    /// ([`Order::from_priorities`]).
    pub fn strategy(&self) -> Option<Strategy> {
        self.strategy
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.priorities.len()
    }

    /// Whether the graph was empty.
    pub fn is_empty(&self) -> bool {
        self.priorities.is_empty()
    }

    /// The priorities, for a consumer that takes `Vec<u32>` (an executor).
    pub fn into_priorities(self) -> Vec<u32> {
        self.priorities
    }
}

/// Orders the tasks of `dag` so that few results are held at once.
///
/// **dask**: `dask.order.order(dsk)` is [`Strategy::Dask`] with `tie_break`
/// from [`ranks_by_str`] and `is_data` marking non-task values; see the crate
/// docs for where it departs from dask. The default, [`Strategy::Auto`], runs
/// every strategy and keeps the lowest max pressure, so it is never worse
/// than dask's policy.
///
/// # Arguments
///
/// * `dag`: the graph, checked once by
///   [`Topology::checked`](graph_core::Topology::checked): a [`Topology`] is
///   used as it is; any other [`Dag`] is copied from its `dependencies` (its
///   `dependents` are not read). Repeated edges count once.
/// * `tie_break`: empty (ties by node index), or a rank per node; where the
///   strategy's rules tie, the lower rank comes first. Equal ranks fall back
///   to node index.
/// * `config`: the strategy and dask's data-node flags.
///
/// # Returns
///
/// An [`Order`]: a priority per node, a permutation of `0..n` that respects
/// every dependency.
///
/// # Errors
///
/// [`Error::Graph`] wrapping graph-core's
/// [`NodeCycle`](graph_core::Error::NodeCycle) naming the nodes on a cycle (a
/// self-edge included) or [`NodeOutOfRange`](graph_core::Error::NodeOutOfRange)
/// for a dependency past `node_count`, as
/// [`Topology::checked`](graph_core::Topology::checked) finds them; and
/// [`Error::LengthMismatch`] for a `tie_break` or `is_data` of the wrong
/// length.
///
/// # Complexity
///
/// O((V + E) log V) time and O(V + E) auxiliary space for every strategy.
/// `Auto` runs its four candidates in parallel on rayon's pool, so its wall
/// time is about `Dask`'s (the slowest) plus a scoring pass, and less when a
/// candidate meets the lower bound early. The exact search of `Exhaustive`
/// (and of `Auto`) only runs on graphs of at most 512 tasks, with
/// O(V^2 / 64 + V * E) setup (ancestor and descendant bitsets, a few
/// max-flows) and a budget of tasks run (100 000 for `Auto`, 1 000 000 for
/// `Exhaustive`), each costing O(degree) plus a few bound counters and a
/// memo lookup of O(V / 64), so it adds a bounded constant; its memo holds
/// at most one done-set of V bits per task run.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
/// use graph_order::{OrderConfig, Strategy, order};
///
/// // dask's docstring graph: c <- a, d <- b, c.
/// let dag = Topology::from_edges(4, [(0, 2), (1, 3), (2, 3)])?;
/// let order = order(&dag, &[], &OrderConfig::new(Strategy::Dask))?;
/// assert_eq!(order.priorities(), [0, 2, 1, 3]);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn order(dag: &impl Dag, tie_break: &[u32], config: &OrderConfig<'_>) -> Result<Order, Error> {
    order_unless(dag, tie_break, config, &|| false)
}

/// [`order`], giving up once `stop` returns `true`: for a caller that must
/// be able to cancel the order of a large graph (a Ctrl-C, a deadline).
///
/// **dask**: no counterpart; `dask.order.order` is [`order`].
///
/// # Arguments
///
/// * `dag`, `tie_break`, `config`: as for [`order`].
/// * `stop`: asked between the phases of the order (ranking the tie-break,
///   before and after each of `Auto`'s candidates) and every few thousand
///   tasks inside `Dask`'s main loop, possibly from several threads of
///   rayon's pool at once. Once it has returned `true` it is not believed
///   to change its mind. It never changes the order returned, only whether
///   one is.
///
/// # Returns
///
/// [`order`]'s order, if `stop` never returned `true`.
///
/// # Errors
///
/// [`order`]'s errors, and [`Error::Stopped`] once `stop` has returned
/// `true`, however far the order had come.
///
/// # Complexity
///
/// [`order`]'s, plus a call of `stop` per phase and per 4096 tasks of
/// `Dask`. The time from `stop` turning `true` to the return is at most one
/// phase: a pass over the graph (a candidate of `Auto`, or the whole order
/// of `TreeOptimal`, `DepthFirst`, `BreadthFirst` or `Greedy`), and no
/// more than a few thousand tasks inside `Dask`.
///
/// # Example
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
///
/// use graph_core::Topology;
/// use graph_order::{Error, OrderConfig, order, order_unless};
///
/// let dag = Topology::from_edges(3, [(0, 1), (1, 2)])?;
/// let config = OrderConfig::default();
/// let cancelled = AtomicBool::new(false);
/// let stop = || cancelled.load(Ordering::Relaxed);
/// assert_eq!(order_unless(&dag, &[], &config, &stop)?, order(&dag, &[], &config)?);
/// cancelled.store(true, Ordering::Relaxed);
/// assert!(matches!(order_unless(&dag, &[], &config, &stop), Err(Error::Stopped)));
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn order_unless(
    dag: &impl Dag,
    tie_break: &[u32],
    config: &OrderConfig<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Order, Error> {
    let topology = Topology::checked(dag)?;
    order_topology(&topology, tie_break, config, stop)
}

/// [`order_unless`] on a checked graph: the non-generic inner function.
fn order_topology(
    topology: &Topology,
    tie_break: &[u32],
    config: &OrderConfig<'_>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Order, Error> {
    let n = topology.node_count();
    for (what, len) in [
        ("tie_break", tie_break.len()),
        ("is_data", config.is_data.len()),
        ("sizes", config.sizes.len()),
    ] {
        if len != 0 && len != n {
            return Err(Error::LengthMismatch {
                what,
                expected: n,
                found: len,
            });
        }
    }
    // Latched: the candidates that gave up on a yes must not be mistaken
    // for finished ones by a later no.
    let stopped = AtomicBool::new(false);
    let stop = || {
        stopped.load(Relaxed) || {
            let now = stop();
            if now {
                stopped.store(true, Relaxed);
            }
            now
        }
    };
    let tie = unique_ranks(tie_break, n);
    if stop() {
        return Err(Error::Stopped);
    }
    // Sizes all alike weigh as counts: the orders without sizes serve.
    let measure = if config.sizes.is_empty() || bytes::uniform(topology, config.sizes).is_some() {
        auto::Measure::Count
    } else {
        auto::Measure::Bytes(config.sizes)
    };
    let (priorities, strategy) = match config.strategy {
        Strategy::Auto => auto::auto(
            topology,
            &tie,
            config.is_data,
            measure,
            exact::AUTO_BUDGET,
            &stop,
        ),
        Strategy::Dask => (
            dask::dask_unless(topology, &tie, config.is_data, &stop).unwrap_or_default(),
            Strategy::Dask,
        ),
        Strategy::TreeOptimal => (
            match measure {
                auto::Measure::Count => tree::tree_optimal(topology, &tie),
                auto::Measure::Bytes(sizes) => tree::tree_optimal_bytes(topology, sizes, &tie),
            },
            Strategy::TreeOptimal,
        ),
        Strategy::DepthFirst => (tree::depth_first(topology, &tie), Strategy::DepthFirst),
        Strategy::BreadthFirst => (tree::breadth_first(topology), Strategy::BreadthFirst),
        Strategy::Greedy => {
            let unit: Vec<u64>;
            let sizes = match measure {
                auto::Measure::Bytes(sizes) => sizes,
                auto::Measure::Count => {
                    unit = vec![1; n];
                    &unit
                }
            };
            let base = tree::depth_first(topology, &tie);
            (bytes::greedy(topology, sizes, &base), Strategy::Greedy)
        }
        Strategy::Exhaustive => {
            let (priorities, _) = auto::auto(
                topology,
                &tie,
                config.is_data,
                measure,
                exact::EXHAUSTIVE_BUDGET,
                &stop,
            );
            (priorities, Strategy::Exhaustive)
        }
    };
    if stop() {
        return Err(Error::Stopped);
    }
    debug_assert!(check_order(topology, &priorities).is_ok());
    Ok(Order {
        priorities,
        strategy: Some(strategy),
    })
}

/// Checks that `priorities` is a permutation of `0..n` that runs every
/// dependency first.
fn check_order(topology: &Topology, priorities: &[u32]) -> Result<(), Error> {
    let n = topology.node_count();
    if priorities.len() != n {
        return Err(Error::LengthMismatch {
            what: "the order",
            expected: n,
            found: priorities.len(),
        });
    }
    let mut seen = vec![false; n];
    for &p in priorities {
        if p as usize >= n || seen[p as usize] {
            return Err(Error::NotAPermutation {
                priority: p,
                node_count: n,
            });
        }
        seen[p as usize] = true;
    }
    for node in topology.node_ids() {
        for &dependency in topology.dependencies(node) {
            if priorities[dependency.index()] > priorities[node.index()] {
                return Err(Error::NotTopological { node, dependency });
            }
        }
    }
    Ok(())
}

/// Ranks `0..n` without ties: by `tie_break`, then by node index.
fn unique_ranks(tie_break: &[u32], n: usize) -> Vec<u32> {
    if tie_break.is_empty() {
        return (0..n as u32).collect();
    }
    let mut by: Vec<u32> = (0..n as u32).collect();
    by.sort_unstable_by_key(|&i| (tie_break[i as usize], i));
    let mut rank = vec![0_u32; n];
    for (r, &i) in by.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    rank
}

/// Orders a [`TaskGraph`] with dask's tie-break ([`ranks_by_str`]).
///
/// **dask**: `dask.order.order(dsk)` with the chosen strategy. Every task of
/// a `TaskGraph` counts as a task; pass `is_data` in `config` to mark dask's
/// non-task values.
///
/// # Arguments
///
/// * `graph`: the task graph.
/// * `config`: the strategy and dask's data-node flags (indexed by node).
///
/// # Returns
///
/// As [`order`].
///
/// # Errors
///
/// [`Error::Graph`] wrapping graph-core's [`Cycle`](graph_core::Error::Cycle)
/// (naming the keys on the cycle) or
/// [`MissingDependency`](graph_core::Error::MissingDependency), and
/// [`Error::LengthMismatch`] for an `is_data` of the wrong length.
///
/// # Complexity
///
/// As [`order`], plus [`ranks_by_str`].
///
/// # Example
///
/// ```
/// use graph_core::{TaskGraph, Term};
/// use graph_order::{OrderConfig, order_graph};
///
/// let mut graph = TaskGraph::new();
/// graph.insert("x", Term::lit(1))?;
/// graph.insert("y", Term::call("inc", [Term::key("x")]))?;
/// let order = order_graph(&graph, &OrderConfig::default())?;
/// assert_eq!(order.priorities(), [0, 1]);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn order_graph(graph: &TaskGraph, config: &OrderConfig<'_>) -> Result<Order, Error> {
    order_topology(
        graph.topology()?,
        &ranks_by_str(graph.keys()),
        config,
        &|| false,
    )
}

/// A proven lower bound on the max pressure of any order of `dag`.
///
/// It is the largest in-degree (all inputs of a task are held before it
/// runs), and the exact optimum when `dag` is an in-forest or an out-forest
/// (Sethi-Ullman / Liu labels: inputs with the larger need first).
///
/// **dask**: has no counterpart; dask's tests pin dask's own max pressure,
/// which this bound lets one judge.
///
/// # Arguments
///
/// * `dag`: the graph.
///
/// # Returns
///
/// A number no order's max pressure is below; on forests, the optimum
/// (which [`Strategy::TreeOptimal`] attains).
///
/// # Errors
///
/// The graph errors of [`order`].
///
/// # Complexity
///
/// O(V + E log E) time (each task's inputs are sorted by need) and O(V + E)
/// auxiliary space.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
///
/// // A binary tree of 7 tasks: the best order holds 3 results at once (one
/// // finished half while the other half gathers its two inputs).
/// let dag = Topology::from_edges(7, [(0, 4), (1, 4), (2, 5), (3, 5), (4, 6), (5, 6)])?;
/// assert_eq!(graph_order::lower_bound(&dag)?, 3);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn lower_bound(dag: &impl Dag) -> Result<u32, Error> {
    let topology = Topology::checked(dag)?;
    Ok(tree::lower_bound(&topology))
}

/// How many data leaves dask's order sets aside before ordering the rest:
/// leaves that are data (`is_data`, one flag per node) with two or more
/// dependencies, again as removals make new ones (data roots with two or
/// more dependents leaving in between). [`Strategy::Dask`] gives them the
/// last priorities, as dask does; a caller that reports dask's numbering
/// (dask's `order` inserts them first) needs their count.
///
/// # Errors
///
/// [`Error::LengthMismatch`] when `is_data` is neither empty nor one flag
/// per node, and [`Error::Graph`] for an invalid graph.
///
/// # Example
///
/// ```
/// use graph_core::Topology;
///
/// // 2 is data reading 0 and 1: set aside. 3 is data reading 0 only: kept.
/// let dag = Topology::from_edges(4, [(0, 2), (1, 2), (0, 3)])?;
/// let is_data = [false, false, true, true];
/// assert_eq!(graph_order::set_aside_leaves(&dag, &is_data)?, 1);
/// # Ok::<(), graph_order::Error>(())
/// ```
pub fn set_aside_leaves(dag: &impl Dag, is_data: &[bool]) -> Result<usize, Error> {
    let topology = Topology::checked(dag)?;
    let n = topology.node_count();
    if !is_data.is_empty() && is_data.len() != n {
        return Err(Error::LengthMismatch {
            what: "is_data",
            expected: n,
            found: is_data.len(),
        });
    }
    Ok(dask::set_aside_count(&topology, is_data))
}

/// dask's per-task ordering metrics, for the tests that port dask's tests of
/// its private helpers; only with the `fuzzing` feature.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod internals;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
