//! `KeyTable`: the keys of a graph as compact byte codes in one buffer, with a
//! hash index over them, so that a reader looks a reference up from its text
//! without building a [`Key`], and a graph's keys cost a few bytes each.
//!
//! A key's code is prefix-free and equal exactly when the keys are equal:
//!
//! | key | code |
//! |---|---|
//! | string | `STR`, the string's number in the table's strings (LEB128) |
//! | integer | `INT`, the integer zigzagged (LEB128) |
//! | float | `FLOAT`, the 8 bytes of its canonical bits (`-0.0` as `0.0`) |
//! | tuple | `TUPLE`, the parts' codes, `END` |
//!
//! Strings are numbered in the order first met; a key whose string the table
//! has never met is in no table.

use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use crate::Key;
use crate::key::canonical_bits;

const STR: u8 = 0;
const INT: u8 = 1;
const FLOAT: u8 = 2;
const TUPLE: u8 = 3;
const END: u8 = 4;

/// Distinct strings, numbered in the order first met, each shared.
#[derive(Clone, Debug, Default)]
pub(crate) struct Strings {
    strings: Vec<Arc<str>>,
    index: HashTable<u32>,
    /// The number of the string interned last: keys repeat a name many
    /// times in a row (`('x', 0)`, `('x', 1)`, ...), which this catches
    /// without hashing.
    last: Option<u32>,
}

impl Strings {
    fn hash(text: &[u8]) -> u64 {
        FxBuildHasher.hash_one(text)
    }

    /// The number of `text`, if the table has it.
    pub(crate) fn find(&self, text: &[u8]) -> Option<u32> {
        self.index
            .find(Self::hash(text), |&i| {
                self.strings[i as usize].as_bytes() == text
            })
            .copied()
    }

    /// The number of `text`, new if the table did not have it; `None` if it
    /// is new and not UTF-8 (only new texts are checked).
    pub(crate) fn intern(&mut self, text: &[u8]) -> Option<u32> {
        if let Some(last) = self.last
            && self.strings[last as usize].as_bytes() == text
        {
            return Some(last);
        }
        let hash = Self::hash(text);
        let strings = &self.strings;
        let found = self
            .index
            .find(hash, |&i| strings[i as usize].as_bytes() == text);
        let i = match found {
            Some(&i) => i,
            None => {
                let text = std::str::from_utf8(text).ok()?;
                let i = u32::try_from(self.strings.len()).ok()?;
                self.strings.push(Arc::from(text));
                let strings = &self.strings;
                self.index
                    .insert_unique(hash, i, |&j| Self::hash(strings[j as usize].as_bytes()));
                i
            }
        };
        self.last = Some(i);
        Some(i)
    }

    /// The string numbered `i`.
    pub(crate) fn get(&self, i: u32) -> &Arc<str> {
        &self.strings[i as usize]
    }
}

/// A graph's keys by code: node `i`'s key is the `i`th code.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeyTable {
    strings: Strings,
    codes: Vec<u8>,
    /// Where each code ends in `codes`.
    ends: Vec<usize>,
    index: HashTable<u32>,
}

impl KeyTable {
    /// A table with room for `keys` keys of about `bytes` bytes of codes,
    /// and an index with room for `indexed` keys before it grows. (Room in
    /// the vectors is address space until used; an index is cleared whole
    /// when made, so its room costs memory at once.)
    ///
    /// The room is only asked for: where the address space is short (a
    /// container's limit), the table starts smaller and grows as needed.
    pub(crate) fn with_capacity(keys: usize, bytes: usize, indexed: usize) -> KeyTable {
        let mut table = KeyTable {
            strings: Strings::default(),
            codes: Vec::new(),
            ends: Vec::new(),
            index: HashTable::new(),
        };
        let _ = table.codes.try_reserve_exact(bytes);
        let _ = table.ends.try_reserve_exact(keys);
        let _ = table.index.try_reserve(indexed, |_| 0);
        table
    }

    /// The number of keys.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    #[cfg(feature = "json")]
    /// The strings of the keys.
    pub(crate) fn strings(&self) -> &Strings {
        &self.strings
    }

    #[cfg(feature = "json")]
    /// The strings of the keys, to intern more.
    pub(crate) fn strings_mut(&mut self) -> &mut Strings {
        &mut self.strings
    }

