//! Reading a dask graph mapping: its keys, each task's dependencies as dask
//! computes them, and which values dask treats as data rather than tasks.

use std::collections::VecDeque;

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyComplex, PyDict, PyFloat, PyInt, PyList, PyNone, PySet, PySlice, PyString,
    PyTuple, PyType,
};
use rustc_hash::FxHashMap;

use crate::key_index::KeyIndex;
use crate::signals::check_every;
use crate::text::Texts;

/// A dask graph as dense rows: node `i < task_count` is the `i`-th key of
/// the mapping; nodes past it are the external keys that task objects name
/// but the mapping lacks (dask orders them as data nodes and leaves them out
/// of its result).
pub(crate) struct Converted<'py> {
    /// The key object of every node.
    pub(crate) keys: Vec<Bound<'py, PyAny>>,
    /// How many nodes are keys of the mapping.
    pub(crate) task_count: usize,
    /// Each node's dependencies in CSR form, repeats allowed.
    pub(crate) offsets: Vec<u32>,
    /// See `offsets`.
    pub(crate) targets: Vec<u32>,
    /// dask's `not istask(value)`: literals, `DataNode`s, plain containers
    /// and external keys.
    pub(crate) is_data: Vec<bool>,
    /// dask's tie-break: each node's rank by Python's `str()` of its key.
    pub(crate) ranks: Vec<u32>,
    /// Each node by its key.
    pub(crate) index: KeyIndex,
    /// Each task's value in the mapping.
    pub(crate) values: Vec<Bound<'py, PyAny>>,
}

/// From this many keys on, they are ranked on a thread of their own while the
/// tasks are read (below it, a thread costs more than it saves).
const RANK_APART: usize = 10_000;

/// Lookups of dependencies in the index wait until this many have gathered,
/// and are then made together (see [`KeyIndex::warm`]).
const LOOKUP_BATCH: usize = 512;

/// What to do with dependencies that name keys missing from the mapping.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum External {
    /// Add them as data nodes, as `dask.order.order` does.
    AsDataNodes,
    /// Drop them: the graph is the mapping's keys alone.
    Drop,
}

/// What the graph is read for: the dependencies differ in one place.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// As `dask.order` reads a graph: a plain tuple (not a task) is a key or
    /// a literal, never looked into.
    Order,
    /// As dask's local schedulers run it (`convert_legacy_graph`): a plain
    /// tuple that is no key is looked into, and the keys in it are
    /// dependencies.
    Execute,
}

/// The classes of `dask._task_spec` that decide how a value is read, when
/// dask is importable.
struct TaskSpec<'py> {
    graph_node: Bound<'py, PyAny>,
    /// `GraphNode.dependencies`, the property that returns `_dependencies`.
    dependencies: Bound<'py, PyAny>,
    data_node: Bound<'py, PyAny>,
    task_ref: Bound<'py, PyAny>,
}

