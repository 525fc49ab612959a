//! `fuse`: dask's fusion of reductions, with its width and height heuristics.

use fixedbitset::FixedBitSet;
use graph_core::{Key, NodeId, TaskGraph};

use crate::Error;
use crate::names::Namer;
use crate::work::{Kind, Slot, Work};

/// Options of [`fuse`], dask's parameters; `Default` is dask's defaults
/// (`optimization.fuse` in `dask.yaml`).
#[derive(Clone, Debug, PartialEq)]
pub struct FuseConfig {
    /// Keys that must stay tasks: never absorbed into a dependent (they may
    /// absorb others). Default: `None`.
    pub keys: Option<Vec<Key>>,
    /// The upper limit of the ratio of tasks fused to the height of the
    /// fused subgraph: how wide a fused task may be on average. `0` turns
    /// fusion off. Default: `1`.
    pub ave_width: f64,
    /// The most parallel inputs a fused task may have; `None` means
    /// `1.5 + ave_width * ln(ave_width + 1)`. Default: `None`.
    pub max_width: Option<f64>,
    /// The most levels a fused task may span. `0` turns fusion off.
    /// Default: infinity.
    pub max_height: f64,
    /// How deep (in levels) a fusion may go that adds new input edges;
    /// `None` means `1.5 * ave_width`. Default: `None`.
    pub max_depth_new_edges: Option<f64>,
    /// Name each fused task as dask does (`b1-b2-c`), leaving the old key as
    /// an alias of it. Default: `true`.
    pub rename_keys: bool,
    /// Better than dask: drop the aliases left by renaming unless their key
    /// is in `keys` (with `keys: None`, drop them all), pointing references
    /// at the renamed tasks, so that fusing really shrinks the graph.
    /// Default: `false`.
    pub drop_aliases: bool,
    /// Better than dask: the most calls and lists a fused term may nest, one
    /// inside the next ([`Term::nesting`](graph_core::Term::nesting)), each
    /// fused task counting as at least one; `None` for no limit. dask fuses
    /// a chain of a million tasks into one term a million calls deep, which
    /// no recursive executor or serializer (dask's own included) can handle;
    /// this cuts such a chain into fused pieces no deeper than the limit.
    /// On tasks of one call each it counts tasks; tasks that already hold
    /// nested calls (from `inline_functions`) count for their nesting. It
    /// changes no decision on graphs shallower than it.
    /// Default: [`DEFAULT_MAX_DEPTH`].
    pub max_depth: Option<usize>,
}

/// The default [`FuseConfig::max_depth`] (and that of the other passes that
/// nest terms): deep enough for any reduction tree, shallow enough for
/// recursive code on a small thread stack.
pub const DEFAULT_MAX_DEPTH: usize = 256;

impl Default for FuseConfig {
    fn default() -> Self {
        FuseConfig {
            keys: None,
            ave_width: 1.0,
            max_width: None,
            max_height: f64::INFINITY,
            max_depth_new_edges: None,
            rename_keys: true,
            drop_aliases: false,
            max_depth: Some(DEFAULT_MAX_DEPTH),
        }
    }
}

/// Fuses tasks used by exactly one other task into it, as far as dask's
/// width and height heuristics allow: linear chains and small reduction
/// trees become single tasks.
///
/// Matches dask's `dask.optimization.fuse(dsk, keys, dependencies,
/// ave_width, max_width, max_height, max_depth_new_edges, rename_keys)`,
/// decision for decision (the graph carries its dependencies, so there is
/// no such argument): a task is reducible when it is not in `keys`, is
/// referenced exactly once in the whole graph (a task using a result twice
/// does not absorb it), and is a call, an alias or a scalar (not a list);
/// each region of reducible tasks is walked bottom-up from the first
/// non-reducible task above it, and at each task the children fuse in when
/// `(nodes + fudge) / height <= ave_width`, the number of single-level
/// children is at most `ave_width`, the width is at most `max_width`, the
/// height at most `max_height`, and new input edges appear only below
/// `max_depth_new_edges` levels. Fused tasks are renamed as
/// [`fused_name`](crate::fused_name) says, the old key left as an alias;
/// references to the old key are not rewritten (as in dask).
///
/// Differs from dask: the name-length hash is stable; opaque tasks are never
/// fused into or absorbed; regions are walked in node order, so output is
/// deterministic; [`FuseConfig::drop_aliases`]; and [`FuseConfig::max_depth`]
/// stops a fusion that would nest terms deeper than it.
///
/// # Arguments
///
/// - `graph`: the graph.
/// - `config`: dask's parameters.
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
/// O(V + R) time for the walk when input edge sets stay small; in general
/// O(V + R × H) for regions H levels high, as in dask (each level merges its
/// children's input edge sets), plus the length of the new names.
///
/// # Example
///
/// ```
/// use graph_core::{Key, TaskGraph, Term};
/// use graph_optimize::{FuseConfig, fuse};
///
/// let f = |args: &[&str]| Term::call("f", args.iter().map(|a| Term::key(*a)));
/// let graph = TaskGraph::builder()
///     .task("a", Term::lit(1))
///     .task("b1", f(&["a"]))
///     .task("b2", f(&["a"]))
///     .task("c", f(&["b1", "b2"]))
///     .build()?;
/// let config = FuseConfig { ave_width: 2.0, ..Default::default() };
/// let fused = fuse(&graph, &config)?;
/// let c = fused.get(&Key::from("b1-b2-c")).unwrap();
/// assert_eq!(c.body.term().unwrap().to_string(), "f(f(a), f(a))");
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn fuse(graph: &TaskGraph, config: &FuseConfig) -> Result<TaskGraph, Error> {
    let mut work = Work::new(graph, true)?;
    let protected = match &config.keys {
        Some(keys) => work.key_set(keys)?,
        None => FixedBitSet::new(),
    };
    fuse_work(&mut work, config, &protected);
    work.finish()
}

