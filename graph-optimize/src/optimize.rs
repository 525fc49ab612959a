//! `optimize`: the passes run as one pipeline over shared dense state, with a
//! report of what each pass did and how long it took.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, Instant};

use fixedbitset::FixedBitSet;
use graph_core::{Body, Key, NodeId, Op, TaskGraph};

use crate::cull::cull_work;
use crate::fuse::fuse_work;
use crate::fuse_linear::fuse_linear_work;
use crate::inline::{inline_functions_work, inline_work};
use crate::stages::stages_work;
use crate::work::{Input, Work};
use crate::{Error, FuseConfig, FuseLinearConfig, StageConfig};

/// One pass of the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pass {
    /// [`cull`](crate::cull) to the requested keys.
    Cull,
    /// [`inline`](crate::inline) of [`OptimizeConfig::inline_keys`] and (with
    /// [`OptimizeConfig::inline_constants`]) constants; then the tasks no
    /// longer needed by the requested keys are dropped.
    Inline,
    /// [`inline_functions`](crate::inline_functions) of
    /// [`OptimizeConfig::fast_ops`], the requested keys protected.
    InlineFunctions,
    /// [`fuse_linear`](crate::fuse_linear), the requested keys protected.
    FuseLinear,
    /// [`fuse`](crate::fuse) with [`OptimizeConfig::fuse`], the requested keys
    /// protected.
    Fuse,
    /// [`plan_stages`](crate::plan_stages) and
    /// [`coalesce_stages`](crate::coalesce_stages): each partition's narrow
    /// work within a stage becomes one task. Wide edges are those of complete
    /// bipartite blocks and the inputs of [`OptimizeConfig::wide_ops`]; the
    /// requested keys are protected, and [`FuseConfig::max_depth`] bounds a
    /// coalesced term.
    Stages,
}

impl Pass {
    /// Every pass, in the order the CLI lists them.
    pub const ALL: [Pass; 6] = [
        Pass::Cull,
        Pass::Inline,
        Pass::InlineFunctions,
        Pass::FuseLinear,
        Pass::Fuse,
        Pass::Stages,
    ];

    /// The pass's name, as the CLI spells it: `cull`, `inline`,
    /// `inline_functions`, `fuse_linear`, `fuse`, `stages`.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Cull => "cull",
            Pass::Inline => "inline",
            Pass::InlineFunctions => "inline_functions",
            Pass::FuseLinear => "fuse_linear",
            Pass::Fuse => "fuse",
            Pass::Stages => "stages",
        }
    }

    /// The pass with this [name](Pass::name).
    pub fn from_name(name: &str) -> Option<Pass> {
        Pass::ALL.into_iter().find(|pass| pass.name() == name)
    }
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Options of [`optimize`].
#[derive(Clone, Debug, PartialEq)]
pub struct OptimizeConfig {
    /// The keys wanted; `None` means the graph's leaves (the tasks no task
    /// depends on). They are never inlined away, fused into another task or
    /// dropped. Default: `None`.
    pub keys: Option<Vec<Key>>,
    /// The passes, in order. Default: cull, inline, inline_functions, fuse
    /// (the order of dask's optimization docs).
    pub passes: Vec<Pass>,
    /// Tasks for [`Pass::Inline`] to inline besides constants. Default: none.
    pub inline_keys: Vec<Key>,
    /// Whether [`Pass::Inline`] inlines constants. Default: `true`.
    pub inline_constants: bool,
    /// The cheap ops of [`Pass::InlineFunctions`]. Default: none (the pass
    /// does nothing, as in dask).
    pub fast_ops: Vec<Op>,
    /// The options of [`Pass::Fuse`]; its `keys` are extended by the requested
    /// keys. Its `rename_keys`, `drop_aliases` and `max_depth` also apply
    /// to [`Pass::FuseLinear`], and its `max_depth` to [`Pass::Stages`].
    /// Default: dask's.
    pub fuse: FuseConfig,
    /// The ops whose inputs [`Pass::Stages`] takes as wide, besides the
    /// edges of complete bipartite blocks. Default: none.
    pub wide_ops: Vec<Op>,
}

