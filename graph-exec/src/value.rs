//! `TaskValue`, what an executor needs of a user's value type, and `Dynamic`,
//! the ready-made value type of the built-in ops.

use std::fmt;
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