/// What the walk knows of a processed task: dask's info tuple. The fused
/// term itself is already the task's body in the work graph.
#[derive(Clone, Copy, Debug)]
struct Info {
    node: NodeId,
    height: u64,
    width: f64,
    num_nodes: u64,
    fudge: i64,
    /// How many distinct non-reducible inputs the fused subgraph has; they
    /// are the last `n_edges` of the edge stack, sorted, below those of the
    /// infos pushed after this one.
    n_edges: u32,
    /// How many levels its fused term nests ([`Work::levels`] summed along
    /// the deepest path).
    depth: usize,
}

/// Whether dask would reduce a body of this kind: a call, an alias or a
/// scalar (numbers and strings), not a list or `None`.
fn reducible_kind(kind: Kind) -> bool {
    matches!(kind, Kind::Call | Kind::Ref | Kind::Lit)
}

/// The walk's state: the static facts plus scratch space.
struct Walk<'a, 'g> {
    work: &'a mut Work<'g>,
    reducible: FixedBitSet,
    /// The one task that uses each reducible task.
    user: Vec<Option<NodeId>>,
    ave_width: f64,
    max_width: f64,
    max_height: f64,
    max_depth_new_edges: f64,
    max_depth: usize,
    /// [`Work::nesting_of`]'s memo.
    nesting: Vec<u32>,
    /// The edges of the infos on the info stack, in stack order.
    edges: Vec<NodeId>,
    /// Scratch space for a union of edges.
    scratch: Vec<NodeId>,
    /// Scratch space for a fused row, the row it replaces and what goes
    /// where.
    row: Vec<NodeId>,
    old_row: Vec<NodeId>,
    picks: Vec<Option<Slot>>,
    /// `absorbed_into[n]`: the task `n` was fused into, if it was.
    absorbed_into: Vec<Option<NodeId>>,
    /// The children being fused into a parent, while they are.
    picking: FixedBitSet,
}

/// [`fuse`] on a graph being optimized.
/// `protected` stands for `config.keys`, which is not read.
pub(crate) fn fuse_work(work: &mut Work<'_>, config: &FuseConfig, protected: &FixedBitSet) {
    let ave_width = config.ave_width;
    if ave_width == 0.0 || config.max_height == 0.0 {
        return;
    }
    let max_width = config
        .max_width
        .unwrap_or_else(|| 1.5 + ave_width * (ave_width + 1.0).ln());
    let max_depth_new_edges = config.max_depth_new_edges.unwrap_or(ave_width * 1.5);

    let n_nodes = work.node_count();
    let mut uses = vec![0_u32; n_nodes];
    let mut user: Vec<Option<NodeId>> = vec![None; n_nodes];
    for node in work.alive_nodes() {
        for &dep in work.deps(node) {
            uses[dep.index()] += 1;
            user[dep.index()] = Some(node);
        }
    }
    let mut reducible = FixedBitSet::with_capacity(n_nodes);
    for node in work.alive_nodes() {
        let i = node.index();
        if uses[i] == 1
            && !protected.contains(i)
            && reducible_kind(work.kind(node))
            && user[i].is_some_and(|user| work.is_term(user))
        {
            reducible.insert(i);
        }
    }
    drop(uses);
    if reducible.is_clear() {
        return;
    }
    let mut walk = Walk {
        work,
        reducible,
        user,
        ave_width,
        max_width,
        max_height: config.max_height,
        max_depth_new_edges,
        max_depth: config.max_depth.unwrap_or(usize::MAX),
        nesting: Vec::new(),
        edges: Vec::new(),
        scratch: Vec::new(),
        row: Vec::new(),
        old_row: Vec::new(),
        picks: Vec::new(),
        absorbed_into: vec![None; n_nodes],
        picking: FixedBitSet::with_capacity(n_nodes),
    };
    walk.run();
    let Walk {
        work,
        absorbed_into,
        ..
    } = walk;
    if config.rename_keys {
        rename_fused(work, &absorbed_into, protected, config.drop_aliases);
    }
    work.compact();
}

