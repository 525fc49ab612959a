//! `Work`: the dense state every pass runs over. The input is read once
//! (`input`); task bodies stay where they are (in the input graph, or moved
//! out of it once) and are never copied while passes run: a changed body is
//! an expression in an arena that shares its parts (`body`), references are
//! node ids, the order is the input's (`order`), and the output graph is
//! built once, at the end of a pipeline, by materializing each body
//! (`output`).

mod body;
mod input;
mod order;
mod output;

use std::borrow::Cow;
use std::sync::OnceLock;

use fixedbitset::FixedBitSet;
use graph_core::{Body, Key, NodeId, TaskGraph};
use indexmap::IndexSet;
use rayon::prelude::*;
use rustc_hash::{FxBuildHasher, FxHashSet};

use body::Expr;
pub(crate) use body::{Kind, Slot};
pub(crate) use input::Input;

use crate::Error;

/// A graph being optimized. Node ids `0..n_src` are the input's tasks; ids
/// past that are tasks a pass created (renamed fused tasks). Invariants: an
/// alive task references only alive tasks, and [`Work::topological_order`]
/// is an order of the graph (see `order`).
pub(crate) struct Work<'g> {
    src: &'g TaskGraph,
    /// The input's bodies when they were moved out of it (`src`'s are then
    /// placeholders).
    owned: Option<Vec<Body>>,
    n_src: usize,
    /// The input's topological order.
    order: Cow<'g, [NodeId]>,
    /// For each task a pass created (by id from `n_src`), the node it was
    /// renamed from.
    renamed_from: Vec<NodeId>,
    /// The references of each source body, in preorder, are
    /// `arena[src_refs[m]..src_refs[m + 1]]`: the arena starts with them,
    /// and that part of it never changes.
    src_refs: Vec<u32>,
    /// The shape of each source body.
    kinds: Vec<Kind>,
    /// How many calls and lists each source body nests: read with the rest
    /// of the input when the caller said it would be needed, else on first
    /// use.
    nestings: OnceLock<Vec<u32>>,
    /// The keys of the tasks passes created, in node order from `n_src`.
    new_keys: IndexSet<Key, FxBuildHasher>,
    body: Vec<Slot>,
    exprs: Vec<Expr>,
    slots: Vec<Slot>,
    /// Each node's size and cost; empty when no input task has one.
    sizes: Vec<Option<u64>>,
    costs: Vec<Option<f64>>,
    alive: FixedBitSet,
    n_alive: usize,
    /// Row `n` of the references: `arena[rows[n].0..][..rows[n].1]`.
    rows: Vec<(u32, u32)>,
    arena: Vec<NodeId>,
    /// The names of the input's keys, once renames need them, and how many
    /// keys were looked up before.
    heads: Option<Heads<'g>>,
    lookups: u32,
}

/// The strings that name the input's keys (a string key, or a tuple's first
/// string): a new name whose string is not among them is no input key, so
/// most new names need no lookup in the input graph. Gathered in parallel,
/// and given up on (every name is looked up) when there are many.
struct Heads<'g> {
    names: Option<FxHashSet<&'g str>>,
}

impl<'g> Heads<'g> {
    /// The most distinct names worth a set.
    const MAX: usize = 1 << 12;

