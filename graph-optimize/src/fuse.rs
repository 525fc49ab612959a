//! `fuse`: dask's fusion of reductions, with its width and height heuristics.

use std::borrow::Cow;

use fixedbitset::FixedBitSet;
use graph_core::{Body, Key, TaskGraph, Term, Value};

use crate::names::{NameCache, fused_name_cached};
use crate::work::{NONE, Work, for_each_ref_mut};
use crate::{Dependencies, Error, Optimized};

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
    /// Better than dask: the most tasks a fused term may nest, one inside
    /// the next; `None` for no limit. dask fuses a chain of a million tasks
    /// into one term a million calls deep, which no recursive executor or
    /// serializer (dask's own included) can handle; this cuts such a chain
    /// into fused pieces of at most this depth. It changes no decision on
    /// graphs shallower than it. Default: [`DEFAULT_MAX_DEPTH`].
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
/// decision for decision: a task is reducible when it is not in `keys`, is
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
/// - `dependencies`: the graph's dependencies, if known.
///
/// # Returns
///
/// The fused graph and its dependencies.
///
/// # Errors
///
/// [`Error::UnknownKey`] for a key no task has; [`Error::Graph`] for a
/// missing reference or a cycle; [`Error::DependenciesMismatch`] or
/// [`Error::DependenciesLength`] for dependencies of another graph.
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
/// let fused = fuse(&graph, &config, None)?;
/// let c = fused.graph.get(&Key::from("b1-b2-c")).unwrap();
/// assert_eq!(c.body.term().unwrap().to_string(), "f(f(a), f(a))");
/// # Ok::<(), graph_optimize::Error>(())
/// ```
pub fn fuse(
    graph: &TaskGraph,
    config: &FuseConfig,
    dependencies: Option<&Dependencies>,
) -> Result<Optimized, Error> {
    let mut work = Work::new(graph, dependencies)?;
    let protected = match &config.keys {
        Some(keys) => work.key_set(keys)?,
        None => FixedBitSet::new(),
    };
    fuse_work(&mut work, config, &protected);
    work.finish()
}

/// What the walk knows of a processed task: dask's info tuple.
struct Info {
    node: u32,
    /// The fused term, or `None` if the task's body is unchanged.
    term: Option<Term>,
    /// The fused term's references, or `None` if unchanged.
    row: Option<Vec<u32>>,
    /// The keys fused into it, itself last (only when renaming).
    keys: Vec<u32>,
    height: u64,
    width: f64,
    num_nodes: u64,
    fudge: i64,
    /// The distinct non-reducible inputs of the fused subgraph, sorted.
    edges: Vec<u32>,
    /// How many tasks its term nests, one inside the next.
    depth: usize,
}

/// Whether dask would reduce a body of this kind: a call, an alias or a
/// scalar (numbers and strings), not a list or `None`.
fn reducible_kind(body: &Body) -> bool {
    match body {
        Body::Term(Term::Call { .. } | Term::Ref(_)) => true,
        Body::Term(Term::Lit(value)) => !matches!(value, Value::Null),
        Body::Term(Term::List(_)) | Body::Opaque(_) => false,
    }
}

/// The walk's state: the static facts plus scratch space.
struct Walk<'a, 'g> {
    work: &'a mut Work<'g>,
    reducible: FixedBitSet,
    user: Vec<u32>,
    ave_width: f64,
    max_width: f64,
    max_height: f64,
    max_depth_new_edges: f64,
    max_depth: usize,
    rename: bool,
    fused_trees: Vec<Option<Vec<u32>>>,
    /// `slot[child]`: the child's index among the infos being fused, else NONE.
    slot: Vec<u32>,
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
    let mut user = vec![NONE; n_nodes];
    for node in work.alive_nodes() {
        for &dep in work.deps(node) {
            uses[dep as usize] += 1;
            user[dep as usize] = node;
        }
    }
    let mut reducible = FixedBitSet::with_capacity(n_nodes);
    for node in work.alive_nodes() {
        let i = node as usize;
        if uses[i] == 1
            && !protected.contains(i)
            && reducible_kind(work.body(node))
            && !matches!(work.body(user[i]), Body::Opaque(_))
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
        rename: config.rename_keys,
        fused_trees: Vec::new(),
        slot: vec![NONE; n_nodes],
    };
    if walk.rename {
        walk.fused_trees.resize(n_nodes, None);
    }
    walk.run();
    let Walk {
        work, fused_trees, ..
    } = walk;