impl<'py> TaskSpec<'py> {
    fn import(py: Python<'py>) -> Option<TaskSpec<'py>> {
        let module = py.import("dask._task_spec").ok()?;
        let graph_node = module.getattr("GraphNode").ok()?;
        Some(TaskSpec {
            dependencies: graph_node.getattr("dependencies").ok()?,
            graph_node,
            data_node: module.getattr("DataNode").ok()?,
            task_ref: module.getattr("TaskRef").ok()?,
        })
    }
}

/// How a value of a given Python type is read. Decided once per type.
#[derive(Clone, Copy)]
enum Kind {
    Tuple,
    List,
    Dict,
    /// A `GraphNode`: a task unless it is a `DataNode`. `slot`: its type
    /// keeps `GraphNode.dependencies`, which returns the `_dependencies`
    /// slot, so the slot is read directly (no Python frame).
    GraphNode {
        is_data_node: bool,
        slot: bool,
    },
    TaskRef,
    /// A subclass of tuple (a named tuple, say): a key or a literal to
    /// `dask.order`; looked into when executing.
    TupleLike,
    /// A builtin scalar (str, int, float, ...): no `.dependencies`, compared
    /// with the keys.
    Scalar,
    /// Anything else: dask asks it for `.dependencies` first.
    Other,
}

/// The walk over one mapping.
struct Reader<'py> {
    py: Python<'py>,
    spec: Option<TaskSpec<'py>>,
    kinds: FxHashMap<usize, Kind>,
    keys: Vec<Bound<'py, PyAny>>,
    index: KeyIndex,
    /// Python's `str()` of each key met: the mapping's, then external ones.
    texts: Texts,
    /// The last type met and its kind: values come in runs of one type.
    last_kind: (usize, Kind),
    /// Whether every key is a str, int, float or tuple of those (exact
    /// types): then a tuple holding a slice, list, dict or set can equal no
    /// key, and the lookup is skipped.
    plain_keys: bool,
    external: External,
    reading: Reading,
    /// Every task's dependencies, in the order of the tasks.
    targets: Vec<u32>,
    /// How many of `targets` each task has.
    counts: Vec<u32>,
    /// The task being read.
    row: usize,
    /// Dependencies hashed but not yet looked up. Only when reading for
    /// order: there whether a value is a key never changes how the rest of
    /// the task is read.
    pending: Vec<Lookup<'py>>,
    external_data: Vec<bool>,
    queue: VecDeque<Bound<'py, PyAny>>,
    /// The containers one scan has looked into, once it has looked into
    /// [`SCAN_REMEMBERS_AFTER`] (kept alive, so that their addresses stay
    /// theirs): a value that holds itself is looked into once.
    seen: FxHashMap<usize, Bound<'py, PyAny>>,
}

/// After this many containers in one task's value, a scan remembers the
/// ones it has looked into: only a value that holds itself (a list that
/// contains itself) or one of enormous size gets there, and below it a scan
/// pays nothing for the check.
const SCAN_REMEMBERS_AFTER: usize = 10_000;

/// A value to look up among the keys, hashed, for the task `row`.
struct Lookup<'py> {
    obj: Bound<'py, PyAny>,
    hash: isize,
    row: usize,
    external: External,
}

/// Reads `dsk` (a dict, or any mapping, copied into a dict first as dask
/// does). With `dependencies` (a mapping from key to the keys it needs), the
/// tasks are not scanned: a key it does not list needs nothing, and keys
/// missing from `dsk` are dropped.
pub(crate) fn convert<'py>(
    dsk: &Bound<'py, PyAny>,
    dependencies: Option<&Bound<'py, PyAny>>,
    external: External,
    reading: Reading,
) -> PyResult<Converted<'py>> {
    let py = dsk.py();
    let dict = as_dict(dsk)?;
    if let Some(given) = dependencies
        && given.cast::<PyDict>().is_err()
        && given.cast::<pyo3::types::PyMapping>().is_err()
    {
        return Err(PyTypeError::new_err(format!(
            "dependencies must map each key to the keys it needs, not {}",
            given.get_type().name()?
        )));
    }
    let n = dict.len();
    let mut reader = Reader {
        py,
        spec: TaskSpec::import(py),
        kinds: FxHashMap::default(),
        texts: Texts::with_capacity(n),
        last_kind: (0, Kind::Other),
        keys: Vec::with_capacity(n),
        index: KeyIndex::new(),
        plain_keys: true,
        external,
        reading,
        targets: Vec::with_capacity(2 * n),
        counts: Vec::new(),
        row: 0,
        pending: Vec::with_capacity(LOOKUP_BATCH),
        external_data: Vec::new(),
        queue: VecDeque::new(),
        seen: FxHashMap::default(),
    };
    let mut hashes = Vec::with_capacity(n);
    // Keys and values are taken in one walk, so that they belong together
    // even if hashing a key runs code that changes the mapping (Python's
    // iterator then raises "dictionary changed size during iteration").
    let mut values = Vec::with_capacity(n);
    for (step, item) in dict
        .call_method0(intern!(py, "items"))?
        .try_iter()?
        .enumerate()
    {
        check_every(py, step)?;
        let item = item?;
        let item = item.cast::<PyTuple>()?;
        let key = item.get_item(0)?;
        hashes.push(key.hash()?);
        reader.plain_keys &= reader.texts.push(&key)?;
        reader.keys.push(key);
        values.push(item.get_item(1)?);
    }
    let n = reader.keys.len();
    reader.index.fill(py, hashes)?;
    // The keys' texts are ranked on another thread (no Python there) while
    // this one reads the tasks; external keys met meanwhile get their texts
    // apart, and everything is ranked again in the rare case there are some.
    let mut texts = std::mem::replace(&mut reader.texts, Texts::with_capacity(0));
    let (dependencies_read, ranks) = if n < RANK_APART {
        (read_tasks(&mut reader, values, dependencies), texts.ranks())
    } else {
        std::thread::scope(|scope| {
            let ranking = scope.spawn(|| texts.ranks_on_this_thread());
            let read = read_tasks(&mut reader, values, dependencies);
            let ranks = ranking
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, ranks)
        })
    };
    let (offsets, is_data, values) = dependencies_read?;
    let ranks = if reader.texts.len() == 0 {
        ranks
    } else {
        texts.append(&reader.texts);
        texts.ranks()
    };
    Ok(Converted {
        keys: reader.keys,
        task_count: n,
        offsets,
        targets: reader.targets,
        is_data,
        ranks,
        index: reader.index,
        values,
    })
}

