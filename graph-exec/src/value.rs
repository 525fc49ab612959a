//! `TaskValue`, what an executor needs of a user's value type, and `Dynamic`,
//! the ready-made value type of the built-in ops.

use std::fmt;
use std::sync::Arc;

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
}

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
