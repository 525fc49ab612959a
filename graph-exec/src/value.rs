//! `TaskValue`, what an executor needs of a user's value type, and `Dynamic`,
//! the ready-made value type of the built-in ops.

use std::fmt;
use std::io::{Read, Write};
use std::sync::Arc;

use serde::de::{Deserialize, Deserializer};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::OpError;

/// A value that tasks compute and pass to each other.
///
/// An executor builds values from a term's literals and lists, and otherwise
/// only clones them (to hand one result to several dependents), so cloning
/// should be cheap: share big payloads behind an `Arc`.
pub trait TaskValue: Clone + Send + Sync + 'static {
    /// The value of a literal in a task body.
    ///
    /// # Errors
    ///
    /// When the value type has no counterpart for this literal; the run is
    /// refused before it starts.
    fn from_literal(literal: &graph_core::Value) -> Result<Self, OpError>;

    /// The value of a list term, from its evaluated items.
    fn from_list(items: Vec<Self>) -> Self;

    /// The bytes the value takes in memory, its heap included, when the
    /// type can tell: what a run's memory accounting counts for the result
    /// (before the task's `size`, which is only a declaration).
    ///
    /// The default, `None`, leaves it to the task's `size`, and else to the
    /// size of the type itself.
    fn size_bytes(&self) -> Option<u64> {
        None
    }

    /// Writes the value to `out` so that [`TaskValue::unspill`] reads it
    /// back equal: what a run under a memory limit does with the results it
    /// needs latest (see [`RunOptions::memory_limit`](crate::RunOptions)).
    /// Any serde format does it for a serde type (`bincode::serialize_into`,
    /// say).
    ///
    /// # Errors
    ///
    /// The default refuses: a value type that cannot be spilled runs under
    /// a memory limit only while everything fits, and a run that would have
    /// to spill fails with an error saying so.
    fn spill(&self, out: &mut dyn Write) -> Result<(), OpError> {
        let _ = out;
        Err(NotSpillable.into())
    }

    /// Reads back a value that [`TaskValue::spill`] wrote.
    ///
    /// # Errors
    ///
    /// When the bytes are not a value; the default refuses, as
    /// [`TaskValue::spill`] does.
    fn unspill(input: &mut dyn Read) -> Result<Self, OpError> {
        let _ = input;
        Err(NotSpillable.into())
    }
}

/// The error of [`TaskValue::spill`] for a value type that does not
/// implement it.
#[derive(Clone, Copy, Debug, thiserror::Error)]
#[error("values of this type cannot be spilled to disk (their TaskValue implements no `spill`)")]
pub struct NotSpillable;

/// A dynamically typed value, as a Python task would see it: the value type
/// of [`OpRegistry::builtins`](crate::OpRegistry::builtins).
///
/// [`Display`](fmt::Display) prints Python's spelling (`None`, `True`,
/// `'text'`, `[1, 2.5]`); [`Serialize`] writes JSON (`null`, `true`,
/// `"text"`, `[1, 2.5]`).
///
/// # Example
///
/// ```
/// use graph_exec::Dynamic;
///
/// let list = Dynamic::from(vec![Dynamic::Int(1), Dynamic::from("a")]);
/// assert_eq!(list.to_string(), "[1, 'a']");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Dynamic {
    /// Python's `None`.
    None,
    /// A boolean.
    Bool(bool),
    /// A 64-bit integer; arithmetic that overflows is an error.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A string.
    Str(Arc<str>),
    /// A list.
    List(Arc<[Dynamic]>),
}

impl Dynamic {
    /// The name of the value's type, for error messages: `int`, `str`, ...
    pub fn type_name(&self) -> &'static str {
        match self {
            Dynamic::None => "NoneType",
            Dynamic::Bool(_) => "bool",
            Dynamic::Int(_) => "int",
            Dynamic::Float(_) => "float",
            Dynamic::Str(_) => "str",
            Dynamic::List(_) => "list",
        }
    }
}

impl TaskValue for Dynamic {
    fn from_literal(literal: &graph_core::Value) -> Result<Dynamic, OpError> {
        use graph_core::Value;
        Ok(match literal {
            Value::Null => Dynamic::None,
            Value::Bool(b) => Dynamic::Bool(*b),
            Value::Int(i) => Dynamic::Int(*i),
            Value::Float(x) => Dynamic::Float(*x),
            Value::Str(s) => Dynamic::Str(Arc::from(&**s)),
        })
    }

    fn from_list(items: Vec<Dynamic>) -> Dynamic {
        Dynamic::List(items.into())
    }

    /// The value and everything it holds: each list item, each string's
    /// bytes, counted once per value (shared parts count again).
    fn size_bytes(&self) -> Option<u64> {
        let item = std::mem::size_of::<Dynamic>() as u64;
        let mut bytes = item;
        let mut stack: Vec<&Dynamic> = vec![self];
        while let Some(value) = stack.pop() {
            match value {
                Dynamic::Str(s) => bytes += s.len() as u64,
                Dynamic::List(items) => {
                    bytes += item * items.len() as u64;
                    stack.extend(items.iter());
                }
                Dynamic::None | Dynamic::Bool(_) | Dynamic::Int(_) | Dynamic::Float(_) => {}
            }
        }
        Some(bytes)
    }

