//! `Work`: the dense state every pass runs over. Task bodies stay where they
//! are (in the input graph, or moved out of it once) and are never copied
//! while passes run: a changed body is an expression in an arena that
//! shares its parts, references are node ids, and the output graph is built
//! once, at the end of a pipeline, by materializing each body.

use fixedbitset::FixedBitSet;
use graph_core::{Body, Key, NodeId, Op, Task, TaskGraph, Term, Value};
use indexmap::IndexSet;
use rayon::prelude::*;
use rustc_hash::{FxBuildHasher, FxHashSet};

use crate::deps::Resolved;
use crate::{Dependencies, Error, Optimized};

/// "No node" in dense `u32` slots.
pub(crate) const NONE: u32 = u32::MAX;

/// A body, or a part of one, in the work state.
///
/// Every pass only ever replaces references: by another task's body (inline,
/// fuse) or by a reference to another task (renaming, dropping aliases). So a
/// body is always a source body whose references have been replaced, and a
/// replacement is itself such a body: sharing these is what keeps passes
/// from copying terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Slot {
    /// A reference to the result of a node (an alias, as a whole body).
    Ref(u32),
    /// The body of source node `m`, with its own references.
    Src(u32),
    /// An expression of the arena.
    Expr(u32),
}

/// A source body with its references replaced by slots.
#[derive(Clone, Copy, Debug)]
struct Expr {
    /// The source node whose body gives the shape.
    base: u32,
    /// Its slots are `slots[start..start + n]`, one per reference of the
    /// base body, in preorder (`n` is the base's reference count).
    start: u32,
    /// How many references the expression holds once expanded.
    n_refs: u32,
}

/// The outermost shape of a body, which most passes decide on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An opaque task.
    Opaque,
    /// A bare reference: an alias.
    Ref,
    /// The literal `None`.
    Null,
    /// Any other literal.
    Lit,
    /// A call.
    Call,
    /// A list.
    List,
}

impl Kind {
    /// The shape of a source body.
    pub(crate) fn of(body: &Body) -> Kind {
        match body {
            Body::Opaque(_) => Kind::Opaque,
            Body::Term(Term::Ref(_)) => Kind::Ref,
            Body::Term(Term::Lit(Value::Null)) => Kind::Null,
            Body::Term(Term::Lit(_)) => Kind::Lit,
            Body::Term(Term::Call { .. }) => Kind::Call,
            Body::Term(Term::List(_)) => Kind::List,
        }
    }
}

