//! Stage planning: wide (all-to-all) dependencies split a graph into stages,
//! and each partition's narrow work within a stage is coalesced into one
//! task, as Spark and BNDL plan stages and Mars fuses chains.

use fixedbitset::FixedBitSet;
use graph_core::{Dag, Key, NodeId, Op, TaskGraph, Topology};

use crate::work::{Slot, Work};
use crate::{Block, Error, WideEdges, insert_barriers};

/// Which dependencies are wide, and which keys must stay tasks.
#[derive(Clone, Debug, PartialEq)]
pub struct StageConfig {
    /// Whether the edges of complete bipartite blocks are wide (see
    /// [`find_wide_edges`](crate::find_wide_edges)). Default: `true`.
    pub wide_blocks: bool,
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
            wide_blocks: true,
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
    /// The wide edges, as `(dependency, dependent)`, each once: by dependent
    /// in a topological order, then by dependency.
    pub wide_edges: Vec<(NodeId, NodeId)>,
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

    /// The plan in figures: each stage's tasks before and after coalescing
    /// and the wide edges entering it, and what barriers would save.
    ///
    /// # Arguments
    ///
    /// - `topology`: the shape of the graph the plan was made for.
    ///
    /// # Errors
    ///
    /// [`Error::PlanLength`] if the plan is for a graph of another size.
    ///
    /// # Complexity
    ///
    /// That of [`insert_barriers`]: O(V log V x d + E log d) for the largest
    /// in-degree d.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::generate;
    /// use graph_optimize::{StageConfig, plan_stages};
    ///
    /// // 8 mappers read by 6 reducers: a barrier turns 48 edges into 14.
    /// let graph = generate::shuffle(8, 6);
    /// let summary = plan_stages(&graph, &StageConfig::default())?.summary(graph.topology()?)?;
    /// assert_eq!(summary.stages.len(), 2);
    /// assert_eq!(summary.stages[1].wide_inputs, 48);
    /// assert_eq!((summary.barriers.len(), summary.edges, summary.edges_with_barriers), (1, 48, 14));
    /// # Ok::<(), graph_optimize::Error>(())
    /// ```
    pub fn summary(&self, topology: &Topology) -> Result<StageSummary, Error> {
        let n_nodes = topology.node_count();
        if self.stage.len() != n_nodes || self.task.len() != n_nodes {
            return Err(Error::PlanLength {
                tasks: n_nodes,
                planned: self.task.len(),
            });
        }
        let mut stages = vec![StageFigures::default(); self.stage_count];
        for (i, &stage) in self.stage.iter().enumerate() {
            let figures = &mut stages[stage as usize];
            figures.tasks += 1;
            figures.tasks_after_coalescing += usize::from(self.task[i].index() == i);
        }
        for &(_, dependent) in &self.wide_edges {
            stages[self.stage[dependent.index()] as usize].wide_inputs += 1;
        }
        let barriers = insert_barriers(topology, 0)?;
        Ok(StageSummary {
            stages,
            barriers: barriers.blocks,
            edges: topology.edge_count(),
            edges_with_barriers: barriers.topology.edge_count(),
        })
    }
}

/// A [`StagePlan`] in figures ([`StagePlan::summary`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StageSummary {
    /// Each stage, in order.
    pub stages: Vec<StageFigures>,
    /// The complete bipartite blocks a barrier would stand for, one
    /// barrier each (see [`insert_barriers`]).
    pub barriers: Vec<Block>,
    /// The graph's distinct dependency edges.
    pub edges: usize,
    /// The edges once each block's m x n edges go through a barrier as
    /// m + n.
    pub edges_with_barriers: usize,
}

/// One stage of a [`StageSummary`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageFigures {
    /// Its tasks.
    pub tasks: usize,
    /// Its tasks once each partition's narrow work is one task.
    pub tasks_after_coalescing: usize,
    /// The wide edges into its tasks.
    pub wide_inputs: usize,
}

