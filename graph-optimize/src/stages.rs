//! Stage planning: wide (all-to-all) dependencies split a graph into stages,
//! and each partition's narrow work within a stage is coalesced into one
//! task, as Spark and BNDL plan stages and Mars fuses chains.

use fixedbitset::FixedBitSet;
use graph_core::{Key, NodeId, Op, TaskGraph};

use crate::Error;
use crate::work::{Slot, Work};

/// Which dependencies are wide, and which keys must stay tasks.
#[derive(Clone, Debug, PartialEq)]
pub struct StageConfig {
    /// Ops that consume all their inputs at once (a shuffle's concatenation,
    /// a reduction across partitions): every dependency of a task whose body
    /// calls one of them at the top is wide.
    pub wide_ops: Vec<Op>,
    /// Single wide edges, as `(dependency, dependent)` keys.
    pub wide_edges: Vec<(Key, Key)>,
    /// Keys that must stay tasks of their own (never coalesced into a
    /// dependent); typically the outputs.
    pub keys: Vec<Key>,
    /// The most calls and lists one coalesced task's term may nest, each task
    /// counting as at least one (see
    /// [`FuseConfig::max_depth`](crate::FuseConfig::max_depth)); `None` for no
    /// limit. Default: [`DEFAULT_MAX_DEPTH`](crate::DEFAULT_MAX_DEPTH).
    pub max_depth: Option<usize>,
}

impl Default for StageConfig {
    fn default() -> Self {
        StageConfig {
            wide_ops: Vec::new(),
            wide_edges: Vec::new(),
            keys: Vec::new(),
            max_depth: Some(crate::DEFAULT_MAX_DEPTH),
        }
    }
}

/// A plan of stages: the stage of every task and the task it is coalesced
/// into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StagePlan {
    /// `stage[n]`: the stage of task `n`: the most wide edges on any path
    /// from a root to it.
    pub stage: Vec<u32>,
    /// `task[n]`: the task that `n` is coalesced into (`n` itself if it stays
    /// a task).
    pub task: Vec<NodeId>,
    /// The number of stages.
    pub stage_count: usize,
}

impl StagePlan {
    /// The tasks that remain after coalescing, grouped by stage, in node
    /// order.
    pub fn stages(&self) -> Vec<Vec<NodeId>> {
        let mut stages = vec![Vec::new(); self.stage_count];
        for (i, &task) in self.task.iter().enumerate() {
            if task.index() == i {
                stages[self.stage[i] as usize].push(task);
            }
        }
        stages
    }

    /// The number of tasks that remain after coalescing.
    pub fn task_count(&self) -> usize {
        self.task
            .iter()
            .enumerate()
            .filter(|(i, task)| task.index() == *i)
            .count()
    }
}

/// Splits a graph into stages at its wide dependencies and decides which
/// tasks coalesce: a task joins the task that uses it when the edge between
/// them is narrow, both are in the same stage, it is used exactly once (one
/// reference in the whole graph), it is not a requested key, and neither is
/// opaque. Each remaining task is then one partition's narrow work in one
/// stage: a chain or an in-tree of narrow steps.
///
/// Matches no dask function: this is Spark's and BNDL's stage planning
/// (narrow transformations pipelined into one task, a shuffle starting a new
/// stage) and Mars' chain fusion, on a task graph. Unlike [`fuse`](crate::fuse)
/// it has no width heuristics: within a stage, everything narrow that can
/// coalesce does.
///
/// # Arguments
///
/// - `graph`: the graph.
/// - `config`: the wide ops and edges, and the keys to keep.
///
/// # Returns
///
/// The [`StagePlan`]; [`coalesce_stages`] applies it.
///
/// # Errors
///
/// [`Error::UnknownKey`] for an unknown key, [`Error::NotAnEdge`] for a wide
/// edge the graph lacks, [`Error::Graph`] for a missing reference or a cycle
/// (a task that references itself included).
///
/// # Complexity
///
/// O(V + R + W log W) time for W listed wide edges, O(V + R) space.
///
/// # Example
///
/// ```
/// use graph_core::{Op, generate};
/// use graph_optimize::{StageConfig, plan_stages};
///
/// // 4 inputs, each split 4 ways, each output summing one piece of each.
/// let graph = generate::shuffle_split(4, 4);
/// let config = StageConfig { wide_ops: vec![Op::new("sum")], ..Default::default() };
/// let plan = plan_stages(&graph, &config)?;
/// assert_eq!(plan.stage_count, 2);
/// // Stage 0 keeps the 4 inputs and their 16 pieces (an input has 4 users);
/// // stage 1 the 4 outputs.
/// assert_eq!(plan.stages().iter().map(Vec::len).collect::<Vec<_>>(), [20, 4]);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn plan_stages(graph: &TaskGraph, config: &StageConfig) -> Result<StagePlan, Error> {
    let work = Work::new(graph, true)?;
    let n_nodes = work.node_count();
    let keep = work.key_set(&config.keys)?;
    let mut wide_edges: Vec<(NodeId, NodeId)> = Vec::with_capacity(config.wide_edges.len());
    for (dependency, dependent) in &config.wide_edges {
        let (from, to) = (work.require(dependency)?, work.require(dependent)?);
        if !work.deps(to).contains(&from) {
            return Err(Error::NotAnEdge {
                dependency: dependency.clone(),
                dependent: dependent.clone(),
            });
        }
        wide_edges.push((from, to));
    }
    wide_edges.sort_unstable();
    let wide_op = |node: NodeId| {
        work.top_op(node)
            .is_some_and(|op| config.wide_ops.contains(op))
    };
    let is_wide = |from: NodeId, to: NodeId, all_wide: bool| {
        all_wide || (!wide_edges.is_empty() && wide_edges.binary_search(&(from, to)).is_ok())
    };

    let order = work.topological_order();
    let mut stage = vec![0_u32; n_nodes];
    let mut uses = vec![0_u32; n_nodes];
    let mut user: Vec<Option<NodeId>> = vec![None; n_nodes];
    for &node in &order {
        let all_wide = wide_op(node);
        let mut s = 0;
        for &dep in work.deps(node) {
            s = s.max(stage[dep.index()] + u32::from(is_wide(dep, node, all_wide)));
            uses[dep.index()] += 1;
            user[dep.index()] = Some(node);
        }
        stage[node.index()] = s;
    }
    // Which tasks join their user, deciding bottom-up so that the depth of
    // what a task has absorbed is known: `depth[n]` counts the levels
    // (`Work::levels`) nested in n's coalesced term, one inside the next.
    let max_depth = config.max_depth.unwrap_or(usize::MAX);
    let mut nesting = Vec::new();
    let mut depth: Vec<usize> = (0..n_nodes)
        .map(|node| work.levels(NodeId::new(node), &mut nesting))
        .collect();
    let mut joins = FixedBitSet::with_capacity(n_nodes);
    for &node in &order {
        let i = node.index();
        if uses[i] != 1 {
            continue;
        }
        let parent = user[i].expect("a task used once has a user");
        if !keep.contains(i)
            && stage[i] == stage[parent.index()]
            && !is_wide(node, parent, wide_op(parent))
            && work.is_term(node)
            && work.is_term(parent)
        {
            let below = depth[i].saturating_add(work.levels(parent, &mut nesting));
            if below <= max_depth {
                joins.insert(i);
                let d = &mut depth[parent.index()];
                *d = (*d).max(below);
            }
        }
    }
    let mut task: Vec<NodeId> = (0..n_nodes).map(NodeId::new).collect();
    for &node in order.iter().rev() {
        let i = node.index();
        if let Some(user) = user[i].filter(|_| joins.contains(i)) {
            task[i] = task[user.index()];
        }
    }
    let stage_count = stage.iter().max().map_or(0, |&s| s as usize + 1);
    Ok(StagePlan {
        stage,
        task,
        stage_count,
    })
}