    fn code(&self, i: u32) -> &[u8] {
        code_at(&self.codes, &self.ends, i)
    }

    /// The number of the string node `i`'s key is named by
    /// ([`Key::name`]): the same number for the same name. `None` for a key
    /// named by no string.
    pub(crate) fn name_number(&self, i: u32) -> Option<u32> {
        let code = self.code(i);
        // Past the tuples the key opens with, to its first scalar.
        let at = code.iter().position(|&tag| tag != TUPLE)?;
        (code[at] == STR).then(|| read_varint(code, &mut { at + 1 }) as u32)
    }

    #[cfg(feature = "json")]
    /// Node `i`'s key, to serialize as [`Key`] serializes, made from its
    /// code as it is written (no key built).
    pub(crate) fn serializable(&self, i: u32) -> Coded<'_> {
        Coded {
            table: self,
            code: self.code(i),
        }
    }

    fn hash(code: &[u8]) -> u64 {
        FxBuildHasher.hash_one(code)
    }

    /// The key of node `i`.
    pub(crate) fn key(&self, i: u32) -> Key {
        self.decode(self.code(i))
    }

    /// The node whose key has this code.
    pub(crate) fn find(&self, code: &[u8]) -> Option<u32> {
        self.index
            .find(Self::hash(code), |&i| self.code(i) == code)
            .copied()
    }

    /// Adds the key with this code as the next node: its number, or `Err`
    /// with the number of the node that already has it.
    pub(crate) fn insert(&mut self, code: &[u8]) -> Result<u32, u32> {
        let hash = Self::hash(code);
        if let Some(&i) = self.index.find(hash, |&i| self.code(i) == code) {
            return Err(i);
        }
        let i = u32::try_from(self.ends.len()).map_err(|_| u32::MAX)?;
        self.codes.extend_from_slice(code);
        self.ends.push(self.codes.len());
        let (codes, ends) = (&self.codes, &self.ends);
        // Growing the index hashes every code again.
        self.index
            .insert_unique(hash, i, |&j| Self::hash(code_at(codes, ends, j)));
        Ok(i)
    }

    /// Whether the index has no room for another key without growing.
    #[cfg(feature = "json")]
    pub(crate) fn index_is_full(&self) -> bool {
        self.index.len() == self.index.capacity()
    }

    /// Asks for room in the index for `additional` more keys (none where
    /// the memory is short: the index then grows as keys come).
    #[cfg(feature = "json")]
    pub(crate) fn reserve_index(&mut self, additional: usize) {
        let (codes, ends) = (&self.codes, &self.ends);
        let _ = self
            .index
            .try_reserve(additional, |&j| Self::hash(code_at(codes, ends, j)));
    }

    /// The code of `key` into `out` (cleared first); `false` if the key has a
    /// string the table has never met, and so is in no node.
    pub(crate) fn encode(&self, key: &Key, out: &mut Vec<u8>) -> bool {
        out.clear();
        // Tuples are walked with an explicit stack: keys nest deep.
        let mut stack: Vec<std::slice::Iter<'_, Key>> = Vec::new();
        let mut next = Some(key);
        loop {
            match next {
                Some(Key::Str(text)) => match self.strings.find(text.as_bytes()) {
                    Some(i) => {
                        out.push(STR);
                        push_varint(out, u64::from(i));
                    }
                    None => return false,
                },
                Some(Key::Int(i)) => push_int(out, *i),
                Some(Key::Float(x)) => push_float(out, *x),
                Some(Key::Tuple(parts)) => {
                    out.push(TUPLE);
                    stack.push(parts.iter());
                }
                None => {}
            }
            next = loop {
                let Some(parts) = stack.last_mut() else {
                    return true;
                };
                match parts.next() {
                    Some(part) => break Some(part),
                    None => {
                        out.push(END);
                        stack.pop();
                    }
                }
            };
        }
    }

    /// The code of `key`, its strings interned: every key has one.
    pub(crate) fn encode_interning(&mut self, key: &Key, out: &mut Vec<u8>) {
        let mut parts: Vec<&Key> = vec![key];
        while let Some(key) = parts.pop() {
            match key {
                Key::Str(text) => {
                    self.strings.intern(text.as_bytes());
                }
                Key::Tuple(items) => parts.extend(items.iter()),
                Key::Int(_) | Key::Float(_) => {}
            }
        }
        let encoded = self.encode(key, out);
        debug_assert!(encoded, "every string was interned");
    }

    /// The key a code stands for, its strings shared with the table.
    ///
    /// # Panics
    ///
    /// If `code` was not made by this table.
    pub(crate) fn decode(&self, code: &[u8]) -> Key {
        // Most keys are a tuple of scalars (`('x', 0, 1)`): its parts are
        // counted first and made straight into the shared slice, one
        // allocation a key.
        if let Some(n) = flat_tuple_len(code) {
            let mut at = 1;
            return Key::Tuple((0..n).map(|_| self.scalar(code, &mut at)).collect());
        }
        // Else the parts of the open tuples on one stack, innermost last.
        let mut parts: Vec<Key> = Vec::new();
        let mut starts: Vec<usize> = Vec::new();
        let mut at = 0;
        loop {
            let key = match code[at] {
                TUPLE => {
                    at += 1;
                    starts.push(parts.len());
                    continue;
                }
                END => {
                    at += 1;
                    let start = starts.pop().expect("a tuple is open");
                    Key::Tuple(parts.drain(start..).collect())
                }
                _ => self.scalar(code, &mut at),
            };
            if starts.is_empty() {
                return key;
            }
            parts.push(key);
        }
    }

    /// The scalar key (a string, integer or float) whose code starts at
    /// `at`, which is moved past it.
    fn scalar(&self, code: &[u8], at: &mut usize) -> Key {
        let tag = code[*at];
        *at += 1;
        match tag {
            STR => Key::Str(self.strings.get(read_varint(code, at) as u32).clone()),
            INT => Key::Int(unzigzag(read_varint(code, at))),
            FLOAT => {
                let bits = u64::from_le_bytes(code[*at..*at + 8].try_into().expect("8 bytes"));
                *at += 8;
                Key::Float(f64::from_bits(bits))
            }
            other => unreachable!("no scalar's code starts with {other}"),
        }
    }
}

