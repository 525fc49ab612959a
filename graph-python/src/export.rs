//! A dask graph as a `taskgraph-json/1` document (`taskgraph.dask.to_taskgraph`
//! and `dump`, `taskgraph.Graph.to_json`): its tasks converted into a
//! [`TaskGraph`] here, without a Python loop over them and without recursion
//! on user data, and written by graph-core's writer.
//!
//! The dependencies are the ones `dask.order` computes (read by
//! [`convert`](crate::convert::convert)); the bodies are dask's own reading
//! of the tasks (`convert_legacy_graph`, called once), walked with an
//! explicit stack:
//!
//! | dask value | term |
//! | --- | --- |
//! | `TaskRef(k)`, `Alias(k)` for a dependency `k` | `{"ref": k}` |
//! | a key that is not a dependency of the task | `{"call": "<key>", "args": [k]}` |
//! | `Task(f, *args, **kwargs)` | `{"call": "module.qualname", "args": [...]}`, the keyword arguments a last `{"call": "<kwargs>", "args": [name, value, ...]}` |
//! | `List`, `Tuple`, `Set`, `list`, `tuple`, `set`, `frozenset` | `{"list": [...]}` |
//! | `Dict`, `dict` | `{"call": "<dict>", "args": [key, value, ...]}` |
//! | `DataNode(v)` | `v` |
//! | `None`, `bool`, `str`, 64-bit integers, finite floats | the literal |
//! | anything else | `{"call": "<opaque>", "args": ["module.qualname"]}` of its type |
//!
//! A task whose term does not show all of its dependencies (one hidden in an
//! opaque object) is written by its dependencies alone (`"deps"`), so none is
//! lost.

use std::sync::Arc;

use graph_core::{Body, Key, MAX_NESTING, NodeId, Op, OpInterner, Task, TaskGraph, Term, Value};
use graph_core::{Dag, json};
use pyo3::exceptions::{PyAttributeError, PyOSError, PyRecursionError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDict, PyFloat, PyFrozenSet, PyInt, PyList, PyNone, PySet, PyString, PyTuple,
    PyType,
};
use rustc_hash::FxHashMap;

use crate::convert::{Converted, External, Reading, as_dict, convert};
use crate::core_error;
use crate::key_index::KeyIndex;

/// Who wrote the document: its top-level `"producer"`.
const PRODUCER: &str = "taskgraph.dask";

/// A dask graph converted: the tasks, and the keys dask's order treats as
/// data (its `"data_nodes"`).
pub(crate) struct Export {
    pub(crate) graph: TaskGraph,
    data_nodes: Vec<Key>,
}

impl Export {
    /// Converts the graph mapping `dsk`; the chunk sizes come from the
    /// layers of `sizes_from` (a `HighLevelGraph`), where it has any.
    ///
    /// Raises `RuntimeError("Cycle detected ...")` for a cycle, and
    /// `ValueError` naming the key for a key the format cannot hold, two
    /// keys written alike, or a task nested deeper than the format allows.
    pub(crate) fn read(dsk: &Bound<'_, PyAny>, sizes_from: &Bound<'_, PyAny>) -> PyResult<Export> {
        let py = dsk.py();
        let dict = as_dict(dsk)?;
        let Converted {
            keys,
            offsets,
            targets,
            is_data,
            index,
            values,
            ..
        } = convert(dict.as_any(), None, External::Drop, Reading::Order)?;
        let unbound: Vec<Py<PyAny>> = keys.iter().map(|k| k.clone().unbind()).collect();
        // A cycle (a task naming itself included) is refused as dask's order
        // refuses it.
        let topology = graph_core::Topology::from_dependency_rows(offsets, targets)
            .map_err(|err| core_error(py, &unbound, err))?;
        let written: Vec<Key> = keys
            .iter()
            .map(|key| key_of(key, key, 0))
            .collect::<PyResult<_>>()?;
        let sizes = chunk_sizes(sizes_from, &index, &keys)?;
        let mut bodies = Bodies::new(py, &keys, &index, &written)?;
        let mut graph = TaskGraph::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            let node = NodeId::new(i);
            let deps = topology.dependencies(node);
            let value = bodies.read(key, &values[i], &dict)?;
            let body = bodies.body(node, &value, deps)?;
            let task = Task {
                body,
                size: sizes[i],
                cost: None,
            };
            if let Err(err) = graph.insert_task(written[i].clone(), task) {
                return Err(match err {
                    graph_core::Error::DuplicateKey { key: spelled } => {
                        let first = graph.node_id(&spelled).map_or(i, NodeId::index);
                        alike(&keys[first], key, &spelled)
                    }
                    other => PyValueError::new_err(other.to_string()),
                });
            }
        }
        let data_nodes = written
            .iter()
            .zip(&is_data)
            .filter(|(_, data)| **data)
            .map(|(key, _)| key.clone())
            .collect();
        Ok(Export { graph, data_nodes })
    }

    /// The document: the format, its producer, the data nodes and the tasks.
    pub(crate) fn document(&self) -> PyResult<json::Document<'_>> {
        json::Document::new(&self.graph)
            .field("producer", PRODUCER)
            .and_then(|doc| doc.field("data_nodes", &self.data_nodes))
            .map_err(write_error)
    }
}