    fn of(graph: &'g TaskGraph) -> Heads<'g> {
        let keys: Vec<&'g Key> = graph.keys().collect();
        let names = keys
            .par_chunks(8192)
            .map(|keys| {
                let mut set = FxHashSet::default();
                // A key without a string cannot equal a new name, which has one.
                for name in keys.iter().filter_map(|key| head(key)) {
                    set.insert(name);
                    if set.len() > Heads::MAX {
                        return None;
                    }
                }
                Some(set)
            })
            .try_reduce(FxHashSet::default, |mut a, b| {
                a.extend(b);
                (a.len() <= Heads::MAX).then_some(a)
            });
        Heads { names }
    }

    /// Whether an input key might equal `key`.
    fn may_hold(&self, key: &Key) -> bool {
        match (&self.names, head(key)) {
            (Some(names), Some(name)) => names.contains(name),
            _ => true,
        }
    }
}

/// The string naming a key: itself, or a tuple's first part's, recursively;
/// `None` for numbers and empty tuples.
fn head(key: &Key) -> Option<&str> {
    match key {
        Key::Str(s) => Some(s),
        Key::Tuple(parts) => parts.first().and_then(head),
        Key::Int(_) | Key::Float(_) => None,
    }
}

impl<'g> Work<'g> {
    /// A work graph over `src`: its checked topology's order, and what the
    /// passes read of each task ([`Input`]), the nestings of the bodies too
    /// if `with_nestings` (passes that call [`Work::levels`] need them; the
    /// others would read them on first use).
    ///
    /// # Errors
    ///
    /// [`Error::Graph`] for a reference to a missing key or a cycle (a task
    /// that references itself included).
    pub(crate) fn new(src: &'g TaskGraph, with_nestings: bool) -> Result<Work<'g>, Error> {
        let topology = src.topology()?;
        let input = Input::of(src, topology, with_nestings)?;
        Ok(Work::from_parts(
            src,
            input,
            Cow::Borrowed(topology.topological_order()),
            None,
        ))
    }

    /// A work graph over `src`'s keys, from what the passes read of its
    /// tasks and its topological order, with the bodies the caller moved
    /// out of it, if it did (`src`'s own bodies are then placeholders).
    pub(crate) fn from_parts(
        src: &'g TaskGraph,
        input: Input,
        order: Cow<'g, [NodeId]>,
        owned: Option<Vec<Body>>,
    ) -> Work<'g> {
        let n = src.len();
        debug_assert!(owned.as_ref().is_none_or(|bodies| bodies.len() == n));
        debug_assert_eq!(order.len(), n);
        let Input {
            kinds,
            nestings: nestings_read,
            sizes,
            costs,
            rows: (offsets, arena),
        } = input;
        debug_assert_eq!(offsets.len(), n + 1);
        // Room for the tasks passes may add (untouched room costs nothing).
        let mut rows = Vec::with_capacity(2 * n);
        rows.extend(offsets.windows(2).map(|w| (w[0], w[1] - w[0])));
        let mut body = Vec::with_capacity(2 * n);
        body.extend((0..n as u32).map(|m| Slot::Src(NodeId::from_u32(m))));
        let mut alive = FixedBitSet::with_capacity(n);
        alive.insert_range(..);
        let nestings = OnceLock::new();
        if let Some(column) = nestings_read {
            let _ = nestings.set(column);
        }
        Work {
            src,
            owned,
            n_src: n,
            order,
            renamed_from: Vec::new(),
            src_refs: offsets,
            arena,
            kinds,
            nestings,
            new_keys: IndexSet::default(),
            body,
            // Room for the expressions passes build, reserved once.
            exprs: Vec::with_capacity(n),
            slots: Vec::with_capacity(2 * n),
            sizes,
            costs,
            alive,
            n_alive: n,
            rows,
            heads: None,
            lookups: 0,
        }
    }

    /// Every node id, dead ones included.
    pub(crate) fn node_count(&self) -> usize {
        self.body.len()
    }

    /// The number of alive tasks.
    pub(crate) fn len(&self) -> usize {
        self.n_alive
    }

    pub(crate) fn is_alive(&self, node: NodeId) -> bool {
        self.alive.contains(node.index())
    }

    pub(crate) fn alive(&self) -> &FixedBitSet {
        &self.alive
    }

    /// The alive nodes, in id order.
    pub(crate) fn alive_nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        // Node ids fit in a `u32` (the input graph checked its size), which
        // spares each a range check.
        self.alive.ones().map(|i| NodeId::from_u32(i as u32))
    }

    pub(crate) fn key(&self, node: NodeId) -> &Key {
        let i = node.index();
        if i < self.n_src {
            self.src.key(node)
        } else {
            &self.new_keys[i - self.n_src]
        }
    }