#[cfg(feature = "json")]
/// A key's code, serialized as the key is (see [`KeyTable::serializable`]).
pub(crate) struct Coded<'a> {
    table: &'a KeyTable,
    code: &'a [u8],
}

#[cfg(feature = "json")]
impl serde::Serialize for Coded<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_at(&std::cell::Cell::new(0), serializer)
    }
}

#[cfg(feature = "json")]
impl Coded<'_> {
    /// The key whose code starts at `at`, which is moved past it.
    fn serialize_at<S: serde::Serializer>(
        &self,
        at: &std::cell::Cell<usize>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::Serialize;
        use serde::ser::SerializeSeq;
        let code = self.code;
        let mut here = at.get();
        if code[here] != TUPLE {
            // A scalar, made as a key: no allocation (a string is shared).
            let key = self.table.scalar(code, &mut here);
            at.set(here);
            return key.serialize(serializer);
        }
        at.set(here + 1);
        let mut seq = serializer.serialize_seq(None)?;
        while code[at.get()] != END {
            seq.serialize_element(&Part { key: self, at })?;
        }
        at.set(at.get() + 1);
        seq.end()
    }
}

#[cfg(feature = "json")]
/// The next part of a tuple being serialized: the code from `at` on, which
/// serializing it moves past.
struct Part<'a, 'b> {
    key: &'a Coded<'b>,
    at: &'a std::cell::Cell<usize>,
}

#[cfg(feature = "json")]
impl serde::Serialize for Part<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.key.serialize_at(self.at, serializer)
    }
}

/// The number of parts of a code that is one tuple of scalars; `None` for
/// any other code.
fn flat_tuple_len(code: &[u8]) -> Option<usize> {
    if code.first() != Some(&TUPLE) {
        return None;
    }
    let (mut at, mut n) = (1, 0);
    loop {
        match *code.get(at)? {
            END => return (at + 1 == code.len()).then_some(n),
            STR | INT => {
                at += 1;
                while *code.get(at)? >= 0x80 {
                    at += 1;
                }
                at += 1;
            }
            FLOAT => at += 9,
            _ => return None,
        }
        n += 1;
    }
}

/// The `i`th code of `codes`, which end at `ends`.
fn code_at<'a>(codes: &'a [u8], ends: &[usize], i: u32) -> &'a [u8] {
    let i = i as usize;
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &codes[start..ends[i]]
}