/// A graph being optimized. Node ids `0..n_src` are the input's tasks; ids
/// past that are tasks a pass created (renamed fused tasks). Invariants: the
/// graph is acyclic, and an alive task references only alive tasks.
pub(crate) struct Work<'g> {
    src: &'g TaskGraph,
    /// The input's bodies when they were moved out of it (`src`'s are then
    /// placeholders).
    owned: Option<Vec<Body>>,
    n_src: usize,
    /// The references of each source body, in preorder, are
    /// `arena[src_refs[m]..src_refs[m + 1]]`: the arena starts with them,
    /// and that part of it never changes.
    src_refs: Vec<u32>,
    /// The shape of each source body.
    kinds: Vec<Kind>,
    /// How many calls and lists each source body nests.
    nestings: Vec<u32>,
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
    arena: Vec<u32>,
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
    /// Resolves the graph's references (or takes `deps`, checked against the
    /// bodies) and checks that the graph is acyclic.
    pub(crate) fn new(src: &'g TaskGraph, deps: Option<&Dependencies>) -> Result<Work<'g>, Error> {
        let work = match deps {
            Some(deps) => {
                let work = Work::from_parts(src, crate::deps::check(src, deps)?, None);
                // Dependencies handed in are checked; those from the graph's
                // topology are known to be acyclic.
                work.check_acyclic()?;
                work
            }
            None => Work::from_parts(src, crate::deps::resolve(src)?, None),
        };
        Ok(work)
    }

    /// A work graph over `src`'s keys, resolved (and acyclic), with the
    /// bodies the caller moved out of it, if it did (`src`'s own bodies are
    /// then placeholders).
    pub(crate) fn from_parts(
        src: &'g TaskGraph,
        resolved: Resolved,
        owned: Option<Vec<Body>>,
    ) -> Work<'g> {
        let n = src.len();
        debug_assert!(owned.as_ref().is_none_or(|bodies| bodies.len() == n));
        let Resolved {
            deps: Dependencies { offsets, targets },
            kinds,
            nestings,
            sizes,
            costs,
        } = resolved;
        let arena: Vec<u32> = targets.into_iter().map(NodeId::as_u32).collect();
        // Room for the tasks passes may add (untouched room costs nothing).
        let mut rows = Vec::with_capacity(2 * n);
        rows.extend(offsets.windows(2).map(|w| (w[0], w[1] - w[0])));
        let mut body = Vec::with_capacity(2 * n);
        body.extend((0..n as u32).map(Slot::Src));
        let mut alive = FixedBitSet::with_capacity(n);
        alive.insert_range(..);
        Work {
            src,
            owned,
            n_src: n,
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

    pub(crate) fn is_alive(&self, node: u32) -> bool {
        self.alive.contains(node as usize)
    }

    pub(crate) fn alive(&self) -> &FixedBitSet {
        &self.alive
    }

    /// The alive nodes, in id order.
    pub(crate) fn alive_nodes(&self) -> impl Iterator<Item = u32> + '_ {
        self.alive.ones().map(|i| i as u32)
    }

    pub(crate) fn key(&self, node: u32) -> &Key {
        let i = node as usize;
        if i < self.n_src {
            self.src.key(NodeId::new(i))
        } else {
            &self.new_keys[i - self.n_src]
        }
    }

    /// The body of source node `m`.
    fn src_body(&self, m: u32) -> &Body {
        match &self.owned {
            Some(bodies) => &bodies[m as usize],
            None => &self.src.task(NodeId::from_u32(m)).body,
        }
    }

    /// The body of input task `m` as the input graph holds it.
    fn graph_body(&self, m: u32) -> &'g Body {
        &self.src.task(NodeId::from_u32(m)).body
    }

    /// The references of source body `m` as it was read.
    fn src_targets_of(&self, m: u32) -> &[u32] {
        &self.arena[self.src_refs[m as usize] as usize..self.src_refs[m as usize + 1] as usize]
    }

    /// The number of references source body `m` holds.
    fn src_ref_count(&self, m: u32) -> u32 {
        self.src_refs[m as usize + 1] - self.src_refs[m as usize]
    }

    /// A node's body.
    pub(crate) fn body(&self, node: u32) -> Slot {
        self.body[node as usize]
    }

    /// The outermost shape of a body.
    pub(crate) fn kind_of(&self, mut slot: Slot) -> Kind {
        loop {
            let base = match slot {
                Slot::Ref(_) => return Kind::Ref,
                Slot::Src(m) => return self.kinds[m as usize],
                Slot::Expr(e) => self.exprs[e as usize],
            };
            match self.kinds[base.base as usize] {
                // A source alias whose reference was replaced is what replaced it.
                Kind::Ref => slot = self.slots[base.start as usize],
                kind => return kind,
            }
        }
    }

    /// The outermost shape of a node's body.
    pub(crate) fn kind(&self, node: u32) -> Kind {
        self.kind_of(self.body[node as usize])
    }

    /// Whether a node's body is a term (not opaque).
    pub(crate) fn is_term(&self, node: u32) -> bool {
        self.kind(node) != Kind::Opaque
    }

    /// The op of a node whose body is a call.
    pub(crate) fn top_op(&self, node: u32) -> Option<&Op> {
        let mut slot = self.body[node as usize];
        let base = loop {
            match slot {
                Slot::Ref(_) => return None,
                Slot::Src(m) => break m,
                Slot::Expr(e) => {
                    let expr = self.exprs[e as usize];
                    if self.kinds[expr.base as usize] == Kind::Ref {
                        slot = self.slots[expr.start as usize];
                    } else {
                        break expr.base;
                    }
                }
            }
        };
        match self.src_body(base) {
            Body::Term(Term::Call { op, .. }) => Some(op),
            _ => None,
        }
    }

    /// The slots of an expression.
    fn expr_slots(&self, e: u32) -> &[Slot] {
        let expr = self.exprs[e as usize];
        let n = self.src_ref_count(expr.base) as usize;
        &self.slots[expr.start as usize..expr.start as usize + n]
    }

    /// How many references a body holds once expanded.
    fn n_refs(&self, slot: Slot) -> u32 {
        match slot {
            Slot::Ref(_) => 1,
            Slot::Src(m) => self.src_ref_count(m),
            Slot::Expr(e) => self.exprs[e as usize].n_refs,
        }
    }

    /// Calls `f` on every op called anywhere in a body, expanded; stops at
    /// the first `false`, which it returns.
    pub(crate) fn all_ops(&self, slot: Slot, f: &mut impl FnMut(&Op) -> bool) -> bool {
        let (base, slots) = match slot {
            Slot::Ref(_) => return true,
            Slot::Src(m) => (m, &[][..]),
            Slot::Expr(e) => (self.exprs[e as usize].base, self.expr_slots(e)),
        };
        match self.src_body(base) {
            Body::Term(term) => self.term_ops(term, slots, &mut 0, f),
            Body::Opaque(_) => true,
        }
    }

    /// [`Work::all_ops`] over a source term whose references are replaced
    /// by `slots`, if any, from `slots[*pos]` on.
    fn term_ops(
        &self,
        term: &Term,
        slots: &[Slot],
        pos: &mut usize,
        f: &mut impl FnMut(&Op) -> bool,
    ) -> bool {
        match term {
            Term::Lit(_) => true,
            Term::Ref(_) => {
                *pos += 1;
                slots
                    .get(*pos - 1)
                    .is_none_or(|&slot| self.all_ops(slot, f))
            }
            Term::Call { op, args } => {
                f(op) && args.iter().all(|arg| self.term_ops(arg, slots, pos, f))
            }
            Term::List(items) => items.iter().all(|item| self.term_ops(item, slots, pos, f)),
        }
    }

    /// The number of term nodes of a body, expanded, saturating; `memo`
    /// caches expressions' sizes (0 for unknown).
    pub(crate) fn size_of(&self, slot: Slot, memo: &mut Vec<usize>) -> usize {
        match slot {
            Slot::Ref(_) => 1,
            Slot::Src(m) => match self.src_body(m) {
                Body::Term(term) => term.size(),
                Body::Opaque(_) => 1,
            },
            Slot::Expr(e) => {
                let e = e as usize;
                if memo.len() <= e {
                    memo.resize(self.exprs.len(), 0);
                }
                if memo[e] != 0 {
                    return memo[e];
                }
                let base = self.exprs[e].base;
                let mut size = self.size_of(Slot::Src(base), memo);
                for &slot in self.expr_slots(e as u32) {
                    // Each slot replaces one reference (one node).
                    size = size.saturating_add(self.size_of(slot, memo)) - 1;
                }
                memo[e] = size.max(1);
                size
            }
        }
    }

    /// How many calls and lists a body nests once expanded ([`Term::nesting`]);
    /// an upper bound where an expression's references sit at different
    /// depths, exact for chains. `memo` caches expressions' figures.
    pub(crate) fn nesting_of(&self, slot: Slot, memo: &mut Vec<u32>) -> usize {
        match slot {
            Slot::Ref(_) => 0,
            Slot::Src(m) => self.nestings[m as usize] as usize,
            Slot::Expr(e) => {
                let i = e as usize;
                if memo.len() <= i {
                    memo.resize(self.exprs.len(), u32::MAX);
                }
                if memo[i] != u32::MAX {
                    return memo[i] as usize;
                }
                let base = self.nesting_of(Slot::Src(self.exprs[i].base), memo);
                let mut deepest = 0;
                for &slot in self.expr_slots(e) {
                    deepest = deepest.max(self.nesting_of(slot, memo));
                }
                let nesting = base.saturating_add(deepest);
                memo[i] = u32::try_from(nesting).unwrap_or(u32::MAX - 1);
                nesting
            }
        }
    }

    /// How many levels a task counts toward a `max_depth` limit: its body's
    /// nesting, and at least one (so that on tasks of one call each, the
    /// limit counts tasks).
    pub(crate) fn levels(&self, node: u32, memo: &mut Vec<u32>) -> usize {
        self.nesting_of(self.body(node), memo).max(1)
    }

    /// The alive node with this key.
    pub(crate) fn find(&self, key: &Key) -> Option<u32> {
        let node = match self.src.node_id(key) {
            Some(node) => node.as_u32(),
            None => (self.n_src + self.new_keys.get_index_of(key)?) as u32,
        };
        self.is_alive(node).then_some(node)
    }

    /// The alive node with this key, or an error naming it.
    pub(crate) fn require(&self, key: &Key) -> Result<u32, Error> {
        self.find(key)
            .ok_or_else(|| Error::UnknownKey { key: key.clone() })
    }

    /// A bit set of the alive nodes with these keys.
    pub(crate) fn key_set(&self, keys: &[Key]) -> Result<FixedBitSet, Error> {
        let mut set = FixedBitSet::with_capacity(self.node_count());
        for key in keys {
            set.insert(self.require(key)? as usize);
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
    pub(crate) fn deps(&self, node: u32) -> &[u32] {
        let (start, len) = self.rows[node as usize];
        &self.arena[start as usize..(start + len) as usize]
    }

    pub(crate) fn set_deps(&mut self, node: u32, deps: &[u32]) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(deps);
        self.rows[node as usize] = (start, deps.len() as u32);
    }

    /// Sets a node's body and its references.
    pub(crate) fn set(&mut self, node: u32, body: Slot, deps: &[u32]) {
        self.body[node as usize] = body;
        self.set_deps(node, deps);
    }

    /// A copy of `body` with the references at the positions (in preorder)
    /// where `pick` gives a slot replaced by it; `row` is `body`'s row. Parts
    /// without replacements are shared, not copied. `pick(position, dep)`
    /// must answer the same each time it is asked.
    pub(crate) fn substitute(
        &mut self,
        body: Slot,
        row: &[u32],
        pick: &mut impl FnMut(usize, u32) -> Option<Slot>,
    ) -> Slot {
        let mut pos = 0;
        self.subst(body, row, &mut pos, pick)
    }

    fn subst(
        &mut self,
        slot: Slot,
        row: &[u32],
        pos: &mut usize,
        pick: &mut impl FnMut(usize, u32) -> Option<Slot>,
    ) -> Slot {
        match slot {
            Slot::Ref(dep) => {
                debug_assert_eq!(row[*pos], dep);
                *pos += 1;
                pick(*pos - 1, dep).unwrap_or(slot)
            }
            Slot::Src(m) => {
                let n = self.src_ref_count(m) as usize;
                if n == 0 {
                    return slot;
                }
                let at = *pos;
                *pos += n;
                let mut changed: Option<usize> = None;
                for (i, &dep) in row[at..at + n].iter().enumerate() {
                    if let Some(new) = pick(at + i, dep) {
                        let start = *changed.get_or_insert_with(|| {
                            let start = self.slots.len();
                            self.slots
                                .extend(row[at..at + n].iter().map(|&d| Slot::Ref(d)));
                            start
                        });
                        self.slots[start + i] = new;
                    }
                }
                match changed {
                    None => slot,
                    Some(start) => self.push_expr(m, start),
                }
            }
            Slot::Expr(e) => {
                let expr = self.exprs[e as usize];
                let n_refs = expr.n_refs as usize;
                let at = *pos;
                if !(at..at + n_refs).any(|i| pick(i, row[i]).is_some()) {
                    // Nothing to replace in this part: share it.
                    *pos += n_refs;
                    return slot;
                }
                let n = self.src_ref_count(expr.base) as usize;
                let start = self.slots.len();
                self.slots
                    .extend_from_within(expr.start as usize..expr.start as usize + n);
                for i in 0..n {
                    let child = self.slots[start + i];
                    let new = self.subst(child, row, pos, pick);
                    self.slots[start + i] = new;
                }
                self.push_expr(expr.base, start)
            }
        }
    }

    /// Adds an expression over source body `base` whose slots start at
    /// `start` (already in the arena).
    fn push_expr(&mut self, base: u32, start: usize) -> Slot {
        let n = self.src_ref_count(base) as usize;
        let n_refs = self.slots[start..start + n]
            .iter()
            .map(|&slot| self.n_refs(slot))
            .sum();
        let e = self.exprs.len() as u32;
        self.exprs.push(Expr {
            base,
            start: start as u32,
            n_refs,
        });
        Slot::Expr(e)
    }

    /// Removes a node; nothing may reference it any more.
    pub(crate) fn kill(&mut self, node: u32) {
        if self.alive.contains(node as usize) {
            self.alive.set(node as usize, false);
            self.n_alive -= 1;
            self.rows[node as usize] = (0, 0);
        }
    }

    /// A node's size and cost.
    fn size_cost(&self, node: u32) -> (Option<u64>, Option<f64>) {
        let i = node as usize;
        (
            self.sizes.get(i).copied().flatten(),
            self.costs.get(i).copied().flatten(),
        )
    }

    /// Adds `cost` of an absorbed task to `node`'s.
    pub(crate) fn add_cost(&mut self, node: u32, absorbed: u32) {
        if self.costs.is_empty() {
            return;
        }
        let absorbed = self.costs[absorbed as usize];
        let cost = &mut self.costs[node as usize];
        *cost = match (*cost, absorbed) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Moves `node`'s body and references to a new task named `key` and makes
    /// `node` an alias of it, unless the key is taken (by an alive task, or
    /// by one a pass created): dask's `key not in dsk`. Returns the new
    /// node, if any.
    pub(crate) fn try_rename(&mut self, node: u32, key: Key) -> Option<u32> {
        if self
            .src_holds(&key)
            .is_some_and(|held| self.is_alive(held.as_u32()))
        {
            return None;
        }
        let (index, inserted) = self.new_keys.insert_full(key);
        if !inserted {
            return None;
        }
        let new = self.body.len() as u32;
        debug_assert_eq!(self.n_src + index, new as usize);
        let i = node as usize;
        self.body.push(self.body[i]);
        self.rows.push(self.rows[i]);
        if !self.sizes.is_empty() {
            self.sizes.push(self.sizes[i]);
        }
        if !self.costs.is_empty() {
            let cost = self.costs[i].take();
            self.costs.push(cost);
        }
        self.alive.grow(new as usize + 1);
        self.alive.insert(new as usize);
        self.n_alive += 1;
        self.set(node, Slot::Ref(new), &[new]);
        Some(new)
    }

    /// Makes room for `additional` renamed tasks.
    pub(crate) fn reserve_new(&mut self, additional: usize) {
        self.new_keys.reserve(additional);
        self.body.reserve(additional);
        self.rows.reserve(additional);
        self.sizes.reserve(additional);
        self.costs.reserve(additional);
    }

    /// Makes every reference to an alias in `is_alias` point at the task it
    /// aliases (its only reference), in terms and in rows.
    pub(crate) fn bypass_aliases(&mut self, is_alias: &FixedBitSet) {
        let mut row = Vec::new();
        let nodes: Vec<u32> = self.alive_nodes().collect();
        for node in nodes {
            if !self
                .deps(node)
                .iter()
                .any(|&d| is_alias.contains(d as usize))
            {
                continue;
            }
            row.clear();
            row.extend_from_slice(self.deps(node));
            let targets: Vec<u32> = row
                .iter()
                .map(|&d| {
                    if is_alias.contains(d as usize) {
                        self.deps(d)[0]
                    } else {
                        d
                    }
                })
                .collect();
            let body = self.body[node as usize];
            let body = self.substitute(body, &row, &mut |i, d| {
                (targets[i] != d).then_some(Slot::Ref(targets[i]))
            });
            self.set(node, body, &targets);
        }
    }

    /// A topological order of the alive nodes (dependencies first), by
    /// iterative depth-first search from each node in id order.
    pub(crate) fn topological_order(&self) -> Vec<u32> {
        match self.depth_first(None) {
            Ok(order) => order,
            Err(_) => unreachable!("work graphs stay acyclic"),
        }
    }

    /// A topological order of the nodes in `within` (alive ones), following
    /// only the references between them.
    pub(crate) fn topological_order_within(&self, within: &FixedBitSet) -> Vec<u32> {
        match self.depth_first(Some(within)) {
            Ok(order) => order,
            Err(_) => unreachable!("work graphs stay acyclic"),
        }
    }

    fn check_acyclic(&self) -> Result<(), Error> {
        self.depth_first(None).map(drop)
    }

    fn depth_first(&self, within: Option<&FixedBitSet>) -> Result<Vec<u32>, Error> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; self.node_count()];
        let mut order = Vec::with_capacity(match within {
            Some(set) => set.count_ones(..),
            None => self.n_alive,
        });
        let inside = |node: u32| within.is_none_or(|set| set.contains(node as usize));
        let mut stack: Vec<(u32, u32)> = Vec::new();
        let roots: Box<dyn Iterator<Item = u32>> = match within {
            Some(set) => Box::new(set.ones().map(|i| i as u32).filter(|&n| self.is_alive(n))),
            None => Box::new(self.alive_nodes()),
        };
        for root in roots {
            if state[root as usize] != NEW {
                continue;
            }
            state[root as usize] = OPEN;
            stack.push((root, 0));
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let deps = self.deps(node);
                if let Some(&dep) = deps.get(*next as usize) {
                    *next += 1;
                    if !inside(dep) {
                        continue;
                    }
                    match state[dep as usize] {
                        NEW => {
                            state[dep as usize] = OPEN;
                            stack.push((dep, 0));
                        }
                        OPEN => {
                            if dep == node {
                                return Err(Error::SelfReference {
                                    key: self.key(node).clone(),
                                });
                            }
                            let at = stack
                                .iter()
                                .position(|&(n, _)| n == dep)
                                .expect("an open node is on the stack");
                            // Each task on the cycle depends on the next.
                            let mut keys: Vec<Key> = stack[at..]
                                .iter()
                                .map(|&(n, _)| self.key(n).clone())
                                .collect();
                            keys.push(self.key(dep).clone());
                            return Err(graph_core::Error::Cycle { keys }.into());
                        }
                        _ => {}
                    }
                } else {
                    state[node as usize] = DONE;
                    order.push(node);
                    stack.pop();
                }
            }
        }
        Ok(order)
    }

    /// Frees the part of the arena (past the source rows) that rows no
    /// longer use.
    pub(crate) fn compact(&mut self) {
        let src_len = *self.src_refs.last().expect("offsets start with 0");
        let used: usize = self
            .alive_nodes()
            .map(|n| self.rows[n as usize])
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

    /// The alive nodes in output order: the input's tasks that stay, in
    /// order, then the tasks passes created (renamed fused tasks), in the
    /// order they were made.
    fn emit_order(&self) -> Vec<u32> {
        self.alive_nodes().collect()
    }

    /// The output's dependencies: the alive nodes' rows, renumbered to their
    /// positions in `emit`.
    fn output_dependencies(&self, emit: &[u32]) -> Dependencies {
        let mut new_id = vec![NONE; self.node_count()];
        for (i, &node) in emit.iter().enumerate() {
            new_id[node as usize] = i as u32;
        }
        let mut offsets = Vec::with_capacity(emit.len() + 1);
        offsets.push(0_u32);
        let mut targets = Vec::with_capacity(emit.len() * 2);
        for &node in emit {
            for &dep in self.deps(node) {
                debug_assert!(self.is_alive(dep), "alive tasks reference alive tasks");
                targets.push(NodeId::from_u32(new_id[dep as usize]));
            }
            offsets.push(targets.len() as u32);
        }
        Dependencies { offsets, targets }
    }

    /// Builds the output graph and its dependencies, copying from the input
    /// graph every body and key it keeps (a work graph made by
    /// [`Work::new`]).
    pub(crate) fn finish(self) -> Result<Optimized, Error> {
        debug_assert!(self.owned.is_none(), "moved bodies go through into_plan");
        let emit = self.emit_order();
        let dependencies = self.output_dependencies(&emit);
        let n_src = self.n_src;
        // A node's key, copied (keys share their parts, so this allocates
        // nothing).
        let key = |x: u32| -> Key {
            let x = x as usize;
            if x < n_src {
                builder_key(&self, x)
            } else {
                self.new_keys[x - n_src].clone()
            }
        };
        // The bodies are built in parallel, each from the input's terms and
        // the work graph, both only read; the graph is then filled in order.
        let bodies: Vec<Body> = emit
            .par_iter()
            .with_min_len(1024)
            .map_init(
                || Builder::new(&self, None),
                |builder, &node| builder.body(self.body[node as usize], &key),
            )
            .collect();
        let mut graph = TaskGraph::with_capacity(emit.len());
        for (at, (&node, body)) in emit.iter().zip(bodies).enumerate() {
            if let Some(&next) = emit.get(at + AHEAD) {
                if (next as usize) < n_src {
                    touch(self.src.key(NodeId::from_u32(next)));
                }
            }
            let (size, cost) = self.size_cost(node);
            graph.insert_task(key(node), Task { body, size, cost })?;
        }
        Ok(Optimized {
            graph,
            dependencies,
        })
    }

    /// Everything the output needs but the input's keys, for a work graph
    /// whose bodies were moved out of the input ([`Work::from_parts`]): the
    /// bodies that must be built are built, moving the source bodies they
    /// are made of on their last use, so that the input can then be taken
    /// apart for its keys ([`Plan::build`]).
    pub(crate) fn into_plan(mut self) -> Plan {
        let emit = self.emit_order();
        let dependencies = self.output_dependencies(&emit);
        let owned = self.owned.take().expect("bodies were moved out");
        let mut builder = Builder::new(&self, Some(owned));
        for &node in &emit {
            builder.count(self.body[node as usize]);
        }
        // A task whose body is its own source body, used nowhere else, moves
        // as it is when the output is built; the others are built now.
        let moves = |builder: &Builder<'_, '_>, node: u32| match self.body[node as usize] {
            Slot::Src(m) => builder.uses[m as usize] == 1,
            _ => false,
        };
        let moved: Vec<bool> = emit.iter().map(|&node| moves(&builder, node)).collect();
        let mut built = Vec::with_capacity(moved.iter().filter(|&&moved| !moved).count());
        for (&node, &moved) in emit.iter().zip(&moved) {
            if !moved {
                let key = |x: u32| builder_key(&self, x as usize);
                built.push(builder.body(self.body[node as usize], &key));
            }
        }
        let bodies = builder.owned.take().expect("bodies were moved out");
        drop(builder);
        Plan {
            n_src: self.n_src,
            new_keys: std::mem::take(&mut self.new_keys)
                .into_iter()
                .map(Some)
                .collect(),
            sizes: std::mem::take(&mut self.sizes),
            costs: std::mem::take(&mut self.costs),
            moved,
            body_of: emit
                .iter()
                .map(|&node| match self.body[node as usize] {
                    Slot::Src(m) => m,
                    _ => NONE,
                })
                .collect(),
            emit,
            bodies,
            built,
            dependencies,
        }
    }
}

