//! `fuse_linear`: chains of tasks with one dependent each become one task.

use fixedbitset::FixedBitSet;
use graph_core::{Key, NodeId, TaskGraph};

use crate::Error;
use crate::names::Namer;
use crate::work::Work;

/// Options of [`fuse_linear`]. `Default` is dask's.
#[derive(Clone, Debug, PartialEq)]
pub struct FuseLinearConfig {
    /// Keys that must stay tasks (never absorbed into a dependent). With
    /// `Some`, the aliases left for renamed chains are dropped unless their
    /// key is listed, as in dask. Default: `None`.
    pub keys: Option<Vec<Key>>,
    /// Name each fused chain as dask does (`z-y-x-w`), leaving the old key as
    /// an alias of it. Default: `true`.
    pub rename_keys: bool,
    /// Better than dask: with `keys: None`, drop every alias too (references
    /// to it are pointed at the renamed task), so fusing really shrinks the
    /// graph. Default: `false`.
    pub drop_aliases: bool,
    /// Better than dask: the most calls and lists one fused chain's term may
    /// nest, each task counting as at least one; a deeper chain is cut into
    /// pieces no deeper than this (see
    /// [`FuseConfig::max_depth`](crate::FuseConfig::max_depth)). `None` for
    /// no limit. Default: [`DEFAULT_MAX_DEPTH`](crate::DEFAULT_MAX_DEPTH).
    pub max_depth: Option<usize>,
}

impl Default for FuseLinearConfig {
    fn default() -> Self {
        FuseLinearConfig {
            keys: None,
            rename_keys: true,
            drop_aliases: false,
            max_depth: Some(crate::DEFAULT_MAX_DEPTH),
        }
    }
}

/// Fuses linear chains: where a task is used exactly once, by a task that
/// uses nothing else, the two become one task.
///
/// Matches dask's `dask.optimization.fuse_linear(dsk, keys, dependencies,
/// rename_keys)` (the graph carries its dependencies, so there is no such
/// argument): a link child -> parent exists when the child is not in
/// `keys`, is referenced exactly once in the whole graph, and that reference
/// is the parent's only one; maximal runs of links become one task under the
/// most downstream key, renamed `a-b-c` (upstream first, see
/// [`fused_linear_name`](crate::fused_linear_name)) with the old key left as
/// an alias, and references to renamed keys are rewritten to the new names.
/// Differs from dask: opaque tasks are never fused (their bodies are
/// unknown), [`FuseLinearConfig::drop_aliases`], and
/// [`FuseLinearConfig::max_depth`] cuts chains that would nest deeper than it.
///
/// # Arguments
///
/// - `graph`: the graph.
/// - `config`: keys to keep, renaming, alias dropping.
///
/// # Returns
///
/// The fused graph, holding its references for the next pass.
///
/// # Errors
///
/// [`Error::UnknownKey`] for a key no task has; [`Error::Graph`] for a
/// missing reference or a cycle (a task that references itself included).
///
/// # Complexity
///
/// O(V + R) time and space, plus the length of the new names.
///
/// # Example
///
/// ```
/// use graph_core::{Key, TaskGraph, Term};
/// use graph_optimize::{FuseLinearConfig, fuse_linear};
///
/// let graph = TaskGraph::builder()
///     .task("a", Term::lit(1))
///     .task("b", Term::call("inc", [Term::key("a")]))
///     .task("c", Term::call("inc", [Term::key("b")]))
///     .build()?;
/// let config = FuseLinearConfig { keys: Some(vec![Key::from("c")]), ..Default::default() };
/// let fused = fuse_linear(&graph, &config)?;
/// let c = fused.get(&Key::from("a-b-c")).unwrap();
/// assert_eq!(c.body.term().unwrap().to_string(), "inc(inc(1))");
/// assert_eq!(fused.len(), 2); // 'c' stays, as an alias of 'a-b-c'
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn fuse_linear(graph: &TaskGraph, config: &FuseLinearConfig) -> Result<TaskGraph, Error> {
    let mut work = Work::new(graph, config.max_depth.is_some())?;
    let protected = match &config.keys {
        Some(keys) => Some(work.key_set(keys)?),
        None => None,
    };
    fuse_linear_work(&mut work, config, protected.as_ref());
    work.finish()
}