#[cfg(feature = "json")]
/// Appends the code of a string numbered `i`.
pub(crate) fn push_str(out: &mut Vec<u8>, i: u32) {
    out.push(STR);
    push_varint(out, u64::from(i));
}

/// Appends the code of an integer.
pub(crate) fn push_int(out: &mut Vec<u8>, i: i64) {
    out.push(INT);
    push_varint(out, ((i << 1) ^ (i >> 63)) as u64);
}

/// Appends the code of a float.
pub(crate) fn push_float(out: &mut Vec<u8>, x: f64) {
    out.push(FLOAT);
    out.extend_from_slice(&canonical_bits(x).to_le_bytes());
}

#[cfg(feature = "json")]
/// Appends the start of a tuple's code.
pub(crate) fn push_tuple(out: &mut Vec<u8>) {
    out.push(TUPLE);
}

#[cfg(feature = "json")]
/// Appends the end of a tuple's code.
pub(crate) fn push_end(out: &mut Vec<u8>) {
    out.push(END);
}

fn push_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn read_varint(code: &[u8], at: &mut usize) -> u64 {
    let mut value = 0_u64;
    let mut shift = 0;
    loop {
        let byte = code[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<Key> {
        vec![
            Key::from("x"),
            Key::from(""),
            Key::Int(0),
            Key::Int(-1),
            Key::Int(i64::MIN),
            Key::Int(i64::MAX),
            Key::Float(0.5),
            Key::Float(-3.0),
            Key::from(("x", 1)),
            Key::from(("x", 1.0)),
            Key::tuple([]),
            Key::tuple([Key::tuple([]), Key::from("x")]),
            Key::tuple([Key::from(("a", 1)), Key::Int(2)]),
            Key::tuple([Key::from("a"), Key::Int(1), Key::Int(2)]),
            Key::tuple([Key::Int(3), Key::from("a \" \\ \n é")]),
            Key::tuple([
                Key::tuple([Key::tuple([Key::Float(1e300), Key::Int(-7)])]),
                Key::tuple([]),
            ]),
        ]
    }

    #[test]
    #[cfg(feature = "json")]
    fn codes_serialize_as_their_keys_and_name_them_by_number() {
        let mut table = KeyTable::default();
        let mut code = Vec::new();
        for key in keys() {
            table.encode_interning(&key, &mut code);
            let i = table.insert(&code).unwrap();
            assert_eq!(
                serde_json::to_string(&table.serializable(i)).unwrap(),
                serde_json::to_string(&key).unwrap(),
                "{key:?}"
            );
            let name = table
                .name_number(i)
                .map(|n| table.strings().get(n).to_string());
            assert_eq!(name.as_deref(), key.name(), "{key:?}");
        }
    }

    #[test]
    fn codes_decode_to_their_keys_and_tell_keys_apart() {
        let mut table = KeyTable::default();
        let mut code = Vec::new();
        for (i, key) in keys().iter().enumerate() {
            table.encode_interning(key, &mut code);
            assert_eq!(table.decode(&code), *key);
            assert_eq!(table.insert(&code), Ok(i as u32), "{key:?} is new");
        }
        for (i, key) in keys().iter().enumerate() {
            assert!(table.encode(key, &mut code));
            assert_eq!(table.find(&code), Some(i as u32));
            assert_eq!(table.insert(&code), Err(i as u32));
        }
        assert!(!table.encode(&Key::from(("never", 1)), &mut code));
    }

    #[test]
    fn negative_zero_is_zero() {
        let mut table = KeyTable::default();
        let (mut a, mut b) = (Vec::new(), Vec::new());
        table.encode_interning(&Key::Float(0.0), &mut a);
        table.encode_interning(&Key::Float(-0.0), &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn many_keys_survive_the_index_growing() {
        let mut table = KeyTable::default();
        let mut code = Vec::new();
        for i in 0..10_000 {
            table.encode_interning(&Key::from((format!("k{}", i % 7).as_str(), i)), &mut code);
            assert_eq!(table.insert(&code), Ok(i as u32));
        }
        for i in (0..10_000).rev() {
            assert!(table.encode(&Key::from((format!("k{}", i % 7).as_str(), i)), &mut code));
            assert_eq!(table.find(&code), Some(i as u32));
        }
        assert_eq!(table.len(), 10_000);
    }
}