/// `dsk` itself when it is a dict, else `dict(dsk)`, as dask copies a
/// mapping before it reads it.
pub(crate) fn as_dict<'py>(dsk: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    match dsk.cast_exact::<PyDict>() {
        Ok(dict) => Ok(dict.clone()),
        Err(_) => dsk
            .py()
            .get_type::<PyDict>()
            .call1((dsk,))?
            .cast_into::<PyDict>()
            .map_err(PyErr::from),
    }
}

/// What the second pass reads: CSR offsets into `reader.targets`, whether
/// each node is data, and each task's value (given back).
type TasksRead<'py> = (Vec<u32>, Vec<bool>, Vec<Bound<'py, PyAny>>);

/// The second pass: each task's dependencies (as CSR offsets into
/// `reader.targets`) and whether it is data.
fn read_tasks<'py>(
    reader: &mut Reader<'py>,
    values: Vec<Bound<'py, PyAny>>,
    dependencies: Option<&Bound<'py, PyAny>>,
) -> PyResult<TasksRead<'py>> {
    let n = values.len();
    reader.counts = vec![0; n];
    let mut is_data = Vec::with_capacity(n);
    for (i, value) in values.iter().enumerate() {
        check_every(reader.py, i)?;
        reader.row = i;
        let kind = reader.kind_of(value)?;
        is_data.push(!is_task(kind, value)?);
        match dependencies {
            Some(given) => {
                let key = &reader.keys[i];
                if let Some(deps) = given.get_item(key).ok().filter(|d| !d.is_none()) {
                    reader.named(&deps, External::Drop)?;
                }
            }
            None => reader.task_dependencies(kind, value)?,
        }
    }
    reader.flush()?;
    if reader.targets.len() >= u32::MAX as usize {
        return Err(pyo3::exceptions::PyOverflowError::new_err(
            "too many dependencies: at most 2^32 - 1 edges are supported",
        ));
    }
    let total = reader.keys.len();
    let mut offsets = Vec::with_capacity(total + 1);
    offsets.push(0_u32);
    let mut end = 0_u32;
    offsets.extend(reader.counts.iter().map(|&count| {
        end += count;
        end
    }));
    // External keys have no dependencies of their own.
    offsets.resize(total + 1, end);
    is_data.extend(reader.external_data.iter().copied());
    Ok((offsets, is_data, values))
}

