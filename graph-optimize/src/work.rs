//! `Work`: the dense state every pass runs over. Bodies are borrowed from the
//! input graph until a pass changes them, references are node ids in one
//! arena, and the output graph is built once, at the end of a pipeline.

use std::borrow::Cow;

use fixedbitset::FixedBitSet;
use graph_core::{Body, Key, NodeId, Task, TaskGraph, Term};
use indexmap::IndexSet;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use crate::{Dependencies, Error};

/// "No node" in dense `u32` slots.
pub(crate) const NONE: u32 = u32::MAX;

/// A graph being optimized. Node ids `0..n_src` are the input's tasks; ids
/// past that are tasks a pass created (renamed fused tasks). Invariants: the
/// graph is acyclic, and an alive task references only alive tasks.
pub(crate) struct Work<'g> {
    src: &'g TaskGraph,
    n_src: usize,
    /// The keys of the tasks passes created, in node order from `n_src`.
    new_keys: IndexSet<Key, FxBuildHasher>,
    bodies: Vec<Cow<'g, Body>>,
    sizes: Vec<Option<u64>>,
    costs: Vec<Option<f64>>,
    alive: FixedBitSet,
    n_alive: usize,
    /// Row `n` of the references: `arena[rows[n].0..][..rows[n].1]`.
    rows: Vec<(u32, u32)>,
    arena: Vec<u32>,
    /// The task a node's body moved to when it was renamed (it became an alias).
    renamed_to: Vec<u32>,
}

/// A body that owns nothing, left behind while a body is being rewritten.
fn placeholder<'g>() -> Cow<'g, Body> {
    Cow::Owned(Body::Opaque(Vec::new()))
}

impl<'g> Work<'g> {
    /// Resolves the graph's references (or takes `deps`, checked against the
    /// bodies) and checks that the graph is acyclic.
    pub(crate) fn new(src: &'g TaskGraph, deps: Option<&Dependencies>) -> Result<Work<'g>, Error> {
        let n = src.len();
        let owned;
        // Dependencies from the graph's topology are known to be acyclic;
        // those handed in are checked.
        let (deps, checked) = match deps {
            Some(deps) => {
                check_dependencies(src, deps)?;
                (deps, false)
            }
            None => {
                owned = Dependencies::of(src)?;
                (&owned, true)
            }
        };
        let arena: Vec<u32> = deps.targets.iter().map(|node| node.as_u32()).collect();
        let rows = deps
            .offsets
            .windows(2)
            .map(|w| (w[0], w[1] - w[0]))
            .collect();
        let mut alive = FixedBitSet::with_capacity(n);
        alive.insert_range(..);
        let work = Work {
            src,
            n_src: n,
            new_keys: IndexSet::default(),
            bodies: src
                .iter()
                .map(|(_, task)| Cow::Borrowed(&task.body))
                .collect(),
            sizes: src.iter().map(|(_, task)| task.size).collect(),
            costs: src.iter().map(|(_, task)| task.cost).collect(),
            alive,
            n_alive: n,
            rows,
            arena,
            renamed_to: vec![NONE; n],
        };
        if !checked {
            work.check_acyclic()?;
        }
        Ok(work)
    }

    /// A work graph over `src`'s keys with bodies the caller moved out of it
    /// (`src`'s own bodies are then placeholders) and its dependencies, which
    /// `Dependencies::of` computed before the bodies were moved: acyclic.
    pub(crate) fn from_parts(
        src: &'g TaskGraph,
        deps: Dependencies,
        bodies: Vec<Body>,
    ) -> Work<'g> {
        let n = src.len();
        debug_assert_eq!(bodies.len(), n);
        let arena: Vec<u32> = deps.targets.iter().map(|node| node.as_u32()).collect();
        let rows = deps
            .offsets
            .windows(2)
            .map(|w| (w[0], w[1] - w[0]))
            .collect();
        let mut alive = FixedBitSet::with_capacity(n);
        alive.insert_range(..);
        Work {
            src,
            n_src: n,
            new_keys: IndexSet::default(),
            bodies: bodies.into_iter().map(Cow::Owned).collect(),
            sizes: src.iter().map(|(_, task)| task.size).collect(),
            costs: src.iter().map(|(_, task)| task.cost).collect(),
            alive,
            n_alive: n,
            rows,
            arena,
            renamed_to: vec![NONE; n],
        }
    }

