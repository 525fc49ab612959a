//! `TaskGraph`: keyed tasks in insertion order, with their topology on demand.

use std::sync::{Mutex, OnceLock, PoisonError};

use indexmap::IndexMap;
use indexmap::map::Entry;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use crate::{Dag, Error, Key, NodeId, References, Term, Topology};

/// The body of a task.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A term to evaluate.
    Term(Term),
    /// A task whose body is unknown, kept only for its dependencies: graphs
    /// exported for ordering or placement. It cannot be run, fused or inlined.
    Opaque(Vec<Key>),
}

impl Body {
    /// Calls `f` on every key the body references, in order, repeats included.
    pub fn for_each_ref(&self, f: &mut impl FnMut(&Key)) {
        match self {
            Body::Term(term) => term.for_each_ref(f),
            Body::Opaque(deps) => deps.iter().for_each(f),
        }
    }

    /// The term, unless the task is opaque.
    pub fn term(&self) -> Option<&Term> {
        match self {
            Body::Term(term) => Some(term),
            Body::Opaque(_) => None,
        }
    }
}

/// One task: its body and optional metadata.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// What the task computes.
    pub body: Body,
    /// The size of its result in bytes, if known.
    pub size: Option<u64>,
    /// The time it takes to compute in seconds, if known.
    pub cost: Option<f64>,
}

impl Task {
    /// A task that evaluates `term`, with no metadata.
    pub fn new(term: Term) -> Task {
        Task {
            body: Body::Term(term),
            size: None,
            cost: None,
        }
    }

    /// An opaque task with these dependencies, with no metadata.
    pub fn opaque(deps: Vec<Key>) -> Task {
        Task {
            body: Body::Opaque(deps),
            size: None,
            cost: None,
        }
    }
}

/// A task graph: tasks by key, in the order they were inserted, plus their
/// [`Topology`] derived on demand and cached.
///
/// Node ids are insertion positions, so every output that walks a graph is
/// deterministic. Inserting checks only for duplicate keys; references are
/// resolved, and cycles found, by [`TaskGraph::topology`] (and so by
/// [`TaskGraphBuilder::build`] and by reading a file).
///
/// # Example
///
/// ```
/// use graph_core::{Dag, Key, TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("x", Term::lit(1))
///     .task("y", Term::call("inc", [Term::key("x")]))
///     .task(("z", 0), Term::call("add", [Term::key("x"), Term::key("y")]))
///     .size(8)
///     .build()?;
/// assert_eq!(graph.len(), 3);
/// let z = graph.node_id(&Key::from(("z", 0))).unwrap();
/// assert_eq!(graph.task(z).size, Some(8));
/// assert_eq!(graph.topology()?.dependencies(z).len(), 2);
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct TaskGraph {
    tasks: IndexMap<Key, Task, FxBuildHasher>,
    topology: OnceLock<Topology>,
    /// References a pass that built this graph already resolved
    /// ([`TaskGraph::hint_references`]), checked and used by the first
    /// topology build, which takes them.
    hint: Mutex<Option<References>>,
}

impl Clone for TaskGraph {
    fn clone(&self) -> TaskGraph {
        TaskGraph {
            tasks: self.tasks.clone(),
            topology: self.topology.clone(),
            hint: Mutex::new(self.hint_lock().clone()),
        }
    }
}

/// Tasks per unit of parallel work when resolving references.
const CHUNK: usize = 4096;

impl TaskGraph {
    /// An empty graph.
    pub fn new() -> TaskGraph {
        TaskGraph::default()
    }

    /// An empty graph with room for `capacity` tasks.
    pub fn with_capacity(capacity: usize) -> TaskGraph {
        TaskGraph {
            tasks: IndexMap::with_capacity_and_hasher(capacity, FxBuildHasher),
            topology: OnceLock::new(),
            hint: Mutex::new(None),
        }
    }

    /// Asks for room for `additional` more tasks; without it (too much
    /// for the allocator or the address space), the table grows as tasks
    /// come instead.
    #[cfg(feature = "json")]
    pub(crate) fn try_reserve(&mut self, additional: usize) {
        let _ = self.tasks.try_reserve_exact(additional);
    }