/// A writer's error as a Python exception: the file's, or the task's.
pub(crate) fn write_error(err: json::Error) -> PyErr {
    match err {
        json::Error::Io(err) => err.into(),
        json::Error::In { error, origin } => match *error {
            json::Error::Io(io) => PyOSError::new_err(format!("{origin}: {io}")),
            other => PyValueError::new_err(format!("{origin}: {other}")),
        },
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Two keys that differ in Python but are one key once written.
fn alike(first: &Bound<'_, PyAny>, second: &Bound<'_, PyAny>, spelled: &Key) -> PyErr {
    let repr = |key: &Bound<'_, PyAny>| {
        key.repr()
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "<key>".to_owned())
    };
    let json = serde_json::to_string(spelled).unwrap_or_else(|_| spelled.to_string());
    PyValueError::new_err(format!(
        "keys {} and {} are both written as {json}: taskgraph-json/1 cannot tell them apart",
        repr(first),
        repr(second),
    ))
}

/// A task known by its dependencies alone.
fn opaque(deps: &[NodeId], written: &[Key]) -> Body {
    let mut seen = rustc_hash::FxHashSet::default();
    let keys = deps
        .iter()
        .filter(|dep| seen.insert(**dep))
        .map(|dep| written[dep.index()].clone())
        .collect();
    Body::Opaque(keys)
}

/// A dask key as the format holds it: strings and numbers as they are,
/// tuples as arrays, bytes decoded, anything else by its `str()`. `whole` is
/// the key `key` is part of, which errors name.
fn key_of(key: &Bound<'_, PyAny>, whole: &Bound<'_, PyAny>, depth: usize) -> PyResult<Key> {
    let refuse = |why: &str| -> PyErr {
        let repr = whole
            .repr()
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "<key>".to_owned());
        PyValueError::new_err(format!("key {repr}: {why} cannot be written"))
    };
    if let Ok(tuple) = key.cast::<PyTuple>() {
        if depth >= MAX_NESTING {
            return Err(refuse(&format!(
                "a tuple nested deeper than {MAX_NESTING} levels"
            )));
        }
        let parts = tuple
            .iter()
            .map(|part| key_of(&part, whole, depth + 1))
            .collect::<PyResult<Vec<Key>>>()?;
        return Ok(Key::tuple(parts));
    }
    if let Ok(text) = key.cast::<PyString>() {
        return Ok(Key::from(text.to_string_lossy().as_ref()));
    }
    if let Ok(bytes) = key.cast::<PyBytes>() {
        return match std::str::from_utf8(bytes.as_bytes()) {
            Ok(text) => Ok(Key::from(text)),
            Err(_) => Err(refuse("bytes that are not UTF-8")),
        };
    }
    let py = key.py();
    if key.is_instance_of::<PyBool>() {
        return Ok(Key::from(key.str()?.to_string_lossy().as_ref()));
    }
    // Exact ints and floats first: the ABCs are asked only of other types.
    let numbers = || py.import(intern!(py, "numbers"));
    if key.is_instance_of::<PyInt>()
        || key.is_instance(&numbers()?.getattr(intern!(py, "Integral"))?)?
    {
        return integer(key)
            .map(Key::Int)
            .ok_or_else(|| refuse("an integer outside the 64-bit range"));
    }
    if key.is_instance_of::<PyFloat>()
        || key.is_instance(&numbers()?.getattr(intern!(py, "Real"))?)?
    {
        let x: f64 = key.extract()?;
        return if x.is_finite() {
            Ok(Key::Float(x))
        } else {
            Err(refuse("a float that is not finite"))
        };
    }
    Ok(Key::from(key.str()?.to_string_lossy().as_ref()))
}