    /// The body of source node `m`.
    fn src_body(&self, m: NodeId) -> &Body {
        match &self.owned {
            Some(bodies) => &bodies[m.index()],
            None => &self.src.task(m).body,
        }
    }

    /// The body of input task `m` as the input graph holds it.
    fn graph_body(&self, m: NodeId) -> &'g Body {
        &self.src.task(m).body
    }

    /// The references of source body `m` as it was read.
    fn src_targets_of(&self, m: NodeId) -> &[NodeId] {
        let i = m.index();
        &self.arena[self.src_refs[i] as usize..self.src_refs[i + 1] as usize]
    }

    /// How many calls and lists source body `m` nests.
    fn src_nesting(&self, m: NodeId) -> u32 {
        let column = self.nestings.get_or_init(|| {
            (0..self.n_src)
                .into_par_iter()
                .with_min_len(4096)
                .map(|i| input::nesting_of(self.src_body(NodeId::new(i))))
                .collect()
        });
        column[m.index()]
    }

    /// The number of references source body `m` holds.
    fn src_ref_count(&self, m: NodeId) -> u32 {
        self.src_refs[m.index() + 1] - self.src_refs[m.index()]
    }

    /// The alive node with this key.
    pub(crate) fn find(&self, key: &Key) -> Option<NodeId> {
        let node = match self.src.node_id(key) {
            Some(node) => node,
            None => NodeId::new(self.n_src + self.new_keys.get_index_of(key)?),
        };
        self.is_alive(node).then_some(node)
    }

    /// The alive node with this key, or an error naming it.
    pub(crate) fn require(&self, key: &Key) -> Result<NodeId, Error> {
        self.find(key)
            .ok_or_else(|| Error::UnknownKey { key: key.clone() })
    }

    /// A bit set of the alive nodes with these keys.
    pub(crate) fn key_set(&self, keys: &[Key]) -> Result<FixedBitSet, Error> {
        let mut set = FixedBitSet::with_capacity(self.node_count());
        for key in keys {
            set.insert(self.require(key)?.index());
        }
        Ok(set)
    }

    /// The input task with this key, alive or not; looked up only where
    /// some input key has the same name (see [`Heads`]).
    fn src_holds(&mut self, key: &Key) -> Option<NodeId> {
        // A few lookups cost less than gathering the names.
        const DIRECT: u32 = 1024;
        if self.heads.is_none() {
            self.lookups += 1;
            if self.lookups > DIRECT {
                self.heads = Some(Heads::of(self.src));
            }
        }
        if self
            .heads
            .as_ref()
            .is_some_and(|heads| !heads.may_hold(key))
        {
            return None;
        }
        self.src.node_id(key)
    }

    /// Every reference of `node`, in preorder, repeats included.
    pub(crate) fn deps(&self, node: NodeId) -> &[NodeId] {
        let (start, len) = self.rows[node.index()];
        &self.arena[start as usize..(start + len) as usize]
    }

    pub(crate) fn set_deps(&mut self, node: NodeId, deps: &[NodeId]) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(deps);
        self.rows[node.index()] = (start, deps.len() as u32);
    }

    /// Sets a node's body and its references.
    pub(crate) fn set(&mut self, node: NodeId, body: Slot, deps: &[NodeId]) {
        self.body[node.index()] = body;
        self.set_deps(node, deps);
    }

    /// Removes a node; nothing may reference it any more.
    pub(crate) fn kill(&mut self, node: NodeId) {
        let i = node.index();
        if self.alive.contains(i) {
            self.alive.set(i, false);
            self.n_alive -= 1;
            self.rows[i] = (0, 0);
        }
    }

    /// A node's size and cost.
    fn size_cost(&self, node: NodeId) -> (Option<u64>, Option<f64>) {
        let i = node.index();
        (
            self.sizes.get(i).copied().flatten(),
            self.costs.get(i).copied().flatten(),
        )
    }

    /// Adds `cost` of an absorbed task to `node`'s.
    pub(crate) fn add_cost(&mut self, node: NodeId, absorbed: NodeId) {
        if self.costs.is_empty() {
            return;
        }
        let absorbed = self.costs[absorbed.index()];
        let cost = &mut self.costs[node.index()];
        *cost = match (*cost, absorbed) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Moves `node`'s body and references to a new task named `key` and makes
    /// `node` an alias of it, unless the key is taken (by an alive task, or
    /// by one a pass created): dask's `key not in dsk`. Returns the new
    /// node, if any; it goes right before `node` in the order.
    pub(crate) fn try_rename(&mut self, node: NodeId, key: Key) -> Option<NodeId> {
        if self.src_holds(&key).is_some_and(|held| self.is_alive(held)) {
            return None;
        }
        let (index, inserted) = self.new_keys.insert_full(key);
        if !inserted {
            return None;
        }
        let new = NodeId::new(self.body.len());
        debug_assert_eq!(self.n_src + index, new.index());
        let i = node.index();
        self.body.push(self.body[i]);
        self.rows.push(self.rows[i]);
        self.renamed_from.push(node);
        if !self.sizes.is_empty() {
            self.sizes.push(self.sizes[i]);
        }
        if !self.costs.is_empty() {
            let cost = self.costs[i].take();
            self.costs.push(cost);
        }
        self.alive.grow(new.index() + 1);
        self.alive.insert(new.index());
        self.n_alive += 1;
        self.set(node, Slot::Ref(new), &[new]);
        Some(new)
    }

    /// Makes room for `additional` renamed tasks.
    pub(crate) fn reserve_new(&mut self, additional: usize) {
        self.new_keys.reserve(additional);
        self.body.reserve(additional);
        self.rows.reserve(additional);
        self.renamed_from.reserve(additional);
        self.sizes.reserve(additional);
        self.costs.reserve(additional);
    }

    /// Makes every reference to an alias in `is_alias` point at the task it
    /// aliases (its only reference), in terms and in rows.
    pub(crate) fn bypass_aliases(&mut self, is_alias: &FixedBitSet) {
        let mut row = Vec::new();
        let mut targets = Vec::new();
        let nodes: Vec<NodeId> = self.alive_nodes().collect();
        for node in nodes {
            if !self
                .deps(node)
                .iter()
                .any(|&d| is_alias.contains(d.index()))
            {
                continue;
            }
            row.clear();
            row.extend_from_slice(self.deps(node));
            targets.clear();
            targets.extend(row.iter().map(|&d| {
                if is_alias.contains(d.index()) {
                    self.deps(d)[0]
                } else {
                    d
                }
            }));
            let body = self.body(node);
            let body = self.substitute(body, &row, &mut |i, d| {
                (targets[i] != d).then_some(Slot::Ref(targets[i]))
            });
            self.set(node, body, &targets);
        }
    }

    /// Frees the part of the arena (past the source rows) that rows no
    /// longer use.
    pub(crate) fn compact(&mut self) {
        let src_len = *self.src_refs.last().expect("offsets start with 0");
        let used: usize = self
            .alive
            .ones()
            .map(|i| self.rows[i])
            .filter(|&(start, _)| start >= src_len)
            .map(|(_, len)| len as usize)
            .sum();
        let src_len = src_len as usize;
        if self.arena.len() - src_len <= 2 * used + 1024 {
            return;
        }
        let mut tail = Vec::with_capacity(used);
        for node in 0..self.rows.len() {
            let (start, len) = self.rows[node];
            if !self.alive.contains(node) {
                self.rows[node] = (0, 0);
                continue;
            }
            if (start as usize) < src_len {
                continue;
            }
            let new_start = (src_len + tail.len()) as u32;
            tail.extend_from_slice(&self.arena[start as usize..(start + len) as usize]);
            self.rows[node] = (new_start, len);
        }
        self.arena.truncate(src_len);
        self.arena.extend_from_slice(&tail);
    }
}