    /// A builder that adds tasks in a chain of calls and validates at the end.
    pub fn builder() -> TaskGraphBuilder {
        TaskGraphBuilder::default()
    }

    /// Adds a task that evaluates `term`; returns its node id.
    ///
    /// # Errors
    ///
    /// [`Error::DuplicateKey`] if a task already has this key,
    /// [`Error::TooLarge`] past `u32` ids, and [`Error::TooDeep`] for a key
    /// (the task's, or an opaque task's dependency) that nests deeper than
    /// [`MAX_NESTING`](crate::MAX_NESTING) levels. A term may nest
    /// deeper (every walk of a term copes with any depth); writing it is then
    /// refused ([`json::write`](crate::json::write)), so that no file holds
    /// what no command could read back.
    pub fn insert(&mut self, key: impl Into<Key>, term: Term) -> Result<NodeId, Error> {
        self.insert_task(key.into(), Task::new(term))
    }

    /// Adds an opaque task with these dependencies; returns its node id.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::insert`].
    pub fn insert_opaque(&mut self, key: impl Into<Key>, deps: Vec<Key>) -> Result<NodeId, Error> {
        self.insert_task(key.into(), Task::opaque(deps))
    }

    /// Adds a task with its metadata; returns its node id.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::insert`].
    pub fn insert_task(&mut self, key: Key, task: Task) -> Result<NodeId, Error> {
        if self.tasks.len() + 1 >= NodeId::MAX_NODES {
            return Err(Error::TooLarge {
                what: "tasks",
                count: self.tasks.len() + 1,
            });
        }
        // The term is not walked here (that would read every body a pass
        // builds a second time); `json::write` measures it.
        let levels = match &task.body {
            Body::Term(_) => 0,
            Body::Opaque(deps) => deps.iter().map(Key::nesting).max().unwrap_or(0),
        }
        .max(key.nesting());
        if levels > crate::limits::MAX_NESTING {
            return Err(Error::TooDeep {
                key,
                levels,
                limit: crate::limits::MAX_NESTING,
            });
        }
        let node = match self.tasks.entry(key) {
            Entry::Occupied(entry) => {
                return Err(Error::DuplicateKey {
                    key: entry.key().clone(),
                });
            }
            Entry::Vacant(entry) => {
                let node = NodeId::new(entry.index());
                entry.insert(task);
                node
            }
        };
        self.forget_topology();
        Ok(node)
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the graph has no task.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// The node id of the task with this key.
    pub fn node_id(&self, key: &Key) -> Option<NodeId> {
        self.tasks.get_index_of(key).map(NodeId::new)
    }

    /// The task with this key.
    pub fn get(&self, key: &Key) -> Option<&Task> {
        self.tasks.get(key)
    }

    /// The key of a node.
    ///
    /// # Panics
    ///
    /// If `node` is not a node of this graph.
    pub fn key(&self, node: NodeId) -> &Key {
        self.tasks
            .get_index(node.index())
            .expect("node id out of range")
            .0
    }

    /// The task of a node.
    ///
    /// # Panics
    ///
    /// If `node` is not a node of this graph.
    pub fn task(&self, node: NodeId) -> &Task {
        &self.tasks[node.index()]
    }

    /// The task of a node, to change its body or metadata. Changing a body
    /// drops the cached topology.
    ///
    /// # Panics
    ///
    /// If `node` is not a node of this graph.
    pub fn task_mut(&mut self, node: NodeId) -> &mut Task {
        self.forget_topology();
        &mut self.tasks[node.index()]
    }

    /// Keeps the tasks for which `keep` returns `true`, in their order, and
    /// lets it change each task it sees; `keep` is called once per task, in
    /// node id order, with the node id it had before the call. The kept keys
    /// are not hashed again, which makes this the cheap way to build a graph
    /// that keeps most of another's keys. Drops the cached topology.
    ///
    /// # Complexity
    ///
    /// O(V), plus dropping the tasks not kept.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{Key, NodeId, TaskGraph, Term};
    ///
    /// let mut graph = TaskGraph::builder()
    ///     .task("x", Term::lit(1))
    ///     .task("y", Term::lit(2))
    ///     .task("z", Term::call("inc", [Term::key("x")]))
    ///     .build()?;
    /// graph.retain(|node, _, task| {
    ///     task.size = Some(8);
    ///     node != NodeId::new(1)
    /// });
    /// assert_eq!(graph.keys().cloned().collect::<Vec<_>>(), [Key::from("x"), Key::from("z")]);
    /// assert_eq!(graph.node_id(&Key::from("z")), Some(NodeId::new(1)));
    /// assert_eq!(graph.task(NodeId::new(1)).size, Some(8));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(NodeId, &Key, &mut Task) -> bool) {
        self.forget_topology();
        let mut node = 0;
        self.tasks.retain(|key, task| {
            let kept = keep(NodeId::new(node), key, task);
            node += 1;
            kept
        });
    }

