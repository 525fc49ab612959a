//! `Plan`: a graph prepared for running: culled to what the request needs,
//! terms compiled with their ops resolved, and the counts that drive release.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use graph_core::MAX_NESTING;
use graph_core::{Body, Dag, Key, NodeId, TaskGraph, Term, Topology};
use rustc_hash::FxHashMap;

use crate::{Error, OpFn, OpRegistry, Output, Request, TaskValue};

/// How much stack the recursive walks over terms keep free before each
/// level, and how much they add when less is left: terms nest up to
/// [`MAX_NESTING`] levels, deeper than a thread's stack holds.
const RED_ZONE: usize = 64 * 1024;
/// How many levels of a term evaluation goes between checks of its stack
/// (each level takes far less than `RED_ZONE / GROW_EVERY`).
const GROW_EVERY: u32 = 16;
const STACK_SEGMENT: usize = 4 * 1024 * 1024;

/// A term with its references resolved to nodes and its ops to indices. The
/// arguments of a call and the items of a list are a run of the plan's
/// arena ([`Plan::children`]): the terms of all tasks live in one vector,
/// so compiling allocates nothing per term and freeing is one drop.
pub(crate) enum Expr<T> {
    Lit(T),
    Input(NodeId),
    Call { op: u32, args: Span },
    List(Span),
}

/// A run of [`Plan::arena`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    start: usize,
    len: usize,
}

/// Why evaluating a task failed, before it is given the task's key.
pub(crate) enum Failure {
    Op {
        op: u32,
        message: String,
        panicked: bool,
    },
    Unscheduled {
        input: NodeId,
    },
    /// The result nests deeper than the limit.
    TooDeep,
}

/// Time spent in one op over a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpTime {
    /// The op's name.
    pub op: String,
    /// How many times it was called (nested calls included).
    pub calls: u64,
    /// Total time in it.
    pub total: Duration,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Tasks run (barrier nodes not counted).
    pub tasks_run: usize,
    /// The most bytes of intermediate results in memory at once, counted
    /// as `peak_held` counts results (see
    /// [`TaskValue::size_bytes`](crate::TaskValue::size_bytes) for a
    /// result's bytes).
    pub peak_bytes: u64,
    /// The bytes of results written to disk under a memory limit.
    pub spilled_bytes: u64,
    /// The most intermediate results held at once, counted as dask's
    /// `diagnostics` counts memory pressure: a result is held from when its
    /// task finishes until its last dependent has run, and a result that no
    /// task needs (a requested key) is not counted.
    pub peak_held: usize,
    /// Time per op, by name.
    pub op_times: Vec<OpTime>,
}

/// A graph prepared for one request.
pub(crate) struct Plan<'g, T> {
    pub(crate) graph: &'g TaskGraph,
    pub(crate) topology: &'g Topology,
    /// Per node: its task's compiled term, when the request needs it.
    pub(crate) exprs: Vec<Option<Expr<T>>>,
    /// The arguments and items of every compiled term ([`Expr`]).
    arena: Vec<Expr<T>>,
    pub(crate) ops: Vec<(Arc<str>, Arc<OpFn<T>>)>,
    /// The distinct requested nodes.
    pub(crate) outputs: Vec<NodeId>,
    pub(crate) is_output: Vec<bool>,
    /// Per node: how many needed tasks use its result.
    pub(crate) data_dependents: Vec<u32>,
    /// Per node: whether the request needs it.
    pub(crate) needed: Vec<bool>,
    pub(crate) n_needed: usize,
}

impl<'g, T: TaskValue> Plan<'g, T> {
    /// Culls, compiles and checks: every op exists, no needed task is opaque,
    /// every literal converts.
    pub(crate) fn new(
        graph: &'g TaskGraph,
        registry: &OpRegistry<T>,
        request: &Request,
    ) -> Result<Plan<'g, T>, Error> {
        let topology = graph.topology()?;
        let n_nodes = graph.len();
        let mut is_output = vec![false; n_nodes];
        let mut outputs = Vec::new();
        for key in request.keys() {
            let node = graph
                .node_id(key)
                .ok_or_else(|| Error::UnknownKey { key: key.clone() })?;
            if !is_output[node.index()] {
                is_output[node.index()] = true;
                outputs.push(node);
            }
        }