/// Splits a graph into stages at its wide dependencies (the edges of
/// complete bipartite blocks, found by [`find_wide_edges`](crate::find_wide_edges) unless
/// [`StageConfig::wide_blocks`] is off, the inputs of tasks calling one of
/// [`StageConfig::wide_ops`], and [`StageConfig::wide_edges`]) and decides
/// which tasks coalesce: a task joins the task that uses it when the edge between
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
/// That of [`find_wide_edges`](crate::find_wide_edges), plus O(V + R + W log W)
/// time for W listed wide edges; O(V + R) space.
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
    Ok(plan(&work, config, &wide_edges, &keep))
}

/// The stage plan of a graph known by its shape alone, as for a dask graph:
/// the edges of complete bipartite blocks are wide ([`find_wide_edges`](crate::find_wide_edges)),
/// every task may coalesce, and each counts one level toward
/// [`DEFAULT_MAX_DEPTH`](crate::DEFAULT_MAX_DEPTH).
///
/// Matches no dask function (see [`plan_stages`]).
///
/// # Arguments
///
/// - `topology`: the graph's shape.
/// - `keys`: tasks that must stay tasks of their own (the outputs).
///
/// # Returns
///
/// The [`StagePlan`].
///
/// # Panics
///
/// If a key is not a node of `topology`.
///
/// # Complexity
///
/// That of [`find_wide_edges`](crate::find_wide_edges), plus O(V + E).
///
/// # Example
///
/// ```
/// use graph_core::generate;
/// use graph_optimize::plan_shape_stages;
///
/// // 8 mappers read by 6 reducers: two stages.
/// let shuffle = generate::shuffle(8, 6);
/// let plan = plan_shape_stages(shuffle.topology()?, &[]);
/// assert_eq!(plan.stage_count, 2);
/// assert_eq!(plan.wide_edges.len(), 48);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn plan_shape_stages(topology: &Topology, keys: &[NodeId]) -> StagePlan {
    let mut keep = FixedBitSet::with_capacity(topology.node_count());
    keep.extend(keys.iter().map(|key| key.index()));
    plan(&topology, &StageConfig::default(), &[], &keep)
}

/// What a stage plan reads of a graph: a task graph being optimized, or a
/// shape alone.
trait Staged {
    fn node_count(&self) -> usize;
    /// The live nodes, dependencies first.
    fn order(&self) -> Vec<NodeId>;
    /// A node's references, repeats included.
    fn deps(&self, node: NodeId) -> &[NodeId];
    /// The op a node's body calls at the top.
    fn top_op(&self, node: NodeId) -> Option<&Op>;
    /// Whether a node's body can be substituted into another's, or take
    /// another's (an opaque task cannot).
    fn coalescible(&self, node: NodeId) -> bool;
    /// The levels a node counts toward [`StageConfig::max_depth`].
    fn levels(&self, node: NodeId, memo: &mut Vec<u32>) -> usize;
}

impl Staged for Work<'_> {
    fn node_count(&self) -> usize {
        Work::node_count(self)
    }
    fn order(&self) -> Vec<NodeId> {
        self.topological_order()
    }
    fn deps(&self, node: NodeId) -> &[NodeId] {
        Work::deps(self, node)
    }
    fn top_op(&self, node: NodeId) -> Option<&Op> {
        Work::top_op(self, node)
    }
    fn coalescible(&self, node: NodeId) -> bool {
        self.is_term(node)
    }
    fn levels(&self, node: NodeId, memo: &mut Vec<u32>) -> usize {
        Work::levels(self, node, memo)
    }
}

