//! The output of a work graph: its bodies materialized (`Builder`), the
//! graph built once (`Work::finish`, or `Work::into_plan` then
//! `Plan::build` when the input's bodies were moved out), and handed its
//! references so that the next pass resolves no key.

use graph_core::{Body, Key, NodeId, References, Task, TaskGraph, Term};
use rayon::prelude::*;

use super::Work;
use super::body::{Kind, Slot};
use crate::Error;

impl Work<'_> {
    /// The alive nodes in output order: the input's tasks that stay, in
    /// order, then the tasks passes created (renamed fused tasks), in the
    /// order they were made.
    fn emit_order(&self) -> Vec<NodeId> {
        self.alive_nodes().collect()
    }

    /// The output's references: the alive nodes' rows, renumbered to their
    /// positions in `emit` (which is in increasing id order), in parallel.
    fn output_references(&self, emit: &[NodeId]) -> References {
        debug_assert!(emit.windows(2).all(|w| w[0] < w[1]));
        let mut new_id: Vec<Option<NodeId>> = vec![None; self.node_count()];
        new_id
            .par_chunks_mut(CHUNK)
            .enumerate()
            .for_each(|(chunk, new_id)| {
                let first = chunk * CHUNK;
                let from = emit.partition_point(|node| node.index() < first);
                for (at, node) in emit.iter().enumerate().skip(from) {
                    match new_id.get_mut(node.index() - first) {
                        Some(slot) => *slot = Some(NodeId::new(at)),
                        None => break,
                    }
                }
            });
        let mut offsets = Vec::with_capacity(emit.len() + 1);
        offsets.push(0_u32);
        let mut total = 0_u32;
        for &node in emit {
            total += self.rows[node.index()].1;
            offsets.push(total);
        }
        // Each chunk of rows fills its own part of the targets.
        let mut targets = vec![NodeId::from_u32(0); total as usize];
        let mut parts = Vec::with_capacity(emit.len().div_ceil(CHUNK));
        let mut rest = targets.as_mut_slice();
        for start in (0..emit.len()).step_by(CHUNK) {
            let end = (start + CHUNK).min(emit.len());
            let (part, tail) = rest.split_at_mut((offsets[end] - offsets[start]) as usize);
            parts.push(part);
            rest = tail;
        }
        emit.par_chunks(CHUNK).zip(parts).for_each(|(nodes, part)| {
            let mut at = 0;
            for &node in nodes {
                for &dep in self.deps(node) {
                    part[at] = new_id[dep.index()].expect("alive tasks reference alive tasks");
                    at += 1;
                }
            }
        });
        References::from_rows(offsets, targets).expect("the rows of the output")
    }

    /// Builds the output graph, copying from the input graph every body and
    /// key it keeps (a work graph made by [`Work::new`]), and hints it its
    /// references.
    pub(crate) fn finish(self) -> Result<TaskGraph, Error> {
        debug_assert!(self.owned.is_none(), "moved bodies go through into_plan");
        let emit = self.emit_order();
        let references = self.output_references(&emit);
        // A node's key, copied (keys share their parts, so this allocates
        // nothing).
        let key = |node: NodeId| -> Key { self.key(node).clone() };
        // The bodies are built in parallel, each from the input's terms and
        // the work graph, both only read; the graph is then filled in order.
        let bodies: Vec<Body> = emit
            .par_iter()
            .with_min_len(1024)
            .map_init(
                || Builder::new(&self, None),
                |builder, &node| builder.body(self.body(node), &key),
            )
            .collect();
        let mut graph = TaskGraph::with_capacity(emit.len());
        for (at, (&node, body)) in emit.iter().zip(bodies).enumerate() {
            if let Some(&next) = emit.get(at + AHEAD)
                && next.index() < self.n_src
            {
                touch(self.src.key(next));
            }
            let (size, cost) = self.size_cost(node);
            graph.insert_task(key(node), Task { body, size, cost })?;
        }
        hint(&mut graph, references);
        Ok(graph)
    }

    /// Everything the output needs but the input's keys, for a work graph
    /// whose bodies were moved out of the input ([`Work::from_parts`]): the
    /// bodies that must be built are built, moving the source bodies they
    /// are made of on their last use, so that the input can then be taken
    /// apart for its keys ([`Plan::build`]).
    pub(crate) fn into_plan(mut self) -> Plan {
        let emit = self.emit_order();
        let references = self.output_references(&emit);
        let owned = self.owned.take().expect("bodies were moved out");
        let mut builder = Builder::new(&self, Some(owned));
        for &node in &emit {
            builder.count(self.body(node));
        }
        // A task whose body is its own source body, used nowhere else, moves
        // as it is when the output is built; the others are built now.
        let moves = |builder: &Builder<'_, '_>, node: NodeId| match self.body(node) {
            Slot::Src(m) if builder.uses[m.index()] == 1 => Some(m),
            _ => None,
        };
        let moved: Vec<Option<NodeId>> = emit.iter().map(|&node| moves(&builder, node)).collect();
        let mut built = Vec::with_capacity(moved.iter().filter(|moved| moved.is_none()).count());
        let key = |node: NodeId| self.key(node).clone();
        for (&node, moved) in emit.iter().zip(&moved) {
            if moved.is_none() {
                built.push(builder.body(self.body(node), &key));
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
            emit,
            bodies,
            built,
            references,
        }
    }
}