/// The key of node `x` of a work graph, copied.
fn builder_key(work: &Work<'_>, x: usize) -> Key {
    work.key(x as u32).clone()
}

/// The output of a pipeline but for the input's keys (see
/// [`Work::into_plan`]).
pub(crate) struct Plan {
    n_src: usize,
    /// The keys of the tasks passes created, by node id from `n_src`.
    new_keys: Vec<Option<Key>>,
    /// The nodes of the output, in its order.
    emit: Vec<u32>,
    /// The nodes' sizes and costs, as in [`Work`].
    sizes: Vec<Option<u64>>,
    costs: Vec<Option<f64>>,
    /// Whether each moves its source body as it is...
    moved: Vec<bool>,
    /// ... which is this one of `bodies`.
    body_of: Vec<u32>,
    bodies: Vec<Body>,
    /// The bodies of the others, in order.
    built: Vec<Body>,
    dependencies: Dependencies,
}

impl Plan {
    /// The output graph, made from the input graph the bodies were moved out
    /// of: the input tasks that stay are kept in place, in order, and given
    /// their bodies (their keys are not hashed again); the tasks passes
    /// created follow.
    pub(crate) fn build(self, mut graph: TaskGraph) -> Result<Optimized, Error> {
        let Plan {
            n_src,
            mut new_keys,
            emit,
            sizes,
            costs,
            moved,
            body_of,
            mut bodies,
            built,
            dependencies,
        } = self;
        let mut built = built.into_iter();
        let mut body = |at: usize| -> Body {
            if moved[at] {
                std::mem::replace(&mut bodies[body_of[at] as usize], Body::Opaque(Vec::new()))
            } else {
                built
                    .next()
                    .expect("a body was built for each task that does not move")
            }
        };
        let size_cost = |i: usize| {
            (
                sizes.get(i).copied().flatten(),
                costs.get(i).copied().flatten(),
            )
        };
        // The emitted input tasks come first, in node order.
        let mut at = 0;
        graph.retain(|node, _, task| {
            if emit.get(at) != Some(&node.as_u32()) {
                return false;
            }
            task.body = body(at);
            (task.size, task.cost) = size_cost(node.index());
            at += 1;
            true
        });
        for (at, &node) in emit.iter().enumerate().skip(at) {
            let i = node as usize;
            debug_assert!(i >= n_src, "input tasks were emitted first");
            let key = new_keys[i - n_src]
                .take()
                .expect("a created task is emitted once");
            let (size, cost) = size_cost(i);
            graph.insert_task(
                key,
                Task {
                    body: body(at),
                    size,
                    cost,
                },
            )?;
        }
        Ok(Optimized {
            graph,
            dependencies,
        })
    }
}