/// Renames every task that absorbed others as dask names it, in node order;
/// a name already taken (by an earlier rename too) leaves its task as is.
fn rename_fused(
    work: &mut Work<'_>,
    absorbed_into: &[Option<NodeId>],
    protected: &FixedBitSet,
    drop_aliases: bool,
) {
    let n_nodes = absorbed_into.len();
    // The task each absorbed task ended up in, and each such root's tasks,
    // grouped (counting sort by root).
    let mut root = absorbed_into.to_vec();
    for node in 0..n_nodes {
        let Some(mut top) = root[node] else {
            continue;
        };
        while let Some(next) = root[top.index()] {
            top = next;
        }
        // Point the whole path at its root, so that each link is followed
        // a bounded number of times.
        let mut at = node;
        while root[at] != Some(top) {
            let next = root[at].expect("a link on the path to the root");
            root[at] = Some(top);
            at = next.index();
        }
    }
    let mut start = vec![0_u32; n_nodes + 1];
    for r in root.iter().flatten() {
        start[r.index() + 1] += 1;
    }
    for i in 0..n_nodes {
        start[i + 1] += start[i];
    }
    let mut members = vec![NodeId::from_u32(0); start[n_nodes] as usize];
    let mut fill = start.clone();
    for (node, r) in root.iter().enumerate() {
        if let Some(r) = r {
            members[fill[r.index()] as usize] = NodeId::new(node);
            fill[r.index()] += 1;
        }
    }
    drop(fill);
    drop(root);
    // Names first (borrowing the keys), then the renames.
    let mut names: Vec<(NodeId, Key)> = Vec::new();
    let mut namer = Namer::default();
    for r in 0..n_nodes {
        let group = &members[start[r] as usize..start[r + 1] as usize];
        if group.is_empty() {
            continue;
        }
        let r = NodeId::new(r);
        let name = namer.fused_name(work.key(r), group.iter().map(|&k| work.key(k)));
        if let Some(name) = name {
            names.push((r, name));
        }
    }
    drop(namer);
    let mut aliases = FixedBitSet::with_capacity(n_nodes);
    let mut any_alias = false;
    work.reserve_new(names.len());
    for (root, name) in names {
        if work.try_rename(root, name).is_some() {
            aliases.insert(root.index());
            any_alias = true;
        }
    }
    if any_alias && drop_aliases {
        aliases.difference_with(protected);
        work.bypass_aliases(&aliases);
        for alias in aliases.ones() {
            work.kill(NodeId::new(alias));
        }
    }
}

impl Walk<'_, '_> {
    /// The one task that uses a reducible task.
    fn user_of(&self, node: NodeId) -> NodeId {
        self.user[node.index()].expect("a reducible task has one user")
    }

    /// Pushes the distinct non-reducible dependencies of a node, sorted, on
    /// the edge stack; returns how many.
    fn push_own_edges(&mut self, node: NodeId) -> u32 {
        let before = self.edges.len();
        let reducible = &self.reducible;
        self.edges.extend(
            self.work
                .deps(node)
                .iter()
                .copied()
                .filter(|&d| !reducible.contains(d.index())),
        );
        self.edges[before..].sort_unstable();
        let mut n = 0;
        for i in before..self.edges.len() {
            if n == 0 || self.edges[before + n - 1] != self.edges[i] {
                self.edges[before + n] = self.edges[i];
                n += 1;
            }
        }
        self.edges.truncate(before + n);
        n as u32
    }

    /// Pushes the reducible children of `node` (each referenced only there,
    /// so without repeats); returns how many.
    fn push_children(&self, node: NodeId, stack: &mut Vec<NodeId>) -> usize {
        let before = stack.len();
        stack.extend(
            self.work
                .deps(node)
                .iter()
                .copied()
                .filter(|&d| self.reducible.contains(d.index())),
        );
        stack.len() - before
    }

