//! dask's tie-break: every key's Python `str`, and the keys ranked by it.

use graph_core::{Key, repr};
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxHashMap;
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt::Write as _;
use std::sync::Arc;

/// dask's tie-break: each task's rank when keys are sorted by Python's
/// `str(key)` ([`Key::python_str`](graph_core::Key::python_str)), compared as
/// text. Equal texts rank by position.
///
/// **dask**: the last field of `order`'s `sort_key`, `str(key)`.
///
/// # Arguments
///
/// * `keys`: the keys, in node order: a [`TaskGraph`](graph_core::TaskGraph)'s
///   ([`TaskGraph::keys`](graph_core::TaskGraph::keys)) or a [`Shape`](graph_core::Shape)'s.
///
/// # Returns
///
/// A rank per node (`0..n`, each once), for [`order`](crate::order)'s `tie_break`.
///
/// # Complexity
///
/// O(V log V) comparisons of key texts, sorted on all cores; the texts of
/// all keys in one buffer.
///
/// # Example
///
/// ```
/// use graph_core::{Key, TaskGraph, Term};
///
/// let mut graph = TaskGraph::new();
/// graph.insert(("a", 10), Term::lit(0))?;
/// graph.insert(("a", 2), Term::lit(0))?;
/// // "('a', 10)" < "('a', 2)" as text.
/// assert_eq!(graph_order::ranks_by_str(graph.keys()), [0, 1]);
/// # Ok::<(), graph_core::Error>(())
/// ```
pub fn ranks_by_str<K: Borrow<Key>>(keys: impl IntoIterator<Item = K>) -> Vec<u32> {
    let texts = KeyTexts::of(keys);
    let mut by: Vec<u32> = (0..texts.len() as u32).collect();
    // Stable, so equal texts keep their order.
    by.par_sort_by(|&a, &b| texts.cmp(a, b));
    let mut rank = vec![0_u32; by.len()];
    for (r, &i) in by.iter().enumerate() {
        rank[i as usize] = r as u32;
    }
    rank
}

/// Every key's `str(key)`, in two pieces whose join is the text: a head
/// shared by every tuple key of the same name (`('name'`), and the rest
/// (`, 1, 2)`), all rests in one buffer. A graph's keys are a few names over
/// many indices, so the texts take a few bytes a key, and two keys of the
/// same name compare by their rests alone.
pub(crate) struct KeyTexts {
    /// The heads, by number; a key without one has [`NO_HEAD`].
    heads: Vec<String>,
    head: Vec<u32>,
    rests: String,
    /// Where each key's rest ends in `rests`.
    ends: Vec<usize>,
}

pub(crate) const NO_HEAD: u32 = u32::MAX;

impl KeyTexts {
    fn of<K: Borrow<Key>>(keys: impl IntoIterator<Item = K>) -> KeyTexts {
        let mut texts = KeyTexts {
            heads: Vec::new(),
            head: Vec::new(),
            rests: String::new(),
            ends: Vec::new(),
        };
        let mut numbers: FxHashMap<Arc<str>, u32> = FxHashMap::default();
        let mut last: Option<(Arc<str>, u32)> = None;
        for key in keys {
            // Writing to a String cannot fail.
            let head = match key.borrow() {
                Key::Str(text) => {
                    texts.rests.push_str(text);
                    NO_HEAD
                }
                Key::Tuple(parts) if matches!(parts.first(), Some(Key::Str(_))) => {
                    let Some(Key::Str(name)) = parts.first() else {
                        unreachable!("matched above")
                    };
                    let number = match &last {
                        Some((seen, number)) if seen == name => *number,
                        _ => {
                            let next = texts.heads.len() as u32;
                            let number = *numbers.entry(name.clone()).or_insert(next);
                            if number == next {
                                texts.heads.push(format!("({}", parts[0]));
                            }
                            last = Some((name.clone(), number));
                            number
                        }
                    };
                    for part in &parts[1..] {
                        let _ = write!(texts.rests, "{}{part}", repr::ITEM_SEPARATOR);
                    }
                    texts.rests.push_str(repr::tuple_end(parts.len()));
                    number
                }
                other => {
                    let _ = write!(texts.rests, "{other}");
                    NO_HEAD
                }
            };
            texts.head.push(head);
            texts.ends.push(texts.rests.len());
        }
        texts
    }

    fn len(&self) -> usize {
        self.head.len()
    }

    /// Key `i`'s head ("" for none) and rest.
    fn pieces(&self, i: u32) -> (&str, &str) {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let head = match self.head[i] {
            NO_HEAD => "",
            number => &self.heads[number as usize],
        };
        (head, &self.rests[start..self.ends[i]])
    }

    /// The texts of keys `a` and `b` compared, as Python compares strings
    /// (by code point, which is UTF-8's byte order).
    fn cmp(&self, a: u32, b: u32) -> Ordering {
        let ((head_a, rest_a), (head_b, rest_b)) = (self.pieces(a), self.pieces(b));
        if self.head[a as usize] == self.head[b as usize] {
            return rest_a.cmp(rest_b);
        }
        let common = head_a.len().min(head_b.len());
        match head_a.as_bytes()[..common].cmp(&head_b.as_bytes()[..common]) {
            Ordering::Equal => {
                let joined_a = head_a.bytes().chain(rest_a.bytes());
                joined_a.cmp(head_b.bytes().chain(rest_b.bytes()))
            }
            unequal => unequal,
        }
    }
}