/// How many tasks ahead of the one being inserted its key is read
/// (see [`touch`]).
const AHEAD: usize = 8;

/// Reads the parts of a key that hashing it reads, so that they are in the
/// cache when it is hashed a little later: the input's keys live in many
/// small allocations, and waiting on each of them in turn is a large part of
/// the cost of building a graph from them.
fn touch(key: &Key) {
    fn first_byte(key: &Key) -> u8 {
        match key {
            Key::Str(s) => s.as_bytes().first().copied().unwrap_or(0),
            Key::Tuple(parts) => parts.first().map_or(0, first_byte),
            Key::Int(i) => *i as u8,
            Key::Float(_) => 0,
        }
    }
    std::hint::black_box(first_byte(key));
}

/// Builds the output's bodies from a work graph's slots.
struct Builder<'a, 'g> {
    work: &'a Work<'g>,
    /// The source bodies, when they were moved out of the input: each is
    /// moved into the output by its last use, and copied before that.
    owned: Option<Vec<Body>>,
    /// How many more times each source body will be used.
    uses: Vec<u32>,
    /// The stacks of [`Builder::term`], kept from term to term.
    steps: Vec<Step>,
    built: Vec<Term>,
}

/// A step of [`Builder::term`].
enum Step {
    Visit(Slot),
    /// Put the last `n` terms built into expression `e`'s base.
    Assemble(u32, usize),
}