/// `int(value)` when it fits 64 bits: read directly, through `__index__`,
/// and only otherwise by calling `int`.
fn integer(value: &Bound<'_, PyAny>) -> Option<i64> {
    value.extract::<i64>().ok().or_else(|| {
        value
            .py()
            .get_type::<PyInt>()
            .call1((value,))
            .ok()?
            .extract::<i64>()
            .ok()
    })
}

/// A key as a term, where it is a value (`<key>`'s argument): a string or
/// a number as a literal, a tuple as a list of its parts.
fn key_term(key: &Key) -> Term {
    match key {
        Key::Str(text) => Term::Lit(Value::Str(text.as_ref().into())),
        Key::Int(i) => Term::Lit(Value::Int(*i)),
        Key::Float(x) => Term::Lit(Value::Float(*x)),
        Key::Tuple(parts) => Term::List(parts.iter().map(key_term).collect()),
    }
}

/// How a value of one Python type becomes a term. Decided once per type.
#[derive(Clone)]
enum Form {
    /// `TaskRef`: a reference to `.key`.
    TaskRef,
    /// `Alias`: a reference to `.target`.
    Alias,
    /// `DataNode`: its `.value`.
    DataNode,
    /// dask's `List`, `Tuple` and `Set`: a list of `.args`.
    SpecList,
    /// dask's `Dict`: `<dict>` of `.args` (key, value, key, value, ...).
    SpecDict,
    /// dask's `Task`: a call of `.func` on `.args` and `.kwargs`.
    Task,
    /// `list`, `tuple`, `set`, `frozenset`: a list of the items.
    Sequence,
    /// `dict`: `<dict>` of keys and values.
    Mapping,
    Null,
    Bool,
    Str,
    /// `int`, or an integral type: a literal when it fits 64 bits.
    Int,
    /// `float`, or a real type: a literal when finite.
    Float,
    /// Anything else: `<opaque>` of the type's name.
    Opaque(Arc<str>),
}

/// One step of the walk over a task's value.
enum Step<'py> {
    /// A value to convert, at a nesting depth.
    Visit(Bound<'py, PyAny>, usize),
    /// A term already made (a keyword's name).
    Emit(Term),
    /// The last `n` terms made become the arguments of a call.
    Call(Op, usize),
    /// The last `n` terms made become a list.
    List(usize),
}