impl Default for OptimizeConfig {
    fn default() -> Self {
        OptimizeConfig {
            keys: None,
            passes: vec![Pass::Cull, Pass::Inline, Pass::InlineFunctions, Pass::Fuse],
            inline_keys: Vec::new(),
            inline_constants: true,
            fast_ops: Vec::new(),
            fuse: FuseConfig::default(),
            wide_ops: Vec::new(),
        }
    }
}

/// What one pass of [`optimize`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct PassReport {
    /// The pass.
    pub pass: Pass,
    /// Tasks before it.
    pub tasks_before: usize,
    /// Tasks after it.
    pub tasks_after: usize,
    /// Its wall-clock time.
    pub time: Duration,
}

/// What [`optimize`] did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Tasks in the input.
    pub tasks_before: usize,
    /// Tasks in the output.
    pub tasks_after: usize,
    /// Each pass, in order.
    pub passes: Vec<PassReport>,
    /// The whole run, reading the graph and building the output included.
    pub total: Duration,
}

impl fmt::Display for PassReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<16} {:>10} -> {:<10} {:>10.3} ms",
            self.pass.name(),
            self.tasks_before,
            self.tasks_after,
            self.time.as_secs_f64() * 1e3
        )
    }
}

/// Runs a pipeline of passes: by default dask's `cull -> inline ->
/// inline_functions -> fuse`, with a report of the tasks before and after
/// each pass and its time.
///
/// Matches running dask's functions one after another on their results, each
/// handed the dependencies of the one before. Differs from dask: the passes
/// share one dense state, so keys are resolved to node ids once and the
/// output graph (which holds its references, as each pass's does) is built
/// once; the requested keys are protected in every pass. As in dask, the
/// tasks [`Pass::Inline`] substituted stay in the graph (a later
/// [`Pass::Cull`] drops them).
///
/// # Arguments
///
/// - `graph`: the graph.
/// - `config`: the keys wanted, the passes and their options.
///
/// # Returns
///
/// The optimized graph, and the report.
///
/// # Errors
///
/// [`Error::UnknownKey`] for a requested key no task has; [`Error::Graph`]
/// for a missing reference or a cycle (a task that references itself
/// included).
///
/// # Complexity
///
/// The sum of the passes': O(V + R) each (see each pass); plus, once,
/// resolving the references and building the output, O(V + R + size of the
/// output's terms).
///
/// # Example
///
/// ```
/// use graph_core::generate;
/// use graph_optimize::{OptimizeConfig, optimize};
///
/// let graph = generate::chain(100);
/// let (optimized, report) = optimize(&graph, &OptimizeConfig::default())?;
/// assert_eq!(report.tasks_before, 100);
/// // The constant is inlined (and kept, as dask's inline keeps it), then the
/// // chain fuses into its last task; dask's name for it, `('chain', 99)`, is
/// // the key it already has.
/// assert_eq!(optimized.len(), 2);
/// assert_eq!(report.passes.len(), 4);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn optimize(graph: &TaskGraph, config: &OptimizeConfig) -> Result<(TaskGraph, Report), Error> {
    let started = Instant::now();
    let mut work = Work::new(graph, fuses(config))?;
    let mut report = run(&mut work, config)?;
    let optimized = work.finish()?;
    report.tasks_after = optimized.len();
    report.total = started.elapsed();
    Ok((optimized, report))
}

/// [`optimize`] on a graph it may take apart: the keys and task bodies are
/// moved, not copied, into the output (a body used in several places is
/// copied for all but one), which saves copying every key and term (the
/// largest cost of a pipeline that changes few tasks). For a caller that no
/// longer needs its input, such as the CLI.
///
/// # Errors
///
/// As [`optimize`]. On an error the graph is lost.
///
/// # Complexity
///
/// As [`optimize`], less a copy of every key and term kept.
///
/// # Example
///
/// ```
/// use graph_core::generate;
/// use graph_optimize::{OptimizeConfig, optimize, optimize_owned};
///
/// let graph = generate::random_dag(1_000, 7);
/// let (borrowed, _) = optimize(&graph, &OptimizeConfig::default())?;
/// let (owned, _) = optimize_owned(graph, &OptimizeConfig::default())?;
/// assert_eq!(owned, borrowed);
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn optimize_owned(
    mut graph: TaskGraph,
    config: &OptimizeConfig,
) -> Result<(TaskGraph, Report), Error> {
    let started = Instant::now();
    // Moving the bodies out drops the graph's topology: its order is kept.
    let topology = graph.topology()?;
    let input = Input::of(&graph, topology, fuses(config))?;
    let order = topology.topological_order().to_vec();
    let bodies: Vec<Body> = (0..graph.len())
        .map(|i| {
            let task = graph.task_mut(NodeId::new(i));
            std::mem::replace(&mut task.body, Body::Opaque(Vec::new()))
        })
        .collect();
    let (plan, mut report) = {
        let mut work = Work::from_parts(&graph, input, Cow::Owned(order), Some(bodies));
        let report = run(&mut work, config)?;
        let plan = work.into_plan();
        (plan, report)
    };
    let optimized = plan.build(graph)?;
    report.tasks_after = optimized.len();
    report.total = started.elapsed();
    Ok((optimized, report))
}