/// [`fuse_linear`] on a graph being optimized.
/// `protected` stands for `config.keys`, which is not read.
pub(crate) fn fuse_linear_work(
    work: &mut Work<'_>,
    config: &FuseLinearConfig,
    protected: Option<&FixedBitSet>,
) {
    let n_nodes = work.node_count();
    let mut uses = vec![0_u32; n_nodes];
    let mut user: Vec<Option<NodeId>> = vec![None; n_nodes];
    for node in work.alive_nodes() {
        for &dep in work.deps(node) {
            uses[dep.index()] += 1;
            user[dep.index()] = Some(node);
        }
    }
    let mut parent_of: Vec<Option<NodeId>> = vec![None; n_nodes];
    let mut has_child = FixedBitSet::with_capacity(n_nodes);
    for child in work.alive_nodes() {
        let c = child.index();
        if uses[c] != 1 || protected.is_some_and(|keys| keys.contains(c)) || !work.is_term(child) {
            continue;
        }
        let parent = user[c].expect("a task used once has a user");
        if work.deps(parent).len() == 1 && work.is_term(parent) {
            parent_of[c] = Some(parent);
            has_child.insert(parent.index());
        }
    }
    drop(user);
    drop(uses);
    // Cut chains deeper than the depth limit: going up from the bottom, a
    // link is removed where the next task's levels would pass the limit.
    if let Some(max_depth) = config.max_depth {
        let mut nesting = Vec::new();
        for bottom in 0..n_nodes {
            if parent_of[bottom].is_none() || has_child.contains(bottom) {
                continue;
            }
            let mut at = NodeId::new(bottom);
            let mut depth = work.levels(at, &mut nesting);
            while let Some(parent) = parent_of[at.index()] {
                let own = work.levels(parent, &mut nesting);
                if depth.saturating_add(own) > max_depth {
                    parent_of[at.index()] = None;
                    has_child.set(parent.index(), false);
                    depth = own;
                } else {
                    depth += own;
                }
                at = parent;
            }
        }
    }

    let mut chain: Vec<NodeId> = Vec::new();
    let mut namer = Namer::default();
    let mut row: Vec<NodeId> = Vec::new();
    let mut dead: Vec<NodeId> = Vec::new();
    let mut aliases = FixedBitSet::with_capacity(n_nodes);
    let mut any_alias = false;
    for bottom in 0..n_nodes {
        if parent_of[bottom].is_none() || has_child.contains(bottom) {
            continue;
        }
        chain.clear();
        let bottom = NodeId::new(bottom);
        let mut at = bottom;
        chain.push(at);
        while let Some(parent) = parent_of[at.index()] {
            at = parent;
            chain.push(at);
        }
        let top = at;
        row.clear();
        row.extend_from_slice(work.deps(bottom));
        let mut val = work.body(bottom);
        for pair in chain.windows(2) {
            let (child, parent) = (pair[0], pair[1]);
            let parent_row = [child];
            val = work.substitute(work.body(parent), &parent_row, &mut |_, _| Some(val));
            work.add_cost(parent, child);
            dead.push(child);
        }
        work.set(top, val, &row);
        if config.rename_keys {
            // dask's renamer takes the chain from the top down.
            let name = namer.fused_linear_name(chain.iter().rev().map(|&n| work.key(n)));
            if let Some(name) = name
                && work.try_rename(top, name).is_some()
            {
                aliases.insert(top.index());
                any_alias = true;
            }
        }
    }
    for node in dead {
        work.kill(node);
    }
    if any_alias {
        work.bypass_aliases(&aliases);
        let drop_all = protected.is_none() && config.drop_aliases;
        for alias in aliases.ones() {
            let keep = match protected {
                Some(keys) => keys.contains(alias),
                None => !drop_all,
            };
            if !keep {
                work.kill(NodeId::new(alias));
            }
        }
    }
    work.compact();
}
