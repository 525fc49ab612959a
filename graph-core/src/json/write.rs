//! Writing `taskgraph-json/1`: each task record written with an explicit
//! stack (terms and keys nest up to [`MAX_NESTING`](super::MAX_NESTING)
//! levels, and no walk of one recurses), and the serde forms of keys and
//! literals, which the records and other JSON documents (the command
//! line's reports) write through.

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use crate::graph::{Body, Task};
use crate::{Key, Term, Value};

/// Writes task records, with one stack for all of them: terms and keys
/// nest deep, and their walk must not recurse.
#[derive(Default)]
pub(super) struct Records<'g> {
    stack: Vec<Step<'g>>,
}

/// One step of writing: a term or key still to write, or bytes that close
/// what an earlier step opened.
enum Step<'a> {
    Term(&'a Term),
    Key(&'a Key),
    Bytes(&'static [u8]),
}

impl<'g> Records<'g> {
    /// Writes one task record: `{"key": KEY, "task": TERM}` (or `"deps"`),
    /// then `"size"` and `"cost"` when given.
    pub(super) fn write(
        &mut self,
        out: &mut impl Write,
        key: &'g Key,
        task: &'g Task,
    ) -> io::Result<()> {
        let Task { body, size, cost } = task;
        out.write_all(b"{\"key\":")?;
        self.key(out, key)?;
        match body {
            Body::Term(term) => {
                out.write_all(b",\"task\":")?;
                self.term(out, term)?;
            }
            Body::Opaque(deps) => {
                out.write_all(b",\"deps\":[")?;
                for (i, dep) in deps.iter().enumerate() {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    self.key(out, dep)?;
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

    fn term(&mut self, out: &mut impl Write, term: &'g Term) -> io::Result<()> {
        match term {
            Term::Lit(value) => scalar(out, value),
            _ => {
                self.stack.push(Step::Term(term));
                self.drain(out)
            }
        }
    }

    fn key(&mut self, out: &mut impl Write, key: &'g Key) -> io::Result<()> {
        match key {
            Key::Tuple(_) => {
                self.stack.push(Step::Key(key));
                self.drain(out)
            }
            _ => scalar(out, key),
        }
    }

    /// Writes the steps on the stack until it is empty.
    fn drain(&mut self, out: &mut impl Write) -> io::Result<()> {
        while let Some(step) = self.stack.pop() {
            match step {
                Step::Bytes(bytes) => out.write_all(bytes)?,
                Step::Term(Term::Lit(value)) => scalar(out, value)?,
                Step::Term(Term::Ref(key)) => {
                    out.write_all(b"{\"ref\":")?;
                    self.stack.push(Step::Bytes(b"}"));
                    self.stack.push(Step::Key(key));
                }
                Step::Term(Term::Call { op, args }) => {
                    out.write_all(b"{\"call\":")?;
                    scalar(out, op.as_str())?;
                    out.write_all(b",\"args\":[")?;
                    self.stack.push(Step::Bytes(b"]}"));
                    self.push_items(args, Step::Term);
                }
                Step::Term(Term::List(items)) => {
                    out.write_all(b"{\"list\":[")?;
                    self.stack.push(Step::Bytes(b"]}"));
                    self.push_items(items, Step::Term);
                }
                Step::Key(Key::Tuple(parts)) => {
                    out.write_all(b"[")?;
                    self.stack.push(Step::Bytes(b"]"));
                    self.push_items(parts, Step::Key);
                }
                Step::Key(key) => scalar(out, key)?,
            }
        }
        Ok(())
    }

    /// Pushes `items`, separated by commas, so that they pop in order.
    fn push_items<T>(&mut self, items: &'g [T], step: impl Fn(&'g T) -> Step<'g>) {
        for (i, item) in items.iter().enumerate().rev() {
            self.stack.push(step(item));
            if i > 0 {
                self.stack.push(Step::Bytes(b","));
            }
        }
    }
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