/// dask's `istask`: a `GraphNode` other than a `DataNode`, or a non-empty
/// tuple whose first item is callable.
fn is_task(kind: Kind, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(match kind {
        Kind::GraphNode { is_data_node, .. } => !is_data_node,
        Kind::Tuple => is_task_tuple(value.cast::<PyTuple>()?)?,
        _ => false,
    })
}

/// dask's `istask` of a tuple: not empty, its first item callable.
fn is_task_tuple(tuple: &Bound<'_, PyTuple>) -> PyResult<bool> {
    Ok(!tuple.is_empty() && tuple.get_borrowed_item(0)?.is_callable())
}

/// Whether a tuple holds, at any depth of plain tuples, a value that equals
/// no str, int, float or tuple of those: a slice, a list, a dict or a set.
/// (dask's getitem tasks carry tuples of slices by the million, and hashing
/// each only to fail would cost an exception apiece.)
fn holds_non_key(tuple: &Bound<'_, PyTuple>, depth: usize) -> bool {
    tuple
        .iter_borrowed()
        .any(|part| match part.cast_exact::<PyTuple>() {
            Ok(inner) => depth < 32 && holds_non_key(&inner, depth + 1),
            Err(_) => {
                part.is_exact_instance_of::<PySlice>()
                    || part.is_exact_instance_of::<PyList>()
                    || part.is_exact_instance_of::<PyDict>()
                    || part.is_exact_instance_of::<PySet>()
            }
        })
}

impl<'py> Reader<'py> {
    /// The kind of `value`'s type, decided once per type.
    fn kind_of(&mut self, value: &Bound<'py, PyAny>) -> PyResult<Kind> {
        // The type stays alive while a value of it is in the graph, so its
        // address names it for the whole walk.
        let id = value.get_type_ptr() as usize;
        if self.last_kind.0 == id {
            return Ok(self.last_kind.1);
        }
        let kind = match self.kinds.get(&id) {
            Some(&kind) => kind,
            None => {
                let kind = self.decide(&value.get_type())?;
                self.kinds.insert(id, kind);
                kind
            }
        };
        self.last_kind = (id, kind);
        Ok(kind)
    }

    fn decide(&self, ty: &Bound<'py, PyType>) -> PyResult<Kind> {
        let py = self.py;
        if ty.is(py.get_type::<PyTuple>()) {
            return Ok(Kind::Tuple);
        }
        if ty.is(py.get_type::<PyList>()) {
            return Ok(Kind::List);
        }
        if ty.is(py.get_type::<PyDict>()) {
            return Ok(Kind::Dict);
        }
        if let Some(spec) = &self.spec {
            if ty.is_subclass(&spec.graph_node)? {
                let slot = ty
                    .getattr(intern!(py, "dependencies"))
                    .is_ok_and(|d| d.is(&spec.dependencies));
                return Ok(Kind::GraphNode {
                    is_data_node: ty.is_subclass(&spec.data_node)?,
                    slot,
                });
            }
            if ty.is_subclass(&spec.task_ref)? {
                return Ok(Kind::TaskRef);
            }
        }
        if ty.is_subclass_of::<PyTuple>()? {
            return Ok(Kind::TupleLike);
        }
        let builtins = [
            py.get_type::<PyString>(),
            py.get_type::<PyInt>(),
            py.get_type::<PyFloat>(),
            py.get_type::<PyBool>(),
            py.get_type::<PyBytes>(),
            py.get_type::<PyNone>(),
            py.get_type::<PyComplex>(),
            py.get_type::<PySlice>(),
        ];
        if builtins.iter().any(|b| ty.is(b)) {
            return Ok(Kind::Scalar);
        }
        Ok(Kind::Other)
    }