/// Hands `graph` its references; in debug builds, first checks them as the
/// graph will (every reference names the key of the node given for it).
fn hint(graph: &mut TaskGraph, references: References) {
    #[cfg(debug_assertions)]
    for (i, (key, task)) in graph.iter().enumerate() {
        let row = references.get(NodeId::new(i));
        let mut at = 0;
        task.body.for_each_ref(&mut |dep| {
            assert_eq!(graph.key(row[at]), dep, "reference {at} of task {key}");
            at += 1;
        });
        assert_eq!(at, row.len(), "the references of task {key}");
    }
    graph.hint_references(references);
}

/// The output of a pipeline but for the input's keys (see
/// [`Work::into_plan`]).
pub(crate) struct Plan {
    n_src: usize,
    /// The keys of the tasks passes created, by node id from `n_src`.
    new_keys: Vec<Option<Key>>,
    /// The nodes of the output, in its order.
    emit: Vec<NodeId>,
    /// The nodes' sizes and costs, as in [`Work`].
    sizes: Vec<Option<u64>>,
    costs: Vec<Option<f64>>,
    /// For each, the source body it moves as it is (which is in `bodies`),
    /// if it does...
    moved: Vec<Option<NodeId>>,
    bodies: Vec<Body>,
    /// ... and the bodies of the others, in order.
    built: Vec<Body>,
    references: References,
}

impl Plan {
    /// The output graph, made from the input graph the bodies were moved out
    /// of: the input tasks that stay are kept in place, in order, and given
    /// their bodies (their keys are not hashed again); the tasks passes
    /// created follow. The graph is hinted its references.
    pub(crate) fn build(self, mut graph: TaskGraph) -> Result<TaskGraph, Error> {
        let Plan {
            n_src,
            mut new_keys,
            emit,
            sizes,
            costs,
            moved,
            mut bodies,
            built,
            references,
        } = self;
        let mut built = built.into_iter();
        let mut body = |at: usize| -> Body {
            match moved[at] {
                Some(m) => std::mem::replace(&mut bodies[m.index()], Body::Opaque(Vec::new())),
                None => built
                    .next()
                    .expect("a body was built for each task that does not move"),
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
            if emit.get(at) != Some(&node) {
                return false;
            }
            task.body = body(at);
            (task.size, task.cost) = size_cost(node.index());
            at += 1;
            true
        });
        for (at, &node) in emit.iter().enumerate().skip(at) {
            let i = node.index();
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
        hint(&mut graph, references);
        Ok(graph)
    }
}

/// Tasks per unit of parallel work.
const CHUNK: usize = 8192;

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
                Slot::Src(m) => self.uses[m.index()] += 1,
                Slot::Expr(e) => {
                    self.uses[self.work.exprs[e as usize].base.index()] += 1;
                    stack.extend_from_slice(self.work.expr_slots(e));
                }
            }
        }
    }

    /// Source body `m`: moved out if this is its last use, else copied.
    fn source(&mut self, m: NodeId) -> Body {
        match &mut self.owned {
            Some(owned) => {
                let uses = &mut self.uses[m.index()];
                *uses -= 1;
                if *uses == 0 {
                    std::mem::replace(&mut owned[m.index()], Body::Opaque(Vec::new()))
                } else {
                    owned[m.index()].clone()
                }
            }
            None => self.work.graph_body(m).clone(),
        }
    }

    /// The term of source body `m`, as [`Builder::source`].
    fn source_term(&mut self, m: NodeId) -> Term {
        match self.source(m) {
            Body::Term(term) => term,
            Body::Opaque(_) => unreachable!("opaque tasks are never substituted"),
        }
    }

    /// The body a slot stands for; `key(node)` gives a node's key.
    fn body(&mut self, slot: Slot, key: &impl Fn(NodeId) -> Key) -> Body {
        let e = match slot {
            Slot::Ref(node) => return Body::Term(Term::Ref(key(node))),
            Slot::Src(m) => return self.source(m),
            Slot::Expr(e) => e,
        };
        let work = self.work;
        let base = work.exprs[e as usize].base;
        if work.kinds[base.index()] != Kind::Opaque {
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
    fn term(&mut self, root: u32, key: &impl Fn(NodeId) -> Key) -> Term {
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
    targets: &[NodeId],
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