impl<'a, 'g> Builder<'a, 'g> {
    /// A builder over a work graph; `owned` are the source bodies when they
    /// were moved out of the input.
    fn new(work: &'a Work<'g>, owned: Option<Vec<Body>>) -> Self {
        Builder {
            uses: if owned.is_some() {
                vec![0; work.n_src]
            } else {
                Vec::new()
            },
            owned,
            work,
            steps: Vec::new(),
            built: Vec::new(),
        }
    }

    /// Counts the uses of source bodies that building `slot` will make.
    fn count(&mut self, slot: Slot) {
        // An explicit stack: expressions nest as deep as the chains fused.
        let mut stack = vec![slot];
        while let Some(slot) = stack.pop() {
            match slot {
                Slot::Ref(_) => {}
                Slot::Src(m) => self.uses[m as usize] += 1,
                Slot::Expr(e) => {
                    self.uses[self.work.exprs[e as usize].base as usize] += 1;
                    stack.extend_from_slice(self.work.expr_slots(e));
                }
            }
        }
    }

    /// Source body `m`: moved out if this is its last use, else copied.
    fn source(&mut self, m: u32) -> Body {
        match &mut self.owned {
            Some(owned) => {
                let uses = &mut self.uses[m as usize];
                *uses -= 1;
                if *uses == 0 {
                    std::mem::replace(&mut owned[m as usize], Body::Opaque(Vec::new()))
                } else {
                    owned[m as usize].clone()
                }
            }
            None => self.work.graph_body(m).clone(),
        }
    }