    /// dask's `DependenciesMapping[key]`: the value's `.dependencies` if it
    /// has one (keys missing from the graph become external), else
    /// `get_dependencies`, which scans legacy tasks.
    fn task_dependencies(&mut self, kind: Kind, value: &Bound<'py, PyAny>) -> PyResult<()> {
        match kind {
            Kind::GraphNode { slot, .. } => {
                let deps = self.graph_node_dependencies(value, slot)?;
                self.named(&deps, self.external)
            }
            Kind::Other | Kind::TaskRef => match value.getattr(intern!(self.py, "dependencies")) {
                Ok(deps) => self.named(&deps, self.external),
                Err(err) if err.is_instance_of::<PyAttributeError>(self.py) => self.scan(value),
                Err(err) => Err(err),
            },
            _ => self.scan(value),
        }
    }

    /// A `GraphNode`'s `.dependencies`.
    fn graph_node_dependencies(
        &self,
        node: &Bound<'py, PyAny>,
        slot: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        if slot {
            node.getattr(intern!(self.py, "_dependencies"))
        } else {
            node.getattr(intern!(self.py, "dependencies"))
        }
    }

    /// Adds the keys of an iterable of keys (`.dependencies`, or a given
    /// dependency set) as dependencies.
    fn named(&mut self, deps: &Bound<'py, PyAny>, external: External) -> PyResult<()> {
        for dep in deps.try_iter()? {
            let dep = dep?;
            let hash = dep.hash()?;
            self.depend(dep, hash, external)?;
        }
        Ok(())
    }

    /// Makes the current task depend on the key `obj` (hashing to `hash`)
    /// if there is one, or on a new external key as `external` says.
    /// Whether `obj` is a key; when reading for order the lookup waits for
    /// a batch (see [`KeyIndex::warm`]), and the answer is always false.
    fn depend(
        &mut self,
        obj: Bound<'py, PyAny>,
        hash: isize,
        external: External,
    ) -> PyResult<bool> {
        let lookup = Lookup {
            obj,
            hash,
            row: self.row,
            external,
        };
        if self.reading == Reading::Execute {
            return self.resolve(lookup);
        }
        self.pending.push(lookup);
        if self.pending.len() >= LOOKUP_BATCH {
            self.flush()?;
        }
        Ok(false)
    }

    /// Makes the lookups waiting, in the order they were asked for.
    fn flush(&mut self) -> PyResult<()> {
        let mut pending = std::mem::take(&mut self.pending);
        self.index
            .warm(&self.keys, pending.iter().map(|lookup| lookup.hash));
        for lookup in pending.drain(..) {
            self.resolve(lookup)?;
        }
        self.pending = pending;
        Ok(())
    }

    /// One lookup: whether its value is a key (or was made an external one).
    fn resolve(&mut self, lookup: Lookup<'py>) -> PyResult<bool> {
        let Lookup {
            obj,
            hash,
            row,
            external,
        } = lookup;
        let node = match self.index.find(&self.keys, hash, &obj)? {
            Some(node) => node,
            None if external == External::AsDataNodes => {
                let node = self.keys.len() as u32;
                self.index.push(hash);
                self.texts.push(&obj)?;
                self.keys.push(obj);
                self.external_data.push(true);
                node
            }
            None => return Ok(false),
        };
        self.targets.push(node);
        self.counts[row] += 1;
        Ok(true)
    }

    /// dask's `keys_in_tasks(dsk, [value])`: descends into tasks (a tuple
    /// whose first item is callable: its arguments), lists, dicts (their
    /// values), `GraphNode`s (their `.dependencies`) and `TaskRef`s (their
    /// key); anything else is a dependency if it is a key of the graph. A
    /// plain tuple is not descended into.
    fn scan(&mut self, value: &Bound<'py, PyAny>) -> PyResult<()> {
        self.queue.clear();
        self.visit(value)?;
        let mut looked = 0_usize;
        while let Some(w) = self.queue.pop_front() {
            looked += 1;
            if looked > SCAN_REMEMBERS_AFTER {
                match self.seen.entry(w.as_ptr() as usize) {
                    std::collections::hash_map::Entry::Occupied(_) => continue,
                    std::collections::hash_map::Entry::Vacant(entry) => {
                        entry.insert(w.clone());
                    }
                }
            }
            self.visit(&w)?;
        }
        self.seen.clear();
        Ok(())
    }

