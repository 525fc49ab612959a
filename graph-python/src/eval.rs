//! Running one task of a dask graph on its inputs, as dask 2026.8 runs it:
//! `convert_legacy_task` and `GraphNode.__call__` in one walk. The local
//! executor (`execute`) and the worker processes (`processes`) both run
//! tasks through [`TaskKeys::evaluate`].

use graph_core::NodeId;
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use rustc_hash::FxHashMap;

/// The classes of `dask._task_spec` a task's value is told apart by.
struct Spec {
    graph_node: Py<PyType>,
    task: Py<PyType>,
    task_ref: Py<PyType>,
}

impl Spec {
    /// The classes, from `dask._task_spec`.
    fn new(py: Python<'_>) -> PyResult<Spec> {
        let module = py.import("dask._task_spec")?;
        let class = |name: &str| -> PyResult<Py<PyType>> {
            Ok(module.getattr(name)?.cast_into::<PyType>()?.unbind())
        };
        Ok(Spec {
            graph_node: class("GraphNode")?,
            task: class("Task")?,
            task_ref: class("TaskRef")?,
        })
    }
}

/// What running a graph's tasks reads besides their inputs: every node's
/// key and its `hash()`, and the classes tasks are told apart by.
pub(crate) struct TaskKeys {
    spec: Spec,
    /// Every node's key object.
    pub(crate) keys: Vec<Py<PyAny>>,
    /// Every node's `hash()` of its key.
    hashes: Vec<isize>,
}

impl TaskKeys {
    /// The keys of a graph's nodes, with their hashes (`hashes[i]` is
    /// `hash(keys[i])`).
    pub(crate) fn new(
        py: Python<'_>,
        keys: Vec<Py<PyAny>>,
        hashes: Vec<isize>,
    ) -> PyResult<TaskKeys> {
        debug_assert_eq!(keys.len(), hashes.len());
        Ok(TaskKeys {
            spec: Spec::new(py)?,
            keys,
            hashes,
        })
    }

    /// Runs `task`, the value in the graph of a node whose dependencies are
    /// `deps`, on its inputs: `input(dep)` gives each dependency's result.
    pub(crate) fn evaluate<'py>(
        &self,
        task: &Bound<'py, PyAny>,
        deps: &[NodeId],
        input: &mut dyn FnMut(NodeId) -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut eval = Eval {
            py: task.py(),
            graph: self,
            deps,
            read: input,
            given: None,
            index: None,
        };
        eval.top(task)
    }
}

/// The evaluation of one task: dask's `convert_legacy_task` and
/// `GraphNode.__call__` in one walk, over the task's inputs.
struct Eval<'a, 'py> {
    py: Python<'py>,
    graph: &'a TaskKeys,
    /// The task's dependencies.
    deps: &'a [NodeId],
    /// The result of each dependency.
    read: &'a mut dyn FnMut(NodeId) -> PyResult<Bound<'py, PyAny>>,
    /// The inputs as the dict a `GraphNode` is called with, once built.
    given: Option<Bound<'py, PyDict>>,
    /// The dependencies by hash, for tasks of many.
    index: Option<FxHashMap<isize, Vec<NodeId>>>,
}

/// Above this many dependencies, a task's keys are found through a hash map
/// rather than by a scan.
const SCAN_DEPS: usize = 16;