/// Applies a [`StagePlan`]: every task is substituted into the task it
/// coalesces into, so each remaining task computes one partition's narrow
/// work of one stage. Remaining tasks keep their keys.
///
/// Matches no dask function (see [`plan_stages`]); the substitution is
/// [`fuse`](crate::fuse)'s, without renaming.
///
/// # Arguments
///
/// - `graph`: the graph the plan was made for.
/// - `plan`: the plan.
///
/// # Returns
///
/// The coalesced graph, holding its references for the next pass.
///
/// # Errors
///
/// [`Error::PlanLength`] or [`Error::PlanMismatch`] if the plan is for
/// another graph; [`Error::Graph`] for a missing reference or a cycle (a
/// task that references itself included).
///
/// # Complexity
///
/// O(V + R) time and space, plus the size of the terms moved.
///
/// # Example
///
/// ```
/// use graph_core::generate;
/// use graph_optimize::{StageConfig, coalesce_stages, plan_stages};
///
/// let graph = generate::chain(10);
/// let plan = plan_stages(&graph, &StageConfig::default())?;
/// let coalesced = coalesce_stages(&graph, &plan)?;
/// assert_eq!(coalesced.len(), 1);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn coalesce_stages(graph: &TaskGraph, plan: &StagePlan) -> Result<TaskGraph, Error> {
    let mut work = Work::new(graph, false)?;
    let n_nodes = work.node_count();
    if plan.task.len() != n_nodes || plan.stage.len() != n_nodes {
        return Err(Error::PlanLength {
            tasks: n_nodes,
            planned: plan.task.len(),
        });
    }
    // A task joins the task that uses it; check that the plan says so of
    // tasks used exactly once, by a task of the same plan task.
    let mut uses = vec![0_u32; n_nodes];
    let mut user: Vec<Option<NodeId>> = vec![None; n_nodes];
    for node in work.alive_nodes() {
        for &dep in work.deps(node) {
            uses[dep.index()] += 1;
            user[dep.index()] = Some(node);
        }
    }
    let mut joins = FixedBitSet::with_capacity(n_nodes);
    for i in 0..n_nodes {
        if plan.task[i].index() == i {
            continue;
        }
        let node = NodeId::new(i);
        let fits = uses[i] == 1
            && user[i].is_some_and(|parent| {
                plan.task.get(parent.index()) == Some(&plan.task[i])
                    && work.is_term(node)
                    && work.is_term(parent)
            });
        if !fits {
            return Err(Error::PlanMismatch {
                key: work.key(node).clone(),
            });
        }
        joins.insert(i);
    }
    let mut old_row = Vec::new();
    let mut row = Vec::new();
    let mut picks: Vec<Option<Slot>> = Vec::new();
    for node in work.topological_order() {
        if !work.deps(node).iter().any(|&d| joins.contains(d.index())) || !work.is_term(node) {
            continue;
        }
        old_row.clear();
        old_row.extend_from_slice(work.deps(node));
        row.clear();
        picks.clear();
        for &dep in &old_row {
            if joins.contains(dep.index()) {
                row.extend_from_slice(work.deps(dep));
                picks.push(Some(work.body(dep)));
            } else {
                row.push(dep);
                picks.push(None);
            }
        }
        let body = work.substitute(work.body(node), &old_row, &mut |i, _| picks[i]);
        work.set(node, body, &row);
        for &dep in &old_row {
            if joins.contains(dep.index()) {
                work.add_cost(node, dep);
                work.kill(dep);
            }
        }
    }
    work.compact();
    work.finish()
}
