//! `Key`: what a user names a task by, as dask allows it.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::repr;

/// The name of a task: a string, an integer, a float, or a tuple of those,
/// tuples nesting (`'x'`, `3`, `('x', 0, 1)`, `('shuffle', (0, 1))`).
///
/// # Order
///
/// `Key` has a total order. Tuples compare part by part (a prefix first), and
/// numbers compare as numbers, an integer before an equal float. Parts of
/// different kinds rank numbers first, then strings, then tuples; comparing
/// them by their text instead would not be transitive (`9 < 10` as numbers,
/// yet `'10' < '5' < '9'` as text).
///
/// # Spelling
///
/// [`Display`](fmt::Display) prints Python's `repr`: `'x'`, `('x', 0.1, (0, 1))`,
/// `1e+20`. [`Key::python_str`] gives Python's `str`, which differs for a
/// plain string (no quotes) and is what dask compares to break ordering ties.
///
/// # Example
///
/// ```
/// use graph_core::Key;
///
/// let key = Key::from(("x", 0.1, Key::from((0, 1))));
/// assert_eq!(key.to_string(), "('x', 0.1, (0, 1))");
/// assert!(Key::from(("x", 2)) < Key::from(("x", 10)));
/// assert_eq!(Key::from("x").python_str(), "x");
/// ```
#[derive(Clone, Debug)]
pub enum Key {
    /// A string key, such as `'x'`. Shared, since a graph's keys repeat a
    /// few names (`('x', 0, 0)`, `('x', 0, 1)`, ...) many times.
    Str(Arc<str>),
    /// An integer key.
    Int(i64),
    /// A float key. Equality follows Python's: `-0.0 == 0.0`.
    Float(f64),
    /// A tuple key, such as `('x', 0, 1)`; parts may be tuples themselves.
    /// Shared, so that copying a key (every reference to a task holds one)
    /// allocates nothing.
    Tuple(Arc<[Key]>),
}

impl Key {
    /// Makes a tuple key from its parts.
    pub fn tuple(parts: impl IntoIterator<Item = Key>) -> Key {
        Key::Tuple(parts.into_iter().collect())
    }

    /// Python's `str(key)`: like [`Display`](fmt::Display), but a plain string
    /// key prints without quotes. dask orders tied tasks by this text.
    pub fn python_str(&self) -> String {
        match self {
            Key::Str(s) => s.to_string(),
            other => other.to_string(),
        }
    }

    /// The string a key is named by: the key itself if it is a string, else the
    /// first part of a tuple, looked up recursively. `None` for numbers.
    pub fn name(&self) -> Option<&str> {
        match self {
            Key::Str(s) => Some(s),
            Key::Tuple(parts) => parts.first().and_then(Key::name),
            Key::Int(_) | Key::Float(_) => None,
        }
    }

    /// How many tuples the key nests, one inside the next: `0` for a string
    /// or a number, `1` for `('x', 0)`, `2` for `('x', (0, 1))`.
    #[inline]
    pub fn nesting(&self) -> usize {
        // The common keys, a name or a flat tuple, without a stack.
        match self {
            Key::Str(_) | Key::Int(_) | Key::Float(_) => 0,
            Key::Tuple(parts) if !parts.iter().any(|part| matches!(part, Key::Tuple(_))) => 1,
            Key::Tuple(_) => self.nesting_deep(),
        }
    }

    fn nesting_deep(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 0_usize)];
        while let Some((key, depth)) = stack.pop() {
            if let Key::Tuple(parts) = key {
                deepest = deepest.max(depth + 1);
                stack.extend(parts.iter().map(|part| (part, depth + 1)));
            }
        }
        deepest
    }

    fn kind_rank(&self) -> u8 {
        match self {
            Key::Int(_) | Key::Float(_) => 0,
            Key::Str(_) => 1,
            Key::Tuple(_) => 2,
        }
    }
}

/// Folds `-0.0` into `0.0` and every NaN into one, so that equal floats hash alike.
pub(crate) fn canonical_bits(x: f64) -> u64 {
    if x == 0.0 {
        0
    } else if x.is_nan() {
        f64::NAN.to_bits()
    } else {
        x.to_bits()
    }
}