    let mut aliases = FixedBitSet::with_capacity(n_nodes);
    let mut any_alias = false;
    // Names first (borrowing the keys), then the renames, in node order; a
    // name already taken (by an earlier rename too) leaves its root as is.
    let mut names: Vec<(u32, Key)> = Vec::new();
    let mut cache = NameCache::default();
    for (root, keys) in fused_trees.iter().enumerate() {
        let Some(keys) = keys else { continue };
        let (survivor, rest) = keys.split_last().expect("a fused tree holds its root");
        debug_assert_eq!(*survivor as usize, root);
        let name = fused_name_cached(
            work.key(*survivor),
            rest.iter().map(|&k| work.key(k)),
            &mut cache,
        );
        if let Some(name) = name {
            names.push((root as u32, name));
        }
    }
    drop(cache);
    drop(fused_trees);
    work.reserve_new(names.len());
    for (root, name) in names {
        if !work.key_taken(&name) {
            work.rename(root, name);
            aliases.insert(root as usize);
            any_alias = true;
        }
    }
    if any_alias && config.drop_aliases {
        aliases.difference_with(protected);
        work.bypass_aliases(&aliases);
        for alias in aliases.ones() {
            work.kill(alias as u32);
        }
    }
    work.compact();
}

impl Walk<'_, '_> {
    /// The distinct non-reducible dependencies of a node, sorted.
    fn own_edges(&self, node: u32) -> Vec<u32> {
        let mut edges: Vec<u32> = self
            .work
            .deps(node)
            .iter()
            .copied()
            .filter(|&d| !self.reducible.contains(d as usize))
            .collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    }

    /// Pushes the reducible children of `node` (each referenced only there,
    /// so without repeats); returns how many.
    fn push_children(&self, node: u32, stack: &mut Vec<u32>) -> usize {
        let before = stack.len();
        stack.extend(
            self.work
                .deps(node)
                .iter()
                .copied()
                .filter(|&d| self.reducible.contains(d as usize)),
        );
        stack.len() - before
    }

    fn leaf_info(&self, node: u32) -> Info {
        Info {
            node,
            term: None,
            row: None,
            keys: if self.rename { vec![node] } else { Vec::new() },
            height: 1,
            width: 1.0,
            num_nodes: 1,
            fudge: 0,
            edges: self.own_edges(node),
            depth: 1,
        }
    }