    /// Every key and task, in node id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Key, &Task)> + DoubleEndedIterator {
        self.tasks.iter()
    }

    /// Every key, in node id order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Key> + DoubleEndedIterator {
        self.tasks.keys()
    }

    /// Takes the graph apart: every key and task, in node id order, moved
    /// out rather than cloned (for a caller that builds another graph from
    /// this one's keys).
    ///
    /// ```
    /// use graph_core::{Key, TaskGraph, Term};
    ///
    /// let graph = TaskGraph::builder()
    ///     .task("x", Term::lit(1))
    ///     .task("y", Term::call("inc", [Term::key("x")]))
    ///     .build()?;
    /// let (keys, tasks): (Vec<Key>, Vec<_>) = graph.into_tasks().unzip();
    /// assert_eq!(keys, [Key::from("x"), Key::from("y")]);
    /// assert_eq!(tasks[1].body.term().unwrap().to_string(), "inc(x)");
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn into_tasks(self) -> impl ExactSizeIterator<Item = (Key, Task)> + DoubleEndedIterator {
        self.tasks.into_iter()
    }

    /// The keys of the tasks no task depends on, in node order: what a run
    /// computes when no keys are given, as dask's users ask for a graph's
    /// outputs.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::topology`].
    pub fn leaf_keys(&self) -> Result<Vec<Key>, Error> {
        let topology = self.topology()?;
        Ok(topology
            .node_ids()
            .filter(|&node| topology.dependents(node).is_empty())
            .map(|node| self.key(node).clone())
            .collect())
    }

    /// The graph's topology, its checked index: references resolved to node
    /// ids, repeats merged, checked for cycles (a task that references itself
    /// is one). Computed once, then cached until the graph changes.
    ///
    /// **Complexity**: O(V + E) time (one hash lookup per reference, spread
    /// over all cores with rayon; a key comparison instead where a hint was
    /// given) and O(V + E) memory.
    ///
    /// # Errors
    ///
    /// [`Error::MissingDependency`] for a reference to a key that no task has
    /// (the first such task in node order), and [`Error::Cycle`] naming the keys
    /// on a cycle.
    pub fn topology(&self) -> Result<&Topology, Error> {
        if let Some(topology) = self.topology.get() {
            return Ok(topology);
        }
        let topology = self.build_topology()?;
        Ok(self.topology.get_or_init(|| topology))
    }

    /// Every reference of every task resolved to a node id, in preorder,
    /// repeats included ([`References`]).
    ///
    /// **Complexity**: O(V + R) time for R references, with a hash lookup
    /// only for the references of tasks that name a key twice (the others
    /// are their topology rows); plus building the topology, if it was not
    /// cached.
    ///
    /// # Errors
    ///
    /// As [`TaskGraph::topology`]: the references are those of a valid graph.
    pub fn references(&self) -> Result<References, Error> {
        let topology = self.topology()?;
        let tasks = self.tasks.as_slice();
        // Each chunk of tasks gives its rows' lengths and targets.
        let chunks: Vec<(Vec<u32>, Vec<NodeId>)> = (0..tasks.len().div_ceil(CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let start = chunk * CHUNK;
                let end = (start + CHUNK).min(tasks.len());
                let mut lengths = Vec::with_capacity(end - start);
                let mut targets = Vec::with_capacity(2 * (end - start));
                for i in start..end {
                    let body = &tasks[i].body;
                    let row = topology.dependencies(NodeId::new(i));
                    let mut count = 0_u32;
                    body.for_each_ref(&mut |_| count += 1);
                    if count as usize == row.len() {
                        targets.extend_from_slice(row);
                    } else {
                        // Repeats: each resolved by its key.
                        body.for_each_ref(&mut |dep| {
                            let dep = self.tasks.get_index_of(dep);
                            targets.push(NodeId::new(dep.expect("the topology resolved it")));
                        });
                    }
                    lengths.push(count);
                }
                (lengths, targets)
            })
            .collect();
        let mut offsets = Vec::with_capacity(tasks.len() + 1);
        offsets.push(0_u32);
        let total: usize = chunks.iter().map(|(_, targets)| targets.len()).sum();
        let total = u32::try_from(total).map_err(|_| Error::TooLarge {
            what: "edges",
            count: total,
        })?;
        let mut targets = Vec::with_capacity(total as usize);
        let mut offset = 0_u32;
        for (lengths, chunk) in chunks {
            for length in lengths {
                offset += length;
                offsets.push(offset);
            }
            targets.extend_from_slice(&chunk);
        }
        Ok(References::from_rows(offsets, targets).expect("rows of this graph"))
    }

    /// Tells the graph its references, resolved by whoever built it (a pass
    /// that knows which node each reference of its output names). The first
    /// [`TaskGraph::topology`] checks every reference against them by key
    /// equality, which costs far less than hashing each key, and uses them;
    /// where they do not match the bodies, it resolves the keys as usual. A
    /// wrong hint therefore costs time, never correctness. Changing the graph
    /// drops the hint.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, References, TaskGraph, Term};
    ///
    /// let mut graph = TaskGraph::new();
    /// graph.insert("a", Term::lit(1))?;
    /// graph.insert("b", Term::call("inc", [Term::key("a")]))?;
    /// graph.hint_references(References::from_rows(vec![0, 0, 1], vec![NodeId::new(0)])?);
    /// assert_eq!(graph.topology()?.edge_count(), 1);
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn hint_references(&mut self, references: References) {
        self.forget_topology();
        *self.hint.get_mut().unwrap_or_else(PoisonError::into_inner) = Some(references);
    }

    #[cfg(feature = "json")]
    /// Caches `topology`, which the caller (this crate's reader) built from
    /// the graph's own references.
    pub(crate) fn set_topology(&mut self, topology: Topology) {
        debug_assert_eq!(topology.node_count(), self.len());
        self.forget_topology();
        let _ = self.topology.set(topology);
    }

    /// Drops the cached topology and the hint: the graph changed.
    fn forget_topology(&mut self) {
        self.topology = OnceLock::new();
        *self.hint.get_mut().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn hint_lock(&self) -> std::sync::MutexGuard<'_, Option<References>> {
        self.hint.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The hinted references as topology rows, if every reference of every
    /// body names the key the hint says, in order.
    fn checked_hint(&self) -> Option<(Vec<u32>, Vec<u32>)> {
        let hint = self.hint_lock().take()?;
        if hint.node_count() != self.len() {
            return None;
        }
        let tasks = self.tasks.as_slice();
        let matches = (0..tasks.len().div_ceil(CHUNK))
            .into_par_iter()
            .all(|chunk| {
                let start = chunk * CHUNK;
                let end = (start + CHUNK).min(tasks.len());
                (start..end).all(|i| {
                    let row = hint.get(NodeId::new(i));
                    let mut at = 0;
                    let mut same = true;
                    tasks[i].body.for_each_ref(&mut |dep| {
                        same &= row.get(at).is_some_and(|&node| self.key(node) == dep);
                        at += 1;
                    });
                    same && at == row.len()
                })
            });
        if !matches {
            return None;
        }
        let (offsets, targets) = hint.into_rows();
        Some((offsets, targets.into_iter().map(NodeId::as_u32).collect()))
    }

    fn build_topology(&self) -> Result<Topology, Error> {
        let (offsets, targets) = match self.checked_hint() {
            Some(rows) => rows,
            None => self.resolve_rows()?,
        };
        Topology::from_dependency_rows(offsets, targets).map_err(|err| match err {
            Error::NodeCycle { nodes } => Error::Cycle {
                keys: nodes
                    .into_iter()
                    .map(|node| self.key(node).clone())
                    .collect(),
            },
            other => other,
        })
    }

    /// Every reference resolved by hashing its key: each task's row, repeats
    /// included, as topology rows.
    fn resolve_rows(&self) -> Result<(Vec<u32>, Vec<u32>), Error> {
        let tasks = self.tasks.as_slice();
        let n_tasks = tasks.len();
        // Each chunk resolves its tasks' references into (row lengths, targets).
        // Per chunk of tasks: the number of references of each, and their targets.
        type Rows = (Vec<u32>, Vec<u32>);
        let chunks: Vec<Result<Rows, Error>> = (0..n_tasks.div_ceil(CHUNK))
            .into_par_iter()
            .map(|chunk| {
                let start = chunk * CHUNK;
                let end = (start + CHUNK).min(n_tasks);
                let mut lengths = Vec::with_capacity(end - start);
                let mut targets = Vec::new();
                for (key, task) in &tasks[start..end] {
                    let before = targets.len();
                    let mut missing = None;
                    task.body
                        .for_each_ref(&mut |dep| match self.tasks.get_index_of(dep) {
                            Some(index) => targets.push(index as u32),
                            None => {
                                missing.get_or_insert_with(|| dep.clone());
                            }
                        });
                    if let Some(missing) = missing {
                        return Err(Error::MissingDependency {
                            key: key.clone(),
                            missing,
                        });
                    }
                    lengths.push((targets.len() - before) as u32);
                }
                Ok((lengths, targets))
            })
            .collect();

        let mut offsets = Vec::with_capacity(n_tasks + 1);
        offsets.push(0_u32);
        let mut all_targets = Vec::new();
        for chunk in chunks {
            let (lengths, targets) = chunk?;
            if all_targets.len() + targets.len() > u32::MAX as usize {
                return Err(Error::TooLarge {
                    what: "edges",
                    count: all_targets.len() + targets.len(),
                });
            }
            let mut offset = *offsets.last().expect("offsets start with 0");
            for length in lengths {
                offset += length;
                offsets.push(offset);
            }
            all_targets.extend_from_slice(&targets);
        }
        Ok((offsets, all_targets))
    }
}