/// Compares floats with NaN above everything and `-0.0 == 0.0`.
fn cmp_floats(a: f64, b: f64) -> Ordering {
    match a.partial_cmp(&b) {
        Some(ord) => ord,
        None => a.is_nan().cmp(&b.is_nan()),
    }
}

/// Compares an integer and a float exactly (no rounding of large integers).
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    // 2^63 as a float; every float at or above it exceeds every i64.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() || f >= TWO_63 {
        return Ordering::Less;
    }
    if f < -TWO_63 {
        return Ordering::Greater;
    }
    let whole = f.trunc();
    // `whole` is integral and within range, so the cast is exact.
    let whole_int = whole as i64;
    i.cmp(&whole_int).then_with(|| cmp_floats(0.0, f - whole))
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Key::Str(a), Key::Str(b)) => a == b,
            (Key::Int(a), Key::Int(b)) => a == b,
            (Key::Float(a), Key::Float(b)) => canonical_bits(*a) == canonical_bits(*b),
            (Key::Tuple(a), Key::Tuple(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Key {}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Key::Str(s) => {
                state.write_u8(0);
                s.hash(state);
            }
            Key::Int(i) => {
                state.write_u8(1);
                state.write_i64(*i);
            }
            Key::Float(f) => {
                state.write_u8(2);
                state.write_u64(canonical_bits(*f));
            }
            Key::Tuple(parts) => {
                state.write_u8(3);
                parts.hash(state);
            }
        }
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Key::Str(a), Key::Str(b)) => a.cmp(b),
            (Key::Int(a), Key::Int(b)) => a.cmp(b),
            (Key::Float(a), Key::Float(b)) => cmp_floats(*a, *b),
            (Key::Int(a), Key::Float(b)) => cmp_int_float(*a, *b).then(Ordering::Less),
            (Key::Float(a), Key::Int(b)) => cmp_int_float(*b, *a).reverse().then(Ordering::Greater),
            (Key::Tuple(a), Key::Tuple(b)) => a.cmp(b),
            _ => self.kind_rank().cmp(&other.kind_rank()),
        }
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Str(s) => repr::write_str(f, s),
            Key::Int(i) => write!(f, "{i}"),
            Key::Float(x) => repr::write_float(f, *x),
            Key::Tuple(parts) => {
                f.write_char('(')?;
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(repr::ITEM_SEPARATOR)?;
                    }
                    write!(f, "{part}")?;
                }
                f.write_str(repr::tuple_end(parts.len()))
            }
        }
    }
}

impl From<&str> for Key {
    fn from(s: &str) -> Key {
        Key::Str(s.into())
    }
}

impl From<String> for Key {
    fn from(s: String) -> Key {
        Key::Str(s.into())
    }
}

impl From<Arc<str>> for Key {
    fn from(s: Arc<str>) -> Key {
        Key::Str(s)
    }
}

impl From<i64> for Key {
    fn from(i: i64) -> Key {
        Key::Int(i)
    }
}

impl From<i32> for Key {
    fn from(i: i32) -> Key {
        Key::Int(i.into())
    }
}

impl From<u32> for Key {
    fn from(i: u32) -> Key {
        Key::Int(i.into())
    }
}

impl From<f64> for Key {
    fn from(x: f64) -> Key {
        Key::Float(x)
    }
}

impl From<Vec<Key>> for Key {
    fn from(parts: Vec<Key>) -> Key {
        Key::Tuple(parts.into())
    }
}

macro_rules! tuple_from {
    ($($name:ident),+) => {
        impl<$($name: Into<Key>),+> From<($($name,)+)> for Key {
            #[allow(non_snake_case)]
            fn from(($($name,)+): ($($name,)+)) -> Key {
                Key::Tuple(Arc::new([$($name.into()),+]))
            }
        }
    };
}

tuple_from!(A);
tuple_from!(A, B);
tuple_from!(A, B, C);
tuple_from!(A, B, C, D);
tuple_from!(A, B, C, D, E);

#[cfg(test)]
mod tests;