/// Whether a pipeline fuses, which reads how deep each body nests.
fn fuses(config: &OptimizeConfig) -> bool {
    config
        .passes
        .iter()
        .any(|pass| matches!(pass, Pass::Fuse | Pass::FuseLinear | Pass::Stages))
}

/// Runs the configured passes over `work`; the report lacks the output's
/// size and the total time.
fn run(work: &mut Work<'_>, config: &OptimizeConfig) -> Result<Report, Error> {
    let tasks_before = work.len();
    // Requested keys are resolved to node ids once; a node keeps its id
    // through every pass (a renamed task becomes an alias, in place).
    let requested: Vec<NodeId> = match &config.keys {
        Some(keys) => keys
            .iter()
            .map(|key| work.require(key))
            .collect::<Result<_, Error>>()?,
        None => leaves(work),
    };
    let mut requested_set = FixedBitSet::with_capacity(work.node_count());
    requested_set.extend(requested.iter().map(|n| n.index()));
    let inline_set = work.key_set(&config.inline_keys)?;
    let user_fuse_keys = match &config.fuse.keys {
        Some(keys) => work.key_set(keys)?,
        None => FixedBitSet::new(),
    };

    let mut report = Report {
        tasks_before,
        ..Report::default()
    };
    for &pass in &config.passes {
        let pass_started = Instant::now();
        let tasks_before = work.len();
        match pass {
            Pass::Cull => cull_work(work, &requested),
            Pass::Inline => inline_work(work, inline_set.clone(), config.inline_constants),
            Pass::InlineFunctions => {
                inline_functions_work(work, &requested_set, &config.fast_ops);
            }
            Pass::Stages => {
                let protect = protected(work, &user_fuse_keys, &requested_set);
                let stages = StageConfig {
                    wide_ops: config.wide_ops.clone(),
                    max_depth: config.fuse.max_depth,
                    ..StageConfig::default()
                };
                stages_work(work, &stages, &protect);
            }
            Pass::FuseLinear | Pass::Fuse => {
                let protect = protected(work, &user_fuse_keys, &requested_set);
                if pass == Pass::Fuse {
                    fuse_work(work, &config.fuse, &protect);
                } else {
                    let linear = FuseLinearConfig {
                        keys: None,
                        rename_keys: config.fuse.rename_keys,
                        drop_aliases: config.fuse.drop_aliases,
                        max_depth: config.fuse.max_depth,
                    };
                    fuse_linear_work(work, &linear, Some(&protect));
                }
            }
        }
        report.passes.push(PassReport {
            pass,
            tasks_before,
            tasks_after: work.len(),
            time: pass_started.elapsed(),
        });
    }
    Ok(report)
}

/// The tasks a merging pass keeps: the requested keys, and those of the
/// user's fuse keys that an earlier pass has not removed.
fn protected(work: &Work<'_>, fuse_keys: &FixedBitSet, requested: &FixedBitSet) -> FixedBitSet {
    let mut protect = fuse_keys.clone();
    protect.intersect_with(work.alive());
    protect.union_with(requested);
    protect
}

/// The tasks no task depends on, in node order.
fn leaves(work: &Work<'_>) -> Vec<NodeId> {
    let mut used = FixedBitSet::with_capacity(work.node_count());
    for node in work.alive_nodes() {
        for &dep in work.deps(node) {
            used.insert(dep.index());
        }
    }
    work.alive_nodes()
        .filter(|&node| !used.contains(node.index()))
        .collect()
}
