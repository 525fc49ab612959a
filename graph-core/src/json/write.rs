//! Writing `taskgraph-json/1`: the serde forms of keys, literals, terms and
//! tasks.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use crate::graph::{Body, Task};
use crate::{Key, Term, Value};

pub(super) struct TaskRecord<'a> {
    pub(super) key: &'a Key,
    pub(super) task: &'a Task,
}

impl Serialize for TaskRecord<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let Task { body, size, cost } = self.task;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("key", self.key)?;
        match body {
            Body::Term(term) => map.serialize_entry("task", term)?,
            Body::Opaque(deps) => map.serialize_entry("deps", deps)?,
        }
        if let Some(size) = size {
            map.serialize_entry("size", size)?;
        }
        if let Some(cost) = cost {
            map.serialize_entry("cost", cost)?;
        }
        map.end()
    }
}

impl Serialize for Key {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Key::Str(s) => serializer.serialize_str(s),
            Key::Int(i) => serializer.serialize_i64(*i),
            Key::Float(x) => serializer.serialize_f64(*x),
            Key::Tuple(parts) => {
                let mut seq = serializer.serialize_seq(Some(parts.len()))?;
                for part in parts.iter() {
                    seq.serialize_element(part)?;
                }
                seq.end()
            }
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Int(i) => serializer.serialize_i64(*i),
            Value::Float(x) => serializer.serialize_f64(*x),
            Value::Str(s) => serializer.serialize_str(s),
        }
    }
}

impl Serialize for Term {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Term::Lit(value) => value.serialize(serializer),
            Term::Ref(key) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("ref", key)?;
                map.end()
            }
            Term::Call { op, args } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("call", op.as_str())?;
                map.serialize_entry("args", args)?;
                map.end()
            }
            Term::List(items) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("list", items)?;
                map.end()
            }
        }
    }
}