    fn run(&mut self) {
        let n_nodes = self.reducible.len();
        let mut pending = self.reducible.clone();
        let mut children_stack: Vec<u32> = Vec::new();
        let mut info_stack: Vec<Info> = Vec::new();
        for start in 0..n_nodes {
            if !pending.contains(start) {
                continue;
            }
            let mut parent = start as u32;
            while self.reducible.contains(parent as usize) {
                parent = self.user[parent as usize];
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
                    info_stack.push(self.leaf_info(child));
                    continue;
                }
                children_stack.pop();
                let edges = self.own_edges(parent);
                let n_children = self
                    .work
                    .deps(parent)
                    .iter()
                    .filter(|&&d| self.reducible.contains(d as usize))
                    .count();
                let infos = info_stack.split_off(info_stack.len() - n_children);
                for info in &infos {
                    pending.set(info.node as usize, false);
                }
                let more = !children_stack.is_empty();
                let pushed = if n_children == 1 {
                    let info = infos.into_iter().next().expect("one child");
                    self.single_child(parent, info, edges, more)
                } else {
                    self.many_children(parent, infos, edges, more)
                };
                match pushed {
                    Some(info) => info_stack.push(info),
                    None => break,
                }
                parent = self.user[parent as usize];
            }
            debug_assert!(info_stack.is_empty() && children_stack.is_empty());
        }
        debug_assert_eq!(pending.count_ones(..), 0);
    }

    /// dask's single-child case. Returns the parent's info if the walk goes
    /// on above it (`more`), else stores the result.
    fn single_child(
        &mut self,
        parent: u32,
        info: Info,
        edges: Vec<u32>,
        more: bool,
    ) -> Option<Info> {
        let nce = info.edges.len() as i64;
        let mut fudge = info.fudge;
        if nce >= 1 && fudge > nce - 1 {
            fudge = nce - 1;
        }
        let edges = union(&edges, &info.edges);
        let no_new_edges = edges.len() as i64 == nce;
        if !no_new_edges {
            fudge += 1;
        }
        let (height, width, num_nodes) = (info.height, info.width, info.num_nodes);
        let depth = info.depth.saturating_add(1);
        if (num_nodes as i64 + fudge) as f64 / height as f64 <= self.ave_width
            && (no_new_edges || (height as f64) < self.max_depth_new_edges)
            && depth <= self.max_depth
        {
            let mut keys = Vec::new();
            let (term, row) = self.absorb(parent, vec![info], &mut keys);
            if self.rename {
                keys.push(parent);
            }
            if more {
                let (height, num_nodes) = if no_new_edges {
                    (height, num_nodes)
                } else {
                    (height + 1, num_nodes + 1)
                };
                return Some(Info {
                    node: parent,
                    term: Some(term),
                    row: Some(row),
                    keys,
                    height,
                    width,
                    num_nodes,
                    fudge,
                    edges,
                    depth,
                });
            }
            self.store_root(parent, term, row, keys);
            return None;
        }
        self.restore(info);
        if more {
            fudge = fudge.min(self.ave_width_floor());
            return Some(self.unfused_info(parent, width, fudge, edges));
        }
        None
    }

    /// dask's case of two or more children.
    fn many_children(
        &mut self,
        parent: u32,
        infos: Vec<Info>,
        edges: Vec<u32>,
        more: bool,
    ) -> Option<Info> {
        let n_children = infos.len() as i64;
        let mut height = 1_u64;
        let mut width = 0.0_f64;
        let mut num_single_nodes = 0_u64;
        let mut num_nodes = 0_u64;
        let mut fudge = 0_i64;
        let mut children_edges: Vec<u32> = Vec::new();
        let mut max_num_edges = 0_i64;
        let mut depth = 0_usize;
        for info in &infos {
            depth = depth.max(info.depth);
            if info.height == 1 {
                num_single_nodes += 1;
            } else if info.height > height {
                height = info.height;
            }
            width += info.width;
            num_nodes += info.num_nodes;
            fudge += info.fudge;
            max_num_edges = max_num_edges.max(info.edges.len() as i64);
            children_edges = union(&children_edges, &info.edges);
        }
        let nce = children_edges.len() as i64;
        fudge += (n_children - 1).min((nce - max_num_edges).max(0));
        if nce >= 1 && fudge > nce - 1 {
            fudge = nce - 1;
        }
        let edges = union(&edges, &children_edges);
        let no_new_edges = edges.len() as i64 == nce;
        if !no_new_edges {
            fudge += 1;
        }
        if (num_nodes as i64 + fudge) as f64 / height as f64 <= self.ave_width
            && num_single_nodes as f64 <= self.ave_width
            && width <= self.max_width
            && height as f64 <= self.max_height
            && (no_new_edges || (height as f64) < self.max_depth_new_edges)
            && depth.saturating_add(1) <= self.max_depth
        {
            let mut keys = Vec::new();
            let (term, row) = self.absorb(parent, infos, &mut keys);
            if self.rename {
                keys.push(parent);
            }
            if more {
                return Some(Info {
                    node: parent,
                    term: Some(term),
                    row: Some(row),
                    keys,
                    height: height + 1,
                    width,
                    num_nodes: num_nodes + 1,
                    fudge,
                    edges,
                    depth: depth + 1,
                });
            }
            self.store_root(parent, term, row, keys);
            return None;
        }
        for info in infos {
            self.restore(info);
        }
        if more {
            let width = width.min(self.max_width);
            let fudge = fudge.min(self.ave_width_floor());
            return Some(self.unfused_info(parent, width, fudge, edges));
        }
        None
    }

    /// Python's `int(ave_width - 1)`: truncated toward zero.
    fn ave_width_floor(&self) -> i64 {
        (self.ave_width - 1.0).trunc() as i64
    }

    fn unfused_info(&self, parent: u32, width: f64, fudge: i64, edges: Vec<u32>) -> Info {
        Info {
            node: parent,
            term: None,
            row: None,
            keys: if self.rename {
                vec![parent]
            } else {
                Vec::new()
            },
            height: 1,
            width,
            num_nodes: 1,
            fudge,
            edges,
            depth: 1,
        }
    }

    /// Puts a child that is not fused back, with its body. If it absorbed
    /// others, it is the root of a fused tree, named after the walk.
    fn restore(&mut self, info: Info) {
        if let Some(term) = info.term {
            let row = info.row.expect("a fused term has its row");
            self.store_root(info.node, term, row, info.keys);
        }
    }

    /// Stores the fused term of a root and remembers the keys fused into it.
    fn store_root(&mut self, node: u32, term: Term, row: Vec<u32>, keys: Vec<u32>) {
        self.store(node, term, row);
        if self.rename {
            self.fused_trees[node as usize] = Some(keys);
        }
    }

    fn store(&mut self, node: u32, term: Term, row: Vec<u32>) {
        self.work.put(node, Cow::Owned(Body::Term(term)));
        self.work.set_deps(node, &row);
    }

    /// Substitutes the children's terms into the parent's and removes the
    /// children; returns the parent's new term and references, and gathers the
    /// children's fused keys into `keys`.
    fn absorb(&mut self, parent: u32, infos: Vec<Info>, keys: &mut Vec<u32>) -> (Term, Vec<u32>) {
        let mut terms: Vec<Option<(Term, Vec<u32>)>> = Vec::with_capacity(infos.len());
        // Reuse the largest key list, so that a long chain costs O(n).
        let largest = infos
            .iter()
            .enumerate()
            .max_by_key(|(_, info)| info.keys.len())
            .map_or(0, |(i, _)| i);
        for (i, info) in infos.into_iter().enumerate() {
            self.slot[info.node as usize] = i as u32;
            let term = match info.term {
                Some(term) => term,
                None => self.work.take_term(info.node),
            };
            let row = match info.row {
                Some(row) => row,
                None => self.work.deps(info.node).to_vec(),
            };
            if i == largest {
                let mut own = info.keys;
                own.append(keys);
                *keys = own;
            } else {
                keys.extend_from_slice(&info.keys);
            }
            terms.push(Some((term, row)));
        }
        let old_row = self.work.deps(parent).to_vec();
        let mut term = self.work.take_term(parent);
        let mut row = Vec::with_capacity(old_row.len());
        let mut pos = 0;
        let slot = &self.slot;
        for_each_ref_mut(&mut term, &mut |at| {
            let dep = old_row[pos];
            pos += 1;
            let i = slot[dep as usize];
            if i == NONE {
                row.push(dep);
            } else {
                let (child, child_row) = terms[i as usize]
                    .take()
                    .expect("a reducible child is referenced once");
                *at = child;
                row.extend_from_slice(&child_row);
            }
        });
        for &dep in &old_row {
            let i = self.slot[dep as usize];
            if i != NONE {
                self.slot[dep as usize] = NONE;
                self.work.add_cost(parent, dep);
                self.work.kill(dep);
            }
        }
        (term, row)
    }
}

/// The union of two sorted, distinct lists.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    if b.is_empty() {
        return a.to_vec();
    }
    if a.is_empty() {
        return b.to_vec();
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}