        // Cull: everything the outputs need, and nothing else.
        let needed = topology.needed_by(&outputs)?;

        let mut compiler = Compiler {
            graph,
            registry,
            op_index: FxHashMap::default(),
            ops: Vec::new(),
            missing: Vec::new(),
            deps: &[],
            next_dep: 0,
            arena: Vec::new(),
        };
        let mut exprs = Vec::with_capacity(n_nodes);
        let mut data_dependents = vec![0_u32; n_nodes];
        let mut n_needed = 0;
        for node in graph_ids(n_nodes) {
            if !needed[node.index()] {
                exprs.push(None);
                continue;
            }
            n_needed += 1;
            for &dep in topology.dependencies(node) {
                data_dependents[dep.index()] += 1;
            }
            let key = graph.key(node);
            compiler.deps = topology.dependencies(node);
            compiler.next_dep = 0;
            let expr = match &graph.task(node).body {
                Body::Term(term) => compiler.compile(key, term)?,
                Body::Opaque(_) => return Err(Error::Opaque { key: key.clone() }),
            };
            exprs.push(Some(expr));
        }
        if !compiler.missing.is_empty() {
            return Err(Error::MissingOps {
                missing: compiler.missing,
            });
        }
        Ok(Plan {
            graph,
            topology,
            exprs,
            arena: compiler.arena,
            ops: compiler.ops,
            outputs,
            is_output,
            data_dependents,
            needed,
            n_needed,
        })
    }

    /// Each task's kind for the scheduler's estimates: the op its compiled
    /// term calls, numbered from 1, and 0 for a task that calls none or is
    /// not compiled (as [`task_kinds`](crate::task_kinds) numbers them, from
    /// the compiled ops rather than their names).
    pub(crate) fn kinds(&self) -> Vec<u32> {
        self.exprs
            .iter()
            .map(|expr| match expr {
                Some(Expr::Call { op, .. }) => op + 1,
                _ => 0,
            })
            .collect()
    }

    /// The needed tasks in a depth-first post-order from the outputs, taken in
    /// request order: the default order of both executors.
    pub(crate) fn post_order(&self) -> Vec<NodeId> {
        let n_nodes = self.exprs.len();
        let mut sequence = Vec::with_capacity(self.n_needed);
        let mut visited = vec![false; n_nodes];
        // (node, index of the next dependency to visit)
        let mut stack: Vec<(NodeId, usize)> = Vec::new();
        for &root in &self.outputs {
            if visited[root.index()] {
                continue;
            }
            visited[root.index()] = true;
            stack.push((root, 0));
            while let Some((node, i)) = stack.last_mut() {
                let deps = self.topology.dependencies(*node);
                if let Some(&dep) = deps.get(*i) {
                    *i += 1;
                    if !visited[dep.index()] {
                        visited[dep.index()] = true;
                        stack.push((dep, 0));
                    }
                } else {
                    sequence.push(*node);
                    stack.pop();
                }
            }
        }
        sequence
    }

    /// Evaluates one task. `fetch` gives the result of an input, if computed.
    pub(crate) fn eval(
        &self,
        node: NodeId,
        fetch: &mut impl FnMut(NodeId) -> Option<T>,
        stack: &mut Vec<T>,
        times: &mut [OpTime],
    ) -> Result<T, Failure> {
        stack.clear();
        let expr = self.exprs[node.index()]
            .as_ref()
            .expect("only needed tasks are evaluated");
        let value = self.eval_expr(expr, fetch, stack, times, 0)?;
        if value.nesting(MAX_NESTING) > MAX_NESTING {
            return Err(Failure::TooDeep);
        }
        Ok(value)
    }

    /// [`Plan::eval`]'s walk of a term, `depth` calls and lists deep.
    fn eval_expr(
        &self,
        expr: &Expr<T>,
        fetch: &mut impl FnMut(NodeId) -> Option<T>,
        stack: &mut Vec<T>,
        times: &mut [OpTime],
        depth: u32,
    ) -> Result<T, Failure> {
        match expr {
            Expr::Lit(value) => Ok(value.clone()),
            Expr::Input(node) => fetch(*node).ok_or(Failure::Unscheduled { input: *node }),
            Expr::Call { op, args } => {
                let base = stack.len();
                for arg in self.children(*args) {
                    let value = self.eval_nested(arg, fetch, stack, times, depth)?;
                    stack.push(value);
                }
                let function = &self.ops[*op as usize].1;
                let started = Instant::now();
                let result = catch_unwind(AssertUnwindSafe(|| function(&stack[base..])));
                let time = &mut times[*op as usize];
                time.calls += 1;
                time.total += started.elapsed();
                stack.truncate(base);
                match result {
                    Ok(Ok(value)) => Ok(value),
                    Ok(Err(err)) => Err(Failure::Op {
                        op: *op,
                        message: err.to_string(),
                        panicked: false,
                    }),
                    Err(payload) => Err(Failure::Op {
                        op: *op,
                        message: format!("panicked: {}", crate::panic_message(&*payload)),
                        panicked: true,
                    }),
                }
            }
            Expr::List(items) => {
                let base = stack.len();
                for item in self.children(*items) {
                    let value = self.eval_nested(item, fetch, stack, times, depth)?;
                    stack.push(value);
                }
                Ok(T::from_list(stack.drain(base..).collect()))
            }
        }
    }

    /// The arguments of a call or the items of a list.
    fn children(&self, span: Span) -> &[Expr<T>] {
        &self.arena[span.start..span.start + span.len]
    }

    /// [`Plan::eval_expr`] on an argument or item of a term `depth` levels
    /// deep: terms nest up to [`MAX_NESTING`] levels, so every
    /// [`GROW_EVERY`] levels the walk makes sure of room on the stack.
    fn eval_nested(
        &self,
        expr: &Expr<T>,
        fetch: &mut impl FnMut(NodeId) -> Option<T>,
        stack: &mut Vec<T>,
        times: &mut [OpTime],
        depth: u32,
    ) -> Result<T, Failure> {
        match expr {
            Expr::Call { .. } | Expr::List(_) if (depth + 1).is_multiple_of(GROW_EVERY) => {
                stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || {
                    self.eval_expr(expr, fetch, stack, times, depth + 1)
                })
            }
            _ => self.eval_expr(expr, fetch, stack, times, depth + 1),
        }
    }

    /// A zeroed timing table, one row per op of this plan.
    pub(crate) fn op_table(&self) -> Vec<OpTime> {
        self.ops
            .iter()
            .map(|(name, _)| OpTime {
                op: name.to_string(),
                ..OpTime::default()
            })
            .collect()
    }

    /// The error for a failure in `node`.
    pub(crate) fn error(&self, node: NodeId, failure: Failure) -> Error {
        let key = self.graph.key(node).clone();
        match failure {
            Failure::Op {
                op,
                message,
                panicked,
            } => Error::Task {
                key,
                op: self.ops[op as usize].0.to_string(),
                message,
                panicked,
            },
            Failure::Unscheduled { input } => Error::Unscheduled {
                key,
                input: self.graph.key(input).clone(),
            },
            Failure::TooDeep => Error::TooDeep {
                key,
                limit: MAX_NESTING,
            },
        }
    }

    /// The bytes `node`'s result `value` takes: what the value says, else
    /// its task's `size`, else the size of the value type.
    pub(crate) fn bytes_of(&self, node: NodeId, value: &T) -> u64 {
        value
            .size_bytes()
            .or_else(|| self.graph.task(node).size)
            .unwrap_or(std::mem::size_of::<T>() as u64)
    }

    /// The error for a task or result that does not fit a memory limit.
    pub(crate) fn overflow(&self, overflow: crate::scheduler::Overflow) -> Error {
        Error::TooLarge {
            key: self.graph.key(overflow.node).clone(),
            bytes: overflow.bytes,
            limit: overflow.limit,
            with_inputs: overflow.with_inputs,
        }
    }

    /// The error for a result that could not be written to disk.
    pub(crate) fn spill_error(&self, node: NodeId, source: impl std::fmt::Display) -> Error {
        Error::Spill {
            key: self.graph.key(node).clone(),
            message: source.to_string(),
        }
    }

    /// The results in the shape of `request`, from each node's computed value.
    pub(crate) fn shape(&self, request: &Request, values: &[Option<T>]) -> Output<T> {
        match request {
            Request::Key(key) => {
                let node = self
                    .graph
                    .node_id(key)
                    .expect("requested keys were checked");
                Output::Value(
                    values[node.index()]
                        .clone()
                        .expect("every output was computed"),
                )
            }
            Request::List(items) => {
                Output::List(items.iter().map(|item| self.shape(item, values)).collect())
            }
        }
    }
}

