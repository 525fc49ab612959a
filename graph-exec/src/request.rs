//! `Request` and `Output`: which keys a run computes, and the results in the
//! same shape, as dask's `get(dsk, keys)` takes a key or nested lists of keys.

use graph_core::Key;

/// What to compute: a key, or a list of requests (lists nest).
///
/// # Example
///
/// ```
/// use graph_core::Key;
/// use graph_exec::Request;
///
/// let one = Request::from("x");
/// let nested = Request::List(vec![Request::from("x"), Request::list([("y", 0), ("y", 1)])]);
/// assert_eq!(nested.keys().count(), 3);
/// # let _ = one;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// One key: its value.
    Key(Key),
    /// A list: a list of results, in order.
    List(Vec<Request>),
}

impl Request {
    /// A flat list of keys.
    pub fn list<K: Into<Key>>(keys: impl IntoIterator<Item = K>) -> Request {
        Request::List(
            keys.into_iter()
                .map(|key| Request::Key(key.into()))
                .collect(),
        )
    }

    /// Every key requested, depth first, repeats included.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        let mut stack = vec![self];
        std::iter::from_fn(move || {
            while let Some(request) = stack.pop() {
                match request {
                    Request::Key(key) => return Some(key),
                    Request::List(items) => stack.extend(items.iter().rev()),
                }
            }
            None
        })
    }
}

impl<K: Into<Key>> From<K> for Request {
    fn from(key: K) -> Request {
        Request::Key(key.into())
    }
}

/// The results of a run, shaped like its [`Request`].
#[derive(Clone, Debug, PartialEq)]
pub enum Output<T> {
    /// The value of a requested key.
    Value(T),
    /// The results of a requested list.
    List(Vec<Output<T>>),
}

impl<T> Output<T> {
    /// The value, if this is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Output::Value(value) => Some(value),
            Output::List(_) => None,
        }
    }

    /// The items, if this is a list.
    pub fn items(&self) -> Option<&[Output<T>]> {
        match self {
            Output::Value(_) => None,
            Output::List(items) => Some(items),
        }
    }
}