/// The converter of task bodies, with what it learns once: the classes of
/// `dask._task_spec`, each type's form, each function's name.
struct Bodies<'a, 'py> {
    py: Python<'py>,
    keys: &'a [Bound<'py, PyAny>],
    index: &'a KeyIndex,
    written: &'a [Key],
    spec: [Bound<'py, PyAny>; 8],
    /// `GraphNode`, and dask's reading of one legacy task.
    graph_node: Bound<'py, PyAny>,
    convert_legacy_task: Bound<'py, PyAny>,
    numbers: [Bound<'py, PyAny>; 2],
    partial: Bound<'py, PyAny>,
    forms: FxHashMap<usize, Form>,
    ops: OpInterner,
    /// Each function's op, by the function object's address (the objects
    /// live in the graph for the whole conversion).
    names: FxHashMap<usize, Op>,
    /// `marks[node] == stamp`: `node` is a dependency of the task being
    /// converted; `shown[node] == stamp`: its term refers to it.
    marks: Vec<u32>,
    shown: Vec<u32>,
    stamp: u32,
    steps: Vec<Step<'py>>,
    made: Vec<Term>,
}

impl<'a, 'py> Bodies<'a, 'py> {
    fn new(
        py: Python<'py>,
        keys: &'a [Bound<'py, PyAny>],
        index: &'a KeyIndex,
        written: &'a [Key],
    ) -> PyResult<Self> {
        let ts = py.import(intern!(py, "dask._task_spec"))?;
        let class = |name: &str| ts.getattr(name);
        let numbers = py.import(intern!(py, "numbers"))?;
        Ok(Bodies {
            py,
            keys,
            index,
            written,
            spec: [
                class("TaskRef")?,
                class("Alias")?,
                class("DataNode")?,
                class("List")?,
                class("Tuple")?,
                class("Set")?,
                class("Dict")?,
                class("Task")?,
            ],
            graph_node: class("GraphNode")?,
            convert_legacy_task: class("convert_legacy_task")?,
            numbers: [numbers.getattr("Integral")?, numbers.getattr("Real")?],
            partial: py.import(intern!(py, "functools"))?.getattr("partial")?,
            forms: FxHashMap::default(),
            ops: OpInterner::default(),
            names: FxHashMap::default(),
            marks: vec![0; keys.len()],
            shown: vec![0; keys.len()],
            stamp: 0,
            steps: Vec::new(),
            made: Vec::new(),
        })
    }

    /// A task's value as dask's local schedulers read it
    /// (`convert_legacy_task`, which turns legacy tuples into `Task`s and
    /// keys into `Alias`es; a `GraphNode` is read as it is). dask's reading
    /// recurses: a value nested past Python's recursion limit is refused
    /// naming its task.
    fn read(
        &mut self,
        key: &Bound<'py, PyAny>,
        value: &Bound<'py, PyAny>,
        all_keys: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if value.is_instance(&self.graph_node)? {
            return Ok(value.clone());
        }
        match self.convert_legacy_task.call1((key, value, all_keys)) {
            Err(err) if err.is_instance_of::<PyRecursionError>(self.py) => {
                Err(PyValueError::new_err(format!(
                    "task {}: its value nests deeper than dask can read (Python's recursion limit)",
                    key_of(key, key, 0).map_or_else(|_| "<key>".to_owned(), |k| k.to_string())
                )))
            }
            read => read,
        }
    }

    /// The body of task `node`, whose dependencies are `deps`: its term,
    /// or its dependencies alone when the term does not show them all.
    fn body(&mut self, node: NodeId, value: &Bound<'py, PyAny>, deps: &[NodeId]) -> PyResult<Body> {
        self.stamp += 1;
        for dep in deps {
            self.marks[dep.index()] = self.stamp;
        }
        let term = self.term(node, value)?;
        if deps.iter().all(|dep| self.shown[dep.index()] == self.stamp) {
            Ok(Body::Term(term))
        } else {
            Ok(opaque(deps, self.written))
        }
    }

    /// The term of `value`, the body of task `node`: built bottom-up from an
    /// explicit stack, so that no nesting of user data recurses here.
    fn term(&mut self, node: NodeId, value: &Bound<'py, PyAny>) -> PyResult<Term> {
        self.steps.clear();
        self.made.clear();
        self.steps.push(Step::Visit(value.clone(), 0));
        while let Some(step) = self.steps.pop() {
            match step {
                Step::Visit(value, depth) => self.visit(node, value, depth)?,
                Step::Emit(term) => self.made.push(term),
                Step::Call(op, n) => {
                    let args = self.made.split_off(self.made.len() - n);
                    self.made.push(Term::Call { op, args });
                }
                Step::List(n) => {
                    let items = self.made.split_off(self.made.len() - n);
                    self.made.push(Term::List(items));
                }
            }
        }
        Ok(self.made.pop().unwrap_or(Term::Lit(Value::Null)))
    }

    /// One value: a leaf becomes a term now; a container's items are
    /// scheduled, then the step that gathers them.
    fn visit(&mut self, node: NodeId, value: Bound<'py, PyAny>, depth: usize) -> PyResult<()> {
        if depth > MAX_NESTING {
            return Err(PyValueError::new_err(format!(
                "task {}: its value nests deeper than {MAX_NESTING} levels, which \
                 taskgraph-json/1 cannot hold",
                self.written[node.index()]
            )));
        }
        let py = self.py;
        let mut children: Vec<Step<'py>> = Vec::new();
        let gather = match self.form(&value)? {
            Form::TaskRef => {
                let term = self.reference(&value.getattr(intern!(py, "key"))?)?;
                self.made.push(term);
                return Ok(());
            }
            Form::Alias => {
                let term = self.reference(&value.getattr(intern!(py, "target"))?)?;
                self.made.push(term);
                return Ok(());
            }
            Form::DataNode => {
                let inner = value.getattr(intern!(py, "value"))?;
                self.steps.push(Step::Visit(inner, depth));
                return Ok(());
            }
            Form::SpecList => {
                for item in value.getattr(intern!(py, "args"))?.try_iter()? {
                    children.push(Step::Visit(item?, depth + 1));
                }
                Step::List(children.len())
            }
            Form::SpecDict => {
                for item in value.getattr(intern!(py, "args"))?.try_iter()? {
                    children.push(Step::Visit(item?, depth + 1));
                }
                Step::Call(self.ops.intern("<dict>"), children.len())
            }
            Form::Task => {
                let op = self.op(&value.getattr(intern!(py, "func"))?)?;
                for arg in value.getattr(intern!(py, "args"))?.try_iter()? {
                    children.push(Step::Visit(arg?, depth + 1));
                }
                let kwargs = value.getattr(intern!(py, "kwargs"))?;
                let mut n = children.len();
                if kwargs.is_truthy()? {
                    let mut pairs = 0;
                    for item in kwargs.call_method0(intern!(py, "items"))?.try_iter()? {
                        let item = item?;
                        let name = item.get_item(0)?.str()?.to_string_lossy().into_owned();
                        children.push(Step::Emit(Term::Lit(Value::from(name))));
                        children.push(Step::Visit(item.get_item(1)?, depth + 2));
                        pairs += 1;
                    }
                    children.push(Step::Call(self.ops.intern("<kwargs>"), 2 * pairs));
                    n += 1;
                }
                Step::Call(op, n)
            }
            Form::Sequence => {
                for item in value.try_iter()? {
                    children.push(Step::Visit(item?, depth + 1));
                }
                Step::List(children.len())
            }
            Form::Mapping => {
                for item in value.call_method0(intern!(py, "items"))?.try_iter()? {
                    let item = item?;
                    children.push(Step::Visit(item.get_item(0)?, depth + 1));
                    children.push(Step::Visit(item.get_item(1)?, depth + 1));
                }
                Step::Call(self.ops.intern("<dict>"), children.len())
            }
            literal => {
                let term = self.literal(&value, literal)?;
                self.made.push(term);
                return Ok(());
            }
        };
        self.steps.push(gather);
        self.steps.extend(children.into_iter().rev());
        Ok(())
    }

    /// The form of `value`'s type, decided once per type in the order of
    /// the table in the module's docs (dask's containers are `Task`s too).
    fn form(&mut self, value: &Bound<'py, PyAny>) -> PyResult<Form> {
        // The type stays alive while a value of it is in the graph, so its
        // address names it for the whole conversion.
        let id = value.get_type_ptr() as usize;
        if let Some(form) = self.forms.get(&id) {
            return Ok(form.clone());
        }
        let ty = value.get_type();
        let form = self.decide(&ty)?;
        self.forms.insert(id, form.clone());
        Ok(form)
    }

    fn decide(&self, ty: &Bound<'py, PyType>) -> PyResult<Form> {
        let py = self.py;
        let [task_ref, alias, data_node, list, tuple, set, dict, task] = &self.spec;
        let is = |class: &Bound<'py, PyAny>| -> PyResult<bool> { ty.is_subclass(class) };
        if is(task_ref)? {
            return Ok(Form::TaskRef);
        }
        if is(alias)? {
            return Ok(Form::Alias);
        }
        if is(data_node)? {
            return Ok(Form::DataNode);
        }
        if is(list)? || is(tuple)? || is(set)? {
            return Ok(Form::SpecList);
        }
        if is(dict)? {
            return Ok(Form::SpecDict);
        }
        if is(task)? {
            return Ok(Form::Task);
        }
        let builtin = |class: Bound<'py, PyType>| ty.is_subclass(&class);
        if builtin(py.get_type::<PyList>())?
            || builtin(py.get_type::<PyTuple>())?
            || builtin(py.get_type::<PySet>())?
            || builtin(py.get_type::<PyFrozenSet>())?
        {
            return Ok(Form::Sequence);
        }
        if builtin(py.get_type::<PyDict>())? {
            return Ok(Form::Mapping);
        }
        if ty.is(py.get_type::<PyNone>()) {
            return Ok(Form::Null);
        }
        if builtin(py.get_type::<PyBool>())? {
            return Ok(Form::Bool);
        }
        if builtin(py.get_type::<PyString>())? {
            return Ok(Form::Str);
        }
        if builtin(py.get_type::<PyInt>())? || is(&self.numbers[0])? {
            return Ok(Form::Int);
        }
        if builtin(py.get_type::<PyFloat>())? || is(&self.numbers[1])? {
            return Ok(Form::Float);
        }
        Ok(Form::Opaque(type_name(ty)?.into()))
    }

    /// A literal of a leaf form, or `<opaque>` where its value is one the
    /// format cannot hold (an integer past 64 bits, a float not finite).
    fn literal(&mut self, value: &Bound<'py, PyAny>, form: Form) -> PyResult<Term> {
        let literal = match form {
            Form::Null => Some(Value::Null),
            Form::Bool => Some(Value::Bool(value.is_truthy()?)),
            Form::Str => Some(Value::from(
                value.cast::<PyString>()?.to_string_lossy().as_ref(),
            )),
            Form::Int => integer(value).map(Value::Int),
            Form::Float => {
                let x: f64 = value.extract()?;
                x.is_finite().then_some(Value::Float(x))
            }
            Form::Opaque(name) => return Ok(self.opaque_of(&name)),
            _ => None,
        };
        match literal {
            Some(literal) => Ok(Term::Lit(literal)),
            None => {
                let name = type_name(&value.get_type())?;
                Ok(self.opaque_of(&name))
            }
        }
    }

    fn opaque_of(&mut self, type_name: &str) -> Term {
        Term::Call {
            op: self.ops.intern("<opaque>"),
            args: vec![Term::Lit(Value::from(type_name))],
        }
    }

    /// A reference to the task `key` names when it is a dependency of the
    /// task being converted; `<key>` of it otherwise (a key a fused task
    /// holds inside itself, one missing from the graph, one dask does not
    /// count).
    fn reference(&mut self, key: &Bound<'py, PyAny>) -> PyResult<Term> {
        let hash = match key.hash() {
            Ok(hash) => Some(hash),
            Err(err) if err.is_instance_of::<PyTypeError>(self.py) => None,
            Err(err) => return Err(err),
        };
        if let Some(hash) = hash
            && let Some(node) = self.index.find(self.keys, hash, key)?
            && self.marks[node as usize] == self.stamp
        {
            self.shown[node as usize] = self.stamp;
            return Ok(Term::Ref(self.written[node as usize].clone()));
        }
        let written = key_of(key, key, 0)?;
        Ok(Term::Call {
            op: self.ops.intern("<key>"),
            args: vec![key_term(&written)],
        })
    }

    /// The op of a function: `module.qualname`, through partials.
    fn op(&mut self, func: &Bound<'py, PyAny>) -> PyResult<Op> {
        let id = func.as_ptr() as usize;
        if let Some(op) = self.names.get(&id) {
            return Ok(op.clone());
        }
        let py = self.py;
        let mut inner = func.clone();
        while inner.is_instance(&self.partial)? {
            inner = inner.getattr(intern!(py, "func"))?;
        }
        let ty = inner.get_type();
        let module = attribute_or(&inner, intern!(py, "__module__"), ty.as_any())?;
        let qualname = attribute_or(&inner, intern!(py, "__qualname__"), ty.as_any())?;
        let op = self.ops.intern(&format!("{module}.{qualname}"));
        self.names.insert(id, op.clone());
        Ok(op)
    }
}