fn graph_ids(n_nodes: usize) -> impl Iterator<Item = NodeId> {
    (0..n_nodes as u32).map(NodeId::from_u32)
}

/// Merges per-thread timing tables into one, dropping ops never called.
pub(crate) fn merge_times(tables: impl IntoIterator<Item = Vec<OpTime>>) -> Vec<OpTime> {
    let mut merged: Vec<OpTime> = Vec::new();
    for table in tables {
        if merged.is_empty() {
            merged = table;
            continue;
        }
        for (row, add) in merged.iter_mut().zip(table) {
            row.calls += add.calls;
            row.total += add.total;
        }
    }
    merged.retain(|row| row.calls > 0);
    merged
}

struct Compiler<'a, T> {
    graph: &'a TaskGraph,
    registry: &'a OpRegistry<T>,
    op_index: FxHashMap<Arc<str>, u32>,
    ops: Vec<(Arc<str>, Arc<OpFn<T>>)>,
    missing: Vec<(String, Key)>,
    /// The dependencies of the task being compiled, in the order of first
    /// reference, as the topology keeps them.
    deps: &'a [NodeId],
    /// How many of `deps` the references so far have named.
    next_dep: usize,
    /// Where compiled arguments and items go ([`Plan::arena`]).
    arena: Vec<Expr<T>>,
}