    fn leaf_info(&mut self, node: NodeId) -> Info {
        Info {
            node,
            height: 1,
            width: 1.0,
            num_nodes: 1,
            fudge: 0,
            n_edges: self.push_own_edges(node),
            depth: self.levels(node),
        }
    }

    /// [`Work::levels`] of a task.
    fn levels(&mut self, node: NodeId) -> usize {
        self.work.levels(node, &mut self.nesting)
    }

    fn run(&mut self) {
        let n_nodes = self.reducible.len();
        let mut pending = self.reducible.clone();
        let mut children_stack: Vec<NodeId> = Vec::new();
        let mut info_stack: Vec<Info> = Vec::new();
        for start in 0..n_nodes {
            if !pending.contains(start) {
                continue;
            }
            let mut parent = NodeId::new(start);
            while self.reducible.contains(parent.index()) {
                parent = self.user_of(parent);
            }
            children_stack.push(parent);
            self.push_children(parent, &mut children_stack);
            loop {
                let mut child = *children_stack.last().expect("the stack holds the top");
                if child != parent {
                    while self.push_children(child, &mut children_stack) > 0 {
                        parent = child;
                        child = *children_stack.last().expect("children were pushed");
                    }
                    children_stack.pop();
                    let info = self.leaf_info(child);
                    info_stack.push(info);
                    continue;
                }
                children_stack.pop();
                let n_children = self
                    .work
                    .deps(parent)
                    .iter()
                    .filter(|&&d| self.reducible.contains(d.index()))
                    .count();
                let first = info_stack.len() - n_children;
                for info in &info_stack[first..] {
                    pending.set(info.node.index(), false);
                }
                let more = !children_stack.is_empty();
                let pushed = if n_children == 1 {
                    let info = info_stack.pop().expect("one child");
                    self.single_child(parent, info, more)
                } else {
                    self.many_children(parent, &mut info_stack, first, more)
                };
                match pushed {
                    Some(info) => info_stack.push(info),
                    None => break,
                }
                parent = self.user_of(parent);
            }
            debug_assert!(info_stack.is_empty() && children_stack.is_empty());
            debug_assert!(self.edges.is_empty());
        }
        debug_assert_eq!(pending.count_ones(..), 0);
    }

