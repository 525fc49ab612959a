//! The serde reader of `taskgraph-json/1`, which reports every problem with
//! its line, column, and the position and key of its task: the reader of
//! record, which the fast reader hands a document to when it is not valid.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::error::{Error, Problem, TaskAt};
use super::{FORMAT, GROW_EVERY, MAX_NESTING, RED_ZONE, STACK_SEGMENT};
use crate::graph::{Body, Task};
use crate::term::{Op, OpInterner};
use crate::{Key, TaskGraph, Term, Value};

/// What the parser knows about where it is, to put into errors.
#[derive(Default)]
struct Context {
    ops: RefCell<OpInterner>,
    /// The task being read, if any.
    at: RefCell<Option<TaskAt>>,
    /// A structured problem behind the serde error being returned.
    problem: RefCell<Option<Problem>>,
    /// How many terms and key tuples enclose the value being read.
    depth: Cell<usize>,
}

impl Context {
    /// Reads a nested term or key tuple with `read`: an error past
    /// [`MAX_NESTING`] levels, and every [`GROW_EVERY`] levels the stack is
    /// given room for that many more (onto the heap if need be), so that no
    /// nesting overflows it.
    fn nested<T, E: de::Error>(&self, read: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
        let depth = self.depth.get() + 1;
        if depth > MAX_NESTING {
            return Err(self.fail(Problem::TooDeep { limit: MAX_NESTING }));
        }
        self.depth.set(depth);
        let value = if depth.is_multiple_of(GROW_EVERY) {
            stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, read)
        } else {
            read()
        };
        self.depth.set(depth - 1);
        value
    }

    fn fail<E: de::Error>(&self, problem: Problem) -> E {
        let err = E::custom(&problem);
        *self.problem.borrow_mut() = Some(problem);
        err
    }
}

pub(super) fn parse(bytes: &[u8]) -> Result<TaskGraph, Error> {
    // A UTF-8 byte order mark, which some editors write, is not JSON; it
    // says nothing, so it is passed over.
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let context = Context::default();
    let mut json = serde_json::Deserializer::from_slice(bytes);
    // Terms nest as deep as the chains fused into them: serde_json's limit of
    // 128 levels is replaced by `MAX_NESTING`, with the stack grown where the
    // nesting needs it (`Context::nested`).
    json.disable_recursion_limit();
    let parsed = GraphSeed { context: &context }
        .deserialize(&mut json)
        .and_then(|graph| json.end().map(|()| graph));
    let graph = parsed.map_err(|err| {
        let (line, column) = (err.line(), err.column());
        let suffix = format!(" at line {line} column {column}");
        let text = err.to_string();
        let message = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
        if err.is_data() {
            let problem = context.problem.take().unwrap_or(Problem::Type { message });
            Error::Invalid {
                line,
                column,
                task: context.at.take(),
                problem,
            }
        } else {
            Error::Syntax {
                line,
                column,
                message,
            }
        }
    })?;
    Ok(graph)
}

/// Builds the graph's topology: every reference resolves, and no cycle.
pub(super) fn check(graph: &TaskGraph) -> Result<(), Error> {
    graph.topology().map_err(|err| match err {
        crate::Error::MissingDependency { ref key, .. } => {
            let index = graph
                .node_id(key)
                .expect("the task with the reference exists")
                .index();
            Error::AtTask {
                index,
                error: Box::new(err.into()),
            }
        }
        other => other.into(),
    })?;
    Ok(())
}

struct GraphSeed<'c> {
    context: &'c Context,
}

