//! The error type of `graph-core`.

use std::fmt;
use std::io;

use crate::{Key, NodeId};

/// Everything that can go wrong building, reading or writing a graph.
///
/// Messages name tasks by their key in Python's spelling, so they read the way
/// a dask user writes keys.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two tasks have the same key.
    #[error("duplicate key {key}")]
    DuplicateKey {
        /// The repeated key.
        key: Key,
    },
    /// A task refers to a key that no task has.
    #[error("task {key} refers to missing key {missing}")]
    MissingDependency {
        /// The task holding the reference.
        key: Key,
        /// The key it refers to.
        missing: Key,
    },
    /// A task whose term or key nests deeper than the documented limit.
    #[error(
        "task {}: its term or key nests {levels} levels deep, more than the limit of {limit}",
        Short(key)
    )]
    TooDeep {
        /// The task.
        key: Key,
        /// How deep it nests.
        levels: usize,
        /// [`json::MAX_NESTING`](crate::json::MAX_NESTING).
        limit: usize,
    },
    /// The dependencies of a graph form a cycle.
    #[error("cycle: {} {}", Path(keys), CycleNote { len: keys.len(), noun: "task" })]
    Cycle {
        /// The keys on the cycle, each depending on the next; the first is
        /// repeated at the end.
        keys: Vec<Key>,
    },
    /// The edges of an unnamed graph form a cycle.
    #[error("cycle through nodes {} {}", Path(nodes), CycleNote { len: nodes.len(), noun: "node" })]
    NodeCycle {
        /// The nodes on the cycle, each depending on the next; the first is
        /// repeated at the end.
        nodes: Vec<NodeId>,
    },
    /// An edge names a node that does not exist.
    #[error("node {node} is out of range for a graph of {node_count} nodes")]
    NodeOutOfRange {
        /// The offending node index.
        node: usize,
        /// The number of nodes in the graph.
        node_count: usize,
    },
    /// CSR offsets that do not describe rows of the target array.
    #[error(
        "dependency rows are malformed: offsets must start at 0, never decrease, and end at the number of targets"
    )]
    MalformedRows,
    /// More tasks or edges than 32-bit ids allow.
    #[error("too many {what}: {count} (at most {} are supported)", u32::MAX - 1)]
    TooLarge {
        /// `"tasks"` or `"edges"`.
        what: &'static str,
        /// How many there were.
        count: usize,
    },
    /// Text that is not JSON at all, or ends early.
    #[error("line {line}, column {column}: invalid JSON: {message}")]
    Syntax {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The JSON parser's description.
        message: String,
    },
    /// JSON that does not follow `taskgraph-json/1`.
    #[error("line {line}, column {column}: {}{problem}", TaskPrefix(task.as_ref()))]
    Invalid {
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column of the problem.
        column: usize,
        /// The task in which it was found, if any.
        task: Option<TaskAt>,
        /// What is wrong.
        problem: Problem,
    },
    /// A problem with one task of a file, found after reading it whole.
    #[error("tasks[{index}]: {error}")]
    AtTask {
        /// The task's position in the file's `tasks` array, from 0.
        index: usize,
        /// What is wrong with it.
        error: Box<Error>,
    },
    /// A float that JSON cannot spell (NaN or an infinity), met when writing.
    #[error("task {key}: cannot write the non-finite float {value} as JSON")]
    NonFiniteFloat {
        /// The task holding it (in its key or its body).
        key: Key,
        /// The float.
        value: f64,
    },
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// An error in a named input or output (a file, or `<stdin>`).
    #[error("{origin}: {error}")]
    In {
        /// The file's path, or `<stdin>` / `<stdout>`.
        origin: String,
        /// The error.
        error: Box<Error>,
    },
}

/// Where in a file's `tasks` array a problem was found.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskAt {
    /// The task's position, from 0.
    pub index: usize,
    /// Its key, if it was read before the problem.
    pub key: Option<Key>,
}

impl fmt::Display for TaskAt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tasks[{}]", self.index)?;
        if let Some(key) = &self.key {
            write!(f, " (key {key})")?;
        }
        Ok(())
    }
}

