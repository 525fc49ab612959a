//! Writing `taskgraph-json/1`: each task record written with an explicit
//! stack (terms and keys nest up to [`MAX_NESTING`](super::MAX_NESTING)
//! levels, and no walk of one recurses), and the serde forms of keys,
//! literals and terms, for documents of other formats that hold them.

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq, Serializer};

use crate::graph::{Body, Task};
use crate::{Key, Term, Value};

/// Writes one task record: `{"key": KEY, "task": TERM}` (or `"deps"`), then
/// `"size"` and `"cost"` when given. The same bytes as the serde forms
/// below, written without recursion.
pub(super) fn task_record(out: &mut impl Write, key: &Key, task: &Task) -> io::Result<()> {
    let Task { body, size, cost } = task;
    out.write_all(b"{\"key\":")?;
    write_key(out, key)?;
    match body {
        Body::Term(term) => {
            out.write_all(b",\"task\":")?;
            write_term(out, term)?;
        }
        Body::Opaque(deps) => {
            out.write_all(b",\"deps\":[")?;
            for (i, dep) in deps.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_key(out, dep)?;
            }
            out.write_all(b"]")?;
        }
    }
    if let Some(size) = size {
        write!(out, ",\"size\":{size}")?;
    }
    if let Some(cost) = cost {
        out.write_all(b",\"cost\":")?;
        scalar(out, cost)?;
    }
    out.write_all(b"}")
}

/// One step of writing: a term or key still to write, or bytes that close
/// what an earlier step opened.
enum Step<'a> {
    Term(&'a Term),
    Key(&'a Key),
    Bytes(&'static [u8]),
}

/// Pushes `items`, separated by commas, so that they pop in order.
fn push_items<'a, T: 'a>(
    stack: &mut Vec<Step<'a>>,
    items: &'a [T],
    step: impl Fn(&'a T) -> Step<'a>,
) {
    for (i, item) in items.iter().enumerate().rev() {
        stack.push(step(item));
        if i > 0 {
            stack.push(Step::Bytes(b","));
        }
    }
}

fn write_term(out: &mut impl Write, term: &Term) -> io::Result<()> {
    write_steps(out, vec![Step::Term(term)])
}

fn write_key(out: &mut impl Write, key: &Key) -> io::Result<()> {
    write_steps(out, vec![Step::Key(key)])
}

fn write_steps<'a>(out: &mut impl Write, mut stack: Vec<Step<'a>>) -> io::Result<()> {
    while let Some(step) = stack.pop() {
        match step {
            Step::Bytes(bytes) => out.write_all(bytes)?,
            Step::Term(Term::Lit(value)) => scalar(out, value)?,
            Step::Term(Term::Ref(key)) => {
                out.write_all(b"{\"ref\":")?;
                stack.push(Step::Bytes(b"}"));
                stack.push(Step::Key(key));
            }
            Step::Term(Term::Call { op, args }) => {
                out.write_all(b"{\"call\":")?;
                scalar(out, op.as_str())?;
                out.write_all(b",\"args\":[")?;
                stack.push(Step::Bytes(b"]}"));
                push_items(&mut stack, args, Step::Term);
            }
            Step::Term(Term::List(items)) => {
                out.write_all(b"{\"list\":[")?;
                stack.push(Step::Bytes(b"]}"));
                push_items(&mut stack, items, Step::Term);
            }
            Step::Key(Key::Tuple(parts)) => {
                out.write_all(b"[")?;
                stack.push(Step::Bytes(b"]"));
                push_items(&mut stack, parts, Step::Key);
            }
            Step::Key(key) => scalar(out, key)?,
        }
    }
    Ok(())
}

/// A scalar (a literal, a string, a key that is no tuple) in serde_json's
/// compact form.
fn scalar(out: &mut impl Write, value: &(impl Serialize + ?Sized)) -> io::Result<()> {
    serde_json::to_writer(out, value).map_err(io::Error::from)
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