    /// Every node id, dead ones included.
    pub(crate) fn node_count(&self) -> usize {
        self.bodies.len()
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

    pub(crate) fn body(&self, node: u32) -> &Body {
        &self.bodies[node as usize]
    }

    /// The term of a node, unless it is opaque.
    pub(crate) fn term(&self, node: u32) -> Option<&Term> {
        self.bodies[node as usize].term()
    }

    /// Every reference of `node`, in preorder, repeats included.
    pub(crate) fn deps(&self, node: u32) -> &[u32] {
        let (start, len) = self.rows[node as usize];
        &self.arena[start as usize..(start + len) as usize]
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

    /// Whether a key is taken, by an alive task or by one a pass created.
    pub(crate) fn key_taken(&self, key: &Key) -> bool {
        self.find(key).is_some() || self.new_keys.contains(key)
    }

    pub(crate) fn set_deps(&mut self, node: u32, deps: &[u32]) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(deps);
        self.rows[node as usize] = (start, deps.len() as u32);
    }

    /// Takes a node's body out to rewrite it; put it back with [`Work::put`].
    pub(crate) fn take(&mut self, node: u32) -> Cow<'g, Body> {
        std::mem::replace(&mut self.bodies[node as usize], placeholder())
    }

    pub(crate) fn put(&mut self, node: u32, body: Cow<'g, Body>) {
        self.bodies[node as usize] = body;
    }

    /// Takes a node's term out, owned (cloned if still borrowed).
    ///
    /// # Panics
    ///
    /// If the node is opaque; callers never move opaque bodies.
    pub(crate) fn take_term(&mut self, node: u32) -> Term {
        match self.take(node).into_owned() {
            Body::Term(term) => term,
            Body::Opaque(_) => unreachable!("opaque tasks are never moved"),
        }
    }

    /// Removes a node; nothing may reference it any more.
    pub(crate) fn kill(&mut self, node: u32) {
        if self.alive.contains(node as usize) {
            self.alive.set(node as usize, false);
            self.n_alive -= 1;
            self.bodies[node as usize] = placeholder();
            self.rows[node as usize] = (0, 0);
        }
    }

    /// Adds `cost` of an absorbed task to `node`'s.
    pub(crate) fn add_cost(&mut self, node: u32, absorbed: u32) {
        let absorbed = self.costs[absorbed as usize];
        let cost = &mut self.costs[node as usize];
        *cost = match (*cost, absorbed) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Moves `node`'s body and references to a new task named `key` and makes
    /// `node` an alias of it. Returns the new node.
    pub(crate) fn rename(&mut self, node: u32, key: Key) -> u32 {
        let new = self.bodies.len() as u32;
        let body = self.take(node);
        self.bodies.push(body);
        let row = self.rows[node as usize];
        self.rows.push(row);
        self.sizes.push(self.sizes[node as usize]);
        let cost = self.costs[node as usize].take();
        self.costs.push(cost);
        self.alive.grow(new as usize + 1);
        self.alive.insert(new as usize);
        self.n_alive += 1;
        self.renamed_to.push(NONE);
        self.renamed_to[node as usize] = new;
        let (index, inserted) = self.new_keys.insert_full(key.clone());
        debug_assert!(inserted && self.n_src + index == new as usize);
        self.put(node, Cow::Owned(Body::Term(Term::Ref(key))));
        self.set_deps(node, &[new]);
        new
    }

    /// Makes room for `additional` renamed tasks.
    pub(crate) fn reserve_new(&mut self, additional: usize) {
        self.new_keys.reserve(additional);
        self.bodies.reserve(additional);
        self.rows.reserve(additional);
        self.sizes.reserve(additional);
        self.costs.reserve(additional);
        self.renamed_to.reserve(additional);
    }

    /// The task an alias made by [`Work::rename`] points to.
    pub(crate) fn renamed_to(&self, node: u32) -> Option<u32> {
        let to = self.renamed_to[node as usize];
        (to != NONE).then_some(to)
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
            let mut body = self.take(node);
            if let Body::Term(term) = body.to_mut() {
                let mut pos = 0;
                for_each_ref_mut(term, &mut |slot| {
                    let d = row[pos];
                    if is_alias.contains(d as usize) {
                        let target = self.deps(d)[0];
                        *slot = Term::Ref(self.key(target).clone());
                        row[pos] = target;
                    }
                    pos += 1;
                });
            } else if let Body::Opaque(keys) = body.to_mut() {
                for (slot, d) in keys.iter_mut().zip(row.iter_mut()) {
                    if is_alias.contains(*d as usize) {
                        let target = self.deps(*d)[0];
                        *slot = self.key(target).clone();
                        *d = target;
                    }
                }
            }
            self.put(node, body);
            self.set_deps(node, &row);
        }
    }

    /// A topological order of the alive nodes (dependencies first), by
    /// iterative depth-first search from each node in id order.
    pub(crate) fn topological_order(&self) -> Vec<u32> {
        match self.depth_first() {
            Ok(order) => order,
            Err(_) => unreachable!("work graphs stay acyclic"),
        }
    }

    fn check_acyclic(&self) -> Result<(), Error> {
        self.depth_first().map(drop)
    }