/// What is wrong with a JSON document that parses but is not `taskgraph-json/1`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Problem {
    /// The document is not a JSON object.
    NotAnObject,
    /// The `"format"` field is absent.
    MissingFormat,
    /// The `"format"` field names another format.
    WrongFormat {
        /// What it says.
        found: String,
    },
    /// The `"tasks"` field is absent.
    MissingTasks,
    /// A required field is absent.
    MissingField {
        /// The field.
        field: &'static str,
    },
    /// A field this format does not have.
    UnknownField {
        /// The field.
        field: String,
    },
    /// A field given twice in one object.
    RepeatedField {
        /// The field.
        field: &'static str,
    },
    /// A task with both `"task"` and `"deps"`.
    TaskAndDeps,
    /// Two tasks with the same key.
    DuplicateKey {
        /// The key.
        key: Key,
    },
    /// Terms or keys nested deeper than [`json::MAX_NESTING`](crate::json::MAX_NESTING).
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// A string longer than the format allows there
    /// ([`json::MAX_NAME_BYTES`](crate::json::MAX_NAME_BYTES) in a key, an
    /// op or a field name; [`json::MAX_STRING_BYTES`](crate::json::MAX_STRING_BYTES)
    /// in a term).
    TooLong {
        /// What: "a string in a key", "an op name", "a field name", "a
        /// string literal".
        what: &'static str,
        /// The most bytes it may have.
        limit: usize,
    },
    /// A value of the wrong kind, described by the JSON parser.
    Type {
        /// The parser's description.
        message: String,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotAnObject => f.write_str(
                "expected a taskgraph-json/1 object: {\"format\": \"taskgraph-json/1\", \"tasks\": [...]}",
            ),
            Problem::MissingFormat => {
                f.write_str("missing field `format` (expected \"taskgraph-json/1\")")
            }
            Problem::WrongFormat { found } => {
                write!(f, "unsupported format {found:?} (expected \"taskgraph-json/1\")")
            }
            Problem::MissingTasks => f.write_str("missing field `tasks`"),
            Problem::MissingField { field } => write!(f, "missing field `{field}`"),
            Problem::UnknownField { field } => write!(f, "unknown field `{field}`"),
            Problem::RepeatedField { field } => write!(f, "field `{field}` given twice"),
            Problem::TaskAndDeps => {
                f.write_str("a task has either `task` or `deps`, not both")
            }
            Problem::DuplicateKey { key } => write!(f, "duplicate key {key}"),
            Problem::TooDeep { limit } => write!(
                f,
                "terms or keys nest more than {limit} levels deep (each term object and key array is a level)"
            ),
            Problem::TooLong { what, limit } => write!(
                f,
                "{what} longer than {limit} bytes, the most this format allows there"
            ),
            Problem::Type { message } => f.write_str(message),
        }
    }
}

struct TaskPrefix<'a>(Option<&'a TaskAt>);

impl fmt::Display for TaskPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(at) => write!(f, "{at}: "),
            None => Ok(()),
        }
    }
}

/// A cycle, each item depending on the next and the first repeated at the
/// end, spelled `a -> b -> a`. A long one keeps its first and last few items
/// and says how many it leaves out, so that a cycle through a whole graph
/// still makes a one-line message.
struct Path<'a, T>(&'a [T]);

impl<T> Path<'_, T> {
    /// The most items spelled out: the first and last `SHOWN / 2`.
    const SHOWN: usize = 8;
}

impl<T: fmt::Display> fmt::Display for Path<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items = self.0;
        let half = Self::SHOWN / 2;
        let shorten = items.len() > Self::SHOWN + 1;
        for (i, item) in items.iter().enumerate() {
            if shorten && i == half {
                write!(f, " -> ... {} more ...", items.len() - 2 * half)?;
            }
            if shorten && (half..items.len() - half).contains(&i) {
                continue;
            }
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// What follows a cycle's path: `(each task depends on the next)`, or, for
/// a cycle too long to spell out, how many tasks (nodes) it has.
struct CycleNote {
    /// The items of the path (the first repeated at the end).
    len: usize,
    /// `"task"` or `"node"`.
    noun: &'static str,
}

impl fmt::Display for CycleNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len > Path::<()>::SHOWN + 1 {
            let n = self.len - 1;
            write!(
                f,
                "(a cycle of {n} {}s, each depending on the next)",
                self.noun
            )
        } else if self.noun == "task" {
            f.write_str("(each task depends on the next)")
        } else {
            f.write_str("(each depends on the next)")
        }
    }
}

/// A key that may nest deep, spelled whole when short and cut to its first
/// 200 characters when long.
struct Short<'a>(&'a Key);

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.nesting() > 32 {
            let mut text = String::new();
            // Formatting into a String cannot fail.
            let _ = fmt::write(&mut text, format_args!("{}", self.0));
            let cut: String = text.chars().take(200).collect();
            write!(f, "{cut}...")
        } else {
            write!(f, "{}", self.0)
        }
    }
}
