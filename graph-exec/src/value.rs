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

    /// How many lists (or other containers) the value nests, one inside the
    /// next, counting no further than `limit + 1`. An executor refuses a
    /// result that nests deeper than [`graph_core::json::MAX_NESTING`]
    /// levels: what no command could print, send or store. The default, 0,
    /// suits a type that does not nest.
    fn nesting(&self, limit: usize) -> usize {
        let _ = limit;
        0
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
#[derive(Clone, Debug)]
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

/// Values are equal when they are the same value, lists item by item,
/// compared with a stack of their own so that values nested however deep
/// compare. Floats compare as floats (`NaN` is not equal to itself).
impl PartialEq for Dynamic {
    fn eq(&self, other: &Dynamic) -> bool {
        let mut stack: Vec<(&Dynamic, &Dynamic)> = vec![(self, other)];
        while let Some(pair) = stack.pop() {
            let same = match pair {
                (Dynamic::None, Dynamic::None) => true,
                (Dynamic::Bool(a), Dynamic::Bool(b)) => a == b,
                (Dynamic::Int(a), Dynamic::Int(b)) => a == b,
                (Dynamic::Float(a), Dynamic::Float(b)) => a == b,
                (Dynamic::Str(a), Dynamic::Str(b)) => a == b,
                (Dynamic::List(a), Dynamic::List(b)) => {
                    if Arc::ptr_eq(a, b) {
                        continue;
                    }
                    if a.len() != b.len() {
                        return false;
                    }
                    stack.extend(a.iter().zip(b.iter()));
                    true
                }
                _ => false,
            };
            if !same {
                return false;
            }
        }
        true
    }
}

/// Dropping a list takes apart the lists it alone holds with a stack of its
/// own, so that a value nested however deep is freed without recursion.
impl Drop for Dynamic {
    fn drop(&mut self) {
        let Dynamic::List(items) = self else {
            return;
        };
        let Some(items) = Arc::get_mut(items) else {
            return;
        };
        let mut stack: Vec<Dynamic> = Vec::new();
        take_lists(items, &mut stack);
        while let Some(mut value) = stack.pop() {
            if let Dynamic::List(items) = &mut value
                && let Some(items) = Arc::get_mut(items)
            {
                take_lists(items, &mut stack);
            }
            // `value` now holds no list it alone owns: dropping it recurses
            // no further.
        }
    }
}

/// Moves the lists among `items` onto `stack`, leaving `None` in their
/// place.
fn take_lists(items: &mut [Dynamic], stack: &mut Vec<Dynamic>) {
    for item in items {
        if matches!(item, Dynamic::List(_)) {
            stack.push(std::mem::replace(item, Dynamic::None));
        }
    }
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
        // Most results, a scalar or a string, without a stack.
        match self {
            Dynamic::None | Dynamic::Bool(_) | Dynamic::Int(_) | Dynamic::Float(_) => {
                return Some(item);
            }
            Dynamic::Str(s) => return Some(item + s.len() as u64),
            Dynamic::List(items) if !items.iter().any(|item| matches!(item, Dynamic::List(_))) => {
                let strings: u64 = items
                    .iter()
                    .map(|item| match item {
                        Dynamic::Str(s) => s.len() as u64,
                        _ => 0,
                    })
                    .sum();
                return Some(item * (1 + items.len() as u64) + strings);
            }
            Dynamic::List(_) => {}
        }
        Some(self.size_bytes_walked())
    }

    fn nesting(&self, limit: usize) -> usize {
        // Most results, a scalar or a flat list, without a stack.
        match self {
            Dynamic::List(items) if items.iter().any(|item| matches!(item, Dynamic::List(_))) => {}
            Dynamic::List(_) => return 1,
            _ => return 0,
        }
        self.nesting_walked(limit)
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
                    // A string read back may be as large as any value: its
                    // memory is asked for fallibly first (see `builtins`).
                    let mut room = String::new();
                    room.try_reserve_exact(text.len())
                        .map_err(|_| fail("a string larger than the memory left", at))?;
                    drop(room);
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
    /// Python's spelling, written with a stack of its own so that a value
    /// nested however deep prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Step<'a> {
            Value(&'a Dynamic),
            Text(&'static str),
        }
        let mut stack = vec![Step::Value(self)];
        while let Some(step) = stack.pop() {
            let value = match step {
                Step::Text(text) => {
                    f.write_str(text)?;
                    continue;
                }
                Step::Value(value) => value,
            };
            match value {
                Dynamic::None => f.write_str("None")?,
                Dynamic::Bool(b) => write!(f, "{}", graph_core::Value::Bool(*b))?,
                Dynamic::Int(i) => write!(f, "{i}")?,
                Dynamic::Float(x) => write!(f, "{}", graph_core::Value::Float(*x))?,
                Dynamic::Str(s) => write!(f, "{}", graph_core::Value::Str(Box::from(&**s)))?,
                Dynamic::List(items) => {
                    f.write_str("[")?;
                    stack.push(Step::Text("]"));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item));
                        if i > 0 {
                            stack.push(Step::Text(", "));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// JSON's spelling: `null`, `true`, numbers, strings, arrays. A float JSON
/// cannot spell is written `{"float": "nan"}`, `{"float": "inf"}` or
/// `{"float": "-inf"}`, never `null`, so that it reads back as what it was.
impl Serialize for Dynamic {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Dynamic::None => serializer.serialize_unit(),
            Dynamic::Bool(b) => serializer.serialize_bool(*b),
            Dynamic::Int(i) => serializer.serialize_i64(*i),
            Dynamic::Float(x) if x.is_finite() => serializer.serialize_f64(*x),
            Dynamic::Float(x) => {
                use serde::ser::SerializeMap;
                let spelling = if x.is_nan() {
                    "nan"
                } else if *x > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("float", spelling)?;
                map.end()
            }
            Dynamic::Str(s) => serializer.serialize_str(s),
            Dynamic::List(items) => {
                // Lists nest as deep as the runs that built them (up to
                // graph_core::json::MAX_NESTING): the stack grows as needed.
                stacker::maybe_grow(64 * 1024, 4 * 1024 * 1024, || {
                    let mut seq = serializer.serialize_seq(Some(items.len()))?;
                    for item in items.iter() {
                        seq.serialize_element(item)?;
                    }
                    seq.end()
                })
            }
        }
    }
}

/// A [`Dynamic`] in a serde form that any serde format reads back, for the
/// formats that do not describe their own types (bincode, which carries
/// values between processes).
///
/// [`Dynamic`]'s own [`Serialize`] writes plain JSON (`1`, `"a"`), which only
/// a self-describing format can read back; `Tagged` writes the bytes of
/// [`Dynamic::encode`], which say each value's type, and reads them with
/// [`Dynamic::decode`]: neither recurses, so a value nested however deep
/// travels.
///
/// # Example
///
/// ```
/// use graph_exec::{Dynamic, Tagged};
///
/// let value = Tagged(Dynamic::from(vec![Dynamic::Int(1), Dynamic::from("a")]));
/// let json = serde_json::to_string(&value).unwrap();
/// let back: Tagged = serde_json::from_str(&json).unwrap();
/// assert_eq!(back, value);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Tagged(pub Dynamic);

impl Serialize for Tagged {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut bytes = Vec::new();
        self.0.encode(&mut bytes);
        serializer.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for Tagged {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Tagged, D::Error> {
        struct Bytes;

        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = Tagged;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the bytes of an encoded value")
            }

            fn visit_bytes<E: serde::de::Error>(self, bytes: &[u8]) -> Result<Tagged, E> {
                Dynamic::decode(bytes).map(Tagged).map_err(E::custom)
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Tagged, A::Error> {
                let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
                while let Some(byte) = seq.next_element::<u8>()? {
                    bytes.push(byte);
                }
                self.visit_bytes(&bytes)
            }
        }

        deserializer.deserialize_bytes(Bytes)
    }
}

impl Dynamic {
    /// [`TaskValue::size_bytes`] of any value, walked with a stack.
    fn size_bytes_walked(&self) -> u64 {
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
        bytes
    }

    /// [`TaskValue::nesting`] of any value, walked with a stack.
    fn nesting_walked(&self, limit: usize) -> usize {
        let mut deepest = 0;
        let mut stack: Vec<(&Dynamic, usize)> = vec![(self, 0)];
        while let Some((value, depth)) = stack.pop() {
            if let Dynamic::List(items) = value {
                deepest = deepest.max(depth + 1);
                if deepest > limit {
                    break;
                }
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
        }
        deepest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_nestings_taken_short_equal_the_walks() {
        let s = |text: &str| Dynamic::Str(text.into());
        let list = |items: Vec<Dynamic>| Dynamic::List(items.into());
        let values = [
            Dynamic::None,
            Dynamic::Int(3),
            s("twelve bytes"),
            list(vec![]),
            list(vec![Dynamic::Int(1), s("ab"), Dynamic::Float(0.5)]),
            list(vec![list(vec![s("abc")]), Dynamic::Bool(true)]),
            list(vec![list(vec![list(vec![])]), s("")]),
        ];
        for value in &values {
            assert_eq!(
                value.size_bytes(),
                Some(value.size_bytes_walked()),
                "{value}"
            );
            assert_eq!(value.nesting(8), value.nesting_walked(8), "{value}");
        }
    }
}
