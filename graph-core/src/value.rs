//! `Value`: the literals a task body may hold.

use std::fmt;

use crate::repr;

/// A literal in a task body: what a JSON scalar can spell.
///
/// [`Display`](fmt::Display) prints Python's spelling (`None`, `True`, `'text'`,
/// `0.5`), since keys and values are shown the way dask users see them.
///
/// # Example
///
/// ```
/// use graph_core::Value;
///
/// assert_eq!(Value::from("pear").to_string(), "'pear'");
/// assert_eq!(Value::from(1e20).to_string(), "1e+20");
/// assert_eq!(Value::Null.to_string(), "None");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// JSON `null`, Python's `None`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A 64-bit signed integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A string.
    Str(Box<str>),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("None"),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => repr::write_float(f, *x),
            Value::Str(s) => repr::write_str(f, s),
        }
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Value {
        Value::Int(i.into())
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s.into_boxed_str())
    }
}