    fn depth_first(&self) -> Result<Vec<u32>, Error> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; self.node_count()];
        let mut order = Vec::with_capacity(self.n_alive);
        let mut stack: Vec<(u32, u32)> = Vec::new();
        for root in self.alive_nodes() {
            if state[root as usize] != NEW {
                continue;
            }
            state[root as usize] = OPEN;
            stack.push((root, 0));
            while let Some(&mut (node, ref mut next)) = stack.last_mut() {
                let deps = self.deps(node);
                if let Some(&dep) = deps.get(*next as usize) {
                    *next += 1;
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

    /// Frees the arena of rows no longer used.
    pub(crate) fn compact(&mut self) {
        let used: usize = self
            .alive_nodes()
            .map(|n| self.rows[n as usize].1 as usize)
            .sum();
        if self.arena.len() <= 2 * used + 1024 {
            return;
        }
        let mut arena = Vec::with_capacity(used);
        for node in 0..self.rows.len() {
            let (start, len) = self.rows[node];
            if !self.alive.contains(node) {
                self.rows[node] = (0, 0);
                continue;
            }
            let new_start = arena.len() as u32;
            arena.extend_from_slice(&self.arena[start as usize..(start + len) as usize]);
            self.rows[node] = (new_start, len);
        }
        self.arena = arena;
    }

    /// Builds the output graph and its dependencies. A renamed task takes the
    /// place of the task it was renamed from, just before it. Bodies and keys
    /// still borrowed from the input are cloned in parallel.
    pub(crate) fn finish(mut self) -> Result<crate::Optimized, Error> {
        let n_nodes = self.node_count();
        let mut emit: Vec<u32> = Vec::with_capacity(self.n_alive);
        let mut chain = Vec::new();
        for node in 0..self.n_src as u32 {
            chain.clear();
            let mut at = node;
            while let Some(to) = self.renamed_to(at) {
                chain.push(to);
                at = to;
            }
            emit.extend(chain.iter().rev().filter(|&&n| self.is_alive(n)));
            if self.is_alive(node) {
                emit.push(node);
            }
        }
        debug_assert_eq!(emit.len(), self.n_alive);
        let mut new_id = vec![NONE; n_nodes];
        for (i, &node) in emit.iter().enumerate() {
            new_id[node as usize] = i as u32;
        }
        let mut offsets = Vec::with_capacity(emit.len() + 1);
        offsets.push(0_u32);
        let mut targets = Vec::with_capacity(emit.len() * 2);
        for &node in &emit {
            for &dep in self.deps(node) {
                debug_assert!(self.is_alive(dep), "alive tasks reference alive tasks");
                targets.push(NodeId::from_u32(new_id[dep as usize]));
            }
            offsets.push(targets.len() as u32);
        }
        drop(new_id);

        let alive = &self.alive;
        let src = self.src;
        let n_src = self.n_src;
        let bodies = std::mem::take(&mut self.bodies);
        let mut bodies: Vec<Option<Body>> = bodies
            .into_par_iter()
            .enumerate()
            .map(|(i, body)| alive.contains(i).then(|| body.into_owned()))
            .collect();
        let mut keys: Vec<Option<Key>> = (0..n_src)
            .into_par_iter()
            .map(|i| alive.contains(i).then(|| src.key(NodeId::new(i)).clone()))
            .collect();
        keys.extend(std::mem::take(&mut self.new_keys).into_iter().map(Some));

        let mut graph = TaskGraph::with_capacity(emit.len());
        for &node in &emit {
            let i = node as usize;
            let task = Task {
                body: bodies[i].take().expect("an alive task has a body"),
                size: self.sizes[i],
                cost: self.costs[i],
            };
            graph.insert_task(keys[i].take().expect("an alive task has a key"), task)?;
        }
        Ok(crate::Optimized {
            graph,
            dependencies: Dependencies { offsets, targets },
        })
    }
}

/// Checks that `deps` has one row per task and as many references in each
/// row as the task's body holds.
fn check_dependencies(graph: &TaskGraph, deps: &Dependencies) -> Result<(), Error> {
    if deps.node_count() != graph.len() {
        return Err(Error::DependenciesLength {
            tasks: graph.len(),
            listed: deps.node_count(),
        });
    }
    for (i, (key, task)) in graph.iter().enumerate() {
        let mut found = 0;
        task.body.for_each_ref(&mut |_| found += 1);
        let listed = deps.get(NodeId::new(i)).len();
        if found != listed {
            return Err(Error::DependenciesMismatch {
                key: key.clone(),
                found,
                listed,
            });
        }
    }
    Ok(())
}

/// Calls `f` on every reference of a term, in preorder, to rewrite it.
pub(crate) fn for_each_ref_mut(term: &mut Term, f: &mut impl FnMut(&mut Term)) {
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