    /// The term of source body `m`, as [`Builder::source`].
    fn source_term(&mut self, m: u32) -> Term {
        match self.source(m) {
            Body::Term(term) => term,
            Body::Opaque(_) => unreachable!("opaque tasks are never substituted"),
        }
    }

    /// The body a slot stands for; `key(x)` gives node `x`'s key.
    fn body(&mut self, slot: Slot, key: &impl Fn(u32) -> Key) -> Body {
        let e = match slot {
            Slot::Ref(node) => return Body::Term(Term::Ref(key(node))),
            Slot::Src(m) => return self.source(m),
            Slot::Expr(e) => e,
        };
        let work = self.work;
        let base = work.exprs[e as usize].base;
        if work.kinds[base as usize] != Kind::Opaque {
            return Body::Term(self.term(e, key));
        }
        // Only references are ever put into an opaque task.
        let slots = work.expr_slots(e);
        let targets = work.src_targets_of(base);
        let Body::Opaque(mut keys) = self.source(base) else {
            unreachable!("the shape of a source body does not change")
        };
        for (old, (&slot, &target)) in keys.iter_mut().zip(slots.iter().zip(targets)) {
            match slot {
                Slot::Ref(node) if node == target => {}
                Slot::Ref(node) => *old = key(node),
                _ => unreachable!("nothing is substituted into opaque tasks"),
            }
        }
        Body::Opaque(keys)
    }