impl<'de> DeserializeSeed<'de> for GraphSeed<'_> {
    type Value = TaskGraph;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<TaskGraph, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for GraphSeed<'_> {
    type Value = TaskGraph;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a {FORMAT} object: {{\"format\": \"{FORMAT}\", \"tasks\": [...]}}"
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TaskGraph, A::Error> {
        let context = self.context;
        let mut format_seen = false;
        let mut graph = None;
        while let Some(field) = map.next_key::<TopField>()? {
            match field {
                TopField::Format => {
                    let found: String = map.next_value()?;
                    if found != FORMAT {
                        return Err(context.fail(Problem::WrongFormat { found }));
                    }
                    format_seen = true;
                }
                TopField::Tasks => {
                    if graph.is_some() {
                        return Err(context.fail(Problem::RepeatedField { field: "tasks" }));
                    }
                    graph = Some(map.next_value_seed(TasksSeed { context })?);
                    *context.at.borrow_mut() = None;
                }
                TopField::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if !format_seen {
            return Err(context.fail(Problem::MissingFormat));
        }
        graph.ok_or_else(|| context.fail(Problem::MissingTasks))
    }
}

/// Field names, matched without allocating.
macro_rules! field_enum {
    ($name:ident { $($variant:ident = $text:literal),* $(,)? } else $other:ident $(($payload:ty))?) => {
        enum $name {
            $($variant,)*
            $other $(($payload))?,
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct FieldVisitor;
                impl<'de> Visitor<'de> for FieldVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a field name")
                    }
                    fn visit_str<E: de::Error>(self, name: &str) -> Result<$name, E> {
                        Ok(match name {
                            $($text => $name::$variant,)*
                            #[allow(unused_variables)]
                            other => field_enum!(@other $name $other other $(($payload))?),
                        })
                    }
                }
                deserializer.deserialize_identifier(FieldVisitor)
            }
        }
    };
    (@other $name:ident $other:ident $value:ident ($payload:ty)) => { $name::$other($value.to_owned()) };
    (@other $name:ident $other:ident $value:ident) => { $name::$other };
}

field_enum!(TopField { Format = "format", Tasks = "tasks" } else Other);
field_enum!(TaskField {
    Key = "key", Task = "task", Deps = "deps", Size = "size", Cost = "cost"
} else Unknown(String));
field_enum!(TermField { Ref = "ref", Call = "call", Args = "args", List = "list" } else Unknown(String));

struct TasksSeed<'c> {
    context: &'c Context,
}

impl<'de> DeserializeSeed<'de> for TasksSeed<'_> {
    type Value = TaskGraph;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<TaskGraph, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for TasksSeed<'_> {
    type Value = TaskGraph;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of tasks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TaskGraph, A::Error> {
        let context = self.context;
        let mut graph = TaskGraph::with_capacity(seq.size_hint().unwrap_or(0));
        for index in 0.. {
            *context.at.borrow_mut() = Some(TaskAt { index, key: None });
            let Some((key, task)) = seq.next_element_seed(TaskSeed { context })? else {
                break;
            };
            graph.insert_task(key, task).map_err(|err| match err {
                crate::Error::DuplicateKey { key } => context.fail(Problem::DuplicateKey { key }),
                other => de::Error::custom(other),
            })?;
        }
        Ok(graph)
    }
}

struct TaskSeed<'c> {
    context: &'c Context,
}

