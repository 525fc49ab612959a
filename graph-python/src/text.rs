//! dask's tie-break: Python's `str(key)` of every key, written in Rust where
//! the spelling is certain and asked of Python elsewhere, and the keys ranked
//! by it.

use std::fmt;

use graph_core::repr;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyFloat, PyInt, PyString, PyTuple};
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;

/// Tuples nested deeper than this are spelled by Python.
const MAX_DEPTH: usize = 32;

/// The keys' texts, one buffer and the offsets into it.
pub(crate) struct Texts {
    buf: Vec<u8>,
    offsets: Vec<usize>,
    /// Float spellings already made: array keys repeat a few fractional
    /// indices (`('getitem', 0, 0.9)`) many times.
    floats: FxHashMap<u64, Box<[u8]>>,
    /// The last str part spelled (its object's address) and where its
    /// spelling is in `buf`: the keys of one layer share their name object,
    /// and come one after another.
    last_part: (usize, usize, usize),
}

impl Texts {
    pub(crate) fn with_capacity(n: usize) -> Texts {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        Texts {
            buf: Vec::with_capacity(n * 32),
            offsets,
            floats: FxHashMap::default(),
            last_part: (0, 0, 0),
        }
    }

    /// Appends Python's `str(key)`, as UTF-8 (lone surrogates as
    /// `surrogatepass` writes them, which keeps code-point order). Returns
    /// whether the key is a str, int, float or tuple of those (exact types).
    pub(crate) fn push(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let plain = if let Ok(text) = key.cast_exact::<PyString>() {
            push_text(&mut self.buf, text)?;
            true
        } else if key.is_exact_instance_of::<PyInt>()
            || key.is_exact_instance_of::<PyFloat>()
            || key.is_exact_instance_of::<PyTuple>()
        {
            // For these types `str` is `repr`.
            self.write_repr(key, 0)?
        } else {
            push_text(&mut self.buf, &key.str()?)?;
            false
        };
        self.offsets.push(self.buf.len());
        Ok(plain)
    }

    /// How many texts there are.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Appends `other`'s texts after these.
    pub(crate) fn append(&mut self, other: &Texts) {
        let base = self.buf.len();
        self.buf.extend_from_slice(&other.buf);
        self.offsets
            .extend(other.offsets[1..].iter().map(|&end| base + end));
    }

    /// The text of node `i`.
    fn get(&self, i: usize) -> &[u8] {
        &self.buf[self.offsets[i]..self.offsets[i + 1]]
    }

    /// A rank per key (`0..n`, each once) by text, as Python compares
    /// strings (by code point, which is UTF-8 byte order); equal texts rank
    /// by position.
    pub(crate) fn ranks(&self) -> Vec<u32> {
        let mut by = self.nodes();
        // Stable, so equal texts keep their order.
        by.par_sort_by(|&a, &b| self.get(a as usize).cmp(self.get(b as usize)));
        ranks_from(&by)
    }

    /// [`ranks`](Self::ranks), sorting on the calling thread alone: for a
    /// thread that ranks beside one that holds the GIL, which rayon's
    /// threads would otherwise crowd out of the machine's cores.
    pub(crate) fn ranks_on_this_thread(&self) -> Vec<u32> {
        let mut by = self.nodes();
        by.sort_by(|&a, &b| self.get(a as usize).cmp(self.get(b as usize)));
        ranks_from(&by)
    }

    /// Every node, in node order.
    fn nodes(&self) -> Vec<u32> {
        (0..self.len() as u32).collect()
    }

    /// Appends `repr(part)`, as `str` of a tuple spells its items. Returns
    /// whether `part` is a str, int, float or tuple of those.
    fn write_repr(&mut self, part: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
        if let Ok(text) = part.cast_exact::<PyString>() {
            let (id, start, end) = self.last_part;
            let start_now = self.buf.len();
            if id == part.as_ptr() as usize {
                // The object stays alive (in its key) for the whole read,
                // so its address names it.
                self.buf.extend_from_within(start..end);
            } else {
                // graph-core spells an ASCII string exactly as Python does
                // (printable or not); for other text, which characters
                // Python counts printable is Unicode's table, and Python
                // spells it.
                match text.to_str() {
                    Ok(s) if s.is_ascii() => {
                        // Writing to a Vec cannot fail.
                        let _ = repr::write_str(&mut Utf8(&mut self.buf), s);
                    }
                    _ => push_text(&mut self.buf, &part.repr()?)?,
                }
                self.last_part = (part.as_ptr() as usize, start_now, self.buf.len());
            }
            return Ok(true);
        }
        if part.is_exact_instance_of::<PyInt>() {
            match part.extract::<i64>() {
                Ok(i) => write_int(&mut self.buf, i),
                Err(_) => push_text(&mut self.buf, &part.repr()?)?,
            }
            return Ok(true);
        }
        if let Ok(x) = part.cast_exact::<PyFloat>() {
            let x = x.value();
            // graph-core spells floats as Python's repr does (the shortest
            // round-trip digits, the same switch to exponents).
            let text = self.floats.entry(x.to_bits()).or_insert_with(|| {
                let mut text = Vec::new();
                let _ = repr::write_float(&mut Utf8(&mut text), x);
                text.into_boxed_slice()
            });
            self.buf.extend_from_slice(text);
            return Ok(true);
        }
        if let Ok(tuple) = part.cast_exact::<PyTuple>()
            && depth < MAX_DEPTH
        {
            let mut plain = true;
            self.buf.push(b'(');
            for (i, item) in tuple.iter_borrowed().enumerate() {
                if i > 0 {
                    self.buf.extend_from_slice(repr::ITEM_SEPARATOR.as_bytes());
                }
                plain &= self.write_repr(&item, depth + 1)?;
            }
            self.buf
                .extend_from_slice(repr::tuple_end(tuple.len()).as_bytes());
            return Ok(plain);
        }
        push_text(&mut self.buf, &part.repr()?)?;
        Ok(false)
    }
}

/// Each node's rank, given the nodes sorted.
fn ranks_from(by: &[u32]) -> Vec<u32> {
    let mut rank = vec![0_u32; by.len()];
    for (r, &i) in by.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    rank
}

/// Appends an integer in decimal.
fn write_int(buf: &mut Vec<u8>, i: i64) {
    let mut digits = [0_u8; 20];
    let mut rest = i.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if i < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(&digits[at..]);
}

/// A byte buffer as a [`fmt::Write`], for graph-core's spelling
/// ([`repr`]): what it writes is UTF-8.
struct Utf8<'a>(&'a mut Vec<u8>);

impl fmt::Write for Utf8<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Appends a Python string as UTF-8, lone surrogates included.
fn push_text(buf: &mut Vec<u8>, text: &Bound<'_, PyString>) -> PyResult<()> {
    match text.to_str() {
        Ok(s) => buf.extend_from_slice(s.as_bytes()),
        Err(_) => {
            let bytes = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
            buf.extend_from_slice(bytes.cast::<PyBytes>()?.as_bytes());
        }
    }
    Ok(())
}