    /// The term expression `root` stands for, built bottom-up with an
    /// explicit stack (expressions nest as deep as the chains fused): a
    /// source term whose references are replaced by the terms of the slots
    /// that differ from its original references.
    fn term(&mut self, root: u32, key: &impl Fn(u32) -> Key) -> Term {
        let work = self.work;
        let mut steps = std::mem::take(&mut self.steps);
        let mut built = std::mem::take(&mut self.built);
        steps.push(Step::Visit(Slot::Expr(root)));
        while let Some(step) = steps.pop() {
            match step {
                Step::Visit(Slot::Ref(node)) => built.push(Term::Ref(key(node))),
                Step::Visit(Slot::Src(m)) => {
                    let term = self.source_term(m);
                    built.push(term);
                }
                Step::Visit(Slot::Expr(e)) => {
                    let slots = work.expr_slots(e);
                    let targets = work.src_targets_of(work.exprs[e as usize].base);
                    let replaced = slots
                        .iter()
                        .zip(targets)
                        .filter(|&(&slot, &target)| slot != Slot::Ref(target))
                        .count();
                    steps.push(Step::Assemble(e, replaced));
                    // Visited in order: pushed in reverse.
                    for (&slot, &target) in slots.iter().zip(targets).rev() {
                        if slot != Slot::Ref(target) {
                            steps.push(Step::Visit(slot));
                        }
                    }
                }
                Step::Assemble(e, replaced) => {
                    let base = work.exprs[e as usize].base;
                    let slots = work.expr_slots(e);
                    let targets = work.src_targets_of(base);
                    let from = built.len() - replaced;
                    let mut children = built.drain(from..);
                    let term = match &self.owned {
                        // Copied from the input as it is put together, which
                        // copies no reference only to replace it.
                        None => match work.graph_body(base) {
                            Body::Term(term) => {
                                assemble(term, slots, targets, &mut 0, &mut children)
                            }
                            Body::Opaque(_) => unreachable!("opaque tasks are never substituted"),
                        },
                        Some(_) => {
                            let mut term = self.source_term(base);
                            let mut pos = 0;
                            for_each_ref_mut(&mut term, &mut |at| {
                                if slots[pos] != Slot::Ref(targets[pos]) {
                                    *at = children.next().expect("a term per replaced reference");
                                }
                                pos += 1;
                            });
                            term
                        }
                    };
                    drop(children);
                    built.push(term);
                }
            }
        }
        debug_assert_eq!(built.len(), 1);
        let term = built.pop().expect("the root was built");
        self.steps = steps;
        self.built = built;
        term
    }
}