impl<'py> Eval<'_, 'py> {
    /// A task's value in the graph, run: `convert_legacy_task(key, value)`
    /// called on the inputs.
    fn top(&mut self, task: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if task.is_exact_instance(self.graph.spec.task.bind(self.py)) {
            return self.task(task);
        }
        self.legacy(task)
    }

    /// `Task.__call__`: the function on the arguments, each a reference
    /// (its input), a graph node (called on the inputs) or a literal.
    fn task(&mut self, task: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let func = task.getattr(intern!(py, "func"))?;
        let args = task.getattr(intern!(py, "args"))?.cast_into::<PyTuple>()?;
        let mut call_args = Vec::with_capacity(args.len());
        for arg in args.iter() {
            call_args.push(self.arg(&arg)?);
        }
        let args = PyTuple::new(py, call_args)?;
        let kwargs = task.getattr(intern!(py, "kwargs"))?;
        let kwargs = kwargs.cast::<PyDict>()?;
        if kwargs.is_empty() {
            return func.call1(args);
        }
        let call_kwargs = PyDict::new(py);
        for (name, value) in kwargs.iter() {
            call_kwargs.set_item(name, self.arg(&value)?)?;
        }
        func.call(args, Some(&call_kwargs))
    }

    /// A `Task` argument: a graph node called on the inputs, a reference
    /// read, anything else as it is (containers are not looked into).
    fn arg(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if obj.is_exact_instance_of::<PyString>() || obj.is_exact_instance_of::<PyInt>() {
            return Ok(obj.clone());
        }
        if self.is_graph_node(obj)? {
            return self.call_node(obj);
        }
        if obj.is_instance(self.graph.spec.task_ref.bind(self.py))? {
            let key = obj.getattr(intern!(self.py, "key"))?;
            return self.input(&key)?.ok_or_else(|| not_an_input(&key));
        }
        Ok(obj.clone())
    }

    /// A dict argument of a legacy task, as dask's `Dict` runs it: a new
    /// dict, its values through [`Eval::arg`].
    fn dict_arg(&mut self, dict: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyAny>> {
        let out = PyDict::new(self.py);
        for (name, value) in dict.iter() {
            out.set_item(name, self.arg(&value)?)?;
        }
        Ok(out.into_any())
    }

    /// A legacy value run: a task tuple called, a key read, a list, tuple
    /// or set rebuilt with its items run, a graph node called, anything
    /// else as it is.
    fn legacy(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        if let Ok(tuple) = obj.cast_exact::<PyTuple>()
            && !tuple.is_empty()
        {
            let func = tuple.get_item(0)?;
            if func.is_callable() {
                let mut args = Vec::with_capacity(tuple.len() - 1);
                for arg in tuple.iter().skip(1) {
                    args.push(if let Ok(dict) = arg.cast::<PyDict>() {
                        // `Dict(arg)`: keys in it are not read.
                        self.dict_arg(dict)?
                    } else {
                        self.legacy(&arg)?
                    });
                }
                return func.call1(PyTuple::new(py, args)?);
            }
        }
        if (obj.is_instance_of::<PyString>()
            || obj.is_instance_of::<PyInt>()
            || obj.is_instance_of::<PyFloat>()
            || obj.is_instance_of::<PyTuple>())
            && let Some(value) = self.input(obj)?
        {
            return Ok(value);
        }
        if self.is_graph_node(obj)? {
            return self.call_node(obj);
        }
        if obj.is_instance(self.graph.spec.task_ref.bind(py))? {
            let key = obj.getattr(intern!(py, "key"))?;
            return self.input(&key)?.ok_or_else(|| not_an_input(&key));
        }
        if is_collection(obj) {
            let mut items = Vec::new();
            for item in obj.try_iter()? {
                items.push(self.legacy(&item?)?);
            }
            return rebuild(obj, items);
        }
        Ok(obj.clone())
    }

    fn is_graph_node(&self, obj: &Bound<'py, PyAny>) -> PyResult<bool> {
        obj.is_instance(self.graph.spec.graph_node.bind(self.py))
    }

    /// A graph node called on the task's inputs (`Task`s directly).
    fn call_node(&mut self, node: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        if node.is_exact_instance(self.graph.spec.task.bind(self.py)) {
            return self.task(node);
        }
        let given = self.given()?.clone();
        node.call1((given,))
    }

    /// The task's inputs as a dict from key to value.
    fn given(&mut self) -> PyResult<&Bound<'py, PyDict>> {
        if self.given.is_none() {
            let dict = PyDict::new(self.py);
            for dep in self.deps {
                dict.set_item(
                    self.graph.keys[dep.index()].bind(self.py),
                    (self.read)(*dep)?,
                )?;
            }
            self.given = Some(dict);
        }
        Ok(self.given.as_ref().expect("just built"))
    }

    /// The input whose key is `obj`, if `obj` is one of the task's keys.
    fn input(&mut self, obj: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        if self.deps.is_empty() {
            return Ok(None);
        }
        let hash = match obj.hash() {
            Ok(hash) => hash,
            Err(err) if err.is_instance_of::<PyTypeError>(self.py) => return Ok(None),
            Err(err) => return Err(err),
        };
        let hashes = &self.graph.hashes;
        if self.deps.len() > SCAN_DEPS && self.index.is_none() {
            let mut index: FxHashMap<isize, Vec<NodeId>> = FxHashMap::default();
            for &dep in self.deps {
                index.entry(hashes[dep.index()]).or_default().push(dep);
            }
            self.index = Some(index);
        }
        let candidates: &[NodeId] = match &self.index {
            Some(index) => index.get(&hash).map_or(&[], Vec::as_slice),
            None => self.deps,
        };
        for &dep in candidates {
            if hashes[dep.index()] != hash {
                continue;
            }
            let key = self.graph.keys[dep.index()].bind(self.py);
            if key.is(obj) || key.eq(obj)? {
                return Ok(Some((self.read)(dep)?));
            }
        }
        Ok(None)
    }
}

/// A reference to a key the task does not depend on.
fn not_an_input(key: &Bound<'_, PyAny>) -> PyErr {
    PyKeyError::new_err(key.clone().unbind())
}

/// Whether `obj` is a list, tuple, set or frozenset (of any subclass).
fn is_collection(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyList>()
        || obj.is_instance_of::<PyTuple>()
        || obj.is_instance_of::<PySet>()
        || obj.is_instance_of::<PyFrozenSet>()
}

/// A collection of `obj`'s type with `items`: a named tuple from its
/// fields, any other from an iterable.
fn rebuild<'py>(
    obj: &Bound<'py, PyAny>,
    items: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    if obj.is_exact_instance_of::<PyList>() {
        return Ok(PyList::new(py, items)?.into_any());
    }
    if obj.is_exact_instance_of::<PyTuple>() {
        return Ok(PyTuple::new(py, items)?.into_any());
    }
    let ty = obj.get_type();
    if obj.is_instance_of::<PyTuple>() && ty.hasattr(intern!(py, "_fields"))? {
        return ty.call1(PyTuple::new(py, items)?);
    }
    ty.call1((PyList::new(py, items)?,))
}