    fn spill(&self, out: &mut dyn Write) -> Result<(), OpError> {
        let mut bytes = Vec::new();
        self.encode(&mut bytes);
        out.write_all(&bytes)?;
        Ok(())
    }

    fn unspill(input: &mut dyn Read) -> Result<Dynamic, OpError> {
        let mut bytes = Vec::new();
        input.read_to_end(&mut bytes)?;
        Ok(Dynamic::decode(&bytes)?)
    }
}

/// The tags of [`Dynamic::encode`].
const NONE: u8 = 0;
const BOOL: u8 = 1;
const INT: u8 = 2;
const FLOAT: u8 = 3;
const STR: u8 = 4;
const LIST: u8 = 5;

/// Bytes that [`Dynamic::decode`] cannot read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("not an encoded value: {problem} at byte {at}")]
pub struct DecodeError {
    problem: &'static str,
    at: usize,
}

impl Dynamic {
    /// Appends the value to `out` in a compact binary form that
    /// [`Dynamic::decode`] reads back: a tag byte per value, then its
    /// payload (little-endian numbers, a length before a string's bytes or
    /// a list's items). Written without recursion, so a value nested however
    /// deep is written.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_exec::Dynamic;
    ///
    /// let value = Dynamic::from(vec![Dynamic::Int(1), Dynamic::from("a"), Dynamic::None]);
    /// let mut bytes = Vec::new();
    /// value.encode(&mut bytes);
    /// assert_eq!(Dynamic::decode(&bytes).unwrap(), value);
    /// ```
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut stack: Vec<&Dynamic> = vec![self];
        while let Some(value) = stack.pop() {
            match value {
                Dynamic::None => out.push(NONE),
                Dynamic::Bool(b) => out.extend_from_slice(&[BOOL, u8::from(*b)]),
                Dynamic::Int(i) => {
                    out.push(INT);
                    out.extend_from_slice(&i.to_le_bytes());
                }
                Dynamic::Float(x) => {
                    out.push(FLOAT);
                    out.extend_from_slice(&x.to_bits().to_le_bytes());
                }
                Dynamic::Str(s) => {
                    out.push(STR);
                    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
                Dynamic::List(items) => {
                    out.push(LIST);
                    out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                    // Popped in order: pushed in reverse.
                    stack.extend(items.iter().rev());
                }
            }
        }
    }

    /// Reads a value that [`Dynamic::encode`] wrote; without recursion.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] for bytes that end early, an unknown tag, text that
    /// is not UTF-8, or bytes left over.
    pub fn decode(bytes: &[u8]) -> Result<Dynamic, DecodeError> {
        /// A list being read: its items so far, and how many are to come.
        struct Open {
            items: Vec<Dynamic>,
            left: u64,
        }
        let mut at = 0_usize;
        let fail = |problem, at| DecodeError { problem, at };
        let take = |at: &mut usize, n: usize| -> Result<&[u8], DecodeError> {
            let end = at.checked_add(n).filter(|&end| end <= bytes.len());
            let end = end.ok_or(fail("the bytes end early", *at))?;
            let slice = &bytes[*at..end];
            *at = end;
            Ok(slice)
        };
        let word = |at: &mut usize| -> Result<u64, DecodeError> {
            Ok(u64::from_le_bytes(
                take(at, 8)?.try_into().expect("8 bytes"),
            ))
        };
        let mut open: Vec<Open> = Vec::new();
        loop {
            let tag = take(&mut at, 1)?[0];
            let mut value = match tag {
                NONE => Dynamic::None,
                BOOL => Dynamic::Bool(take(&mut at, 1)?[0] != 0),
                INT => Dynamic::Int(word(&mut at)? as i64),
                FLOAT => Dynamic::Float(f64::from_bits(word(&mut at)?)),
                STR => {
                    let len = usize::try_from(word(&mut at)?)
                        .map_err(|_| fail("a length too large", at))?;
                    let text = std::str::from_utf8(take(&mut at, len)?)
                        .map_err(|_| fail("text that is not UTF-8", at))?;
                    Dynamic::Str(text.into())
                }
                LIST => {
                    let left = word(&mut at)?;
                    // Every item takes a byte at least: a longer list is a lie.
                    if left > (bytes.len() - at) as u64 {
                        return Err(fail("a list longer than the bytes", at));
                    }
                    if left > 0 {
                        open.push(Open {
                            items: Vec::with_capacity(left as usize),
                            left,
                        });
                        continue;
                    }
                    Dynamic::List(Arc::from([]))
                }
                _ => return Err(fail("an unknown tag", at - 1)),
            };
            // Close every list this value completes.
            loop {
                let Some(top) = open.last_mut() else {
                    return if at == bytes.len() {
                        Ok(value)
                    } else {
                        Err(fail("bytes left over", at))
                    };
                };
                top.items.push(value);
                top.left -= 1;
                if top.left > 0 {
                    break;
                }
                let done = open.pop().expect("a list is open");
                value = Dynamic::List(done.items.into());
            }
        }
    }
}