    /// One step of `scan`: `w`'s items are looked up at once when they are
    /// leaves, and queued when they are containers (no recursion).
    fn visit(&mut self, w: &Bound<'py, PyAny>) -> PyResult<()> {
        match self.kind_of(w)? {
            Kind::Tuple => {
                let tuple = w.cast::<PyTuple>()?;
                if is_task_tuple(tuple)? {
                    for arg in tuple.iter_borrowed().skip(1) {
                        self.visit_item(&arg)?;
                    }
                } else if !self.lookup(w, Some(tuple))? && self.reading == Reading::Execute {
                    for item in tuple.iter_borrowed() {
                        self.visit_item(&item)?;
                    }
                }
            }
            Kind::List => {
                for item in w.cast::<PyList>()?.iter() {
                    self.visit_item(&item)?;
                }
            }
            Kind::Dict => {
                for item in w.cast::<PyDict>()?.values().iter() {
                    self.visit_item(&item)?;
                }
            }
            Kind::GraphNode { slot, .. } => {
                let deps = self.graph_node_dependencies(w, slot)?;
                for dep in deps.try_iter()? {
                    self.visit_item(&dep?)?;
                }
            }
            Kind::TaskRef => {
                let key = w.getattr(intern!(self.py, "key"))?;
                self.visit_item(&key)?;
            }
            Kind::TupleLike => {
                if !self.lookup(w, None)? && self.reading == Reading::Execute {
                    for item in w.try_iter()? {
                        self.visit_item(&item?)?;
                    }
                }
            }
            Kind::Scalar | Kind::Other => {
                self.lookup(w, None)?;
            }
        }
        Ok(())
    }

    /// An item met inside a value: a leaf (a scalar, a plain tuple, any
    /// other object) is looked up now; a container waits in the queue.
    fn visit_item(&mut self, item: &Bound<'py, PyAny>) -> PyResult<()> {
        match self.kind_of(item)? {
            Kind::Scalar | Kind::Other => self.lookup(item, None).map(drop),
            Kind::TupleLike => {
                if !self.lookup(item, None)? && self.reading == Reading::Execute {
                    self.queue.push_back(item.clone());
                }
                Ok(())
            }
            Kind::Tuple => {
                let tuple = item.cast::<PyTuple>()?;
                if is_task_tuple(tuple)? {
                    self.queue.push_back(item.clone());
                } else if !self.lookup(item, Some(tuple))? && self.reading == Reading::Execute {
                    // Looked into as a plain tuple in `visit`.
                    self.queue.push_back(item.clone());
                }
                Ok(())
            }
            _ => {
                self.queue.push_back(item.clone());
                Ok(())
            }
        }
    }

    /// dask's `if w in keys: ret.append(w)`, where an unhashable `w` is no
    /// key; whether it was one (always false when reading for order: see
    /// [`Reader::depend`]).
    fn lookup(
        &mut self,
        w: &Bound<'py, PyAny>,
        tuple: Option<&Bound<'py, PyTuple>>,
    ) -> PyResult<bool> {
        if let Some(tuple) = tuple
            && self.plain_keys
            && holds_non_key(tuple, 0)
        {
            return Ok(false);
        }
        if w.is_exact_instance_of::<PySlice>() {
            // Never a key, and unhashable before Python 3.12: raising and
            // catching the error would cost more than the whole lookup.
            return Ok(false);
        }
        let hash = match w.hash() {
            Ok(hash) => hash,
            Err(err) if err.is_instance_of::<PyTypeError>(self.py) => return Ok(false),
            Err(err) => return Err(err),
        };
        self.depend(w.clone(), hash, External::Drop)
    }
}