/// A copy of a source term whose references that differ from the original
/// `targets` are replaced, in order, by `children`.
fn assemble(
    term: &Term,
    slots: &[Slot],
    targets: &[u32],
    pos: &mut usize,
    children: &mut impl Iterator<Item = Term>,
) -> Term {
    match term {
        Term::Lit(value) => Term::Lit(value.clone()),
        Term::Ref(old) => {
            *pos += 1;
            if slots[*pos - 1] == Slot::Ref(targets[*pos - 1]) {
                Term::Ref(old.clone())
            } else {
                children.next().expect("a term per replaced reference")
            }
        }
        Term::Call { op, args } => Term::Call {
            op: op.clone(),
            args: args
                .iter()
                .map(|arg| assemble(arg, slots, targets, pos, children))
                .collect(),
        },
        Term::List(items) => Term::List(
            items
                .iter()
                .map(|item| assemble(item, slots, targets, pos, children))
                .collect(),
        ),
    }
}

/// Calls `f` on every reference of a term, in preorder, to rewrite it.
fn for_each_ref_mut(term: &mut Term, f: &mut impl FnMut(&mut Term)) {
    match term {
        Term::Lit(_) => {}
        Term::Ref(_) => f(term),
        Term::Call { args: items, .. } | Term::List(items) => {
            for item in items {
                for_each_ref_mut(item, f);
            }
        }
    }
}