/// `getattr(obj, name, None) or getattr(fallback, name)`, as text.
fn attribute_or(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    fallback: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let found = match obj.getattr(name) {
        Ok(value) if value.is_truthy()? => value,
        Ok(_) => fallback.getattr(name)?,
        Err(err) if err.is_instance_of::<PyAttributeError>(obj.py()) => fallback.getattr(name)?,
        Err(err) => return Err(err),
    };
    Ok(found.str()?.to_string_lossy().into_owned())
}

/// `module.qualname` of a type.
fn type_name(ty: &Bound<'_, PyType>) -> PyResult<String> {
    Ok(format!("{}.{}", ty.module()?, ty.qualname()?))
}

/// The bytes of each task whose layer tells its chunks and dtype (dask
/// arrays with a known shape): layer by layer, a key `(name, i, j, ...)`
/// with an index per axis is the product of its chunk lengths times the
/// dtype's item size. Chunks of unknown length (NaN) give no size.
fn chunk_sizes(
    graph: &Bound<'_, PyAny>,
    index: &KeyIndex,
    keys: &[Bound<'_, PyAny>],
) -> PyResult<Vec<Option<u64>>> {
    let py = graph.py();
    let mut sizes = vec![None; keys.len()];
    let layers = match graph.getattr(intern!(py, "layers")) {
        Ok(layers) if layers.is_truthy()? => layers,
        Ok(_) => return Ok(sizes),
        Err(err) if err.is_instance_of::<PyAttributeError>(py) => return Ok(sizes),
        Err(err) => return Err(err),
    };
    for layer in layers.call_method0(intern!(py, "values"))?.try_iter()? {
        let layer = layer?;
        let notes = match layer.getattr(intern!(py, "collection_annotations")) {
            Ok(notes) if notes.is_truthy()? => notes,
            Ok(_) => continue,
            Err(err) if err.is_instance_of::<PyAttributeError>(py) => continue,
            Err(err) => return Err(err),
        };
        let chunks = notes.call_method1(intern!(py, "get"), ("chunks",))?;
        let dtype = notes.call_method1(intern!(py, "get"), ("dtype",))?;
        let Ok(itemsize) = dtype
            .getattr(intern!(py, "itemsize"))
            .and_then(|size| size.extract::<u64>())
        else {
            continue;
        };
        let Ok(chunks) = chunk_lengths(&chunks) else {
            continue;
        };
        for key in layer.try_iter()? {
            let key = key?;
            let Some(cells) = cells_of(&key, &chunks) else {
                continue;
            };
            let Some(bytes) = cells.checked_mul(itemsize) else {
                continue;
            };
            if let Ok(hash) = key.hash()
                && let Some(node) = index.find(keys, hash, &key)?
            {
                sizes[node as usize] = Some(bytes);
            }
        }
    }
    Ok(sizes)
}

/// A layer's chunk lengths, axis by axis; `None` for a length not known
/// (NaN).
pub(crate) fn chunk_lengths(chunks: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<Option<u64>>>> {
    chunks
        .try_iter()?
        .map(|axis| {
            axis?
                .try_iter()?
                .map(|length| Ok(length?.extract::<u64>().ok()))
                .collect()
        })
        .collect()
}

/// The cells of the chunk a key `(name, i, j, ...)` names, if it names one
/// whose lengths are known.
fn cells_of(key: &Bound<'_, PyAny>, chunks: &[Vec<Option<u64>>]) -> Option<u64> {
    let key = key.cast::<PyTuple>().ok()?;
    if key.len() != chunks.len() + 1 {
        return None;
    }
    let mut cells = 1_u64;
    for (axis, lengths) in chunks.iter().enumerate() {
        let at: usize = key.get_item(axis + 1).ok()?.extract().ok()?;
        cells = cells.checked_mul((*lengths.get(at)?)?)?;
    }
    Some(cells)
}