/// Two graphs are equal when they hold equal tasks under equal keys in the
/// same order.
impl PartialEq for TaskGraph {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// Builds a [`TaskGraph`] in a chain of calls; the first error is reported by
/// [`TaskGraphBuilder::build`].
#[derive(Debug, Default)]
pub struct TaskGraphBuilder {
    graph: TaskGraph,
    last: Option<NodeId>,
    error: Option<Error>,
}

impl TaskGraphBuilder {
    /// Adds a task that evaluates `term`.
    pub fn task(self, key: impl Into<Key>, term: Term) -> Self {
        self.add(key.into(), Task::new(term))
    }

    /// Adds an opaque task with these dependencies.
    pub fn opaque(self, key: impl Into<Key>, deps: impl IntoIterator<Item = Key>) -> Self {
        self.add(key.into(), Task::opaque(deps.into_iter().collect()))
    }

    /// Sets the result size, in bytes, of the task added last.
    pub fn size(mut self, bytes: u64) -> Self {
        if let Some(node) = self.last {
            self.graph.task_mut(node).size = Some(bytes);
        }
        self
    }

    /// Sets the cost, in seconds, of the task added last.
    pub fn cost(mut self, seconds: f64) -> Self {
        if let Some(node) = self.last {
            self.graph.task_mut(node).cost = Some(seconds);
        }
        self
    }

    fn add(mut self, key: Key, task: Task) -> Self {
        if self.error.is_none() {
            match self.graph.insert_task(key, task) {
                Ok(node) => self.last = Some(node),
                Err(err) => self.error = Some(err),
            }
        }
        self
    }

    /// The graph, with its topology computed and checked.
    ///
    /// # Errors
    ///
    /// The first [`Error::DuplicateKey`], else [`Error::MissingDependency`] or
    /// [`Error::Cycle`] from [`TaskGraph::topology`].
    pub fn build(self) -> Result<TaskGraph, Error> {
        if let Some(err) = self.error {
            return Err(err);
        }
        self.graph.topology()?;
        Ok(self.graph)
    }
}