impl From<i64> for Dynamic {
    fn from(i: i64) -> Dynamic {
        Dynamic::Int(i)
    }
}

impl From<f64> for Dynamic {
    fn from(x: f64) -> Dynamic {
        Dynamic::Float(x)
    }
}

impl From<&str> for Dynamic {
    fn from(s: &str) -> Dynamic {
        Dynamic::Str(s.into())
    }
}

impl From<Vec<Dynamic>> for Dynamic {
    fn from(items: Vec<Dynamic>) -> Dynamic {
        Dynamic::List(items.into())
    }
}

impl fmt::Display for Dynamic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dynamic::None => f.write_str("None"),
            Dynamic::Bool(b) => write!(f, "{}", graph_core::Value::Bool(*b)),
            Dynamic::Int(i) => write!(f, "{i}"),
            Dynamic::Float(x) => write!(f, "{}", graph_core::Value::Float(*x)),
            Dynamic::Str(s) => write!(f, "{}", graph_core::Value::Str(Box::from(&**s))),
            Dynamic::List(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
        }
    }
}

impl Serialize for Dynamic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Dynamic::None => serializer.serialize_unit(),
            Dynamic::Bool(b) => serializer.serialize_bool(*b),
            Dynamic::Int(i) => serializer.serialize_i64(*i),
            Dynamic::Float(x) => serializer.serialize_f64(*x),
            Dynamic::Str(s) => serializer.serialize_str(s),
            Dynamic::List(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
        }
    }
}

/// A [`Dynamic`] in a serde form that says its own type, for formats that do
/// not (bincode, which carries values between processes).
///
/// [`Dynamic`]'s own [`Serialize`] writes plain JSON (`1`, `"a"`), which only
/// a self-describing format can read back; `Tagged` writes each value as an
/// enum variant (`Int(1)`, `Str("a")`), so any serde format round-trips it.
///
/// # Example
///
/// ```
/// use graph_exec::{Dynamic, Tagged};
///
/// let value = Tagged(Dynamic::from(vec![Dynamic::Int(1), Dynamic::from("a")]));
/// let json = serde_json::to_string(&value).unwrap();
/// assert_eq!(json, r#"{"List":[{"Int":1},{"Str":"a"}]}"#);
/// let back: Tagged = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, value);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tagged(pub Dynamic);

/// The variant names of [`Tagged`], in the order of [`Dynamic`]'s variants.
const VARIANTS: &[&str] = &["None", "Bool", "Int", "Float", "Str", "List"];

impl Serialize for Tagged {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// The items of a list, each tagged, without copying them.
        struct Items<'a>(&'a [Dynamic]);

        impl Serialize for Items<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
                for item in self.0 {
                    seq.serialize_element(&TaggedRef(item))?;
                }
                seq.end()
            }
        }

        /// A borrowed `Tagged`.
        struct TaggedRef<'a>(&'a Dynamic);

        impl Serialize for TaggedRef<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let name = "Dynamic";
                match self.0 {
                    Dynamic::None => serializer.serialize_unit_variant(name, 0, VARIANTS[0]),
                    Dynamic::Bool(b) => {
                        serializer.serialize_newtype_variant(name, 1, VARIANTS[1], b)
                    }
                    Dynamic::Int(i) => {
                        serializer.serialize_newtype_variant(name, 2, VARIANTS[2], i)
                    }
                    Dynamic::Float(x) => {
                        serializer.serialize_newtype_variant(name, 3, VARIANTS[3], x)
                    }
                    Dynamic::Str(s) => {
                        serializer.serialize_newtype_variant(name, 4, VARIANTS[4], &**s)
                    }
                    Dynamic::List(items) => {
                        serializer.serialize_newtype_variant(name, 5, VARIANTS[5], &Items(items))
                    }
                }
            }
        }

        TaggedRef(&self.0).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Tagged {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tagged, D::Error> {
        /// What `Tagged` writes, read back with serde's derived enum reader.
        #[derive(serde::Deserialize)]
        #[serde(rename = "Dynamic")]
        enum Owned {
            None,
            Bool(bool),
            Int(i64),
            Float(f64),
            Str(String),
            List(Vec<Owned>),
        }

        fn convert(owned: Owned) -> Dynamic {
            match owned {
                Owned::None => Dynamic::None,
                Owned::Bool(b) => Dynamic::Bool(b),
                Owned::Int(i) => Dynamic::Int(i),
                Owned::Float(x) => Dynamic::Float(x),
                Owned::Str(s) => Dynamic::Str(s.into()),
                Owned::List(items) => Dynamic::List(items.into_iter().map(convert).collect()),
            }
        }

        Owned::deserialize(deserializer).map(|owned| Tagged(convert(owned)))
    }
}