impl<'de> DeserializeSeed<'de> for TaskSeed<'_> {
    type Value = (Key, Task);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(Key, Task), D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TaskSeed<'_> {
    type Value = (Key, Task);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a task object: {\"key\": KEY, \"task\": TERM} or {\"key\": KEY, \"deps\": [KEY, ...]}",
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(Key, Task), A::Error> {
        let context = self.context;
        let repeated = |field| context.fail(Problem::RepeatedField { field });
        let (mut key, mut term, mut deps, mut size, mut cost) = (None, None, None, None, None);
        while let Some(field) = map.next_key::<TaskField>()? {
            match field {
                TaskField::Key => {
                    if key.is_some() {
                        return Err(repeated("key"));
                    }
                    let parsed = map.next_value_seed(KeySeed { context })?;
                    if let Some(at) = context.at.borrow_mut().as_mut() {
                        at.key = Some(parsed.clone());
                    }
                    key = Some(parsed);
                }
                TaskField::Task => {
                    if term.is_some() {
                        return Err(repeated("task"));
                    }
                    term = Some(map.next_value_seed(TermSeed { context })?);
                }
                TaskField::Deps => {
                    if deps.is_some() {
                        return Err(repeated("deps"));
                    }
                    deps = Some(map.next_value_seed(ArraySeed {
                        expecting: "an array of keys",
                        element: || KeySeed { context },
                    })?);
                }
                TaskField::Size => {
                    if size.is_some() {
                        return Err(repeated("size"));
                    }
                    size = Some(map.next_value::<u64>()?);
                }
                TaskField::Cost => {
                    if cost.is_some() {
                        return Err(repeated("cost"));
                    }
                    let seconds: f64 = map.next_value()?;
                    if seconds < 0.0 {
                        return Err(de::Error::custom(format_args!(
                            "cost must be a non-negative number of seconds, not {seconds}"
                        )));
                    }
                    cost = Some(seconds);
                }
                TaskField::Unknown(field) => {
                    return Err(context.fail(Problem::UnknownField { field }));
                }
            }
        }
        let key = key.ok_or_else(|| context.fail(Problem::MissingField { field: "key" }))?;
        let body = match (term, deps) {
            (Some(term), None) => Body::Term(term),
            (None, Some(deps)) => Body::Opaque(deps),
            (Some(_), Some(_)) => return Err(context.fail(Problem::TaskAndDeps)),
            (None, None) => return Err(context.fail(Problem::MissingField { field: "task" })),
        };
        Ok((key, Task { body, size, cost }))
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key: a string, a number, or an array of those")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
        Ok(Key::from(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Key, E> {
        Ok(Key::from(s))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Key, E> {
        Ok(Key::Int(i))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Key, E> {
        i64::try_from(u).map(Key::Int).map_err(|_| out_of_range(u))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Key, E> {
        Ok(Key::Float(x))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        let mut parts = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(part) = seq.next_element::<Key>()? {
            parts.push(part);
        }
        Ok(Key::from(parts))
    }
}

/// Reads a key, sharing the strings in it through the context's interner.
#[derive(Clone, Copy)]
struct KeySeed<'c> {
    context: &'c Context,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        KeyVisitor.expecting(f)
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
        Ok(Key::Str(self.context.ops.borrow_mut().intern_str(s)))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Key, E> {
        KeyVisitor.visit_i64(i)
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Key, E> {
        KeyVisitor.visit_u64(u)
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Key, E> {
        KeyVisitor.visit_f64(x)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
        self.context.nested(|| {
            let mut parts = Vec::with_capacity(4);
            while let Some(part) = seq.next_element_seed(self)? {
                parts.push(part);
            }
            Ok(Key::from(parts))
        })
    }
}

/// Reads an array, each element with a seed made by `element` (the seeds
/// carry the reader's context, so each is made afresh).
struct ArraySeed<F> {
    /// What the array holds, for serde's "expected ..." in errors.
    expecting: &'static str,
    element: F,
}

impl<'de, F, S> DeserializeSeed<'de> for ArraySeed<F>
where
    F: Fn() -> S,
    S: DeserializeSeed<'de>,
{
    type Value = Vec<S::Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F, S> Visitor<'de> for ArraySeed<F>
where
    F: Fn() -> S,
    S: DeserializeSeed<'de>,
{
    type Value = Vec<S::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(item) = seq.next_element_seed((self.element)())? {
            items.push(item);
        }
        Ok(items)
    }
}

fn out_of_range<E: de::Error>(u: u64) -> E {
    E::custom(format_args!(
        "integer {u} does not fit in a signed 64-bit integer"
    ))
}

struct TermSeed<'c> {
    context: &'c Context,
}

impl<'de> DeserializeSeed<'de> for TermSeed<'_> {
    type Value = Term;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Term, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TermSeed<'_> {
    type Value = Term;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a term: a JSON scalar, {\"ref\": KEY}, {\"call\": \"op\", \"args\": [TERM, ...]} or {\"list\": [TERM, ...]}",
        )
    }

    fn visit_unit<E: de::Error>(self) -> Result<Term, E> {
        Ok(Term::Lit(Value::Null))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Term, E> {
        Ok(Term::Lit(Value::Bool(b)))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Term, E> {
        Ok(Term::Lit(Value::Int(i)))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Term, E> {
        i64::try_from(u)
            .map(|i| Term::Lit(Value::Int(i)))
            .map_err(|_| out_of_range(u))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Term, E> {
        Ok(Term::Lit(Value::Float(x)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Term, E> {
        Ok(Term::Lit(Value::from(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _seq: A) -> Result<Term, A::Error> {
        Err(de::Error::custom(
            "a bare array is not a term: write a list as {\"list\": [TERM, ...]}",
        ))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Term, A::Error> {
        let context = self.context;
        context.nested(|| self.term(map))
    }
}

impl TermSeed<'_> {
    /// The fields of a term object.
    fn term<'de, A: MapAccess<'de>>(self, mut map: A) -> Result<Term, A::Error> {
        let context = self.context;
        let (mut reference, mut op, mut args, mut list) = (None, None, None, None);
        while let Some(field) = map.next_key::<TermField>()? {
            match field {
                TermField::Ref if reference.is_none() => {
                    reference = Some(map.next_value_seed(KeySeed { context })?);
                }
                TermField::Call if op.is_none() => {
                    op = Some(map.next_value_seed(OpSeed { context })?);
                }
                TermField::Args if args.is_none() => {
                    args = Some(map.next_value_seed(terms(context))?);
                }
                TermField::List if list.is_none() => {
                    list = Some(map.next_value_seed(terms(context))?);
                }
                TermField::Ref | TermField::Call | TermField::Args | TermField::List => {
                    return Err(de::Error::custom("a term object repeats a field"));
                }
                TermField::Unknown(field) => {
                    return Err(de::Error::custom(format_args!(
                        "unknown term field `{field}` (a term is {{\"ref\": ...}}, {{\"call\": ..., \"args\": ...}} or {{\"list\": ...}})"
                    )));
                }
            }
        }
        match (reference, op, args, list) {
            (Some(key), None, None, None) => Ok(Term::Ref(key)),
            (None, Some(op), Some(args), None) => Ok(Term::Call { op, args }),
            (None, Some(op), None, None) => Err(de::Error::custom(format_args!(
                "call of `{op}` has no `args` (write \"args\": [] for none)"
            ))),
            (None, None, None, Some(items)) => Ok(Term::List(items)),
            (None, None, Some(_), None) => Err(de::Error::custom("`args` without `call`")),
            (None, None, None, None) => Err(de::Error::custom(
                "empty term object (a term is {\"ref\": ...}, {\"call\": ..., \"args\": ...} or {\"list\": ...})",
            )),
            _ => Err(de::Error::custom(
                "a term object has exactly one of `ref`, `call` (with `args`) and `list`",
            )),
        }
    }
}

/// The seed of an array of terms (a call's `args`, a `list`).
fn terms<'c>(context: &'c Context) -> ArraySeed<impl Fn() -> TermSeed<'c>> {
    ArraySeed {
        expecting: "an array of terms",
        element: move || TermSeed { context },
    }
}

/// Reads an op name straight into the interner, without an owned copy.
struct OpSeed<'c> {
    context: &'c Context,
}

impl<'de> DeserializeSeed<'de> for OpSeed<'_> {
    type Value = Op;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Op, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for OpSeed<'_> {
    type Value = Op;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an op name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Op, E> {
        Ok(self.context.ops.borrow_mut().intern(name))
    }
}