impl Staged for &Topology {
    fn node_count(&self) -> usize {
        Dag::node_count(*self)
    }
    fn order(&self) -> Vec<NodeId> {
        self.topological_order().to_vec()
    }
    fn deps(&self, node: NodeId) -> &[NodeId] {
        self.dependencies(node)
    }
    fn top_op(&self, _: NodeId) -> Option<&Op> {
        None
    }
    fn coalescible(&self, _: NodeId) -> bool {
        true
    }
    fn levels(&self, _: NodeId, _: &mut Vec<u32>) -> usize {
        1
    }
}

/// The plan of `graph`, with `listed` the wide edges the caller named (as
/// node ids) and `keep` the tasks to keep.
fn plan(
    graph: &impl Staged,
    config: &StageConfig,
    listed: &[(NodeId, NodeId)],
    keep: &FixedBitSet,
) -> StagePlan {
    let n_nodes = graph.node_count();
    let order = graph.order();
    let blocks = config
        .wide_blocks
        .then(|| WideEdges::find(n_nodes, |node| graph.deps(node)));
    let mut listed = listed.to_vec();
    listed.sort_unstable();
    let wide_op = |node: NodeId| {
        !config.wide_ops.is_empty()
            && graph
                .top_op(node)
                .is_some_and(|op| config.wide_ops.contains(op))
    };
    let is_wide = |from: NodeId, to: NodeId, all_wide: bool| {
        all_wide
            || (!listed.is_empty() && listed.binary_search(&(from, to)).is_ok())
            || blocks.as_ref().is_some_and(|b| b.contains(from, to))
    };

    let mut stage = vec![0_u32; n_nodes];
    let mut uses = vec![0_u32; n_nodes];
    let mut user: Vec<Option<NodeId>> = vec![None; n_nodes];
    let mut wide_edges = Vec::new();
    let mut row: Vec<NodeId> = Vec::new();
    for &node in &order {
        let all_wide = wide_op(node);
        let mut s = 0;
        row.clear();
        for &dep in graph.deps(node) {
            let wide = is_wide(dep, node, all_wide);
            s = s.max(stage[dep.index()] + u32::from(wide));
            uses[dep.index()] += 1;
            user[dep.index()] = Some(node);
            if wide {
                row.push(dep);
            }
        }
        stage[node.index()] = s;
        row.sort_unstable();
        row.dedup();
        wide_edges.extend(row.iter().map(|&dep| (dep, node)));
    }
    // Which tasks join their user, deciding bottom-up so that the depth of
    // what a task has absorbed is known: `depth[n]` counts the levels
    // nested in n's coalesced term, one inside the next.
    let max_depth = config.max_depth.unwrap_or(usize::MAX);
    let mut nesting = Vec::new();
    let mut depth: Vec<usize> = (0..n_nodes)
        .map(|node| graph.levels(NodeId::new(node), &mut nesting))
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
            && graph.coalescible(node)
            && graph.coalescible(parent)
        {
            let below = depth[i].saturating_add(graph.levels(parent, &mut nesting));
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
    let stage_count = order
        .iter()
        .map(|node| stage[node.index()])
        .max()
        .map_or(0, |s| s as usize + 1);
    StagePlan {
        stage,
        task,
        stage_count,
        wide_edges,
    }
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
    coalesce(&mut work, &joins);
    work.compact();
    work.finish()
}

/// The `stages` pass of [`optimize`](crate::optimize): the plan of the graph
/// as it stands, the `protect`ed tasks kept, then applied.
pub(crate) fn stages_work(work: &mut Work<'_>, config: &StageConfig, protect: &FixedBitSet) {
    let plan = plan(&*work, config, &[], protect);
    let mut joins = FixedBitSet::with_capacity(work.node_count());
    joins.extend(
        plan.task
            .iter()
            .enumerate()
            .filter(|&(i, task)| task.index() != i)
            .map(|(i, _)| i),
    );
    coalesce(work, &joins);
    work.compact();
}

/// Substitutes every task of `joins` into the task that uses it (each is
/// used once, by a task whose body is a term).
fn coalesce(work: &mut Work<'_>, joins: &FixedBitSet) {
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
}