    /// Replaces the top `n_children` edge lists (whose total length is
    /// `children_len`) by the union of them and the parent's own edges;
    /// returns (the union's length, the children's union's length, the
    /// longest child list's length).
    fn merge_edges(&mut self, parent: NodeId, lens: impl Iterator<Item = u32>) -> (u32, u32, u32) {
        let mut total = 0_usize;
        let mut longest = 0_u32;
        for len in lens {
            total += len as usize;
            longest = longest.max(len);
        }
        let from = self.edges.len() - total;
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.edges[from..]);
        self.edges.truncate(from);
        self.scratch.sort_unstable();
        self.scratch.dedup();
        let n_children_edges = self.scratch.len() as u32;
        // The parent's own edges, pushed on top for the moment, merged in.
        let n_own = self.push_own_edges(parent) as usize;
        let own_from = self.edges.len() - n_own;
        self.scratch.extend_from_slice(&self.edges[own_from..]);
        self.edges.truncate(own_from);
        self.scratch.sort_unstable();
        self.scratch.dedup();
        self.edges.extend_from_slice(&self.scratch);
        (self.scratch.len() as u32, n_children_edges, longest)
    }

    /// dask's single-child case. Returns the parent's info if the walk goes
    /// on above it (`more`).
    fn single_child(&mut self, parent: NodeId, info: Info, more: bool) -> Option<Info> {
        let nce = i64::from(info.n_edges);
        let mut fudge = info.fudge;
        if nce >= 1 && fudge > nce - 1 {
            fudge = nce - 1;
        }
        let (n_edges, _, _) = self.merge_edges(parent, std::iter::once(info.n_edges));
        let no_new_edges = i64::from(n_edges) == nce;
        if !no_new_edges {
            fudge += 1;
        }
        let (height, width, num_nodes) = (info.height, info.width, info.num_nodes);
        let depth = info.depth.saturating_add(self.levels(parent));
        if (num_nodes as i64 + fudge) as f64 / height as f64 <= self.ave_width
            && (no_new_edges || (height as f64) < self.max_depth_new_edges)
            && depth <= self.max_depth
        {
            self.absorb(parent, std::slice::from_ref(&info));
            if more {
                let (height, num_nodes) = if no_new_edges {
                    (height, num_nodes)
                } else {
                    (height + 1, num_nodes + 1)
                };
                return Some(Info {
                    node: parent,
                    height,
                    width,
                    num_nodes,
                    fudge,
                    n_edges,
                    depth,
                });
            }
            self.edges.clear();
            return None;
        }
        if more {
            fudge = fudge.min(self.ave_width_floor());
            return Some(self.unfused_info(parent, width, fudge, n_edges));
        }
        self.edges.clear();
        None
    }

    /// dask's case of two or more children: the children's infos are
    /// `info_stack[first..]`, which this takes off.
    fn many_children(
        &mut self,
        parent: NodeId,
        info_stack: &mut Vec<Info>,
        first: usize,
        more: bool,
    ) -> Option<Info> {
        // The parent's own levels, before its children are substituted in.
        let own = self.levels(parent);
        let infos = &info_stack[first..];
        let n_children = infos.len() as i64;
        let mut height = 1_u64;
        let mut width = 0.0_f64;
        let mut num_single_nodes = 0_u64;
        let mut num_nodes = 0_u64;
        let mut fudge = 0_i64;
        let mut depth = 0_usize;
        for info in infos {
            depth = depth.max(info.depth);
            if info.height == 1 {
                num_single_nodes += 1;
            } else if info.height > height {
                height = info.height;
            }
            width += info.width;
            num_nodes += info.num_nodes;
            fudge += info.fudge;
        }
        let (n_edges, nce, max_num_edges) =
            self.merge_edges(parent, infos.iter().map(|info| info.n_edges));
        let (nce, max_num_edges) = (i64::from(nce), i64::from(max_num_edges));
        fudge += (n_children - 1).min((nce - max_num_edges).max(0));
        if nce >= 1 && fudge > nce - 1 {
            fudge = nce - 1;
        }
        let no_new_edges = i64::from(n_edges) == nce;
        if !no_new_edges {
            fudge += 1;
        }
        let fuses = (num_nodes as i64 + fudge) as f64 / height as f64 <= self.ave_width
            && num_single_nodes as f64 <= self.ave_width
            && width <= self.max_width
            && height as f64 <= self.max_height
            && (no_new_edges || (height as f64) < self.max_depth_new_edges)
            && depth.saturating_add(own) <= self.max_depth;
        if fuses {
            self.absorb(parent, &info_stack[first..]);
        }
        info_stack.truncate(first);
        if fuses {
            if more {
                return Some(Info {
                    node: parent,
                    height: height + 1,
                    width,
                    num_nodes: num_nodes + 1,
                    fudge,
                    n_edges,
                    depth: depth + own,
                });
            }
            self.edges.clear();
            return None;
        }
        if more {
            let width = width.min(self.max_width);
            let fudge = fudge.min(self.ave_width_floor());
            return Some(self.unfused_info(parent, width, fudge, n_edges));
        }
        self.edges.clear();
        None
    }

    /// Python's `int(ave_width - 1)`: truncated toward zero.
    fn ave_width_floor(&self) -> i64 {
        (self.ave_width - 1.0).trunc() as i64
    }

    fn unfused_info(&mut self, parent: NodeId, width: f64, fudge: i64, n_edges: u32) -> Info {
        Info {
            node: parent,
            height: 1,
            width,
            num_nodes: 1,
            fudge,
            n_edges,
            depth: self.levels(parent),
        }
    }

    /// Substitutes the children's bodies into the parent's, removes the
    /// children, and records where they went.
    fn absorb(&mut self, parent: NodeId, infos: &[Info]) {
        for info in infos {
            self.picking.insert(info.node.index());
        }
        let mut old_row = std::mem::take(&mut self.old_row);
        old_row.clear();
        old_row.extend_from_slice(self.work.deps(parent));
        self.row.clear();
        self.picks.clear();
        for &dep in &old_row {
            if self.picking.contains(dep.index()) {
                self.row.extend_from_slice(self.work.deps(dep));
                self.picks.push(Some(self.work.body(dep)));
            } else {
                self.row.push(dep);
                self.picks.push(None);
            }
        }
        let picks = &self.picks;
        let work = &mut *self.work;
        let body = work.substitute(work.body(parent), &old_row, &mut |i, _| picks[i]);
        work.set(parent, body, &self.row);
        // In the order the parent references them, as costs add up.
        for &child in &old_row {
            if self.picking.contains(child.index()) {
                self.picking.set(child.index(), false);
                self.absorbed_into[child.index()] = Some(parent);
                self.work.add_cost(parent, child);
                self.work.kill(child);
            }
        }
        self.old_row = old_row;
    }
}