impl<T: TaskValue> Compiler<'_, T> {
    /// The node a reference names, without hashing: references meet the
    /// task's dependencies in order, so a new one is the next dependency, and
    /// a repeat is one seen before.
    fn resolve(&mut self, target: &Key) -> NodeId {
        if let Some(&next) = self.deps.get(self.next_dep)
            && self.graph.key(next) == target
        {
            self.next_dep += 1;
            return next;
        }
        self.deps[..self.next_dep]
            .iter()
            .copied()
            .find(|&dep| self.graph.key(dep) == target)
            .expect("the topology resolved every reference")
    }

    fn compile(&mut self, key: &Key, term: &Term) -> Result<Expr<T>, Error> {
        Ok(match term {
            Term::Lit(literal) => {
                Expr::Lit(T::from_literal(literal).map_err(|err| Error::Literal {
                    key: key.clone(),
                    literal: literal.to_string(),
                    message: err.to_string(),
                })?)
            }
            Term::Ref(target) => Expr::Input(self.resolve(target)),
            Term::Call { op, args } => {
                let args = self.compile_all(key, args)?;
                let op = match self.op_index.get(op.as_str()) {
                    Some(&index) => index,
                    None => match self.registry.get(op.as_str()) {
                        Some(function) => {
                            let index = self.ops.len() as u32;
                            let name: Arc<str> = op.as_str().into();
                            self.ops.push((name.clone(), function.clone()));
                            self.op_index.insert(name, index);
                            index
                        }
                        None => {
                            if !self.missing.iter().any(|(name, _)| name == op.as_str()) {
                                self.missing.push((op.as_str().to_owned(), key.clone()));
                            }
                            u32::MAX
                        }
                    },
                };
                Expr::Call { op, args }
            }
            Term::List(items) => Expr::List(self.compile_all(key, items)?),
        })
    }

    /// Compiles `terms` into a run of the arena: the run is set aside
    /// first, so that each term's own arguments go after it.
    fn compile_all(&mut self, key: &Key, terms: &[Term]) -> Result<Span, Error> {
        let span = Span {
            start: self.arena.len(),
            len: terms.len(),
        };
        self.arena
            .extend((0..terms.len()).map(|_| Expr::Input(NodeId::from_u32(0))));
        for (slot, term) in (span.start..).zip(terms) {
            let expr = match term {
                Term::Call { .. } | Term::List(_) => {
                    stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || self.compile(key, term))?
                }
                Term::Lit(_) | Term::Ref(_) => self.compile(key, term)?,
            };
            self.arena[slot] = expr;
        }
        Ok(span)
    }
}
